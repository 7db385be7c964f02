// SPDX-License-Identifier: GPL-2.0
/*
 * zonesort quarantine: lowers the collisions of the next allocation below
 * what sorting alone can reach.
 *
 * A few long-lived pages scattered over memory leave many small free
 * blocks, and the buddy allocator hands out every smaller block before it
 * splits a larger one; collisions among those blocks stay whatever their
 * order (zonesort_quarantine_policy.h). During a sort, at each movable
 * free list, zonesort_sort.c passes us the list's snapshot; we take the
 * blocks the policy picks (zonesort_take.c) and the sort orders the rest.
 *
 * Held blocks (struct zsq_block, zonesort_held.h, one per block) go back
 * to the page allocator
 *   - when the node is sorted again and the block no longer collides
 *     (each list's held blocks are picked afresh with the list),
 *   - when whoever isolates its pageblock asks (zonesort_hold.c): memory
 *     offlining, contiguous allocations; and when memory goes offline
 *     (the memory notifier), for holds isolation cannot take back,
 *   - under memory pressure: a shrinker, reporting them as reclaimed,
 *   - on "1" written to quarantine/release (every node's) or to a node's
 *     quarantine_release, and when the quarantine is switched off or the
 *     module unloads (zonesort_quarantine_sysfs.c, zonesort_giveback.c).
 * This file is the quarantine's part of a sort.
 *
 * Bounds. A node holds at most quarantine_max_permille per mille of its
 * cache's pages, at every instant: a take first makes room by giving back
 * held blocks of the lists handed out last, not yet picked in this sort.
 * Below that a sort takes what its allocation needs: a node holds what
 * still collides, so what it holds falls again as the node's free memory
 * merges, without a second bound to tune. Nothing is taken while the
 * zone's free pages would drop below its high watermark plus the protected
 * allocation (half the cache), which finds its pages free right after the
 * sort.
 *
 * Accounting. Held pages are counted in NR_KERNEL_MISC_RECLAIMABLE:
 * /proc/meminfo and the nodes' meminfo show them in KReclaimable, and
 * MemAvailable includes them.
 *
 * Locking. The node's lock (a spinlock, never with interrupts off: no
 * interrupt handler takes it) guards the lists, states and counters; no
 * hold handles more than ZS_BATCH list entries. Pages are given back
 * after it is dropped, with cond_resched() between blocks.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/bsearch.h>
#include <linux/gfp.h>
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/mmzone.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/sort.h>
#include <linux/spinlock.h>
#include <linux/vmstat.h>

#include "zonesort_abi.h"
#include "zonesort_compat.h"
#include "zonesort_freelist.h"
#include "zonesort_giveback.h"
#include "zonesort_held.h"
#include "zonesort_hold.h"
#include "zonesort_internal.h"
#include "zonesort_quarantine.h"
#include "zonesort_quarantine_policy.h"
#include "zonesort_take.h"
#include "zonesort_testhooks.h"

/* Pages a sort may set aside as strays (zonesort_take.h): 8 MiB. */
#define ZSQ_STRAY_PAGES 2048UL

/* ------------------------------------------------------------------------
 * Parameters.
 */
static bool zsq_enabled = true;
module_param_named(quarantine, zsq_enabled, bool, 0644);
MODULE_PARM_DESC(quarantine,
		 "take the free blocks a sort cannot keep from colliding out of the free lists until the next sort, memory pressure or isolation (default Y)");

static unsigned int zsq_max_permille = ZS_DEFAULT_Q_MAX_PERMILLE;

int zsq_set_max_permille(const char *val)
{
	unsigned int v;

	if (kstrtouint(val, 0, &v) || v > ZS_MAX_PERMILLE) {
		pr_warn("%s: '%.*s' is not a number from 0 to 1000 (per mille of the cache's pages)\n",
			ZS_PARAM_Q_MAX_PERMILLE, (int)strcspn(val, "\n"), val);
		return -EINVAL;
	}
	WRITE_ONCE(zsq_max_permille, v);
	return 0;
}

static int zsq_set_permille(const char *val, const struct kernel_param *kp)
{
	return zsq_set_max_permille(val);
}

unsigned int zsq_get_max_permille(void)
{
	return READ_ONCE(zsq_max_permille);
}

bool zsq_get_enabled(void)
{
	return READ_ONCE(zsq_enabled);
}

void zsq_set_enabled(bool on)
{
	WRITE_ONCE(zsq_enabled, on);
}

static const struct kernel_param_ops zsq_permille_ops = {
	.set = zsq_set_permille,
	.get = param_get_uint,
};

module_param_cb(quarantine_max_permille, &zsq_permille_ops, &zsq_max_permille, 0644);
MODULE_PARM_DESC(quarantine_max_permille,
		 "most pages a node ever holds, per mille of the cache's pages (0-1000, default 500)");

/* The last sort's figures, for quarantine/stats; written by the sort
 * at its end, read without a lock. */
static struct zsq_figures zsq_last = { .nid = -1 };

struct zsq_figures zsq_last_figures(void)
{
	return zsq_last;	/* figures only: a reader may see two sorts' mixed */
}

/* ------------------------------------------------------------------------
 * Making room and taking during a sort.
 */

/* Whether taking size pages leaves the zone its high watermark plus the
 * protected allocation free; a small zone (DMA's 16 MiB) never has that
 * room. */
static bool zsq_room(const struct zsq_sort *qs, struct zone *zone, unsigned long size)
{
	return zone_page_state(zone, NR_FREE_PAGES) >= high_wmark_pages(zone) + qs->want + size;
}

/* The list this sort reaches last among those it has not picked yet, or
 * false: lower zones come after higher ones, higher orders after lower. */
static bool zsq_unvisited_last(const struct zsq_sort *qs, struct zsq_node *qn, int *zi,
			       unsigned int *order)
{
	int z, o;

	for (z = 0; z <= qs->zi; z++) {
		for (o = ZS_NR_ORDERS - 1; o >= 0; o--) {
			if (z == qs->zi && o <= (int)qs->order)
				break;
			if (qn->count[z][o]) {
				*zi = z;
				*order = o;
				return true;
			}
		}
	}
	return false;
}

/*
 * Reserves need pages under the node's maximum for blocks about to be
 * taken, giving back held blocks of lists not yet picked when it must.
 * False when even that leaves no room.
 */
static bool zsq_reserve(struct zsq_sort *qs, struct zsq_node *qn, unsigned long need)
{
	LIST_HEAD(out);

	for (;;) {
		unsigned int batch = ZS_BATCH, order;
		int zi;

		spin_lock(&qn->lock);
		while (qn->pages + need > qn->max && batch &&
		       zsq_unvisited_last(qs, qn, &zi, &order)) {
			struct zsq_block *b = list_last_entry(&qn->held[zi][order],
							      struct zsq_block, link);

			zsq_unlist(qn, b);
			list_add_tail(&b->link, &out);
			batch--;
		}
		if (qn->pages + need <= qn->max) {
			qn->pages += need;
			qn->peak = max(qn->peak, qn->pages);
			spin_unlock(&qn->lock);
			qs->f.given_back += zsq_give_back(qs->nid, &out);
			return true;
		}
		spin_unlock(&qn->lock);
		zs_note_hold(ZS_BATCH - batch);
		if (list_empty(&out))
			return false;
		qs->f.given_back += zsq_give_back(qs->nid, &out);
	}
}

static void zsq_unreserve(struct zsq_node *qn, unsigned long pages)
{
	spin_lock(&qn->lock);
	qn->pages -= pages;
	spin_unlock(&qn->lock);
}

/*
 * A block just taken (page: its head) becomes held, or goes straight
 * back when its pageblock was isolated meanwhile: memory offlining or a
 * contiguous allocation wants it. Its pages are reserved already.
 */
static bool zsq_hold_taken(struct zsq_sort *qs, struct zsq_node *qn, struct zsq_block *b,
			   struct page *page)
{
	unsigned long pages = 1UL << b->order;
	bool back;
	LIST_HEAD(out);

	b->state = ZSQ_INFLIGHT;
	b->release_wanted = false;
	if (zsh_hold(b, page)) {
		__free_pages(page, b->order);
		zsq_unreserve(qn, pages);
		zsq_block_destroy(b);
		return false;
	}
	zsq_account(qs->nid, pages);
	atomic64_add(pages, &zsq_stats.taken);
	if (b->order >= pageblock_order)
		atomic64_add(pages, &zsq_stats.taken_huge);
	zs_test_at(ZS_TP_TAKEN, b->pfn);
	spin_lock(&qn->lock);
	back = b->release_wanted || zs_pageblock_mt(b->pfn) == MIGRATE_ISOLATE;
	if (back) {
		/* Reserved, never counted among the node's blocks. */
		b->state = ZSQ_RELEASING;
		qn->pages -= pages;
		list_add(&b->link, &out);
	} else {
		b->state = ZSQ_HELD;
		list_add_tail(&b->link, &qn->held[b->zone][b->order]);
		qn->count[b->zone][b->order]++;
		qn->nblocks++;
	}
	spin_unlock(&qn->lock);
	/* b may be freed from here on. */
	zsq_give_back(qs->nid, &out);
	return !back;
}

/* How many of n blocks of 2^order pages fit under the zone's free
 * margin. */
static size_t zsq_fit(const struct zsq_sort *qs, struct zone *zone, unsigned int order, size_t n)
{
	unsigned long free = zone_page_state(zone, NR_FREE_PAGES);
	unsigned long floor = high_wmark_pages(zone) + qs->want;

	if (free <= floor)
		return 0;
	return min_t(size_t, n, (free - floor) >> order);
}

/*
 * Takes up to n (<= ZS_TAKE_BATCH) of the free blocks pfns[0..n) of this
 * zone and order; those not taken stay in pfns, moved to its front.
 * Returns how many stay.
 */
static size_t zsq_take_batch(struct zsq_sort *qs, struct zone *zone, unsigned int order, u64 *pfns,
			     size_t n)
{
	struct zsq_node *qn = &zsq_nodes[qs->nid];
	struct zsq_block *bs[ZS_TAKE_BATCH];
	struct page *got[ZS_TAKE_BATCH];
	size_t want = zsq_fit(qs, zone, order, n), i, left = 0;

	if (order > zsh_max_order())
		return n;

	for (i = 0; i < want; i++) {
		bs[i] = zsq_block_new();
		if (!bs[i])
			break;
	}
	want = i;
	if (want && !zsq_reserve(qs, qn, want << order)) {
		qs->f.room_short += want << order;
		atomic64_add(want, &zsq_stats.no_room);
		while (want)
			zsq_block_destroy(bs[--want]);
	}
	if (want)
		zs_take_blocks(zone, order, pfns, want, got, &qs->strays);
	for (i = 0; i < n; i++) {
		if (i < want && got[i]) {
			struct zsq_block *b = bs[i];

			b->pfn = pfns[i];
			b->order = order;
			b->zone = zone_idx(zone);
			if (zsq_hold_taken(qs, qn, b, got[i])) {
				qs->f.taken += 1UL << order;
				if (order >= pageblock_order)
					qs->f.taken_huge += 1UL << order;
				if (qs->settling)
					qs->f.settle_taken += 1UL << order;
			}
			continue;
		}
		if (i < want) {
			zsq_unreserve(qn, 1UL << order);
			zsq_block_destroy(bs[i]);
			atomic64_inc(&zsq_stats.gone);
			qs->f.failed++;
		}
		pfns[left++] = pfns[i];
	}
	return left;
}

/* Takes the blocks blocks[from..to); those not taken are moved to
 * blocks[kept..) and given back to the pick. Returns the new kept. */
static size_t zsq_take_list(struct zsq_sort *qs, struct zone *zone, unsigned int order,
			    u64 *blocks, size_t kept, size_t from, size_t to)
{
	bool can = qs->on && (zsh_isolation_takes_back() || zone_idx(zone) != ZONE_MOVABLE);
	size_t i;

	while (from < to) {
		size_t n = min_t(size_t, to - from, ZS_TAKE_BATCH), left = n;

		if (fatal_signal_pending(current))
			qs->on = can = false;
		if (can)
			left = zsq_take_batch(qs, zone, order, blocks + from, n);
		for (i = 0; i < left; i++) {
			zsq_pick_untake(&qs->pick, order);
			blocks[kept++] = blocks[from + i];
		}
		from += n;
		cond_resched();
	}
	return kept;
}

/* ------------------------------------------------------------------------
 * Held blocks during a sort.
 */

/* Moves this list's held blocks onto the node's picking list, their pfns
 * to pfns[0, max); returns how many. */
static size_t zsq_pull(struct zsq_node *qn, int zi, unsigned int order, u64 *pfns, size_t max)
{
	struct list_head *list = &qn->held[zi][order];
	size_t n = 0;

	spin_lock(&qn->lock);
	while (n < max && !list_empty(list)) {
		unsigned int batch = 0;

		while (n < max && batch < ZS_BATCH && !list_empty(list)) {
			struct zsq_block *b = list_first_entry(list, struct zsq_block, link);

			list_move_tail(&b->link, &qn->picking);
			qn->count[zi][order]--;
			b->state = ZSQ_PICKING;
			pfns[n++] = b->pfn;
			batch++;
		}
		zs_note_hold(batch);
		spin_unlock(&qn->lock);
		cond_resched();
		spin_lock(&qn->lock);
	}
	spin_unlock(&qn->lock);
	return n;
}

static int zsq_cmp_pfn(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

/*
 * The pick decided: the picking blocks whose pfns are in keep[0..nkeep)
 * stay held, unless their pageblock is isolated; the others go back.
 * keep is sorted here. Only the sort unlinks picking blocks, so the list
 * is walked without the lock between batches.
 */
static void zsq_settle_picked(struct zsq_sort *qs, struct zsq_node *qn, u64 *keep, size_t nkeep)
{
	struct zsq_block *b, *next;
	LIST_HEAD(out);
	LIST_HEAD(gone);

	sort(keep, nkeep, sizeof(*keep), zsq_cmp_pfn, NULL);
	spin_lock(&qn->lock);
	while (!list_empty(&qn->picking)) {
		unsigned int batch = 0;

		while (batch++ < ZS_BATCH && !list_empty(&qn->picking)) {
			u64 pfn;

			b = list_first_entry(&qn->picking, struct zsq_block, link);
			pfn = b->pfn;
			list_del(&b->link);
			if (b->state == ZSQ_GONE) {
				/* Freed outside the lock: on 7.x that frees pages
				 * put back on its list meanwhile (zsh_free). */
				list_add_tail(&b->link, &gone);
			} else if (bsearch(&pfn, keep, nkeep, sizeof(*keep), zsq_cmp_pfn) &&
				   zs_pageblock_mt(b->pfn) != MIGRATE_ISOLATE) {
				b->state = ZSQ_HELD;
				list_add_tail(&b->link, &qn->held[b->zone][b->order]);
				qn->count[b->zone][b->order]++;
				qs->f.kept += 1UL << b->order;
			} else {
				zsq_releasing(qn, b);
				list_add_tail(&b->link, &out);
			}
		}
		zs_note_hold(batch - 1);
		spin_unlock(&qn->lock);
		list_for_each_entry_safe(b, next, &gone, link) {
			list_del(&b->link);
			zsh_free(b);
		}
		qs->f.given_back += zsq_give_back(qs->nid, &out);
		spin_lock(&qn->lock);
	}
	spin_unlock(&qn->lock);
}

/* alloc_contig_range() took the pageblocks' migratetype until its flags
 * argument replaced it (ACR_FLAGS_*). 0 when the range was allocated. */
static int zs_alloc_contig(unsigned long pfn, unsigned long nr)
{
#ifdef ACR_FLAGS_NONE
	return alloc_contig_range(pfn, pfn + nr, ACR_FLAGS_NONE, __GFP_NOWARN);
#else
	return alloc_contig_range(pfn, pfn + nr, MIGRATE_MOVABLE, __GFP_NOWARN);
#endif
}

/*
 * A free page of zone whose pageblock alloc_contig_range() may isolate
 * for a moment without failing an offline that could otherwise succeed
 * (offlining gives up on a range with a pageblock isolated already): in
 * boot memory (an early section, not hotplugged) with a pageblock of
 * unmovable or reclaimable type in the same section, which holds the
 * kernel's own pages that keep its memory block from going offline
 * anyway. The first such section of the zone, among the first
 * ZSQ_DRAIN_SECTIONS; 0 when there is none. Read without zone->lock: a
 * page that is no longer free by then only costs alloc_contig_range() a
 * migration or a failure.
 */
#define ZSQ_DRAIN_SECTIONS 64

static bool zsq_section_pinned(unsigned long start)
{
	unsigned long pfn;

	for (pfn = start; pfn < start + PAGES_PER_SECTION; pfn += pageblock_nr_pages) {
		int mt = zs_pageblock_mt(pfn);

		if (mt == MIGRATE_UNMOVABLE || mt == MIGRATE_RECLAIMABLE)
			return true;
	}
	return false;
}

static unsigned long zsq_drain_pfn(struct zone *zone)
{
	unsigned long start = round_down(zone->zone_start_pfn, PAGES_PER_SECTION);
	unsigned long end = zone_end_pfn(zone), sec, pfn;
	unsigned int seen = 0;

	for (sec = start; sec < end && seen < ZSQ_DRAIN_SECTIONS; sec += PAGES_PER_SECTION) {
		struct mem_section *ms = __pfn_to_section(sec);

		if (!valid_section(ms) || !online_section(ms))
			continue;
		seen++;
		if (!early_section(ms) || !zsq_section_pinned(sec))
			continue;
		for (pfn = max(sec, zone->zone_start_pfn); pfn < min(sec + PAGES_PER_SECTION, end);
		     pfn++) {
			struct page *page = pfn_to_online_page(pfn);

			if (page && page_zone(page) == zone && PageBuddy(page) &&
			    zs_pageblock_mt(pfn) == MIGRATE_MOVABLE)
				return pfn;
		}
		cond_resched();
	}
	return 0;
}

/* Empties the zone's per-CPU lists into the free lists, where the sort and
 * the policy see them: they are handed out before any free list, and
 * blocks given back land there. drain_all_pages() is not exported;
 * alloc_contig_range() calls it (with an LRU drain) on the zone of its
 * range: one free page (zsq_drain_pfn) is allocated and freed at once. */
static void zsq_drain(struct zsq_sort *qs, struct zone *zone)
{
	unsigned long pfn = zsq_drain_pfn(zone);

	if (!pfn || !zsq_room(qs, zone, 1))
		return;
	qs->f.allcpu_ops++;
	if (!zs_alloc_contig(pfn, 1))
		free_contig_range(pfn, 1);
}

/* ZONE_MOVABLE is not drained: its memory may go offline at any time
 * (and has no unmovable pageblocks, see zsq_drain_pfn). */
static void zsq_drain_node(struct zsq_sort *qs, int nid)
{
	pg_data_t *pgdat = NODE_DATA(nid);
	int zi;

	for (zi = 0; zi < MAX_NR_ZONES; zi++)
		if (zi != ZONE_MOVABLE && populated_zone(&pgdat->node_zones[zi]))
			zsq_drain(qs, &pgdat->node_zones[zi]);
}

/* ------------------------------------------------------------------------
 * The sort's entry points.
 */
static unsigned long zsq_permille_of(unsigned long pages, unsigned int permille)
{
	return pages / 1000 * permille + pages % 1000 * permille / 1000;
}

void zsq_sort_begin(struct zsq_sort *qs, int nid, const struct zsp_geom *g)
{
	unsigned long cache_pages = (unsigned long)(g->colors * g->ways);
	unsigned int max_pm = READ_ONCE(zsq_max_permille);
	struct zsq_node *qn = &zsq_nodes[nid];

	spin_lock(&qn->lock);
	qn->max = zsq_permille_of(cache_pages, max_pm);
	spin_unlock(&qn->lock);
	memset(qs, 0, sizeof(*qs));
	qs->nid = nid;
	qs->zi = MAX_NR_ZONES;
	qs->want = cache_pages / 2;
	qs->on = READ_ONCE(zsq_enabled) && qn->max;
	zs_strays_init(&qs->strays, ZSQ_STRAY_PAGES);
	if (!qs->on) {
		zsq_release(nid, ULONG_MAX, 0, ULONG_MAX);
		return;
	}
	/* Held blocks over a lowered maximum go first. */
	if (qn->pages > qn->max)
		qs->f.given_back += zsq_release(nid, qn->pages - qn->max, 0, ULONG_MAX);
	zsq_pick_init(&qs->pick, g, qs->want, qn->max);
	zsq_drain_node(qs, nid);
}

/* The sort reached another zone: strays go back (they are on this CPU's
 * lists of the zone just walked), the pick counts the per-CPU pages the
 * sort counted in the load. */
static void zsq_next_zone(struct zsq_sort *qs, struct zone *zone, const u32 *load)
{
	u64 before = 0, s;

	qs->f.strays += qs->strays.pages;
	zs_strays_put(&qs->strays);
	for (s = 0; s < qs->pick.g.nslots; s++)
		before += load[s];
	qs->zone = zone;
	qs->zi = zone_idx(zone);
	qs->huge = false;
	zsq_pick_zone(&qs->pick, before);
}

size_t zsq_filter(struct zsq_sort *qs, const struct zsq_list *l)
{
	struct zsq_node *qn = &zsq_nodes[qs->nid];
	ktime_t t0 = ktime_get();
	struct zsq_held_split split = { 0, 0 };
	size_t nheld = 0, kept, i;

	if (l->mt != MIGRATE_MOVABLE)
		return l->n;
	if (l->zone != qs->zone)
		zsq_next_zone(qs, l->zone, l->load);
	qs->order = l->order;
	if (ZS_THP_ORDER && l->order >= ZS_THP_ORDER && !qs->huge && l->tload) {
		/* Huge-page allocations start here: tload counts these
		 * lists alone (zsp_mark_sequence). */
		qs->huge = true;
		zsq_pick_huge(&qs->pick, 0);
	}
	if (!qs->settling)
		nheld = zsq_pull(qn, zone_idx(l->zone), l->order, l->blocks + l->n, l->cap - l->n);
	for (i = 0; i < nheld; i++)
		if (zs_test_at(ZS_TP_PICKING, l->blocks[l->n + i]) != ZS_TA_NONE)
			break;
	if (qs->on) {
		qs->pick.seed = l->seed;
		kept = zsq_pick_list(&qs->pick, l->load, qs->huge ? l->tload : NULL, l->blocks,
				     l->n + nheld, nheld, l->order, l->tmp, &split);
	} else {
		kept = l->n + nheld;
		split.kept = nheld;
	}
	/* Held blocks still colliding stay held, the others go back, before
	 * the takes: those bring the given-back pages into the free lists
	 * the sort orders. */
	if (nheld) {
		memcpy(l->tmp, l->blocks + kept, split.taken * sizeof(*l->tmp));
		zsq_settle_picked(qs, qn, l->tmp, split.taken);
	}
	kept = zsq_take_list(qs, l->zone, l->order, l->blocks, kept, kept + split.taken,
			     l->n + nheld);
	qs->f.ns += ktime_to_ns(ktime_sub(ktime_get(), t0));
	return kept;
}

void zsq_sort_end(struct zsq_sort *qs)
{
	qs->f.strays += qs->strays.pages;
	zs_strays_put(&qs->strays);
	qs->zone = NULL;
	qs->zi = MAX_NR_ZONES;
	qs->f.short_pages += qs->pick.short_pages;
	qs->pick.short_pages = 0;
}

bool zsq_settle(struct zsq_sort *qs)
{
	struct zsq_node *qn = &zsq_nodes[qs->nid];
	unsigned long held, max;

	if (!qs->f.given_back || !qs->on)
		return false;
	zsq_drain_node(qs, qs->nid);
	/*
	 * The walk picks the lists again as they now are, with what is left
	 * below the maximum: the blocks given back merged with their free
	 * buddies, so a list whose fitting blocks were to end the protected
	 * allocation can have lost them. Held blocks are not picked again,
	 * so nothing is given back and no third walk follows.
	 */
	spin_lock(&qn->lock);
	held = qn->pages;
	max = qn->max;
	spin_unlock(&qn->lock);
	zsq_pick_init(&qs->pick, &qs->pick.g, qs->want, held < max ? max - held : 0);
	qs->settling = true;
	return true;
}

#ifdef ZS_TEST_HOOKS
/* Holds the free blocks a test staged (test_take) on this sort's node,
 * each at the order it is free at, as if the pick had chosen it. */
static void zsq_take_staged(struct zsq_sort *qs)
{
	unsigned long pfns[16];
	size_t n = zs_test_takes(pfns, ARRAY_SIZE(pfns)), i;

	for (i = 0; i < n; i++) {
		struct page *page = pfn_to_online_page(pfns[i]);
		struct zone *zone;
		unsigned long flags;
		unsigned int order, found = ZS_NR_ORDERS;
		u64 pfn = pfns[i];

		if (!page || page_to_nid(page) != qs->nid)
			continue;
		zone = page_zone(page);
		spin_lock_irqsave(&zone->lock, flags);
		for (order = 0; order < ZS_NR_ORDERS; order++)
			if (zs_block(zone, pfns[i], order, MIGRATE_MOVABLE))
				found = order;
		spin_unlock_irqrestore(&zone->lock, flags);
		if (found == ZS_NR_ORDERS) {
			pr_info("test_take: no free movable block starts at pfn %#lx (the sort may hold it)\n",
				pfns[i]);
			continue;
		}
		qs->zone = zone;
		qs->zi = zone_idx(zone);
		if (zsq_take_batch(qs, zone, found, &pfn, 1))
			pr_info("test_take: block at pfn %#lx of order %u not taken\n", pfns[i], found);
		else
			pr_info("test_take: took block at pfn %#lx of order %u\n", pfns[i], found);
	}
	zs_strays_put(&qs->strays);
}

#else
static void zsq_take_staged(struct zsq_sort *qs)
{
}
#endif

void zsq_sort_done(struct zsq_sort *qs)
{
	zsq_sort_end(qs);
	if (qs->on)
		zsq_take_staged(qs);
	qs->f.nid = qs->nid;
	zsq_last = qs->f;
}

