/* The number tokenizer of the pattern readers (csrc/core/tokenize_*.c): grammar, line counts,
   int64 bounds, decimal conversion, the offset of the first bad token, comments, tables,
   non-zero entries, and results independent of the number of chunks. */
#include <math.h>
#include <stdint.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "check.h"
#include "topomap/error.h"
#include "topomap/tokenize.h"

/* Parse `text` in `chunks` chunks; values and counts go to the caller's buffers (at most 16 each). */
static int parse_in(const char *text, int integer, int commas, int chunks, void *values, int64_t counts[16],
                    int64_t *ntok, int64_t *nlines, int64_t *bad)
{
    topomap_scan s;
    topomap_scan_info info;
    topomap_scan_init(&s, text, (int64_t)strlen(text), commas, -1, 0, chunks, TOPOMAP_SCAN_SIMD_AVX2);
    *ntok = s.tokens[s.nchunks];
    *nlines = s.lines[s.nchunks];
    int rc = topomap_scan_numbers(&s, integer, values, counts, &info);
    *bad = info.bad_offset;
    return rc;
}

static int parse(const char *text, int integer, int commas, void *values, int64_t counts[16], int64_t *ntok,
                 int64_t *nlines, int64_t *bad)
{
    return parse_in(text, integer, commas, 1, values, counts, ntok, nlines, bad);
}

static void test_integers_and_lines(void)
{
    int64_t v[16], c[16], nt, nl, bad;
    CHECK(parse("1 -2\t+3\n\n 40\r\n", 1, 0, v, c, &nt, &nl, &bad) == 0);
    CHECK(nt == 4 && nl == 3);
    CHECK(v[0] == 1 && v[1] == -2 && v[2] == 3 && v[3] == 40);
    CHECK(c[0] == 3 && c[1] == 0 && c[2] == 1);
    CHECK(parse("7 8", 1, 0, v, c, &nt, &nl, &bad) == 0); /* a last line without newline counts */
    CHECK(nt == 2 && nl == 1 && c[0] == 2);
    CHECK(parse("", 1, 0, v, c, &nt, &nl, &bad) == 0 && nt == 0 && nl == 0);
    CHECK(parse("1,2, 3\n", 1, 1, v, c, &nt, &nl, &bad) == 0 && nt == 3 && v[2] == 3 && c[0] == 3);
    /* digit runs of every length around the 8-byte block conversion */
    CHECK(parse("12 123456 1234567 12345678 123456789 1234567890123 123456789012345678\n", 1, 0, v, c, &nt, &nl,
                &bad) == 0);
    CHECK(v[0] == 12 && v[1] == 123456 && v[2] == 1234567 && v[3] == 12345678 && v[4] == 123456789 &&
          v[5] == 1234567890123LL && v[6] == 123456789012345678LL);
    CHECK(parse("00000042 0000000000000000000007\n", 1, 0, v, c, &nt, &nl, &bad) == 0 && v[0] == 42 && v[1] == 7);
}

static void test_int64_bounds(void)
{
    int64_t v[16], c[16], nt, nl, bad;
    CHECK(parse("9223372036854775806 -9223372036854775807\n", 1, 0, v, c, &nt, &nl, &bad) == 0);
    CHECK(v[0] == INT64_MAX - 1 && v[1] == -INT64_MAX);
    CHECK(parse("1 9223372036854775807\n", 1, 0, v, c, &nt, &nl, &bad) == TOPOMAP_EINVAL && bad == 2);
    CHECK(parse("-9223372036854775808\n", 1, 0, v, c, &nt, &nl, &bad) == TOPOMAP_EINVAL && bad == 0);
    CHECK(parse("99999999999999999999999\n", 1, 0, v, c, &nt, &nl, &bad) == TOPOMAP_EINVAL);
}

static void test_bad_tokens(void)
{
    int64_t v[16], c[16], nt, nl, bad;
    const char *bad_ints[] = {"1.5", "1e3", "x", "+", "-", "1,2", "0x10", "--1", "1-2", "nan", "12345678x"};
    for (size_t i = 0; i < sizeof bad_ints / sizeof *bad_ints; i++) {
        char text[64];
        snprintf(text, sizeof text, "5\n 6 %s 7\n", bad_ints[i]);
        CHECK(parse(text, 1, 0, v, c, &nt, &nl, &bad) == TOPOMAP_EINVAL && bad == 5);
        CHECK(strstr(topomap_last_error(), "byte 5") != NULL);
    }
    double d[16];
    const char *bad_numbers[] = {"x", ".", "1e", "1.2.3", "0x1p3", "nan(1)", "1_0", "e5", "infx", "+-1"};
    for (size_t i = 0; i < sizeof bad_numbers / sizeof *bad_numbers; i++) {
        char text[64];
        snprintf(text, sizeof text, "1 %s\n", bad_numbers[i]);
        CHECK(parse(text, 0, 0, d, c, &nt, &nl, &bad) == TOPOMAP_EINVAL && bad == 2);
    }
}

static void test_decimals(void)
{
    double d[16];
    int64_t c[16], nt, nl, bad;
    CHECK(parse("1.5 -2e3 .5 5. 0.1 1e400 -INF Infinity nan 9007199254740993\n", 0, 0, d, c, &nt, &nl, &bad) == 0);
    CHECK(nt == 10 && c[0] == 10);
    CHECK(d[0] == 1.5 && d[1] == -2000.0 && d[2] == 0.5 && d[3] == 5.0 && d[4] == 0.1);
    CHECK(isinf(d[5]) && d[5] > 0 && isinf(d[6]) && d[6] < 0 && isinf(d[7]) && isnan(d[8]));
    CHECK(d[9] == 9007199254740992.0); /* 2^53 + 1 rounds to even, as Python's float() */
    char text[200];
    memset(text, '3', 150);
    text[0] = '0';
    text[1] = '.';
    text[150] = '\0';
    CHECK(parse(text, 0, 0, d, c, &nt, &nl, &bad) == TOPOMAP_ENOTSUP && bad == 0);
}

/* Integers stay int64 until a float appears anywhere; then every value is a double, "-0" -0.0. */
static void test_auto_type(void)
{
    union {
        int64_t i[16];
        double d[16];
    } v;
    int64_t c[16], nt, nl, bad;
    topomap_scan s;
    topomap_scan_info info;
    const char *ints = "3 -0 99999999999\n7\n";
    topomap_scan_init(&s, ints, (int64_t)strlen(ints), 0, -1, 0, 2, TOPOMAP_SCAN_SIMD_AVX2);
    CHECK(topomap_scan_numbers(&s, 0, v.i, c, &info) == 0 && !info.is_float);
    CHECK(v.i[0] == 3 && v.i[1] == 0 && v.i[2] == 99999999999LL && v.i[3] == 7);
    const char *mixed = "3 -0 99999999999\n7\n2.5 -0\n";
    for (int chunks = 1; chunks <= 3; chunks++) {
        topomap_scan_init(&s, mixed, (int64_t)strlen(mixed), 0, -1, 0, chunks, TOPOMAP_SCAN_SIMD_AVX2);
        CHECK(topomap_scan_numbers(&s, 0, v.d, c, &info) == 0 && info.is_float);
        CHECK(v.d[0] == 3.0 && v.d[1] == 0.0 && signbit(v.d[1]) && v.d[2] == 99999999999.0 && v.d[3] == 7.0);
        CHECK(v.d[4] == 2.5 && signbit(v.d[5]));
    }
    /* an integer beyond int64 makes the block float, as Python's float() reads it */
    CHECK(parse("1 12345678901234567890\n", 0, 0, v.d, c, &nt, &nl, &bad) == 0 && v.d[0] == 1.0 &&
          v.d[1] == 12345678901234567890.0);
}

/* Comments: marker to end of line, or whole lines; line counts as the Python tier's. */
static void test_comments(void)
{
    int64_t v[16], c[16];
    topomap_scan s;
    topomap_scan_info info;
    const char *hash = "1 2 # 3\n# 4\n5#6\n  # 7";
    topomap_scan_init(&s, hash, (int64_t)strlen(hash), 0, '#', 0, 1, TOPOMAP_SCAN_SIMD_AVX2);
    CHECK(s.tokens[s.nchunks] == 3 && s.lines[s.nchunks] == 4); /* "  " stays a line */
    CHECK(topomap_scan_numbers(&s, 1, v, c, &info) == 0);
    CHECK(v[0] == 1 && v[1] == 2 && v[2] == 5 && c[0] == 2 && c[1] == 0 && c[2] == 1 && c[3] == 0);
    const char *gone = "1\n# x"; /* a last comment line without newline leaves no line */
    topomap_scan_init(&s, gone, (int64_t)strlen(gone), 0, '#', 0, 1, TOPOMAP_SCAN_SIMD_AVX2);
    CHECK(s.lines[s.nchunks] == 1);
    const char *whole = "% c\n1 2\n \t% d\n3\n%e";
    topomap_scan_init(&s, whole, (int64_t)strlen(whole), 0, '%', 1, 1, TOPOMAP_SCAN_SIMD_AVX2);
    CHECK(s.tokens[s.nchunks] == 3 && s.lines[s.nchunks] == 4);
    CHECK(topomap_scan_numbers(&s, 1, v, c, &info) == 0 && info.comment_lines == 3);
    CHECK(c[0] == -1 && c[1] == 2 && c[2] == -1 && c[3] == 1);
    const char *inside = "1 2%\n"; /* with whole-line comments a marker inside a line is a bad token */
    topomap_scan_init(&s, inside, (int64_t)strlen(inside), 0, '%', 1, 1, TOPOMAP_SCAN_SIMD_AVX2);
    CHECK(topomap_scan_numbers(&s, 1, v, c, &info) == TOPOMAP_EINVAL && info.bad_offset == 2);
    const char *digit = "13 4\n"; /* a digit cannot mark comments */
    topomap_scan_init(&s, digit, (int64_t)strlen(digit), 0, '3', 0, 1, TOPOMAP_SCAN_SIMD_AVX2);
    CHECK(s.comment == -1 && s.tokens[s.nchunks] == 2);
}

static void test_table(void)
{
    int32_t a[4], b[4];
    double w[4];
    void *cols[3] = {a, b, w};
    int64_t rows;
    topomap_scan s;
    topomap_scan_info info;
    const char *ok = "0,1,2.5\n\n3 4 5 # c\n6,7,1e3\n";
    for (int chunks = 1; chunks <= 4; chunks++) {
        topomap_scan_init(&s, ok, (int64_t)strlen(ok), 1, '#', 0, chunks, TOPOMAP_SCAN_SIMD_AVX2);
        CHECK(topomap_scan_table(&s, 3, "nnf", cols, &rows, &info) == 0 && rows == 3);
        CHECK(a[0] == 0 && b[0] == 1 && w[0] == 2.5 && a[1] == 3 && w[1] == 5.0 && a[2] == 6 && w[2] == 1000.0);
    }
    const char *bad[] = {"0 1 2\n3 4\n", "0 1 2\n3 4 5 6\n", "0 1.0 2\n", "-1 1 2\n", "0 2147483648 1\n",
                         "0 1 x\n", "0 1 2\n3 4"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        topomap_scan_init(&s, bad[i], (int64_t)strlen(bad[i]), 0, -1, 0, 1, TOPOMAP_SCAN_SIMD_AVX2);
        CHECK(topomap_scan_table(&s, 3, "nnf", cols, &rows, &info) == TOPOMAP_EINVAL);
    }
    const char *ints = "1 2 3\n";
    topomap_scan_init(&s, ints, (int64_t)strlen(ints), 0, -1, 0, 1, TOPOMAP_SCAN_SIMD_AVX2);
    CHECK(topomap_scan_table(&s, 3, "nnd", cols, &rows, &info) == 0 && w[0] == 3.0);
    const char *frac = "1 2 3.5\n";
    topomap_scan_init(&s, frac, (int64_t)strlen(frac), 0, -1, 0, 1, TOPOMAP_SCAN_SIMD_AVX2);
    CHECK(topomap_scan_table(&s, 3, "nnd", cols, &rows, &info) == TOPOMAP_EINVAL);
}

static void test_nonzeros(void)
{
    topomap_scan s;
    topomap_scan_info info;
    topomap_scan_entries e;
    int64_t c[8];
    const char *text = "0 1.5 0\n2,0,-0\n\n0 0 nan\n";
    for (int chunks = 1; chunks <= 3; chunks++) {
        topomap_scan_init(&s, text, (int64_t)strlen(text), 1, -1, 0, chunks, TOPOMAP_SCAN_SIMD_AVX2);
        CHECK(topomap_scan_nonzeros(&s, c, &e, &info) == 0 && e.count == 3);
        CHECK(e.line[0] == 0 && e.col[0] == 1 && e.value[0] == 1.5);
        CHECK(e.line[1] == 1 && e.col[1] == 0 && e.value[1] == 2.0);
        CHECK(e.line[2] == 3 && e.col[2] == 2 && isnan(e.value[2]));
        CHECK(c[0] == 3 && c[1] == 3 && c[2] == 0 && c[3] == 3);
        topomap_scan_entries_free(&e);
    }
    const char *bad = "0 1\n0 y\n";
    topomap_scan_init(&s, bad, (int64_t)strlen(bad), 0, -1, 0, 2, TOPOMAP_SCAN_SIMD_AVX2);
    CHECK(topomap_scan_nonzeros(&s, NULL, &e, &info) == TOPOMAP_EINVAL && info.bad_offset == 6 && e.count == 0);
    topomap_scan_entries_free(&e);
}

/* Many chunks give the values, counts and first fault of one chunk. */
static void test_chunks_agree(void)
{
    char text[4096];
    size_t len = 0;
    uint64_t x = 12345;
    for (int i = 0; i < 300 && len < sizeof text - 64; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        len += (size_t)snprintf(text + len, sizeof text - len, (x >> 60) % 3 ? "%llu " : "%llu\n",
                                (unsigned long long)(x >> 33) % 100000000ULL);
    }
    int64_t v1[400], v2[400], c1[400], c2[400];
    for (int chunks = 2; chunks <= 64; chunks *= 2) {
        topomap_scan s1, s2;
        topomap_scan_info i1, i2;
        topomap_scan_init(&s1, text, (int64_t)len, 0, -1, 0, 1, TOPOMAP_SCAN_SIMD_AVX2);
        topomap_scan_init(&s2, text, (int64_t)len, 0, -1, 0, chunks, TOPOMAP_SCAN_SIMD_AVX2);
        CHECK(s1.tokens[s1.nchunks] == s2.tokens[s2.nchunks] && s1.lines[s1.nchunks] == s2.lines[s2.nchunks]);
        CHECK(topomap_scan_numbers(&s1, 1, v1, c1, &i1) == 0 && topomap_scan_numbers(&s2, 1, v2, c2, &i2) == 0);
        CHECK(memcmp(v1, v2, (size_t)s1.tokens[s1.nchunks] * 8) == 0);
        CHECK(memcmp(c1, c2, (size_t)s1.lines[s1.nchunks] * 8) == 0);
        CHECK(i1.filled_lines == i2.filled_lines && i1.max_width == i2.max_width && i1.min_width == i2.min_width);
    }
    text[len / 2] = 'q'; /* the first fault, whichever chunk holds it */
    text[len - 3] = 'q';
    for (int chunks = 1; chunks <= 16; chunks++) {
        topomap_scan s;
        topomap_scan_info info;
        topomap_scan_init(&s, text, (int64_t)len, 0, -1, 0, chunks, TOPOMAP_SCAN_SIMD_AVX2);
        CHECK(topomap_scan_numbers(&s, 1, v1, c1, &info) == TOPOMAP_EINVAL);
        CHECK(info.bad_offset <= (int64_t)len / 2 && info.bad_offset > (int64_t)len / 2 - 10);
    }
}

/* A random text of unsigned integers: lines of 0..max_tokens numbers of 1..max_digits digits
   with blanks (commas) between; `plus` writes '+' before every number, which sends every line
   to the byte lane while the numbers stay the same. */
static size_t random_text(char *out, size_t room, uint64_t seed, int lines, int max_tokens, int max_digits,
                          int plus, int commas)
{
    size_t len = 0;
    uint64_t x = seed;
    for (int l = 0; l < lines && len + 64 * (size_t)max_tokens < room; l++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        int ntok = (int)((x >> 33) % (uint64_t)(max_tokens + 1));
        for (int k = 0; k < ntok; k++) {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            int digits = 1 + (int)((x >> 40) % (uint64_t)max_digits);
            if (k) out[len++] = commas && (x >> 20) % 2 ? ',' : " \t"[(x >> 21) % 2];
            if (plus) out[len++] = '+';
            for (int d = 0; d < digits; d++) {
                x = x * 6364136223846793005ULL + 1442695040888963407ULL;
                out[len++] = (char)('0' + (x >> 59) % 10);
            }
        }
        if ((x >> 30) % 7 == 0) out[len++] = ' ';
        out[len++] = '\n';
    }
    return len;
}

/* The block lane (lines of plain unsigned integers) gives what the byte lane gives, in every
   mode, for lines shorter and longer than a block and numbers of every length. */
static void test_block_lane_agrees(void)
{
    enum { ROOM = 1 << 17 };
    char *a = malloc(ROOM), *b = malloc(ROOM);
    int64_t *va = malloc(ROOM * 8), *vb = malloc(ROOM * 8), *ca = malloc(ROOM * 8), *cb = malloc(ROOM * 8);
    const int shapes[][2] = {{4, 8}, {40, 3}, {200, 2}, {6, 25}};
    for (int shape = 0; shape < 4; shape++)
        for (int commas = 0; commas < 2; commas++) {
            int lines = 1500 / (1 + shapes[shape][0] / 8);
            size_t la = random_text(a, ROOM, 7 + (uint64_t)shape, lines, shapes[shape][0], shapes[shape][1], 0, commas);
            size_t lb = random_text(b, ROOM, 7 + (uint64_t)shape, lines, shapes[shape][0], shapes[shape][1], 1, commas);
            for (int integer = 0; integer < 2; integer++)
                for (int chunks = 1; chunks <= 5; chunks += 4) {
                    topomap_scan sa, sb;
                    topomap_scan_info ia, ib;
                    topomap_scan_init(&sa, a, (int64_t)la, commas, -1, 0, chunks, TOPOMAP_SCAN_SIMD_AVX2);
                    topomap_scan_init(&sb, b, (int64_t)lb, commas, -1, 0, chunks, TOPOMAP_SCAN_SIMD_AVX2);
                    CHECK(sa.tokens[sa.nchunks] == sb.tokens[sb.nchunks] && sa.lines[sa.nchunks] == sb.lines[sb.nchunks]);
                    int ra = topomap_scan_numbers(&sa, integer, va, ca, &ia), rb = topomap_scan_numbers(&sb, integer, vb, cb, &ib);
                    CHECK(ra == rb); /* 19 or more digits: not an int64 (integer) or a float */
                    if (ra || rb) continue;
                    CHECK(ia.is_float == ib.is_float && ia.filled_lines == ib.filled_lines && ia.max_width == ib.max_width);
                    CHECK(memcmp(va, vb, (size_t)sa.tokens[sa.nchunks] * 8) == 0);
                    CHECK(memcmp(ca, cb, (size_t)sa.lines[sa.nchunks] * 8) == 0);
                    topomap_scan_entries ea, eb;
                    CHECK(topomap_scan_nonzeros(&sa, NULL, &ea, &ia) == 0 && topomap_scan_nonzeros(&sb, NULL, &eb, &ib) == 0);
                    CHECK(ea.count == eb.count && memcmp(ea.value, eb.value, (size_t)ea.count * 8) == 0 &&
                          memcmp(ea.col, eb.col, (size_t)ea.count * 8) == 0);
                    topomap_scan_entries_free(&ea);
                    topomap_scan_entries_free(&eb);
                }
        }
    /* tables and rows: every line of the same width, ids in range */
    size_t la = 0, lb = 0;
    for (int l = 0; l < 3000; l++) {
        la += (size_t)snprintf(a + la, ROOM - la, "%d,%d,%d\n", l % 97, (l * 7) % 101, l * 12345 % 99999989);
        lb += (size_t)snprintf(b + lb, ROOM - lb, "+%d,+%d,+%d\n", l % 97, (l * 7) % 101, l * 12345 % 99999989);
    }
    int32_t *s1 = malloc(3000 * 4), *d1 = malloc(3000 * 4), *s2 = malloc(3000 * 4), *d2 = malloc(3000 * 4);
    double *w1 = malloc(3000 * 8), *w2 = malloc(3000 * 8);
    void *c1[3] = {s1, d1, w1}, *c2[3] = {s2, d2, w2};
    int64_t rows1, rows2;
    topomap_scan sa, sb;
    topomap_scan_info ia, ib;
    topomap_scan_init(&sa, a, (int64_t)la, 1, -1, 0, 3, TOPOMAP_SCAN_SIMD_AVX2);
    topomap_scan_init(&sb, b, (int64_t)lb, 1, -1, 0, 3, TOPOMAP_SCAN_SIMD_AVX2);
    CHECK(topomap_scan_table(&sa, 3, "nnf", c1, &rows1, &ia) == 0 && topomap_scan_table(&sb, 3, "nnf", c2, &rows2, &ib) == 0);
    CHECK(rows1 == 3000 && rows2 == 3000 && !memcmp(s1, s2, 3000 * 4) && !memcmp(d1, d2, 3000 * 4) &&
          !memcmp(w1, w2, 3000 * 8));
    /* rows: line i lists (i+1) % 97 and (i+2) % 97 with weights, 97 lines, 1-based */
    la = lb = 0;
    for (int l = 0; l < 97; l++)
        for (int pass = 0; pass < 2; pass++) {
            char *t = pass ? b : a;
            size_t *len = pass ? &lb : &la;
            const char *sign = pass ? "+" : "";
            for (int rep = 0; rep < 6; rep++)
                *len += (size_t)snprintf(t + *len, ROOM - *len, "%s%s%d %s%d", rep ? " " : "", sign,
                                         1 + (l + 1 + rep) % 97, sign, 1000 * l + rep);
            t[(*len)++] = '\n';
        }
    topomap_rows_layout layout = {97, 0, 0, 2, 0, 1};
    int64_t rp1[98], rp2[98];
    topomap_scan_init(&sa, a, (int64_t)la, 0, -1, 0, 2, TOPOMAP_SCAN_SIMD_AVX2);
    topomap_scan_init(&sb, b, (int64_t)lb, 0, -1, 0, 2, TOPOMAP_SCAN_SIMD_AVX2);
    CHECK(topomap_scan_rows(&sa, &layout, rp1, s1, w1, &ia) == 0 && topomap_scan_rows(&sb, &layout, rp2, s2, w2, &ib) == 0);
    CHECK(rp1[97] == 6 * 97 && !memcmp(rp1, rp2, sizeof rp1) && !memcmp(s1, s2, 6 * 97 * 4) && !memcmp(w1, w2, 6 * 97 * 8));
    CHECK(s1[0] == 1 && w1[0] == 0 && s1[6] == 2 && w1[6] == 1000);
    free(s1), free(d1), free(s2), free(d2), free(w1), free(w2);
    free(a), free(b), free(va), free(vb), free(ca), free(cb);
}

/* A fault after many plain lines, or in the middle of a long plain line, is found where the
   byte lane finds it. */
static void test_block_lane_faults(void)
{
    enum { ROOM = 1 << 15 };
    char *text = malloc(ROOM);
    int64_t *v = malloc(ROOM * 8), *c = malloc(ROOM * 8);
    size_t len = random_text(text, ROOM, 3, 400, 12, 8, 0, 0);
    for (size_t at = 100; at < len - 200; at += 997) {
        char keep = text[at];
        text[at] = 'x';
        for (int chunks = 1; chunks <= 8; chunks *= 2) {
            topomap_scan s;
            topomap_scan_info info;
            topomap_scan_init(&s, text, (int64_t)len, 0, -1, 0, chunks, TOPOMAP_SCAN_SIMD_AVX2);
            CHECK(topomap_scan_numbers(&s, 1, v, c, &info) == TOPOMAP_EINVAL);
            /* the bad token is the run of non-blanks holding 'x' */
            size_t start = at;
            while (start > 0 && text[start - 1] != ' ' && text[start - 1] != '\t' && text[start - 1] != '\n') start--;
            CHECK(info.bad_offset == (int64_t)start);
        }
        text[at] = keep;
    }
    free(text), free(v), free(c);
}

/* One number beyond int64 (a float) moved over every line of a text: whichever lane and chunk
   reads it first, the values before it stay integers converted once. */
static void test_first_float_anywhere(void)
{
    enum { LINES = 120 };
    char text[LINES * 40];
    double one[LINES * 8], many[LINES * 8];
    int64_t c1[LINES + 1], c2[LINES + 1];
    for (int at = 0; at < LINES; at++) {
        size_t len = 0;
        for (int l = 0; l < LINES; l++)
            len += (size_t)snprintf(text + len, sizeof text - len, l == at ? "%d 12 99999999999999999999 7\n"
                                                                           : "%d 12 345 6789\n", l);
        topomap_scan s;
        topomap_scan_info info;
        topomap_scan_init(&s, text, (int64_t)len, 0, -1, 0, 1, TOPOMAP_SCAN_SIMD_AVX2);
        CHECK(topomap_scan_numbers(&s, 0, one, c1, &info) == 0 && info.is_float);
        for (int chunks = 2; chunks <= 7; chunks++) {
            topomap_scan_init(&s, text, (int64_t)len, 0, -1, 0, chunks, TOPOMAP_SCAN_SIMD_AVX2);
            CHECK(topomap_scan_numbers(&s, 0, many, c2, &info) == 0);
            CHECK(memcmp(one, many, (size_t)s.tokens[s.nchunks] * sizeof *one) == 0);
        }
        CHECK(one[4 * at + 2] == 1e20 && one[4 * (LINES - 1)] == LINES - 1);
    }
}

/* A file name of this process's own (test runs may overlap): bin/tok_<stamp>_<tag>. */
static const char *own_name(char *out, size_t room, const char *tag)
{
    static int local;
    snprintf(out, room, "bin/tok_%lx_%lx_%s", (unsigned long)(uintptr_t)&local, (unsigned long)time(NULL) ^
             (unsigned long)clock(), tag);
    return out;
}

/* Write `text` to the test's own file `name` (removed by the caller). */
static void put(const char *name, const char *text)
{
    FILE *f = fopen(name, "wb");
    CHECK(f != NULL);
    if (!f) return;
    fputs(text, f);
    fclose(f);
}

static void test_monitoring_files(void)
{
    char n0[96], n1[96], n2[96];
    const char *names[3] = {own_name(n0, sizeof n0, "run.0.prof"), own_name(n1, sizeof n1, "run.1.prof"),
                            own_name(n2, sizeof n2, "run.2.prof")};
    put(names[0], "# POINT TO POINT\nE\t0\t1\t4672 bytes\t5 msgs sent\t5,0,0,15\nI\t0\t2\t0 bytes\t3 msgs sent\n"
                  "\n  \t\nD\tMPI_COMM_WORLD\tprocs: 0,1,2\nO2A\t0\t10 bytes\t1 msgs sent\nA2O\t-1\t0 bytes\t0 msgs sent\n"
                  "A2A\t0\t60 bytes\t4 msgs sent\n");
    put(names[1], "E\t1\t0\t123456789012345678901 bytes\t1 msgs sent\r\nC\tSELF\tprocs: (null)\r\n"
                  "O2A\t1\t0 bytes\t0 msgs sent\r\nA2O\t1\t0 bytes\t0 msgs sent\r\nA2A\t1\t0 bytes\t0 msgs sent");
    put(names[2], "");
    topomap_monitoring m;
    CHECK(topomap_read_monitoring(names, 3, &m) == 0 && m.bad_file == -1);
    CHECK(m.np2p == 3 && m.nparts == 8);
    CHECK(m.p2p[0].kind == 'E' && m.p2p[0].me == 0 && m.p2p[0].peer == 1 && m.p2p[0].bytes == 4672 &&
          m.p2p[0].msgs == 5 && m.p2p[0].file == 0);
    CHECK(m.p2p[1].kind == 'I' && m.p2p[1].peer == 2 && m.p2p[1].bytes == 0);
    CHECK(m.p2p[2].file == 1 && m.p2p[2].bytes == 123456789012345678901.0); /* read as float() reads it */
    CHECK(m.parts[0].kind == 'H' && m.parts[0].procs == 1 && m.parts[0].procs_count == 3 && m.parts[0].procs_max == 2);
    CHECK(m.parts[0].name_len == 14 && memcmp(m.names + m.parts[0].name_at, "MPI_COMM_WORLD", 14) == 0);
    CHECK(m.parts[1].kind == 'O' && m.parts[1].bytes == 10 && m.parts[2].kind == 'A' && m.parts[2].rank == -1);
    CHECK(m.parts[3].kind == 'X' && m.parts[3].msgs == 4);
    CHECK(m.parts[4].kind == 'H' && m.parts[4].procs == 0 && m.parts[4].file == 1 &&
          memcmp(m.names + m.parts[4].name_at, "SELF", 4) == 0);
    topomap_monitoring_free(&m);
    const char *bad[] = {"E\t0\t1\t5 bytes\t1 msgs\n", "E\t0\t12345678901\t5 bytes\t1 msgs sent\n",
                         "X\t0\t1\t5 bytes\t1 msgs sent\n", "O2A\t0\t5 bytes\t1 msgs sent\tx\n", " # not a comment\n",
                         "D\tname\tprocs: 1,2\nE\t0\t1\t5 bytes\t1 msgs sent\t1,x\n"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        put(names[1], bad[i]);
        CHECK(topomap_read_monitoring(names, 3, &m) == 0 && m.bad_file == 1 && m.bad_line == (i == 5 ? 2 : 1));
        CHECK(m.np2p == 0 && m.p2p == NULL);
        topomap_monitoring_free(&m);
    }
    put(names[1], "D\tx\tprocs: 1,,2\nD\ty\tprocs: 99999999999\n");
    CHECK(topomap_read_monitoring(names, 3, &m) == 0 && m.bad_file == -1);
    CHECK(m.parts[4].procs == -1 && m.parts[5].procs == -1); /* for the reader to refuse */
    topomap_monitoring_free(&m);
    remove(names[2]);
    CHECK(topomap_read_monitoring(names, 3, &m) == 0 && m.bad_file == 2 && m.bad_line == 0);
    topomap_monitoring_free(&m);
    remove(names[0]);
    remove(names[1]);
}

static void test_dumpi_files(void)
{
    char n0[96], n1[96];
    const char *names[2] = {own_name(n0, sizeof n0, "dumpi-0.txt"), own_name(n1, sizeof n1, "dumpi-1.txt")};
    const char *types[] = {"MPI_DOUBLE", "MPI_INT"};
    const int64_t sizes[] = {8, 4};
    const char *send = "MPI_Send entering at walltime 1.5, cputime 0.1 seconds in thread 0.\n"
                       "int count=4\nMPI_Datatype datatype=14 (MPI_DOUBLE)\nint dest=1\nint tag=0\n"
                       "MPI_Comm comm=2 (MPI_COMM_WORLD)\nMPI_Send returning at walltime 1.6, cputime 0.1 seconds in thread 0.\n";
    char text[4096];
    snprintf(text, sizeof text,
             "%sMPI_Sendrecv entering at walltime 2.0, cputime 0.2 seconds in thread 0.\r\nPerfcounters: [x]\n"
             "int sendcount=3\nMPI_Datatype sendtype=40 (user type)\nint dest=-1\nint sendtag=1\nint recvcount=3\n"
             "MPI_Datatype recvtype=9 (MPI_INT)\nint source=1\nint recvtag=1\nMPI_Comm comm=5 (user comm)\n"
             "MPI_Sendrecv_replace entering at walltime 3.0, cputime 0.3 seconds in thread 0.\nint count=7\n"
             "MPI_Datatype datatype=9 (MPI_INT)\nint dest=0\nint sendtag=1\nint source=0\nint recvtag=1\n"
             "MPI_Comm comm=3 (MPI_COMM_SELF)\nDatatype 40 (user type) has size 24\nDatatype 14 (MPI_DOUBLE) has size 16\n",
             send);
    put(names[0], text);
    put(names[1], send);
    topomap_dumpi d;
    CHECK(topomap_read_dumpi(names, 2, types, sizes, 2, &d) == 0 && d.bad_file == -1 && d.nsends == 4);
    CHECK(d.sends[0].count == 4 && d.sends[0].size == 16 && d.sends[0].dest == 1 && d.sends[0].comm == 2);
    CHECK(d.sends[1].count == 3 && d.sends[1].size == 24 && d.sends[1].dest == -1 && d.sends[1].comm == 5);
    CHECK(d.sends[2].count == 7 && d.sends[2].size == 4 && d.sends[2].comm == 3 && d.sends[2].file == 0);
    CHECK(d.sends[3].size == 8 && d.sends[3].file == 1); /* file 1 has no size lines: the built-in size */
    topomap_dumpi_free(&d);
    const char *bad[] = {
        "MPI_Send entering at walltime 1.5, cputime 0.1 seconds in thread 0.\nint count=4\n", /* truncated */
        "MPI_Init entering at walltime 1.0, cputime 0.0 seconds in thread 0.\nMPI_Isend entering at walltime x\n",
        "MPI_Send entering at walltime 1.5, cputime 0.1 seconds in thread 0.\nint count=4\n"
        "MPI_Datatype datatype=77 (MPI_MYSTERY)\nint dest=1\nint tag=0\nMPI_Comm comm=2 (MPI_COMM_WORLD)\n",
        "no calls at all\n",
        "MPI_Send entering at walltime 1.5, cputime 0.1 seconds in thread 0.\nint count=99999999999999999999\n"
        "MPI_Datatype datatype=14 (MPI_DOUBLE)\nint dest=1\nint tag=0\nMPI_Comm comm=2 (MPI_COMM_WORLD)\n",
        "MPI_Init entering at walltime 1.0, cputime 0.0 seconds in thread 0.\n\xc3\x28\n",
        "MPI_Send entering at walltime 1.5, cputime 0.1 seconds in thread 0.\nint count=4\n"
        "MPI_Datatype datatype=14 (MPI_DOUBLE)\nint dest=1\nint tag=0\nMPI_Comm comm=2 (MPI_COMM_WORLD)\n"
        "Datatype 14 (MPI_DOUBLE) has size -8\n"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        put(names[1], bad[i]);
        CHECK(topomap_read_dumpi(names, 2, types, sizes, 2, &d) == 0 && d.bad_file == 1 && d.nsends == 0);
        topomap_dumpi_free(&d);
    }
    remove(names[0]);
    remove(names[1]);
}

/* Both passes in one call (topomap_scan_table_text, chunks converted while later ones are
   read) give what the two passes give one after the other: the same result code, rows,
   columns, counts and first fault, for every chunk and thread count, on tables with blank
   lines, comments, a last line without '\n', bad lines anywhere, and empty texts. */
static void test_table_text_agrees(void)
{
    enum { ROOM = 1 << 16, ROWS = ROOM / 4 };
    char *text = malloc(ROOM);
    int32_t *a1 = malloc(ROWS * 4), *b1 = malloc(ROWS * 4), *a2 = malloc(ROWS * 4), *b2 = malloc(ROWS * 4);
    double *w1 = malloc(ROWS * 8), *w2 = malloc(ROWS * 8);
    void *c1[3] = {a1, b1, w1}, *c2[3] = {a2, b2, w2};
    for (int variant = 0; variant < 12; variant++) {
        size_t len = 0;
        uint64_t x = 99 + (uint64_t)variant;
        int lines = variant == 0 ? 0 : 40 * variant * variant;
        for (int l = 0; l < lines && len < ROOM - 64; l++) {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            if (variant % 3 == 1 && (x >> 40) % 9 == 0)
                len += (size_t)snprintf(text + len, ROOM - len, (x >> 30) % 2 ? "# note %d\n" : "\n", l);
            else
                len += (size_t)snprintf(text + len, ROOM - len, (x >> 45) % 5 ? "%d,%d,%llu\n" : "%d %d %llu.5 # c\n",
                                        l % 1000, (int)((x >> 33) % 50000), (unsigned long long)(x >> 44));
        }
        if (variant % 4 == 3 && len) len--;                   /* no '\n' at the end */
        if (variant % 5 == 4 && len > 40) text[len * 2 / 3] = 'z'; /* a bad line */
        if (variant == 11) len = (size_t)snprintf(text, ROOM, "# only a comment");
        for (int chunks = 1; chunks <= 9; chunks += 2)
            for (int threads = 1; threads <= 3; threads++) {
                omp_set_num_threads(threads);
                topomap_scan s1, s2;
                topomap_scan_info i1, i2;
                int64_t r1 = -1, r2 = -1;
                topomap_scan_init(&s1, text, (int64_t)len, 1, '#', 0, chunks, TOPOMAP_SCAN_SIMD_AVX2);
                int rc1 = topomap_scan_table(&s1, 3, "nnf", c1, &r1, &i1);
                int64_t room = topomap_scan_table_capacity((int64_t)len, 3);
                CHECK(room >= s1.tokens[s1.nchunks] / 3 && room <= ROWS);
                int rc2 = topomap_scan_table_text(&s2, text, (int64_t)len, 1, '#', 0, chunks, TOPOMAP_SCAN_SIMD_AVX2, 3,
                                                  "nnf", c2, room, &r2, &i2);
                CHECK(rc1 == rc2 && r1 == r2 && i1.bad_offset == i2.bad_offset);
                CHECK(s1.nchunks == s2.nchunks && !memcmp(s1.tokens, s2.tokens, sizeof s1.tokens) &&
                      !memcmp(s1.lines, s2.lines, sizeof s1.lines) && !memcmp(s1.start, s2.start, sizeof s1.start));
                CHECK(i1.filled_lines == i2.filled_lines && i1.min_width == i2.min_width &&
                      i1.max_width == i2.max_width && i1.comment_lines == i2.comment_lines);
                if (!rc1)
                    CHECK(!memcmp(a1, a2, (size_t)r1 * 4) && !memcmp(b1, b2, (size_t)r1 * 4) &&
                          !memcmp(w1, w2, (size_t)r1 * 8));
                CHECK((variant % 5 == 4 && len > 40) == (rc1 != 0)); /* the text is a table but where it was broken */
                if (variant == 11) CHECK(!rc1 && r1 == 0 && s1.lines[s1.nchunks] == 0);
                CHECK(topomap_scan_table_text(&s2, text, (int64_t)len, 1, '#', 0, chunks, TOPOMAP_SCAN_SIMD_AVX2, 3,
                                              "nnf", c2, room - 1, &r2, &i2) == TOPOMAP_EINVAL);
            }
    }
    omp_set_num_threads(2);
    free(text), free(a1), free(b1), free(a2), free(b2), free(w1), free(w2);
}

/* Adjacency lists read in one call (topomap_scan_rows_text) equal the two passes, for METIS-
   and Scotch-like layouts, with missing and extra lines, a bad entry, and texts whose counts
   cannot fit the layout (where rows are missing, the two may name different faults). */
static void test_rows_text_agrees(void)
{
    enum { ROOM = 1 << 16, N = 300 };
    char *text = malloc(ROOM);
    int32_t *d1 = malloc(ROOM * 4), *d2 = malloc(ROOM * 4);
    double *w1 = malloc(ROOM * 8), *w2 = malloc(ROOM * 8);
    int64_t rp1[N + 1], rp2[N + 1];
    const topomap_rows_layout layouts[2] = {{N, 0, 0, 2, 0, 1}, {N, 1, 1, 2, 1, 0}};
    for (int variant = 0; variant < 10; variant++)
        for (int li = 0; li < 2; li++) {
            const topomap_rows_layout *lay = &layouts[li];
            size_t len = 0;
            uint64_t x = 5 + (uint64_t)variant;
            int rows = variant == 1 ? N - 3 : N; /* too few lines */
            for (int i = 0; i < rows && len < ROOM - 200; i++) {
                x = x * 6364136223846793005ULL + 1442695040888963407ULL;
                int deg = (int)((x >> 33) % 6);
                if (lay->head) len += (size_t)snprintf(text + len, ROOM - len, "%d ", i % 7);
                if (lay->degree) len += (size_t)snprintf(text + len, ROOM - len, "%d", deg);
                for (int e = 0; e < deg; e++) {
                    int q = (int)((i + 1 + (x >> (10 + e)) % (N - 1)) % N) + (int)lay->base;
                    int w = (int)((x >> (20 + e)) % 1000);
                    len += (size_t)snprintf(text + len, ROOM - len, lay->weight_first ? " %d %d" : " %d %d",
                                            lay->weight_first ? w : q, lay->weight_first ? q : w);
                }
                text[len++] = '\n';
            }
            if (variant == 2) len += (size_t)snprintf(text + len, ROOM - len, "\n\n");   /* blank lines after */
            if (variant == 3) len += (size_t)snprintf(text + len, ROOM - len, "7 8\n"); /* numbers after the rows */
            if (variant == 4 && len > 20) text[len / 2] = 'x';
            if (variant == 5 && len) len--; /* no '\n' at the end */
            if (variant == 6) len += (size_t)snprintf(text + len, ROOM - len, "9\n"); /* an odd token count */
            for (int chunks = 1; chunks <= 7; chunks += 3)
                for (int threads = 1; threads <= 3; threads += 2) {
                    omp_set_num_threads(threads);
                    topomap_scan s1, s2;
                    topomap_scan_info i1, i2;
                    topomap_scan_init(&s1, text, (int64_t)len, 0, -1, 0, chunks, TOPOMAP_SCAN_SIMD_AVX2);
                    int64_t want = topomap_scan_row_entries(&s1, lay), got = -1;
                    int rc1 = topomap_scan_rows(&s1, lay, rp1, d1, w1, &i1);
                    int64_t room = topomap_scan_rows_capacity((int64_t)len, lay);
                    CHECK(room >= want && room <= ROOM);
                    int rc2 = topomap_scan_rows_text(&s2, text, (int64_t)len, chunks, TOPOMAP_SCAN_SIMD_AVX2, lay, rp2,
                                                     d2, w2, room, &got, &i2);
                    CHECK(rc1 == rc2 && (variant == 1 || i1.bad_offset == i2.bad_offset));
                    if (variant != 5) /* a last empty row without '\n' is no line */
                        CHECK((rc1 == 0) == (variant == 0 || variant == 2 || variant > 6));
                    if (!rc1)
                        CHECK(got == want && rp1[N] == want && !memcmp(rp1, rp2, sizeof rp1) &&
                              !memcmp(d1, d2, (size_t)want * 4) && !memcmp(w1, w2, (size_t)want * 8));
                    CHECK(topomap_scan_rows_text(&s2, text, (int64_t)len, chunks, TOPOMAP_SCAN_SIMD_AVX2, lay, rp2, d2,
                                                 w2, room - 1, &got, &i2) == TOPOMAP_EINVAL);
                }
        }
    omp_set_num_threads(2);
    free(text), free(d1), free(d2), free(w1), free(w2);
}

/* Non-zero numbers read in one call (topomap_scan_nonzeros_text) equal the two passes: the
   same entries, line counts, result code and first fault, for every chunk and thread count. */
static void test_nonzeros_text_agrees(void)
{
    enum { ROOM = 1 << 15 };
    char *text = malloc(ROOM);
    int64_t *n1 = malloc(ROOM * 8), *n2 = malloc(ROOM * 8);
    for (int variant = 0; variant < 6; variant++) {
        size_t len = 0;
        uint64_t x = 31 + (uint64_t)variant;
        for (int l = 0; l < 40 * (variant + 1) && len < ROOM - 200; l++) {
            for (int j = 0; j < 12; j++) {
                x = x * 6364136223846793005ULL + 1442695040888963407ULL;
                len += (size_t)snprintf(text + len, ROOM - len, (x >> 40) % 5 ? "0 " : "%llu.25,",
                                        (unsigned long long)(x >> 50));
            }
            text[len++] = (x >> 30) % 11 ? '\n' : '#';
            if (text[len - 1] == '#') len += (size_t)snprintf(text + len, ROOM - len, " note\n");
        }
        if (variant == 3) text[len / 2] = 'y';
        if (variant == 4) len--;
        if (variant == 5) len = 0;
        for (int chunks = 1; chunks <= 8; chunks += 7)
            for (int threads = 1; threads <= 3; threads += 2) {
                omp_set_num_threads(threads);
                topomap_scan s1, s2;
                topomap_scan_info i1, i2;
                topomap_scan_entries e1, e2;
                topomap_scan_init(&s1, text, (int64_t)len, 1, '#', 0, chunks, TOPOMAP_SCAN_SIMD_AVX2);
                int rc1 = topomap_scan_nonzeros(&s1, n1, &e1, &i1);
                int64_t room = topomap_scan_lines_capacity((int64_t)len);
                CHECK(room >= s1.lines[s1.nchunks] && room <= ROOM);
                int rc2 = topomap_scan_nonzeros_text(&s2, text, (int64_t)len, 1, '#', 0, chunks, TOPOMAP_SCAN_SIMD_AVX2,
                                                     n2, room, &e2, &i2);
                CHECK(rc1 == rc2 && i1.bad_offset == i2.bad_offset && (rc1 != 0) == (variant == 3));
                if (!rc1) {
                    size_t bytes = (size_t)e1.count * 8;
                    CHECK(e1.count == e2.count && (e1.count > 0) == (variant != 5));
                    CHECK(!memcmp(e1.line, e2.line, bytes) && !memcmp(e1.col, e2.col, bytes) &&
                          !memcmp(e1.value, e2.value, bytes));
                    CHECK(s1.lines[s1.nchunks] == s2.lines[s2.nchunks] &&
                          !memcmp(n1, n2, (size_t)s1.lines[s1.nchunks] * 8));
                }
                int64_t found = e1.count;
                topomap_scan_entries_free(&e1);
                topomap_scan_entries_free(&e2);
                CHECK(topomap_scan_nonzeros_text(&s2, text, (int64_t)len, 1, '#', 0, chunks, TOPOMAP_SCAN_SIMD_AVX2, n2,
                                                 room - 1, &e2, &i2) == TOPOMAP_EINVAL);
                /* no line counts wanted */
                rc2 = topomap_scan_nonzeros_text(&s2, text, (int64_t)len, 1, '#', 0, chunks, TOPOMAP_SCAN_SIMD_AVX2,
                                                 NULL, 0, &e2, &i2);
                CHECK(rc2 == rc1 && (rc1 || e2.count == found));
                topomap_scan_entries_free(&e2);
            }
    }
    omp_set_num_threads(2);
    free(text), free(n1), free(n2);
}

int main(void)
{
    test_integers_and_lines();
    test_int64_bounds();
    test_bad_tokens();
    test_decimals();
    test_auto_type();
    test_comments();
    test_table();
    test_nonzeros();
    test_chunks_agree();
    test_block_lane_agrees();
    test_table_text_agrees();
    test_rows_text_agrees();
    test_nonzeros_text_agrees();
    test_block_lane_faults();
    test_first_float_anywhere();
    test_monitoring_files();
    test_dumpi_files();
    return check_report();
}
