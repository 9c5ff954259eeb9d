/* PTRAM (map_ptram.c): option checks, valid n-to-1 mappings under node
   capacities, determinism, the refinement's monotone MC and round limit,
   the greedy order, and cancellation from the progress callback. */
#include <stdlib.h>
#include <string.h>
#include "topomap/topomap.h"
#include "check.h"

typedef struct {
    int32_t n;
    int64_t *indptr;
    int32_t *idx;
    double *by;
} rpattern;

static rpattern random_pattern(topomap_rng *r, int32_t n, double density)
{
    rpattern rp = {n, calloc((size_t)n + 1, sizeof(int64_t)), malloc((size_t)n * n * sizeof(int32_t) + 4),
                   malloc((size_t)n * n * sizeof(double) + 8)};
    int64_t k = 0;
    for (int32_t i = 0; i < n; i++) {
        for (int32_t j = 0; j < n; j++)
            if (i != j && topomap_rng_uniform(r) < density) {
                rp.idx[k] = j;
                rp.by[k++] = 1 + (double)topomap_rng_below(r, 20);
            }
        rp.indptr[i + 1] = k;
    }
    return rp;
}

static void free_pattern(rpattern *rp)
{
    free(rp->indptr);
    free(rp->idx);
    free(rp->by);
}

/* pe_of within the allocation, at most `capacity` processes per PE */
static int valid(const int32_t *pe_of, int32_t n, const int32_t *alloc, int32_t nalloc, int32_t capacity)
{
    int ok = 1;
    for (int32_t a = 0; a < nalloc && ok; a++) {
        int32_t c = 0;
        for (int32_t i = 0; i < n; i++) c += pe_of[i] == alloc[a];
        ok = c <= capacity;
    }
    for (int32_t i = 0; i < n && ok; i++) {
        int found = 0;
        for (int32_t a = 0; a < nalloc; a++) found |= pe_of[i] == alloc[a];
        ok = found;
    }
    return ok;
}

static void test_options(const topomap_machine *m)
{
    int64_t ip[3] = {0, 1, 2};
    int32_t ix[2] = {1, 0}, alloc[2] = {0, 1}, pe_of[2];
    double by[2] = {1, 1};
    topomap_pattern p = {2, ip, ix, by};
    topomap_ptram_options o;
    topomap_ptram_options_init(&o);
    CHECK(o.k == TOPOMAP_PTRAM_DEFAULT_K && o.rounds == 10 && o.partition == 1 && o.plateau == 0 && o.weights[3] == 1);
    CHECK(topomap_map_ptram(m, &p, alloc, 2, 1, NULL, pe_of) == 0);
    o.k = 0;
    CHECK(topomap_map_ptram(m, &p, alloc, 2, 1, &o, pe_of) == TOPOMAP_EINVAL);
    CHECK(strstr(topomap_last_error(), "k = 0") != NULL);
    topomap_ptram_options_init(&o);
    o.rounds = -1;
    CHECK(topomap_map_ptram(m, &p, alloc, 2, 1, &o, pe_of) == TOPOMAP_EINVAL);
    CHECK(strstr(topomap_last_error(), "rounds = -1") != NULL);
    topomap_ptram_options_init(&o);
    o.weights[2] = -1;
    CHECK(topomap_map_ptram(m, &p, alloc, 2, 1, &o, pe_of) == TOPOMAP_EINVAL);
    CHECK(strstr(topomap_last_error(), "weights[2]") != NULL);
    topomap_ptram_options_init(&o);
    o.partition = 2;
    CHECK(topomap_map_ptram(m, &p, alloc, 2, 1, &o, pe_of) == TOPOMAP_EINVAL);
    topomap_ptram_options_init(&o);
    o.plateau = -1;
    CHECK(topomap_map_ptram(m, &p, alloc, 2, 1, &o, pe_of) == TOPOMAP_EINVAL);
    /* 3 processes, 2 slots */
    int64_t ip3[4] = {0, 1, 2, 2};
    topomap_pattern p3 = {3, ip3, ix, by};
    CHECK(topomap_map_ptram(m, &p3, alloc, 2, 1, NULL, pe_of) == TOPOMAP_EINVAL);
}

static int stop_at(void *ctx, double fraction)
{
    int *calls = ctx;
    (*calls)++;
    return fraction > 0.3;
}

static void test_cancel(const topomap_machine *m)
{
    topomap_rng r;
    topomap_rng_seed(&r, 99);
    rpattern rp = random_pattern(&r, 120, 0.3);
    topomap_pattern p = {rp.n, rp.indptr, rp.idx, rp.by};
    int32_t npes = topomap_machine_npes(m), *alloc = malloc((size_t)npes * sizeof *alloc);
    int32_t *pe_of = malloc(120 * sizeof *pe_of);
    for (int32_t i = 0; i < npes; i++) alloc[i] = i;
    int calls = 0;
    topomap_ptram_options o;
    topomap_ptram_options_init(&o);
    o.partition = 0;
    o.run.progress = stop_at;
    o.run.progress_ctx = &calls;
    CHECK(topomap_map_ptram(m, &p, alloc, npes, 4, &o, pe_of) == TOPOMAP_ECANCELED);
    CHECK(calls > 0);
    CHECK(strstr(topomap_last_error(), "cancelled") != NULL);
    free(alloc);
    free(pe_of);
    free_pattern(&rp);
}

static void test_random(const topomap_machine *m, uint64_t seed)
{
    topomap_rng r;
    topomap_rng_seed(&r, seed);
    int32_t n = 4 + (int32_t)topomap_rng_below(&r, 40), npes = topomap_machine_npes(m);
    rpattern rp = random_pattern(&r, n, 0.05 + 0.4 * topomap_rng_uniform(&r));
    topomap_pattern p = {n, rp.indptr, rp.idx, rp.by};
    int32_t capacity = 1 + (int32_t)topomap_rng_below(&r, 2);
    /* a random allocation of just enough PEs (often a partially used node) */
    int32_t nalloc = (n + capacity - 1) / capacity + (int32_t)topomap_rng_below(&r, 3);
    if (nalloc > npes) nalloc = npes;
    int32_t *alloc = malloc((size_t)npes * sizeof *alloc);
    for (int32_t i = 0; i < npes; i++) alloc[i] = i;
    topomap_rng_shuffle_i32(&r, alloc, npes);
    int32_t rounds = (int32_t)topomap_rng_below(&r, 4);
    int32_t *pe_of = malloc((size_t)n * sizeof *pe_of), *again = malloc((size_t)n * sizeof *again);
    int32_t *group = malloc((size_t)n * sizeof *group), *order = malloc((size_t)n * sizeof *order);
    int32_t *unit_node = malloc((size_t)n * sizeof *unit_node);
    double *round_mc = malloc(((size_t)rounds + 1) * sizeof *round_mc);
    for (int32_t partition = 0; partition < 2; partition++)
        for (int32_t plateau = 0; plateau < 2; plateau++) {
            topomap_ptram_trace tr = {0, group, order, unit_node, round_mc, 0, 0, {0, 0, 0}};
            topomap_ptram_options o;
            topomap_ptram_options_init(&o);
            o.run.seed = seed;
            o.rounds = rounds;
            o.k = 1 + (int32_t)topomap_rng_below(&r, 4);
            o.partition = partition;
            o.plateau = plateau;
            o.trace = &tr;
            int rc = topomap_map_ptram(m, &p, alloc, nalloc, capacity, &o, pe_of);
            if (n > nalloc * capacity) { /* too many processes: the message says so */
                CHECK(rc == TOPOMAP_EINVAL && strstr(topomap_last_error(), "do not fit") != NULL);
                continue;
            }
            CHECK(rc == 0);
            if (rc) {
                fprintf(stderr, "%s\n", topomap_last_error());
                continue;
            }
            CHECK(valid(pe_of, n, alloc, nalloc, capacity));
            /* every unit placed once by the greedy step */
            CHECK(tr.nunits >= 1 && tr.nunits <= n && (partition || tr.nunits == n));
            int32_t *seen = calloc((size_t)tr.nunits, sizeof *seen);
            for (int32_t s = 0; s < tr.nunits; s++)
                if (order[s] >= 0 && order[s] < tr.nunits) seen[order[s]]++;
            for (int32_t u = 0; u < tr.nunits; u++) CHECK(seen[u] == 1);
            free(seen);
            /* a process runs on its unit's node; a node hosts one group when grouping */
            for (int32_t i = 0; i < n; i++)
                for (int32_t j = 0; j < n; j++)
                    if (group[i] == group[j])
                        CHECK(topomap_machine_node_of(m, pe_of[i]) == topomap_machine_node_of(m, pe_of[j]));
                    else if (partition)
                        CHECK(unit_node[group[i]] != unit_node[group[j]]);
            /* the refinement never raises MC, stops within `rounds`, and ends at the final MC */
            CHECK(tr.rounds_done >= 0 && tr.rounds_done <= rounds);
            for (int32_t x = 0; x < tr.rounds_done; x++) CHECK(round_mc[x + 1] <= round_mc[x]);
            if (!plateau)
                for (int32_t x = 0; x < tr.rounds_done; x++) CHECK(round_mc[x + 1] < round_mc[x]);
            topomap_metrics mt;
            CHECK(topomap_evaluate(m, &p, pe_of, NULL, &mt, NULL) == 0);
            CHECK(close_to(mt.max_congestion, round_mc[tr.rounds_done]));
            /* same seed, same mapping */
            o.trace = NULL;
            CHECK(topomap_map_ptram(m, &p, alloc, nalloc, capacity, &o, again) == 0);
            CHECK(memcmp(pe_of, again, (size_t)n * sizeof *pe_of) == 0);
        }
    free(pe_of);
    free(again);
    free(group);
    free(order);
    free(unit_node);
    free(round_mc);
    free(alloc);
    free_pattern(&rp);
}

int main(void)
{
    int32_t groups[8] = {0, 0, 1, 1, 0, 0, 0, 0}, single[1] = {0};
    double costs[2] = {1, 2};
    topomap_node_tree t4 = {4, 2, groups, costs}, t1 = {1, 1, single, costs};
    int32_t dims[2] = {4, 3};
    uint8_t wrap[2] = {1, 0};
    topomap_machine *torus = NULL, *tree = NULL;
    CHECK(topomap_machine_create_torus(&t4, 2, dims, wrap, &torus) == 0);
    int32_t ar[2] = {2, 3};
    double tc[2] = {1, 10};
    CHECK(topomap_machine_create_tree(&t1, 2, ar, tc, &tree) == 0);
    test_options(tree);
    test_cancel(torus);
    for (uint64_t s = 1; s <= 40; s++) {
        test_random(torus, s);
        test_random(tree, s);
    }
    topomap_machine_destroy(torus);
    topomap_machine_destroy(tree);
    return check_report();
}
