/* The tiny check harness of the C tests: CHECK counts, the last line of a
   test program is "N passed, M failed". */
#ifndef TOPOMAP_TEST_CHECK_H
#define TOPOMAP_TEST_CHECK_H
#include <math.h>
#include <stdio.h>

static int failures = 0, checks = 0;

#define CHECK(cond)                                                                  \
    do {                                                                             \
        checks++;                                                                    \
        if (!(cond)) {                                                               \
            failures++;                                                              \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                            \
    } while (0)

static inline int close_to(double a, double b) { return fabs(a - b) <= 1e-9 * (1 + fabs(a) + fabs(b)); }

static inline int check_report(void)
{
    printf("%d passed, %d failed\n", checks - failures, failures);
    return failures ? 1 : 0;
}
#endif
