// SPDX-License-Identifier: GPL-2.0-or-later
/* The slots a step's pages occupy, per node; see occupied.h. */
#include "config.h"
#include "occupied.h"
#include "errbuf.h"
#include "zonesort_abi.h"

#include <stdlib.h>
#include <string.h>

uint64_t zs_occupied_slots(uint64_t colors, unsigned *shift)
{
	unsigned s = 0;

	while ((colors >> s) > ZS_OCCUPIED_MAX_SLOTS)
		s++;
	*shift = s;
	if (!colors || colors & ((1ULL << s) - 1))
		return 0;
	return colors >> s;
}

void zs_occupied_free(struct zs_occupied *o, unsigned n)
{
	for (unsigned i = 0; o && i < n; i++)
		free(o[i].bits);
	free(o);
}

/* The entry of node in o[0..n), added (empty) when missing. */
static struct zs_occupied *entry(struct zs_occupied *o, unsigned *n, int node)
{
	for (unsigned i = 0; i < *n; i++)
		if (o[i].node == node)
			return &o[i];
	o[*n] = (struct zs_occupied){ .node = node };
	return &o[(*n)++];
}

int zs_occupied_build(const struct zs_pfnset *set, const struct zs_zone *zones, unsigned nzones,
		      const struct zs_node_geom *geoms, unsigned ngeoms,
		      struct zs_occupied **out, unsigned *n, char *err)
{
	struct zs_occupied *o = calloc(ngeoms ? ngeoms : 1, sizeof(*o));
	unsigned kept = 0;

	*out = NULL;
	*n = 0;
	if (!o)
		return zs_fail(err, "out of memory for the occupied slots");
	for (unsigned i = 0; i < ngeoms; i++) {
		struct zs_occupied *e;
		unsigned shift;
		uint64_t slots;

		if (geoms[i].error[0] || geoms[i].g.fully_associative)
			continue;
		slots = zs_occupied_slots(geoms[i].g.nslots, &shift);
		if (!slots)
			continue;
		e = entry(o, n, geoms[i].node);
		free(e->bits);
		e->slots = slots;
		e->shift = shift;
		e->bytes = (size_t)((slots + 7) / 8);
		e->bits = calloc(e->bytes, 1);
		if (!e->bits) {
			zs_occupied_free(o, *n);
			*n = 0;
			return zs_fail(err, "out of memory for the occupied slots of node %d", geoms[i].node);
		}
	}
	for (size_t k = 0; k < set->n; k++) {
		int node = zs_pfn_node(zones, nzones, set->pfn[k]);
		const struct zs_node_geom *g = zs_node_geom_find(geoms, ngeoms, node);

		for (unsigned i = 0; g && i < *n; i++) {
			struct zs_occupied *e = &o[i];
			uint64_t slot;

			if (e->node != node)
				continue;
			/* The module's slot: no extended-linear offset. */
			slot = (set->pfn[k] % g->g.nslots) >> e->shift;
			if (!(e->bits[slot / 8] & (1u << (slot % 8)))) {
				e->bits[slot / 8] |= (uint8_t)(1u << (slot % 8));
				e->set++;
			}
			e->pages++;
			break;
		}
	}
	/* Keep the nodes with a page of the step and room to steer to. */
	for (unsigned i = 0; i < *n; i++) {
		const struct zs_node_geom *g = zs_node_geom_find(geoms, ngeoms, o[i].node);

		if (!o[i].pages || o[i].pages >= g->g.nslots * g->g.ways) {
			free(o[i].bits);
			continue;
		}
		o[kept++] = o[i];
	}
	*n = kept;
	if (!kept) {
		free(o);
		o = NULL;
	}
	*out = o;
	return 0;
}
