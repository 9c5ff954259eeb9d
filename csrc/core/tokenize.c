/* Text scanning for the pattern file readers (grammar in topomap/tokenize.h): numbers of
 * whole buffers in several output shapes (every number, typed table columns, adjacency rows,
 * non-zero entries), and the record formats of per-rank runs (Open MPI pml_monitoring,
 * dumpi2ascii) read straight from their files.
 *
 * Why in C: the readers of 10^8-byte pattern files spent their time splitting and converting
 * numbers and building arrays from them; NumPy's text parser costs 40-150 ns per token, this
 * code one to two ns per byte, and it writes the arrays the pattern keeps.  Choices the format
 * descriptions leave open, made here once for every reader: ASCII whitespace as separators
 * (what Python's bytes.split() uses), integers checked for int64 overflow rather than clipped,
 * decimals converted with strtod after the grammar check so that hexadecimal floats and
 * "nan(...)" forms are rejected like the Python tier rejects them.
 *
 * Speed choices.  Chunks are whole lines, so each thread starts in a known state; threading
 * never changes a result: chunks fill disjoint slices and faults are reported in text order.
 * The counting pass needs no conversion and reads 64 bytes at a time.  The converting pass
 * has two lanes over the same lines: lines of unsigned integers and blanks (the bulk of large
 * files) are read from bit masks of 64-byte blocks (SSE2, in every x86-64), numbers of up to
 * 8 digits converted as one 8-byte word (no loop whose exit a branch predictor would miss on
 * every token); any other line goes to the byte lane, which handles every token and comment.
 * When values may be floats, integers are stored as int64 until the first float token and
 * converted in place afterwards (int64 and double have the same size), so a text of integers
 * is never converted twice and the caller learns the type from one pass.  "-0" is stored as
 * INT64_MIN (outside the grammar's range) until then, so a block that turns out to hold floats
 * keeps the sign of its zeros, as Python's float() does.  Cost: two passes over the text,
 * O(len) each.
 */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "topomap/error.h"
#include "topomap/tokenize.h"

enum { TOPOMAP_I_TOKEN = 0, TOPOMAP_I_BLANK = 1, TOPOMAP_I_NEWLINE = 2, TOPOMAP_I_COMMENT = 3 };
enum { TOPOMAP_I_INT, TOPOMAP_I_FLOAT, TOPOMAP_I_BAD, TOPOMAP_I_NOTSUP };
enum { TOPOMAP_I_MODE_INT, TOPOMAP_I_MODE_AUTO, TOPOMAP_I_MODE_TABLE, TOPOMAP_I_MODE_NONZERO, TOPOMAP_I_MODE_ROWS };

typedef union {
    int64_t i;
    double d;
} topomap_i_slot;

static int topomap_i_is_digit(unsigned char c) { return c >= '0' && c <= '9'; }

/* The blanks a whole-line comment may follow (what the Python tier's regular expression allows). */
static int topomap_i_is_lead_blank(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

/* Integer magnitude of the digits [p, end); -1 when it exceeds `limit`. */
static int64_t topomap_i_digits(const unsigned char *p, const unsigned char *end, uint64_t limit)
{
    uint64_t v = 0;
    for (; p < end; p++) {
        uint64_t d = (uint64_t)(*p - '0');
        if (v > (limit - d) / 10) return -1;
        v = v * 10 + d;
    }
    return (int64_t)v;
}

/* Case-insensitive comparison of [p, end) with the lower-case word w. */
static int topomap_i_word(const unsigned char *p, const unsigned char *end, const char *w)
{
    size_t n = strlen(w);
    if ((size_t)(end - p) != n) return 0;
    for (size_t i = 0; i < n; i++)
        if ((p[i] | 0x20) != (unsigned char)w[i]) return 0;
    return 1;
}

/* 1 if [p, end) is a decimal number of the grammar (after an optional sign was skipped). */
static int topomap_i_is_decimal(const unsigned char *p, const unsigned char *end)
{
    int digits = 0;
    while (p < end && topomap_i_is_digit(*p)) p++, digits++;
    if (p < end && *p == '.') {
        p++;
        while (p < end && topomap_i_is_digit(*p)) p++, digits++;
    }
    if (!digits) return 0;
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < end && (*p == '+' || *p == '-')) p++;
        if (p == end || !topomap_i_is_digit(*p)) return 0;
        while (p < end && topomap_i_is_digit(*p)) p++;
    }
    return p == end;
}

/* Token [tok, end) (not empty): an int64 integer, another number, outside the grammar, or a
 * number strtod cannot convert here. */
static int topomap_i_classify(const unsigned char *tok, const unsigned char *end, int64_t *iv, double *dv)
{
    const unsigned char *p = tok;
    int negative = 0;
    if (*p == '+' || *p == '-') negative = *p++ == '-';
    if (p == end) return TOPOMAP_I_BAD;
    int all_digits = 1;
    for (const unsigned char *q = p; q < end; q++)
        if (!topomap_i_is_digit(*q)) {
            all_digits = 0;
            break;
        }
    if (all_digits) {
        /* |value| < 2^63 - 1 when positive, <= 2^63 - 1 when negative (strict int64 bounds) */
        int64_t mag = topomap_i_digits(p, end, negative ? (uint64_t)INT64_MAX : (uint64_t)INT64_MAX - 1);
        if (mag >= 0) {
            *iv = negative ? -mag : mag;
            return TOPOMAP_I_INT;
        }
    } else if (topomap_i_word(p, end, "inf") || topomap_i_word(p, end, "infinity")) {
        *dv = negative ? -INFINITY : INFINITY;
        return TOPOMAP_I_FLOAT;
    } else if (topomap_i_word(p, end, "nan")) {
        *dv = NAN;
        return TOPOMAP_I_FLOAT;
    } else if (!topomap_i_is_decimal(p, end)) {
        return TOPOMAP_I_BAD;
    }
    char text[128];
    size_t n = (size_t)(end - tok);
    if (n >= sizeof text) return TOPOMAP_I_NOTSUP;
    memcpy(text, tok, n);
    text[n] = '\0';
    char *stop;
    double v = strtod(text, &stop); /* out of range: +-inf or 0, as Python's float() gives */
    if (stop != text + n) return TOPOMAP_I_NOTSUP; /* a locale whose decimal point is not '.' */
    *dv = v;
    return TOPOMAP_I_FLOAT;
}

/* ------------------------------------------------------------------ pass 1: chunks and counts */

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && defined(__GNUC__)
#define TOPOMAP_I_SWAR 1
/* Value of 8 digit bytes (already minus '0'), the first the most significant: three multiplies
   instead of eight (the technique of simdjson's parse_eight_digits_unrolled). */
static uint64_t topomap_i_eight_digits(uint64_t x)
{
    x = x * 10 + (x >> 8);
    return (((x & 0x000000FF000000FFull) * 0x000F424000000064ull) +
            (((x >> 16) & 0x000000FF000000FFull) * 0x0000271000000001ull)) >> 32;
}

/* High bit of each byte of w that is not an ASCII digit. */
static uint64_t topomap_i_non_digits(uint64_t w)
{
    const uint64_t low7 = w & 0x7F7F7F7F7F7F7F7Full; /* adding below cannot carry across bytes */
    const uint64_t above9 = low7 + 0x4646464646464646ull, from0 = low7 + 0x5050505050505050ull;
    return (above9 | ~from0 | w) & 0x8080808080808080ull;
}
#endif

#if defined(__SSE2__) && defined(TOPOMAP_I_SWAR)
#include <emmintrin.h>
#define TOPOMAP_I_SSE2 1
/* Bit i of *digit, *blank, *newline: p[i] (i < 64) is a digit, a separator other than '\n'
   (',' is when comma is ','), a '\n'.  SSE2 is part of every x86-64. */
static inline void topomap_i_masks(const unsigned char *p, __m128i comma, uint64_t *digit, uint64_t *blank,
                                   uint64_t *newline)
{
    const __m128i zero = _mm_set1_epi8('0'), nine = _mm_set1_epi8(9), nl = _mm_set1_epi8('\n');
    const __m128i tab = _mm_set1_epi8('\t'), four = _mm_set1_epi8(4), space = _mm_set1_epi8(' ');
    uint64_t d = 0, b = 0, n = 0;
    for (int k = 0; k < 4; k++) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + 16 * k));
        __m128i x = _mm_sub_epi8(v, zero), y = _mm_sub_epi8(v, tab);
        __m128i is_digit = _mm_cmpeq_epi8(_mm_min_epu8(x, nine), x);
        __m128i is_nl = _mm_cmpeq_epi8(v, nl);
        __m128i is_ctl = _mm_cmpeq_epi8(_mm_min_epu8(y, four), y); /* '\t' .. '\r' */
        __m128i is_blank = _mm_or_si128(_mm_andnot_si128(is_nl, is_ctl),
                                        _mm_or_si128(_mm_cmpeq_epi8(v, space), _mm_cmpeq_epi8(v, comma)));
        d |= (uint64_t)(unsigned)_mm_movemask_epi8(is_digit) << (16 * k);
        b |= (uint64_t)(unsigned)_mm_movemask_epi8(is_blank) << (16 * k);
        n |= (uint64_t)(unsigned)_mm_movemask_epi8(is_nl) << (16 * k);
    }
    *digit = d;
    *blank = b;
    *newline = n;
}

#endif

/* Tokens and newlines of a chunk without comment markers: a token starts where a separator
 * is followed by a token byte (the chunk starts a line).  Branch-free, over blocks short
 * enough for 8-bit counters, so that the compiler vectorises it with byte lanes. */
static unsigned topomap_i_sep(unsigned char c, unsigned char comma)
{
    return (c == ' ') | ((unsigned char)(c - 9) < 5) | (c == comma);
}

static void topomap_i_count_plain(const unsigned char *p, int64_t n, unsigned char comma, int64_t *tokens,
                                  int64_t *newlines)
{
    int64_t nt = 0, nl = 0, at = 1;
    if (n > 0) {
        nt = !topomap_i_sep(p[0], comma);
        nl = p[0] == '\n';
    }
#ifdef TOPOMAP_I_SSE2
    /* 64 bytes at a time: token starts are token bytes after a separator */
    const __m128i cv = _mm_set1_epi8((char)comma), space = _mm_set1_epi8(' '), tab = _mm_set1_epi8('\t');
    const __m128i four = _mm_set1_epi8(4), newline = _mm_set1_epi8('\n');
    uint64_t prev_token = topomap_i_sep(p[0], comma) ^ 1u; /* the byte before the block is a token byte */
    for (; at + 64 <= n; at += 64) {
        uint64_t sep = 0, nls = 0;
        for (int k = 0; k < 4; k++) {
            __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + at + 16 * k)), y = _mm_sub_epi8(v, tab);
            __m128i is_sep = _mm_or_si128(_mm_cmpeq_epi8(_mm_min_epu8(y, four), y),
                                          _mm_or_si128(_mm_cmpeq_epi8(v, space), _mm_cmpeq_epi8(v, cv)));
            sep |= (uint64_t)(unsigned)_mm_movemask_epi8(is_sep) << (16 * k);
            nls |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, newline)) << (16 * k);
        }
        uint64_t token_bytes = ~sep;
        nt += __builtin_popcountll(token_bytes & ~((token_bytes << 1) | prev_token));
        nl += __builtin_popcountll(nls);
        prev_token = token_bytes >> 63;
    }
#endif
    for (; at < n; at += 255) {
        int64_t stop = at + 255 < n ? at + 255 : n;
        unsigned char bt = 0, bl = 0;
        for (int64_t i = at; i < stop; i++) {
            bt += (unsigned char)(topomap_i_sep(p[i - 1], comma) & (topomap_i_sep(p[i], comma) ^ 1u));
            bl += (unsigned char)(p[i] == '\n');
        }
        nt += bt;
        nl += bl;
    }
    *tokens = nt;
    *newlines = nl;
}

/* A whole-line comment starting at p (a line start)?  Then the end of its line, else NULL. */
static const unsigned char *topomap_i_comment_line(const topomap_scan *s, const unsigned char *p,
                                                   const unsigned char *end)
{
    while (p < end && topomap_i_is_lead_blank(*p)) p++;
    if (p == end || *p != (unsigned char)s->comment) return NULL;
    const unsigned char *nl = memchr(p, '\n', (size_t)(end - p));
    return nl ? nl : end;
}

/* The same counts for a chunk holding comment markers, segmenting exactly as pass 2 does. */
static void topomap_i_count_comments(const topomap_scan *s, const unsigned char *p, const unsigned char *end,
                                     int64_t *tokens, int64_t *newlines)
{
    int64_t nt = 0, nl = 0;
    int line_start = 1;
    while (p < end) {
        if (line_start && s->whole_line) {
            const unsigned char *stop = topomap_i_comment_line(s, p, end);
            if (stop) {
                nl += stop < end;
                p = stop + (stop < end);
                continue;
            }
        }
        line_start = 0;
        switch (s->cls[*p]) {
        case TOPOMAP_I_NEWLINE:
            nl++;
            p++;
            line_start = 1;
            continue;
        case TOPOMAP_I_BLANK:
            p++;
            continue;
        case TOPOMAP_I_COMMENT: {
            const unsigned char *q = memchr(p, '\n', (size_t)(end - p));
            p = q ? q : end;
            continue;
        }
        default:
            nt++;
            while (p < end && s->cls[*p] == TOPOMAP_I_TOKEN) p++;
        }
    }
    *tokens = nt;
    *newlines = nl;
}

static int topomap_i_threads(int nchunks)
{
    int t = omp_get_max_threads();
    return t < nchunks ? t : nchunks;
}

void topomap_scan_init(topomap_scan *s, const char *buf, int64_t len, int commas, int comment,
                       int whole_line_comments, int nchunks)
{
    const unsigned char *base = (const unsigned char *)buf;
    memset(s, 0, sizeof *s);
    s->buf = buf;
    s->len = len;
    /* a digit or sign cannot mark comments: numbers start with them */
    s->comment = comment >= 0 && comment < 256 && !topomap_i_is_digit((unsigned char)comment) && comment != '+' &&
                         comment != '-'
                     ? comment
                     : -1;
    s->whole_line = whole_line_comments && s->comment >= 0;
    s->cls[' '] = s->cls['\t'] = s->cls['\v'] = s->cls['\f'] = s->cls['\r'] = TOPOMAP_I_BLANK;
    s->cls['\n'] = TOPOMAP_I_NEWLINE;
    if (commas) s->cls[','] = TOPOMAP_I_BLANK;
    if (s->comment >= 0 && !s->whole_line && s->cls[s->comment] == TOPOMAP_I_TOKEN)
        s->cls[s->comment] = TOPOMAP_I_COMMENT;
    if (s->comment >= 0 && s->cls[s->comment] != TOPOMAP_I_TOKEN && s->cls[s->comment] != TOPOMAP_I_COMMENT)
        s->comment = -1, s->whole_line = 0; /* a separator cannot start a comment */
    if (nchunks < 1) {
        /* a few chunks per thread balance uneven lines and busy cores; a chunk of less than
           1 MiB is not worth a thread's start */
        int64_t most = 4 * (int64_t)omp_get_max_threads(), by_size = len >> 20;
        nchunks = (int)(by_size < most ? by_size : most);
    }
    if (nchunks < 1) nchunks = 1;
    if (nchunks > TOPOMAP_SCAN_MAX_CHUNKS) nchunks = TOPOMAP_SCAN_MAX_CHUNKS;
    /* chunk boundaries just after a newline; empty chunks are dropped */
    int k = 0;
    s->start[0] = 0;
    for (int c = 1; c < nchunks; c++) {
        int64_t pos = len / nchunks * c;
        if (pos <= s->start[k]) continue;
        const unsigned char *nl = memchr(base + pos - 1, '\n', (size_t)(len - pos + 1));
        int64_t at = nl ? (int64_t)(nl - base) + 1 : len;
        if (at > s->start[k] && at < len) s->start[++k] = at;
    }
    s->nchunks = k + 1;
    s->start[s->nchunks] = len;
    unsigned char comma = commas ? ',' : ' ';
    int64_t counts[TOPOMAP_SCAN_MAX_CHUNKS][2];
#pragma omp parallel for schedule(dynamic, 1) num_threads(topomap_i_threads(s->nchunks))
    for (int c = 0; c < s->nchunks; c++) {
        const unsigned char *p = base + s->start[c], *end = base + s->start[c + 1];
        s->has_comment[c] = s->comment >= 0 && memchr(p, s->comment, (size_t)(end - p)) != NULL;
        if (s->has_comment[c])
            topomap_i_count_comments(s, p, end, &counts[c][0], &counts[c][1]);
        else
            topomap_i_count_plain(p, end - p, comma, &counts[c][0], &counts[c][1]);
    }
    for (int c = 0; c < s->nchunks; c++) {
        s->tokens[c + 1] = s->tokens[c] + counts[c][0];
        s->lines[c + 1] = s->lines[c] + counts[c][1];
    }
    if (len > 0 && base[len - 1] != '\n') {
        int64_t ls = len - 1;
        while (ls > 0 && base[ls - 1] != '\n') ls--;
        const unsigned char *q = base + ls;
        if (s->comment < 0)
            s->last_line = 1;
        else if (s->whole_line)
            s->last_line = topomap_i_comment_line(s, q, base + len) == NULL;
        else
            s->last_line = *q != (unsigned char)s->comment;
    }
    s->lines[s->nchunks] += s->last_line;
}

/* ------------------------------------------------------------------ pass 2: conversion */

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
static int topomap_i_table_store(const topomap_i_sink *k, int64_t row, int64_t j, int kind, int64_t iv, double dv)
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
            /* the digits to the top bytes, zeros (leading zero digits) below; a borrow of the
               subtraction only runs upwards from the non-digits, which the shift drops */
            v = topomap_i_eight_digits((w - 0x3030303030303030ull) << (8 * (8 - nd)));
            p += nd;
            goto digits_done;
        }
        v = topomap_i_eight_digits(w - 0x3030303030303030ull);
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
                                                                         topomap_i_chunk *r, const int mode)
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
    const __m128i comma = _mm_set1_epi8(cls[','] == TOPOMAP_I_BLANK ? ',' : ' ');
    const int block_lane = !s->has_comment[c];
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
                            iv = (int64_t)topomap_i_eight_digits((w - 0x3030303030303030ull)
                                                                 << (64 - 8 * (__builtin_ctzll(stops) >> 3)));
                        } else {
                            uint64_t v = topomap_i_eight_digits(w - 0x3030303030303030ull);
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
                        iv = (int64_t)topomap_i_eight_digits((w - 0x3030303030303030ull) << (64 - 8 * nd));
                        goto store;
                    }
                    v = topomap_i_eight_digits(w - 0x3030303030303030ull);
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
            if (c != s->nchunks - 1 || !s->last_line) break; /* it vanished (a comment) */
        }
        TOPOMAP_I_END_LINE();
    }
    return;
irregular:
    r->rc = TOPOMAP_EINVAL;
    r->bad = (int64_t)(line_at - base);
}

static void topomap_i_scan_chunk(const topomap_scan *s, int c, const topomap_i_sink *k, topomap_i_chunk *r)
{
    if (k->mode == TOPOMAP_I_MODE_INT)
        topomap_i_scan_chunk_as(s, c, k, r, TOPOMAP_I_MODE_INT);
    else if (k->mode == TOPOMAP_I_MODE_AUTO)
        topomap_i_scan_chunk_as(s, c, k, r, TOPOMAP_I_MODE_AUTO);
    else if (k->mode == TOPOMAP_I_MODE_NONZERO)
        topomap_i_scan_chunk_as(s, c, k, r, TOPOMAP_I_MODE_NONZERO);
    else if (k->mode == TOPOMAP_I_MODE_ROWS)
        topomap_i_scan_chunk_as(s, c, k, r, TOPOMAP_I_MODE_ROWS);
    else
        topomap_i_scan_chunk_as(s, c, k, r, TOPOMAP_I_MODE_TABLE);
}

/* Run pass 2 on every chunk and merge: the first fault in text order wins. */
static int topomap_i_scan_all(const topomap_scan *s, const topomap_i_sink *k, topomap_i_chunk *r,
                              topomap_scan_info *info)
{
#pragma omp parallel for schedule(dynamic, 1) num_threads(topomap_i_threads(s->nchunks))
    for (int c = 0; c < s->nchunks; c++) topomap_i_scan_chunk(s, c, k, &r[c]);
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

int64_t topomap_scan_row_entries(const topomap_scan *s, const topomap_rows_layout *layout)
{
    int64_t rest = s->tokens[s->nchunks] - (int64_t)layout->n * (layout->head + layout->degree);
    return layout->step < 1 || rest < 0 || rest % layout->step ? -1 : rest / layout->step;
}

int topomap_scan_rows(const topomap_scan *s, const topomap_rows_layout *layout, int64_t *row_ptr, int32_t *dst,
                      double *weights, topomap_scan_info *info)
{
    topomap_i_chunk r[TOPOMAP_SCAN_MAX_CHUNKS];
    int64_t entries = topomap_scan_row_entries(s, layout);
    if (entries < 0 || layout->n < 1 || (layout->step != 1 && layout->step != 2)) {
        memset(info, 0, sizeof *info);
        info->bad_offset = 0;
        return topomap_i_fail(TOPOMAP_EINVAL, "the text cannot hold %d rows of this layout", (int)layout->n);
    }
    topomap_i_sink k = {.mode = TOPOMAP_I_MODE_ROWS, .layout = layout, .row_ptr = row_ptr, .entries = entries,
                        .dst = dst, .weights = weights};
    memset(row_ptr, 0, ((size_t)layout->n + 1) * sizeof *row_ptr); /* rows missing from the text stay empty */
    int rc = topomap_i_scan_all(s, &k, r, info);
    if (rc) return rc;
    if (s->lines[s->nchunks] < layout->n)
        return topomap_i_fail(TOPOMAP_EINVAL, "%lld lines for %d rows", (long long)s->lines[s->nchunks],
                              (int)layout->n);
    for (int32_t i = 0; i < layout->n; i++) row_ptr[i + 1] += row_ptr[i];
    return TOPOMAP_OK;
}

int topomap_scan_nonzeros(const topomap_scan *s, int64_t *line_counts, topomap_scan_entries *out,
                          topomap_scan_info *info)
{
    topomap_i_chunk r[TOPOMAP_SCAN_MAX_CHUNKS];
    topomap_i_sink k = {.mode = TOPOMAP_I_MODE_NONZERO, .counts = line_counts};
    memset(out, 0, sizeof *out);
    int rc = topomap_i_scan_all(s, &k, r, info);
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

void topomap_scan_entries_free(topomap_scan_entries *e)
{
    free(e->line);
    free(e->col);
    free(e->value);
    memset(e, 0, sizeof *e);
}

/* ------------------------------------------------------------------ record formats of per-rank files
 *
 * Open MPI pml_monitoring and DUMPI runs are one small file per rank (10^5 files are common):
 * reading and scanning them in C, on several threads, avoids per-file and per-line Python
 * work.  Both scanners accept exactly the lines the Python readers' regular expressions
 * accept (topomap/io/ompi_monitoring.py, dumpi_ascii.py) and report the first file with
 * anything else, for the Python reader to name the fault.  Files are split into one range
 * per thread, each thread keeping its own growing arrays, joined in file order. */

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

/* The whole file into v (replacing its content); 0, or -1 when it cannot be read. */
static int topomap_i_slurp(const char *path, topomap_i_vec *v)
{
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
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

/* The digits [p, q) as a double, correctly rounded (Python's float() of them). */
static double topomap_i_digits_value(const unsigned char *p, const unsigned char *q)
{
    if (q - p <= 18) {
        int64_t x = 0;
        for (; p < q; p++) x = x * 10 + (*p - '0');
        return (double)x;
    }
    char small[128], *text = q - p < (int64_t)sizeof small ? small : malloc((size_t)(q - p) + 1);
    if (!text) return NAN; /* out of memory: a value the reader refuses, so it reads again slowly */
    memcpy(text, p, (size_t)(q - p));
    text[q - p] = '\0';
    double v = strtod(text, NULL); /* digits only: no locale question; huge: inf like float() */
    if (text != small) free(text);
    return v;
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
