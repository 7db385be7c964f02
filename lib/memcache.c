// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"
#include "memcache.h"
#include "errbuf.h"
#include "policy.h"

#include <hwloc.h>
#include <stdlib.h>

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
	if (hwloc_topology_load(*topo)) {
		hwloc_topology_destroy(*topo);
		return zs_fail(err, "hwloc could not load the topology");
	}
	return 0;
}

int zs_memcache_discover(const struct zs_policy *p, struct zs_memcache **out,
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
		bool override = p && p->cache_size;

		if (!c && !override)
			continue;
		mc[n].node = (int)numa->os_index;
		mc[n].size = c ? c->attr->cache.size : 0;
		mc[n].line_size = c ? c->attr->cache.linesize : 0;
		mc[n].ways = c ? c->attr->cache.associativity : 0;
		mc[n].depth = c ? (int)c->attr->cache.depth : 1;
		mc[n].source = c ? "hwloc" : "policy";
		if (override) {
			mc[n].size = p->cache_size;
			mc[n].source = "policy";
		}
		if (p && p->ways) {
			mc[n].ways = (int)p->ways;
			mc[n].source = "policy";
		}
		n++;
	}
	hwloc_topology_destroy(topo);
	*out = mc;
	*count = n;
	return 0;
}

const struct zs_memcache *zs_memcache_find(const struct zs_memcache *mc, int count, int node)
{
	for (int i = 0; i < count; i++)
		if (mc[i].node == node)
			return &mc[i];
	return NULL;
}
