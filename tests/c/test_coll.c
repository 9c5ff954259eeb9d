/* Collective schedules (coll_build.c, coll_algorithms.c) under the sanitizers:
   every operation and algorithm for n = 1..40 keeps its invariants (no
   empty stage, no pair twice in a stage, counts equal the listed items,
   items in range, the same counts with and without item lists), unicast
   totals worked by hand, and the errors; the reordering heuristics' orders
   are permutations and Alg. 4.1 places each rank on a closest free core. */
#include <stdlib.h>
#include <string.h>
#include "topomap/collectives.h"
#include "topomap/error.h"
#include "topomap/machine.h"
#include "check.h"

static int invariants(const topomap_coll_spec *sp, const topomap_coll_schedule *s)
{
    int64_t nitems = sp->op == TOPOMAP_COLL_ALLTOALL ? (int64_t)sp->n * sp->n
                   : sp->op == TOPOMAP_COLL_BCAST ? 1
                   : sp->algorithm == TOPOMAP_COLL_RD && sp->op == TOPOMAP_COLL_ALLREDUCE ? 1
                   : sp->algorithm == TOPOMAP_COLL_RABENSEIFNER ? (int64_t)(1.0 / s->item_unit + 0.5) : sp->n;
    char *seen = calloc((size_t)sp->n * sp->n + 1, 1);
    int ok = s->stage_ptr[0] == 0 && s->stage_ptr[s->nstages] == s->nmsgs && s->item_ptr[s->nmsgs] == s->nitems;
    for (int32_t k = 0; ok && k < s->nstages; k++) {
        ok = s->stage_ptr[k + 1] > s->stage_ptr[k];
        for (int64_t i = s->stage_ptr[k]; ok && i < s->stage_ptr[k + 1]; i++) {
            int64_t key = (int64_t)s->src[i] * sp->n + s->dst[i];
            ok = s->src[i] != s->dst[i] && s->src[i] >= 0 && s->src[i] < sp->n && s->dst[i] >= 0 &&
                 s->dst[i] < sp->n && !seen[key] && s->count[i] == s->item_ptr[i + 1] - s->item_ptr[i];
            seen[key] = 1;
            for (int64_t j = s->item_ptr[i]; ok && j < s->item_ptr[i + 1]; j++) ok = s->items[j] >= 0 && s->items[j] < nitems;
        }
        for (int64_t i = s->stage_ptr[k]; i < s->stage_ptr[k + 1]; i++) seen[(int64_t)s->src[i] * sp->n + s->dst[i]] = 0;
    }
    free(seen);
    return ok;
}

static void test_all(void)
{
    static const int32_t pairs[][2] = {
        {TOPOMAP_COLL_BCAST, TOPOMAP_COLL_BINOMIAL},        {TOPOMAP_COLL_GATHER, TOPOMAP_COLL_BINOMIAL},
        {TOPOMAP_COLL_ALLGATHER, TOPOMAP_COLL_RD},          {TOPOMAP_COLL_ALLGATHER, TOPOMAP_COLL_RING},
        {TOPOMAP_COLL_ALLGATHER, TOPOMAP_COLL_BRUCK},       {TOPOMAP_COLL_ALLGATHER, TOPOMAP_COLL_HIERARCHICAL},
        {TOPOMAP_COLL_ALLREDUCE, TOPOMAP_COLL_RD},          {TOPOMAP_COLL_ALLREDUCE, TOPOMAP_COLL_RABENSEIFNER},
        {TOPOMAP_COLL_ALLTOALL, TOPOMAP_COLL_BRUCK},        {TOPOMAP_COLL_ALLTOALL, TOPOMAP_COLL_PAIRWISE},
    };
    int bad = 0;
    for (size_t a = 0; a < sizeof pairs / sizeof *pairs; a++)
        for (int32_t n = 1; n <= 40; n++)
            for (int32_t variant = 0; variant < 4; variant++) {
                topomap_coll_spec sp = {pairs[a][0], pairs[a][1], n, n - 1, 1 + variant % 3, variant & 1, variant >> 1, 1};
                topomap_coll_schedule s, t;
                if (topomap_coll_build(&sp, &s)) {
                    bad++;
                    continue;
                }
                sp.want_items = 0;
                if (topomap_coll_build(&sp, &t) || t.nmsgs != s.nmsgs || t.items || t.item_ptr ||
                    (s.nmsgs && memcmp(t.count, s.count, (size_t)s.nmsgs * sizeof *s.count)) || !invariants(&sp, &s))
                    bad++;
                topomap_coll_free(&s);
                topomap_coll_free(&t);
            }
    CHECK(bad == 0);
}

static int64_t unicasts(int32_t op, int32_t alg, int32_t n)
{
    topomap_coll_spec sp = {op, alg, n, 0, 4, 0, 0, 0};
    topomap_coll_schedule s;
    if (topomap_coll_build(&sp, &s)) return -1;
    int64_t m = s.nmsgs;
    topomap_coll_free(&s);
    return m;
}

static void test_totals(void)
{
    CHECK(unicasts(TOPOMAP_COLL_BCAST, TOPOMAP_COLL_BINOMIAL, 37) == 36);
    CHECK(unicasts(TOPOMAP_COLL_ALLREDUCE, TOPOMAP_COLL_RD, 16) == 16 * 4);
    CHECK(unicasts(TOPOMAP_COLL_ALLREDUCE, TOPOMAP_COLL_RD, 12) == 4 + 8 * 3 + 4);   /* fold, RD over 8, back */
    CHECK(unicasts(TOPOMAP_COLL_ALLREDUCE, TOPOMAP_COLL_RABENSEIFNER, 8) == 2 * 8 * 3);
    CHECK(unicasts(TOPOMAP_COLL_ALLTOALL, TOPOMAP_COLL_PAIRWISE, 7) == 7 * 6);
    CHECK(unicasts(TOPOMAP_COLL_ALLGATHER, TOPOMAP_COLL_HIERARCHICAL, 16) == 12 + 4 * 2 + 12); /* ppn 4 */
    CHECK(unicasts(TOPOMAP_COLL_BCAST, TOPOMAP_COLL_BINOMIAL, 1) == 0);
}

static void test_errors(void)
{
    topomap_coll_schedule s;
    topomap_coll_spec sp = {TOPOMAP_COLL_ALLREDUCE, TOPOMAP_COLL_RING, 4, 0, 1, 0, 0, 0};
    CHECK(topomap_coll_build(&sp, &s) == TOPOMAP_EINVAL && strstr(topomap_last_error(), "allreduce"));
    sp = (topomap_coll_spec){TOPOMAP_COLL_BCAST, TOPOMAP_COLL_BINOMIAL, 0, 0, 1, 0, 0, 0};
    CHECK(topomap_coll_build(&sp, &s) == TOPOMAP_EINVAL && strstr(topomap_last_error(), "n = 0"));
    sp = (topomap_coll_spec){TOPOMAP_COLL_GATHER, TOPOMAP_COLL_BINOMIAL, 4, 4, 1, 0, 0, 0};
    CHECK(topomap_coll_build(&sp, &s) == TOPOMAP_EINVAL && strstr(topomap_last_error(), "root"));
    sp = (topomap_coll_spec){TOPOMAP_COLL_ALLGATHER, TOPOMAP_COLL_HIERARCHICAL, 4, 0, 0, 0, 0, 0};
    CHECK(topomap_coll_build(&sp, &s) == TOPOMAP_EINVAL && strstr(topomap_last_error(), "ppn"));
    sp = (topomap_coll_spec){TOPOMAP_COLL_ALLTOALL, TOPOMAP_COLL_PAIRWISE, 50000, 0, 1, 0, 0, 0};
    CHECK(topomap_coll_build(&sp, &s) == TOPOMAP_EINVAL && strstr(topomap_last_error(), "limit"));
    sp = (topomap_coll_spec){7, 0, 4, 0, 1, 0, 0, 0};
    CHECK(topomap_coll_build(&sp, &s) == TOPOMAP_EINVAL && strstr(topomap_last_error(), "operation"));
}

static void test_orders(void)
{
    int bad = 0;
    int32_t *order = malloc(600 * sizeof *order), *ref = malloc(600 * sizeof *ref);
    char *seen = malloc(600);
    for (int32_t h = TOPOMAP_COLL_RDMH; h <= TOPOMAP_COLL_BGMH; h++)
        for (int32_t p = 1; p <= 600; p++) {
            memset(seen, 0, 600);
            if (topomap_coll_order(h, p, order, ref) || order[0] != 0) {
                bad++;
                continue;
            }
            seen[0] = 1;
            for (int32_t t = 1; t < p; t++) {
                if (order[t] < 0 || order[t] >= p || seen[order[t]] || ref[t] < 0 || !seen[ref[t]]) bad++;
                else seen[order[t]] = 1;
            }
        }
    CHECK(bad == 0);
    CHECK(topomap_coll_order(9, 4, order, ref) == TOPOMAP_EINVAL);
    free(order);
    free(ref);
    free(seen);
}

/* 4 x 4 torus of nodes with 2 sockets x 2 cores (costs 1 inside a socket, 2
   across): every placement is at the least distance any free core had. */
static void test_place(void)
{
    static const int32_t groups[8] = {0, 0, 1, 1, 0, 0, 0, 0};
    static const double costs[2] = {1, 2};
    const topomap_node_tree tree = {4, 2, groups, costs};
    int32_t dims[2] = {4, 4}, p = 61, pes[64], new_of[64], order[64], ref[64];
    uint8_t wrap[2] = {1, 1};
    topomap_machine *m;
    CHECK(topomap_machine_create_torus(&tree, 2, dims, wrap, &m) == TOPOMAP_OK);
    for (int32_t i = 0; i < p; i++) pes[i] = (i * 37) % 64; /* a scrambled layout */
    int bad = 0;
    for (int32_t h = TOPOMAP_COLL_RDMH; h <= TOPOMAP_COLL_BGMH; h++) {
        char used[64] = {0};
        if (topomap_coll_reorder(m, pes, p, h, 7, new_of) || topomap_coll_order(h, p, order, ref) || new_of[0] != 0) {
            bad++;
            continue;
        }
        used[0] = 1;
        for (int32_t t = 1; t < p; t++) {
            int32_t at = pes[new_of[ref[t]]];
            double least = 1e300;
            for (int32_t q = 0; q < p; q++)
                if (!used[q] && topomap_machine_distance(m, at, pes[q]) < least) least = topomap_machine_distance(m, at, pes[q]);
            if (used[new_of[order[t]]] || topomap_machine_distance(m, at, pes[new_of[order[t]]]) != least) bad++;
            used[new_of[order[t]]] = 1;
        }
    }
    CHECK(bad == 0);
    pes[3] = pes[2];
    CHECK(topomap_coll_reorder(m, pes, p, TOPOMAP_COLL_RMH, 0, new_of) == TOPOMAP_EINVAL &&
          strstr(topomap_last_error(), "given twice"));
    topomap_machine_destroy(m);
}

int main(void)
{
    test_all();
    test_orders();
    test_place();
    test_totals();
    test_errors();
    return check_report();
}
