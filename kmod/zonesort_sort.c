// SPDX-License-Identifier: GPL-2.0
/*
 * The sort: snapshots each free list of a node in bounded lock holds, has
 * the quarantine filter the movable ones (zonesort_quarantine.c) and the
 * policy order them (zonesort_policy.c), and puts them back in that order;
 * and the conflicts estimate, the same walk without changing anything.
 *
 * Memory: the sort's tables (about 40 bytes per cache slot, 16 per free
 * block, see zs_scratch) are allocated when the module loads and when the
 * geometry grows, without retrying and without waking the OOM killer; a
 * sort itself allocates nothing. One sort or conflicts read at a time
 * uses them (zs_mutex).
 *
 * Locking: zone->lock and each per-CPU list's lock are held with
 * interrupts off for at most ZS_BATCH list entries at a time; see
 * zs_snapshot() and zs_apply() for how the lists may change between two
 * holds.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/cpumask.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/mmzone.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/nodemask.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include <linux/vmalloc.h>

#include "zonesort_compat.h"
#include "zonesort_freelist.h"
#include "zonesort_geometry.h"
#include "zonesort_internal.h"
#include "zonesort_occupied.h"
#include "zonesort_policy.h"
#include "zonesort_quarantine.h"
#include "zonesort_sort.h"
#include "zonesort_testhooks.h"

/* Largest free list snapshot taken, in blocks (2 x 8 bytes each). */
#define ZS_MAX_BLOCKS (4UL << 20)
/* Scratch memory is allocated without retrying or waking the OOM killer. */
#define ZS_GFP (GFP_KERNEL | __GFP_NORETRY | __GFP_NOWARN)

static DEFINE_MUTEX(zs_mutex);	/* the scratch tables: one sort or read at a time */

/* The order of the pages beyond the cache's capacity (zonesort_policy.h):
 * read once when a sort begins. */
static int zs_overflow = ZSP_PILE;
static const char *const zs_overflow_names[] = { [ZSP_PILE] = "pile", [ZSP_SPREAD] = "spread" };

static int zs_set_overflow(const char *val, const struct kernel_param *kp)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(zs_overflow_names); i++)
		if (sysfs_streq(val, zs_overflow_names[i])) {
			WRITE_ONCE(zs_overflow, i);
			return 0;
		}
	pr_warn("overflow: '%.*s' is not pile or spread\n", (int)strcspn(val, "\n"), val);
	return -EINVAL;
}

static int zs_get_overflow(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%s\n", zs_overflow_names[READ_ONCE(zs_overflow)]);
}

static const struct kernel_param_ops zs_overflow_ops = {
	.set = zs_set_overflow,
	.get = zs_get_overflow,
};

module_param_cb(overflow, &zs_overflow_ops, NULL, 0644);	/* ZS_PARAM_OVERFLOW */
MODULE_PARM_DESC(overflow,
		 "pages beyond the cache's capacity: pile (on few slots, for jobs larger than the cache) or spread (over the least-loaded slots)");

/* ------------------------------------------------------------------------
 * Statistics.
 */
static struct {
	atomic64_t sorts, failed, moved, vanished, cut, total_ns, max_hold_ns, settled;
	atomic64_t last_ns, last_hold_ns, last_free_pages, last_pcp_pages, last_pcp_thp_pages;
	atomic64_t last_occupied;
	atomic_t last_node, before_ppm, after_ppm, max_pcp_hold_entries;
	char last_sorter[TASK_COMM_LEN];	/* who ran the last sort, under zs_stats_lock */
} zs_stats;
static DEFINE_SPINLOCK(zs_stats_lock);

static void zs_max(atomic64_t *a, s64 v)
{
	s64 old = atomic64_read(a);

	while (v > old) {
		s64 seen = atomic64_cmpxchg(a, old, v);

		if (seen == old)
			break;
		old = seen;
	}
}

/* ------------------------------------------------------------------------
 * Scratch tables, one set, under zs_mutex: the policy's state, two
 * conflict counters and the free-list snapshot. Sized for the largest
 * geometry of any node and the largest node; grown, never shrunk.
 */
struct zs_scratch {
	u64 nslots;		/* slots the tables hold */
	size_t nblocks;		/* blocks the snapshot holds */
	void *stmem;
	u32 *counts;		/* 2 x nslots */
	u64 *blocks, *tmp;
	u8 *occupied;		/* a bitmap of nslots (zonesort_occupied.h) */
};

static struct zs_scratch zs_scratch;

static void zs_scratch_free(struct zs_scratch *s)
{
	kvfree(s->stmem);
	kvfree(s->counts);
	kvfree(s->blocks);
	kvfree(s->tmp);
	kvfree(s->occupied);
	memset(s, 0, sizeof(*s));
}

/* What the tables need now: the largest geometry of any node with memory
 * (nodes without one need none) and the largest node. */
static void zs_scratch_need(u64 *nslots, size_t *nblocks)
{
	int nid;

	*nslots = 0;
	*nblocks = 0;
	for_each_node_state(nid, N_MEMORY) {
		struct zsp_geom g;
		u64 size;

		if (zs_geometry(nid, &size, &g, true))
			continue;
		*nslots = max(*nslots, g.nslots);
		*nblocks = max_t(size_t, *nblocks, min_t(u64, node_present_pages(nid), ZS_MAX_BLOCKS));
	}
}

/* Grows the tables to what the geometry and the nodes need; caller holds
 * zs_mutex. -ENOMEM when the slots do not fit; a snapshot that does not
 * fit a grown node only makes sorts take the tail part of its longest
 * lists. */
static int zs_scratch_grow(void)
{
	struct zs_scratch n = { 0 };
	struct zsp_geom g;
	u64 nslots;
	size_t nblocks;

	zs_scratch_need(&nslots, &nblocks);
	if (nslots <= zs_scratch.nslots && nblocks <= zs_scratch.nblocks)
		return 0;
	n.nslots = max(nslots, zs_scratch.nslots);
	n.nblocks = max(nblocks, zs_scratch.nblocks);
	g.nslots = n.nslots;	/* all zsp_state_bytes() reads */
	n.stmem = kvmalloc(zsp_state_bytes(&g), ZS_GFP);
	n.counts = kvmalloc_array(2 * n.nslots, sizeof(u32), ZS_GFP);
	n.blocks = kvmalloc_array(n.nblocks, sizeof(u64), ZS_GFP);
	n.tmp = kvmalloc_array(n.nblocks, sizeof(u64), ZS_GFP);
	n.occupied = kvmalloc(DIV_ROUND_UP(n.nslots, 8), ZS_GFP);
	if (!n.stmem || !n.counts || !n.blocks || !n.tmp || !n.occupied) {
		pr_warn_ratelimited("no memory for the sort's tables (%llu slots, %zu blocks: %llu KiB)\n",
				    n.nslots, n.nblocks,
				    (u64)(zsp_state_bytes(&g) + 8 * n.nslots + DIV_ROUND_UP(n.nslots, 8) +
					  16 * (u64)n.nblocks) >> 10);
		zs_scratch_free(&n);
		return nslots <= zs_scratch.nslots && zs_scratch.nblocks ? 0 : -ENOMEM;
	}
	zs_scratch_free(&zs_scratch);
	zs_scratch = n;
	return 0;
}

int zs_prepare_scratch(void)
{
	int err;

	if (mutex_lock_killable(&zs_mutex))
		return -EINTR;
	err = zs_scratch_grow();
	mutex_unlock(&zs_mutex);
	return err;
}

/* ------------------------------------------------------------------------
 * One run over a node (a sort or a conflicts read), under zs_mutex.
 */
struct zs_run {
	int nid;
	struct zsp_geom g;
	struct zsp_state st;
	u64 *blocks, *tmp;
	size_t cap;
	unsigned long pcpbuf[ZS_BATCH];
	/* estimates: [0] before/now, [1] after (sort) or all-cache (conflicts) */
	struct zsp_conflict est[2];
	bool est_on;
	u64 moved, vanished, cut, free_pages, pcp_pages, pcp_thp_pages;
	unsigned int max_pcp_entries;
	s64 max_hold_ns;
	int err;
	struct zsq_sort q;	/* the quarantine's part of a sort */
};

static struct zs_run zs_run_state;

/* Empties the two estimated allocations, of half_caches[i] halves of the
 * cache's pages each. */
static void zs_est_begin(struct zs_run *r, const unsigned int half_caches[2])
{
	int i;

	for (i = 0; i < 2; i++)
		zsp_conflict_init(&r->est[i], &r->g, r->g.colors * r->g.ways * half_caches[i] / 2,
				  zs_scratch.counts + i * r->g.nslots);
}

/* Sets up the run for node nid: 0, or the geometry's error, or -ENOMEM
 * when the tables could not be grown to it. */
static int zs_run_begin(struct zs_run *r, int nid, u64 *size, const unsigned int half_caches[2])
{
	int err;

	memset(r, 0, sizeof(*r));
	r->nid = nid;
	err = zs_geometry(nid, size, &r->g, false);
	if (err)
		return err;
	err = zs_scratch_grow();
	if (err)
		return err;
	r->blocks = zs_scratch.blocks;
	r->tmp = zs_scratch.tmp;
	r->cap = zs_scratch.nblocks;
	zsp_init(&r->st, &r->g, zs_scratch.stmem);
	zsp_set_overflow(&r->st, READ_ONCE(zs_overflow));
	zs_est_begin(r, half_caches);
	return 0;
}

static void zs_est_feed(struct zs_run *r, int which, const u64 *pfn, size_t n, unsigned int order)
{
	size_t i;

	if (!r->est_on)
		return;
	for (i = 0; i < n; i++)
		if (!zsp_conflict_feed(&r->est[which], pfn[i], order))
			break;
}

static void zs_hold_done(struct zs_run *r, ktime_t t0)
{
	s64 ns = ktime_to_ns(ktime_sub(ktime_get(), t0));

	if (ns > r->max_hold_ns)
		r->max_hold_ns = ns;
}

/* ------------------------------------------------------------------------
 * Free-list walks, a lock hold at a time.
 */
static bool zs_is_head(struct free_area *area, struct list_head *pos)
{
	return pos >= &area->free_list[0] && pos < &area->free_list[MIGRATE_TYPES];
}

static bool zs_exiting;

/*
 * Stops a run early: module unloading, or the writer was killed. Checked
 * between lock holds, so that unloading waits for one batch of a list,
 * not a whole list (seconds on an order-0 list of a large node).
 */
static bool zs_stop(void)
{
	return READ_ONCE(zs_exiting) || fatal_signal_pending(current);
}

/* Between two lock holds of a list walk: lets others run, then says
 * whether the run stops here (r->err = -EINTR). */
static bool zs_between_holds(struct zs_run *r, int mt, unsigned long next_pfn)
{
	cond_resched();
	if (mt == MIGRATE_MOVABLE)	/* the long lists */
		zs_test_at(ZS_TP_RESUMED, next_pfn);
	if (!zs_stop())
		return false;
	r->err = -EINTR;
	return true;
}

/*
 * Records the blocks of free_area[order].free_list[mt] into r->blocks in
 * hand-out order (head first), ZS_BATCH entries per lock hold. The walk
 * goes from the tail towards the head: allocations and most frees happen
 * at the head, so the block we stop at is the least likely to go away
 * before the next hold. The walk resumes from that block only if it is
 * still a free block of this order in a pageblock of type mt; if not, the
 * walk ends there: the snapshot then holds the tail part of the list,
 * which is sorted, and the head part stays as it is. If the walk ends at
 * the head of another list of this order, a block it resumed from had
 * been moved there without its pageblock being re-typed (kernels before
 * 6.10 do that when they steal free blocks for another migratetype): the
 * snapshot is dropped and this list left as it is, so no block is moved
 * from another list to this one. (Before 6.10 a block can also change
 * lists that way between the snapshot and zs_apply, which zs_block cannot
 * see; moving it back to the list of its pageblock's type is what those
 * kernels' own merging does, and changes no counter: CMA and isolated
 * pageblocks are never stolen like that.) Blocks freed meanwhile are
 * simply not in the snapshot.
 */
static size_t zs_snapshot(struct zs_run *r, struct zone *zone, unsigned int order, int mt)
{
	struct free_area *area = &zone->free_area[order];
	struct list_head *head = &area->free_list[mt];
	unsigned long flags, cursor = 0;
	bool started = false, done = false;
	size_t n = 0, i;

	if (list_empty_careful(head))
		return 0;
	while (!done) {
		struct list_head *pos;
		unsigned int budget = zs_test_batch(ZS_BATCH), entries = 0;
		ktime_t t0;

		spin_lock_irqsave(&zone->lock, flags);
		t0 = ktime_get();
		if (!started) {
			pos = head->prev;
			started = true;
		} else {
			struct page *p = pfn_to_online_page(cursor);

			zs_test_resume(zone, p, order, mt);
			p = zs_block(zone, cursor, order, mt);
			pos = p ? p->ZS_LINK.prev : NULL;
		}
		while (pos && budget && n < r->cap && !zs_is_head(area, pos)) {
			r->blocks[n++] = page_to_pfn(list_entry(pos, struct page, ZS_LINK));
			pos = pos->prev;
			budget--;
			entries++;
		}
		if (pos && zs_is_head(area, pos) && pos != head) {
			r->cut++;
			n = 0;
			pos = NULL;
		}
		done = !pos || n >= r->cap || zs_is_head(area, pos);
		zs_hold_done(r, t0);
		zs_note_hold(entries);
		spin_unlock_irqrestore(&zone->lock, flags);
		if (!done) {
			cursor = r->blocks[n - 1];
			if (zs_between_holds(r, mt, cursor))
				return 0;
		}
	}
	for (i = 0; i < n / 2; i++)
		swap(r->blocks[i], r->blocks[n - 1 - i]);
	return n;
}

/*
 * Puts the blocks of r->blocks[0..n) at the head of their free list in
 * that order, by moving them to the head last one first, ZS_BATCH per lock
 * hold. Each block is checked under the lock right before it is moved
 * (zs_block), so blocks allocated, merged, split or re-typed since the
 * snapshot are skipped, never touched. Moving a block within its list
 * changes neither the area's nr_free nor any per-migratetype count.
 * Blocks not in the snapshot (freed meanwhile, or beyond a partial walk)
 * end up behind the sorted ones. Stopped early (zs_stop), the list keeps
 * the blocks moved so far at its head: a valid list, partly sorted.
 */
static void zs_apply(struct zs_run *r, struct zone *zone, unsigned int order, int mt, size_t n)
{
	struct list_head *head = &zone->free_area[order].free_list[mt];
	unsigned long flags;
	size_t i = n;

	while (i > 0) {
		unsigned int budget = ZS_BATCH;
		ktime_t t0;

		spin_lock_irqsave(&zone->lock, flags);
		t0 = ktime_get();
		if (zs_zone_isolating(zone)) {
			r->vanished += i;
			i = 0;
		}
		while (i > 0 && budget) {
			struct page *p = zs_block(zone, r->blocks[--i], order, mt);

			budget--;
			if (p) {
				list_move(&p->ZS_LINK, head);
				r->moved++;
			} else {
				r->vanished++;
			}
		}
		zs_hold_done(r, t0);
		zs_note_hold(ZS_BATCH - budget);
		spin_unlock_irqrestore(&zone->lock, flags);
		if (i > 0 && zs_between_holds(r, mt, r->blocks[i - 1]))
			return;
	}
}

/*
 * Counts the pages waiting in one per-CPU list of every CPU for this zone
 * (the order-0 list of migratetype mt, or with thp the huge-page list):
 * an allocation of that size takes them before anything on the free
 * lists, so the sorted lists should avoid their slots. Read only, under
 * each list's own lock as the kernel's remote drain takes it, and only
 * the first ZS_BATCH entries of a list (the next ones it hands out). The
 * lists can be reordered under that lock too, but not emptied; zonesort
 * leaves them alone. Kernels without that lock are not counted.
 */
static void zs_count_pcp(struct zs_run *r, struct zone *zone, int mt, bool thp)
{
#ifdef ZS_HAVE_PCP_LOCK
	unsigned int order = thp ? ZS_THP_ORDER : 0;
	int cpu, index;

	if (!zone->per_cpu_pageset)
		return;
	if (thp) {
#ifdef ZS_PCP_THP_INDEX
		index = ZS_PCP_THP_INDEX(mt);
#else
		return;
#endif
	} else {
		if (mt >= MIGRATE_PCPTYPES)
			return;
		index = mt;
	}
	for_each_online_cpu(cpu) {
		struct per_cpu_pages *pcp = per_cpu_ptr(zone->per_cpu_pageset, cpu);
		struct list_head *list = &pcp->lists[index];
		unsigned long flags;
		struct page *p;
		unsigned int k = 0, i;
		ktime_t t0;

		spin_lock_irqsave(&pcp->lock, flags);
		t0 = ktime_get();
		list_for_each_entry(p, list, ZS_LINK) {
			if (k == ZS_BATCH)
				break;
			r->pcpbuf[k++] = page_to_pfn(p);
		}
		zs_hold_done(r, t0);
		zs_note_hold(k);
		spin_unlock_irqrestore(&pcp->lock, flags);
		r->max_pcp_entries = max(r->max_pcp_entries, k);
		if (mt == MIGRATE_MOVABLE) {
			if (thp)
				r->pcp_thp_pages += (u64)k << order;
			else
				r->pcp_pages += k;
		}
		for (i = 0; i < k; i++) {
			zsp_add_pages(&r->st, r->pcpbuf[i], 1ULL << order);
			if (r->est_on && !thp) {
				zsp_conflict_feed(&r->est[0], r->pcpbuf[i], 0);
				zsp_conflict_feed(&r->est[1], r->pcpbuf[i], 0);
			}
		}
	}
#endif
}

/*
 * Sorts (apply) or only measures (!apply) every free list of node nid.
 * Migratetypes are independent (an allocation draws from its own type's
 * lists); zones are processed from the highest, the one allocations try
 * first; the estimate follows MIGRATE_MOVABLE, what user memory gets, for
 * base-page allocations. From the huge-page order on the lists also
 * start a sequence of their own: huge-page faults begin there.
 */
static void zs_walk_node(struct zs_run *r, bool apply)
{
	pg_data_t *pgdat = NODE_DATA(r->nid);
	int mt, zi;

	for (mt = 0; mt < MIGRATE_TYPES && !r->err; mt++) {
#ifdef CONFIG_MEMORY_ISOLATION
		if (mt == MIGRATE_ISOLATE)
			continue;
#endif
		if (!apply && mt != MIGRATE_MOVABLE)
			continue;
		r->est_on = mt == MIGRATE_MOVABLE;
		for (zi = MAX_NR_ZONES - 1; zi >= 0 && !r->err; zi--) {
			struct zone *zone = &pgdat->node_zones[zi];
			unsigned int order;

			if (!populated_zone(zone))
				continue;
			zsp_reset(&r->st);
			zs_count_pcp(r, zone, mt, false);
			for (order = 0; order < ZS_NR_ORDERS && !r->err; order++) {
				bool small = (1ULL << order) < r->g.colors;
				size_t n;

				if (zs_stop()) {
					r->err = -EINTR;
					break;
				}
				if (ZS_THP_ORDER && order == ZS_THP_ORDER && apply) {
					zsp_mark_sequence(&r->st);
					zs_count_pcp(r, zone, mt, true);
				}
				/* Blocks of at least a cache's worth of pages
				 * cover every slot alike: nothing to order.
				 * The estimate still needs them when the
				 * smaller ones do not fill the allocation. */
				if (!small && (!r->est_on ||
					       (r->est[0].taken >= r->est[0].want &&
						r->est[1].taken >= r->est[1].want)))
					continue;
				n = zs_snapshot(r, zone, order, mt);
				if (r->err)
					break;
				/* An empty list can still have held blocks
				 * for the quarantine to pick. */
				if (!n && !(apply && small && mt == MIGRATE_MOVABLE))
					continue;
				r->free_pages += (u64)n << order;
				zs_est_feed(r, 0, r->blocks, n, order);
				if (!apply) {
					zs_est_feed(r, 1, r->blocks, n, order);
					continue;
				}
				if (small) {
					/* The quarantine picks against what the
					 * allocations that reach this list got
					 * before: base pages, and from the
					 * huge-page order on huge-page faults,
					 * which come first there. */
					struct zsq_list l = {
						.zone = zone, .order = order, .mt = mt,
						.load = r->st.load,
						.tload = r->st.marked ? r->st.tload : NULL,
						.seed = r->st.seeded ? r->st.seed : NULL,
						.blocks = r->blocks, .tmp = r->tmp,
						.n = n, .cap = r->cap,
					};

					n = zsq_filter(&r->q, &l);
					zsp_order_blocks(&r->st, r->blocks, n, order, r->tmp);
					zs_apply(r, zone, order, mt, n);
				}
				zs_est_feed(r, 1, r->blocks, n, order);
			}
		}
	}
}

/* ------------------------------------------------------------------------
 * Sorting and the conflicts estimate.
 */
static u64 zs_node_free_pages(int nid)
{
	pg_data_t *pgdat = NODE_DATA(nid);
	u64 sum = 0;
	int zi;

	for (zi = 0; zi < MAX_NR_ZONES; zi++)
		sum += zone_page_state(&pgdat->node_zones[zi], NR_FREE_PAGES);
	return sum;
}

/* Caller holds zs_mutex. */
static int zs_sort_node(int nid)
{
	struct zs_run *r = &zs_run_state;
	/* estimates for an allocation of half the cache, before and after */
	static const unsigned int halves[2] = { 1, 1 };
	ktime_t t0 = ktime_get();
	u64 size, occupied;
	s64 ns;
	int err, before_ppm;

	atomic64_set(&zs_stats.last_free_pages, zs_node_free_pages(nid));
	err = zs_run_begin(r, nid, &size, halves);
	if (err)
		goto out;
	/* A running job's slots, when user space gave them for this sort:
	 * the order puts blocks elsewhere first and the quarantine's picks
	 * count them as taken; the estimates, of a fresh allocation alone,
	 * do not. */
	occupied = zs_occupied_take(nid, r->g.nslots, zs_scratch.occupied);
	zsp_set_seed(&r->st, occupied ? zs_scratch.occupied : NULL);
	atomic64_set(&zs_stats.last_occupied, occupied);
	zsq_sort_begin(&r->q, nid, &r->g);
	zs_walk_node(r, true);
	zsq_sort_end(&r->q);
	before_ppm = zsp_conflict_ppm(&r->est[0]);
	/*
	 * Blocks the quarantine gave back reach the free lists through the
	 * per-CPU lists and merge with their buddies after the lists before
	 * them were ordered, so the allocation would take them in the order
	 * they land in. Such a sort orders the lists once more as they now
	 * are, the quarantine keeping what it holds and taking with what is
	 * left below its maximum (zsq_settle); the estimate after is that walk's.
	 */
	if (!r->err && zsq_settle(&r->q)) {
		zs_est_begin(r, halves);
		r->free_pages = r->pcp_pages = r->pcp_thp_pages = 0;
		zs_walk_node(r, true);
		atomic64_inc(&zs_stats.settled);
	}
	zsq_sort_done(&r->q);
	err = r->err;
	ns = ktime_to_ns(ktime_sub(ktime_get(), t0));
	atomic64_add(r->moved, &zs_stats.moved);
	atomic64_add(r->vanished, &zs_stats.vanished);
	atomic64_add(r->cut, &zs_stats.cut);
	atomic64_add(ns, &zs_stats.total_ns);
	atomic64_set(&zs_stats.last_ns, ns);
	atomic64_set(&zs_stats.last_hold_ns, r->max_hold_ns);
	atomic64_set(&zs_stats.last_pcp_pages, r->pcp_pages);
	atomic64_set(&zs_stats.last_pcp_thp_pages, r->pcp_thp_pages);
	zs_max(&zs_stats.max_hold_ns, r->max_hold_ns);
	if (r->max_pcp_entries > (unsigned int)atomic_read(&zs_stats.max_pcp_hold_entries))
		atomic_set(&zs_stats.max_pcp_hold_entries, r->max_pcp_entries);
	atomic_set(&zs_stats.last_node, nid);
	atomic_set(&zs_stats.before_ppm, before_ppm);
	atomic_set(&zs_stats.after_ppm, zsp_conflict_ppm(&r->est[1]));
	spin_lock(&zs_stats_lock);
	get_task_comm(zs_stats.last_sorter, current);
	spin_unlock(&zs_stats_lock);
	zs_test_check();
	if (!err)
		pr_debug("node %d sorted: %llu blocks moved, %lld ns, longest lock hold %lld ns\n",
			 nid, r->moved, ns, r->max_hold_ns);
out:
	if (err)
		atomic64_inc(&zs_stats.failed);
	else
		atomic64_inc(&zs_stats.sorts);
	return err;
}

int zs_sort(int nid, bool killable)
{
	int err;

	if (!killable)
		mutex_lock(&zs_mutex);
	else if (mutex_lock_killable(&zs_mutex))
		return -EINTR;
	err = zs_sort_node(nid);
	mutex_unlock(&zs_mutex);
	return err;
}

/* The estimated share (ppm) of colliding pages in a fresh allocation of
 * half (which 0) or all (1) of the node's cache, from its per-CPU and free
 * lists as they are now. Waits for a running sort; a sort that comes
 * meanwhile waits for this read. */
ssize_t zs_conflicts(int nid, char *buf, int which)
{
	static const unsigned int halves[2] = { 1, 2 };
	struct zs_run *r = &zs_run_state;
	ssize_t len;
	u64 size;

	if (mutex_lock_killable(&zs_mutex))
		return -EINTR;
	len = zs_run_begin(r, nid, &size, halves);
	if (!len) {
		zs_walk_node(r, false);
		len = r->err ? r->err : sysfs_emit(buf, "%u\n", zsp_conflict_ppm(&r->est[which]));
	}
	mutex_unlock(&zs_mutex);
	return len;
}

ssize_t zs_sort_stats(char *buf, const char *version, unsigned int interval)
{
	char sorter[TASK_COMM_LEN];

	spin_lock(&zs_stats_lock);
	memcpy(sorter, zs_stats.last_sorter, sizeof(sorter));
	spin_unlock(&zs_stats_lock);
	return sysfs_emit(buf,
			  "version=%s\n"
			  "sorts=%lld\n"
			  "sorts_settled=%lld\n"
			  "failed=%lld\n"
			  "blocks_moved=%lld\n"
			  "blocks_vanished=%lld\n"
			  "walks_cut=%lld\n"
			  "sort_ns_total=%lld\n"
			  "sort_ns_last=%lld\n"
			  "lock_hold_ns_max=%lld\n"
			  "lock_hold_ns_last=%lld\n"
			  "lock_batch=%u\n"
			  "pcp_hold_entries_max=%d\n"
			  "lock_hold_entries_max=%d\n"
			  "last_node=%d\n"
			  "last_sorter=%s\n"
			  "last_free_pages=%lld\n"
			  "last_pcp_pages=%lld\n"
			  "last_pcp_thp_pages=%lld\n"
			  "last_conflict_ppm_before=%d\n"
			  "last_conflict_ppm_after=%d\n"
			  "last_occupied_slots=%lld\n"
			  "scratch_slots=%llu\n"
			  "scratch_blocks=%zu\n"
			  "sort_interval=%u\n",
			  version,
			  atomic64_read(&zs_stats.sorts), atomic64_read(&zs_stats.settled),
			  atomic64_read(&zs_stats.failed),
			  atomic64_read(&zs_stats.moved), atomic64_read(&zs_stats.vanished),
			  atomic64_read(&zs_stats.cut),
			  atomic64_read(&zs_stats.total_ns), atomic64_read(&zs_stats.last_ns),
			  atomic64_read(&zs_stats.max_hold_ns), atomic64_read(&zs_stats.last_hold_ns),
			  ZS_BATCH, atomic_read(&zs_stats.max_pcp_hold_entries),
			  zs_hold_entries_max(),
			  atomic_read(&zs_stats.last_node), sorter[0] ? sorter : "-",
			  atomic64_read(&zs_stats.last_free_pages),
			  atomic64_read(&zs_stats.last_pcp_pages),
			  atomic64_read(&zs_stats.last_pcp_thp_pages),
			  atomic_read(&zs_stats.before_ppm), atomic_read(&zs_stats.after_ppm),
			  atomic64_read(&zs_stats.last_occupied),
			  READ_ONCE(zs_scratch.nslots), READ_ONCE(zs_scratch.nblocks),
			  interval);
}

void zs_sort_stop(void)
{
	WRITE_ONCE(zs_exiting, true);
}

bool zs_sort_stopping(void)
{
	return READ_ONCE(zs_exiting);
}

void zs_sort_init(void)
{
	atomic_set(&zs_stats.last_node, -1);
	/* Tables for the geometry known now; without memory for them the
	 * module still loads and sorts fail with ENOMEM until they fit. */
	mutex_lock(&zs_mutex);
	zs_scratch_grow();
	mutex_unlock(&zs_mutex);
}

void zs_sort_exit(void)
{
	zs_scratch_free(&zs_scratch);
}

void zs_sort_tables(u64 *nslots, size_t *nblocks)
{
	*nslots = READ_ONCE(zs_scratch.nslots);
	*nblocks = READ_ONCE(zs_scratch.nblocks);
}
