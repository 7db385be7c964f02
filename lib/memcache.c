// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"
#include "memcache.h"
#include "errbuf.h"
#include "kpageflags.h"
#include "nodeset.h"
#include "statedir.h"
#include "textfile.h"

#include <dirent.h>
#include <errno.h>
#include <hwloc.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static unsigned topology_loads;

unsigned zs_memcache_topology_loads(void)
{
	return topology_loads;
}

/* The memory-side cache nearest to a NUMA node is its first MemCache
 * ancestor in hwloc's memory hierarchy. */
static hwloc_obj_t nearest_memcache(hwloc_obj_t numa)
{
	for (hwloc_obj_t o = numa->parent; o; o = o->parent) {
		if (o->type == HWLOC_OBJ_MEMCACHE)
			return o;
		if (!hwloc_obj_type_is_memory(o->type))
			break;
	}
	return NULL;
}

static int load_topology(hwloc_topology_t *topo, char *err)
{
	if (hwloc_topology_init(topo))
		return zs_fail(err, "hwloc_topology_init failed");
	/* MemCache objects are filtered out unless asked for. */
	hwloc_topology_set_type_filter(*topo, HWLOC_OBJ_MEMCACHE, HWLOC_TYPE_FILTER_KEEP_ALL);
	hwloc_topology_set_io_types_filter(*topo, HWLOC_TYPE_FILTER_KEEP_NONE);
	/* slurmstepd runs in the job's cpuset: without this flag hwloc hides
	 * the nodes the job may not use, and the per-boot copy written from a
	 * step would miss them until the next boot. */
	hwloc_topology_set_flags(*topo, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED);
	topology_loads++;
	if (hwloc_topology_load(*topo)) {
		hwloc_topology_destroy(*topo);
		return zs_fail(err, "hwloc could not load the topology");
	}
	return 0;
}

static const char *node_dir(const struct zs_memcache_opts *o)
{
	return o->node_sysfs[0] ? o->node_sysfs : "/sys/devices/system/node";
}

/* The first frame of the node's memory: its lowest memory block. */
static uint64_t node_first_pfn(const char *nodes, int node)
{
	uint64_t *ids = NULL, block_pages = 0, first = 0;
	size_t n = 0;

	if (!zs_node_memory_blocks(node, nodes, &ids, &n, &block_pages, NULL) && n)
		first = ids[0] * block_pages;
	free(ids);
	return first;
}

/* Whether the kernel describes the cache as extended-linear (ACPI 6.6 HMAT,
 * Linux 6.15+: memory_side_cache/indexN/address_mode reads 0x1), as Intel's
 * Flat Memory Mode is: near memory caches the far memory 1:1 and both are
 * in the node's address range, so X and X + size share a slot counted from
 * the range's start, not from frame 0. hwloc (2.x) reports such a cache as
 * an ordinary direct-mapped MemCache and does not read address_mode, so the
 * kernel's file is read here. */
static void read_address_mode(const char *nodes, struct zs_memcache *c)
{
	char path[PATH_MAX], text[32] = "";
	FILE *f;

	snprintf(path, sizeof(path), "%s/node%d/memory_side_cache/index%d/address_mode", nodes,
		 c->node, c->depth);
	f = fopen(path, "re");
	if (!f)
		return;
	if (fgets(text, sizeof(text), f) && strtoul(text, NULL, 0) == 1) {
		c->extended_linear = true;
		c->base_pfn = node_first_pfn(nodes, c->node);
	}
	fclose(f);
}

/* Every NUMA node with memory hwloc sees, with its nearest cache (size 0:
 * none), before any override: what the per-boot copy holds. */
static int discover_nodes(const struct zs_memcache_opts *o, struct zs_memcache **out,
			  int *count, char *err)
{
	hwloc_topology_t topo;
	int n = 0, nnuma;
	struct zs_memcache *mc;

	if (load_topology(&topo, err))
		return -1;
	nnuma = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
	mc = calloc(nnuma > 0 ? (size_t)nnuma : 1, sizeof(*mc));
	if (!mc) {
		hwloc_topology_destroy(topo);
		return zs_fail(err, "out of memory");
	}
	for (int i = 0; i < nnuma; i++) {
		hwloc_obj_t numa = hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, (unsigned)i);
		hwloc_obj_t c = nearest_memcache(numa);
		struct zs_memcache *m = &mc[n];

		if (!c && !numa->attr->numanode.local_memory)
			continue;
		m->node = (int)numa->os_index;
		m->source = "hwloc";
		m->depth = 1;
		if (c) {
			m->size = c->attr->cache.size;
			m->line_size = c->attr->cache.linesize;
			m->ways = c->attr->cache.associativity;
			m->depth = (int)c->attr->cache.depth;
			read_address_mode(node_dir(o), m);
		}
		n++;
	}
	hwloc_topology_destroy(topo);
	*out = mc;
	*count = n;
	return 0;
}

/* The caches to report: the nodes with one, or every node when the
 * administrator's cache_size assumes one; overrides applied. Consumes
 * nodes. */
static int select_caches(const struct zs_memcache_opts *o, struct zs_memcache *nodes, int n,
			 struct zs_memcache **out, int *count)
{
	bool assume = o->cache_size;
	int kept = 0;

	for (int i = 0; i < n; i++) {
		struct zs_memcache c = nodes[i];

		if (!c.size && !assume)
			continue;
		if (assume) {
			c.size = o->cache_size;
			c.source = "policy";
		}
		if (o->ways) {
			c.ways = (int)o->ways;
			c.source = "policy";
		}
		nodes[kept++] = c;
	}
	*out = nodes;
	*count = kept;
	return 0;
}

int zs_memcache_discover(const struct zs_memcache_opts *o, struct zs_memcache **out,
			 int *count, char *err)
{
	struct zs_memcache *nodes;
	int n;

	if (discover_nodes(o, &nodes, &n, err))
		return -1;
	return select_caches(o, nodes, n, out, count);
}

#define COPY_FORMAT "v2"

/* The copy: "boot <id> v2", then per NUMA node with memory
 * "node size line_size ways depth extended_linear base_pfn" (size 0: no
 * cache), as hwloc and the kernel said, before overrides. */
int zs_memcache_parse_copy(const char *text, const char *boot, struct zs_memcache **out,
			   int *count)
{
	char want[128];
	struct zs_memcache *mc = NULL;
	int n = 0;
	size_t hl;

	snprintf(want, sizeof(want), "boot %s " COPY_FORMAT "\n", boot);
	hl = strlen(want);
	if (strncmp(text, want, hl))
		return -1;
	for (const char *line = text + hl; *line;) {
		struct zs_memcache c = { .source = "hwloc" };
		unsigned long long size, base;
		int el, end = 0;
		struct zs_memcache *grown;

		if (sscanf(line, "%d %llu %u %d %d %d %llu%n", &c.node, &size, &c.line_size, &c.ways,
			   &c.depth, &el, &base, &end) != 7 || line[end] != '\n' || c.node < 0 ||
		    c.node > (int)ZS_MAX_NODE || (el != 0 && el != 1) || c.ways < -1 || c.depth < 0)
			goto bad;
		c.size = size;
		c.extended_linear = el;
		c.base_pfn = base;
		grown = realloc(mc, (size_t)(n + 1) * sizeof(*mc));
		if (!grown)
			goto bad;
		mc = grown;
		mc[n++] = c;
		line += end + 1;
	}
	*out = mc ? mc : calloc(1, sizeof(*mc));
	*count = n;
	return *out ? 0 : -1;
bad:
	free(mc);
	return -1;
}

static int read_copy(int dirfd, const char *name, struct zs_memcache **out, int *count)
{
	char boot[64], text[65536];

	if (zs_boot_id(boot, sizeof(boot)) || zs_textfile_read(dirfd, name, text, sizeof(text)) < 0)
		return -1;
	return zs_memcache_parse_copy(text, boot, out, count);
}

static void write_copy(int dirfd, const char *name, const struct zs_memcache *mc, int n)
{
	char boot[64], *text;
	size_t cap = 128 + (size_t)n * 128, used;

	if (zs_boot_id(boot, sizeof(boot)) || !(text = malloc(cap)))
		return;
	used = (size_t)snprintf(text, cap, "boot %s " COPY_FORMAT "\n", boot);
	for (int i = 0; i < n && used < cap; i++)
		used += (size_t)snprintf(text + used, cap - used, "%d %llu %u %d %d %d %llu\n", mc[i].node,
					 (unsigned long long)mc[i].size, mc[i].line_size, mc[i].ways,
					 mc[i].depth, mc[i].extended_linear ? 1 : 0,
					 (unsigned long long)mc[i].base_pfn);
	if (used < cap)
		zs_textfile_replace(dirfd, name, text, strlen(text), 0644, (uid_t)-1, NULL);
	free(text);
}

int zs_memcache_discover_cached(const struct zs_memcache_opts *o, bool refresh,
				struct zs_memcache **out, int *count, char *err)
{
	struct zs_memcache *nodes;
	int n, dirfd;

	if (o->statedir[0] != '/')
		return zs_fail(err, "statedir=%s: not an absolute path", o->statedir);
	dirfd = zs_statedir_open(o->statedir, true, err);
	if (dirfd == ZS_STATEDIR_REFUSED)
		return -1;
	/* One topology load at most, overrides or not: the copy lists every
	 * node with memory, so cache_size= can be applied to it. */
	if (refresh || dirfd < 0 || read_copy(dirfd, ZS_MEMCACHE_COPY, &nodes, &n)) {
		if (discover_nodes(o, &nodes, &n, err)) {
			if (dirfd >= 0)
				close(dirfd);
			return -1;
		}
		if (dirfd >= 0)
			write_copy(dirfd, ZS_MEMCACHE_COPY, nodes, n);
	}
	if (dirfd >= 0)
		close(dirfd);
	return select_caches(o, nodes, n, out, count);
}

const struct zs_memcache *zs_memcache_find(const struct zs_memcache *mc, int count, int node)
{
	for (int i = 0; i < count; i++)
		if (mc[i].node == node)
			return &mc[i];
	return NULL;
}
