/* World-rank translation through derived communicators, for tests/test_profiler.py.

   Every message carries 100 + (sender's world rank) bytes, so a message
   charged to the wrong destination or sender shows up in the matrix.
     1. MPI_Comm_split by color r % 2 with key -r (sub-ranks in reverse world
        order): each rank sends to sub-rank (s + 1) mod n.
     2. MPI_Comm_dup of that communicator: each rank sends to sub-rank 0
        (unless it is sub-rank 0), over the duplicate.
     3. MPI_Intercomm_create between the two colors: each rank sends to
        remote rank s when the remote group has one (intercommunicator ranks
        name the remote group).
   Run with p >= 4 ranks. */
#include <mpi.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int r, p, s, n, rn;
    MPI_Comm sub, dup, inter;
    char *buf;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    buf = calloc(100 + (size_t)p, 1);
    MPI_Comm_split(MPI_COMM_WORLD, r % 2, -r, &sub);
    MPI_Comm_rank(sub, &s);
    MPI_Comm_size(sub, &n);
    MPI_Request q;
    MPI_Irecv(buf, 100 + p, MPI_BYTE, MPI_ANY_SOURCE, 1, sub, &q);
    MPI_Send(buf, 100 + r, MPI_BYTE, (s + 1) % n, 1, sub);
    MPI_Wait(&q, MPI_STATUS_IGNORE);

    MPI_Comm_dup(sub, &dup);
    if (s == 0) {
        for (int i = 1; i < n; i++) MPI_Recv(buf, 100 + p, MPI_BYTE, MPI_ANY_SOURCE, 2, dup, MPI_STATUS_IGNORE);
    } else {
        MPI_Send(buf, 100 + r, MPI_BYTE, 0, 2, dup);
    }

    /* the local leader is sub-rank 0; the remote leader's world rank is the
       highest rank of the other color (key -r puts it first) */
    int other = 1 - r % 2, remote_leader = (p - 1) % 2 == other ? p - 1 : p - 2;
    MPI_Intercomm_create(sub, 0, MPI_COMM_WORLD, remote_leader, 3, &inter);
    MPI_Comm_remote_size(inter, &rn);
    if (s < rn) MPI_Irecv(buf, 100 + p, MPI_BYTE, s, 4, inter, &q);
    if (s < rn) MPI_Send(buf, 100 + r, MPI_BYTE, s, 4, inter);
    if (s < rn) MPI_Wait(&q, MPI_STATUS_IGNORE);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&dup);
    MPI_Comm_free(&sub);
    free(buf);
    MPI_Finalize();
    return 0;
}
