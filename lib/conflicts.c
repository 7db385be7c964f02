// SPDX-License-Identifier: GPL-2.0-or-later
/* Cache-slot collisions of a set of pages, per node; see conflicts.h. */
#include "config.h"
#include "conflicts.h"
#include "errbuf.h"
#include "memcache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int zs_node_geoms_from(const struct zs_memcache *mc, int nmc, const char *size_what,
		       const char *ways_what, const char *source, struct zs_node_geom **out,
		       unsigned *n, char *err)
{
	struct zs_node_geom *g;
	unsigned page = (unsigned)sysconf(_SC_PAGESIZE);

	if (!nmc)
		return zs_fail(err, "no memory-side cache found (hwloc) and no cache size given: give --cache-size SIZE and --ways N (or the policy words cache_size= and ways=)");
	g = calloc((size_t)nmc, sizeof(*g));
	if (!g)
		return zs_fail(err, "out of memory");
	for (int i = 0; i < nmc; i++) {
		char e[ZS_ERRLEN];
		bool hw = !strcmp(mc[i].source, "hwloc");

		g[i].node = mc[i].node;
		g[i].source = source ? source : mc[i].source;
		if (mc[i].ways == 0)
			snprintf(g[i].error, sizeof(g[i].error),
				 "the associativity of node %d's memory-side cache is unknown: give --ways N (or ways=N; 1 = direct-mapped)",
				 mc[i].node);
		else if (mc[i].extended_linear && !mc[i].base_pfn)
			snprintf(g[i].error, sizeof(g[i].error),
				 "node %d's memory-side cache is extended-linear (Flat Memory Mode): its slots count from the node's first frame, which the kernel does not list (no memoryN blocks under node%d)",
				 mc[i].node, mc[i].node);
		else if (zs_slotgeom_init(&g[i].g, mc[i].size, mc[i].ways, page,
					  hw ? "cache size (hwloc)" : size_what,
					  hw ? "ways (hwloc)" : ways_what, e))
			snprintf(g[i].error, sizeof(g[i].error), "%s", e);
		else if (mc[i].extended_linear)
			g[i].g.base_pfn = mc[i].base_pfn;
	}
	*out = g;
	*n = (unsigned)nmc;
	return 0;
}

int zs_node_geoms(const struct zs_memcache_opts *o, bool refresh, uint64_t cache_size,
		  unsigned ways, struct zs_node_geom **out, unsigned *n, char *err)
{
	struct zs_memcache_opts mo = *o;
	struct zs_memcache *mc;
	int nmc, rc;

	if (cache_size)
		mo.cache_size = cache_size;
	if (ways)
		mo.ways = ways;
	if (zs_memcache_discover_cached(&mo, refresh, &mc, &nmc, err))
		return -1;
	rc = zs_node_geoms_from(mc, nmc, cache_size ? "--cache-size" : "cache_size=",
				ways ? "--ways" : "ways=", cache_size || ways ? "option" : NULL, out, n,
				err);
	free(mc);
	return rc;
}

const struct zs_node_geom *zs_node_geom_find(const struct zs_node_geom *g, unsigned n, int node)
{
	for (unsigned i = 0; i < n; i++)
		if (g[i].node == node)
			return &g[i];
	return NULL;
}

void zs_conflict_report_free(struct zs_conflict_report *r)
{
	free(r->nodes);
	memset(r, 0, sizeof(*r));
}

int zs_conflicts_measure(const struct zs_pfnset *set, const struct zs_zone *zones,
			 unsigned nzones, const struct zs_node_geom *geoms, unsigned ngeoms,
			 struct zs_conflict_report *out, char *err)
{
	uint32_t **counts;
	int last_node = -2;
	unsigned last_idx = 0;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	out->nodes = calloc(ngeoms ? ngeoms : 1, sizeof(*out->nodes));
	counts = calloc(ngeoms ? ngeoms : 1, sizeof(*counts));
	if (!out->nodes || !counts) {
		zs_fail(err, "out of memory");
		goto done;
	}
	for (unsigned i = 0; i < ngeoms; i++) {
		if (geoms[i].error[0])
			continue;
		counts[i] = calloc(geoms[i].g.nslots, sizeof(uint32_t));
		if (!counts[i]) {
			zs_fail(err, "out of memory for %llu slot counters",
				(unsigned long long)geoms[i].g.nslots);
			goto done;
		}
	}
	for (size_t k = 0; k < set->n; k++) {
		uint64_t pfn = set->pfn[k];
		int node = zs_pfn_node(zones, nzones, pfn);

		if (node != last_node) {
			last_node = node;
			last_idx = ngeoms;
			for (unsigned i = 0; i < ngeoms; i++)
				if (geoms[i].node == node && counts[i])
					last_idx = i;
		}
		if (last_idx == ngeoms) {
			out->uncached++;
			continue;
		}
		counts[last_idx][zs_slot_of(&geoms[last_idx].g, pfn)]++;
	}
	double weighted = 0.0;

	for (unsigned i = 0; i < ngeoms; i++) {
		struct zs_conflict_node *cn = &out->nodes[out->nnodes];

		if (!counts[i])
			continue;
		cn->node = geoms[i].node;
		cn->g = geoms[i].g;
		zs_collisions_count(counts[i], cn->g.nslots, cn->g.ways, &cn->c);
		cn->random_fraction = zs_random_conflict_fraction(cn->c.pages, cn->g.nslots, cn->g.ways);
		cn->nworst = zs_worst_slots(counts[i], cn->g.nslots, ZS_WORST_SLOTS, cn->worst_slot,
					    cn->worst_count);
		out->pages += cn->c.pages;
		out->conflicting += cn->c.conflicting;
		out->excess += cn->c.excess;
		weighted += cn->random_fraction * (double)cn->c.pages;
		out->nnodes++;
	}
	out->fraction = out->pages ? (double)out->conflicting / (double)out->pages : 0.0;
	out->random_fraction = out->pages ? weighted / (double)out->pages : 0.0;
	rc = 0;
done:
	if (counts)
		for (unsigned i = 0; i < ngeoms; i++)
			free(counts[i]);
	free(counts);
	if (rc)
		zs_conflict_report_free(out);
	return rc;
}
