/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Cache-slot collisions of a set of physical pages (a job's, a step's),
 * per NUMA node behind a memory-side cache, with the definitions of
 * slots.h; and the cache geometry of each node from an administrator's
 * override or hwloc. */
#ifndef ZS_CONFLICTS_H
#define ZS_CONFLICTS_H

#include <stdbool.h>
#include <stdint.h>

#include "kpageflags.h"
#include "memcache.h"
#include "pagemap.h"
#include "slots.h"

struct zs_node_geom {
	int node;
	struct zs_slotgeom g;
	const char *source;	/* "hwloc", "policy" or "option" */
	char error[256];	/* non-empty: the node has a cache, but no usable geometry */
};

/* Cache geometry per node. cache_size and ways are the command-line
 * overrides (0 = not given), then o's cache_size= and ways=, then what
 * hwloc finds (through the per-boot copy in statedir unless refresh). A
 * size from an option or the site applies to every node with memory;
 * without one, only the nodes hwloc puts behind a memory-side cache are
 * listed. Fails when no node has a cache: err names what is missing. */
int zs_node_geoms(const struct zs_memcache_opts *o, bool refresh, uint64_t cache_size,
		  unsigned ways, struct zs_node_geom **out, unsigned *n, char *err);

/* The same from a discovery already made (memcache.h); size_what and
 * ways_what name where overrides came from in errors; source NULL = each
 * cache's own. */
int zs_node_geoms_from(const struct zs_memcache *mc, int nmc, const char *size_what,
		       const char *ways_what, const char *source, struct zs_node_geom **out,
		       unsigned *n, char *err);

const struct zs_node_geom *zs_node_geom_find(const struct zs_node_geom *g, unsigned n, int node);

#define ZS_WORST_SLOTS 10

struct zs_conflict_node {
	int node;
	struct zs_slotgeom g;
	struct zs_collisions c;
	double random_fraction;
	unsigned nworst;
	uint64_t worst_slot[ZS_WORST_SLOTS];
	uint32_t worst_count[ZS_WORST_SLOTS];
};

struct zs_conflict_report {
	unsigned nnodes;
	struct zs_conflict_node *nodes;
	uint64_t pages;		/* distinct pages on nodes with a cache */
	uint64_t conflicting, excess;
	uint64_t uncached;	/* pages on nodes without a cache */
	double fraction;	/* conflicting / pages */
	double random_fraction;	/* random placement, per node, weighted by pages */
};

/* Counts the collisions of the distinct frames in set (zs_pfnset_unique
 * first) on each node that has a usable geometry. */
int zs_conflicts_measure(const struct zs_pfnset *set, const struct zs_zone *zones,
			 unsigned nzones, const struct zs_node_geom *geoms, unsigned ngeoms,
			 struct zs_conflict_report *out, char *err);
void zs_conflict_report_free(struct zs_conflict_report *r);

#endif
