/* Known communication pattern for the Open MPI monitoring fixtures (prof.*.prof).
 *
 * Regenerate (4 ranks; as root add OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1):
 *   mpicc -O1 -o pattern pattern.c
 *   mpirun --oversubscribe -np 4 --mca pml_monitoring_enable 2 \
 *          --mca pml_monitoring_enable_output 3 --mca pml_monitoring_filename prof ./pattern
 *
 * Per rank r of P (tests/test_io_formats.py derives the expected matrix from this list):
 *   ring      3 x MPI_Isend of 1024 bytes to (r+1) % P
 *   halo      2 x MPI_Isend of 100 doubles to r^1 and 2 x 50 doubles to r^2 (a 2 x 2 grid)
 *   sendrecv  1 x MPI_Sendrecv of 32 doubles with P-1-r
 *   one-sided MPI_Put of 10 doubles to (r+1) % P, MPI_Get of 20 doubles from (r+P-1) % P
 *   MPI_Allreduce of one double (internal point-to-point traffic, kind I)
 */
#include <mpi.h>

int main(int argc, char **argv)
{
    static double sbuf[4096], rbuf[8][4096], win_mem[1024];
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 0; i < 4096; i++) sbuf[i] = rank;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;

    for (int it = 0; it < 3; it++) {
        MPI_Request rq;
        MPI_Isend(sbuf, 1024, MPI_BYTE, right, 1, MPI_COMM_WORLD, &rq);
        MPI_Recv(rbuf[0], 1024, MPI_BYTE, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
    }
    for (int it = 0; it < 2; it++) {
        MPI_Request rq[4];
        MPI_Irecv(rbuf[1], 100, MPI_DOUBLE, rank ^ 1, 2, MPI_COMM_WORLD, &rq[0]);
        MPI_Irecv(rbuf[2], 50, MPI_DOUBLE, rank ^ 2, 3, MPI_COMM_WORLD, &rq[1]);
        MPI_Isend(sbuf, 100, MPI_DOUBLE, rank ^ 1, 2, MPI_COMM_WORLD, &rq[2]);
        MPI_Isend(sbuf, 50, MPI_DOUBLE, rank ^ 2, 3, MPI_COMM_WORLD, &rq[3]);
        MPI_Waitall(4, rq, MPI_STATUSES_IGNORE);
    }
    MPI_Sendrecv(sbuf, 32, MPI_DOUBLE, size - 1 - rank, 4, rbuf[3], 32, MPI_DOUBLE, size - 1 - rank, 4,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);

    MPI_Win win;
    MPI_Win_create(win_mem, sizeof win_mem, sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_fence(0, win);
    MPI_Put(sbuf, 10, MPI_DOUBLE, right, 0, 10, MPI_DOUBLE, win);
    MPI_Win_fence(0, win);
    MPI_Get(rbuf[4], 20, MPI_DOUBLE, left, 0, 20, MPI_DOUBLE, win);
    MPI_Win_fence(0, win);
    MPI_Win_free(&win);

    double v = rank, total;
    MPI_Allreduce(&v, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
