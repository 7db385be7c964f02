/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Memory-side caches in front of NUMA nodes, as hwloc sees them (it merges
 * the kernel's HMAT memory_side_cache sysfs and KNL's hwloc-dump-hwdata). */
#ifndef ZS_MEMCACHE_H
#define ZS_MEMCACHE_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

/* How to find the caches (plugstack.conf words, policy.h). All zero: ask
 * hwloc, read the kernel's files under /sys/devices/system/node. */
struct zs_memcache_opts {
	uint64_t cache_size;		/* cache_size=: assume a cache of this size on
					 * every node with memory, 0 = as found; a
					 * multiple of ways x page size */
	unsigned ways;			/* ways=: override, 0 = as found */
	char node_sysfs[PATH_MAX];	/* node_sysfs=, "" = /sys/devices/system/node */
	char statedir[PATH_MAX];	/* statedir=: where the per-boot copy is kept */
};

/* The per-boot copy's name in the state directory. */
#define ZS_MEMCACHE_COPY "memcache"

struct zs_memcache {
	int node;		/* OS index of the NUMA node behind the cache */
	uint64_t size;		/* bytes */
	unsigned line_size;	/* bytes, 0 if unknown */
	int ways;		/* 1 direct-mapped, -1 fully associative, 0 unknown */
	int depth;		/* 1 = nearest the memory */
	bool extended_linear;	/* Flat Memory Mode: slots count from base_pfn */
	uint64_t base_pfn;	/* first frame of the node's range (0 = unknown) */
	const char *source;	/* "hwloc" or "policy" (administrator override) */
};

/* Fills *out (caller frees) with one entry per NUMA node behind a memory-side
 * cache, the nearest cache level only, disallowed nodes included (a job's
 * cpuset does not change the machine). cache_size and ways, when set,
 * override what hwloc says, and cache_size applies to every node with
 * memory. An extended-linear cache is marked from the kernel's
 * address_mode file under node_sysfs. */
int zs_memcache_discover(const struct zs_memcache_opts *o, struct zs_memcache **out,
			 int *count, char *err);

/* As zs_memcache_discover, but through a copy kept in statedir
 * (ZS_MEMCACHE_COPY, see statedir.h) for the current boot: the hardware
 * does not change underneath a running kernel, and a topology load costs
 * milliseconds on every job. refresh = always ask hwloc and rewrite the
 * copy. Loads the topology at most once, overrides or not. A state
 * directory that cannot be trusted is an error; one that cannot be made
 * only costs the copy. */
int zs_memcache_discover_cached(const struct zs_memcache_opts *o, bool refresh,
				struct zs_memcache **out, int *count, char *err);

/* Parses the copy's text for this boot id; -1 when it is of another boot,
 * another format or garbled. */
int zs_memcache_parse_copy(const char *text, const char *boot, struct zs_memcache **out,
			   int *count);

/* How many times this process loaded an hwloc topology (tests count them). */
unsigned zs_memcache_topology_loads(void);

/* The entry for node, or NULL. */
const struct zs_memcache *zs_memcache_find(const struct zs_memcache *mc, int count,
					   int node);

#endif
