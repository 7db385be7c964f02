/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The cache slots a running step's own pages occupy, as this project's
 * module takes them before a sort (kmod/zonesort_abi.h, ZS_FILE_OCCUPIED):
 * a sort counts only free pages, so without them it may hand the step's
 * next allocation the very slots its earlier ones fill. One bitmap per
 * NUMA node behind a memory-side cache, over the module's tracked slots:
 * slot = (pfn mod colors) >> shift, colors = cache size / ways / page
 * size, shift the least that leaves at most ZS_OCCUPIED_MAX_SLOTS slots.
 */
#ifndef ZS_OCCUPIED_H
#define ZS_OCCUPIED_H

#include <stddef.h>
#include <stdint.h>

#include "conflicts.h"

struct zs_occupied {
	int node;
	uint8_t *bits;		/* slot i: bit i % 8 of byte i / 8 */
	size_t bytes;		/* DIV_ROUND_UP(slots, 8) */
	uint64_t slots;		/* tracked slots of the node */
	unsigned shift;		/* a tracked slot is 2^shift colors */
	uint64_t set;		/* slots with a page of the step */
	uint64_t pages;		/* the step's pages on the node */
};

/* The module's tracked slots for a cache of colors colors, and the shift
 * that gives them; 0 when colors does not split into them (the module
 * refuses such a geometry: -EDOM). */
uint64_t zs_occupied_slots(uint64_t colors, unsigned *shift);

/*
 * Bitmaps of the distinct frames of set on each node that geoms gives a
 * usable geometry, in zones' spans. A node on which the step has a cache's
 * pages or more gets none: nearly every slot holds one of them, and there
 * is nothing left to steer the next allocation to. *out holds *n entries
 * (maybe none); 0, or -1 with err.
 */
int zs_occupied_build(const struct zs_pfnset *set, const struct zs_zone *zones, unsigned nzones,
		      const struct zs_node_geom *geoms, unsigned ngeoms,
		      struct zs_occupied **out, unsigned *n, char *err);

void zs_occupied_free(struct zs_occupied *o, unsigned n);

#endif
