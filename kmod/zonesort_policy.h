/* SPDX-License-Identifier: GPL-2.0 */
/*
 * zonesort ordering policy: which order the free blocks of one free list
 * should have so that successive allocations walk the memory-side cache's
 * slots least-used first.
 *
 * Pure computation on page frame numbers: no kernel API, no allocation,
 * no floating point. The kernel module and the user-space simulator in
 * tests/kmod/ compile this same file, so what the tests measure is what
 * the module does.
 *
 * Model. The slot ("color") of a page is pfn mod colors, where colors =
 * cache size / ways / page size (a power of two); a slot holds `ways`
 * pages. The buddy allocator hands out order-0 pages from the head of the
 * order-0 list; when that is empty it splits the first block of the next
 * non-empty order and returns the pieces lowest address first, so a free
 * area is consumed as: the order-0 list in list order, then every block of
 * the order-1 list in list order, then order 2, and so on, each block in
 * ascending address order. (Pages in the per-CPU lists come even before
 * the order-0 list; the caller counts them first.)
 *
 * Goal: for every prefix of that sequence (the next allocation, whatever
 * its size), as few pages as possible in a slot holding more pages of the
 * allocation than the slot has ways: those pages evict each other.
 *
 * Policy. The orders are processed from 0 upwards, keeping the load of
 * every slot: the pages that will be handed out before the current list.
 * A list is ordered greedily: next comes a block whose pages add the
 * fewest conflicting pages given the load so far, among those the block
 * whose slots carry the least load, so slots are used least-used first.
 * Once every slot within reach holds `ways` pages, further pages must
 * conflict; the cost then sends them to slots that already conflict (one
 * more conflicting page each) rather than to full ones (ways + 1 more).
 * A block of 2^k pages covers 2^k consecutive slots (its "group"), and a
 * group's key changes only when one of its own blocks is handed out, so a
 * heap of groups gives the order in O(blocks log groups + pages).
 *
 * Huge pages. A transparent huge page comes from the lists of its order
 * (pageblock order) and above, before any smaller list; pages of 4 KiB
 * reach those lists only after every smaller one. From that order up
 * (zsp_begin_huge), blocks are ordered among themselves first: a group's
 * key is the conflicting pages it adds against the blocks of these lists
 * alone, then against everything before as well, then the load.
 *
 * Very large caches: at most ZSP_MAX_SLOTS slots are tracked; beyond that
 * 2^shift neighbouring slots are tracked as one slot of 2^shift * ways
 * pages (exact for blocks of order >= shift, an approximation below).
 */
#ifndef ZONESORT_POLICY_H
#define ZONESORT_POLICY_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#endif

/* Slots tracked at most (24 bytes each while a list is ordered). */
#define ZSP_MAX_SLOTS (1ULL << 22)
/* Largest number of colors accepted (a 4 PiB cache of 4 KiB pages). */
#define ZSP_MAX_COLORS (1ULL << 40)

struct zsp_geom {
	uint64_t colors;	/* cache size / ways / page size, a power of two */
	unsigned int ways;	/* associativity, 1 = direct-mapped */
	unsigned int shift;	/* a tracked slot is 2^shift colors */
	uint64_t nslots;	/* colors >> shift */
	uint64_t cap;		/* pages a tracked slot holds: ways << shift */
};

/* 0, or -1 when colors is not a power of two in [1, ZSP_MAX_COLORS] or
 * ways is 0. */
int zsp_geom_init(struct zsp_geom *g, uint64_t colors, unsigned int ways);

static inline uint64_t zsp_slot(const struct zsp_geom *g, uint64_t pfn)
{
	return (pfn & (g->colors - 1)) >> g->shift;
}

struct zsp_state {
	struct zsp_geom g;
	uint32_t *load;		/* pages per slot handed out before */
	uint32_t *base;		/* huge: the load from the lists before them */
	bool huge;		/* ordering the huge-page lists */
	uint64_t *key;		/* per group: conflict cost << 32 | load */
	uint32_t *heap, *cur, *start;
};

/* Bytes of memory zsp_init needs (8-aligned). */
static inline size_t zsp_state_bytes(const struct zsp_geom *g)
{
	return (size_t)g->nslots * (sizeof(uint64_t) + 5 * sizeof(uint32_t)) + sizeof(uint64_t);
}

/* Starts with zero load. mem: zsp_state_bytes(g), 8-aligned. */
void zsp_init(struct zsp_state *s, const struct zsp_geom *g, void *mem);

/* Forgets all load. */
void zsp_reset(struct zsp_state *s);

/* The lists ordered next are also taken first by huge-page allocations:
 * call before the list of pageblock order. */
void zsp_begin_huge(struct zsp_state *s);

/* Counts npages pages from pfn as handed out before the lists ordered
 * next (per-CPU list pages, say). */
void zsp_add_pages(struct zsp_state *s, uint64_t pfn, uint64_t npages);

/* Reorders blocks[0..n) -- the first pfn of each free block of 2^order
 * pages, in the order the allocator would hand them out -- as described
 * above, then counts their pages in the load. After a reset, call it for
 * the lists in hand-out order: orders ascending. tmp: n entries of
 * scratch. Blocks of at least `colors` pages cover every slot alike: their
 * order is kept. */
void zsp_order_blocks(struct zsp_state *s, uint64_t *blocks, size_t n, unsigned int order,
		      uint64_t *tmp);

/*
 * Conflict count of an allocation: feed the blocks in hand-out order
 * (orders ascending, each list in order); for the first `want` pages,
 * how many sit in a slot holding more than `ways` of them (for a
 * direct-mapped cache: that share their slot with another page of the
 * allocation). counts: g->nslots entries of scratch.
 */
struct zsp_conflict {
	struct zsp_geom g;
	uint64_t want;		/* pages in the simulated allocation */
	uint64_t taken;		/* pages fed so far (at most want) */
	uint64_t conflicted;	/* pages of the allocation in overfull slots */
	uint32_t *counts;
};

void zsp_conflict_init(struct zsp_conflict *c, const struct zsp_geom *g, uint64_t want,
		       uint32_t *counts);
/* Feeds one block; returns false once the allocation is complete. */
bool zsp_conflict_feed(struct zsp_conflict *c, uint64_t pfn, unsigned int order);
/* Conflicted pages per million pages taken (0 when nothing was taken). */
uint32_t zsp_conflict_ppm(const struct zsp_conflict *c);

/*
 * Floor: a lower bound on the conflicting pages of the first `want` pages
 * under ANY order of the lists, i.e. what sorting cannot remove. The lists
 * the allocation consumes whole give a fixed load whatever their order;
 * from the list it consumes in part the bound picks the best pages,
 * ignoring that they come in blocks: first pages that fit in their slot,
 * then pages in slots that conflict already (one conflicting page each),
 * then new conflicts in the slots with the most pages left (ways + 1 for
 * the first page, one for each further one). Announce each list with
 * zsp_floor_list (its total pages), then feed its blocks.
 * load, avail: g->nslots entries of scratch each.
 */
struct zsp_floor {
	struct zsp_geom g;
	uint64_t want, taken, partial;
	bool in_partial, done;
	uint32_t *load, *avail;
};

void zsp_floor_init(struct zsp_floor *f, const struct zsp_geom *g, uint64_t want,
		    uint32_t *load, uint32_t *avail);
void zsp_floor_list(struct zsp_floor *f, uint64_t pages);
void zsp_floor_feed(struct zsp_floor *f, uint64_t pfn, unsigned int order);
/* Conflicting pages per million of `want` (of what was fed, if less). */
uint32_t zsp_floor_ppm(struct zsp_floor *f);

#endif
