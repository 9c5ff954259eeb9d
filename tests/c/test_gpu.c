/* GPU node channel loads and MAGC's Alg. 5.1 (gpu_loads.c, magc_greedy.c) under the sanitizers. */
#include "check.h"
#include "topomap/error.h"
#include "topomap/gpu.h"

/* cpu(endpoint 0) -- gpu0 (endpoint 1), cpu -- gpu1 (endpoint 2), cpu -- nic (endpoint 3);
   channels 2l = cpu->x, 2l+1 = x->cpu, bandwidths 1, 1, 2, 2, 4, 4. */
static const double bw[6] = {1, 1, 2, 2, 4, 4};
static int64_t ptr[17];
static int32_t chan[32];

static void build(topomap_gpu_node *g)
{
    int vertex_link[4] = {-1, 0, 1, 2}; /* endpoint -> its link to the cpu (-1: the cpu itself) */
    int k = 0;
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 4; b++) {
            ptr[a * 4 + b] = k;
            if (a != b && vertex_link[a] >= 0) chan[k++] = 2 * vertex_link[a] + 1;
            if (a != b && vertex_link[b] >= 0) chan[k++] = 2 * vertex_link[b];
        }
    ptr[16] = k;
    *g = (topomap_gpu_node){4, 6, bw, ptr, chan};
}

int main(void)
{
    topomap_gpu_node g;
    build(&g);
    CHECK(topomap_gpu_node_check(&g) == TOPOMAP_OK);
    /* two processes on node 0 (gpu0, gpu1), one on node 1 (gpu0): 0->1 3 bytes, 0->2 5 bytes */
    int64_t ip[4] = {0, 2, 2, 2};
    int32_t ix[2] = {1, 2};
    double by[2] = {3, 5};
    topomap_pattern p = {3, ip, ix, by};
    int32_t node_of[3] = {0, 0, 1}, ep_of[3] = {1, 2, 1};
    double load[12];
    CHECK(topomap_gpu_loads(&g, 3, &p, node_of, ep_of, 2, load) == TOPOMAP_OK);
    double want[12] = {0, 8, 3, 0, 5, 0, /* node 1: */ 5, 0, 0, 0, 0, 5};
    for (int c = 0; c < 12; c++) CHECK(close_to(load[c], want[c]));
    ep_of[2] = 7;
    CHECK(topomap_gpu_loads(&g, 3, &p, node_of, ep_of, 2, load) == TOPOMAP_EINVAL);

    /* Alg. 5.1 by hand: step 0 has no mapped processes, delta = -(volume per unmapped
       neighbour) = -8, -5, -2, so process 2 goes first, onto the first candidate (gpu0, all
       costs 0).  Step 1: delta 0 - 8 = -8 for process 0, 2 - 8 = -6 for process 1, which goes
       next; gpu1 and the cpu both give max congestion 1 (1 byte over a 1 GB/s channel), the
       tie goes to the first free candidate, gpu1.  Process 0 takes the cpu. */
    double c[9] = {0, 4, 0, 4, 0, 1, 0, 1, 0};
    int32_t cand[3] = {1, 2, 0}, out[3], order[3];
    CHECK(topomap_magc_greedy(&g, 3, c, cand, 3, NULL, out, order) == TOPOMAP_OK);
    CHECK(order[0] == 2 && order[1] == 1 && order[2] == 0);
    CHECK(out[0] == 0 && out[1] == 2 && out[2] == 1);
    CHECK(topomap_magc_greedy(&g, 3, c, cand, 2, NULL, out, order) == TOPOMAP_EINVAL);
    c[1] = -1;
    CHECK(topomap_magc_greedy(&g, 3, c, cand, 3, NULL, out, order) == TOPOMAP_EINVAL);
    return check_report();
}
