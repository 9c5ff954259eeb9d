/* Shared by nbr_phase1.c (Alg. 1) and nbr_match.c (Alg. 2). */
#ifndef TOPOMAP_NBR_INTERNAL_H
#define TOPOMAP_NBR_INTERNAL_H
#include <stdint.h>

/* Alg. 2 over the ranks still in the Alg. 1 loop.  Rank p's current friends are
   flist[fptr[p] .. fptr[p] + flen[p]); the list is permuted in place.  C is the n x n
   common-neighbourhood count (row-major).  partner[p] gets the friend p paired with or -1;
   fin[p] the round p finished in.  Scratch: 5 n int32, (n + 1) int32, n int64. */
typedef struct {
    int32_t n;
    const int32_t *C;
    const int32_t *node; /* NULL or the node of each rank */
    int32_t *flist;
    const int64_t *fptr;
    const int32_t *flen;
    const int32_t *active; /* the ranks in the loop */
    int32_t nactive;
    int32_t *partner, *fin;
    int32_t *ncand, *choice, *old, *cptr, *chooser, *cursor;
    int64_t *keys; /* n scratch */
    const int32_t *distance; /* NULL or the nnodes x nnodes path cost between nodes */
    int32_t nnodes;
    int32_t rank_bits; /* bits of a rank (and of a common count) in a packed sort key */
} nbr_match_ctx;

/* 0, or TOPOMAP_EINVAL if the rounds exceed the bound that each round removes a candidate
   or ends a rank (which cannot happen: it guards the proof).  *rounds: rounds run;
   *messages: Alg. 2 messages (choice and status, each way, per friend pair per round). */
int nbr_match(nbr_match_ctx *m, int32_t *rounds, int64_t *messages);
#endif
