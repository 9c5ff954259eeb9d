/* Pass 2 of the text scanners (topomap/tokenize.h): every chunk's numbers converted into its
 * own slice of the caller's arrays, in several output shapes (every number, typed table
 * columns, adjacency rows, non-zero entries).
 *
 * Why in C: the readers of 10^8-byte pattern files spent their time splitting and converting
 * numbers and building arrays from them; NumPy's text parser costs 40-150 ns per token, this
 * code one to two ns per byte, and it writes the arrays the pattern keeps.
 *
 * Speed choices.  Chunks fill disjoint slices and faults are reported in text order, so
 * threading never changes a result.  Two lanes read the same lines: lines of unsigned
 * integers and blanks (the bulk of large files) are read from bit masks of 64-byte blocks
 * (SSE2, in every x86-64; two 32-byte AVX2 loads where the CPU has them: the loop is compiled
 * once per instruction set and chosen at run time, topomap_scan.simd), numbers of up to 8
 * digits converted as one 8-byte word (no loop whose exit a branch predictor would miss on
 * every token); any other line goes to the byte lane, which handles every token and comment.
 * Measured on 10^8-byte files of integers, the AVX2 masks gain nothing over SSE2 within the
 * noise: about a tenth of the time goes to finding tokens, the rest to converting and storing
 * them.
 * When values may be floats, integers are stored as int64 until the first float token and
 * converted in place afterwards (int64 and double have the same size), so a text of integers
 * is never converted twice and the caller learns the type from one pass.  "-0" is stored as
 * INT64_MIN (outside the grammar's range) until then, so a block that turns out to hold floats
 * keeps the sign of its zeros, as Python's float() does.  Cost: two passes over the text,
 * O(len) each.
 */
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include "topomap/error.h"
#include "tokenize_internal.h"

typedef struct {
    int mode;
    int width;                /* table */
    const char *types;        /* table */
    void *const *columns;     /* table */
    int64_t rows;             /* table: rows the columns hold */
    topomap_i_slot *values;   /* numbers */
    int64_t *counts;          /* numbers, optional */
    const topomap_rows_layout *layout; /* rows */
    int64_t *row_ptr, entries;         /* rows */
    int32_t *dst;                      /* rows */
    double *weights;                   /* rows */
} topomap_i_sink;

typedef struct {
    int rc;            /* 0, TOPOMAP_EINVAL or TOPOMAP_ENOTSUP */
    int64_t bad;       /* offset of the fault */
    int64_t filled, min_width, max_width, comments;
    int64_t float_from; /* first value of the chunk stored as a double; -1 */
    int64_t negzero;    /* "-0" sentinels stored */
    topomap_scan_entries found; /* non-zero mode: this chunk's entries */
    int64_t room;
} topomap_i_chunk;

/* Append a non-zero entry to a chunk's growing arrays; 0 or -1 when out of memory. */
static int topomap_i_append(topomap_i_chunk *r, int64_t line, int64_t col, double value)
{
    topomap_scan_entries *f = &r->found;
    if (f->count == r->room) {
        int64_t room = r->room ? 2 * r->room : 1024;
        int64_t *l = realloc(f->line, (size_t)room * sizeof *l);
        if (l) f->line = l;
        int64_t *c = realloc(f->col, (size_t)room * sizeof *c);
        if (c) f->col = c;
        double *v = realloc(f->value, (size_t)room * sizeof *v);
        if (v) f->value = v;
        if (!l || !c || !v) return -1;
        r->room = room;
    }
    f->line[f->count] = line;
    f->col[f->count] = col;
    f->value[f->count++] = value;
    return 0;
}

/* Store a token (the `j`-th of its line) in table row `row`; 0, or -1 when it does not fit. */
static inline __attribute__((always_inline)) int topomap_i_table_store(const topomap_i_sink *k, int64_t row, int64_t j,
                                                                     int kind, int64_t iv, double dv)
{
    if (j >= k->width || row >= k->rows) return -1;
    void *col = k->columns[j];
    switch (k->types[j]) {
    case 'i':
        if (kind != TOPOMAP_I_INT) return -1;
        ((int64_t *)col)[row] = iv;
        return 0;
    case 'n':
        if (kind != TOPOMAP_I_INT || iv < 0 || iv > INT32_MAX) return -1;
        ((int32_t *)col)[row] = (int32_t)iv;
        return 0;
    case 'd':
        if (kind != TOPOMAP_I_INT) return -1;
        ((double *)col)[row] = (double)iv;
        return 0;
    case 'f':
        if (kind == TOPOMAP_I_INT)
            ((double *)col)[row] = (double)iv;
        else if (kind == TOPOMAP_I_FLOAT)
            ((double *)col)[row] = dv;
        else
            return -1;
        return 0;
    default:
        return -1;
    }
}


/* An integer token of 1 to 18 digits at *pp ended by a non-token byte or the end: its value
   in *out and *pp past it; else 0 (the general classifier decides). */
static inline int topomap_i_fast_int(const unsigned char **pp, const unsigned char *end, const unsigned char *cls,
                                     int64_t *out)
{
    const unsigned char *p = *pp;
    int negative = *p == '-';
    if (*p == '-' || *p == '+') p++;
    const unsigned char *d0 = p;
    uint64_t v = 0;
#ifdef TOPOMAP_I_SWAR
    if (end - p >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        uint64_t stops = topomap_i_non_digits(w);
        if (stops) {
            int nd = __builtin_ctzll(stops) >> 3;
            if (!nd) return 0;
            v = topomap_i_word_digits(w, nd);
            p += nd;
            goto digits_done;
        }
        v = topomap_i_word_digits(w, 8);
        p += 8;
    }
#endif
    unsigned dg;
    while (p < end && (dg = (unsigned)*p - '0') < 10) {
        v = v * 10 + dg;
        p++;
    }
    if (p == d0 || p - d0 > 18) return 0; /* more than 18 digits may overflow: checked elsewhere */
#ifdef TOPOMAP_I_SWAR
digits_done:
#endif
    if (p < end && cls[*p] == TOPOMAP_I_TOKEN) return 0;
    *out = negative ? -(int64_t)v : (int64_t)v;
    *pp = p;
    return 1;
}


/* Store a number (token `tok` of kind `kind`, value iv or dv) as the mode wants it. */
#define TOPOMAP_I_STORE()                                                                                   \
    do {                                                                                                    \
        if (t >= t_end) goto irregular; /* never: both passes segment alike */                            \
        if (mode == TOPOMAP_I_MODE_TABLE) {                                                                 \
            if (topomap_i_table_store(k, row, in_line, kind, iv, dv)) goto irregular;                       \
        } else if (mode == TOPOMAP_I_MODE_ROWS) {                                                           \
            /* e: the entry this number belongs to; weight_next: it is that entry's weight */              \
            if (kind != TOPOMAP_I_INT || row >= lay->n) goto irregular;                                     \
            if (in_line < lead) {                                                                           \
                if (iv < 0) goto irregular;                                                                 \
                degree = iv;                                                                                \
            } else if (e >= k->entries) {                                                                   \
                goto irregular;                                                                             \
            } else if (weight_next) {                                                                       \
                if (iv < 0) goto irregular;                                                                 \
                k->weights[e] = (double)iv;                                                                 \
                weight_next = 0;                                                                            \
                e += !lay->weight_first;                                                                    \
            } else {                                                                                        \
                if (iv < lay->base || iv - lay->base >= lay->n) goto irregular;                             \
                k->dst[e] = (int32_t)(iv - lay->base);                                                      \
                if (lay->step == 1)                                                                         \
                    k->weights[e++] = 1.0;                                                                  \
                else if (lay->weight_first)                                                                 \
                    e++, weight_next = 1;                                                                   \
                else                                                                                        \
                    weight_next = 1;                                                                        \
            }                                                                                               \
        } else if (mode == TOPOMAP_I_MODE_NONZERO && (kind == TOPOMAP_I_INT || kind == TOPOMAP_I_FLOAT)) {  \
            double value = kind == TOPOMAP_I_INT ? (double)iv : dv;                                         \
            if (value != 0 && topomap_i_append(r, line, in_line, value)) {                                  \
                r->rc = TOPOMAP_ENOMEM;                                                                     \
                return;                                                                                     \
            }                                                                                               \
        } else if (kind == TOPOMAP_I_INT) {                                                                 \
            if (mode == TOPOMAP_I_MODE_INT)                                                                 \
                values[t].i = iv;                                                                           \
            else if (r->float_from >= 0)                                                                    \
                values[t].d = iv == 0 && *tok == '-' ? -0.0 : (double)iv;                                   \
            else if (iv == 0 && *tok == '-')                                                                \
                values[t].i = INT64_MIN, r->negzero++;                                                      \
            else                                                                                            \
                values[t].i = iv;                                                                           \
        } else if (kind == TOPOMAP_I_FLOAT && mode == TOPOMAP_I_MODE_AUTO) {                                \
            if (r->float_from < 0) r->float_from = t;                                                       \
            values[t].d = dv;                                                                               \
        } else {                                                                                            \
            r->rc = kind == TOPOMAP_I_NOTSUP && mode != TOPOMAP_I_MODE_INT ? TOPOMAP_ENOTSUP : TOPOMAP_EINVAL; \
            r->bad = (int64_t)(tok - base);                                                                 \
            return;                                                                                         \
        }                                                                                                   \
        t++;                                                                                                \
        in_line++;                                                                                          \
    } while (0)

/* Close the line just read (in_line numbers) and open the next one. */
#define TOPOMAP_I_END_LINE()                                                                                \
    do {                                                                                                    \
        if (line >= line_end) goto irregular; /* never: both passes count lines alike */                   \
        if (k->counts) k->counts[line] = in_line;                                                           \
        line++;                                                                                             \
        if (in_line) {                                                                                      \
            r->filled++;                                                                                    \
            if (in_line < r->min_width) r->min_width = in_line;                                             \
            if (in_line > r->max_width) r->max_width = in_line;                                             \
            if (mode == TOPOMAP_I_MODE_TABLE) {                                                             \
                if (in_line != k->width) goto irregular;                                                    \
                row++;                                                                                      \
            }                                                                                               \
        }                                                                                                   \
        if (mode == TOPOMAP_I_MODE_ROWS && row < lay->n) {                                                  \
            int64_t d = in_line - lead;                                                                     \
            if (d < 0 || d % lay->step || (lay->degree && degree != d / lay->step)) goto irregular;        \
            k->row_ptr[row + 1] = d / lay->step;                                                            \
            entry += d / lay->step;                                                                         \
            row++;                                                                                          \
        } else if (mode == TOPOMAP_I_MODE_ROWS && in_line) {                                                \
            goto irregular; /* numbers after the last row */                                                \
        }                                                                                                   \
        in_line = 0;                                                                                        \
        degree = -1;                                                                                        \
        e = entry;                                                                                          \
        weight_next = mode == TOPOMAP_I_MODE_ROWS && lay->step == 2 && lay->weight_first;                   \
        line_at = p;                                                                                        \
        t_line = t;                                                                                         \
        found_line = r->found.count;                                                                        \
    } while (0)

/* Pass 2 over chunk c, for a mode known at compile time (the callers below pass constants,
   so each mode gets its own loop without the others' branches).
   Two lanes read the same lines.  The block lane (x86-64) finds the numbers of lines made of
   unsigned integers and blanks -- the bulk of a large file -- from bit masks of 64-byte
   blocks; when a block holds anything else it gives the line that holds it back to the byte
   lane (restoring the line's start: whatever it stored is stored again), which handles
   every token and comment, and takes over again at the next line. */
static inline __attribute__((always_inline)) void topomap_i_scan_chunk_as(const topomap_scan *s, int c,
                                                                         const topomap_i_sink *k,
                                                                         topomap_i_chunk *r, const int mode,
                                                                         const int simd)
{
    const unsigned char *base = (const unsigned char *)s->buf;
    const unsigned char *p = base + s->start[c], *const end = base + s->start[c + 1];
    const unsigned char *cls = s->cls, *line_at = p;
    const int comment_lines = s->whole_line && s->has_comment[c];
    const int64_t t_end = s->tokens[c + 1], line_end = s->lines[c + 1];
    int64_t line = s->lines[c], t = s->tokens[c], row = 0;
    topomap_i_slot *values = k->values;
    memset(r, 0, sizeof *r);
    r->min_width = INT64_MAX;
    r->float_from = -1;
    const topomap_rows_layout *lay = k->layout;
    const int64_t lead = mode == TOPOMAP_I_MODE_ROWS ? lay->head + lay->degree : 0;
    int64_t entry = 0; /* rows: the first entry of the line */
    if (mode == TOPOMAP_I_MODE_TABLE) {
        if (t % k->width) goto irregular;
        row = t / k->width;
    }
    if (mode == TOPOMAP_I_MODE_ROWS) {
        row = line; /* every line before this chunk was a row, or the text is refused */
        entry = row < lay->n ? t - row * lead : k->entries * lay->step;
        if (entry % lay->step) goto irregular;
        entry /= lay->step;
    }
    /* the open line: numbers so far, ROWS state, and where it started (to read it again) */
    int64_t in_line = 0, degree = -1, e = entry, t_line = t, found_line = 0;
    int weight_next = mode == TOPOMAP_I_MODE_ROWS && lay->step == 2 && lay->weight_first;
    int kind;
    int64_t iv;
    double dv;
    const unsigned char *tok;
#ifdef TOPOMAP_I_SSE2
    /* blocks are read whole and numbers as 8-byte words: the block lane stops 72 bytes before
       the text's end, and at the chunk's end */
    const unsigned char *stop = end < base + s->len - 72 ? end : base + s->len - 72;
    const char comma_byte = cls[','] == TOPOMAP_I_BLANK ? ',' : ' ';
    const __m128i comma = _mm_set1_epi8(comma_byte);
    const int block_lane = simd != TOPOMAP_SCAN_SIMD_NONE && !s->has_comment[c];
    int idle = 0, skip = 0; /* lines the block lane gave back at once; lines to leave to the byte lane */
#endif
    for (;;) {
        /* at the start of a line */
        if (p == end) break;
        if (comment_lines) {
            const unsigned char *cstop = topomap_i_comment_line(s, p, end);
            if (cstop) {
                r->comments++;
                if (cstop == end) break; /* a last comment line without '\n' leaves no line */
                if (line >= line_end) goto irregular;
                if (k->counts) k->counts[line] = -1;
                line++;
                p = line_at = cstop + 1;
                continue;
            }
        }
#ifdef TOPOMAP_I_SSE2
        if (skip) skip--;
        else if (block_lane && p + 64 <= stop) {
            const int64_t first_line = line;
            uint64_t carry = 0;
            const unsigned char *q = p;
            for (; q + 64 <= stop; q += 64) {
                uint64_t digits, blanks, newlines;
#ifdef TOPOMAP_I_AVX2
                if (simd == TOPOMAP_SCAN_SIMD_AVX2)
                    topomap_i_masks_avx2(q, comma_byte, &digits, &blanks, &newlines);
                else
#endif
                    topomap_i_masks(q, comma, &digits, &blanks, &newlines);
                uint64_t starts = digits & ~((digits << 1) | carry), other = ~(digits | blanks | newlines);
                carry = digits >> 63;
                uint64_t events = starts | newlines, cut = ~(uint64_t)0;
                if (other) { /* up to the last '\n' before it; its line goes to the byte lane */
                    uint64_t before = (other & (0 - other)) - 1;
                    cut = newlines & before ? ((uint64_t)2 << (63 - __builtin_clzll(newlines & before))) - 1 : 0;
                    events &= cut;
                }
                while (events) {
                    const unsigned char *at = q + __builtin_ctzll(events);
                    events &= events - 1;
                    if (*at == '\n') {
                        p = at + 1;
                        TOPOMAP_I_END_LINE();
                        continue;
                    }
                    tok = at;
                    kind = TOPOMAP_I_INT;
                    dv = 0;
                    if ((unsigned)tok[1] - '0' >= 10) {
                        iv = *tok - '0';
                    } else {
                        uint64_t w;
                        memcpy(&w, tok, 8);
                        uint64_t stops = topomap_i_non_digits(w);
                        if (stops) {
                            iv = (int64_t)topomap_i_word_digits(w, __builtin_ctzll(stops) >> 3);
                        } else {
                            uint64_t v = topomap_i_word_digits(w, 8);
                            const unsigned char *d = tok + 8;
                            for (; d < base + s->len && topomap_i_is_digit(*d); d++) v = v * 10 + (uint64_t)(*d - '0');
                            if (d - tok <= 18)
                                iv = (int64_t)v;
                            else
                                kind = topomap_i_classify(tok, d, &iv, &dv);
                        }
                    }
                    TOPOMAP_I_STORE();
                }
                if (other) break;
            }
            /* a line holding other text costs a wasted block: after one, leave the next lines
               to the byte lane for a while (files of floats would pay it on every line) */
            if (line == first_line) idle = idle ? (idle < 512 ? 2 * idle : idle) : 8, skip = idle;
            else idle = 0;
            /* back to the start of the open line: the byte lane reads it (again) */
            p = line_at;
            t = t_line;
            r->found.count = found_line;
            if (r->float_from >= t_line) r->float_from = -1; /* set again when the line is read again */
            in_line = 0;
            degree = -1;
            e = entry;
            weight_next = mode == TOPOMAP_I_MODE_ROWS && lay->step == 2 && lay->weight_first;
            if (p == end) continue;
        }
#endif
        /* the byte lane: one line */
        for (;;) {
            if (p == end) break;
            unsigned char ch = *p;
            tok = p;
            kind = TOPOMAP_I_INT;
            dv = 0;
            unsigned dg = (unsigned)ch - '0';
            if (dg < 10) {
                /* the common token: unsigned digits.  One digit: a branch the predictor learns
                   per file; 2 to 7: counted and converted without a loop, whose exit the
                   predictor would miss on every token of varying length */
                uint64_t v = dg;
                p++;
                if (p == end || (unsigned)*p - '0' >= 10) {
                    if (p < end && cls[*p] == TOPOMAP_I_TOKEN) {
                        p = tok;
                        goto general;
                    }
                    iv = (int64_t)v;
                    goto store;
                }
#ifdef TOPOMAP_I_SWAR
                if (end - tok >= 8) {
                    uint64_t w;
                    memcpy(&w, tok, 8);
                    uint64_t stops = topomap_i_non_digits(w);
                    if (stops) {
                        int nd = __builtin_ctzll(stops) >> 3; /* 2..7 */
                        p = tok + nd;
                        if (cls[*p] == TOPOMAP_I_TOKEN) {
                            p = tok;
                            goto general;
                        }
                        iv = (int64_t)topomap_i_word_digits(w, nd);
                        goto store;
                    }
                    v = topomap_i_word_digits(w, 8);
                    p = tok + 8; /* more digits, if any, below */
                }
#endif
                while (p < end && (dg = (unsigned)*p - '0') < 10) {
                    v = v * 10 + dg;
                    p++;
                }
                if (p - tok > 18 || (p < end && cls[*p] == TOPOMAP_I_TOKEN)) {
                    p = tok;
                    goto general;
                }
                iv = (int64_t)v;
                goto store;
            }
            if (cls[ch] == TOPOMAP_I_BLANK) {
                p++;
                continue;
            }
            if (cls[ch] == TOPOMAP_I_NEWLINE) {
                p++;
                break;
            }
            if (cls[ch] == TOPOMAP_I_COMMENT) {
                const unsigned char *q = memchr(p, '\n', (size_t)(end - p));
                p = q ? q : end;
                continue;
            }
        general:
            if (!topomap_i_fast_int(&p, end, cls, &iv)) {
                while (p < end && cls[*p] == TOPOMAP_I_TOKEN) p++;
                kind = topomap_i_classify(tok, p, &iv, &dv);
            }
        store:
            TOPOMAP_I_STORE();
        }
        if (p == end && end[-1] != '\n') {
            /* the text's last line, without '\n' */
            if (end != base + s->len || !s->last_line) break; /* it vanished (a comment) */
        }
        TOPOMAP_I_END_LINE();
    }
    return;
irregular:
    r->rc = TOPOMAP_EINVAL;
    r->bad = (int64_t)(line_at - base);
}

/* Pass 2 over chunk c: a loop per mode and instruction set, each compiled for its constants. */
static inline __attribute__((always_inline)) void topomap_i_scan_chunk_with(const topomap_scan *s, int c,
                                                                           const topomap_i_sink *k,
                                                                           topomap_i_chunk *r, const int simd)
{
    if (k->mode == TOPOMAP_I_MODE_INT)
        topomap_i_scan_chunk_as(s, c, k, r, TOPOMAP_I_MODE_INT, simd);
    else if (k->mode == TOPOMAP_I_MODE_AUTO)
        topomap_i_scan_chunk_as(s, c, k, r, TOPOMAP_I_MODE_AUTO, simd);
    else if (k->mode == TOPOMAP_I_MODE_NONZERO)
        topomap_i_scan_chunk_as(s, c, k, r, TOPOMAP_I_MODE_NONZERO, simd);
    else if (k->mode == TOPOMAP_I_MODE_ROWS)
        topomap_i_scan_chunk_as(s, c, k, r, TOPOMAP_I_MODE_ROWS, simd);
    else
        topomap_i_scan_chunk_as(s, c, k, r, TOPOMAP_I_MODE_TABLE, simd);
}

static void topomap_i_scan_chunk_bytes(const topomap_scan *s, int c, const topomap_i_sink *k, topomap_i_chunk *r)
{
    topomap_i_scan_chunk_with(s, c, k, r, TOPOMAP_SCAN_SIMD_NONE);
}

#ifdef TOPOMAP_I_SSE2
static void topomap_i_scan_chunk_sse2(const topomap_scan *s, int c, const topomap_i_sink *k, topomap_i_chunk *r)
{
    topomap_i_scan_chunk_with(s, c, k, r, TOPOMAP_SCAN_SIMD_SSE2);
}
#endif

#ifdef TOPOMAP_I_AVX2
__attribute__((target("avx2"))) static void topomap_i_scan_chunk_avx2(const topomap_scan *s, int c,
                                                                    const topomap_i_sink *k, topomap_i_chunk *r)
{
    topomap_i_scan_chunk_with(s, c, k, r, TOPOMAP_SCAN_SIMD_AVX2);
}
#endif

static void topomap_i_scan_chunk(const topomap_scan *s, int c, const topomap_i_sink *k, topomap_i_chunk *r)
{
#ifdef TOPOMAP_I_AVX2
    if (s->simd >= TOPOMAP_SCAN_SIMD_AVX2) {
        topomap_i_scan_chunk_avx2(s, c, k, r);
        return;
    }
#endif
#ifdef TOPOMAP_I_SSE2
    if (s->simd == TOPOMAP_SCAN_SIMD_SSE2) {
        topomap_i_scan_chunk_sse2(s, c, k, r);
        return;
    }
#endif
    topomap_i_scan_chunk_bytes(s, c, k, r);
}

/* What every chunk's pass 2 found, merged: the first fault in text order wins. */
static int topomap_i_merge(const topomap_scan *s, const topomap_i_sink *k, const topomap_i_chunk *r,
                           topomap_scan_info *info)
{
    memset(info, 0, sizeof *info);
    info->bad_offset = -1;
    info->min_width = INT64_MAX;
    for (int c = 0; c < s->nchunks; c++) {
        if (r[c].rc == TOPOMAP_ENOMEM)
            return topomap_i_fail(TOPOMAP_ENOMEM, "out of memory keeping the non-zero numbers of a text");
        if (r[c].rc) {
            info->bad_offset = r[c].bad;
            if (r[c].rc == TOPOMAP_ENOTSUP)
                return topomap_i_fail(r[c].rc, "number at byte %lld needs another converter",
                                      (long long)r[c].bad);
            return topomap_i_fail(r[c].rc,
                                  k->mode == TOPOMAP_I_MODE_TABLE ? "line at byte %lld is not a row of the table"
                                                                  : "token at byte %lld is not a number",
                                  (long long)r[c].bad);
        }
        info->filled_lines += r[c].filled;
        info->comment_lines += r[c].comments;
        if (r[c].min_width < info->min_width) info->min_width = r[c].min_width;
        if (r[c].max_width > info->max_width) info->max_width = r[c].max_width;
    }
    if (!info->filled_lines) info->min_width = 0;
    return TOPOMAP_OK;
}

/* Pass 2 on every chunk of a text pass 1 has counted. */
static void topomap_i_convert_all(const topomap_scan *s, const topomap_i_sink *k, topomap_i_chunk *r)
{
#pragma omp parallel for schedule(dynamic, 1) num_threads(topomap_i_threads(s->nchunks))
    for (int c = 0; c < s->nchunks; c++) topomap_i_scan_chunk(s, c, k, &r[c]);
}

/* Run pass 2 on every chunk and merge. */
static int topomap_i_scan_all(const topomap_scan *s, const topomap_i_sink *k, topomap_i_chunk *r,
                              topomap_scan_info *info)
{
    topomap_i_convert_all(s, k, r);
    return topomap_i_merge(s, k, r, info);
}

/* A sink and its chunks' results, for pass 2 run by topomap_i_scan_text. */
typedef struct {
    const topomap_i_sink *k;
    topomap_i_chunk *r;
} topomap_i_job;

static void topomap_i_convert_chunk(const topomap_scan *s, int c, void *ctx)
{
    const topomap_i_job *job = ctx;
    topomap_i_scan_chunk(s, c, job->k, &job->r[c]);
}

int topomap_scan_numbers(const topomap_scan *s, int integer, void *values, int64_t *line_counts,
                         topomap_scan_info *info)
{
    topomap_i_chunk r[TOPOMAP_SCAN_MAX_CHUNKS];
    topomap_i_sink k = {.mode = integer ? TOPOMAP_I_MODE_INT : TOPOMAP_I_MODE_AUTO, .values = values,
                        .counts = line_counts};
    int rc = topomap_i_scan_all(s, &k, r, info);
    if (rc) goto cleanup;
    int floats = 0, negzero = 0;
    for (int c = 0; c < s->nchunks; c++) {
        floats |= r[c].float_from >= 0;
        negzero |= r[c].negzero > 0;
    }
    info->is_float = floats;
    if (!floats && !negzero) goto cleanup;
    /* the integers stored before a chunk's first float become doubles; the "-0" sentinels
       become -0.0 or 0 */
    topomap_i_slot *v = values;
#pragma omp parallel for schedule(dynamic, 1) num_threads(topomap_i_threads(s->nchunks))
    for (int c = 0; c < s->nchunks; c++) {
        int64_t stop = r[c].float_from >= 0 ? r[c].float_from : s->tokens[c + 1];
        if (floats) {
            for (int64_t i = s->tokens[c]; i < stop; i++)
                v[i].d = v[i].i == INT64_MIN ? -0.0 : (double)v[i].i;
        } else if (r[c].negzero) {
            for (int64_t i = s->tokens[c]; i < stop; i++)
                if (v[i].i == INT64_MIN) v[i].i = 0;
        }
    }
cleanup:
    return rc;
}

int topomap_scan_table(const topomap_scan *s, int width, const char *types, void *const *columns,
                       int64_t *rows, topomap_scan_info *info)
{
    topomap_i_chunk r[TOPOMAP_SCAN_MAX_CHUNKS];
    *rows = 0;
    if (width < 1) return topomap_i_fail(TOPOMAP_EINVAL, "table width %d must be at least 1", width);
    topomap_i_sink k = {.mode = TOPOMAP_I_MODE_TABLE, .width = width, .types = types, .columns = columns,
                        .rows = s->tokens[s->nchunks] / width};
    int rc = topomap_i_scan_all(s, &k, r, info);
    if (!rc) *rows = k.rows;
    return rc;
}

int64_t topomap_scan_table_capacity(int64_t len, int width)
{
    return width < 1 ? 0 : (len + 1) / (2 * (int64_t)width);
}

int topomap_scan_table_text(topomap_scan *s, const char *buf, int64_t len, int commas, int comment,
                            int whole_line_comments, int nchunks, int max_simd, int width, const char *types,
                            void *const *columns, int64_t capacity, int64_t *rows, topomap_scan_info *info)
{
    topomap_i_chunk r[TOPOMAP_SCAN_MAX_CHUNKS];
    *rows = 0;
    if (width < 1) return topomap_i_fail(TOPOMAP_EINVAL, "table width %d must be at least 1", width);
    if (capacity < topomap_scan_table_capacity(len, width))
        return topomap_i_fail(TOPOMAP_EINVAL, "columns of %lld rows may not hold a table of %lld bytes",
                              (long long)capacity, (long long)len);
    topomap_i_sink k = {.mode = TOPOMAP_I_MODE_TABLE, .width = width, .types = types, .columns = columns,
                        .rows = capacity};
    topomap_i_job job = {&k, r};
    topomap_i_scan_text(s, buf, len, commas, comment, whole_line_comments, nchunks, max_simd, topomap_i_convert_chunk,
                        &job);
    int rc = topomap_i_merge(s, &k, r, info);
    if (!rc) *rows = s->tokens[s->nchunks] / width;
    return rc;
}

int64_t topomap_scan_row_entries(const topomap_scan *s, const topomap_rows_layout *layout)
{
    int64_t rest = s->tokens[s->nchunks] - (int64_t)layout->n * (layout->head + layout->degree);
    return layout->step < 1 || rest < 0 || rest % layout->step ? -1 : rest / layout->step;
}

/* The sink of adjacency lists, with row_ptr cleared (rows missing from the text stay empty);
   0, or TOPOMAP_EINVAL for a layout no text can hold. */
static int topomap_i_rows_sink(const topomap_rows_layout *layout, int64_t entries, int64_t *row_ptr, int32_t *dst,
                               double *weights, topomap_i_sink *k)
{
    if (layout->n < 1 || (layout->step != 1 && layout->step != 2))
        return topomap_i_fail(TOPOMAP_EINVAL, "rows of %d processes and %d numbers an entry", (int)layout->n,
                              layout->step);
    *k = (topomap_i_sink){.mode = TOPOMAP_I_MODE_ROWS, .layout = layout, .row_ptr = row_ptr, .entries = entries,
                          .dst = dst, .weights = weights};
    memset(row_ptr, 0, ((size_t)layout->n + 1) * sizeof *row_ptr);
    return TOPOMAP_OK;
}

/* After pass 2 of adjacency lists: the text's counts fit the layout, no chunk found a fault,
   there is a line for every row; then row_ptr from the rows' lengths. */
static int topomap_i_rows_done(const topomap_scan *s, const topomap_rows_layout *layout, const topomap_i_sink *k,
                               const topomap_i_chunk *r, int64_t *row_ptr, topomap_scan_info *info)
{
    if (topomap_scan_row_entries(s, layout) < 0) {
        memset(info, 0, sizeof *info);
        info->bad_offset = 0;
        return topomap_i_fail(TOPOMAP_EINVAL, "the text cannot hold %d rows of this layout", (int)layout->n);
    }
    int rc = topomap_i_merge(s, k, r, info);
    if (rc) return rc;
    if (s->lines[s->nchunks] < layout->n)
        return topomap_i_fail(TOPOMAP_EINVAL, "%lld lines for %d rows", (long long)s->lines[s->nchunks],
                              (int)layout->n);
    for (int32_t i = 0; i < layout->n; i++) row_ptr[i + 1] += row_ptr[i];
    return TOPOMAP_OK;
}

int topomap_scan_rows(const topomap_scan *s, const topomap_rows_layout *layout, int64_t *row_ptr, int32_t *dst,
                      double *weights, topomap_scan_info *info)
{
    topomap_i_chunk r[TOPOMAP_SCAN_MAX_CHUNKS];
    topomap_i_sink k;
    int64_t entries = topomap_scan_row_entries(s, layout);
    int rc = entries < 0 ? topomap_i_fail(TOPOMAP_EINVAL, "the text cannot hold %d rows of this layout",
                                          (int)layout->n)
                         : topomap_i_rows_sink(layout, entries, row_ptr, dst, weights, &k);
    if (rc) {
        memset(info, 0, sizeof *info);
        info->bad_offset = 0;
        return rc;
    }
    topomap_i_convert_all(s, &k, r);
    return topomap_i_rows_done(s, layout, &k, r, row_ptr, info);
}

int64_t topomap_scan_rows_capacity(int64_t len, const topomap_rows_layout *layout)
{
    return layout->step < 1 ? 0 : (len + 1) / (2 * (int64_t)layout->step);
}

int topomap_scan_rows_text(topomap_scan *s, const char *buf, int64_t len, int nchunks, int max_simd,
                           const topomap_rows_layout *layout, int64_t *row_ptr, int32_t *dst, double *weights,
                           int64_t capacity, int64_t *entries, topomap_scan_info *info)
{
    topomap_i_chunk r[TOPOMAP_SCAN_MAX_CHUNKS];
    topomap_i_sink k;
    *entries = 0;
    memset(info, 0, sizeof *info);
    info->bad_offset = 0;
    if (capacity < topomap_scan_rows_capacity(len, layout))
        return topomap_i_fail(TOPOMAP_EINVAL, "room for %lld entries may not hold the rows of %lld bytes",
                              (long long)capacity, (long long)len);
    int rc = topomap_i_rows_sink(layout, capacity, row_ptr, dst, weights, &k);
    if (rc) return rc;
    topomap_i_job job = {&k, r};
    topomap_i_scan_text(s, buf, len, 0, -1, 0, nchunks, max_simd, topomap_i_convert_chunk, &job);
    rc = topomap_i_rows_done(s, layout, &k, r, row_ptr, info);
    if (!rc) *entries = topomap_scan_row_entries(s, layout);
    return rc;
}

/* The non-zero entries every chunk found, gathered in text order into `out`; frees them. */
static int topomap_i_nonzeros_done(const topomap_scan *s, const topomap_i_sink *k, topomap_i_chunk *r,
                                   topomap_scan_entries *out, topomap_scan_info *info)
{
    int rc = topomap_i_merge(s, k, r, info);
    if (rc) goto cleanup;
    for (int c = 0; c < s->nchunks; c++) out->count += r[c].found.count;
    size_t room = (size_t)(out->count > 0 ? out->count : 1);
    out->line = malloc(room * sizeof *out->line);
    out->col = malloc(room * sizeof *out->col);
    out->value = malloc(room * sizeof *out->value);
    if (!out->line || !out->col || !out->value) {
        rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory keeping %lld non-zero numbers", (long long)out->count);
        goto cleanup;
    }
    for (int64_t c = 0, first = 0; c < s->nchunks; first += r[c++].found.count) {
        int64_t m = r[c].found.count;
        if (!m) continue;
        memcpy(out->line + first, r[c].found.line, (size_t)m * sizeof *out->line);
        memcpy(out->col + first, r[c].found.col, (size_t)m * sizeof *out->col);
        memcpy(out->value + first, r[c].found.value, (size_t)m * sizeof *out->value);
    }
cleanup:
    for (int c = 0; c < s->nchunks; c++) topomap_scan_entries_free(&r[c].found);
    if (rc) topomap_scan_entries_free(out);
    return rc;
}

int topomap_scan_nonzeros(const topomap_scan *s, int64_t *line_counts, topomap_scan_entries *out,
                          topomap_scan_info *info)
{
    topomap_i_chunk r[TOPOMAP_SCAN_MAX_CHUNKS];
    topomap_i_sink k = {.mode = TOPOMAP_I_MODE_NONZERO, .counts = line_counts};
    memset(out, 0, sizeof *out);
    topomap_i_convert_all(s, &k, r);
    return topomap_i_nonzeros_done(s, &k, r, out, info);
}

int64_t topomap_scan_lines_capacity(int64_t len) { return len + 1; }

int topomap_scan_nonzeros_text(topomap_scan *s, const char *buf, int64_t len, int commas, int comment,
                               int whole_line_comments, int nchunks, int max_simd, int64_t *line_counts,
                               int64_t capacity, topomap_scan_entries *out, topomap_scan_info *info)
{
    topomap_i_chunk r[TOPOMAP_SCAN_MAX_CHUNKS];
    memset(out, 0, sizeof *out);
    if (line_counts && capacity < topomap_scan_lines_capacity(len)) {
        memset(info, 0, sizeof *info);
        info->bad_offset = -1;
        return topomap_i_fail(TOPOMAP_EINVAL, "room for %lld line counts may not hold the lines of %lld bytes",
                              (long long)capacity, (long long)len);
    }
    topomap_i_sink k = {.mode = TOPOMAP_I_MODE_NONZERO, .counts = line_counts};
    topomap_i_job job = {&k, r};
    topomap_i_scan_text(s, buf, len, commas, comment, whole_line_comments, nchunks, max_simd, topomap_i_convert_chunk,
                        &job);
    return topomap_i_nonzeros_done(s, &k, r, out, info);
}

void topomap_scan_entries_free(topomap_scan_entries *e)
{
    free(e->line);
    free(e->col);
    free(e->value);
    memset(e, 0, sizeof *e);
}
