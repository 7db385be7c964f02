// SPDX-License-Identifier: GPL-2.0-or-later
/* The slots a step's pages occupy, as bitmaps per node for the module's
 * occupied file: the tracked slots and their shift, which bits a set of
 * frames sets, and which nodes get none. Expected bits are worked out by
 * hand from the definition in kmod/zonesort_abi.h. */
#include "config.h"
#include "errbuf.h"
#include "occupied.h"
#include "tap.h"

#include <stdlib.h>

static void tracked_slots(void)
{
	unsigned shift;

	ok(zs_occupied_slots(16384, &shift) == 16384 && shift == 0, "a 64 MiB cache: 16384 slots, one color each");
	ok(zs_occupied_slots(1ULL << 22, &shift) == (1ULL << 22) && shift == 0,
	   "2^22 colors (16 GiB of 4 KiB pages): a slot per color");
	ok(zs_occupied_slots(1ULL << 24, &shift) == (1ULL << 22) && shift == 2,
	   "2^24 colors (64 GiB): 2^22 slots of 4 colors");
	ok(zs_occupied_slots(3ULL << 22, &shift) == (3ULL << 20) && shift == 2,
	   "3 x 2^22 colors (an Optane 48 GiB): 3 x 2^20 slots of 4 colors");
	ok(zs_occupied_slots((1ULL << 22) + 1, &shift) == 0, "colors that do not split into slots: none");
	ok(zs_occupied_slots(0, &shift) == 0, "no colors: none");
}

static struct zs_node_geom geom(int node, uint64_t colors, uint64_t ways)
{
	struct zs_node_geom g = { .node = node };

	g.g.nslots = colors;
	g.g.ways = ways;
	g.g.page_size = 4096;
	g.g.cache_size = colors * ways * 4096;
	return g;
}

static int bit(const struct zs_occupied *o, uint64_t slot)
{
	return (o->bits[slot / 8] >> (slot % 8)) & 1;
}

static void bitmaps(void)
{
	/* Node 0: frames 0-999; node 1: 1000-1999; node 2: 2000-2999. */
	struct zs_zone zones[3] = {
		{ .node = 0, .start_pfn = 0, .spanned = 1000 },
		{ .node = 1, .start_pfn = 1000, .spanned = 1000 },
		{ .node = 2, .start_pfn = 2000, .spanned = 1000 },
	};
	/* Node 0: 64 colors; node 1: 20 colors (a partial last byte); node
	 * 2: no usable geometry. */
	struct zs_node_geom geoms[3] = { geom(0, 64, 1), geom(1, 20, 1), geom(2, 64, 1) };
	uint64_t pfn[] = { 3, 67, 130, 1005, 1019, 1039, 2001, 5000 };
	struct zs_pfnset set = { .pfn = pfn, .n = sizeof(pfn) / sizeof(pfn[0]) };
	struct zs_occupied *o = NULL;
	unsigned n = 9;
	char err[ZS_ERRLEN] = "";

	snprintf(geoms[2].error, sizeof(geoms[2].error), "no geometry");
	ok(zs_occupied_build(&set, zones, 3, geoms, 3, &o, &n, err) == 0, "built (%s)", err);
	ok(n == 2 && o[0].node == 0 && o[1].node == 1, "nodes 0 and 1; node 2 has no geometry");
	if (n != 2)
		return;
	/* Node 0: 3, 67 (= 3 + 64) and 130 (= 2 + 128): slots 2 and 3. */
	ok(o[0].bytes == 8 && o[0].slots == 64 && o[0].pages == 3 && o[0].set == 2,
	   "node 0: 8 bytes, 3 pages on 2 slots (%zu bytes, %llu pages, %llu set)", o[0].bytes,
	   (unsigned long long)o[0].pages, (unsigned long long)o[0].set);
	ok(bit(&o[0], 2) && bit(&o[0], 3) && o[0].bits[0] == 0x0c && o[0].bits[1] == 0,
	   "... bits 2 and 3 of byte 0 (0x%02x)", o[0].bits[0]);
	/* Node 1: 1005 % 20 = 5, 1019 % 20 = 19, 1039 % 20 = 19. */
	ok(o[1].bytes == 3 && o[1].set == 2 && bit(&o[1], 5) && bit(&o[1], 19),
	   "node 1: 3 bytes for 20 slots, slots 5 and 19");
	ok(o[1].bits[2] == 0x08, "... slot 19 is bit 3 of byte 2, no bit past the last slot (0x%02x)",
	   o[1].bits[2]);
	zs_occupied_free(o, n);

	/* A step with a cache's pages on node 1 (20 of them) gets no bitmap
	 * there: nothing left to steer to. */
	uint64_t many[20];

	for (unsigned i = 0; i < 20; i++)
		many[i] = 1000 + i;
	set.pfn = many;
	set.n = 20;
	ok(zs_occupied_build(&set, zones, 3, geoms, 3, &o, &n, err) == 0 && n == 0 && o == NULL,
	   "a cache's pages on a node: no bitmap");
	set.n = 19;
	ok(zs_occupied_build(&set, zones, 3, geoms, 3, &o, &n, err) == 0 && n == 1 && o[0].set == 19,
	   "one page fewer: a bitmap of 19 slots");
	zs_occupied_free(o, n);

	/* Two ways: a cache's pages are twice its colors. */
	geoms[1] = geom(1, 10, 2);
	ok(zs_occupied_build(&set, zones, 3, geoms, 3, &o, &n, err) == 0 && n == 1 && o[0].slots == 10 &&
	   o[0].set == 10, "2-way, 10 colors: 19 pages are below its 20, every color set");
	zs_occupied_free(o, n);

	/* No page on a node with a geometry: no bitmap for it. */
	set.n = 0;
	ok(zs_occupied_build(&set, zones, 3, geoms, 3, &o, &n, err) == 0 && n == 0,
	   "no pages: no bitmaps");
}

int main(void)
{
	tracked_slots();
	bitmaps();
	return done_testing();
}
