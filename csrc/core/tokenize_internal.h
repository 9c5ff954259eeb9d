/* Internals shared by the text scanners of the pattern readers (tokenize_*.c; the public
 * grammar is in topomap/tokenize.h): byte classes, the kinds a token can be, the 8-digit word
 * converter and the SIMD byte-class masks, which every scanner inlines. */
#ifndef TOPOMAP_TOKENIZE_INTERNAL_H
#define TOPOMAP_TOKENIZE_INTERNAL_H
#include <stdint.h>
#include "topomap/tokenize.h"

enum { TOPOMAP_I_TOKEN = 0, TOPOMAP_I_BLANK = 1, TOPOMAP_I_NEWLINE = 2, TOPOMAP_I_COMMENT = 3 };
enum { TOPOMAP_I_INT, TOPOMAP_I_FLOAT, TOPOMAP_I_BAD, TOPOMAP_I_NOTSUP };
enum { TOPOMAP_I_MODE_INT, TOPOMAP_I_MODE_AUTO, TOPOMAP_I_MODE_TABLE, TOPOMAP_I_MODE_NONZERO, TOPOMAP_I_MODE_ROWS };

typedef union {
    int64_t i;
    double d;
} topomap_i_slot;

static inline int topomap_i_is_digit(unsigned char c) { return c >= '0' && c <= '9'; }

/* The blanks a whole-line comment may follow (what the Python tier's regular expression allows). */
static inline int topomap_i_is_lead_blank(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && defined(__GNUC__)
#define TOPOMAP_I_SWAR 1
/* Value of 8 digit bytes (already minus '0'), the first the most significant: three multiplies
   instead of eight (the technique of simdjson's parse_eight_digits_unrolled). */
static inline uint64_t topomap_i_eight_digits(uint64_t x)
{
    x = x * 10 + (x >> 8);
    return (((x & 0x000000FF000000FFull) * 0x000F424000000064ull) +
            (((x >> 16) & 0x000000FF000000FFull) * 0x0000271000000001ull)) >> 32;
}

/* Value of the first nd (1..8) bytes of w, all digits, the first the most significant: the
   digits go to the top bytes, zeros (leading zero digits) below; a borrow of the subtraction
   only runs upwards from the bytes after them, which the shift drops. */
static inline uint64_t topomap_i_word_digits(uint64_t w, int nd)
{
    return topomap_i_eight_digits((w - 0x3030303030303030ull) << (64 - 8 * nd));
}

/* High bit of each byte of w that is not an ASCII digit. */
static inline uint64_t topomap_i_non_digits(uint64_t w)
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

#include <immintrin.h>
#define TOPOMAP_I_AVX2 1
/* topomap_i_masks from two 32-byte loads, for CPUs with AVX2 (chosen at run time: the build
   needs no -mavx2; callers are compiled for AVX2 too, so that this inlines). */
__attribute__((target("avx2"))) static inline void topomap_i_masks_avx2(const unsigned char *p, char comma,
                                                                       uint64_t *digit, uint64_t *blank,
                                                                       uint64_t *newline)
{
    const __m256i zero = _mm256_set1_epi8('0'), nine = _mm256_set1_epi8(9), nl = _mm256_set1_epi8('\n');
    const __m256i tab = _mm256_set1_epi8('\t'), four = _mm256_set1_epi8(4), space = _mm256_set1_epi8(' ');
    const __m256i sep = _mm256_set1_epi8(comma);
    uint64_t d = 0, b = 0, n = 0;
    for (int k = 0; k < 2; k++) {
        __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)(p + 32 * k));
        __m256i x = _mm256_sub_epi8(v, zero), y = _mm256_sub_epi8(v, tab);
        __m256i is_digit = _mm256_cmpeq_epi8(_mm256_min_epu8(x, nine), x);
        __m256i is_nl = _mm256_cmpeq_epi8(v, nl);
        __m256i is_ctl = _mm256_cmpeq_epi8(_mm256_min_epu8(y, four), y); /* '\t' .. '\r' */
        __m256i is_blank = _mm256_or_si256(_mm256_andnot_si256(is_nl, is_ctl),
                                           _mm256_or_si256(_mm256_cmpeq_epi8(v, space), _mm256_cmpeq_epi8(v, sep)));
        d |= (uint64_t)(uint32_t)_mm256_movemask_epi8(is_digit) << (32 * k);
        b |= (uint64_t)(uint32_t)_mm256_movemask_epi8(is_blank) << (32 * k);
        n |= (uint64_t)(uint32_t)_mm256_movemask_epi8(is_nl) << (32 * k);
    }
    *digit = d;
    *blank = b;
    *newline = n;
}
#endif

/* Token [tok, end) (not empty): TOPOMAP_I_INT (value in *iv), TOPOMAP_I_FLOAT (*dv),
 * TOPOMAP_I_BAD outside the grammar, TOPOMAP_I_NOTSUP a number strtod cannot convert here. */
int topomap_i_classify(const unsigned char *tok, const unsigned char *end, int64_t *iv, double *dv);

/* The digits [p, q) as a double, correctly rounded (Python's float() of them). */
double topomap_i_digits_value(const unsigned char *p, const unsigned char *q);

/* A whole-line comment starting at p (a line start)?  Then the end of its line, else NULL. */
const unsigned char *topomap_i_comment_line(const topomap_scan *s, const unsigned char *p, const unsigned char *end);

/* Threads for a parallel loop over `nchunks` chunks. */
int topomap_i_threads(int nchunks);

/* Pass 2 of one chunk, run by topomap_i_scan_text as soon as the chunk can be converted. */
typedef void (*topomap_i_convert)(const topomap_scan *s, int c, void *ctx);

/* topomap_scan_init; with `convert` (else NULL), each chunk is then converted by
   convert(s, chunk, ctx) as soon as it and every chunk before it are counted, while later
   chunks are still being read. */
void topomap_i_scan_text(topomap_scan *s, const char *buf, int64_t len, int commas, int comment,
                         int whole_line_comments, int nchunks, int max_simd, topomap_i_convert convert, void *ctx);

#endif
