/* Collectives as the point-to-point messages of a stated algorithm model.

   Off by default; TOPOMAP_PROFILE_COLLECTIVES=1 turns it on.  An MPI library
   picks its collective algorithms at run time (by message size, process
   count, tuning files), and a PMPI wrapper cannot see which one ran, so the
   profiler charges each collective to ONE fixed model and says which in the
   profile header.  The models are the textbook algorithms of Mirsadeghi's
   thesis §4.1 (recursive doubling, ring, binomial broadcast and gather;
   notes 000 §3.1) and the MPICH binomial tree Cui's thesis §2.1 schedules
   (notes 003 §2.1), in the same tree as topomap.collectives.schedules:

   * MPI_Bcast: binomial tree rooted at `root`.  With relative rank
     rel = (rank - root) mod p, the children of rel are rel + 2^k for every
     2^k below the lowest set bit of rel (every 2^k < p for the root) with
     rel + 2^k < p; each child receives the whole buffer once.
   * MPI_Reduce: the same tree upwards: every non-root sends the whole
     buffer once to its parent rel - lowbit(rel).
   * MPI_Allreduce: recursive doubling when p is a power of two (log2 p
     exchanges of the whole buffer with rank XOR 2^k); otherwise a binomial
     reduce to rank 0 followed by a binomial broadcast from rank 0.
   * MPI_Gather: binomial gather: a non-root sends its whole subtree's
     blocks, min(lowbit(rel), p - rel) blocks, to its parent.
   * MPI_Scatter: the mirror of gather: a parent sends each child c = rel +
     2^k the min(2^k, p - c) blocks of the child's subtree.
   * MPI_Allgather: ring: p - 1 messages of one block to rank + 1.
   * MPI_Alltoall and MPI_Alltoallv: direct: one message to every other
     rank with the block (or sendcounts[j] elements) meant for it; zero-size
     blocks of Alltoallv are not messages.
   Choices left open by the sources: the tree of non-power-of-two
   allreduce (reduce + bcast, the simplest exact rule), "direct" for
   all-to-all (the data each rank must ship, independent of staging), and
   which calls are modelled at all: the eight above.  Not counted: barriers
   (no data), the v-variants other than Alltoallv, reduce-scatter, scans,
   neighbourhood, non-blocking and persistent collectives, and every
   collective on an intercommunicator. */
#include "topomap_pmpi.h"

static int lowbit(int x) { return x & -x; }

static int is_inter(MPI_Comm comm)
{
    int inter = 1;
    PMPI_Comm_test_inter(comm, &inter);
    return inter;
}

/* Size and rank of an intra-communicator worth modelling, else 0. */
static int shape(MPI_Comm comm, int *rank, int *size)
{
    if (!topomap_p_collectives_on() || is_inter(comm)) return 0;
    if (PMPI_Comm_size(comm, size) != MPI_SUCCESS || PMPI_Comm_rank(comm, rank) != MPI_SUCCESS) return 0;
    return *size > 1;
}

static void send_to(MPI_Comm comm, int rank, uint64_t nbytes, uint64_t nmsgs)
{
    topomap_p_count(comm, rank, nbytes, nmsgs, TOPOMAP_P_COLL);
}

static void model_bcast(MPI_Comm comm, int rank, int p, int root, uint64_t nbytes)
{
    int rel = (rank - root + p) % p, limit = rel ? lowbit(rel) : p;
    for (int m = 1; m < limit && rel + m < p; m <<= 1) send_to(comm, (rel + m + root) % p, nbytes, 1);
}

static void model_reduce(MPI_Comm comm, int rank, int p, int root, uint64_t nbytes)
{
    int rel = (rank - root + p) % p;
    if (rel) send_to(comm, (rel - lowbit(rel) + root) % p, nbytes, 1);
}

static void model_gather(MPI_Comm comm, int rank, int p, int root, uint64_t block)
{
    int rel = (rank - root + p) % p;
    if (rel) {
        int blocks = lowbit(rel) < p - rel ? lowbit(rel) : p - rel;
        send_to(comm, (rel - lowbit(rel) + root) % p, block * (uint64_t)blocks, 1);
    }
}

static void model_scatter(MPI_Comm comm, int rank, int p, int root, uint64_t block)
{
    int rel = (rank - root + p) % p, limit = rel ? lowbit(rel) : p;
    for (int m = 1; m < limit && rel + m < p; m <<= 1) {
        int blocks = m < p - (rel + m) ? m : p - (rel + m);
        send_to(comm, (rel + m + root) % p, block * (uint64_t)blocks, 1);
    }
}

int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    int rank, p, rc = PMPI_Bcast(buf, count, type, root, comm);
    if (rc == MPI_SUCCESS && shape(comm, &rank, &p)) model_bcast(comm, rank, p, root, topomap_p_bytes(count, type));
    return rc;
}

int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
               MPI_Comm comm)
{
    int rank, p, rc = PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm);
    if (rc == MPI_SUCCESS && shape(comm, &rank, &p)) model_reduce(comm, rank, p, root, topomap_p_bytes(count, type));
    return rc;
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    int rank, p, rc = PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm);
    if (rc == MPI_SUCCESS && shape(comm, &rank, &p)) {
        uint64_t nbytes = topomap_p_bytes(count, type);
        if (lowbit(p) == p) {
            for (int m = 1; m < p; m <<= 1) send_to(comm, rank ^ m, nbytes, 1);
        } else {
            model_reduce(comm, rank, p, 0, nbytes);
            model_bcast(comm, rank, p, 0, nbytes);
        }
    }
    return rc;
}

int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
               MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    int rank, p, rc = PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
    /* only non-roots send, and they always describe their block with the send arguments */
    if (rc == MPI_SUCCESS && shape(comm, &rank, &p))
        model_gather(comm, rank, p, root, topomap_p_bytes(sendcount, sendtype));
    return rc;
}

int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    int rank, p, rc = PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
    /* the root's receive arguments may be MPI_IN_PLACE-ignored; a non-root's send arguments are ignored */
    if (rc == MPI_SUCCESS && shape(comm, &rank, &p))
        model_scatter(comm, rank, p, root,
                      rank == root ? topomap_p_bytes(sendcount, sendtype) : topomap_p_bytes(recvcount, recvtype));
    return rc;
}

int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                  MPI_Datatype recvtype, MPI_Comm comm)
{
    int rank, p, rc = PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    /* the receive arguments are valid with MPI_IN_PLACE too */
    if (rc == MPI_SUCCESS && shape(comm, &rank, &p))
        send_to(comm, (rank + 1) % p, topomap_p_bytes(recvcount, recvtype) * (uint64_t)(p - 1), (uint64_t)(p - 1));
    return rc;
}

int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                 MPI_Datatype recvtype, MPI_Comm comm)
{
    int rank, p, rc = PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    if (rc == MPI_SUCCESS && shape(comm, &rank, &p)) {
        uint64_t block = topomap_p_bytes(recvcount, recvtype);
        for (int j = 0; j < p; j++)
            if (j != rank && block) send_to(comm, j, block, 1);
    }
    return rc;
}

int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                  void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    int rank, p,
        rc = PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
    if (rc == MPI_SUCCESS && shape(comm, &rank, &p)) {
        int in_place = sendbuf == MPI_IN_PLACE;
        for (int j = 0; j < p; j++) {
            uint64_t nbytes = in_place ? topomap_p_bytes(recvcounts[j], recvtype)
                                       : topomap_p_bytes(sendcounts[j], sendtype);
            if (j != rank && nbytes) send_to(comm, j, nbytes, 1);
        }
    }
    return rc;
}
