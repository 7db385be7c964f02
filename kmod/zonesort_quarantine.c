// SPDX-License-Identifier: GPL-2.0
/*
 * zonesort quarantine: lowers the collisions of the next allocation below
 * what sorting alone can reach.
 *
 * A few long-lived pages scattered over memory leave many small free
 * blocks, and the buddy allocator hands out every smaller block before it
 * splits a larger one; collisions among those blocks stay whatever their
 * order (zonesort_quarantine_policy.h). During a sort, at each movable
 * free list, zonesort_main.c passes us the list's snapshot; we take the
 * blocks the policy picks and the sort orders the rest. The lists from
 * the huge-page order up are picked a second time from the start, as
 * transparent huge pages take them: before any smaller list.
 *
 * Taking a given free block: alloc_contig_range() (or its frozen form)
 * on exactly its pfn range is the exported way to allocate one particular
 * block. The block is checked to be free, on a movable pageblock
 * (alloc_contig_range would otherwise retype the pageblock) before the
 * call; a block allocated meanwhile makes the call fail or migrate that
 * one page, as for CMA. The call also drains the zone's per-CPU lists
 * into the free lists. Where it refuses (the pageblock holds a page
 * isolation cannot move), the block is moved to its list head and
 * allocated at its order (zsq_take_head).
 *
 * Held blocks hang on a per-node list through their head page's lru, the
 * order in page_private (the owner's fields of an allocated page), kept
 * out of the way of pageblock isolation (see zsq_hold), and go back:
 *   - when the node is sorted again and the block no longer collides: the
 *     sort picks each list afresh with its held blocks counted in, keeps
 *     the ones that still collide and gives back the others right before
 *     it orders that list (giving everything back when a sort begins put
 *     the colliding blocks in front of every list for the whole sort, and
 *     an allocation running meanwhile took them),
 *   - under memory pressure: a shrinker; they cost nothing to recreate,
 *   - when the memory holding them goes offline,
 *   - on "release" (or "release N", node N only) written to
 *     /sys/kernel/zone_sort_free_pages/quarantine
 *     ("off" there or quarantine=N stops taking from the next sort on),
 *     or "rebuild N SECONDS" (see zsq_rebuild),
 *   - when the module unloads.
 * Bounds: per node at most quarantine_permille per mille of the cache's
 * pages (twice that for a while after a compaction: zsq_rebuild), and nothing is taken while the zone's free pages would drop
 * below its high watermark plus the protected allocation (half the
 * cache): that allocation, right after the sort, finds its pages free;
 * anything bigger wakes reclaim, and the shrinker gives them back.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/ctype.h>
#include <linux/gfp.h>
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/list.h>
#include <linux/memory.h>
#include <linux/migrate.h>
#include <linux/mm.h>
#include <linux/mmzone.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/nodemask.h>
#include <linux/notifier.h>
#include <linux/page-flags.h>
#include <linux/pageblock-flags.h>
#include <linux/sched/signal.h>
#include <linux/shrinker.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include <linux/version.h>

#include "zonesort_compat.h"
#include "zonesort_internal.h"
#include "zonesort_quarantine.h"
#include "zonesort_quarantine_policy.h"

/* Most per mille of the cache the quarantine_permille parameter accepts. */
#define ZSQ_MAX_PERMILLE 500

static bool zsq_enabled = true;
module_param_named(quarantine, zsq_enabled, bool, 0644);
MODULE_PARM_DESC(quarantine,
		 "take the free blocks a sort cannot keep from colliding out of the free lists until the next sort or memory pressure (default Y)");

static unsigned int zsq_permille = 125;

static int zsq_set_permille(const char *val, const struct kernel_param *kp)
{
	unsigned int v;

	if (kstrtouint(val, 0, &v) || v > ZSQ_MAX_PERMILLE) {
		pr_warn("quarantine_permille: '%.*s' is not a number from 0 to %u (per mille of the cache size)\n",
			(int)strcspn(val, "\n"), val, ZSQ_MAX_PERMILLE);
		return -EINVAL;
	}
	WRITE_ONCE(zsq_permille, v);
	return 0;
}

static const struct kernel_param_ops zsq_permille_ops = {
	.set = zsq_set_permille,
	.get = param_get_uint,
};

module_param_cb(quarantine_permille, &zsq_permille_ops, &zsq_permille, 0644);
MODULE_PARM_DESC(quarantine_permille,
		 "most pages held per node, per mille of the cache's pages (0-500, default 125)");

/* page_private of a held block's head page: its order, and this bit when
 * it is held as plain allocated pages (zsq_take_head). */
#define ZSQ_PLAIN 0x100

static unsigned int zsq_order(struct page *page)
{
	return page_private(page) & (ZSQ_PLAIN - 1);
}

struct zsq_node {
	spinlock_t lock;
	struct list_head blocks;	/* head pages; page_private: see ZSQ_PLAIN */
	struct list_head old;		/* held before the running sort, its
					 * list not picked yet */
	unsigned long pages, nblocks;	/* on both lists and being picked */
	unsigned long limit;		/* pages, from the last sort's geometry */
	u64 boost_until;		/* boot-time ns: twice the limit until then */
};

static struct zsq_node *zsq_nodes;	/* nr_node_ids entries */

/* Most seconds "rebuild N SECONDS" accepts (a day, as compact_interval). */
#define ZSQ_MAX_BOOST_S 86400

/* Seconds the node's limit stays doubled, 0 when it is not. */
static unsigned long zsq_boost_left(const struct zsq_node *qn)
{
	u64 until = READ_ONCE(qn->boost_until), now = ktime_get_boottime_ns();

	return until > now ? (unsigned long)DIV_ROUND_UP_ULL(until - now, NSEC_PER_SEC) : 0;
}

/* The pages the node may hold after a sort. */
static unsigned long zsq_limit(const struct zsq_node *qn)
{
	unsigned long limit = READ_ONCE(qn->limit);

	return zsq_boost_left(qn) ? 2 * limit : limit;
}

static struct {
	atomic64_t taken, released, shrunk;
	/* blocks not taken: gone from the lists, on a pageblock of another
	 * type; refused by alloc_contig_range (busy pageblock), and of
	 * those, taken at their list head or lost to a race there */
	atomic64_t gone, pageblock, refused, at_head, head_races;
} zsq_stats;

/* The sort in progress or the last one; written only with the sort mutex
 * held, read by the sysfs file without it (figures only). */
static struct {
	bool on, huge;
	int nid;
	struct zone *zone;
	struct zsq_pick pick;
	unsigned long want;
	unsigned long taken, kept, given_back, calls, failed;
	unsigned long settle_taken;	/* of taken: by the walk after a give-back */
	bool settling;
	s64 ns;
} zsq_run = { .nid = -1 };

/* ------------------------------------------------------------------------
 * Holding a block. Isolating a pageblock (alloc_contig_range, memory
 * offlining) fails on any page in it that is in use, referenced, and
 * neither on the LRU nor movable; held plainly, a block would make its
 * whole pageblock untakeable, and the blocks to take lie close together,
 * around the same long-lived pages. Compaction and alloc_contig_range()
 * by others must pass over held pages, as over a pinned page; memory
 * going offline makes us give them back first (zsq_memory_event).
 */
#ifdef ZS_HOLD_FROZEN
/*
 * 7.x: the block is taken as frozen pages (reference count 0), which
 * isolation treats as free-or-being-freed and nobody can take a reference
 * to; the kernel gives the same treatment to its own frozen allocations.
 */
static int zsq_hold(unsigned long pfn, unsigned int order)
{
	return alloc_contig_frozen_range(pfn, pfn + (1UL << order), ACR_FLAGS_NONE, __GFP_NOWARN);
}

static void zsq_unhold(unsigned long pfn, unsigned int order)
{
	free_contig_frozen_range(pfn, 1UL << order);
}
#else
/*
 * Before frozen ranges: the pages are marked movable, with operations
 * that refuse every move.
 */

/* alloc_contig_range() took the pageblocks' migratetype until its flags
 * argument replaced it (ACR_FLAGS_*). */
#ifdef ACR_FLAGS_NONE
#define ZSQ_ACR_ARG ACR_FLAGS_NONE
#else
#define ZSQ_ACR_ARG MIGRATE_MOVABLE
#endif

static bool zsq_isolate_page(struct page *page, isolate_mode_t mode)
{
	return false;
}

static int zsq_migrate_page(struct page *dst, struct page *src, enum migrate_mode mode)
{
	return -EBUSY;
}

static void zsq_putback_page(struct page *page)
{
}

static const struct movable_operations zsq_mops = {
	.isolate_page = zsq_isolate_page,
	.migrate_page = zsq_migrate_page,
	.putback_page = zsq_putback_page,
};

/* Pages are locked while their mapping changes, as __SetPageMovable()
 * wants; only a racing isolation attempt can hold the lock. */
static void zsq_mark_movable(unsigned long pfn, unsigned long size, bool movable)
{
	unsigned long i;

	for (i = 0; i < size; i++) {
		struct page *page = pfn_to_page(pfn + i);

		lock_page(page);
		if (movable)
			__SetPageMovable(page, &zsq_mops);
		else
			__ClearPageMovable(page);
		unlock_page(page);
	}
}

static int zsq_hold(unsigned long pfn, unsigned int order)
{
	int err = alloc_contig_range(pfn, pfn + (1UL << order), ZSQ_ACR_ARG, __GFP_NOWARN);

	if (!err)
		zsq_mark_movable(pfn, 1UL << order, true);
	return err;
}

static void zsq_unhold(unsigned long pfn, unsigned int order)
{
	unsigned long i;

	zsq_mark_movable(pfn, 1UL << order, false);
	/* Page by page, not free_contig_range(): a compaction scanner may
	 * hold a passing reference; then it frees the page. */
	for (i = 0; i < 1UL << order; i++)
		__free_page(pfn_to_page(pfn + i));
}
#endif

/* ------------------------------------------------------------------------
 * Giving blocks back.
 */

/* Moves the blocks of list within [start, end) to out, while *pages is
 * under max_pages; adds their pages to *pages. */
static void zsq_collect(struct list_head *list, struct list_head *out, unsigned long max_pages,
			unsigned long start, unsigned long end, unsigned long *pages)
{
	struct page *page, *next;

	list_for_each_entry_safe(page, next, list, lru) {
		unsigned long pfn = page_to_pfn(page), size = 1UL << zsq_order(page);

		if (*pages >= max_pages)
			break;
		if (pfn + size <= start || pfn >= end)
			continue;
		list_move_tail(&page->lru, out);
		*pages += size;
	}
}

/* Gives back the blocks on list, taken off the node's lists already but
 * still counted in its figures. */
static void zsq_give_back(int nid, struct list_head *list)
{
	struct zsq_node *qn = &zsq_nodes[nid];
	struct page *page, *next;
	unsigned long pages = 0, nblocks = 0;

	list_for_each_entry(page, list, lru) {
		pages += 1UL << zsq_order(page);
		nblocks++;
	}
	if (!nblocks)
		return;
	spin_lock(&qn->lock);
	qn->pages -= pages;
	qn->nblocks -= nblocks;
	spin_unlock(&qn->lock);
	list_for_each_entry_safe(page, next, list, lru) {
		unsigned int order = zsq_order(page);
		bool plain = page_private(page) & ZSQ_PLAIN;
		unsigned long i;

		list_del_init(&page->lru);
		set_page_private(page, 0);
		if (!plain) {
			zsq_unhold(page_to_pfn(page), order);
			continue;
		}
		for (i = 0; i < 1UL << order; i++)
			__free_page(pfn_to_page(page_to_pfn(page) + i));
	}
	atomic64_add(pages, &zsq_stats.released);
}

/* Gives back up to max_pages pages (whole blocks, at least one block) of
 * node nid, those in [start, end) only. Returns the pages given back.
 * Blocks a running sort is picking are left to it. */
static unsigned long zsq_release(int nid, unsigned long max_pages, unsigned long start,
				 unsigned long end)
{
	struct zsq_node *qn = &zsq_nodes[nid];
	unsigned long pages = 0;
	LIST_HEAD(out);

	spin_lock(&qn->lock);
	zsq_collect(&qn->old, &out, max_pages, start, end, &pages);
	zsq_collect(&qn->blocks, &out, max_pages, start, end, &pages);
	spin_unlock(&qn->lock);
	zsq_give_back(nid, &out);
	return pages;
}

static unsigned long zsq_release_all(void)
{
	unsigned long pages = 0;
	int nid;

	for_each_node(nid)
		pages += zsq_release(nid, ULONG_MAX, 0, ULONG_MAX);
	return pages;
}

/* ------------------------------------------------------------------------
 * Taking blocks during a sort.
 */

/* The zone modifiers that make a movable allocation start at zone. */
static gfp_t zsq_zone_gfp(struct zone *zone)
{
	switch (zone_idx(zone)) {
#ifdef CONFIG_ZONE_DMA
	case ZONE_DMA:
		return __GFP_MOVABLE | __GFP_DMA;
#endif
#ifdef CONFIG_ZONE_DMA32
	case ZONE_DMA32:
		return __GFP_MOVABLE | __GFP_DMA32;
#endif
	case ZONE_MOVABLE:
		return __GFP_MOVABLE | __GFP_HIGHMEM;
	default:
		return __GFP_MOVABLE;
	}
}

/*
 * Takes a free block alloc_contig_range() refused. Isolation checks the
 * whole pageblock, and once compaction has emptied a movable pageblock
 * around pages it cannot move (page tables, slab that fell back there),
 * every free block in it is refused: decay rounds after a compaction saw
 * some 25 refusals a sort, each a colliding block left for the next
 * allocation. Moved to the head of its list, the block is what an
 * allocation of its order from this zone gets, unless this CPU's per-CPU
 * list of that order has a block (handed out first) or another CPU takes
 * the head meanwhile: then we got another block, and give it back at
 * once. Its pageblock cannot be isolated anyway, so the block is held as
 * plain allocated pages (ZSQ_PLAIN), not marked movable or frozen.
 */
static bool zsq_take_head(struct zone *zone, struct page *page, unsigned int order)
{
	gfp_t gfp = GFP_NOWAIT | __GFP_THISNODE | __GFP_NOWARN | zsq_zone_gfp(zone);
	unsigned long flags;
	struct page *got;
	bool free;

	spin_lock_irqsave(&zone->lock, flags);
	free = PageBuddy(page) && page_private(page) == order &&
	       zs_pageblock_mt(page_to_pfn(page)) == MIGRATE_MOVABLE;
	if (free)
		list_move(&page->ZS_LINK, &zone->free_area[order].free_list[MIGRATE_MOVABLE]);
	spin_unlock_irqrestore(&zone->lock, flags);
	if (!free)
		return false;
	got = alloc_pages_node(zone_to_nid(zone), gfp, order);
	if (!got)
		return false;
	if (got != page) {
		__free_pages(got, order);
		atomic64_inc(&zsq_stats.head_races);
		return false;
	}
	split_page(got, order);
	atomic64_inc(&zsq_stats.at_head);
	return true;
}

/* Takes the free block of 2^order pages at pfn; false if it is no longer
 * such a block or the allocator refused. */
static bool zsq_take(struct zone *zone, unsigned long pfn, unsigned int order)
{
	struct zsq_node *qn = &zsq_nodes[zsq_run.nid];
	struct page *page = pfn_to_online_page(pfn);
	unsigned long plain = 0;
	int err;

	/* Unlocked reads: a hint only, alloc_contig_range() decides. */
	if (!page || page_zone(page) != zone || !PageBuddy(page) || page_private(page) != order) {
		atomic64_inc(&zsq_stats.gone);
		return false;
	}
	if (zs_pageblock_mt(pfn) != MIGRATE_MOVABLE) {
		atomic64_inc(&zsq_stats.pageblock);
		return false;
	}
	zsq_run.calls++;
	err = zs_test_refuse_contig() ? -EBUSY : zsq_hold(pfn, order);
	if (err) {
		atomic64_inc(&zsq_stats.refused);
		if (!zsq_take_head(zone, page, order))
			return false;
		plain = ZSQ_PLAIN;
	}
	set_page_private(page, order | plain);
	spin_lock(&qn->lock);
	list_add_tail(&page->lru, &qn->blocks);
	qn->pages += 1UL << order;
	qn->nblocks++;
	spin_unlock(&qn->lock);
	atomic64_add(1UL << order, &zsq_stats.taken);
	return true;
}

/* Whether taking size pages leaves the zone its high watermark plus the
 * protected allocation free; a small zone (DMA's 16 MiB) never has that
 * room. */
static bool zsq_room(struct zone *zone, unsigned long size)
{
	return zone_page_state(zone, NR_FREE_PAGES) >= high_wmark_pages(zone) + zsq_run.want + size;
}

/*
 * Empties the zone's per-CPU lists into the free lists, where the sort
 * and the policy see them: those lists are handed out before any free
 * list, in no order of ours, and by default hold thousands of pages (the
 * blocks just given back among them). drain_all_pages() is not exported;
 * alloc_contig_range() calls it: the first block of the lowest non-empty
 * movable list is taken and held like the others.
 */
static void zsq_drain(struct zone *zone)
{
	unsigned long flags, pfn = 0;
	unsigned int order, found = 0;

	spin_lock_irqsave(&zone->lock, flags);
	for (order = 0; order < ARRAY_SIZE(zone->free_area) && !pfn; order++) {
		struct list_head *list = &zone->free_area[order].free_list[MIGRATE_MOVABLE];

		if (!list_empty(list)) {
			pfn = page_to_pfn(list_first_entry(list, struct page, lru));
			found = order;
		}
	}
	spin_unlock_irqrestore(&zone->lock, flags);
	/* Within the limit and the zone's room like every block held. */
	if (!pfn || zsq_run.pick.budget < (1ULL << found) || !zsq_room(zone, 1UL << found) ||
	    !zsq_take(zone, pfn, found))
		return;
	zsq_run.pick.budget -= 1ULL << found;
	zsq_run.pick.taken += 1ULL << found;
	zsq_run.taken += 1UL << found;
}

void zsq_sort_begin(int nid, const struct zsp_geom *g)
{
	unsigned long cache_pages = (unsigned long)(g->colors * g->ways);
	unsigned int permille = READ_ONCE(zsq_permille);
	pg_data_t *pgdat = NODE_DATA(nid);
	struct zsq_node *qn = &zsq_nodes[nid];
	int zi;

	qn->limit = cache_pages / 1000 * permille + cache_pages % 1000 * permille / 1000;
	zsq_run.on = READ_ONCE(zsq_enabled) && qn->limit;
	zsq_run.nid = nid;
	zsq_run.zone = NULL;
	zsq_run.want = cache_pages / 2;
	zsq_run.taken = zsq_run.kept = zsq_run.given_back = zsq_run.settle_taken = 0;
	zsq_run.settling = false;
	zsq_run.calls = zsq_run.failed = 0;
	zsq_run.ns = 0;
	if (!zsq_run.on) {
		zsq_release(nid, ULONG_MAX, 0, ULONG_MAX);
		return;
	}
	/*
	 * What is held waits for its list's turn (zsq_filter), and is charged
	 * to the budget only when the pick keeps it there. Charged from the
	 * start, blocks held in larger lists would starve the small lists
	 * handed out first, where colliding blocks matter most, and then be
	 * given back anyway. So during a sort the node may hold up to twice
	 * its limit (each take leaves the watermark margin free); after it,
	 * at most the limit, a lowered one too.
	 */
	spin_lock(&qn->lock);
	list_splice_tail_init(&qn->blocks, &qn->old);
	spin_unlock(&qn->lock);
	zsq_pick_init(&zsq_run.pick, g, zsq_run.want, zsq_limit(qn));
	for (zi = 0; zi < MAX_NR_ZONES; zi++)
		if (populated_zone(&pgdat->node_zones[zi]))
			zsq_drain(&pgdat->node_zones[zi]);
}

/* Takes the held blocks of this zone and order off the node's list of
 * those held before the sort, onto mine, their pfns to pfns[0, max);
 * returns how many. */
static size_t zsq_pull(struct zone *zone, unsigned int order, struct list_head *mine, u64 *pfns,
		       size_t max)
{
	struct zsq_node *qn = &zsq_nodes[zsq_run.nid];
	struct page *page, *next;
	size_t n = 0;

	spin_lock(&qn->lock);
	list_for_each_entry_safe(page, next, &qn->old, lru) {
		if (n == max)
			break;
		if (zsq_order(page) != order || page_zone(page) != zone)
			continue;
		list_move_tail(&page->lru, mine);
		pfns[n++] = page_to_pfn(page);
	}
	spin_unlock(&qn->lock);
	return n;
}

/* A held block the pick takes again: back on the node's list. */
static void zsq_keep(unsigned long pfn, unsigned int order)
{
	struct zsq_node *qn = &zsq_nodes[zsq_run.nid];

	spin_lock(&qn->lock);
	list_move_tail(&pfn_to_page(pfn)->lru, &qn->blocks);
	spin_unlock(&qn->lock);
	zsq_run.taken += 1UL << order;
	zsq_run.kept += 1UL << order;
}

size_t zsq_filter(struct zone *zone, unsigned int order, int mt, u32 *load, u32 *tload,
		  u64 *blocks, size_t n, size_t cap, u64 *tmp)
{
	ktime_t t0 = ktime_get();
	struct zsq_held_split split;
	unsigned long size = 1UL << order;
	size_t nheld, kept, i;
	bool took;
	LIST_HEAD(mine);

	if (mt != MIGRATE_MOVABLE)
		return n;
	nheld = zsq_pull(zone, order, &mine, blocks + n, cap - n);
	if (zone != zsq_run.zone) {
		/* The per-CPU pages the sort counted come first. */
		u64 before = 0, s;

		for (s = 0; s < zsq_run.pick.g.nslots; s++)
			before += load[s];
		zsq_run.zone = zone;
		zsq_run.huge = false;
		zsq_pick_zone(&zsq_run.pick, before);
	}
	if (ZS_THP_ORDER && order >= ZS_THP_ORDER && !zsq_run.huge && tload) {
		/* Huge-page allocations start here: tload counts these
		 * lists alone (zsp_mark_sequence). */
		zsq_run.huge = true;
		zsq_pick_huge(&zsq_run.pick, 0);
	}
	if (zsq_run.on) {
		kept = zsq_pick_list(&zsq_run.pick, load, zsq_run.huge ? tload : NULL, blocks,
				     n + nheld, nheld, order, tmp, &split);
	} else {
		kept = n + nheld;
		split.kept = nheld;
		split.taken = 0;
	}
	/* Held blocks still colliding stay held; the others are given back
	 * first, so that the takes below (alloc_contig_range drains the
	 * per-CPU lists) bring them into the free lists the sort orders. */
	for (i = kept; i < kept + split.taken; i++)
		zsq_keep((unsigned long)blocks[i], order);
	zsq_give_back(zsq_run.nid, &mine);
	zsq_run.given_back += (unsigned long)split.kept << order;
	took = false;
	for (i = kept + split.taken; i < n + nheld; i++) {
		bool ok = false;

		/* A take can clear up to 4 MiB (init_on_alloc, Debian's
		 * default) and a list can hold hundreds of blocks to take:
		 * aged guests logged soft lockups of 22-44 s in the sorter. */
		cond_resched();
		if (fatal_signal_pending(current))
			zsq_run.on = false;
		/* A zone without room is passed over, not the rest of the
		 * sort: switching the run off in DMA, the last zone walked,
		 * left the second walk after a give-back unable to take. */
		if (zsq_run.on && zsq_room(zone, size)) {
			ok = zsq_take(zone, (unsigned long)blocks[i], order);
			if (!ok)
				zsq_run.failed++;
		}
		if (ok) {
			zsq_run.taken += size;
			if (zsq_run.settling)
				zsq_run.settle_taken += size;
			took = true;
			continue;
		}
		zsq_pick_untake(&zsq_run.pick, order);
		blocks[kept++] = blocks[i];
	}
	/* Pages given back went to per-CPU lists, handed out before any
	 * free list; a take drains those into the free lists. */
	if (split.kept && !took && zsq_run.on)
		zsq_drain(zone);
	zsq_run.ns += ktime_to_ns(ktime_sub(ktime_get(), t0));
	return kept;
}

void zsq_sort_end(int nid)
{
	struct zsq_node *qn = &zsq_nodes[nid];
	unsigned long pages = 0;
	LIST_HEAD(out);

	/* Lists the sort did not reach (it stopped early, or they emptied):
	 * their held blocks go back. */
	spin_lock(&qn->lock);
	zsq_collect(&qn->old, &out, ULONG_MAX, 0, ULONG_MAX, &pages);
	spin_unlock(&qn->lock);
	zsq_give_back(nid, &out);
	zsq_run.given_back += pages;
}

bool zsq_settle(int nid)
{
	struct zsq_node *qn = &zsq_nodes[nid];
	pg_data_t *pgdat = NODE_DATA(nid);
	unsigned long held, limit;
	int zi;

	if (zsq_run.nid != nid || !zsq_run.given_back)
		return false;
	for (zi = 0; zi < MAX_NR_ZONES; zi++)
		if (populated_zone(&pgdat->node_zones[zi]))
			zsq_drain(&pgdat->node_zones[zi]);
	/*
	 * The walk again picks the lists as they now are, with what is left
	 * of the limit. The blocks given back merged with their free buddies,
	 * so a list in which the first walk found fitting blocks enough to
	 * end the allocation can have lost them: a decay round that gave
	 * back 11 307 of 16 384 held pages was left at 3.0% by the module's
	 * own estimate, with two thirds of the limit unused. Held blocks are
	 * not picked again, so nothing is given back and no third walk
	 * follows.
	 */
	held = READ_ONCE(qn->pages);
	limit = zsq_limit(qn);
	zsq_pick_init(&zsq_run.pick, &zsq_run.pick.g, zsq_run.want, held < limit ? limit - held : 0);
	zsq_run.zone = NULL;
	zsq_run.on = READ_ONCE(zsq_enabled) && limit;
	zsq_run.settling = true;
	return true;
}

/* ------------------------------------------------------------------------
 * Memory pressure and memory going offline.
 */
static unsigned long zsq_count(struct shrinker *s, struct shrink_control *sc)
{
	unsigned long pages = READ_ONCE(zsq_nodes[sc->nid].pages);

	return pages ? pages : SHRINK_EMPTY;
}

static unsigned long zsq_scan(struct shrinker *s, struct shrink_control *sc)
{
	unsigned long pages = zsq_release(sc->nid, sc->nr_to_scan, 0, ULONG_MAX);

	atomic64_add(pages, &zsq_stats.shrunk);
	return pages ? pages : SHRINK_STOP;
}

#ifdef SHRINKER_ALLOCATED
/* 6.7 and later: shrinkers are allocated by the kernel. */
static struct shrinker *zsq_shrinker;

static int zsq_shrinker_add(void)
{
	zsq_shrinker = shrinker_alloc(SHRINKER_NUMA_AWARE, "zonesort-quarantine");
	if (!zsq_shrinker)
		return -ENOMEM;
	zsq_shrinker->count_objects = zsq_count;
	zsq_shrinker->scan_objects = zsq_scan;
	zsq_shrinker->seeks = 0;
	shrinker_register(zsq_shrinker);
	return 0;
}

static void zsq_shrinker_del(void)
{
	shrinker_free(zsq_shrinker);
}
#else
/* seeks 0: the held pages cost nothing to recreate; reclaim takes half of
 * them at every pass. */
static struct shrinker zsq_shrinker = {
	.count_objects = zsq_count,
	.scan_objects = zsq_scan,
	.seeks = 0,
	.flags = SHRINKER_NUMA_AWARE,
};

static int zsq_shrinker_add(void)
{
#ifdef ZS_HAVE_SHRINKER_NAME	/* 6.0-6.6, RHEL 9.3+: conftest-shrinker-name.c */
	return register_shrinker(&zsq_shrinker, "zonesort-quarantine");
#else
	return register_shrinker(&zsq_shrinker);
#endif
}

static void zsq_shrinker_del(void)
{
	unregister_shrinker(&zsq_shrinker);
}
#endif

static int zsq_memory_event(struct notifier_block *nb, unsigned long action, void *arg)
{
	struct memory_notify *mn = arg;
	int nid;

	if (action != MEM_GOING_OFFLINE)
		return NOTIFY_OK;
	for_each_node(nid)
		zsq_release(nid, ULONG_MAX, mn->start_pfn, mn->start_pfn + mn->nr_pages);
	return NOTIFY_OK;
}

static struct notifier_block zsq_memory_nb = {
	.notifier_call = zsq_memory_event,
};

/* ------------------------------------------------------------------------
 * /sys/kernel/zone_sort_free_pages/quarantine: read the figures; write
 * "on" or "off" (the quarantine parameter: from the next sort on),
 * "release" (give everything back now), "release N" (node N's only) or
 * "rebuild N SECONDS" (zsq_rebuild).
 */
static ssize_t quarantine_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	ssize_t len;
	int nid;

	len = sysfs_emit(buf,
			 "enabled=%d\n"
			 "limit_permille=%u\n"
			 "taken_pages_total=%lld\n"
			 "released_pages_total=%lld\n"
			 "released_by_pressure_pages=%lld\n"
			 "not_taken_gone=%lld\n"
			 "not_taken_pageblock=%lld\n"
			 "not_taken_refused=%lld\n"
			 "refused_taken_at_head=%lld\n"
			 "refused_lost_at_head=%lld\n"
			 "last_node=%d\n"
			 "last_taken_pages=%lu\n"
			 "last_kept_pages=%lu\n"
			 "last_given_back_pages=%lu\n"
			 "last_take_calls=%lu\n"
			 "last_take_failed=%lu\n"
			 "last_short_pages=%llu\n"
			 "last_settle_taken_pages=%lu\n"
			 "last_take_ns=%lld\n",
			 READ_ONCE(zsq_enabled), READ_ONCE(zsq_permille),
			 atomic64_read(&zsq_stats.taken), atomic64_read(&zsq_stats.released),
			 atomic64_read(&zsq_stats.shrunk), atomic64_read(&zsq_stats.gone),
			 atomic64_read(&zsq_stats.pageblock), atomic64_read(&zsq_stats.refused),
			 atomic64_read(&zsq_stats.at_head), atomic64_read(&zsq_stats.head_races),
			 READ_ONCE(zsq_run.nid),
			 READ_ONCE(zsq_run.taken), READ_ONCE(zsq_run.kept),
			 READ_ONCE(zsq_run.given_back), READ_ONCE(zsq_run.calls),
			 READ_ONCE(zsq_run.failed),
			 (unsigned long long)READ_ONCE(zsq_run.pick.short_pages),
			 READ_ONCE(zsq_run.settle_taken), READ_ONCE(zsq_run.ns));
	for_each_node_state(nid, N_MEMORY)
		len += sysfs_emit_at(buf, len,
				     "node=%d held_pages=%lu held_blocks=%lu limit_pages=%lu boost_s=%lu\n",
				     nid, READ_ONCE(zsq_nodes[nid].pages),
				     READ_ONCE(zsq_nodes[nid].nblocks), zsq_limit(&zsq_nodes[nid]),
				     zsq_boost_left(&zsq_nodes[nid]));
	return len;
}

/*
 * "rebuild N SECONDS": node N's held blocks go back, and for SECONDS its
 * sorts may hold twice the limit. The sorter library writes it when it
 * compacts a node whose quarantine ran full (lib/sorter.c). Compaction
 * packs the long-lived pages together, and the next jobs scatter a fresh
 * set of them over memory that is now mostly large blocks: each leaves
 * free blocks of every order around it, and an allocation of half the
 * cache then consumes blocks up to order 6-7 whose collisions only whole
 * blocks can remove. The limit that suffices on an aged node did not
 * there: in the decay bench, and in tests/kmod/policysim.c's replay of
 * it, the rounds right after a compaction ran out of room while the
 * rounds before had it to spare. Until the next compaction may run, the
 * quarantine is the only remedy, so the sorter gives that long.
 */
static int zsq_rebuild(const char *args)
{
	unsigned int secs;
	int nid, end = 0;

	if (sscanf(args, "%d %u%n", &nid, &secs, &end) != 2 || (args[end] && !isspace(args[end])) ||
	    nid < 0 || nid >= nr_node_ids || !node_online(nid) || !secs || secs > ZSQ_MAX_BOOST_S)
		return -EINVAL;
	zsq_release(nid, ULONG_MAX, 0, ULONG_MAX);
	WRITE_ONCE(zsq_nodes[nid].boost_until,
		   ktime_get_boottime_ns() + (u64)secs * NSEC_PER_SEC);
	return 0;
}

static ssize_t quarantine_store(struct kobject *k, struct kobj_attribute *a, const char *buf,
				size_t len)
{
	if (sysfs_streq(buf, "on"))
		WRITE_ONCE(zsq_enabled, true);
	else if (sysfs_streq(buf, "off"))
		WRITE_ONCE(zsq_enabled, false);
	else if (sysfs_streq(buf, "release"))
		zsq_release_all();
	else if (!strncmp(buf, "release ", 8)) {
		int nid;

		if (kstrtoint(buf + 8, 10, &nid) || nid < 0 || nid >= nr_node_ids ||
		    !node_online(nid))
			return -EINVAL;
		zsq_release(nid, ULONG_MAX, 0, ULONG_MAX);
	} else if (!strncmp(buf, "rebuild ", 8)) {
		int err = zsq_rebuild(buf + 8);

		if (err)
			return err;
	} else {
		return -EINVAL;
	}
	return len;
}

static struct kobj_attribute zsq_attr = __ATTR(quarantine, 0644, quarantine_show, quarantine_store);

int zsq_init(struct kobject *dir)
{
	int nid, err;

	zsq_nodes = kcalloc(nr_node_ids, sizeof(*zsq_nodes), GFP_KERNEL);
	if (!zsq_nodes)
		return -ENOMEM;
	for (nid = 0; nid < nr_node_ids; nid++) {
		spin_lock_init(&zsq_nodes[nid].lock);
		INIT_LIST_HEAD(&zsq_nodes[nid].blocks);
		INIT_LIST_HEAD(&zsq_nodes[nid].old);
	}
	err = zsq_shrinker_add();
	if (err)
		goto free;
	err = register_memory_notifier(&zsq_memory_nb);
	if (err)
		goto shrinker;
	err = sysfs_create_file(dir, &zsq_attr.attr);
	if (err)
		goto notifier;
	return 0;
notifier:
	unregister_memory_notifier(&zsq_memory_nb);
shrinker:
	zsq_shrinker_del();
free:
	kfree(zsq_nodes);
	zsq_nodes = NULL;
	return err;
}

void zsq_exit(void)
{
	if (!zsq_nodes)
		return;
	unregister_memory_notifier(&zsq_memory_nb);
	zsq_shrinker_del();
	zsq_release_all();
	kfree(zsq_nodes);
	zsq_nodes = NULL;
}
