/* The load balancers of csrc/core/lb_*.c: Kumar's Examples 1 and 2, phantom
   tasks, orders, the baseline's optimal targets and bad input. */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "topomap/error.h"
#include "topomap/loadbalance.h"

#define P_MAX 64

/* the tasks on every process after the alias flow */
static void alias_after(int32_t n, const int64_t *counts, const int32_t *src, const int64_t *tasks, int64_t *after)
{
    memcpy(after, counts, sizeof *after * (size_t)n);
    for (int32_t p = 0; p < n; p++) {
        if (src[p] < 0) continue;
        after[p] += tasks[p];
        after[src[p]] -= tasks[p];
    }
}

static void example_1(int32_t n)
{
    /* P = 2n, k = n: 2n - 1 messages, 3n - 5 + (n - 3)(n - 2) / 2 tasks, n - 1 sends by process n */
    int64_t counts[P_MAX] = {0}, tasks[P_MAX], after[P_MAX];
    int32_t src[P_MAX], P = 2 * n;
    for (int32_t i = 0; i < P; i++) counts[i] = i < n - 1 ? n - 1 : i == n - 1 ? 2 : i == n ? 2 * n - 2 : n + 1;
    CHECK(topomap_lb_alias(P, counts, NULL, 0, src, tasks) == 0);
    int32_t messages = 0, sends_of_n = 0;
    int64_t moved = 0;
    for (int32_t p = 0; p < P; p++) {
        messages += src[p] >= 0;
        sends_of_n += src[p] == n;
        moved += tasks[p];
    }
    CHECK(messages == 2 * n - 1);
    CHECK(moved == 3 * n - 5 + (n - 3) * (n - 2) / 2);
    CHECK(sends_of_n == n - 1);
    alias_after(P, counts, src, tasks, after);
    for (int32_t p = 0; p < P; p++) CHECK(after[p] == n);
}

static void example_2(int32_t P)
{
    int64_t counts[P_MAX] = {0}, tasks[P_MAX];
    int32_t src[P_MAX];
    counts[0] = 1;
    for (int32_t i = 1; i < P; i++) counts[i] = P + 1;
    CHECK(topomap_lb_alias(P, counts, NULL, 0, src, tasks) == 0);
    for (int32_t i = 0; i < P - 1; i++) CHECK(src[i] == i + 1 && tasks[i] == P - 1 - i);
    CHECK(src[P - 1] == -1 && tasks[P - 1] == 0);
    /* the baseline: every other process sends one task to process 0 */
    int32_t ms[P_MAX], md[P_MAX], nmsg = -1;
    int64_t mt[P_MAX];
    CHECK(topomap_lb_unit(P, counts, NULL, ms, md, mt, &nmsg) == 0);
    CHECK(nmsg == P - 1);
    for (int32_t i = 0; i < nmsg; i++) CHECK(ms[i] == i + 1 && md[i] == 0 && mt[i] == 1);
}

static void phantoms(void)
{
    /* T = 10, P = 4, k = 3: the phantoms go to 1 and 3 (k - 1 tasks each) */
    int64_t counts[] = {6, 2, 0, 2}, tasks[4], after[4];
    int32_t src[4];
    CHECK(topomap_lb_alias(4, counts, NULL, 0, src, tasks) == 0);
    CHECK(src[2] == 0 && tasks[2] == 3 && src[0] == -1 && src[1] == -1 && src[3] == -1);
    /* T = 5, P = 3, k = 2: 1 takes the phantom, so it receives one task less */
    int64_t c2[] = {5, 0, 0};
    CHECK(topomap_lb_alias(3, c2, NULL, 0, src, tasks) == 0);
    alias_after(3, c2, src, tasks, after);
    CHECK(after[0] == 2 && after[1] == 1 && after[2] == 2);
    /* a donor's phantom leaves in its first message: {2, 2, 0} moves nothing */
    int64_t c3[] = {2, 2, 0};
    CHECK(topomap_lb_alias(3, c3, NULL, 0, src, tasks) == 0);
    CHECK(src[0] == -1 && src[1] == -1 && src[2] == -1);
}

static void orders(void)
{
    /* in the order 3, 2, 1, 0 the donor 3 fills 1 (the first deficit met) */
    int64_t counts[] = {2, 0, 2, 4}, tasks[4];
    int32_t order[] = {3, 2, 1, 0}, src[4];
    CHECK(topomap_lb_alias(4, counts, order, 0, src, tasks) == 0);
    CHECK(src[1] == 3 && tasks[1] == 2 && src[0] == -1 && src[2] == -1);
    int32_t bad[] = {0, 1, 1, 3};
    CHECK(topomap_lb_alias(4, counts, bad, 0, src, tasks) == TOPOMAP_EINVAL);
    CHECK(strstr(topomap_last_error(), "process 1 twice") != NULL);
}

static void refill_next(void)
{
    /* {0, 4, 0, 4}, k = 2: as printed, 1 fills 0 and 2, falls to 0 and 3 refills it;
       refilled at once, 1 fills 0 and 3 fills 2 */
    int64_t counts[] = {0, 4, 0, 4}, tasks[4];
    int32_t src[4];
    CHECK(topomap_lb_alias(4, counts, NULL, 0, src, tasks) == 0);
    CHECK(src[0] == 1 && src[1] == 3 && src[2] == 1 && src[3] == -1);
    CHECK(topomap_lb_alias(4, counts, NULL, 1, src, tasks) == 0);
    CHECK(src[0] == 1 && src[1] == -1 && src[2] == 3 && src[3] == -1 && tasks[0] == 2 && tasks[2] == 2);
    /* Example 1 (n = 6): every process still ends with k, one receive each */
    int64_t ex[12], after[12];
    int32_t s2[12];
    int64_t t2[12];
    for (int32_t i = 0; i < 12; i++) ex[i] = i < 5 ? 5 : i == 5 ? 2 : i == 6 ? 10 : 7;
    CHECK(topomap_lb_alias(12, ex, NULL, 1, s2, t2) == 0);
    alias_after(12, ex, s2, t2, after);
    for (int32_t p = 0; p < 12; p++) CHECK(after[p] == 6);
}

static void baseline_targets(void)
{
    /* T = 87, P = 5: base 17, the two largest (27, 27) keep 18: max sent 9 */
    int64_t counts[] = {0, 7, 26, 27, 27}, mt[5];
    int32_t ms[5], md[5], nmsg;
    CHECK(topomap_lb_unit(5, counts, NULL, ms, md, mt, &nmsg) == 0);
    int64_t sent[5] = {0}, total = 0;
    for (int32_t i = 0; i < nmsg; i++) {
        sent[ms[i]] += mt[i];
        total += mt[i];
    }
    CHECK(sent[2] == 9 && sent[3] == 9 && sent[4] == 9 && total == 27);
}

static void bad_input(void)
{
    int64_t counts[] = {3, -1, 2}, tasks[3];
    int32_t src[3], ms[3], md[3], nmsg;
    CHECK(topomap_lb_alias(3, counts, NULL, 0, src, tasks) == TOPOMAP_EINVAL);
    CHECK(strstr(topomap_last_error(), "process 1 has a negative task count") != NULL);
    CHECK(topomap_lb_unit(3, counts, NULL, ms, md, tasks, &nmsg) == TOPOMAP_EINVAL);
    int64_t huge[] = {INT64_MAX / 2, INT64_MAX / 2, 5};
    CHECK(topomap_lb_alias(3, huge, NULL, 0, src, tasks) == TOPOMAP_EINVAL);
    CHECK(strstr(topomap_last_error(), "overflow 64 bits at process 1") != NULL);
    CHECK(topomap_lb_alias(0, counts, NULL, 0, src, tasks) == TOPOMAP_EINVAL);
}

int main(void)
{
    for (int32_t n = 6; n <= 10; n += 2) {
        example_1(n);
        example_2(n);
    }
    phantoms();
    orders();
    refill_next();
    baseline_targets();
    bad_input();
    return check_report();
}
