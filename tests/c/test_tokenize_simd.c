/* The instruction-set paths of the tokenizer (csrc/core/tokenize_*.c): bytes only, SSE2 blocks
   and AVX2 blocks give the same counts, values, line counts, faults, tables, non-zero entries
   and adjacency rows on random texts -- numbers across 32- and 64-byte block boundaries (the
   text also starts at every offset of a block), long numbers and int64 overflow, signs, "-0",
   decimals and exponents, CRLF, tabs, commas, trailing blanks, no final newline, bad tokens --
   and the values are those strtoll / strtod give for each token, also for decimals at the edges
   of the exact fast path. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "topomap/error.h"
#include "topomap/tokenize.h"

#define ROOM 8192
#define MAX_TOKENS 2048

typedef struct {
    char text[ROOM];
    size_t len;
    int ntok;
    int32_t start[MAX_TOKENS], length[MAX_TOKENS]; /* the tokens written, to convert them independently */
    int has_float, has_bad, has_long; /* has_long: a token of 19 digits or more (may overflow int64) */
} sample;

static uint64_t next(uint64_t *x)
{
    *x = *x * 6364136223846793005ULL + 1442695040888963407ULL;
    return *x >> 33;
}

static void put(sample *s, const char *str)
{
    size_t n = strlen(str);
    if (s->len + n < ROOM) {
        memcpy(s->text + s->len, str, n);
        s->len += n;
    }
}

/* A random number token (or, with `bad`, rarely a token outside the grammar). */
static void put_token(sample *s, uint64_t *x, int floats, int signs, int bad)
{
    char tok[64];
    size_t n = 0;
    uint64_t r = next(x) % 100;
    if (signs && r < 15) tok[n++] = r < 10 ? '-' : '+';
    int digits = (int)(next(x) % 100 < 80 ? 1 + next(x) % 9 : 10 + next(x) % 16); /* up to 25: overflow */
    if (next(x) % 20 == 0) digits = 1, tok[n++] = '0';                         /* "0", "-0" */
    else
        for (int i = 0; i < digits; i++) tok[n++] = (char)('0' + next(x) % 10);
    if (floats && next(x) % 5 == 0) {
        tok[n++] = '.';
        for (int i = (int)(next(x) % 4); i > 0; i--) tok[n++] = (char)('0' + next(x) % 10);
        if (next(x) % 2) n += (size_t)sprintf(tok + n, "e%s%d", next(x) % 2 ? "-" : "", (int)(next(x) % 40));
        s->has_float = 1;
    }
    if (bad && next(x) % 60 == 0) tok[n++] = 'x', s->has_bad = 1;
    s->has_long |= digits >= 19;
    tok[n] = '\0';
    if (s->len + n + 8 >= ROOM || s->ntok == MAX_TOKENS) return;
    s->start[s->ntok] = (int32_t)s->len;
    s->length[s->ntok++] = (int32_t)n;
    put(s, tok);
}

/* Lines of `width` tokens (0: a random number of them) with random separators. */
static void make_text(sample *s, uint64_t seed, int lines, int width, int floats, int signs, int bad, int commas)
{
    static const char *const blanks[] = {" ", "  ", "\t", " \t "};
    uint64_t x = seed;
    memset(s, 0, sizeof *s);
    for (int l = 0; l < lines; l++) {
        int w = width ? width : (int)(next(&x) % 9);
        if (next(&x) % 8 == 0) put(s, blanks[next(&x) % 4]); /* leading blanks */
        for (int j = 0; j < w; j++) {
            if (j) put(s, commas && next(&x) % 2 ? "," : blanks[next(&x) % 4]);
            put_token(s, &x, floats, signs, bad);
        }
        if (next(&x) % 6 == 0) put(s, blanks[next(&x) % 4]); /* trailing blanks */
        put(s, next(&x) % 5 == 0 ? "\r\n" : "\n");
    }
    if (seed % 3 == 0) { /* no final newline */
        while (s->len && (s->text[s->len - 1] == '\n' || s->text[s->len - 1] == '\r')) s->len--;
    }
}

/* A fresh buffer holding the text from byte `shift` on (so block boundaries fall elsewhere). */
static char *placed(const sample *s, int shift)
{
    char *buf = malloc(s->len + (size_t)shift + 1);
    memset(buf, 'z', (size_t)shift); /* text before the start: never read */
    memcpy(buf + shift, s->text, s->len);
    buf[shift + s->len] = '\0';
    return buf;
}

/* Every number: same results at each level, and (for valid texts) the values strtoll/strtod give. */
static void check_numbers(const sample *smp, const char *text, int commas, int integer)
{
    int64_t v[3][MAX_TOKENS], counts[3][MAX_TOKENS];
    topomap_scan_info info[3];
    int rc[3];
    topomap_scan s[3];
    for (int level = 0; level < 3; level++) {
        topomap_scan_init(&s[level], text, (int64_t)smp->len, commas, -1, 0, 1 + level, level);
        CHECK(s[level].simd <= level);
        CHECK(s[level].tokens[s[level].nchunks] == s[0].tokens[s[0].nchunks]);
        CHECK(s[level].lines[s[level].nchunks] == s[0].lines[s[0].nchunks]);
        rc[level] = topomap_scan_numbers(&s[level], integer, v[level], counts[level], &info[level]);
        CHECK(rc[level] == rc[0]);
        CHECK(info[level].bad_offset == info[0].bad_offset);
    }
    CHECK(s[0].tokens[s[0].nchunks] == smp->ntok);
    int surely_valid = !smp->has_bad && (!integer || (!smp->has_float && !smp->has_long));
    CHECK(rc[0] == 0 || (rc[0] == TOPOMAP_EINVAL && !surely_valid));
    if (rc[0]) return;
    int64_t nt = s[0].tokens[s[0].nchunks], nl = s[0].lines[s[0].nchunks];
    for (int level = 1; level < 3; level++) {
        CHECK(memcmp(v[level], v[0], (size_t)nt * 8) == 0);
        CHECK(memcmp(counts[level], counts[0], (size_t)nl * 8) == 0);
        CHECK(info[level].is_float == info[0].is_float && info[level].filled_lines == info[0].filled_lines &&
              info[level].min_width == info[0].min_width && info[level].max_width == info[0].max_width);
    }
    int wrong = 0;
    for (int i = 0; i < nt; i++) {
        char tok[64];
        memcpy(tok, smp->text + smp->start[i], (size_t)smp->length[i]);
        tok[smp->length[i]] = '\0';
        if (info[0].is_float) {
            double d;
            memcpy(&d, &v[0][i], 8);
            double want = strtod(tok, NULL);
            wrong += memcmp(&d, &want, 8) != 0; /* bit for bit: "-0" keeps its sign */
        } else {
            wrong += v[0][i] != strtoll(tok, NULL, 10);
        }
    }
    CHECK(wrong == 0);
}

/* Table columns, non-zero entries and adjacency rows at each level. */
static void check_shapes(const sample *smp, const char *text, int commas, int width)
{
    const char *types = width == 3 ? "ndf" : "nnfd";
    double col[3][4][MAX_TOKENS];
    void *cols[3][4];
    int64_t rows[3];
    topomap_scan_entries e[3];
    topomap_scan_info info;
    int rc_table[3], rc_nz[3], rc_rows[3];
    int64_t row_ptr[3][MAX_TOKENS], rcount[3][MAX_TOKENS];
    int32_t dst[3][MAX_TOKENS];
    double w[3][MAX_TOKENS];
    topomap_rows_layout layout = {0, 0, 0, 2, 0, 0};
    for (int level = 0; level < 3; level++) {
        topomap_scan s;
        topomap_scan_init(&s, text, (int64_t)smp->len, commas, -1, 0, 2, level);
        for (int j = 0; j < 4; j++) cols[level][j] = col[level][j];
        memset(col[level], 0, sizeof col[level]);
        rc_table[level] = topomap_scan_table(&s, width, types, cols[level], &rows[level], &info);
        rc_nz[level] = topomap_scan_nonzeros(&s, rcount[level], &e[level], &info);
        layout.n = (int32_t)(s.lines[s.nchunks] > 0 ? s.lines[s.nchunks] : 1);
        rc_rows[level] = topomap_scan_row_entries(&s, &layout) < 0 || layout.n > 1 << 20
                             ? -1
                             : topomap_scan_rows(&s, &layout, row_ptr[level], dst[level], w[level], &info);
    }
    for (int level = 1; level < 3; level++) {
        CHECK(rc_table[level] == rc_table[0] && rows[level] == rows[0]);
        if (!rc_table[0])
            for (int j = 0; j < width; j++)
                CHECK(memcmp(col[level][j], col[0][j], (size_t)rows[0] * (types[j] == 'n' ? 4 : 8)) == 0);
        CHECK(rc_nz[level] == rc_nz[0] && e[level].count == e[0].count);
        if (!rc_nz[0] && e[0].count)
            CHECK(memcmp(e[level].line, e[0].line, (size_t)e[0].count * 8) == 0 &&
                  memcmp(e[level].col, e[0].col, (size_t)e[0].count * 8) == 0 &&
                  memcmp(e[level].value, e[0].value, (size_t)e[0].count * 8) == 0);
        CHECK(rc_rows[level] == rc_rows[0]);
        if (!rc_rows[0]) CHECK(memcmp(row_ptr[level], row_ptr[0], (size_t)(layout.n + 1) * 8) == 0);
    }
    for (int level = 0; level < 3; level++) topomap_scan_entries_free(&e[level]);
}

static void test_levels_agree(void)
{
    sample *smp = malloc(sizeof *smp);
    int tables = 0, valid = 0;
    for (uint64_t seed = 1; seed <= 240; seed++) {
        int floats = seed % 4 == 1, signs = seed % 5 == 2, bad = seed % 7 == 3, commas = seed % 2 == 0;
        int width = seed % 3 == 0 ? 0 : (int)(3 + seed % 2);
        make_text(smp, seed, 20 + (int)(seed % 90), width, floats, signs, bad, commas);
        int shift = (int)(seed % 64);
        char *buf = placed(smp, shift);
        check_numbers(smp, buf + shift, commas, 0);
        check_numbers(smp, buf + shift, commas, 1);
        if (width) check_shapes(smp, buf + shift, commas, width), tables++;
        valid += !smp->has_bad;
        free(buf);
    }
    CHECK(tables > 100 && valid > 150); /* the random texts cover both shapes and both outcomes */
    free(smp);
}

/* Decimals at the edges of the exact fast path (15 digits, 10^22) and past them: bit for bit
   what strtod gives. */
static void test_decimals_like_strtod(void)
{
    static const char *const tokens[] = {
        "0.1", "-0.0", "4.35", ".5", "5.", "1E+2", "00012.5000", "0.000123", "1e-22", "1e22", "1e23", "1e-23",
        "999999999999999e22", "999999999999999e-22", "9999999999999999e22", "123456789012345.6", "12345678901234.5",
        "0.30000000000000004", "2.2250738585072014e-308", "1.7976931348623157e308", "1e400", "-1e-400",
        "0.0000000000000000000000000001", "3.14159265358979", "-271828182845904.5e-14", "7e0000", "1.5e-0",
        "100000000000000000000000.0", "0.1e-21", "12.5e21", "12.5e22"};
    char text[1024] = "";
    int n = (int)(sizeof tokens / sizeof *tokens);
    for (int i = 0; i < n; i++) strcat(strcat(text, tokens[i]), i % 4 == 3 ? "\n" : " ");
    double v[64];
    int64_t counts[64];
    topomap_scan s;
    topomap_scan_info info;
    topomap_scan_init(&s, text, (int64_t)strlen(text), 0, -1, 0, 1, TOPOMAP_SCAN_SIMD_AVX2);
    CHECK(s.tokens[s.nchunks] == n);
    CHECK(topomap_scan_numbers(&s, 0, v, counts, &info) == 0 && info.is_float);
    for (int i = 0; i < n; i++) {
        double want = strtod(tokens[i], NULL);
        if (memcmp(&v[i], &want, 8) != 0) fprintf(stderr, "%s: %.17g, strtod %.17g\n", tokens[i], v[i], want);
        CHECK(memcmp(&v[i], &want, 8) == 0);
    }
}

/* A level above what the CPU has is lowered; below NONE is NONE. */
static void test_level_bounds(void)
{
    topomap_scan s;
    topomap_scan_init(&s, "1 2\n", 4, 0, -1, 0, 1, 99);
    CHECK(s.simd >= TOPOMAP_SCAN_SIMD_NONE && s.simd <= TOPOMAP_SCAN_SIMD_AVX2);
    topomap_scan_init(&s, "1 2\n", 4, 0, -1, 0, 1, -5);
    CHECK(s.simd == TOPOMAP_SCAN_SIMD_NONE);
    CHECK(s.tokens[s.nchunks] == 2 && s.lines[s.nchunks] == 1);
}

int main(void)
{
    test_levels_agree();
    test_decimals_like_strtod();
    test_level_bounds();
    return check_report();
}
