/* MPI_THREAD_MULTIPLE: 4 threads per rank send concurrently, for tests/test_profiler.py.

   Each thread t sends 1000 messages of 8 + t bytes to rank r + 1 (tag t) and
   receives as many from rank r - 1, over MPI_COMM_WORLD for even t and over
   a duplicate of it for odd t (the duplicate's rank table is built by
   whichever thread gets there first).  Expected per rank, to r + 1:
   4000 messages, 1000 x (8 + 9 + 10 + 11) bytes.  Prints "no-threads" and
   sends nothing when the library does not provide MPI_THREAD_MULTIPLE. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>

static int r, p;
static MPI_Comm dup;

static void *work(void *arg)
{
    int t = (int)(long)arg;
    char buf[16] = {0}, in[16];
    MPI_Comm comm = t % 2 ? dup : MPI_COMM_WORLD;
    for (int i = 0; i < 1000; i++) {
        MPI_Request q;
        MPI_Irecv(in, 16, MPI_BYTE, (r - 1 + p) % p, t, comm, &q);
        MPI_Send(buf, 8 + t, MPI_BYTE, (r + 1) % p, t, comm);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    pthread_t th[4];
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    if (provided < MPI_THREAD_MULTIPLE) {
        if (r == 0) printf("no-threads\n");
    } else {
        for (long t = 0; t < 4; t++) pthread_create(&th[t], NULL, work, (void *)t);
        for (int t = 0; t < 4; t++) pthread_join(th[t], NULL);
    }
    MPI_Comm_free(&dup);
    MPI_Finalize();
    return 0;
}
