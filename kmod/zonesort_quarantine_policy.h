/* SPDX-License-Identifier: GPL-2.0 */
/*
 * zonesort quarantine policy: which free blocks to take out of the free
 * lists so that the next allocation collides less than any order of the
 * lists allows.
 *
 * Why. The buddy allocator hands out every block of a lower order before
 * it splits a larger one (see zonesort_policy.h). A few long-lived pages
 * scattered over memory leave many small free blocks around them; an
 * allocation of half the cache consumes those lists whole, so pages of
 * theirs that share cache slots collide whatever their order. Only
 * changing the set of free blocks helps: the module takes such blocks
 * (allocates them itself) and gives them back later.
 *
 * Policy. The lists are visited in hand-out order (orders ascending),
 * with the load the sort keeps: the pages handed out before the current
 * list, per slot. In a list, a block whose every slot still has room
 * (load + its pages <= ways) is kept and counted; the others would
 * collide with a page handed out earlier or with a kept block of the same
 * list. If the kept blocks alone already reach the protected allocation
 * (`want` pages), this is the list the allocation consumes in part: the
 * sort puts the kept blocks first and nothing needs taking; the walk ends
 * there. Otherwise the list is consumed whole and its colliding blocks
 * are taken, while the budget lasts. Blocks of at least `colors` pages
 * cover every slot alike and are never taken.
 *
 * From the huge-page order on, a second sequence begins: huge-page faults
 * take those lists first. A base-page allocation that the lower lists do
 * not fill goes on into them too (after a compaction, or once much memory
 * is given back, most free memory is there), so until it ends a block is
 * kept only if it fits both sequences; zonesort_policy.c orders the kept
 * ones for huge pages first, then base pages.
 *
 * Pure computation on page frame numbers, like zonesort_policy.c: the
 * kernel module and tests/kmod/policysim.c compile this same file.
 */
#ifndef ZONESORT_QUARANTINE_POLICY_H
#define ZONESORT_QUARANTINE_POLICY_H

#include "zonesort_policy.h"

struct zsq_pick {
	struct zsp_geom g;
	uint64_t want;		/* pages of the next allocation to protect */
	uint64_t budget;	/* pages that may still be taken */
	uint64_t before;	/* pages handed out before the next list (this zone) */
	uint64_t hbefore;	/* ... to huge-page faults, once huge */
	uint64_t taken;		/* pages picked for taking, all zones */
	uint64_t short_pages;	/* colliding pages left in the lists for lack of budget */
	bool done;		/* the base-page allocation ends in a list already seen */
	bool huge;		/* the lists huge-page faults start from are reached */
	bool hdone;		/* ... and the huge-page allocation ends in one seen */
	const uint32_t *seed;	/* per slot, 1 where a running job's pages are
				 * (zsp_state.seed): counted as a page of each
				 * sequence; NULL (after init): none */
};

/* budget: most pages to take in this run, over all zones. */
void zsq_pick_init(struct zsq_pick *q, const struct zsp_geom *g, uint64_t want, uint64_t budget);

/* A new zone: pages_before are handed out before the lists that follow
 * (per-CPU pages), already counted in the load. */
void zsq_pick_zone(struct zsq_pick *q, uint64_t pages_before);

/* The lists huge-page faults start from (this zone): pages_before as
 * above, counted in the huge-page load (zsp_state.tload). */
void zsq_pick_huge(struct zsq_pick *q, uint64_t pages_before);

/* Where the blocks an earlier run took ended up (zsq_pick_list). */
struct zsq_held_split {
	size_t kept;	/* the last ones of the blocks kept: to give back */
	size_t taken;	/* the first ones of the blocks taken: still held */
};

/*
 * blocks[0..n): the free blocks of 2^order pages of one list, in hand-out
 * order, then the last nheld of them: blocks of that list an earlier run
 * took and still holds. They are picked like the free ones, and among the
 * blocks to take they come first, so that a block that still collides
 * stays held rather than being given back and another taken. load: the
 * sort's per-slot load (zsp_state.load) before this list; tload, once
 * huge, the huge-page sequence's (zsp_state.tload), else NULL; both left
 * unchanged on return; tmp: n entries of scratch. Reorders blocks so that the ones
 * to keep come first and returns their number; blocks[kept..n) are to be
 * taken. held says which of them are held ones.
 */
size_t zsq_pick_list(struct zsq_pick *q, uint32_t *load, uint32_t *tload, uint64_t *blocks,
		     size_t n, size_t nheld, unsigned int order, uint64_t *tmp,
		     struct zsq_held_split *held);

/* A block picked for taking could not be taken: it stays in the lists. */
void zsq_pick_untake(struct zsq_pick *q, unsigned int order);

#endif
