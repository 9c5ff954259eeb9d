/* Phase 1 of message combining (nbr_phase1.c, nbr_match.c): golden patterns worked by hand. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "topomap/error.h"
#include "topomap/neighborhood.h"

/* Ranks 0 and 1 both send to 2..5 (4 common neighbours = theta): one pair, 0 onloads {2, 3},
   1 onloads {4, 5}; nothing is left to send directly. */
static void two_friends(void)
{
    int64_t ptr[] = {0, 4, 8, 8, 8, 8, 8};
    int32_t idx[] = {2, 3, 4, 5, 2, 3, 4, 5};
    topomap_nbr_input in = {6, ptr, idx, 4, 0, NULL, NULL, NULL, NULL, 0, 0};
    topomap_nbr_result r;
    CHECK(topomap_nbr_phase1(&in, &r) == TOPOMAP_OK);
    CHECK(r.nsteps == 2 && r.iterations == 1);
    CHECK(r.step_ptr[1] == 1 && r.step_ptr[2] == 2 && r.step_ptr[6] == 2);
    CHECK(r.step_friend[0] == 1 && r.step_friend[1] == 0 && r.step_iter[0] == 0);
    CHECK(r.on_ptr[1] == 2 && r.on_idx[0] == 2 && r.on_idx[1] == 3 && r.on_idx[2] == 4 && r.on_idx[3] == 5);
    CHECK(r.final_ptr[6] == 0);
    CHECK(r.friends0[0] == 1 && r.friends0[2] == 0);
    /* one Alg. 2 round: a choice and a status each way = 2 messages per rank */
    CHECK(r.it_rounds[0] == 1 && r.it_messages[0] == 4 && r.it_pairs[0] == 1);
    topomap_nbr_free(&r);
    /* theta 5: no friends, everything direct */
    in.theta = 5;
    CHECK(topomap_nbr_phase1(&in, &r) == TOPOMAP_OK);
    CHECK(r.nsteps == 0 && r.iterations == 0 && r.final_ptr[1] == 4 && r.final_ptr[2] == 8);
    topomap_nbr_free(&r);
}

/* Odd |CN| = 5: the lower rank takes ceil(5/2) = 3, the first three in rank order. */
static void odd_split(void)
{
    int64_t ptr[] = {0, 5, 10, 10, 10, 10, 10, 10};
    int32_t idx[] = {6, 5, 4, 3, 2, 2, 3, 4, 5, 6};
    topomap_nbr_input in = {7, ptr, idx, 4, 0, NULL, NULL, NULL, NULL, 0, 0};
    topomap_nbr_result r;
    CHECK(topomap_nbr_phase1(&in, &r) == TOPOMAP_OK);
    CHECK(r.nsteps == 2 && r.on_ptr[1] == 3 && r.on_ptr[2] == 5);
    CHECK(r.on_idx[0] == 2 && r.on_idx[2] == 4 && r.on_idx[3] == 5 && r.on_idx[4] == 6);
    topomap_nbr_free(&r);
}

/* A chain of friends 0-1-2 with weights 5 (0,1) and 4 (1,2): round 0 pairs 0 and 1; rank 2
   loses its only candidate and turns terminal in round 1.  The next iteration has no friends. */
static void chain(void)
{
    /* 0 -> 3..7, 1 -> 3..7 and 8, 2 -> 5..8 */
    int64_t ptr[] = {0, 5, 11, 15, 15, 15, 15, 15, 15, 15};
    int32_t idx[] = {3, 4, 5, 6, 7, 3, 4, 5, 6, 7, 8, 5, 6, 7, 8};
    topomap_nbr_input in = {9, ptr, idx, 4, 0, NULL, NULL, NULL, NULL, 0, 0};
    topomap_nbr_result r;
    CHECK(topomap_nbr_phase1(&in, &r) == TOPOMAP_OK);
    CHECK(r.iterations == 1 && r.it_rounds[0] == 2 && r.it_pairs[0] == 1);
    CHECK(r.step_friend[0] == 1 && r.step_ptr[3] == 2);
    /* 1 keeps 8; 2 keeps 5..8 */
    CHECK(r.final_ptr[2] - r.final_ptr[1] == 1 && r.final_idx[r.final_ptr[1]] == 8);
    CHECK(r.final_ptr[3] - r.final_ptr[2] == 4);
    /* messages: pair (0,1) 1 round, (1,2) 1 round (1 finishes in round 0): 2 * 2 * 2 = 8 */
    CHECK(r.it_messages[0] == 8);
    CHECK(r.alg2_rounds[2] == 2 && r.done_iter[2] == 1 && r.done_iter[0] == 1 && r.done_iter[5] == 0);
    topomap_nbr_free(&r);
}

/* Path-cost-aware choice: 0 shares 5 destinations with 1 (3 hops away) and 4 with 2 (1 hop):
   the paper pairs 0-1, the node distance pairs 0-2 (0 onloads {3, 4}, 2 onloads {5, 6}). */
static void path_cost(void)
{
    int64_t ptr[] = {0, 5, 10, 14, 14, 14, 14, 14, 14};
    int32_t idx[] = {3, 4, 5, 6, 7, 3, 4, 5, 6, 7, 3, 4, 5, 6};
    int32_t node[] = {0, 1, 2, 0, 0, 0, 0, 0}, dist[] = {0, 3, 1, 3, 0, 2, 1, 2, 0};
    topomap_nbr_input in = {8, ptr, idx, 4, 0, NULL, NULL, NULL, NULL, 0, 0};
    topomap_nbr_result r;
    CHECK(topomap_nbr_phase1(&in, &r) == TOPOMAP_OK && r.step_friend[0] == 1);
    topomap_nbr_free(&r);
    in.node = node;
    in.distance = dist;
    in.nnodes = 3;
    CHECK(topomap_nbr_phase1(&in, &r) == TOPOMAP_OK);
    CHECK(r.step_ptr[1] == 1 && r.step_friend[0] == 2 && r.step_ptr[2] == 1);
    CHECK(r.on_idx[0] == 3 && r.on_idx[1] == 4 && r.on_idx[2] == 5 && r.on_idx[3] == 6);
    CHECK(r.final_ptr[1] == 1 && r.final_idx[0] == 7 && r.final_ptr[2] - r.final_ptr[1] == 5);
    topomap_nbr_free(&r);
    dist[1] = 4; /* asymmetric */
    CHECK(topomap_nbr_phase1(&in, &r) == TOPOMAP_EINVAL && strstr(topomap_last_error(), "symmetric"));
    topomap_nbr_free(&r);
    dist[1] = 3;
    node[2] = 3;
    CHECK(topomap_nbr_phase1(&in, &r) == TOPOMAP_EINVAL && strstr(topomap_last_error(), "outside"));
    topomap_nbr_free(&r);
    node[2] = 2;
    in.node = NULL;
    CHECK(topomap_nbr_phase1(&in, &r) == TOPOMAP_EINVAL && strstr(topomap_last_error(), "node of each rank"));
    topomap_nbr_free(&r);
}

/* Cumulative combining: 0, 1, 2 all send to 3..6 (theta 2).  Iteration 0 pairs 0-1 (0 takes
   on {3, 4}, 1 {5, 6}), and 2 finds no partner.  The paper's algorithm stops there (2 sends its
   four directly); cumulatively 0 and 1 keep what they took on, so 0 and 2 still share {3, 4}
   (iteration 1: 0 takes 3, 2 takes 4) and then 1 and 2 share {5, 6} (iteration 2: 1 takes 5,
   2 takes 6).  Nothing is sent directly: every destination gets one message of all three. */
static void cumulative(void)
{
    int64_t ptr[] = {0, 4, 8, 12, 12, 12, 12, 12};
    int32_t idx[] = {3, 4, 5, 6, 3, 4, 5, 6, 6, 5, 4, 3};
    topomap_nbr_input in = {7, ptr, idx, 2, 0, NULL, NULL, NULL, NULL, 0, 0};
    topomap_nbr_result r;
    CHECK(topomap_nbr_phase1(&in, &r) == TOPOMAP_OK);
    CHECK(r.iterations == 1 && r.nsteps == 2 && r.final_ptr[3] - r.final_ptr[2] == 4);
    topomap_nbr_free(&r);
    in.cumulative = 1;
    CHECK(topomap_nbr_phase1(&in, &r) == TOPOMAP_OK);
    CHECK(r.iterations == 3 && r.nsteps == 6 && r.final_ptr[7] == 0);
    CHECK(r.step_ptr[1] == 2 && r.step_ptr[2] == 4 && r.step_ptr[3] == 6);
    int32_t iter[] = {0, 1, 0, 2, 1, 2}, fr[] = {1, 2, 0, 2, 0, 1};
    int64_t on_ptr[] = {0, 2, 3, 5, 6, 7, 8};
    int32_t on[] = {3, 4, 3, 5, 6, 5, 4, 6};
    for (int i = 0; i < 6; i++) CHECK(r.step_iter[i] == iter[i] && r.step_friend[i] == fr[i]);
    for (int i = 0; i < 7; i++) CHECK(r.on_ptr[i] == on_ptr[i]);
    for (int i = 0; i < 8; i++) CHECK(r.on_idx[i] == on[i]);
    CHECK(r.done_iter[0] == 2 && r.done_iter[1] == 3 && r.done_iter[2] == 3);
    topomap_nbr_free(&r);
}

static void errors(void)
{
    int64_t ptr[] = {0, 2, 2};
    int32_t dup[] = {1, 1}, out[] = {0, 2};
    topomap_nbr_input in = {2, ptr, dup, 4, 0, NULL, NULL, NULL, NULL, 0, 0};
    topomap_nbr_result r;
    CHECK(topomap_nbr_phase1(&in, &r) == TOPOMAP_EINVAL && strstr(topomap_last_error(), "twice"));
    topomap_nbr_free(&r);
    in.out_idx = out;
    CHECK(topomap_nbr_phase1(&in, &r) == TOPOMAP_EINVAL && strstr(topomap_last_error(), "outside"));
    topomap_nbr_free(&r);
    in.theta = 0;
    CHECK(topomap_nbr_phase1(&in, &r) == TOPOMAP_EINVAL && strstr(topomap_last_error(), "theta"));
    topomap_nbr_free(&r);
}

int main(void)
{
    two_friends();
    odd_split();
    chain();
    path_cost();
    cumulative();
    errors();
    return check_report();
}
