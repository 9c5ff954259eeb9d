/* Fortran callers (mpif.h and `use mpi`) of the topomap PMPI profiler.

   Open MPI's Fortran bindings call the C PMPI_ functions directly (checked
   on Open MPI 4.1: libmpi_mpifh's mpi_send_ calls PMPI_Send), so the C
   wrappers of topomap_pmpi.c never see a Fortran program's messages, nor
   its MPI_Init and MPI_Finalize.  These wrappers define the Fortran entry
   points under the name mangling of gfortran, Intel and flang (lower case,
   one trailing underscore), count the call from its Fortran handles
   (converted with the standard MPI_*_f2c functions) and forward it to the
   library's own Fortran entry point, found with dlsym(RTLD_NEXT): the
   library keeps doing all the Fortran-specific work (MPI_BOTTOM, status
   conversion, error codes).

   Covered: MPI_INIT, MPI_INIT_THREAD, MPI_FINALIZE and the same
   point-to-point calls as in C.  Not covered: the `use mpi_f08` bindings
   (Open MPI's mpi_f08 module calls its internal ompi_*_f symbols, which a
   portable wrapper cannot name), Fortran collectives, and compilers that
   mangle with two underscores (g77 style). */
#define _GNU_SOURCE
#include "topomap_pmpi.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

typedef MPI_Fint F;
typedef void (*fn_1)(F *);
typedef void (*fn_2)(F *, F *);
typedef void (*fn_3)(F *, F *, F *);
typedef void (*fn_send)(void *, F *, F *, F *, F *, F *, F *);
typedef void (*fn_isend)(void *, F *, F *, F *, F *, F *, F *, F *);
typedef void (*fn_sendrecv)(void *, F *, F *, F *, F *, void *, F *, F *, F *, F *, F *, F *, F *);
typedef void (*fn_replace)(void *, F *, F *, F *, F *, F *, F *, F *, F *, F *);

/* The next definition of a Fortran entry point: the MPI library's own. */
static void *next_symbol(const char *name)
{
    void *f = dlsym(RTLD_NEXT, name);
    if (f == NULL) {
        fprintf(stderr, "topomap_pmpi: %s is not defined by the MPI library: %s\n", name, dlerror());
        abort();
    }
    return f;
}

/* One cached pointer per entry point; a racing first lookup stores the same value. */
#define NEXT(TYPE, NAME)        \
    static TYPE real_fn = NULL; \
    if (real_fn == NULL) real_fn = (TYPE)next_symbol(NAME)

/* The library's Fortran binding may itself call the C MPI_ names (MPICH
   can); the flag makes the C wrappers ignore those calls, the Fortran
   wrapper counts once after the call. */
#define CALL(...)                   \
    do {                            \
        topomap_p_in_fortran = 1;   \
        real_fn(__VA_ARGS__);       \
        topomap_p_in_fortran = 0;   \
    } while (0)

void mpi_init_(F *ierr)
{
    NEXT(fn_1, "mpi_init_");
    CALL(ierr);
    if (*ierr == MPI_SUCCESS) topomap_p_after_init();
}

void mpi_init_thread_(F *required, F *provided, F *ierr)
{
    NEXT(fn_3, "mpi_init_thread_");
    CALL(required, provided, ierr);
    if (*ierr == MPI_SUCCESS) topomap_p_after_init();
}

void mpi_finalize_(F *ierr)
{
    NEXT(fn_1, "mpi_finalize_");
    topomap_p_before_finalize();
    CALL(ierr);
}

static uint64_t fbytes(const F *count, const F *type) { return topomap_p_bytes((int)*count, MPI_Type_f2c(*type)); }

#define F_BLOCKING(NAME, SYMBOL)                                                                           \
    void NAME(void *buf, F *count, F *type, F *dest, F *tag, F *comm, F *ierr)                             \
    {                                                                                                      \
        NEXT(fn_send, SYMBOL);                                      \
        CALL(buf, count, type, dest, tag, comm, ierr);                                                  \
        if (*ierr == MPI_SUCCESS)                                                                          \
            topomap_p_count(MPI_Comm_f2c(*comm), (int)*dest, fbytes(count, type), 1, TOPOMAP_P_P2P);       \
    }
F_BLOCKING(mpi_send_, "mpi_send_")
F_BLOCKING(mpi_bsend_, "mpi_bsend_")
F_BLOCKING(mpi_ssend_, "mpi_ssend_")
F_BLOCKING(mpi_rsend_, "mpi_rsend_")

#define F_NONBLOCKING(NAME, SYMBOL)                                                                        \
    void NAME(void *buf, F *count, F *type, F *dest, F *tag, F *comm, F *req, F *ierr)                     \
    {                                                                                                      \
        NEXT(fn_isend, SYMBOL);                                 \
        CALL(buf, count, type, dest, tag, comm, req, ierr);                                             \
        if (*ierr == MPI_SUCCESS)                                                                          \
            topomap_p_count(MPI_Comm_f2c(*comm), (int)*dest, fbytes(count, type), 1, TOPOMAP_P_P2P);       \
    }
F_NONBLOCKING(mpi_isend_, "mpi_isend_")
F_NONBLOCKING(mpi_ibsend_, "mpi_ibsend_")
F_NONBLOCKING(mpi_issend_, "mpi_issend_")
F_NONBLOCKING(mpi_irsend_, "mpi_irsend_")

#define F_PERSISTENT(NAME, SYMBOL)                                                                         \
    void NAME(void *buf, F *count, F *type, F *dest, F *tag, F *comm, F *req, F *ierr)                     \
    {                                                                                                      \
        NEXT(fn_isend, SYMBOL);                                 \
        CALL(buf, count, type, dest, tag, comm, req, ierr);                                             \
        if (*ierr == MPI_SUCCESS)                                                                          \
            topomap_p_persistent_add(MPI_Request_f2c(*req), MPI_Comm_f2c(*comm), (int)*dest,               \
                                     fbytes(count, type));                                                 \
    }
F_PERSISTENT(mpi_send_init_, "mpi_send_init_")
F_PERSISTENT(mpi_bsend_init_, "mpi_bsend_init_")
F_PERSISTENT(mpi_ssend_init_, "mpi_ssend_init_")
F_PERSISTENT(mpi_rsend_init_, "mpi_rsend_init_")

void mpi_sendrecv_(void *sendbuf, F *sendcount, F *sendtype, F *dest, F *sendtag, void *recvbuf, F *recvcount,
                   F *recvtype, F *source, F *recvtag, F *comm, F *status, F *ierr)
{
    NEXT(fn_sendrecv, "mpi_sendrecv_");
    CALL(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag, comm, status,
            ierr);
    if (*ierr == MPI_SUCCESS)
        topomap_p_count(MPI_Comm_f2c(*comm), (int)*dest, fbytes(sendcount, sendtype), 1, TOPOMAP_P_P2P);
}

void mpi_sendrecv_replace_(void *buf, F *count, F *type, F *dest, F *sendtag, F *source, F *recvtag, F *comm,
                           F *status, F *ierr)
{
    NEXT(fn_replace, "mpi_sendrecv_replace_");
    CALL(buf, count, type, dest, sendtag, source, recvtag, comm, status, ierr);
    if (*ierr == MPI_SUCCESS) topomap_p_count(MPI_Comm_f2c(*comm), (int)*dest, fbytes(count, type), 1, TOPOMAP_P_P2P);
}

void mpi_start_(F *req, F *ierr)
{
    NEXT(fn_2, "mpi_start_");
    CALL(req, ierr);
    if (*ierr == MPI_SUCCESS) topomap_p_persistent_start(MPI_Request_f2c(*req));
}

void mpi_startall_(F *count, F *reqs, F *ierr)
{
    NEXT(fn_3, "mpi_startall_");
    CALL(count, reqs, ierr);
    if (*ierr == MPI_SUCCESS)
        for (F i = 0; i < *count; i++) topomap_p_persistent_start(MPI_Request_f2c(reqs[i]));
}

void mpi_request_free_(F *req, F *ierr)
{
    MPI_Request r = MPI_Request_f2c(*req);
    NEXT(fn_2, "mpi_request_free_");
    CALL(req, ierr);
    if (*ierr == MPI_SUCCESS) topomap_p_persistent_forget(r);
}
