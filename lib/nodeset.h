/* SPDX-License-Identifier: GPL-2.0-or-later */
/* NUMA node sets (libnuma bitmasks): which nodes to sort. */
#ifndef ZS_NODESET_H
#define ZS_NODESET_H

#include <numa.h>

struct zs_memcache;

/* The highest NUMA node id Linux allows (MAX_NUMNODES is at most 1024). */
#define ZS_MAX_NODE 1023u

/* Parses "0-3,6" strictly into a new bitmask; every node must exist. */
struct bitmask *zs_nodeset_parse(const char *what, const char *s, char *err);

/* The nodes to sort for a nodes= setting: "auto" = the nodes behind a
 * memory-side cache, or every node with memory when there is none (what a
 * machine without a cache compacts with nocache=compact; by default the
 * sorter leaves such a machine alone, sorter.h); "all" = every node with
 * memory; otherwise a list. */
struct bitmask *zs_nodeset_targets(const char *nodes, const struct zs_memcache *mc,
				   int nmc, char *err);

/* "0-3,6" into buf. */
const char *zs_nodeset_format(const struct bitmask *b, char *buf, unsigned len);

/* Highest node id that can be set in a bitmask from this module. */
int zs_nodeset_max(void);

#endif
