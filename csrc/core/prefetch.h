/* Prefetching for loops that visit vertices in random order: the offsets
   of the vertex AHEAD_OFFSETS visits ahead, its row AHEAD_ROW visits ahead
   (the row's address needs its offsets first). */
#ifndef TOPOMAP_PREFETCH_H
#define TOPOMAP_PREFETCH_H

#if defined(__GNUC__)
#define PREFETCH(p) __builtin_prefetch(p)
#else
#define PREFETCH(p) ((void)(p))
#endif
enum { AHEAD_ROW = 8, AHEAD_OFFSETS = 16 };

#endif
