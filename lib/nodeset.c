// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"
#include "nodeset.h"
#include "errbuf.h"
#include "memcache.h"
#include "parse.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Without NUMA support in the kernel libnuma reports unavailable; the
 * machine then has one node, 0. */
static bool numa_ok(void)
{
	static int avail = -2;

	if (avail == -2)
		avail = numa_available();
	return avail >= 0;
}

int zs_nodeset_max(void)
{
	return numa_ok() ? numa_max_node() : 0;
}

static bool node_exists(int node)
{
	if (!numa_ok())
		return node == 0;
	return node <= numa_max_node() && numa_bitmask_isbitset(numa_nodes_ptr, (unsigned)node);
}

static bool node_has_memory(int node)
{
	if (!numa_ok())
		return node == 0;
	return node_exists(node) && numa_node_size64(node, NULL) > 0;
}

static struct bitmask *new_mask(char *err)
{
	struct bitmask *b = numa_bitmask_alloc((unsigned)zs_nodeset_max() + 1);

	if (!b)
		zs_fail(err, "out of memory");
	return b;
}

struct parse_ctx {
	struct bitmask *b;
	const char *what, *list;
};

static int add_existing(void *ctx, unsigned lo, unsigned hi, char *err)
{
	struct parse_ctx *pc = ctx;
	char have[256];

	for (unsigned n = lo; n <= hi; n++) {
		if (!node_exists((int)n)) {
			struct bitmask *all = numa_ok() ? numa_nodes_ptr : NULL;

			if (all)
				zs_nodeset_format(all, have, sizeof(have));
			else
				snprintf(have, sizeof(have), "0");
			return zs_fail(err, "%s=%s: NUMA node %u does not exist on this host (it has nodes %s)",
				       pc->what, pc->list, n, have);
		}
		numa_bitmask_setbit(pc->b, n);
	}
	return 0;
}

struct bitmask *zs_nodeset_parse(const char *what, const char *s, char *err)
{
	struct parse_ctx pc = { .what = what, .list = s };

	pc.b = new_mask(err);
	if (!pc.b)
		return NULL;
	if (zs_parse_nodelist(what, s, ZS_MAX_NODE, add_existing, &pc, err)) {
		numa_bitmask_free(pc.b);
		return NULL;
	}
	return pc.b;
}

struct bitmask *zs_nodeset_targets(const char *nodes, const struct zs_memcache *mc,
				   int nmc, char *err)
{
	struct bitmask *b;

	if (strcmp(nodes, "auto") && strcmp(nodes, "all"))
		return zs_nodeset_parse("nodes", nodes, err);
	b = new_mask(err);
	if (!b)
		return NULL;
	if (!strcmp(nodes, "auto"))
		for (int i = 0; i < nmc; i++)
			if (node_has_memory(mc[i].node))
				numa_bitmask_setbit(b, (unsigned)mc[i].node);
	if (numa_bitmask_weight(b) == 0)
		for (int n = 0; n <= zs_nodeset_max(); n++)
			if (node_has_memory(n))
				numa_bitmask_setbit(b, (unsigned)n);
	return b;
}

const char *zs_nodeset_format(const struct bitmask *b, char *buf, unsigned len)
{
	size_t used = 0;
	int max = zs_nodeset_max();

	buf[0] = '\0';
	for (int n = 0; n <= max; n++) {
		int end;

		if (!numa_bitmask_isbitset(b, (unsigned)n))
			continue;
		for (end = n; end + 1 <= max && numa_bitmask_isbitset(b, (unsigned)end + 1); end++)
			;
		int w = end > n ? snprintf(buf + used, len - used, "%s%d-%d", used ? "," : "", n, end)
				: snprintf(buf + used, len - used, "%s%d", used ? "," : "", n);
		if (w < 0 || (size_t)w >= len - used)
			break;
		used += (size_t)w;
		n = end;
	}
	return buf;
}
