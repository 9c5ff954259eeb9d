/* An MPI program with a known communication pattern, for tests/test_profiler.py.

   Every message size is distinct so that a miscounted call shows up as a
   wrong byte total, not just a wrong message count.  The expected matrix is
   computed independently in the test from the same rules (expected_p2p):
     ring        MPI_Send (even ranks) / MPI_Ssend (odd ranks), 1000 B, r -> r+1
     halo        3 rounds of MPI_Isend 64 doubles to r-1 and r+1 (periodic)
     pairs       2 x MPI_Sendrecv 7 ints with r^1; MPI_Sendrecv_replace 5 doubles with r^2
                 (MPI_PROC_NULL when the partner is >= p: never counted)
     persistent  MPI_Send_init 33 chars to r+2, 5 starts (MPI_Start 2x, MPI_Startall 3x)
     buffered    MPI_Bsend 17 B to r+3; ready: MPI_Rsend 11 B to r+1 after MPI_Irecv + barrier
     issend      MPI_Issend 3 ints to r-1; MPI_Ibsend 9 B to r-2; MPI_Irsend 6 B to r+1 (after barrier)
     self        MPI_Isend 13 B to r itself; MPI_Send 999 B to MPI_PROC_NULL (never counted)
     split       comm split by parity with key -r (reversed order): 21 B to sub-rank s+1;
                 freed, split again with key r: 19 B to sub-rank s+1 (handle recycling)
     collectives bcast(10 int, root 1), reduce(4 double, root 2), allreduce(3 int),
                 gather(2 int, root 0), scatter(5 char, root p-1), allgather(1 double),
                 alltoall(2 char), alltoallv(j+1 chars to rank j)   -- counted only with
                 TOPOMAP_PROFILE_COLLECTIVES=1
   With the argument --monitoring-comparable the persistent and collective
   sections are skipped: Open MPI 4.1's monitoring PML does not count user
   persistent sends as external messages, and counts the persistent requests
   of its own MPI_Alltoallv as external ones, so only the rest can be
   compared with it.  Run with p >= 4 ranks. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int mod(int a, int p) { return ((a % p) + p) % p; }

int main(int argc, char **argv)
{
    int r, p, tag = 0, all = !(argc > 1 && strcmp(argv[1], "--monitoring-comparable") == 0);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    if (p < 4) {
        if (r == 0) fprintf(stderr, "known_pattern needs at least 4 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    char big[1000] = {0}, small[64] = {0};
    double halo[2][64] = {{0}}, got[2][64];
    MPI_Status st;

    /* ring */
    if (r == 0) {
        MPI_Send(big, 1000, MPI_BYTE, 1, tag, MPI_COMM_WORLD);
        MPI_Recv(big, 1000, MPI_BYTE, p - 1, tag, MPI_COMM_WORLD, &st);
    } else {
        MPI_Recv(big, 1000, MPI_BYTE, r - 1, tag, MPI_COMM_WORLD, &st);
        if (r % 2)
            MPI_Ssend(big, 1000, MPI_BYTE, (r + 1) % p, tag, MPI_COMM_WORLD);
        else
            MPI_Send(big, 1000, MPI_BYTE, (r + 1) % p, tag, MPI_COMM_WORLD);
    }

    /* halo */
    for (int it = 0; it < 3; it++) {
        MPI_Request q[4];
        MPI_Irecv(got[0], 64, MPI_DOUBLE, mod(r - 1, p), 1, MPI_COMM_WORLD, &q[0]);
        MPI_Irecv(got[1], 64, MPI_DOUBLE, mod(r + 1, p), 1, MPI_COMM_WORLD, &q[1]);
        MPI_Isend(halo[0], 64, MPI_DOUBLE, mod(r - 1, p), 1, MPI_COMM_WORLD, &q[2]);
        MPI_Isend(halo[1], 64, MPI_DOUBLE, mod(r + 1, p), 1, MPI_COMM_WORLD, &q[3]);
        MPI_Waitall(4, q, MPI_STATUSES_IGNORE);
    }

    /* pairs */
    int ints[7] = {0}, inr[7];
    double five[5] = {0};
    int x1 = (r ^ 1) < p ? r ^ 1 : MPI_PROC_NULL, x2 = (r ^ 2) < p ? r ^ 2 : MPI_PROC_NULL;
    for (int it = 0; it < 2; it++)
        MPI_Sendrecv(ints, 7, MPI_INT, x1, 2, inr, 7, MPI_INT, x1, 2, MPI_COMM_WORLD, &st);
    MPI_Sendrecv_replace(five, 5, MPI_DOUBLE, x2, 3, x2, 3, MPI_COMM_WORLD, &st);

    /* persistent */
    if (all) {
        MPI_Request q[2];
        char out[33] = {0}, in[33];
        MPI_Send_init(out, 33, MPI_CHAR, mod(r + 2, p), 4, MPI_COMM_WORLD, &q[0]);
        MPI_Recv_init(in, 33, MPI_CHAR, mod(r - 2, p), 4, MPI_COMM_WORLD, &q[1]);
        for (int it = 0; it < 2; it++) {
            MPI_Start(&q[0]);
            MPI_Start(&q[1]);
            MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
        }
        for (int it = 0; it < 3; it++) {
            MPI_Startall(2, q);
            MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
        }
        MPI_Request_free(&q[0]);
        MPI_Request_free(&q[1]);
    }

    /* buffered and ready */
    {
        int size = 17 + MPI_BSEND_OVERHEAD + 9 + MPI_BSEND_OVERHEAD;
        void *attach = malloc(size), *detached;
        MPI_Request q[4];
        MPI_Buffer_attach(attach, size);
        MPI_Bsend(small, 17, MPI_BYTE, mod(r + 3, p), 5, MPI_COMM_WORLD);
        MPI_Recv(small, 17, MPI_BYTE, mod(r - 3, p), 5, MPI_COMM_WORLD, &st);
        MPI_Irecv(small, 11, MPI_BYTE, mod(r - 1, p), 6, MPI_COMM_WORLD, &q[0]);
        MPI_Irecv(small + 11, 6, MPI_BYTE, mod(r - 1, p), 7, MPI_COMM_WORLD, &q[1]);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Rsend(small, 11, MPI_BYTE, mod(r + 1, p), 6, MPI_COMM_WORLD);
        MPI_Irsend(small + 20, 6, MPI_BYTE, mod(r + 1, p), 7, MPI_COMM_WORLD, &q[2]);
        MPI_Ibsend(small + 30, 9, MPI_BYTE, mod(r - 2, p), 8, MPI_COMM_WORLD, &q[3]);
        MPI_Waitall(4, q, MPI_STATUSES_IGNORE);
        MPI_Recv(small + 40, 9, MPI_BYTE, mod(r + 2, p), 8, MPI_COMM_WORLD, &st);
        MPI_Buffer_detach(&detached, &size);
        free(attach);
    }

    /* issend, self, proc_null */
    {
        MPI_Request q[4];
        int three[3] = {0}, in3[3];
        MPI_Irecv(in3, 3, MPI_INT, mod(r + 1, p), 9, MPI_COMM_WORLD, &q[0]);
        MPI_Issend(three, 3, MPI_INT, mod(r - 1, p), 9, MPI_COMM_WORLD, &q[1]);
        MPI_Irecv(small, 13, MPI_BYTE, r, 10, MPI_COMM_WORLD, &q[2]);
        MPI_Isend(small + 20, 13, MPI_BYTE, r, 10, MPI_COMM_WORLD, &q[3]);
        MPI_Waitall(4, q, MPI_STATUSES_IGNORE);
        MPI_Send(big, 999, MPI_BYTE, MPI_PROC_NULL, 11, MPI_COMM_WORLD);
    }

    /* sub-communicators: world-rank translation and handle recycling */
    for (int round = 0; round < 2; round++) {
        MPI_Comm sub;
        int s, n, len = round ? 19 : 21;
        MPI_Comm_split(MPI_COMM_WORLD, r % 2, round ? r : -r, &sub);
        MPI_Comm_rank(sub, &s);
        MPI_Comm_size(sub, &n);
        if (n > 1)
            MPI_Sendrecv(big, len, MPI_BYTE, (s + 1) % n, 12, big + 100, len, MPI_BYTE, mod(s - 1, n), 12, sub, &st);
        MPI_Comm_free(&sub);
    }

    /* collectives */
    if (all) {
        int b[10] = {0}, g[2] = {r, r}, *gall = malloc(sizeof(int) * 2 * p), a3[3] = {1, 2, 3}, a3o[3];
        double d4[4] = {0}, d4o[4], one = r, *all = malloc(sizeof(double) * p);
        char *sc = malloc(5 * (size_t)p), sc5[5], *a2 = calloc(2 * (size_t)p, 1), *a2o = malloc(2 * (size_t)p);
        int *sendc = malloc(sizeof(int) * p), *recvc = malloc(sizeof(int) * p);
        int *sd = malloc(sizeof(int) * p), *rd = malloc(sizeof(int) * p), ts = 0, tr = 0;
        for (int j = 0; j < p; j++) {
            sendc[j] = j + 1, sd[j] = ts, ts += j + 1;
            recvc[j] = r + 1, rd[j] = tr, tr += r + 1;
        }
        char *vs = calloc(ts, 1), *vr = malloc(tr);
        memset(sc, 0, 5 * (size_t)p);
        MPI_Bcast(b, 10, MPI_INT, 1, MPI_COMM_WORLD);
        MPI_Reduce(d4, d4o, 4, MPI_DOUBLE, MPI_SUM, 2, MPI_COMM_WORLD);
        MPI_Allreduce(a3, a3o, 3, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        MPI_Gather(g, 2, MPI_INT, gall, 2, MPI_INT, 0, MPI_COMM_WORLD);
        MPI_Scatter(sc, 5, MPI_CHAR, sc5, 5, MPI_CHAR, p - 1, MPI_COMM_WORLD);
        MPI_Allgather(&one, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, MPI_COMM_WORLD);
        MPI_Alltoall(a2, 2, MPI_CHAR, a2o, 2, MPI_CHAR, MPI_COMM_WORLD);
        MPI_Alltoallv(vs, sendc, sd, MPI_CHAR, vr, recvc, rd, MPI_CHAR, MPI_COMM_WORLD);
        free(gall), free(all), free(sc), free(a2), free(a2o), free(sendc), free(recvc), free(sd), free(rd);
        free(vs), free(vr);
    }
    MPI_Finalize();
    return 0;
}
