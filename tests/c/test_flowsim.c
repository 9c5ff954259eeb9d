/* The flow simulator (flowsim.c) on small meshes, against times worked out
   by hand.  Mesh of n nodes in a line: link 2i goes i -> i+1, link 2i+1
   goes i -> i-1; every bandwidth 1e9 bytes/s unless said. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "topomap/topomap.h"
#include "topomap/flowsim.h"
#include "check.h"

#define MAXF 8
#define GB 1e9

static const int32_t flat1_groups[1] = {0};
static const double zero_cost[1] = {0};
static const topomap_node_tree flat1 = {1, 1, flat1_groups, zero_cost};

static topomap_machine *line(int32_t n)
{
    topomap_machine *m = NULL;
    uint8_t wrap = 0;
    CHECK(topomap_machine_create_torus(&flat1, 1, &n, &wrap, &m) == TOPOMAP_OK);
    return m;
}

/* A case: flows given by (src, dst, bytes), rank = PE, stage 0, no latency,
   no cap unless the test changes them. */
typedef struct {
    int32_t src[MAXF], dst[MAXF], stage[MAXF];
    double bytes[MAXF], lat[MAXF], cap[MAXF];
    double bw[64];
    topomap_flows fl;
    topomap_flowsim_options opt;
    double finish[4 * MAXF], stage_end[16], link_bytes[64];
    topomap_flowsim_result res;
} fcase;

static void setup(fcase *c, int32_t nf, const int32_t *src, const int32_t *dst, const double *bytes)
{
    memset(c, 0, sizeof *c);
    for (int32_t f = 0; f < nf; f++) {
        c->src[f] = src[f];
        c->dst[f] = dst[f];
        c->bytes[f] = bytes[f];
        c->cap[f] = INFINITY;
    }
    for (int i = 0; i < 64; i++) c->bw[i] = GB;
    c->fl = (topomap_flows){nf, c->src, c->dst, c->bytes, c->lat, c->cap, c->stage, c->src, c->dst, 1, 8};
    c->opt = (topomap_flowsim_options){c->bw, TOPOMAP_FLOWSIM_BARRIER, 1, 1};
    c->res = (topomap_flowsim_result){c->finish, c->stage_end, c->link_bytes, 0, 0, 0};
}

static int run(const topomap_machine *m, fcase *c) { return topomap_flowsim(m, &c->fl, &c->opt, NULL, &c->res); }

/* One link shared by 2 flows (1 GB each: 2 s) and by 3 (3 s). */
static void test_shared_link(void)
{
    topomap_machine *m = line(2);
    fcase c;
    setup(&c, 3, (const int32_t[]){0, 0, 0}, (const int32_t[]){1, 1, 1}, (const double[]){GB, GB, GB});
    c.fl.nflows = 2;
    CHECK(run(m, &c) == TOPOMAP_OK);
    CHECK(close_to(c.finish[0], 2) && close_to(c.finish[1], 2) && close_to(c.res.makespan, 2));
    CHECK(c.res.events == 2 && c.res.recomputes == 1); /* start at 0, one batch of finishes */
    c.fl.nflows = 3;
    CHECK(run(m, &c) == TOPOMAP_OK);
    CHECK(close_to(c.finish[0], 3) && close_to(c.finish[2], 3) && close_to(c.stage_end[0], 3));
    CHECK(c.link_bytes[0] == 3 * GB && c.link_bytes[1] == 0);
    topomap_machine_destroy(m);
}

/* The chain: 0->2, 1->3, 1->2, 0->1.  Link 1->2 carries three flows at 1/3
   each; 0->1 gets the 2/3 that 0->2 leaves on link 0->1 and ends at 1.5 s;
   the others stay at 1/3 (link 1->2 is still their bottleneck): 3 s.
   Equal sharing would give 0->1 half of link 0->1 (2 s).  Without sharing
   every flow runs at 1 GB/s: 1 s. */
static void test_chain(void)
{
    topomap_machine *m = line(4);
    fcase c;
    setup(&c, 4, (const int32_t[]){0, 1, 1, 0}, (const int32_t[]){2, 3, 2, 1}, (const double[]){GB, GB, GB, GB});
    CHECK(run(m, &c) == TOPOMAP_OK);
    CHECK(close_to(c.finish[0], 3) && close_to(c.finish[1], 3) && close_to(c.finish[2], 3));
    CHECK(close_to(c.finish[3], 1.5));
    CHECK(c.link_bytes[0] == 2 * GB && c.link_bytes[2] == 3 * GB && c.link_bytes[4] == GB);
    c.opt.share = 0;
    CHECK(run(m, &c) == TOPOMAP_OK);
    for (int f = 0; f < 4; f++) CHECK(close_to(c.finish[f], 1));
    CHECK(c.res.recomputes == 0);
    topomap_machine_destroy(m);
}

/* 1 GB and 3 GB on one link: 0.5 GB/s each until the first ends at 2 s,
   then the second has 2 GB left alone: 4 s.  A cap of 0.2 GB/s on a 1 GB
   flow leaves 0.8 to the other 1 GB flow (1.25 s); the capped one ends at 5 s. */
static void test_reshare_and_cap(void)
{
    topomap_machine *m = line(2);
    fcase c;
    setup(&c, 2, (const int32_t[]){0, 0}, (const int32_t[]){1, 1}, (const double[]){GB, 3 * GB});
    CHECK(run(m, &c) == TOPOMAP_OK);
    CHECK(close_to(c.finish[0], 2) && close_to(c.finish[1], 4));
    c.bytes[1] = GB;
    c.cap[0] = 0.2 * GB;
    CHECK(run(m, &c) == TOPOMAP_OK);
    CHECK(close_to(c.finish[0], 5) && close_to(c.finish[1], 1.25));
    topomap_machine_destroy(m);
}

/* Small messages: latency dominates.  8 bytes after 1 us at 1 GB/s: 1.008
   us; two of them share the link once both transfer (1.016 us); a 0-byte
   flow ends at its latency. */
static void test_latency(void)
{
    topomap_machine *m = line(2);
    fcase c;
    setup(&c, 3, (const int32_t[]){0, 0, 1}, (const int32_t[]){1, 1, 0}, (const double[]){8, 8, 0});
    c.lat[0] = c.lat[1] = 1e-6;
    c.lat[2] = 2e-6;
    CHECK(run(m, &c) == TOPOMAP_OK);
    CHECK(close_to(c.finish[0], 1.016e-6) && close_to(c.finish[1], 1.016e-6) && close_to(c.finish[2], 2e-6));
    c.lat[1] = 0;
    /* flow 1 alone for 1 us: done at 8 ns, before flow 0 starts */
    CHECK(run(m, &c) == TOPOMAP_OK);
    CHECK(close_to(c.finish[1], 8e-9) && close_to(c.finish[0], 1.008e-6));
    topomap_machine_destroy(m);
}

/* Two stages on a line of 4.  Stage 0: A 0->1 (2 GB, 2 s), B 2->3 (1 GB,
   1 s); stage 1: C 3->2, D 1->0 (1 GB each).  BARRIER: stage 1 starts at 2,
   both end at 3.  RANKS: rank 3 has B by 1, so C runs 1..2; rank 1 waits
   for A: D runs 2..3. */
static void test_stages(void)
{
    topomap_machine *m = line(4);
    fcase c;
    setup(&c, 4, (const int32_t[]){0, 2, 3, 1}, (const int32_t[]){1, 3, 2, 0}, (const double[]){2 * GB, GB, GB, GB});
    c.stage[2] = c.stage[3] = 1;
    c.fl.nstages = 2;
    c.fl.nranks = 4;
    CHECK(run(m, &c) == TOPOMAP_OK);
    CHECK(close_to(c.finish[0], 2) && close_to(c.finish[1], 1) && close_to(c.finish[2], 3) &&
          close_to(c.finish[3], 3));
    CHECK(close_to(c.stage_end[0], 2) && close_to(c.stage_end[1], 3));
    c.opt.sync = TOPOMAP_FLOWSIM_RANKS;
    CHECK(run(m, &c) == TOPOMAP_OK);
    CHECK(close_to(c.finish[0], 2) && close_to(c.finish[1], 1) && close_to(c.finish[2], 2) &&
          close_to(c.finish[3], 3));
    /* two iterations: stage 0 of iteration 1 follows stage 1 of iteration 0 */
    c.opt.sync = TOPOMAP_FLOWSIM_BARRIER;
    c.opt.iterations = 2;
    CHECK(run(m, &c) == TOPOMAP_OK);
    CHECK(close_to(c.finish[4 + 0], 5) && close_to(c.finish[4 + 1], 4) && close_to(c.finish[4 + 2], 6));
    CHECK(close_to(c.stage_end[2], 5) && close_to(c.stage_end[3], 6) && close_to(c.res.makespan, 6));
    /* an empty stage in between takes no time and ends when the one before does */
    c.stage[2] = c.stage[3] = 2;
    c.fl.nstages = 3;
    c.opt.iterations = 1;
    CHECK(run(m, &c) == TOPOMAP_OK);
    CHECK(close_to(c.stage_end[1], 2) && close_to(c.stage_end[2], 3));
    topomap_machine_destroy(m);
}

/* A rank that only sends runs ahead: in RANKS mode the three iterations of
   0 -> 1 all start at 0 and share the link (3 s each); with barriers they
   follow each other (1, 2, 3 s). */
static void test_iterations_overlap(void)
{
    topomap_machine *m = line(2);
    fcase c;
    setup(&c, 1, (const int32_t[]){0}, (const int32_t[]){1}, (const double[]){GB});
    c.opt.iterations = 3;
    CHECK(run(m, &c) == TOPOMAP_OK);
    CHECK(close_to(c.finish[0], 1) && close_to(c.finish[1], 2) && close_to(c.finish[2], 3));
    c.opt.sync = TOPOMAP_FLOWSIM_RANKS;
    CHECK(run(m, &c) == TOPOMAP_OK);
    CHECK(close_to(c.finish[0], 3) && close_to(c.finish[1], 3) && close_to(c.finish[2], 3));
    topomap_machine_destroy(m);
}

static void test_errors(void)
{
    topomap_machine *m = line(2);
    fcase c;
    setup(&c, 2, (const int32_t[]){0, 0}, (const int32_t[]){1, 7}, (const double[]){GB, GB});
    CHECK(run(m, &c) == TOPOMAP_EINVAL && strstr(topomap_last_error(), "flow 1: PE 7 outside 0..1"));
    c.dst[1] = 1;
    c.bytes[0] = NAN;
    CHECK(run(m, &c) == TOPOMAP_EINVAL && strstr(topomap_last_error(), "flow 0: bytes nan"));
    c.bytes[0] = GB;
    c.bw[0] = 0;
    CHECK(run(m, &c) == TOPOMAP_EINVAL && strstr(topomap_last_error(), "link 0 on the route of flow 0 has bandwidth 0"));
    c.bw[0] = GB;
    c.dst[1] = 0; /* inside node 0, no cap */
    CHECK(run(m, &c) == TOPOMAP_EINVAL && strstr(topomap_last_error(), "flow 1:"));
    c.cap[1] = 2 * GB; /* capped: 0.5 s */
    CHECK(run(m, &c) == TOPOMAP_OK && close_to(c.finish[1], 0.5) && close_to(c.finish[0], 1));
    c.stage[0] = 1;
    CHECK(run(m, &c) == TOPOMAP_EINVAL && strstr(topomap_last_error(), "flow 0: stage 1 outside 0..0"));
    topomap_machine_destroy(m);
}

static int cancel_at_once(void *ctx, double fraction) { return 1; }

/* Many distinct finish times (sizes 1..n GB on one link) call the progress
   callback; a true return cancels. */
static void test_cancel(void)
{
    enum { N = 200 };
    topomap_machine *m = line(2);
    int32_t *src = calloc(N, sizeof *src), *dst = malloc(N * sizeof *dst), *st = calloc(N, sizeof *st);
    double *b = malloc(N * sizeof *b), *lat = calloc(N, sizeof *lat), *cap = malloc(N * sizeof *cap);
    double *fin = malloc(N * sizeof *fin), se[1], bw[2] = {GB, GB};
    for (int i = 0; i < N; i++) {
        dst[i] = 1;
        b[i] = (i + 1) * GB;
        cap[i] = INFINITY;
    }
    topomap_flows fl = {N, src, dst, b, lat, cap, st, src, dst, 1, 2};
    topomap_flowsim_options o = {bw, TOPOMAP_FLOWSIM_BARRIER, 1, 1};
    topomap_flowsim_result r = {fin, se, NULL, 0, 0, 0};
    topomap_run_options run_opt = {0, cancel_at_once, NULL};
    CHECK(topomap_flowsim(m, &fl, &o, &run_opt, &r) == TOPOMAP_ECANCELED);
    /* without cancel: flow i (i+1 GB) ends when the i+1 smallest are done:
       sum_{j<=i} (j+1) + (N-1-i)(i+1) GB at 1 GB/s */
    CHECK(topomap_flowsim(m, &fl, &o, NULL, &r) == TOPOMAP_OK);
    int ok = 1;
    for (int i = 0; i < N; i++) ok &= close_to(fin[i], (i + 1) * (i + 2) / 2.0 + (double)(N - 1 - i) * (i + 1));
    CHECK(ok);
    CHECK(r.events == N + 1);
    free(src), free(dst), free(st), free(b), free(lat), free(cap), free(fin);
    topomap_machine_destroy(m);
}

int main(void)
{
    test_shared_link();
    test_chain();
    test_reshare_and_cap();
    test_latency();
    test_stages();
    test_iterations_overlap();
    test_errors();
    test_cancel();
    return check_report();
}
