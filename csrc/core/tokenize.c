/* Whole-buffer number parsing for the pattern file readers (grammar in topomap/tokenize.h).
 *
 * Why in C: the readers of 10^8-byte pattern files spend their time splitting and
 * converting numbers; NumPy's text parser costs 40-150 ns per token, this loop a
 * few ns per byte.  Choices the format descriptions leave open, made here once for
 * every reader: ASCII whitespace as separators (what Python's bytes.split() uses),
 * integers checked for int64 overflow rather than clipped, decimals converted
 * with strtod after the grammar check so that hexadecimal floats and
 * "nan(...)" forms are rejected like the Python tier rejects them.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "topomap/error.h"
#include "topomap/tokenize.h"

/* Byte classes: 0 part of a token, 1 blank, 2 newline, 3 comma (blank when commas are separators). */
static const unsigned char topomap_i_class[256] = {
    [' '] = 1, ['\t'] = 1, ['\v'] = 1, ['\f'] = 1, ['\r'] = 1, ['\n'] = 2, [','] = 3,
};

static int topomap_i_is_blank(unsigned char c, int commas)
{
    unsigned char k = topomap_i_class[c];
    return k == 1 || (k == 3 && commas);
}

static int topomap_i_is_digit(unsigned char c) { return c >= '0' && c <= '9'; }

void topomap_count_tokens(const char *buf, int64_t len, int commas, int64_t *tokens, int64_t *lines)
{
    const unsigned char *p = (const unsigned char *)buf, *end = p + len;
    int64_t nt = 0, nl = 0;
    int in_token = 0;
    for (; p < end; p++) {
        unsigned char c = *p;
        if (c == '\n') {
            nl++;
            in_token = 0;
        } else if (topomap_i_is_blank(c, commas)) {
            in_token = 0;
        } else if (!in_token) {
            in_token = 1;
            nt++;
        }
    }
    if (len > 0 && buf[len - 1] != '\n') nl++;
    *tokens = nt;
    *lines = nl;
}

/* Integer magnitude of the digits [p, end); -1 when it exceeds `limit`. */
static int64_t topomap_i_digits(const unsigned char *p, const unsigned char *end, uint64_t limit)
{
    uint64_t v = 0;
    if (end - p <= 18) { /* below 10^18 < 2^63 - 1: no overflow check needed (the common case) */
        for (; p < end; p++) v = v * 10 + (uint64_t)(*p - '0');
        return (int64_t)v;
    }
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

/* Token [tok, end) as an integer or a double; 0, TOPOMAP_EINVAL or TOPOMAP_ENOTSUP. */
static int topomap_i_convert(const unsigned char *tok, const unsigned char *end, int integer, int64_t *iv,
                             double *dv)
{
    const unsigned char *p = tok;
    int negative = 0;
    if (*p == '+' || *p == '-') negative = *p++ == '-';
    if (p == end) return TOPOMAP_EINVAL;
    int all_digits = 1;
    for (const unsigned char *q = p; q < end; q++)
        if (!topomap_i_is_digit(*q)) {
            all_digits = 0;
            break;
        }
    if (all_digits) {
        /* |value| < 2^63 - 1 when positive, <= 2^63 - 1 when negative (strict int64 bounds) */
        int64_t mag = topomap_i_digits(p, end, negative ? (uint64_t)INT64_MAX : (uint64_t)INT64_MAX - 1);
        if (mag >= 0 && (integer || mag < ((int64_t)1 << 53))) {
            if (integer)
                *iv = negative ? -mag : mag;
            else
                *dv = negative ? -(double)mag : (double)mag;
            return 0;
        }
        if (integer) return TOPOMAP_EINVAL;
    } else if (integer) {
        return TOPOMAP_EINVAL;
    }
    if (topomap_i_word(p, end, "inf") || topomap_i_word(p, end, "infinity")) {
        *dv = negative ? -INFINITY : INFINITY;
        return 0;
    }
    if (topomap_i_word(p, end, "nan")) {
        *dv = NAN;
        return 0;
    }
    if (!all_digits && !topomap_i_is_decimal(p, end)) return TOPOMAP_EINVAL;
    char text[128];
    size_t n = (size_t)(end - tok);
    if (n >= sizeof text) return TOPOMAP_ENOTSUP;
    memcpy(text, tok, n);
    text[n] = '\0';
    char *stop;
    double v = strtod(text, &stop); /* out of range: +-inf or 0, as Python's float() gives */
    if (stop != text + n) return TOPOMAP_ENOTSUP; /* a locale whose decimal point is not '.' */
    *dv = v;
    return 0;
}

int topomap_parse_numbers(const char *buf, int64_t len, int integer, int commas, void *values,
                          int64_t *line_counts, int64_t *bad_offset)
{
    const unsigned char *start = (const unsigned char *)buf, *p = start, *end = start + len;
    int64_t *iv = integer ? (int64_t *)values : NULL;
    double *dv = integer ? NULL : (double *)values;
    int64_t nv = 0, line = 0, in_line = 0;
    int rc = 0;
    *bad_offset = -1;
    while (p < end) {
        unsigned char c = *p;
        if (c == '\n') {
            line_counts[line++] = in_line;
            in_line = 0;
            p++;
            continue;
        }
        if (topomap_i_is_blank(c, commas)) {
            p++;
            continue;
        }
        const unsigned char *tok = p;
        while (p < end && *p != '\n' && !topomap_i_is_blank(*p, commas)) p++;
        rc = topomap_i_convert(tok, p, integer, iv ? iv + nv : NULL, dv ? dv + nv : NULL);
        if (rc) {
            *bad_offset = (int64_t)(tok - start);
            rc = rc == TOPOMAP_ENOTSUP ? topomap_i_fail(rc, "number at byte %lld needs another converter",
                                                        (long long)*bad_offset)
                                       : topomap_i_fail(rc, "token at byte %lld is not a number",
                                                        (long long)*bad_offset);
            goto cleanup;
        }
        nv++;
        in_line++;
    }
    if (len > 0 && buf[len - 1] != '\n') line_counts[line++] = in_line;
cleanup:
    return rc;
}
