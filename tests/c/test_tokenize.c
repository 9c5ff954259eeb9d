/* The number tokenizer of the pattern readers (csrc/core/tokenize.c): grammar, line counts,
   int64 bounds, decimal conversion, the offset of the first bad token. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "topomap/error.h"
#include "topomap/tokenize.h"

/* Parse `text`; values and counts go to the caller's buffers (at most 16 each). */
static int parse(const char *text, int integer, int commas, void *values, int64_t counts[16], int64_t *ntok,
                 int64_t *nlines, int64_t *bad)
{
    int64_t len = (int64_t)strlen(text);
    topomap_count_tokens(text, len, commas, ntok, nlines);
    return topomap_parse_numbers(text, len, integer, commas, values, counts, bad);
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
    const char *bad_ints[] = {"1.5", "1e3", "x", "+", "-", "1,2", "0x10", "--1", "1-2", "nan"};
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

int main(void)
{
    test_integers_and_lines();
    test_int64_bounds();
    test_bad_tokens();
    test_decimals();
    return check_report();
}
