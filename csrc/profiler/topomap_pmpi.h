/* Internal interface of the topomap PMPI profiler, shared by its three
   translation units: topomap_pmpi.c (state, counting, output, C
   point-to-point wrappers), topomap_pmpi_coll.c (collective models) and
   topomap_pmpi_fortran.c (mpif.h / `use mpi` entry points).

   Built as one shared library by `topomap profiler build` with the MPI
   compiler wrapper; never part of topomap._core (it needs mpi.h). */
#ifndef TOPOMAP_PMPI_H
#define TOPOMAP_PMPI_H

#include <mpi.h>
#include <stdint.h>

#if MPI_VERSION < 3
#error "the topomap profiler needs an MPI-3 library (const buffers, MPI_Count)"
#endif

/* Internal symbols must not clash with the application's: hide them. */
#define TOPOMAP_P_HIDDEN __attribute__((visibility("hidden")))

/* What a counted message is charged to. */
enum topomap_p_kind { TOPOMAP_P_P2P = 0, TOPOMAP_P_COLL = 1 };

/* Set while a Fortran wrapper runs the library's own Fortran binding:
   counting functions ignore calls made meanwhile (the wrapper counts). */
TOPOMAP_P_HIDDEN extern _Thread_local int topomap_p_in_fortran;

/* Bytes of `count` elements of `type`; 0 when MPI cannot say (bad type). */
TOPOMAP_P_HIDDEN uint64_t topomap_p_bytes(int count, MPI_Datatype type);

/* `nmsgs` messages of `nbytes` in all to rank `dest` of `comm` (a
   communicator rank, translated to MPI_COMM_WORLD here; MPI_PROC_NULL is
   ignored). */
TOPOMAP_P_HIDDEN void topomap_p_count(MPI_Comm comm, int dest, uint64_t nbytes, uint64_t nmsgs,
                                      enum topomap_p_kind kind);

/* Persistent sends: remember the destination and size at *_init, charge
   them at every start, forget them when the request is freed. */
TOPOMAP_P_HIDDEN void topomap_p_persistent_add(MPI_Request req, MPI_Comm comm, int dest, uint64_t nbytes);
TOPOMAP_P_HIDDEN void topomap_p_persistent_start(MPI_Request req);
TOPOMAP_P_HIDDEN void topomap_p_persistent_forget(MPI_Request req);

/* The collective models, as written in the profile header. */
#define TOPOMAP_P_COLL_MODELS                                                                          \
    "bcast=binomial reduce=binomial allreduce=recursive_doubling(2^k)|reduce+bcast gather=binomial " \
    "scatter=binomial allgather=ring alltoall=direct alltoallv=direct"

/* Whether collectives are expanded by the documented models
   (TOPOMAP_PROFILE_COLLECTIVES=1). */
TOPOMAP_P_HIDDEN int topomap_p_collectives_on(void);

/* Called after MPI has been initialised by any route (C or Fortran). */
TOPOMAP_P_HIDDEN void topomap_p_after_init(void);

/* Gather every rank's counts to rank 0 and write the profile; collective
   over MPI_COMM_WORLD, called just before PMPI_Finalize. */
TOPOMAP_P_HIDDEN void topomap_p_before_finalize(void);

#endif
