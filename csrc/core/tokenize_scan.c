/* Pass 1 of the text scanners (topomap/tokenize.h): a buffer split into chunks of whole lines,
 * and the tokens and lines of each counted, on several threads.
 *
 * Chunks are whole lines, so each thread of pass 2 starts in a known state; threading never
 * changes a result.  Counting needs no conversion and reads 64 bytes at a time (SSE2; on CPUs
 * with AVX2 compiled again with the popcnt instruction, chosen at run time).
 *
 * Pass 1 is the first to touch the text, which is usually a memory map of a file not yet in
 * the page cache.  Taking its pages by faults (each a small synchronous readahead, and two
 * threads faulting in two places defeat the kernel's sequential readahead) read 10^8 bytes
 * cold in 110-140 ms where cat takes 45; so one thread has the chunks' pages read and mapped
 * in text order, a chunk per call (MADV_POPULATE_READ, at cat's speed), and hands each
 * chunk to the other threads to count while it reads the next.  A one-call scan
 * (topomap_i_scan_text with a converter) also converts each chunk as soon as it and the
 * chunks before it are counted, so that conversion overlaps the reading.  On a kernel without
 * MADV_POPULATE_READ (before Linux 5.14), or for memory that is not a mapping, the call fails
 * or does nothing and the pages come by faults.
 */
#define _DEFAULT_SOURCE /* madvise */
#include <omp.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "tokenize_internal.h"

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22 /* Linux 5.14 */
#endif

/* Have the pages of [p, end) read and mapped now; failure only means they come by faults. */
static void topomap_i_populate(const unsigned char *p, const unsigned char *end)
{
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), lo = (uintptr_t)p & ~(page - 1);
    if (end > p) (void)madvise((void *)lo, (size_t)((uintptr_t)end - lo), MADV_POPULATE_READ);
}

/* Tokens and newlines of a chunk without comment markers: a token starts where a separator
 * is followed by a token byte (the chunk starts a line).  Branch-free, over blocks short
 * enough for 8-bit counters, so that the compiler vectorises it with byte lanes. */
static unsigned topomap_i_sep(unsigned char c, unsigned char comma)
{
    return (c == ' ') | ((unsigned char)(c - 9) < 5) | (c == comma);
}

/* Also whether the chunk holds the byte `mark` (the comment marker; the counts are then
   those of a text without comments, and the caller counts again): the same loads, so a chunk
   is read once to count it and to learn whether it holds comments. */
static inline __attribute__((always_inline)) int topomap_i_count_plain_with(const unsigned char *p, int64_t n,
                                                                           unsigned char comma, unsigned char mark,
                                                                           int simd, int64_t *tokens,
                                                                           int64_t *newlines)
{
    int64_t nt = 0, nl = 0, at = 1;
    unsigned marked = 0;
    if (n > 0) {
        nt = !topomap_i_sep(p[0], comma);
        nl = p[0] == '\n';
        marked = p[0] == mark;
    }
#ifdef TOPOMAP_I_SSE2
    /* 64 bytes at a time: token starts are token bytes after a separator */
    const __m128i cv = _mm_set1_epi8((char)comma), space = _mm_set1_epi8(' '), tab = _mm_set1_epi8('\t');
    const __m128i four = _mm_set1_epi8(4), newline = _mm_set1_epi8('\n'), mv = _mm_set1_epi8((char)mark);
    uint64_t prev_token = topomap_i_sep(p[0], comma) ^ 1u; /* the byte before the block is a token byte */
    __m128i marks = _mm_setzero_si128();
    for (; simd != TOPOMAP_SCAN_SIMD_NONE && at + 64 <= n; at += 64) {
        uint64_t sep = 0, nls = 0;
        for (int k = 0; k < 4; k++) {
            __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + at + 16 * k)), y = _mm_sub_epi8(v, tab);
            __m128i is_sep = _mm_or_si128(_mm_cmpeq_epi8(_mm_min_epu8(y, four), y),
                                          _mm_or_si128(_mm_cmpeq_epi8(v, space), _mm_cmpeq_epi8(v, cv)));
            sep |= (uint64_t)(unsigned)_mm_movemask_epi8(is_sep) << (16 * k);
            nls |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, newline)) << (16 * k);
            marks = _mm_or_si128(marks, _mm_cmpeq_epi8(v, mv));
        }
        uint64_t token_bytes = ~sep;
        nt += __builtin_popcountll(token_bytes & ~((token_bytes << 1) | prev_token));
        nl += __builtin_popcountll(nls);
        prev_token = token_bytes >> 63;
    }
    marked |= _mm_movemask_epi8(marks) != 0;
#endif
    for (; at < n; at += 255) {
        int64_t stop = at + 255 < n ? at + 255 : n;
        unsigned char bt = 0, bl = 0;
        for (int64_t i = at; i < stop; i++) {
            bt += (unsigned char)(topomap_i_sep(p[i - 1], comma) & (topomap_i_sep(p[i], comma) ^ 1u));
            bl += (unsigned char)(p[i] == '\n');
            marked |= p[i] == mark;
        }
        nt += bt;
        nl += bl;
    }
    *tokens = nt;
    *newlines = nl;
    return marked != 0;
}

/* The counting loop for CPUs without and with AVX2: the second has the popcnt instruction (two
   per 64-byte block; without it each is a call into libgcc, half the cost of this pass). */
static int topomap_i_count_plain(const unsigned char *p, int64_t n, unsigned char comma, unsigned char mark, int simd,
                                 int64_t *tokens, int64_t *newlines)
{
    return topomap_i_count_plain_with(p, n, comma, mark, simd, tokens, newlines);
}

#ifdef TOPOMAP_I_AVX2
__attribute__((target("avx2,popcnt"))) static int topomap_i_count_plain_avx2(const unsigned char *p, int64_t n,
                                                                          unsigned char comma, unsigned char mark,
                                                                          int64_t *tokens, int64_t *newlines)
{
    return topomap_i_count_plain_with(p, n, comma, mark, TOPOMAP_SCAN_SIMD_AVX2, tokens, newlines);
}
#endif

/* A whole-line comment starting at p (a line start)?  Then the end of its line, else NULL. */
const unsigned char *topomap_i_comment_line(const topomap_scan *s, const unsigned char *p, const unsigned char *end)
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

int topomap_i_threads(int nchunks)
{
    int t = omp_get_max_threads();
    return t < nchunks ? t : nchunks;
}

/* Everything of topomap_scan_init before the text is split: byte classes, vector
   instructions, the number of chunks (returned) and whether a last line without '\n' counts
   (its bytes are the text's last ones: reading them first costs one page). */
static int topomap_i_setup(topomap_scan *s, const char *buf, int64_t len, int commas, int comment,
                           int whole_line_comments, int nchunks, int max_simd)
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
#if defined(TOPOMAP_I_AVX2)
    __builtin_cpu_init();
    s->simd = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt") ? TOPOMAP_SCAN_SIMD_AVX2
                                                                                  : TOPOMAP_SCAN_SIMD_SSE2;
#elif defined(TOPOMAP_I_SSE2)
    s->simd = TOPOMAP_SCAN_SIMD_SSE2;
#endif
    if (s->simd > max_simd) s->simd = max_simd < TOPOMAP_SCAN_SIMD_NONE ? TOPOMAP_SCAN_SIMD_NONE : max_simd;
    if (nchunks < 1) {
        /* a few chunks per thread balance uneven lines and busy cores; a chunk of less than
           1 MiB is not worth a thread's start */
        int64_t most = 4 * (int64_t)omp_get_max_threads(), by_size = len >> 20;
        nchunks = (int)(by_size < most ? by_size : most);
    }
    if (nchunks < 1) nchunks = 1;
    if (nchunks > TOPOMAP_SCAN_MAX_CHUNKS) nchunks = TOPOMAP_SCAN_MAX_CHUNKS;
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
    return nchunks;
}

/* Count the tokens and lines of chunk [p, end), noting whether it holds comment markers. */
static void topomap_i_count_chunk(topomap_scan *s, int chunk, const unsigned char *p, const unsigned char *end,
                                  int64_t *tokens, int64_t *newlines)
{
    unsigned char comma = s->cls[','] == TOPOMAP_I_BLANK ? ',' : ' ';
    /* without a marker, look for a separator: finding one means nothing */
    unsigned char mark = s->comment >= 0 ? (unsigned char)s->comment : comma;
    int marked;
#ifdef TOPOMAP_I_AVX2
    if (s->simd == TOPOMAP_SCAN_SIMD_AVX2)
        marked = topomap_i_count_plain_avx2(p, end - p, comma, mark, tokens, newlines);
    else
#endif
        marked = topomap_i_count_plain(p, end - p, comma, mark, s->simd, tokens, newlines);
    s->has_comment[chunk] = s->comment >= 0 && marked;
    if (s->has_comment[chunk]) topomap_i_count_comments(s, p, end, tokens, newlines);
}

/* The tokens and lines before chunk + 1, from those before chunk and its counts. */
static void topomap_i_prefix(topomap_scan *s, int chunk, const int64_t counts[2])
{
    s->tokens[chunk + 1] = s->tokens[chunk] + counts[0];
    s->lines[chunk + 1] = s->lines[chunk] + counts[1] + (s->start[chunk + 1] == s->len ? s->last_line : 0);
}

/* Split the text into chunks of whole lines and count them: one thread reads the text in
   order, ends each chunk just after a newline (empty chunks are dropped) and hands it to the
   others to count while it reads the next.  The first counting task to find the chunks before
   it counted takes their prefix sums in order (task dependences would do, but leak in gcc 12's
   libgomp) and, with `convert`, hands them on to convert(s, chunk, ctx) while the reading
   thread goes on: one more thread then runs, as that one mostly waits for the storage. */
void topomap_i_scan_text(topomap_scan *s, const char *buf, int64_t len, int commas, int comment,
                         int whole_line_comments, int nchunks, int max_simd, topomap_i_convert convert, void *ctx)
{
    nchunks = topomap_i_setup(s, buf, len, commas, comment, whole_line_comments, nchunks, max_simd);
    const unsigned char *base = (const unsigned char *)buf;
    int64_t counts[TOPOMAP_SCAN_MAX_CHUNKS][2] = {{0}};
    char counted[TOPOMAP_SCAN_MAX_CHUNKS] = {0};
    int threads = topomap_i_threads(nchunks), front = 0; /* chunks before `front` have their prefix sums */
    if (convert && threads > 1) threads++;
    int k = 0; /* chunks made */
#pragma omp parallel num_threads(threads)
#pragma omp single
    {
        for (int c = 1; c <= nchunks; c++) {
            int64_t pos = c < nchunks ? len / nchunks * c : len, at = len;
            if (pos <= s->start[k]) continue;
            topomap_i_populate(base + s->start[k], base + pos);
            if (c < nchunks) {
                const unsigned char *nl = memchr(base + pos - 1, '\n', (size_t)(len - pos + 1));
                at = nl ? (int64_t)(nl - base) + 1 : len;
                if (at <= s->start[k]) continue;
            }
            const unsigned char *p = base + s->start[k], *end = base + at;
            int chunk = k++;
            s->start[k] = at;
#pragma omp task firstprivate(chunk, p, end)
            {
                topomap_i_count_chunk(s, chunk, p, end, &counts[chunk][0], &counts[chunk][1]);
                int from, to;
#pragma omp critical(topomap_i_front)
                {
                    counted[chunk] = 1;
                    for (from = front; front < TOPOMAP_SCAN_MAX_CHUNKS && counted[front]; front++)
                        topomap_i_prefix(s, front, counts[front]);
                    to = front;
                }
                for (int ready = from; convert && ready < to; ready++) {
#pragma omp task firstprivate(ready)
                    convert(s, ready, ctx);
                }
            }
            if (at == len) break;
        }
        if (k == 0) { /* an empty text: one empty chunk, no token, no line */
            s->start[++k] = len;
            if (convert) convert(s, 0, ctx);
        }
    }
    s->nchunks = k;
}

void topomap_scan_init(topomap_scan *s, const char *buf, int64_t len, int commas, int comment,
                       int whole_line_comments, int nchunks, int max_simd)
{
    topomap_i_scan_text(s, buf, len, commas, comment, whole_line_comments, nchunks, max_simd, NULL, NULL);
}
