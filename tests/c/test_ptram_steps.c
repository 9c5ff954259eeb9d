/* PTRAM's stepwise API (map_ptram.h, "Parallel decomposition"): the steps
   driven with the nodes split among 1..5 simulated leaders, each with its
   own state and in different interleavings, give exactly topomap_map_ptram's
   pe_of and trace, on a torus, a tree and a fat tree, partition and plateau
   on and off, every candidate bound, with partially used (unequal) nodes. */
#include <stdlib.h>
#include <string.h>
#include "topomap/topomap.h"
#include "check.h"

#define MAXL 5

typedef struct {
    int32_t *pe_of, *group, *order, *unit_node;
    double *round_mc;
    topomap_ptram_trace tr;
} run_out;

static void out_init(run_out *o, int32_t n, int32_t rounds)
{
    o->pe_of = malloc((size_t)n * sizeof(int32_t));
    o->group = malloc((size_t)n * sizeof(int32_t));
    o->order = malloc((size_t)n * sizeof(int32_t));
    o->unit_node = malloc((size_t)n * sizeof(int32_t));
    o->round_mc = malloc(((size_t)rounds + 1) * sizeof(double));
    o->tr = (topomap_ptram_trace){0, o->group, o->order, o->unit_node, o->round_mc, 0, 0, {0, 0, 0}};
}

static void out_free(run_out *o)
{
    free(o->pe_of);
    free(o->group);
    free(o->order);
    free(o->unit_node);
    free(o->round_mc);
}

static int same(const run_out *a, const run_out *b, int32_t n)
{
    int32_t nu = a->tr.nunits;
    return nu == b->tr.nunits && a->tr.rounds_done == b->tr.rounds_done &&
           a->tr.greedy_hybrid == b->tr.greedy_hybrid && !memcmp(a->pe_of, b->pe_of, (size_t)n * sizeof(int32_t)) &&
           !memcmp(a->group, b->group, (size_t)n * sizeof(int32_t)) &&
           !memcmp(a->order, b->order, (size_t)nu * sizeof(int32_t)) &&
           !memcmp(a->unit_node, b->unit_node, (size_t)nu * sizeof(int32_t)) &&
           !memcmp(a->round_mc, b->round_mc, ((size_t)a->tr.rounds_done + 1) * sizeof(double));
}

/* Drive L leaders; node j belongs to leader owner[j]; leaders take their
   turns in the order perm[] (a different interleaving per call). */
static int drive(const topomap_machine *m, const topomap_pattern *p, const int32_t *alloc, int32_t nalloc,
                 int32_t capacity, const topomap_ptram_options *opt, int32_t L, topomap_rng *r, run_out *outs)
{
    topomap_ptram_state *st[MAXL] = {0};
    int rc = topomap_ptram_begin(m, p, alloc, nalloc, capacity, opt, NULL, &st[0]);
    if (rc) return rc;
    for (int32_t i = 1; i < L && !rc; i++)
        rc = topomap_ptram_begin(m, p, alloc, nalloc, capacity, opt,
                                 opt->partition ? topomap_ptram_group(st[0]) : NULL, &st[i]);
    int32_t N = topomap_ptram_nnodes(st[0]), *owner = malloc((size_t)N * sizeof *owner);
    int32_t *nodes = malloc((size_t)N * sizeof *nodes), perm[MAXL];
    double *score = malloc((size_t)N * sizeof *score), *part = malloc((size_t)N * sizeof *part);
    topomap_ptram_try *kept = malloc((size_t)N * sizeof *kept);
    for (int32_t j = 0; j < N; j++) owner[j] = (int32_t)topomap_rng_below(r, (uint64_t)L);
    for (int32_t i = 0; i < L; i++) perm[i] = i;
    topomap_rng_shuffle_i32(r, perm, L);
    while (!rc) {
        int32_t unit = -1, u2;
        int needs = 0, n2;
        for (int32_t i = 0; i < L && !rc; i++) {
            rc = topomap_ptram_greedy_next(st[perm[i]], i ? &u2 : &unit, i ? &n2 : &needs);
            if (!rc && i) CHECK(u2 == unit && n2 == needs);
        }
        if (rc || unit < 0) break;
        for (int32_t i = 0; i < L && !rc && needs; i++) {
            int32_t c = 0, who = perm[i];
            for (int32_t j = 0; j < N; j++)
                if (owner[j] == who) nodes[c++] = j;
            rc = topomap_ptram_greedy_score(st[who], unit, nodes, c, part);
            for (int32_t t = 0; t < c; t++) score[nodes[t]] = part[t];
        }
        for (int32_t i = 0; i < L && !rc; i++) rc = topomap_ptram_greedy_place(st[perm[i]], unit, needs ? score : NULL);
    }
    while (!rc) {
        int go = 0, g2, applied = 0, a2;
        for (int32_t i = 0; i < L && !rc; i++) {
            rc = topomap_ptram_round_begin(st[perm[i]], i ? &g2 : &go);
            if (!rc && i) CHECK(g2 == go);
        }
        if (rc || !go) break;
        for (int32_t j = N - 1; j >= 0 && !rc; j--) rc = topomap_ptram_leader_search(st[owner[j]], j, &kept[j]);
        for (int32_t i = 0; i < L && !rc; i++) {
            rc = topomap_ptram_round_end(st[perm[i]], kept, i ? &a2 : &applied);
            if (!rc && i) CHECK(a2 == applied);
        }
    }
    for (int32_t i = 0; i < L && !rc; i++) rc = topomap_ptram_finish(st[i], outs[i].pe_of, &outs[i].tr);
    for (int32_t i = 0; i < L; i++) topomap_ptram_end(st[i]);
    free(owner);
    free(nodes);
    free(score);
    free(part);
    free(kept);
    return rc;
}

static void test_case(const topomap_machine *m, uint64_t seed)
{
    topomap_rng r;
    topomap_rng_seed(&r, seed);
    int32_t npes = topomap_machine_npes(m), n = 4 + (int32_t)topomap_rng_below(&r, 36);
    if (n > npes) n = npes;
    int64_t *indptr = calloc((size_t)n + 1, sizeof *indptr);
    int32_t *idx = malloc((size_t)n * n * sizeof *idx + 4);
    double *by = malloc((size_t)n * n * sizeof *by + 8), density = 0.05 + 0.3 * topomap_rng_uniform(&r);
    int64_t k = 0;
    for (int32_t i = 0; i < n; i++) {
        for (int32_t j = 0; j < n; j++)
            if (i != j && topomap_rng_uniform(&r) < density) {
                idx[k] = j;
                by[k++] = 1 + (double)topomap_rng_below(&r, 9);
            }
        indptr[i + 1] = k;
    }
    topomap_pattern p = {n, indptr, idx, by};
    int32_t *alloc = malloc((size_t)npes * sizeof *alloc);
    for (int32_t i = 0; i < npes; i++) alloc[i] = i;
    topomap_rng_shuffle_i32(&r, alloc, npes);
    int32_t nalloc = n + (int32_t)topomap_rng_below(&r, 3);
    if (nalloc > npes) nalloc = npes;
    for (int32_t partition = 0; partition < 2; partition++)
        for (int32_t plateau = 0; plateau < 2; plateau++) {
            topomap_ptram_options opt;
            topomap_ptram_options_init(&opt);
            opt.run.seed = seed;
            opt.partition = partition;
            opt.plateau = plateau;
            opt.k = 1 + (int32_t)topomap_rng_below(&r, 4);
            opt.candidates = (int32_t)topomap_rng_below(&r, 4) - 1; /* auto, every node, 1 or 2 */
            run_out ref, outs[MAXL];
            out_init(&ref, n, opt.rounds);
            opt.trace = &ref.tr;
            CHECK(topomap_map_ptram(m, &p, alloc, nalloc, 1, &opt, ref.pe_of) == 0);
            opt.trace = NULL;
            for (int32_t L = 1; L <= MAXL; L++) {
                for (int32_t i = 0; i < L; i++) out_init(&outs[i], n, opt.rounds);
                CHECK(drive(m, &p, alloc, nalloc, 1, &opt, L, &r, outs) == 0);
                for (int32_t i = 0; i < L; i++) {
                    CHECK(same(&ref, &outs[i], n));
                    out_free(&outs[i]);
                }
            }
            out_free(&ref);
        }
    free(indptr);
    free(idx);
    free(by);
    free(alloc);
}

/* Out-of-order calls and bad arguments fail with a message, not a crash. */
static void test_misuse(const topomap_machine *m)
{
    int64_t indptr[5] = {0, 1, 2, 3, 4};
    int32_t idx[4] = {1, 2, 3, 0}, alloc[4] = {0, 1, 2, 3}, bad_group[4] = {0, 0, 2, 2};
    double by[4] = {1, 1, 1, 1};
    topomap_pattern p = {4, indptr, idx, by};
    topomap_ptram_options opt;
    topomap_ptram_options_init(&opt);
    topomap_ptram_state *st = NULL;
    CHECK(topomap_ptram_begin(m, &p, alloc, 4, 1, &opt, bad_group, &st) == TOPOMAP_EINVAL && !st);
    opt.candidates = -2;
    CHECK(topomap_ptram_begin(m, &p, alloc, 4, 1, &opt, NULL, &st) == TOPOMAP_EINVAL && !st);
    CHECK(strstr(topomap_last_error(), "candidates = -2"));
    opt.candidates = -1;
    CHECK(topomap_ptram_begin(m, &p, alloc, 4, 1, &opt, NULL, &st) == 0);
    int go;
    int32_t unit, node = 99, pe_of[4];
    int needs;
    topomap_ptram_try t;
    CHECK(topomap_ptram_round_begin(st, &go) == TOPOMAP_EINVAL);
    CHECK(topomap_ptram_finish(st, pe_of, NULL) == TOPOMAP_EINVAL);
    CHECK(topomap_ptram_leader_search(st, 0, &t) == TOPOMAP_EINVAL);
    CHECK(topomap_ptram_greedy_next(st, &unit, &needs) == 0 && unit >= 0);
    double s;
    CHECK(topomap_ptram_greedy_score(st, unit, &node, 1, &s) == TOPOMAP_EINVAL);
    CHECK(topomap_ptram_greedy_place(st, unit + 1, NULL) == TOPOMAP_EINVAL);
    topomap_ptram_end(st);
    topomap_ptram_end(NULL);
}

int main(void)
{
    int32_t groups[8] = {0, 0, 1, 1, 0, 0, 0, 0}, single[1] = {0}, two[2] = {0, 0};
    double costs[2] = {1, 2};
    topomap_node_tree t4 = {4, 2, groups, costs}, t1 = {1, 1, single, costs}, t2 = {2, 1, two, costs};
    int32_t dims[2] = {3, 3}, ar[2] = {2, 3}, fm[2] = {4, 2}, fw[2] = {1, 2}, fp[2] = {1, 1};
    uint8_t wrap[2] = {1, 0};
    double tc[2] = {1, 10};
    topomap_machine *torus = NULL, *tree = NULL, *fat = NULL;
    CHECK(topomap_machine_create_torus(&t4, 2, dims, wrap, &torus) == 0);
    CHECK(topomap_machine_create_tree(&t1, 2, ar, tc, &tree) == 0);
    CHECK(topomap_machine_create_fattree(&t2, 2, fm, fw, fp, NULL, TOPOMAP_FATTREE_DMODK, &fat) == 0);
    test_misuse(tree);
    for (uint64_t s = 1; s <= 8; s++) {
        test_case(torus, s);
        test_case(tree, s);
        test_case(fat, s);
    }
    topomap_machine_destroy(torus);
    topomap_machine_destroy(tree);
    topomap_machine_destroy(fat);
    return check_report();
}
