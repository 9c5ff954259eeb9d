/* The placement orders past the thesis (coll_more_order.c) under the
   sanitizers: BKMH, ARMH and PWMH give permutations with earlier references
   for p = 1..700, through topomap_coll_order too, ARMH's fold worked by
   hand for p = 6, and the errors. */
#include <stdlib.h>
#include <string.h>
#include "topomap/collectives.h"
#include "topomap/error.h"
#include "check.h"

#define PMAX 700

static void test_permutations(void)
{
    int bad = 0;
    int32_t *order = malloc(PMAX * sizeof *order), *ref = malloc(PMAX * sizeof *ref);
    char *seen = malloc(PMAX);
    for (int32_t h = TOPOMAP_COLL_BKMH; h <= TOPOMAP_COLL_PWMH; h++)
        for (int32_t p = 1; p <= PMAX; p++) {
            memset(seen, 0, PMAX);
            if (topomap_coll_order(h, p, order, ref) || order[0] != 0 || ref[0] != -1) {
                bad++;
                continue;
            }
            seen[0] = 1;
            for (int32_t t = 1; t < p; t++) {
                if (order[t] < 0 || order[t] >= p || seen[order[t]] || ref[t] < 0 || ref[t] >= p || !seen[ref[t]]) bad++;
                else seen[order[t]] = 1;
            }
        }
    CHECK(bad == 0);
    free(order);
    free(ref);
    free(seen);
}

static void test_fold(void)
{
    /* q = 4 virtual ranks walked 0, 1, 2, 3; virtual 0, 1 are real 1, 3 with 0, 2 right after */
    static const int32_t want_order[6] = {0, 1, 3, 2, 4, 5}, want_ref[6] = {-1, 0, 1, 3, 1, 4};
    int32_t order[6], ref[6];
    CHECK(topomap_coll_order_more(TOPOMAP_COLL_ARMH, 6, order, ref) == 0);
    CHECK(!memcmp(order, want_order, sizeof order) && !memcmp(ref, want_ref, sizeof ref));
}

static void test_errors(void)
{
    int32_t order[4], ref[4];
    CHECK(topomap_coll_order_more(TOPOMAP_COLL_BGMH, 4, order, ref) == TOPOMAP_EINVAL &&
          strstr(topomap_last_error(), "unknown reordering heuristic"));
    CHECK(topomap_coll_order(TOPOMAP_COLL_PWMH + 1, 4, order, ref) == TOPOMAP_EINVAL);
    CHECK(topomap_coll_order(TOPOMAP_COLL_BKMH, 0, order, ref) == TOPOMAP_EINVAL && strstr(topomap_last_error(), "p = 0"));
}

int main(void)
{
    test_permutations();
    test_fold();
    test_errors();
    return check_report();
}
