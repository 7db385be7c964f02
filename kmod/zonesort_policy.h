/* SPDX-License-Identifier: GPL-2.0 */
/*
 * zonesort ordering policy: which order the free blocks of one free list
 * should have so that successive allocations walk the memory-side cache's
 * slots least-used first.
 *
 * Pure computation on page frame numbers: no kernel API, no allocation,
 * no floating point. The kernel module and the user-space simulator in
 * tests/kmod/ compile this same file, so what the simulation measures is
 * what the module does.
 *
 * Model. The slot ("color") of a page is pfn mod colors, where colors =
 * cache size / ways / page size (any positive number: Optane's 96, 192
 * and 384 GiB caches give three times a power of two); a slot holds
 * `ways` pages. The buddy allocator hands out order-0 pages from the head
 * of the order-0 list; when that is empty it splits the first block of the
 * next non-empty order and returns the pieces lowest address first, so a
 * free area is consumed as: the order-0 list in list order, then every
 * block of the order-1 list in list order, then order 2, and so on, each
 * block in ascending address order. (Pages in the per-CPU lists come even
 * before the order-0 list; the caller counts them first.) A transparent
 * huge page fault takes its own order's list first and never the lists
 * below it, so from that order on the lists start a sequence of their own
 * (the caller marks that point, see zsp_mark_sequence).
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
 * conflict. What happens to them is the overflow order (zsp_set_overflow):
 *  - ZSP_PILE (the default): the cost sends them to slots that already
 *    conflict (one more conflicting page each) rather than to full ones
 *    (ways + 1 more), so that an allocation larger than the cache keeps
 *    as many pages alone in their slot as it can;
 *  - ZSP_SPREAD: the pages beyond capacity counted first, so they go to
 *    the least-loaded slots, a second lap over all slots, then a third.
 *    A start-up that takes some of them and frees a random half back then
 *    leaves no pile of same-slot pages at the heads of the lists for the
 *    next allocation; an allocation larger than the cache keeps fewer
 *    pages alone (about as many as on unsorted lists).
 * From the huge-page order on, the cost counted first is the one against
 * the load of the huge-page sequence alone (what a huge-page fault sees),
 * then the one against the whole load (what a base-page allocation that
 * got this far sees), then the load.
 * Blocks whose pages fall on the same slots are interchangeable: they form
 * a group, and a heap of groups gives the order in O(blocks log groups +
 * pages). When colors is a multiple of the block size, a block of 2^k
 * pages covers an aligned run of 2^k slots and groups are disjoint;
 * otherwise runs start anywhere (and wrap around), groups overlap, and a
 * group's key is refreshed when it reaches the top of the heap: taking a
 * block changes the keys of the groups it overlaps, mostly upwards while
 * their slots fill, so the group on top is checked before it is used.
 *
 * Very large caches: at most ZSP_MAX_SLOTS slots are tracked; beyond that
 * 2^shift neighbouring slots are tracked as one slot of 2^shift * ways
 * pages (exact for blocks of order >= shift, an approximation below).
 */
#ifndef ZONESORT_POLICY_H
#define ZONESORT_POLICY_H

#ifdef __KERNEL__
#include <linux/math64.h>
#include <linux/types.h>
#else
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#endif

/* Slots tracked at most (24 bytes each while a list is ordered). */
#define ZSP_MAX_SLOTS (1ULL << 22)	/* ZS_OCCUPIED_MAX_SLOTS */
/* Largest number of colors accepted (a 4 PiB cache of 4 KiB pages). */
#define ZSP_MAX_COLORS (1ULL << 40)

struct zsp_geom {
	uint64_t colors;	/* cache size / ways / page size */
	uint64_t recip;		/* ~0 / colors (when colors is not a power of two) */
	bool pow2;		/* colors is a power of two: pfn mod colors is a mask */
	unsigned int ways;	/* associativity, 1 = direct-mapped */
	unsigned int shift;	/* a tracked slot is 2^shift colors */
	uint64_t nslots;	/* colors >> shift */
	uint64_t cap;		/* pages a tracked slot holds: ways << shift */
};

/* 0, or -1 when colors is 0 or above ZSP_MAX_COLORS, ways is 0, or colors
 * is too large to track slot by slot and not a multiple of the 2^shift
 * slots that would be tracked as one. */
int zsp_geom_init(struct zsp_geom *g, uint64_t colors, unsigned int ways);

/* x mod colors. A mask for powers of two; otherwise a multiplication by
 * the precomputed reciprocal (Barrett reduction: the quotient estimate is
 * at most one short) where the compiler has 128-bit products, else one
 * 64-bit division. Callers walking consecutive pages step the slot
 * instead (zsp_next). */
static inline uint64_t zsp_mod(const struct zsp_geom *g, uint64_t x)
{
	uint64_t r;

	if (g->pow2)
		return x & (g->colors - 1);
#ifdef __SIZEOF_INT128__
	r = x - (uint64_t)(((unsigned __int128)x * g->recip) >> 64) * g->colors;
	if (r >= g->colors)
		r -= g->colors;
#elif defined(__KERNEL__)
	div64_u64_rem(x, g->colors, &r);
#else
	r = x % g->colors;
#endif
	return r;
}

/* The color after color c. */
static inline uint64_t zsp_next(const struct zsp_geom *g, uint64_t c)
{
	return ++c == g->colors ? 0 : c;
}

/* Tracked slot of a color, and of a page. */
static inline uint64_t zsp_color_slot(const struct zsp_geom *g, uint64_t color)
{
	return color >> g->shift;
}

static inline uint64_t zsp_slot(const struct zsp_geom *g, uint64_t pfn)
{
	return zsp_color_slot(g, zsp_mod(g, pfn));
}

enum zsp_overflow { ZSP_PILE, ZSP_SPREAD };

struct zsp_state {
	struct zsp_geom g;
	enum zsp_overflow overflow;	/* zsp_set_overflow; ZSP_PILE after zsp_init */
	uint32_t *load;		/* pages per slot handed out before */
	uint32_t *tload;	/* the same since zsp_mark_sequence */
	bool marked;		/* zsp_mark_sequence was called since the reset */
	uint64_t *key;		/* per group: conflict costs and load, see group_key */
	uint32_t *heap, *cur, *start;
	uint32_t *seed;		/* per slot: 1 where a running job's pages are (zsp_set_seed) */
	bool seeded;		/* seed holds them */
};

/* Bytes of memory zsp_init needs (8-aligned). */
static inline size_t zsp_state_bytes(const struct zsp_geom *g)
{
	return (size_t)g->nslots * (sizeof(uint64_t) + 6 * sizeof(uint32_t)) + 2 * sizeof(uint64_t);
}

/* Starts with zero load. mem: zsp_state_bytes(g), 8-aligned. */
void zsp_init(struct zsp_state *s, const struct zsp_geom *g, void *mem);

/* The overflow order of the lists ordered next (see the top of this file). */
void zsp_set_overflow(struct zsp_state *s, enum zsp_overflow overflow);

/* Forgets all load: the lists ordered next start a new sequence. */
void zsp_reset(struct zsp_state *s);

/* The slots a running job already occupies (its pages, which a sort of
 * the free lists does not see): bits holds one bit per tracked slot (slot
 * i: bit i % 8 of byte i / 8); NULL: none. Among blocks that add as few
 * conflicts within the allocation, those on unoccupied slots go first;
 * the quarantine's picks count each occupied slot as holding a page
 * (zsq_pick.seed = seed). */
void zsp_set_seed(struct zsp_state *s, const uint8_t *bits);

/* The lists ordered next also start a sequence of their own (huge-page
 * faults begin at this order): they are ordered for it first, and for
 * the whole sequence among equally good choices. */
void zsp_mark_sequence(struct zsp_state *s);

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

#endif
