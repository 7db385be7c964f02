// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"
#include "memcache.h"
#include "errbuf.h"
#include "policy.h"

#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

static void apply_overrides(const struct zs_policy *p, struct zs_memcache *mc, int n)
{
	for (int i = 0; i < n; i++) {
		if (p && p->cache_size) {
			mc[i].size = p->cache_size;
			mc[i].source = "policy";
		}
		if (p && p->ways) {
			mc[i].ways = (int)p->ways;
			mc[i].source = "policy";
		}
	}
}

static int read_boot_id(char *buf, size_t len)
{
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");
	int ok = f && fgets(buf, (int)len, f);

	if (f)
		fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return ok ? 0 : -1;
}

/* The copy holds what hwloc said, before policy overrides: one line with
 * the boot id, then "node size line_size ways depth" per cache. */
static int read_copy(const char *path, struct zs_memcache **out, int *count)
{
	char boot[64], line[128], want[64];
	struct zs_memcache *mc = NULL;
	int n = 0;
	FILE *f;

	if (read_boot_id(want, sizeof(want)))
		return -1;
	f = fopen(path, "re");
	if (!f)
		return -1;
	if (!fgets(boot, sizeof(boot), f) || strncmp(boot, "boot ", 5) ||
	    (boot[strcspn(boot, "\n")] = '\0', strcmp(boot + 5, want)))
		goto stale;
	while (fgets(line, sizeof(line), f)) {
		struct zs_memcache c = { .source = "hwloc" };
		unsigned long long size;
		struct zs_memcache *grown;

		if (sscanf(line, "%d %llu %u %d %d", &c.node, &size, &c.line_size, &c.ways, &c.depth) != 5)
			goto stale;
		c.size = size;
		grown = realloc(mc, (size_t)(n + 1) * sizeof(*mc));
		if (!grown)
			goto stale;
		mc = grown;
		mc[n++] = c;
	}
	fclose(f);
	*out = mc ? mc : calloc(1, sizeof(*mc));
	*count = n;
	return *out ? 0 : -1;
stale:
	free(mc);
	fclose(f);
	return -1;
}

static void write_copy(const char *path, const struct zs_memcache *mc, int n)
{
	char boot[64], tmp[PATH_MAX + 8];
	FILE *f;

	if (read_boot_id(boot, sizeof(boot)))
		return;
	snprintf(tmp, sizeof(tmp), "%s.%d", path, (int)getpid());
	f = fopen(tmp, "we");
	if (!f)
		return;
	fprintf(f, "boot %s\n", boot);
	for (int i = 0; i < n; i++)
		fprintf(f, "%d %llu %u %d %d\n", mc[i].node, (unsigned long long)mc[i].size,
			mc[i].line_size, mc[i].ways, mc[i].depth);
	if (fclose(f) || rename(tmp, path))
		unlink(tmp);
}

int zs_memcache_discover_cached(const struct zs_policy *p, const char *path, bool refresh,
				struct zs_memcache **out, int *count, char *err)
{
	bool override = p && p->cache_size;

	/* An administrator's cache_size applies to nodes hwloc knows nothing
	 * of, which the copy does not list: ask hwloc. */
	if (!refresh && !override && !read_copy(path, out, count)) {
		apply_overrides(p, *out, *count);
		return 0;
	}
	if (zs_memcache_discover(NULL, out, count, err))
		return -1;
	write_copy(path, *out, *count);
	if (override) {
		free(*out);
		return zs_memcache_discover(p, out, count, err);
	}
	apply_overrides(p, *out, *count);
	return 0;
}

const struct zs_memcache *zs_memcache_find(const struct zs_memcache *mc, int count, int node)
{
	for (int i = 0; i < count; i++)
		if (mc[i].node == node)
			return &mc[i];
	return NULL;
}
