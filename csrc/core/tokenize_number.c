/* Number conversion for the text scanners (grammar in topomap/tokenize.h): the general token
 * classifier every scanner falls back to, and digit runs as correctly rounded doubles.
 *
 * Choices the format descriptions leave open, made here once for every reader: integers are
 * checked for int64 overflow rather than clipped; decimals are converted with strtod after
 * the grammar check, so that hexadecimal floats and "nan(...)" forms are rejected like the
 * Python tier rejects them.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "tokenize_internal.h"

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

/* A decimal of the grammar [p, end) (sign already read) whose digits, without the point and
 * leading zeros, are at most 15 (an integer m below 2^53) and whose value is m * 10^e with
 * |e| <= 22 (a power of ten that is exact in a double): then one multiplication or division
 * of two exact doubles, which IEEE arithmetic rounds correctly -- the value strtod gives, at a
 * fraction of its cost (Clinger's fast path).  Returns 0 for any other number (strtod then). */
static int topomap_i_simple_decimal(const unsigned char *p, const unsigned char *end, int negative, double *dv)
{
#if FLT_EVAL_METHOD == 0
    static const double pow10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                     1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    uint64_t m = 0;
    int digits = 0, e = 0;
    for (; p < end && topomap_i_is_digit(*p); p++)
        if (m || *p != '0') m = m * 10 + (uint64_t)(*p - '0'), digits++; /* leading zeros count for nothing */
    if (p < end && *p == '.')
        for (p++; p < end && topomap_i_is_digit(*p); p++, e--)
            if (m || *p != '0') m = m * 10 + (uint64_t)(*p - '0'), digits++;
    if (digits > 15) return 0; /* m may have wrapped: only the count is trusted here */
    if (p < end) { /* 'e' or 'E', then [+-]?[0-9]+ (the grammar was checked) */
        int exp_negative = *++p == '-', x = 0;
        if (*p == '+' || *p == '-') p++;
        if (end - p > 3) return 0;
        for (; p < end; p++) x = x * 10 + (*p - '0');
        e += exp_negative ? -x : x;
    }
    if (e < -22 || e > 22) return 0;
    double v = e < 0 ? (double)m / pow10[-e] : (double)m * pow10[e];
    *dv = negative ? -v : v;
    return 1;
#else
    (void)p, (void)end, (void)negative, (void)dv;
    return 0; /* double arithmetic in wider registers: not the rounding the fast path relies on */
#endif
}

/* Token [tok, end) (not empty): an int64 integer, another number, outside the grammar, or a
 * number strtod cannot convert here. */
int topomap_i_classify(const unsigned char *tok, const unsigned char *end, int64_t *iv, double *dv)
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
    if (topomap_i_simple_decimal(p, end, negative, dv)) return TOPOMAP_I_FLOAT;
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

/* The digits [p, q) as a double, correctly rounded (Python's float() of them). */
double topomap_i_digits_value(const unsigned char *p, const unsigned char *q)
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
