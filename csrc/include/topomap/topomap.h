/* The topomap C core: topology-aware process mapping. */
#ifndef TOPOMAP_H
#define TOPOMAP_H
#include "error.h"
#include "rng.h"
#include "pattern.h"
#include "machine.h"
#include "graph.h"
#include "eval.h"
#include "map.h"
#include "partition.h"
#include "map_libtopomap.h"
#include "map_aphid.h"
#include "map_ptram.h"
#include "map_hierarchy.h"
#include "map_kumar.h"
#include "map_dualrb.h"
#endif
