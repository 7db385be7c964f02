// SPDX-License-Identifier: GPL-2.0
/*
 * Taking given free blocks out of a zone's free lists.
 *
 * alloc_contig_range() allocates one given range, but every call isolates
 * pageblocks, disables the LRU caches (an expedited RCU grace period and
 * an LRU drain on every CPU) and drains every CPU's per-CPU lists: per
 * block taken, noise in every job on the node. Instead, a batch of blocks
 * is moved to the head of its free list under zone->lock, in the order
 * they are to come out, and allocated at their order through the page
 * allocator's fast path on this CPU, migration disabled:
 *   - orders without per-CPU lists are handed out from the head of the
 *     free list;
 *   - orders with per-CPU lists are handed out from this CPU's list, which
 *     refills from the head of the free list in list order once empty.
 * Whatever else comes out first (this CPU's per-CPU list held blocks, a
 * block freed to the head by another CPU, CMA memory served first) is a
 * stray: set aside until the caller puts the strays back, so that the
 * next allocation does not get it again. When the strays' budget runs out
 * before the batch is taken, its remaining blocks go back to the tail of
 * their list: they collide, and the head is handed out first.
 *
 * No all-CPU operation, no reclaim: the allocations neither wake kswapd
 * nor reclaim, and fail rather than dip below the zone's watermarks.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/gfp.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/mmzone.h>
#include <linux/preempt.h>
#include <linux/spinlock.h>

#include "zonesort_compat.h"
#include "zonesort_freelist.h"
#include "zonesort_take.h"

void zs_strays_init(struct zs_strays *st, unsigned long budget)
{
	INIT_LIST_HEAD(&st->list);
	st->pages = 0;
	st->budget = budget;
}

static void zs_strays_add(struct zs_strays *st, struct page *page, unsigned int order)
{
	set_page_private(page, order);
	list_add_tail(&page->lru, &st->list);
	st->pages += 1UL << order;
	st->budget -= min(st->budget, 1UL << order);
}

void zs_strays_put(struct zs_strays *st)
{
	struct page *page, *next;

	list_for_each_entry_safe(page, next, &st->list, lru) {
		unsigned int order = page_private(page);

		list_del(&page->lru);
		set_page_private(page, 0);
		__free_pages(page, order);
		cond_resched();
	}
	st->pages = 0;
}

/* A movable allocation that starts at zone and stays on its node. */
static gfp_t zs_take_gfp(struct zone *zone)
{
	gfp_t gfp = __GFP_MOVABLE | __GFP_THISNODE | __GFP_NOWARN | __GFP_NORETRY |
		    __GFP_NOMEMALLOC;

	switch (zone_idx(zone)) {
#ifdef CONFIG_ZONE_DMA
	case ZONE_DMA:
		return gfp | __GFP_DMA;
#endif
#ifdef CONFIG_ZONE_DMA32
	case ZONE_DMA32:
		return gfp | __GFP_DMA32;
#endif
	case ZONE_MOVABLE:
		return gfp | __GFP_HIGHMEM;
	default:
		return gfp;
	}
}

static int zs_take_index(const u64 *pfns, size_t n, unsigned long pfn)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (pfns[i] == pfn)
			return i;
	return -1;
}

/* Moves the blocks pfns[i] with want[i] set to the head of their list,
 * the first one in front; clears want[i] for those no longer free there.
 * Returns how many were moved. */
static size_t zs_take_to_head(struct zone *zone, unsigned int order, const u64 *pfns, size_t n,
			      bool *want)
{
	struct list_head *head = &zone->free_area[order].free_list[MIGRATE_MOVABLE];
	unsigned long flags;
	size_t i = n, moved = 0;

	spin_lock_irqsave(&zone->lock, flags);
	while (i-- > 0) {
		struct page *p = zs_zone_isolating(zone) ? NULL :
				 zs_block(zone, pfns[i], order, MIGRATE_MOVABLE);

		want[i] = p != NULL;
		if (p) {
			list_move(&p->ZS_LINK, head);
			moved++;
		}
	}
	spin_unlock_irqrestore(&zone->lock, flags);
	zs_note_hold(n);
	return moved;
}

/* The blocks still wanted go to the tail of their list, where the
 * sort would have put colliding blocks. */
static void zs_take_to_tail(struct zone *zone, unsigned int order, const u64 *pfns, size_t n,
			    const bool *want)
{
	struct list_head *head = &zone->free_area[order].free_list[MIGRATE_MOVABLE];
	unsigned long flags;
	size_t i;

	spin_lock_irqsave(&zone->lock, flags);
	for (i = 0; i < n; i++) {
		struct page *p = want[i] && !zs_zone_isolating(zone) ?
				 zs_block(zone, pfns[i], order, MIGRATE_MOVABLE) : NULL;

		if (p)
			list_move_tail(&p->ZS_LINK, head);
	}
	spin_unlock_irqrestore(&zone->lock, flags);
	zs_note_hold(n);
}

size_t zs_take_blocks(struct zone *zone, unsigned int order, const u64 *pfns, size_t n,
		      struct page **got, struct zs_strays *st)
{
	gfp_t gfp = zs_take_gfp(zone);
	bool want[ZS_TAKE_BATCH];
	size_t i, moved, taken = 0;

	n = min_t(size_t, n, ZS_TAKE_BATCH);
	for (i = 0; i < n; i++)
		got[i] = NULL;
	moved = zs_take_to_head(zone, order, pfns, n, want);
	if (!moved)
		return 0;
	migrate_disable();
	while (taken < moved) {
		struct page *page = alloc_pages_node(zone_to_nid(zone), gfp, order);
		int k;

		if (!page)
			break;
		k = zs_take_index(pfns, n, page_to_pfn(page));
		if (k >= 0 && want[k] && page_zone(page) == zone) {
			got[k] = page;
			want[k] = false;
			taken++;
			continue;
		}
		zs_strays_add(st, page, order);
		if (!st->budget)
			break;
	}
	migrate_enable();
	if (taken < moved)
		zs_take_to_tail(zone, order, pfns, n, want);
	return taken;
}
