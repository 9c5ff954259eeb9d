/* topomap PMPI profiler: who sends how many bytes to whom, for any MPI program.

   Loaded with LD_PRELOAD (see `topomap profile`), it defines the MPI
   point-to-point send calls, counts each message once per destination
   MPI_COMM_WORLD rank, forwards to the PMPI_ entry point, and at
   MPI_Finalize gathers every rank's row on rank 0, which writes one
   profile file (format below) to $TOPOMAP_PROFILE_OUT (default
   ./topomap.tmprof).  The counting follows the MPI standard's profiling
   interface (MPI-3.1 §14.2): every MPI_X is also callable as PMPI_X.

   What is counted, per sending rank and destination world rank:
   * blocking MPI_Send, MPI_Bsend, MPI_Ssend, MPI_Rsend;
   * non-blocking MPI_Isend, MPI_Ibsend, MPI_Issend, MPI_Irsend, counted when
     posted (a send later cancelled with MPI_Cancel is still counted);
   * the send half of MPI_Sendrecv and MPI_Sendrecv_replace;
   * persistent MPI_Send_init, MPI_Bsend_init, MPI_Ssend_init,
     MPI_Rsend_init: counted at every MPI_Start / MPI_Startall, never at
     creation;
   * with TOPOMAP_PROFILE_COLLECTIVES=1, collectives expanded into the
     messages of a stated algorithm model (topomap_pmpi_coll.c), kept in
     separate columns.
   A message counts only when the MPI call returned MPI_SUCCESS.  Messages
   to MPI_PROC_NULL are not messages.  Messages to processes outside
   MPI_COMM_WORLD (spawned or connected worlds) are summed in the header
   line "outside_world".  Bytes are count x MPI_Type_size(type): the data
   the caller asked to send, as Open MPI's monitoring PML counts them.

   Choices the MPI standard and the task leave open, made here:
   * Communicator ranks are translated to world ranks through the
     communicator's group (the remote group for an intercommunicator).  The
     translation table is built on the first send over a communicator and
     cached as an MPI attribute, so it disappears with MPI_Comm_free and a
     recycled handle never sees a stale table.  MPI_COMM_WORLD is the
     identity and needs no table.
   * Counters are one array of 4 x 64-bit integers per world rank (p2p
     bytes, p2p messages, collective bytes, collective messages) indexed
     by destination: O(1) per call and exact integers (no rounding of
     byte counts beyond 2^53).  Memory is 32 bytes x world size per rank.
   * Threads: when MPI_Query_thread reports MPI_THREAD_MULTIPLE the
     counters are updated with relaxed atomic adds (exact totals, no lock
     on the counting path); the two rare slow paths (first send over a
     new communicator, the persistent-request table) take one mutex.  At
     lower thread levels at most one thread calls MPI at a time, so plain
     adds are used.
   * Output: rank 0 receives one compact row per rank, in rank order, over
     a private duplicate of MPI_COMM_WORLD (user messages cannot match
     it), so memory on rank 0 is O(world size), never O(world size^2).
     The file is written under a temporary name and renamed, so a reader
     never sees half a profile.

   File format "topomap-pmpi 1" (text; read by topomap.io.read_tmprof):
       # topomap-pmpi 1
       # ranks: N
       # collectives: off | <model names>
       # threads: single | multiple
       # mpi: <MPI_Get_library_version, first line>
       # seconds: <rank 0 wall time from MPI initialisation to MPI_Finalize>
       # outside_world: <bytes> <msgs> <coll_bytes> <coll_msgs>
       # failed_ranks: none | r1,r2,...   (ranks that lost their counts)
       # columns: src dst bytes msgs coll_bytes coll_msgs
       src dst bytes msgs coll_bytes coll_msgs      (one line per non-zero pair)
   Rows are sorted by (src, dst); self-messages appear as written by MPI. */
#define _GNU_SOURCE
#include "topomap_pmpi.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

_Static_assert(sizeof(MPI_Request) <= sizeof(uint64_t), "MPI_Request must fit in 64 bits");

#define FORMAT_TAG 7711 /* any tag: the output communicator is private */
enum { P2P_BYTES = 0, P2P_MSGS = 1, COLL_BYTES = 2, COLL_MSGS = 3, NCOUNT = 4 };
enum { SLOT_EMPTY = 0, SLOT_FULL = 1, SLOT_GONE = 2 };

/* The communicator rank -> world rank table cached on each communicator. */
struct comm_table {
    int n;
    int world[]; /* -1: outside MPI_COMM_WORLD */
};

/* Persistent send requests: open addressing on the handle's bits. */
struct persistent_table {
    uint64_t *key;
    uint8_t *state;
    int *dest;       /* world rank, -1 outside the world, -2 MPI_PROC_NULL */
    uint64_t *bytes;
    size_t cap, full, gone;
};

/* A preloaded library has exactly one profile per process: this is it. */
static struct {
    int ready; /* read with acquire, written with release */
    int written; /* the profile was gathered: a second MPI_Finalize route does nothing */
    int multi;
    int collectives;
    int rank, size;
    int failed;
    uint64_t *count; /* NCOUNT per world rank */
    uint64_t outside[NCOUNT];
    int keyval;
    double t0;
    pthread_mutex_t lock;
    struct persistent_table req;
} S = {.keyval = MPI_KEYVAL_INVALID, .lock = PTHREAD_MUTEX_INITIALIZER};

_Thread_local int topomap_p_in_fortran = 0;

static void lock(void)
{
    if (S.multi) pthread_mutex_lock(&S.lock);
}

static void unlock(void)
{
    if (S.multi) pthread_mutex_unlock(&S.lock);
}

static void add(uint64_t *counter, uint64_t value)
{
    if (S.multi)
        __atomic_fetch_add(counter, value, __ATOMIC_RELAXED);
    else
        *counter += value;
}

static int parse_flag(const char *name)
{
    const char *v = getenv(name);
    if (v == NULL || *v == '\0' || strcmp(v, "0") == 0 || strcmp(v, "no") == 0 || strcmp(v, "off") == 0) return 0;
    if (strcmp(v, "1") == 0 || strcmp(v, "yes") == 0 || strcmp(v, "on") == 0) return 1;
    fprintf(stderr, "topomap_pmpi: %s=%s is not 0 or 1; treated as 0\n", name, v);
    return 0;
}

static int delete_table(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm;
    (void)keyval;
    (void)extra;
    free(value);
    return MPI_SUCCESS;
}

/* Runs once, with S.lock held, after MPI is initialised. */
static void init_locked(void)
{
    int initialized = 0, finalized = 0, provided = MPI_THREAD_SINGLE;
    PMPI_Initialized(&initialized);
    PMPI_Finalized(&finalized);
    if (!initialized || finalized) return;
    PMPI_Comm_rank(MPI_COMM_WORLD, &S.rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &S.size);
    PMPI_Query_thread(&provided);
    S.multi = provided == MPI_THREAD_MULTIPLE;
    S.collectives = parse_flag("TOPOMAP_PROFILE_COLLECTIVES");
    S.count = calloc((size_t)S.size * NCOUNT, sizeof(uint64_t));
    if (S.count == NULL) {
        fprintf(stderr, "topomap_pmpi: rank %d: no memory for %d counters; this rank's counts are lost\n", S.rank,
                S.size);
        S.failed = 1;
    }
    if (PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_table, &S.keyval, NULL) != MPI_SUCCESS)
        S.keyval = MPI_KEYVAL_INVALID;
    S.t0 = PMPI_Wtime();
    __atomic_store_n(&S.ready, 1, __ATOMIC_RELEASE);
}

void topomap_p_after_init(void)
{
    if (__atomic_load_n(&S.ready, __ATOMIC_ACQUIRE)) return;
    /* S.multi is not known yet: always lock here (once per process). */
    pthread_mutex_lock(&S.lock);
    if (!S.ready) init_locked();
    pthread_mutex_unlock(&S.lock);
}

int topomap_p_collectives_on(void)
{
    topomap_p_after_init();
    return S.collectives;
}

uint64_t topomap_p_bytes(int count, MPI_Datatype type)
{
    MPI_Count size = 0;
    if (count <= 0 || PMPI_Type_size_x(type, &size) != MPI_SUCCESS || size <= 0) return 0;
    return (uint64_t)count * (uint64_t)size;
}

static struct comm_table *build_table(MPI_Comm comm)
{
    struct comm_table *t = NULL;
    int *ranks = NULL, inter = 0, n = 0, ok = 0;
    MPI_Group group = MPI_GROUP_NULL, world = MPI_GROUP_NULL;
    if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS) goto cleanup;
    if ((inter ? PMPI_Comm_remote_group(comm, &group) : PMPI_Comm_group(comm, &group)) != MPI_SUCCESS) goto cleanup;
    if (PMPI_Comm_group(MPI_COMM_WORLD, &world) != MPI_SUCCESS || PMPI_Group_size(group, &n) != MPI_SUCCESS)
        goto cleanup;
    t = malloc(sizeof *t + (size_t)n * sizeof(int));
    ranks = malloc((size_t)(n > 0 ? n : 1) * sizeof(int));
    if (t == NULL || ranks == NULL) goto cleanup;
    t->n = n;
    for (int i = 0; i < n; i++) ranks[i] = i;
    if (PMPI_Group_translate_ranks(group, n, ranks, world, t->world) != MPI_SUCCESS) goto cleanup;
    for (int i = 0; i < n; i++)
        if (t->world[i] == MPI_UNDEFINED) t->world[i] = -1;
    if (PMPI_Comm_set_attr(comm, S.keyval, t) != MPI_SUCCESS) goto cleanup;
    ok = 1;
cleanup:
    if (group != MPI_GROUP_NULL) PMPI_Group_free(&group);
    if (world != MPI_GROUP_NULL) PMPI_Group_free(&world);
    free(ranks);
    if (!ok) {
        free(t);
        t = NULL;
    }
    return t;
}

static struct comm_table *comm_table(MPI_Comm comm)
{
    void *value = NULL;
    int flag = 0;
    struct comm_table *t = NULL;
    if (S.keyval == MPI_KEYVAL_INVALID) return NULL;
    if (PMPI_Comm_get_attr(comm, S.keyval, &value, &flag) == MPI_SUCCESS && flag) return value;
    lock();
    /* another thread may have built it meanwhile: setting twice would free a table in use */
    if (PMPI_Comm_get_attr(comm, S.keyval, &value, &flag) == MPI_SUCCESS && flag)
        t = value;
    else
        t = build_table(comm);
    unlock();
    return t;
}

/* World rank of rank `dest` of `comm`: -1 outside the world, -2 MPI_PROC_NULL. */
static int world_rank(MPI_Comm comm, int dest)
{
    struct comm_table *t;
    if (dest == MPI_PROC_NULL) return -2;
    if (comm == MPI_COMM_WORLD) return dest >= 0 && dest < S.size ? dest : -1;
    t = comm_table(comm);
    if (t == NULL || dest < 0 || dest >= t->n) return -1;
    return t->world[dest];
}

static void count_world(int w, uint64_t nbytes, uint64_t nmsgs, enum topomap_p_kind kind)
{
    uint64_t *c;
    if (w == -2 || S.count == NULL) return;
    c = w >= 0 ? &S.count[(size_t)w * NCOUNT + 2 * kind] : &S.outside[2 * kind];
    add(c, nbytes);
    add(c + 1, nmsgs);
}

void topomap_p_count(MPI_Comm comm, int dest, uint64_t nbytes, uint64_t nmsgs, enum topomap_p_kind kind)
{
    if (dest == MPI_PROC_NULL || topomap_p_in_fortran) return;
    topomap_p_after_init();
    if (!S.ready) return;
    count_world(world_rank(comm, dest), nbytes, nmsgs, kind);
}

/* ------------------------------------------------------------ persistent requests */
static uint64_t request_key(MPI_Request req)
{
    uint64_t k = 0;
    memcpy(&k, &req, sizeof req);
    return k;
}

static size_t slot_of(uint64_t k, size_t cap)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    return (size_t)k & (cap - 1);
}

/* Index of key k, or (size_t)-1. */
static size_t find_slot(const struct persistent_table *t, uint64_t k)
{
    if (t->cap == 0) return (size_t)-1;
    for (size_t i = slot_of(k, t->cap);; i = (i + 1) & (t->cap - 1)) {
        if (t->state[i] == SLOT_EMPTY) return (size_t)-1;
        if (t->state[i] == SLOT_FULL && t->key[i] == k) return i;
    }
}

static int rehash(struct persistent_table *t, size_t cap)
{
    struct persistent_table n = {0};
    n.cap = cap;
    n.key = malloc(cap * sizeof *n.key);
    n.state = calloc(cap, 1);
    n.dest = malloc(cap * sizeof *n.dest);
    n.bytes = malloc(cap * sizeof *n.bytes);
    if (!n.key || !n.state || !n.dest || !n.bytes) {
        free(n.key), free(n.state), free(n.dest), free(n.bytes);
        return -1;
    }
    for (size_t i = 0; i < t->cap; i++) {
        if (t->state[i] != SLOT_FULL) continue;
        size_t j = slot_of(t->key[i], cap);
        while (n.state[j] != SLOT_EMPTY) j = (j + 1) & (cap - 1);
        n.state[j] = SLOT_FULL;
        n.key[j] = t->key[i];
        n.dest[j] = t->dest[i];
        n.bytes[j] = t->bytes[i];
        n.full++;
    }
    free(t->key), free(t->state), free(t->dest), free(t->bytes);
    *t = n;
    return 0;
}

void topomap_p_persistent_add(MPI_Request req, MPI_Comm comm, int dest, uint64_t nbytes)
{
    struct persistent_table *t = &S.req;
    uint64_t k = request_key(req);
    int w;
    size_t i;
    if (topomap_p_in_fortran) return;
    topomap_p_after_init();
    if (!S.ready) return;
    w = world_rank(comm, dest);
    lock();
    i = find_slot(t, k);
    if (i == (size_t)-1) {
        if ((t->full + t->gone + 1) * 2 > t->cap) {
            size_t cap = 16;
            while (cap < 4 * (t->full + 1)) cap *= 2;
            if (rehash(t, cap) != 0) {
                fprintf(stderr, "topomap_pmpi: rank %d: no memory for persistent requests; their starts are lost\n",
                        S.rank);
                S.failed = 1;
                unlock();
                return;
            }
        }
        for (i = slot_of(k, t->cap); t->state[i] == SLOT_FULL; i = (i + 1) & (t->cap - 1)) continue;
        if (t->state[i] == SLOT_GONE) t->gone--;
        t->state[i] = SLOT_FULL;
        t->key[i] = k;
        t->full++;
    }
    t->dest[i] = w;
    t->bytes[i] = nbytes;
    unlock();
}

void topomap_p_persistent_start(MPI_Request req)
{
    size_t i;
    if (topomap_p_in_fortran || !__atomic_load_n(&S.ready, __ATOMIC_ACQUIRE)) return; /* no send_init was seen */
    lock();
    i = find_slot(&S.req, request_key(req));
    if (i != (size_t)-1) count_world(S.req.dest[i], S.req.bytes[i], 1, TOPOMAP_P_P2P);
    unlock();
}

void topomap_p_persistent_forget(MPI_Request req)
{
    size_t i;
    if (topomap_p_in_fortran || !__atomic_load_n(&S.ready, __ATOMIC_ACQUIRE)) return;
    lock();
    i = find_slot(&S.req, request_key(req));
    if (i != (size_t)-1) {
        S.req.state[i] = SLOT_GONE;
        S.req.full--;
        S.req.gone++;
    }
    unlock();
}

/* ------------------------------------------------------------ output */
static void library_version(char *out, size_t len)
{
    char v[MPI_MAX_LIBRARY_VERSION_STRING + 1] = "";
    int n = 0;
    if (PMPI_Get_library_version(v, &n) != MPI_SUCCESS) n = 0;
    v[n < 0 ? 0 : n] = '\0';
    v[strcspn(v, "\r\n")] = '\0';
    snprintf(out, len, "%s", v[0] ? v : "unknown");
}

static int write_rows(FILE *f, int src, const uint64_t *rows, uint64_t nnz)
{
    for (uint64_t i = 0; i < nnz; i++) {
        const uint64_t *r = rows + 5 * i;
        if (fprintf(f, "%d %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", src, r[0], r[1], r[2],
                    r[3], r[4]) < 0)
            return -1;
    }
    return 0;
}

/* Rank 0: write the header, then every rank's rows as they arrive. */
static void write_profile(MPI_Comm comm, const uint64_t *heads, uint64_t *rows, const uint64_t *mine)
{
    const char *path = getenv("TOPOMAP_PROFILE_OUT");
    char tmp[4096], version[MPI_MAX_LIBRARY_VERSION_STRING + 1];
    uint64_t outside[NCOUNT] = {0};
    FILE *f;
    int bad = 0, any_failed = 0;
    if (path == NULL || *path == '\0') path = "topomap.tmprof";
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    f = fopen(tmp, "w");
    if (f == NULL) {
        fprintf(stderr, "topomap_pmpi: cannot write %s: %s\n", tmp, strerror(errno));
        bad = 1;
    }
    library_version(version, sizeof version);
    for (int r = 0; r < S.size; r++)
        for (int k = 0; k < NCOUNT; k++) outside[k] += heads[(size_t)r * 6 + 2 + k];
    if (!bad) {
        fprintf(f, "# topomap-pmpi 1\n# ranks: %d\n", S.size);
        fprintf(f, "# collectives: %s\n", S.collectives ? TOPOMAP_P_COLL_MODELS : "off");
        fprintf(f, "# threads: %s\n# mpi: %s\n# seconds: %.6f\n", S.multi ? "multiple" : "single", version,
                PMPI_Wtime() - S.t0);
        fprintf(f, "# outside_world: %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n# failed_ranks: ", outside[0],
                outside[1], outside[2], outside[3]);
        for (int r = 0; r < S.size; r++)
            if (heads[(size_t)r * 6 + 1]) fprintf(f, "%s%d", any_failed++ ? "," : "", r);
        fprintf(f, "%s\n# columns: src dst bytes msgs coll_bytes coll_msgs\n", any_failed ? "" : "none");
        if (write_rows(f, 0, mine, heads[0]) != 0) bad = 1;
    }
    for (int r = 1; r < S.size; r++) {
        uint64_t nnz = heads[(size_t)r * 6];
        if (nnz == 0) continue;
        PMPI_Recv(rows, (int)(5 * nnz), MPI_UINT64_T, r, FORMAT_TAG, comm, MPI_STATUS_IGNORE);
        if (!bad && write_rows(f, r, rows, nnz) != 0) bad = 1;
    }
    if (f != NULL && fclose(f) != 0) bad = 1;
    if (!bad && rename(tmp, path) != 0) {
        fprintf(stderr, "topomap_pmpi: cannot rename %s to %s: %s\n", tmp, path, strerror(errno));
        bad = 1;
    }
    if (bad && f != NULL) {
        fprintf(stderr, "topomap_pmpi: writing %s failed; no profile written\n", path);
        remove(tmp);
    }
}

void topomap_p_before_finalize(void)
{
    MPI_Comm comm = MPI_COMM_NULL;
    uint64_t head[6] = {0}, *heads = NULL, *mine = NULL, *rows = NULL, nnz = 0;
    int go = 1;
    topomap_p_after_init();
    if (!S.ready || S.written || PMPI_Comm_dup(MPI_COMM_WORLD, &comm) != MPI_SUCCESS) return;
    S.written = 1;
    for (int d = 0; S.count != NULL && d < S.size; d++) {
        const uint64_t *c = &S.count[(size_t)d * NCOUNT];
        nnz += c[P2P_MSGS] || c[COLL_MSGS];
    }
    mine = malloc((size_t)(nnz ? nnz : 1) * 5 * sizeof(uint64_t));
    if (mine == NULL) {
        S.failed = 1;
        nnz = 0;
    }
    for (int d = 0, i = 0; mine != NULL && d < S.size; d++) {
        const uint64_t *c = &S.count[(size_t)d * NCOUNT];
        if (!c[P2P_MSGS] && !c[COLL_MSGS]) continue;
        uint64_t *r = mine + 5 * (size_t)i++;
        r[0] = (uint64_t)d, r[1] = c[P2P_BYTES], r[2] = c[P2P_MSGS], r[3] = c[COLL_BYTES], r[4] = c[COLL_MSGS];
    }
    head[0] = nnz;
    head[1] = (uint64_t)S.failed;
    memcpy(head + 2, S.outside, sizeof S.outside);
    if (S.rank == 0) {
        heads = malloc((size_t)S.size * 6 * sizeof(uint64_t));
        rows = malloc((size_t)S.size * 5 * sizeof(uint64_t));
        if (heads == NULL || rows == NULL) {
            fprintf(stderr, "topomap_pmpi: rank 0: no memory to gather %d rows; no profile written\n", S.size);
            go = 0;
        }
    }
    PMPI_Bcast(&go, 1, MPI_INT, 0, comm);
    if (go) {
        PMPI_Gather(head, 6, MPI_UINT64_T, heads, 6, MPI_UINT64_T, 0, comm);
        if (S.rank == 0)
            write_profile(comm, heads, rows, mine);
        else if (nnz)
            PMPI_Send(mine, (int)(5 * nnz), MPI_UINT64_T, 0, FORMAT_TAG, comm);
    }
    PMPI_Comm_free(&comm);
    free(heads);
    free(rows);
    free(mine);
}

/* ------------------------------------------------------------ the C entry points */
int MPI_Init(int *argc, char ***argv)
{
    int rc = PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS) topomap_p_after_init();
    return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS) topomap_p_after_init();
    return rc;
}

int MPI_Finalize(void)
{
    topomap_p_before_finalize();
    return PMPI_Finalize();
}

#define BLOCKING_SEND(NAME)                                                                              \
    int MPI_##NAME(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)     \
    {                                                                                                    \
        int rc = PMPI_##NAME(buf, count, type, dest, tag, comm);                                         \
        if (rc == MPI_SUCCESS) topomap_p_count(comm, dest, topomap_p_bytes(count, type), 1, TOPOMAP_P_P2P); \
        return rc;                                                                                       \
    }
BLOCKING_SEND(Send)
BLOCKING_SEND(Bsend)
BLOCKING_SEND(Ssend)
BLOCKING_SEND(Rsend)

#define NONBLOCKING_SEND(NAME)                                                                                   \
    int MPI_##NAME(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,             \
                   MPI_Request *req)                                                                             \
    {                                                                                                            \
        int rc = PMPI_##NAME(buf, count, type, dest, tag, comm, req);                                            \
        if (rc == MPI_SUCCESS) topomap_p_count(comm, dest, topomap_p_bytes(count, type), 1, TOPOMAP_P_P2P);         \
        return rc;                                                                                               \
    }
NONBLOCKING_SEND(Isend)
NONBLOCKING_SEND(Ibsend)
NONBLOCKING_SEND(Issend)
NONBLOCKING_SEND(Irsend)

#define PERSISTENT_SEND(NAME)                                                                                    \
    int MPI_##NAME(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,             \
                   MPI_Request *req)                                                                             \
    {                                                                                                            \
        int rc = PMPI_##NAME(buf, count, type, dest, tag, comm, req);                                            \
        if (rc == MPI_SUCCESS) topomap_p_persistent_add(*req, comm, dest, topomap_p_bytes(count, type));         \
        return rc;                                                                                               \
    }
PERSISTENT_SEND(Send_init)
PERSISTENT_SEND(Bsend_init)
PERSISTENT_SEND(Ssend_init)
PERSISTENT_SEND(Rsend_init)

int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
    int rc = PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
                           recvtag, comm, status);
    if (rc == MPI_SUCCESS) topomap_p_count(comm, dest, topomap_p_bytes(sendcount, sendtype), 1, TOPOMAP_P_P2P);
    return rc;
}

int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype type, int dest, int sendtag, int source, int recvtag,
                         MPI_Comm comm, MPI_Status *status)
{
    int rc = PMPI_Sendrecv_replace(buf, count, type, dest, sendtag, source, recvtag, comm, status);
    if (rc == MPI_SUCCESS) topomap_p_count(comm, dest, topomap_p_bytes(count, type), 1, TOPOMAP_P_P2P);
    return rc;
}

int MPI_Start(MPI_Request *req)
{
    MPI_Request r = *req;
    int rc = PMPI_Start(req);
    if (rc == MPI_SUCCESS) topomap_p_persistent_start(r);
    return rc;
}

int MPI_Startall(int count, MPI_Request reqs[])
{
    int rc = PMPI_Startall(count, reqs);
    if (rc == MPI_SUCCESS)
        for (int i = 0; i < count; i++) topomap_p_persistent_start(reqs[i]);
    return rc;
}

int MPI_Request_free(MPI_Request *req)
{
    MPI_Request r = *req;
    int rc = PMPI_Request_free(req);
    if (rc == MPI_SUCCESS) topomap_p_persistent_forget(r);
    return rc;
}
