/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Cache slots ("colors") of physical pages and collisions between pages.
 *
 * Definitions used everywhere in zonesort (status, conflicts, the periodic
 * helper's samples, the NHC check):
 *
 *  - A memory-side cache of C bytes with W ways has S = C / (W * P) page
 *    slots, P the page size; C is any multiple of W * P (Optane Memory Mode
 *    gives 96, 192 or 384 GiB). The slot of the page with frame number pfn
 *    is pfn mod S (equivalently (pfn * P mod (C / W)) / P). An
 *    extended-linear cache (Intel Flat Memory Mode: near DRAM caches the
 *    far memory behind it 1:1 and both are in the address space) aliases
 *    the address X with X + C over the node's range, which starts at frame
 *    B: there the slot is (pfn - B) mod S. A direct-mapped
 *    cache (W = 1) has C / P slots; a fully associative one has 1 slot of
 *    C / P ways.
 *  - A slot holds W pages of a set of pages without conflict. A page of the
 *    set is "conflicting" when its slot holds more than W pages of the set:
 *    all of them compete for the slot's W ways (for W = 1: the page shares
 *    its slot with other pages of the set). The conflict fraction of a set
 *    of n pages is conflicting / n.
 *  - "excess" pages are the pages beyond W in each slot, sum max(0, c - W):
 *    the fewest pages that would have to move for no conflict at all.
 *  - Random placement: n pages each in a slot drawn uniformly and
 *    independently. The expected number of conflicting pages is
 *    n * P[Binomial(n - 1, 1/S) >= W] (a given page conflicts when at least
 *    W of the other n - 1 pages share its slot), so the expected conflict
 *    fraction is P[Binomial(n - 1, 1/S) >= W], computed exactly (as a sum of
 *    W binomial terms in double precision).
 */
#ifndef ZS_SLOTS_H
#define ZS_SLOTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct zs_slotgeom {
	uint64_t cache_size;	/* bytes, a multiple of ways * page_size */
	uint64_t base_pfn;	/* first frame of an extended-linear range, else 0 */
	uint64_t ways;		/* pages one slot holds without conflict */
	unsigned page_size;	/* bytes */
	uint64_t nslots;	/* cache_size / (ways * page_size) */
	bool fully_associative;
};

/* Validates and fills a geometry. ways as hwloc reports it: 1 direct-mapped,
 * N-way, -1 fully associative; 0 (unknown) is an error. cache_what and
 * ways_what name the values in errors (e.g. "--cache-size", "ways="). */
int zs_slotgeom_init(struct zs_slotgeom *g, uint64_t cache_size, int ways, unsigned page_size,
		     const char *cache_what, const char *ways_what, char *err);

static inline uint64_t zs_slot_of(const struct zs_slotgeom *g, uint64_t pfn)
{
	if (g->base_pfn)
		return pfn >= g->base_pfn ? (pfn - g->base_pfn) % g->nslots
					  : (g->nslots - (g->base_pfn - pfn) % g->nslots) % g->nslots;
	return g->nslots & (g->nslots - 1) ? pfn % g->nslots : pfn & (g->nslots - 1);
}

/* "64 MiB direct-mapped", "16 GiB 2-way", "1 MiB fully associative",
 * "96 GiB direct-mapped extended-linear from frame 4194304". */
const char *zs_slotgeom_describe(const struct zs_slotgeom *g, char *buf, unsigned len);

struct zs_collisions {
	uint64_t pages;		/* pages counted */
	uint64_t conflicting;	/* pages in slots holding more than ways pages */
	uint64_t excess;	/* sum over slots of max(0, count - ways) */
	uint64_t used_slots;	/* slots holding at least one page */
	uint64_t overfull_slots; /* slots holding more than ways pages */
	uint64_t max_in_slot;
};

/* Counts collisions in a histogram of pages per slot (nslots entries). */
void zs_collisions_count(const uint32_t *counts, uint64_t nslots, uint64_t ways,
			 struct zs_collisions *out);

/* conflicting / pages, 0 for no pages. */
double zs_collisions_fraction(const struct zs_collisions *c);

/* The expected conflict fraction of n pages placed at random over nslots
 * slots of ways pages (see above). */
double zs_random_conflict_fraction(uint64_t n, uint64_t nslots, uint64_t ways);

/* The slots holding the most pages: fills up to max entries of slot and
 * count, largest count first (ties: lower slot first). Returns how many. */
unsigned zs_worst_slots(const uint32_t *counts, uint64_t nslots, unsigned max,
			uint64_t *slot, uint32_t *count);

/* A fraction: a decimal number ("0.5") or a percentage ("50%"), greater
 * than 0 and at most max. */
int zs_parse_fraction(const char *what, const char *s, double max, double *out, char *err);

/* --- conflict potential of free memory ---------------------------------
 *
 * Model of the next allocation of n pages on a node (order-0 requests, as
 * page faults of a job make without transparent huge pages): the buddy
 * allocator serves a request from the lowest order whose free list is not
 * empty, so the order-0 blocks go first, then order-1 blocks are split (the
 * lower page is handed out, the upper one goes to the order-0 list and is
 * the next page handed out), and so on: each block is consumed whole,
 * lowest page first, before the next one. Zones are used highest first
 * (Movable, Normal, DMA32, DMA), as the zonelist of a node orders them.
 * The order of blocks within one free list is not visible from user space
 * (it is what sorting changes), so it is taken as random: the blocks of a
 * list that the allocation only partly consumes are drawn in random order,
 * and the result is the mean over a fixed number of draws with a fixed
 * seed (deterministic for the same free memory). */

struct zs_freeblock_list {
	const uint64_t *pfn;	/* first pfn of each block */
	size_t n;
};

/* Free blocks of one zone, by order: lists[o] holds the order-o blocks. */
struct zs_zone_blocks {
	const struct zs_freeblock_list *lists;
	unsigned norders;
};

struct zs_potential {
	uint64_t requested;	/* pages asked for */
	uint64_t allocated;	/* pages the model could hand out (<= free pages) */
	double conflicting;	/* expected conflicting pages */
	double fraction;	/* expected conflict fraction: conflicting / allocated */
	double random_fraction;	/* the same n placed at random */
	unsigned draws;		/* random draws made (0: the result is exact) */
};

/* zones in allocation order (highest zone first). Uses a scratch histogram
 * of g->nslots entries that it allocates. */
int zs_potential_compute(const struct zs_slotgeom *g, const struct zs_zone_blocks *zones,
			 unsigned nzones, uint64_t npages, unsigned draws, uint64_t seed,
			 struct zs_potential *out, char *err);

/* --- the periodic helper's sample line -----------------------------------
 * "conflicts fraction=0.032000 random=0.393469 pages=123456 samples=3"
 * (one line; the plugin keeps the last one it reads). */
struct zs_sample {
	double fraction, random;
	uint64_t pages;
	unsigned samples;
};

const char *zs_sample_format(const struct zs_sample *s, char *buf, unsigned len);
int zs_sample_parse(const char *line, struct zs_sample *s);

#endif
