/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Memory-side caches in front of NUMA nodes, as hwloc sees them (it merges
 * the kernel's HMAT memory_side_cache sysfs and KNL's hwloc-dump-hwdata). */
#ifndef ZS_MEMCACHE_H
#define ZS_MEMCACHE_H

#include <stdbool.h>
#include <stdint.h>

struct zs_policy;

struct zs_memcache {
	int node;		/* OS index of the NUMA node behind the cache */
	uint64_t size;		/* bytes */
	unsigned line_size;	/* bytes, 0 if unknown */
	int ways;		/* 1 direct-mapped, -1 fully associative, 0 unknown */
	int depth;		/* 1 = nearest the memory */
	const char *source;	/* "hwloc" or "policy" (administrator override) */
};

/* Fills *out (caller frees) with one entry per NUMA node behind a memory-side
 * cache, the nearest cache level only. The policy's cache_size and ways, when
 * set, override what hwloc says and apply to every target node. */
int zs_memcache_discover(const struct zs_policy *p, struct zs_memcache **out,
			 int *count, char *err);

/* As zs_memcache_discover, but through a copy kept in path for the current
 * boot (the hardware does not change underneath a running kernel, and a
 * topology load costs milliseconds on every job). refresh = always ask
 * hwloc and rewrite the copy. */
int zs_memcache_discover_cached(const struct zs_policy *p, const char *path, bool refresh,
				struct zs_memcache **out, int *count, char *err);

/* The entry for node, or NULL. */
const struct zs_memcache *zs_memcache_find(const struct zs_memcache *mc, int count,
					   int node);

#endif
