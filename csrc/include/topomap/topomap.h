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
#endif
