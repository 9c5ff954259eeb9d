/* Record formats of per-rank files (topomap/tokenize.h).
 *
 * Open MPI pml_monitoring and DUMPI runs are one small file per rank (10^5 files are common):
 * reading and scanning them in C, on several threads, avoids per-file and per-line Python
 * work.  Both scanners accept exactly the lines the Python readers' regular expressions
 * accept (topomap/io/ompi_monitoring.py, dumpi_ascii.py) and report the first file with
 * anything else, for the Python reader to name the fault.  Files are split into one range
 * per thread, each thread keeping its own growing arrays, joined in file order. */

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "topomap/error.h"
#include "tokenize_internal.h"

typedef struct {
    char *data;
    int64_t len, cap; /* bytes */
} topomap_i_vec;

/* Capacity for `need` bytes, the content kept; 0, or -1 when out of memory. */
static int topomap_i_vec_reserve(topomap_i_vec *v, int64_t need)
{
    if (need <= v->cap) return 0;
    int64_t cap = v->cap ? v->cap : 4096;
    while (cap < need) cap *= 2;
    char *d = realloc(v->data, (size_t)cap);
    if (!d) return -1;
    v->data = d;
    v->cap = cap;
    return 0;
}

/* `size` more bytes at the end of v (NULL when out of memory). */
static void *topomap_i_vec_push(topomap_i_vec *v, int64_t size)
{
    if (topomap_i_vec_reserve(v, v->len + size)) return NULL;
    void *at = v->data + v->len;
    v->len += size;
    return at;
}

/* The whole file into v (replacing its content); 0, or -1 when it cannot be read.  Only regular
   files: a FIFO or a device (/dev/zero) may never end, so the Python reader, which bounds what it
   reads from a stream, takes those. */
static int topomap_i_slurp(const char *path, topomap_i_vec *v)
{
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        fclose(f);
        return -1;
    }
    setvbuf(f, NULL, _IONBF, 0); /* read straight into v */
    v->len = 0;
    int rc = 0;
    for (;;) {
        if (topomap_i_vec_reserve(v, v->len + 65536)) {
            rc = -1;
            break;
        }
        size_t want = (size_t)(v->cap - v->len), got = fread(v->data + v->len, 1, want, f);
        v->len += (int64_t)got;
        if (got < want) {
            rc = ferror(f) ? -1 : 0;
            break;
        }
    }
    fclose(f);
    return rc;
}

/* The end of [0-9]{lo,hi} at p (hi < 0: no upper bound), or NULL; its value in *v (saturating
   at 10^18: callers needing more convert the digits themselves). */
static const unsigned char *topomap_i_run(const unsigned char *p, const unsigned char *end, int lo, int hi,
                                          int64_t *v)
{
    const unsigned char *q = p;
    int64_t x = 0;
    while (q < end && topomap_i_is_digit(*q) && (hi < 0 || q - p < hi)) {
        if (x < 100000000000000000LL) x = x * 10 + (*q - '0');
        q++;
    }
    if (q - p < lo || (q < end && topomap_i_is_digit(*q))) return NULL;
    *v = x;
    return q;
}
/* The literal s at p: the end of it, or NULL. */
static const unsigned char *topomap_i_lit(const unsigned char *p, const unsigned char *end, const char *s)
{
    size_t n = strlen(s);
    return (size_t)(end - p) >= n && memcmp(p, s, n) == 0 ? p + n : NULL;
}

/* "<bytes> bytes\t<msgs> msgs sent" at p: its end, or NULL. */
static const unsigned char *topomap_i_volumes(const unsigned char *p, const unsigned char *end, double *bytes,
                                              double *msgs)
{
    int64_t unused;
    const unsigned char *q = topomap_i_run(p, end, 1, -1, &unused), *r;
    if (!q || !(r = topomap_i_lit(q, end, " bytes\t"))) return NULL;
    *bytes = topomap_i_digits_value(p, q);
    const unsigned char *s = topomap_i_run(r, end, 1, -1, &unused);
    if (!s) return NULL;
    *msgs = topomap_i_digits_value(r, s);
    return topomap_i_lit(s, end, " msgs sent");
}

/* A pml_monitoring line [p, e) (no '\n'): 0 comment or blank, 1 point-to-point (*pp), 2
   communicator header (*part, name [*name, *name + *name_len)), 3 communicator line (*part),
   -1 none of these. */
static int topomap_i_monitoring_line(const unsigned char *p, const unsigned char *e, topomap_monitoring_p2p *pp,
                                     topomap_monitoring_part *part, const unsigned char **name, int64_t *name_len)
{
    if (p < e && *p == '#') return 0;
    if (e > p && e[-1] == '\r') e--;
    const unsigned char *q = p;
    while (q < e && (*q == ' ' || *q == '\t')) q++;
    if (q == e) return 0;
    if (e - p >= 2 && p[1] == '\t' && strchr("EISRC", *p)) {
        const unsigned char *r = topomap_i_run(p + 2, e, 1, 10, &pp->me);
        if (r && r < e && *r == '\t') r = topomap_i_run(r + 1, e, 1, 10, &pp->peer);
        else r = NULL;
        if (r && r < e && *r == '\t') r = topomap_i_volumes(r + 1, e, &pp->bytes, &pp->msgs);
        else r = NULL;
        if (r && r < e && *r == '\t')
            for (r++; r < e && (topomap_i_is_digit(*r) || *r == ','); r++) {
            }
        if (r == e) {
            pp->kind = (char)*p;
            return 1;
        }
    }
    if (e - p >= 2 && p[1] == '\t' && (*p == 'C' || *p == 'D')) {
        const unsigned char *n0 = p + 2, *n1 = n0;
        while (n1 < e && *n1 != '\t') n1++;
        const unsigned char *procs = topomap_i_lit(n1, e, "\tprocs: ");
        if (procs) {
            memset(part, 0, sizeof *part);
            part->kind = 'H';
            *name = n0;
            *name_len = n1 - n0;
            if (procs == e || (e - procs == 6 && memcmp(procs, "(null)", 6) == 0)) {
                part->procs = 0;
                return 2;
            }
            part->procs = 1;
            for (const unsigned char *r = procs;;) {
                int64_t member;
                r = topomap_i_run(r, e, 1, 10, &member);
                if (!r) {
                    part->procs = -1;
                    break;
                }
                part->procs_count++;
                if (member > part->procs_max) part->procs_max = member;
                if (r == e) break;
                if (*r != ',') {
                    part->procs = -1;
                    break;
                }
                r++;
            }
            return 2;
        }
    }
    static const char *const which[3] = {"O2A\t", "A2O\t", "A2A\t"};
    for (int w = 0; w < 3; w++) {
        const unsigned char *r = topomap_i_lit(p, e, which[w]);
        if (!r) continue;
        memset(part, 0, sizeof *part);
        int negative = r < e && *r == '-';
        r = topomap_i_run(r + negative, e, 1, 10, &part->rank);
        if (negative) part->rank = -part->rank;
        if (r && r < e && *r == '\t') r = topomap_i_volumes(r + 1, e, &part->bytes, &part->msgs);
        else r = NULL;
        if (r != e) return -1;
        part->kind = "OAX"[w];
        return 3;
    }
    return -1;
}

/* One thread's share of a run: its records (rec) and the bytes they point into (aux). */
typedef struct {
    topomap_i_vec text, rec, aux;
    int64_t bad_file, bad_line;
    int nomem;
} topomap_i_share;

/* Scan one file's text, appending records of file `file` to sh: 0, the first bad line (from
   1), or -1 when out of memory. */
typedef int64_t (*topomap_i_file_scan)(const unsigned char *text, int64_t len, int32_t file, topomap_i_share *sh,
                                       const void *ctx);

/* Read and scan files [lo, hi) in order; stop at the first bad one (line 0: unreadable). */
static void topomap_i_scan_files(const char *const *paths, int64_t lo, int64_t hi, topomap_i_file_scan scan,
                                 const void *ctx, topomap_i_share *sh)
{
    for (int64_t i = lo; i < hi; i++) {
        if (topomap_i_slurp(paths[i], &sh->text)) {
            sh->bad_file = i;
            sh->bad_line = 0;
            return;
        }
        int64_t bad = scan((const unsigned char *)sh->text.data, sh->text.len, (int32_t)i, sh, ctx);
        if (bad < 0) {
            sh->nomem = 1;
            return;
        }
        if (bad > 0) {
            sh->bad_file = i;
            sh->bad_line = bad;
            return;
        }
    }
}

/* Scan all files on up to one thread per file: shares (T of them, to free with
   topomap_i_shares_free) hold the records of consecutive ranges of files.  0 or ENOMEM;
   *bad_file, *bad_line: the first bad file (-1 when none). */
static int topomap_i_run_files(const char *const *paths, int64_t nfiles, topomap_i_file_scan scan, const void *ctx,
                               topomap_i_share **shares, int *nshares, int64_t *bad_file, int64_t *bad_line)
{
    int T = omp_get_max_threads();
    if (T > nfiles) T = nfiles > 0 ? (int)nfiles : 1;
    topomap_i_share *sh = calloc((size_t)T, sizeof *sh);
    *shares = sh;
    *nshares = T;
    *bad_file = -1;
    *bad_line = 0;
    if (!sh) return topomap_i_fail(TOPOMAP_ENOMEM, "out of memory reading %lld files", (long long)nfiles);
#pragma omp parallel num_threads(T)
    {
        int t = omp_get_thread_num();
        sh[t].bad_file = -1;
        topomap_i_scan_files(paths, nfiles * t / T, nfiles * (t + 1) / T, scan, ctx, &sh[t]);
    }
    for (int t = 0; t < T; t++) {
        if (sh[t].nomem) return topomap_i_fail(TOPOMAP_ENOMEM, "out of memory scanning %lld files", (long long)nfiles);
        if (sh[t].bad_file >= 0) { /* threads hold ascending ranges: the first found is the first */
            *bad_file = sh[t].bad_file;
            *bad_line = sh[t].bad_line;
            break;
        }
    }
    return TOPOMAP_OK;
}

static void topomap_i_shares_free(topomap_i_share *sh, int T)
{
    for (int t = 0; sh && t < T; t++) {
        free(sh[t].text.data);
        free(sh[t].rec.data);
        free(sh[t].aux.data);
    }
    free(sh);
}

/* The records of all shares, in order, as one array of `size`-byte items (NULL when out of
   memory; *count set). */
static void *topomap_i_join(const topomap_i_share *sh, int T, size_t size, int64_t *count)
{
    int64_t bytes = 0;
    for (int t = 0; t < T; t++) bytes += sh[t].rec.len;
    char *all = malloc((size_t)(bytes > 0 ? bytes : 1)), *at = all;
    *count = bytes / (int64_t)size;
    for (int t = 0; all && t < T; t++) {
        if (sh[t].rec.len) memcpy(at, sh[t].rec.data, (size_t)sh[t].rec.len);
        at += sh[t].rec.len;
    }
    return all;
}

/* pml_monitoring: a record per line: point-to-point lines and communicator parts. */
typedef struct {
    int is_p2p;
    topomap_monitoring_p2p p2p;
    topomap_monitoring_part part;
} topomap_i_monitoring_rec;

static int64_t topomap_i_monitoring_scan(const unsigned char *p, int64_t len, int32_t file, topomap_i_share *sh,
                                         const void *ctx)
{
    (void)ctx;
    const unsigned char *end = p + len;
    for (int64_t line = 1; p < end; line++) {
        const unsigned char *nl = memchr(p, '\n', (size_t)(end - p)), *e = nl ? nl : end;
        topomap_i_monitoring_rec r;
        const unsigned char *name = NULL;
        int64_t name_len = 0;
        int kind = topomap_i_monitoring_line(p, e, &r.p2p, &r.part, &name, &name_len);
        if (kind < 0) return line;
        if (kind > 0) {
            r.is_p2p = kind == 1;
            r.p2p.file = r.part.file = file;
            if (kind == 2) {
                r.part.name_at = sh->aux.len;
                r.part.name_len = name_len;
                char *at = topomap_i_vec_push(&sh->aux, name_len);
                if (!at && name_len) return -1;
                if (name_len) memcpy(at, name, (size_t)name_len);
            }
            topomap_i_monitoring_rec *slot = topomap_i_vec_push(&sh->rec, sizeof r);
            if (!slot) return -1;
            *slot = r;
        }
        p = e + (e < end);
    }
    return 0;
}

int topomap_read_monitoring(const char *const *paths, int64_t nfiles, topomap_monitoring *out)
{
    topomap_i_share *sh = NULL;
    topomap_i_monitoring_rec *all = NULL;
    int T = 0;
    memset(out, 0, sizeof *out);
    int rc = topomap_i_run_files(paths, nfiles, topomap_i_monitoring_scan, NULL, &sh, &T, &out->bad_file,
                                 &out->bad_line);
    if (rc || out->bad_file >= 0) goto cleanup;
    int64_t nrec = 0, names = 0;
    all = topomap_i_join(sh, T, sizeof *all, &nrec);
    for (int t = 0; t < T; t++) names += sh[t].aux.len;
    out->p2p = malloc((size_t)(nrec > 0 ? nrec : 1) * sizeof *out->p2p);
    out->parts = malloc((size_t)(nrec > 0 ? nrec : 1) * sizeof *out->parts);
    out->names = malloc((size_t)(names > 0 ? names : 1));
    if (!all || !out->p2p || !out->parts || !out->names) {
        rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory joining the records of %lld files", (long long)nfiles);
        goto cleanup;
    }
    /* names: each share's text joined in order; a header's offset moves by the shares before */
    int t = 0;
    int64_t share_end = sh[0].rec.len / (int64_t)sizeof *all, shift = 0;
    for (int64_t i = 0; i < nrec; i++) {
        while (i >= share_end) {
            shift += sh[t].aux.len;
            share_end += sh[++t].rec.len / (int64_t)sizeof *all;
        }
        if (all[i].is_p2p) {
            out->p2p[out->np2p++] = all[i].p2p;
        } else {
            out->parts[out->nparts] = all[i].part;
            if (all[i].part.kind == 'H') out->parts[out->nparts].name_at += shift;
            out->nparts++;
        }
    }
    for (t = 0; t < T; t++) {
        if (sh[t].aux.len) memcpy(out->names + out->names_len, sh[t].aux.data, (size_t)sh[t].aux.len);
        out->names_len += sh[t].aux.len;
    }
cleanup:
    free(all);
    topomap_i_shares_free(sh, T);
    if (rc || out->bad_file >= 0) {
        int64_t bf = out->bad_file, bl = out->bad_line;
        topomap_monitoring_free(out);
        out->bad_file = bf;
        out->bad_line = bl;
    }
    return rc;
}

void topomap_monitoring_free(topomap_monitoring *m)
{
    free(m->p2p);
    free(m->parts);
    free(m->names);
    memset(m, 0, sizeof *m);
    m->bad_file = -1;
}

/* ---- dumpi2ascii text */

/* Offset of the first byte that does not start a well-formed UTF-8 sequence (Python's strict
   decoder), or -1. */
static int64_t topomap_i_utf8_fault(const unsigned char *p, int64_t len)
{
    int64_t i = 0;
    while (i < len) {
        if (i + 8 <= len) { /* runs of ASCII a word at a time */
            uint64_t w;
            memcpy(&w, p + i, 8);
            if (!(w & 0x8080808080808080ull)) {
                i += 8;
                continue;
            }
        }
        unsigned char c = p[i];
        int n;
        unsigned char lo = 0x80, hi = 0xBF;
        if (c < 0x80) {
            i++;
            continue;
        } else if (c >= 0xC2 && c <= 0xDF) {
            n = 1;
        } else if (c >= 0xE0 && c <= 0xEF) {
            n = 2;
            if (c == 0xE0) lo = 0xA0;
            if (c == 0xED) hi = 0x9F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            n = 3;
            if (c == 0xF0) lo = 0x90;
            if (c == 0xF4) hi = 0x8F;
        } else {
            return i;
        }
        if (i + n >= len) return i;
        if (p[i + 1] < lo || p[i + 1] > hi) return i;
        for (int k = 2; k <= n; k++)
            if (p[i + k] < 0x80 || p[i + k] > 0xBF) return i;
        i += n + 1;
    }
    return -1;
}

/* -?[0-9]+ at p (the sign only when `sign`): its end (NULL without digits); *v its value and
   *fits whether it is within int64. */
static const unsigned char *topomap_i_int_field(const unsigned char *p, const unsigned char *end, int sign,
                                                int64_t *v, int *fits)
{
    int negative = sign && p < end && *p == '-';
    const unsigned char *q = p + negative, *d = q;
    uint64_t m = 0;
    int over = 0;
    for (; q < end && topomap_i_is_digit(*q); q++) {
        uint64_t dg = (uint64_t)(*q - '0');
        if (m > (UINT64_MAX - dg) / 10)
            over = 1;
        else
            m = m * 10 + dg;
    }
    if (q == d) return NULL;
    *fits = !over && m <= (negative ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX);
    *v = !*fits ? 0 : !negative ? (int64_t)m : m > (uint64_t)INT64_MAX ? INT64_MIN : -(int64_t)m;
    return q;
}

/* After the line at p: the byte past its '\n', or NULL when the text ends first. */
static const unsigned char *topomap_i_next_line(const unsigned char *p, const unsigned char *end)
{
    const unsigned char *nl = memchr(p, '\n', (size_t)(end - p));
    return nl ? nl + 1 : NULL;
}

/* [0-9.]+ at p: its end, or NULL. */
static const unsigned char *topomap_i_time(const unsigned char *p, const unsigned char *end)
{
    const unsigned char *q = p;
    while (q < end && (topomap_i_is_digit(*q) || *q == '.')) q++;
    return q > p ? q : NULL;
}

/* "<prefix>=-?[0-9]+<anything>\n" (_value in dumpi_ascii.py): past the line, or NULL. */
static const unsigned char *topomap_i_dumpi_value(const unsigned char *p, const unsigned char *end,
                                                  const char *prefix, int64_t *v, int *fits)
{
    if (!p || !(p = topomap_i_lit(p, end, prefix))) return NULL;
    if (!topomap_i_int_field(p, end, 1, v, fits)) return NULL;
    return topomap_i_next_line(p, end);
}

/* "<prefix>=<anything>\n" (_skip): past the line, or NULL. */
static const unsigned char *topomap_i_dumpi_skip(const unsigned char *p, const unsigned char *end, const char *prefix)
{
    if (!p || !(p = topomap_i_lit(p, end, prefix))) return NULL;
    return topomap_i_next_line(p, end);
}

/* "<prefix>=[0-9]+ (<name>)\r?\n" (_TYPE, _COMM): past the line, or NULL; the name's span. */
static const unsigned char *topomap_i_dumpi_named(const unsigned char *p, const unsigned char *end,
                                                  const char *prefix, int64_t *v, int *fits,
                                                  const unsigned char **name, int64_t *name_len)
{
    if (!p || !(p = topomap_i_lit(p, end, prefix)) || !(p = topomap_i_int_field(p, end, 0, v, fits)) ||
        !(p = topomap_i_lit(p, end, " (")))
        return NULL;
    const unsigned char *n0 = p;
    while (p < end && *p != ')' && *p != '\n') p++;
    if (p == end || *p != ')') return NULL;
    *name = n0;
    *name_len = p - n0;
    p++;
    if (p < end && *p == '\r') p++;
    return p < end && *p == '\n' ? p + 1 : NULL;
}

/* A send record while its file is scanned: the type's name points into the file's text. */
typedef struct {
    topomap_dumpi_send send;
    int64_t type, name_at, name_len;
    int fits;
} topomap_i_dumpi_rec;

typedef struct {
    const char *const *names;
    const int64_t *sizes;
    int n;
} topomap_i_dumpi_types;

/* The send calls of dumpi_ascii.SEND_CALLS and the shape of their records: 0 count, datatype,
   dest, tag, comm; 1 MPI_Sendrecv; 2 MPI_Sendrecv_replace. */
static const struct {
    const char *name;
    int shape;
} topomap_i_dumpi_calls[] = {{"Send", 0},  {"Bsend", 0},  {"Ssend", 0},  {"Rsend", 0},    {"Isend", 0},
                             {"Ibsend", 0}, {"Issend", 0}, {"Irsend", 0}, {"Sendrecv", 1}, {"Sendrecv_replace", 2}};

/* The record of a send call whose enter line is at p (after "MPI_<call>"): past it, or NULL. */
static const unsigned char *topomap_i_dumpi_record(const unsigned char *p, const unsigned char *end, int shape,
                                                   const unsigned char *text, topomap_i_dumpi_rec *r)
{
    int64_t comm, unused;
    int f1 = 1, f2 = 1, f3 = 1, f4 = 1;
    const unsigned char *name = NULL, *comm_name;
    int64_t comm_len;
    if (!(p = topomap_i_lit(p, end, " entering at walltime ")) || !(p = topomap_i_time(p, end)) ||
        !(p = topomap_i_lit(p, end, ", cputime ")) || !(p = topomap_i_time(p, end)) ||
        !(p = topomap_i_lit(p, end, " seconds in thread ")) || !(p = topomap_i_run(p, end, 1, -1, &unused)) ||
        !(p = topomap_i_lit(p, end, ".")))
        return NULL;
    if (p < end && *p == '\r') p++;
    if (p == end || *p != '\n') return NULL;
    p++;
    if (topomap_i_lit(p, end, "Perfcounters: ")) {
        const unsigned char *q = topomap_i_next_line(p, end);
        if (q) p = q;
    }
    static const char *const count_of[3] = {"int count=", "int sendcount=", "int count="};
    static const char *const type_of[3] = {"MPI_Datatype datatype=", "MPI_Datatype sendtype=",
                                           "MPI_Datatype datatype="};
    p = topomap_i_dumpi_value(p, end, count_of[shape], &r->send.count, &f1);
    p = topomap_i_dumpi_named(p, end, type_of[shape], &r->type, &f2, &name, &r->name_len);
    p = topomap_i_dumpi_value(p, end, "int dest=", &r->send.dest, &f3);
    if (shape == 0) {
        p = topomap_i_dumpi_skip(p, end, "int tag=");
    } else {
        p = topomap_i_dumpi_skip(p, end, "int sendtag=");
        if (shape == 1) {
            p = topomap_i_dumpi_skip(p, end, "int recvcount=");
            p = topomap_i_dumpi_skip(p, end, "MPI_Datatype recvtype=");
        }
        p = topomap_i_dumpi_skip(p, end, "int source=");
        p = topomap_i_dumpi_skip(p, end, "int recvtag=");
    }
    p = topomap_i_dumpi_named(p, end, "MPI_Comm comm=", &comm, &f4, &comm_name, &comm_len);
    if (!p) return NULL;
    r->send.comm = comm;
    r->fits = f1 && f2 && f3 && f4;
    r->name_at = name - text;
    return p;
}

/* A "Datatype <i> (<name>) has size <s>" line [p, e): 1 with its values, else 0. */
static int topomap_i_dumpi_size_line(const unsigned char *p, const unsigned char *e, int64_t *index,
                                     int64_t *size, int *fits)
{
    int f1, f2;
    if (e > p && e[-1] == '\r') e--;
    if (!(p = topomap_i_lit(p, e, "Datatype ")) || !(p = topomap_i_int_field(p, e, 0, index, &f1)) ||
        !(p = topomap_i_lit(p, e, " (")))
        return 0;
    while (p < e && *p != ')') p++;
    if (!(p = topomap_i_lit(p, e, ") has size ")) || !(p = topomap_i_int_field(p, e, 1, size, &f2)) || p != e)
        return 0;
    *fits = f1 && f2;
    return 1;
}

static int64_t topomap_i_line_of(const unsigned char *text, int64_t offset)
{
    int64_t line = 1;
    for (int64_t i = 0; i < offset; i++) line += text[i] == '\n';
    return line;
}

static int64_t topomap_i_dumpi_scan(const unsigned char *text, int64_t len, int32_t file, topomap_i_share *sh,
                                    const void *ctx)
{
    const topomap_i_dumpi_types *types = ctx;
    const unsigned char *p = text, *end = text + len;
    int64_t fault = topomap_i_utf8_fault(text, len);
    const unsigned char *nul = len > 0 ? memchr(text, 0, (size_t)len) : NULL;
    if (nul && (fault < 0 || nul - text < fault)) fault = nul - text;
    if (fault >= 0) return topomap_i_line_of(text, fault);
    int64_t first = sh->rec.len / (int64_t)sizeof(topomap_i_dumpi_rec), line = 1;
    int any_call = 0;
    sh->aux.len = 0; /* this file's (index, size, fits) triples */
    while (p < end) {
        const unsigned char *nl = memchr(p, '\n', (size_t)(end - p)), *e = nl ? nl : end;
        const unsigned char *q = topomap_i_lit(p, e, "MPI_");
        if (q) {
            const unsigned char *w = q;
            while (w < e && (((*w | 0x20) >= 'a' && (*w | 0x20) <= 'z') || topomap_i_is_digit(*w) || *w == '_')) w++;
            any_call |= w > q && topomap_i_lit(w, end, " entering at walltime ") != NULL;
            for (size_t c = 0; c < sizeof topomap_i_dumpi_calls / sizeof *topomap_i_dumpi_calls; c++) {
                size_t n = strlen(topomap_i_dumpi_calls[c].name);
                if ((size_t)(w - q) != n || memcmp(q, topomap_i_dumpi_calls[c].name, n) ||
                    !topomap_i_lit(w, end, " entering at walltime"))
                    continue;
                topomap_i_dumpi_rec r;
                memset(&r, 0, sizeof r);
                const unsigned char *after = topomap_i_dumpi_record(w, end, topomap_i_dumpi_calls[c].shape, text, &r);
                if (!after || !r.fits) return line;
                r.send.file = file;
                topomap_i_dumpi_rec *slot = topomap_i_vec_push(&sh->rec, sizeof r);
                if (!slot) return -1;
                *slot = r;
                for (; p < after; p++) line += *p == '\n';
                goto next;
            }
        } else {
            int64_t triple[3];
            int fits;
            if (topomap_i_dumpi_size_line(p, e, &triple[0], &triple[1], &fits)) {
                triple[2] = fits;
                int64_t *slot = topomap_i_vec_push(&sh->aux, sizeof triple);
                if (!slot) return -1;
                memcpy(slot, triple, sizeof triple);
            }
        }
        p = e + (e < end);
        line++;
    next:;
    }
    if (!any_call) return 1;
    /* sizes: a "-X" line of the file (the last one for an index), else the built-in type's */
    topomap_i_dumpi_rec *recs = (topomap_i_dumpi_rec *)sh->rec.data;
    const int64_t *sizes = (const int64_t *)sh->aux.data;
    int64_t nsizes = sh->aux.len / (int64_t)(3 * sizeof(int64_t)), stop = sh->rec.len / (int64_t)sizeof *recs;
    for (int64_t i = first; i < stop; i++) {
        int64_t k = nsizes - 1;
        while (k >= 0 && sizes[3 * k] != recs[i].type) k--;
        if (k >= 0) {
            if (!sizes[3 * k + 2] || sizes[3 * k + 1] < 0) return 1;
            recs[i].send.size = sizes[3 * k + 1];
            continue;
        }
        int t = 0;
        for (; t < types->n; t++)
            if ((int64_t)strlen(types->names[t]) == recs[i].name_len &&
                memcmp(types->names[t], text + recs[i].name_at, (size_t)recs[i].name_len) == 0)
                break;
        if (t == types->n) return 1;
        recs[i].send.size = types->sizes[t];
    }
    return 0;
}

int topomap_read_dumpi(const char *const *paths, int64_t nfiles, const char *const *type_names,
                       const int64_t *type_sizes, int ntypes, topomap_dumpi *out)
{
    topomap_i_share *sh = NULL;
    topomap_i_dumpi_rec *all = NULL;
    int T = 0;
    topomap_i_dumpi_types types = {type_names, type_sizes, ntypes};
    memset(out, 0, sizeof *out);
    int rc = topomap_i_run_files(paths, nfiles, topomap_i_dumpi_scan, &types, &sh, &T, &out->bad_file,
                                 &out->bad_line);
    if (rc || out->bad_file >= 0) goto cleanup;
    int64_t n = 0;
    all = topomap_i_join(sh, T, sizeof *all, &n);
    out->sends = malloc((size_t)(n > 0 ? n : 1) * sizeof *out->sends);
    if (!all || !out->sends) {
        rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory joining the sends of %lld files", (long long)nfiles);
        goto cleanup;
    }
    for (int64_t i = 0; i < n; i++) out->sends[i] = all[i].send;
    out->nsends = n;
cleanup:
    free(all);
    topomap_i_shares_free(sh, T);
    if (rc || out->bad_file >= 0) {
        free(out->sends);
        out->sends = NULL;
        out->nsends = 0;
    }
    return rc;
}

void topomap_dumpi_free(topomap_dumpi *d)
{
    free(d->sends);
    memset(d, 0, sizeof *d);
    d->bad_file = -1;
}
