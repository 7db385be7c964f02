// SPDX-License-Identifier: GPL-2.0
/*
 * zonesort: sort the buddy allocator's free lists so that successive page
 * allocations land in distinct slots of a direct-mapped (or few-way)
 * memory-side cache, such as KNL MCDRAM in cache mode, Optane PMem Memory
 * Mode or HBM cache mode.
 *
 * Interface, compatible with Intel's zonesort_module:
 *   /sys/kernel/zone_sort_free_pages/nodeid         write a NUMA node id:
 *       sorts that node now and returns when done. EINVAL: garbage, node
 *       out of range or offline. EBUSY: another sort runs, or sort_interval
 *       is set (the module then sorts every node on its own). ENODEV: no
 *       cache size known (see below).
 *   /sys/kernel/zone_sort_free_pages/sort_interval  seconds, 0 = off: sort
 *       every node with memory that often.
 * and this module's additions, read-only:
 *   stats      counters, times and the longest zone->lock hold
 *   conflicts  per node, the share of the pages of a fresh allocation of
 *              half (and all) of the cache that would share a cache slot
 *              with another of its pages, computed from the free lists now
 *
 * Cache geometry: the module parameters cache_size (bytes) and ways; when
 * cache_size is 0 the node's level-1 memory-side cache from the firmware's
 * ACPI HMAT (what the kernel shows in
 * /sys/devices/system/node/nodeN/memory_side_cache/index1). Without either
 * a sort is refused with ENODEV: the module never guesses a size.
 *
 * Locking: zone->lock is held with interrupts off for at most ZS_BATCH list
 * entries at a time; see zs_snapshot() and zs_apply() for how the lists
 * may change between two holds.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/acpi.h>
#include <linux/atomic.h>
#include <linux/cpumask.h>
#include <linux/kernel.h>
#include <linux/kobject.h>
#include <linux/ktime.h>
#include <linux/log2.h>
#include <linux/memory_hotplug.h>
#include <linux/mm.h>
#include <linux/mmzone.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/nodemask.h>
#include <linux/page-flags.h>
#include <linux/pageblock-flags.h>
#include <linux/percpu.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include <linux/version.h>
#include <linux/workqueue.h>

#include "zonesort_policy.h"
#include "zonesort_quarantine.h"

#define ZS_VERSION "0.1.0"

/* ------------------------------------------------------------------------
 * Kernel version compatibility (Linux 5.14 as in RHEL 9, to current 6.x).
 *
 * Number of free-list orders: MAX_ORDER was exclusive (orders 0 ..
 * MAX_ORDER - 1) until 6.3; 6.4 made it inclusive (orders 0 .. MAX_ORDER);
 * 6.8 renamed it MAX_PAGE_ORDER and added NR_PAGE_ORDERS. A distribution
 * kernel that backported one of these changes is caught at build time by
 * the BUILD_BUG_ON in zs_init() against the free_area array itself.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 8, 0)
#define ZS_NR_ORDERS NR_PAGE_ORDERS
#elif LINUX_VERSION_CODE >= KERNEL_VERSION(6, 4, 0)
#define ZS_NR_ORDERS (MAX_ORDER + 1)
#else
#define ZS_NR_ORDERS MAX_ORDER
#endif

/*
 * Free-list linkage: since 6.0 (the per-CPU list rework that also gave
 * per_cpu_pages its spinlock) the buddy free lists link pages through
 * page->buddy_list and the per-CPU lists through page->pcp_list; before
 * that both used page->lru. All three are members of one union in struct
 * page, so on every version the same list_head is reached; zs_init()
 * checks that at build time.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 0, 0)
#define ZS_FREE_LINK buddy_list
#define ZS_PCP_LINK pcp_list
#define ZS_HAVE_PCP_LOCK 1
#else
#define ZS_FREE_LINK lru
#define ZS_PCP_LINK lru
#define ZS_HAVE_PCP_LOCK 0
#endif

/*
 * No list_sort() here: the ordering is computed on arrays by
 * zonesort_policy.c (list_sort's comparator only became const-qualified
 * in 5.13, one more reason to stay off it).
 */

#ifndef CONFIG_SPARSEMEM
#error "zonesort reads pageblock flags through mem_section and needs CONFIG_SPARSEMEM"
#endif

/* List entries handled per zone->lock hold (interrupts off). */
#define ZS_BATCH 256
/* Largest free list snapshot taken, in blocks (2 x 8 bytes each). */
#define ZS_MAX_BLOCKS (4UL << 20)
/* Per-CPU list pages counted per CPU, zone and migratetype. */
#define ZS_PCP_MAX 4096
/* Longest sort_interval accepted, seconds. */
#define ZS_MAX_INTERVAL 86400U

/* ------------------------------------------------------------------------
 * Parameters: cache_size (bytes, 0 = firmware HMAT) and ways (0 = from the
 * firmware, direct-mapped). Validated on load and on writes to
 * /sys/module/zonesort/parameters/.
 */
static unsigned long zs_cache_size;
static unsigned int zs_ways;

static int zs_set_cache_size(const char *val, const struct kernel_param *kp)
{
	unsigned long long v;

	if (kstrtoull(val, 0, &v)) {
		pr_warn("cache_size: '%.*s' is not a number of bytes\n", (int)strcspn(val, "\n"), val);
		return -EINVAL;
	}
	if (v && (!is_power_of_2(v) || v < PAGE_SIZE || v > (1ULL << 46))) {
		pr_warn("cache_size: %llu is not 0 (use the firmware's value) or a power of two from %lu to 2^46 bytes\n",
			v, PAGE_SIZE);
		return -EINVAL;
	}
	WRITE_ONCE(zs_cache_size, (unsigned long)v);
	return 0;
}

static int zs_set_ways(const char *val, const struct kernel_param *kp)
{
	unsigned int v;

	if (kstrtouint(val, 0, &v) || v > 64) {
		pr_warn("ways: '%.*s' is not 0 (from the firmware) or an associativity from 1 to 64\n",
			(int)strcspn(val, "\n"), val);
		return -EINVAL;
	}
	WRITE_ONCE(zs_ways, v);
	return 0;
}

static const struct kernel_param_ops zs_cache_size_ops = {
	.set = zs_set_cache_size,
	.get = param_get_ulong,
};

static const struct kernel_param_ops zs_ways_ops = {
	.set = zs_set_ways,
	.get = param_get_uint,
};

module_param_cb(cache_size, &zs_cache_size_ops, &zs_cache_size, 0644);
MODULE_PARM_DESC(cache_size,
		 "memory-side cache size in bytes, a power of two (0: from the firmware's HMAT)");
module_param_cb(ways, &zs_ways_ops, &zs_ways, 0644);
MODULE_PARM_DESC(ways, "cache associativity, 1 = direct-mapped (0: from the firmware, else 1)");

/* ------------------------------------------------------------------------
 * Memory-side caches described by the firmware (ACPI HMAT, structure type
 * 2), per node. The kernel's own copy (drivers/base/node.c) is not
 * reachable from a module, so we read the table: acpi_get_table() and
 * pxm_to_node() are exported.
 */
struct zs_fwcache {
	u64 size;
	unsigned int ways;	/* 1 direct-mapped, 0 other indexing */
};

static struct zs_fwcache *zs_fw;	/* nr_node_ids entries */

static void zs_read_hmat(void)
{
#ifdef CONFIG_ACPI
	struct acpi_table_header *tbl;
	size_t off;

	if (acpi_disabled || ACPI_FAILURE(acpi_get_table(ACPI_SIG_HMAT, 0, &tbl)))
		return;
	off = sizeof(struct acpi_table_hmat);
	while (off + sizeof(struct acpi_hmat_structure) <= tbl->length) {
		struct acpi_hmat_structure *h = (void *)tbl + off;

		if (h->length < sizeof(*h) || off + h->length > tbl->length)
			break;
		if (h->type == ACPI_HMAT_TYPE_CACHE && h->length >= sizeof(struct acpi_hmat_cache)) {
			struct acpi_hmat_cache *c = (void *)h;
			u32 attr = c->cache_attributes;
			unsigned int level = (attr & ACPI_HMAT_CACHE_LEVEL) >> 4;
			unsigned int assoc = (attr & ACPI_HMAT_CACHE_ASSOCIATIVITY) >> 8;
			int nid = pxm_to_node(c->memory_PD);

			if (level == 1 && nid >= 0 && nid < nr_node_ids) {
				zs_fw[nid].size = c->cache_size;
				zs_fw[nid].ways = assoc == ACPI_HMAT_CA_DIRECT_MAPPED ? 1 : 0;
				pr_info("node %d: firmware memory-side cache %llu bytes, %s\n", nid,
					c->cache_size,
					assoc == ACPI_HMAT_CA_DIRECT_MAPPED ? "direct-mapped" :
					"other indexing (assumed direct-mapped unless ways= says otherwise)");
			}
		}
		off += h->length;
	}
	acpi_put_table(tbl);
#endif
}

/* The geometry a sort of node nid uses: 0, or -ENODEV/-EINVAL with dmesg
 * saying why. */
static int zs_geometry(int nid, u64 *size, struct zsp_geom *geom)
{
	u64 sz = READ_ONCE(zs_cache_size);
	unsigned int w = READ_ONCE(zs_ways);

	if (!sz && zs_fw)
		sz = zs_fw[nid].size;
	if (!sz) {
		pr_warn_ratelimited("node %d: no memory-side cache size: the firmware describes none; load the module with cache_size=<bytes> [ways=<n>] or write /sys/module/zonesort/parameters/cache_size\n",
				    nid);
		return -ENODEV;
	}
	if (!w)
		w = zs_fw && zs_fw[nid].size && zs_fw[nid].ways ? zs_fw[nid].ways : 1;
	if (!is_power_of_2(sz) || sz < PAGE_SIZE || sz / PAGE_SIZE % w ||
	    zsp_geom_init(geom, sz / PAGE_SIZE / w, w)) {
		pr_warn_ratelimited("node %d: cache_size %llu with ways %u does not give a power-of-two number of page-sized slots\n",
				    nid, sz, w);
		return -EINVAL;
	}
	*size = sz;
	return 0;
}

/* ------------------------------------------------------------------------
 * Statistics.
 */
static struct {
	atomic64_t sorts, failed, moved, vanished, total_ns, max_hold_ns;
	atomic64_t last_ns, last_hold_ns, last_free_pages, last_pcp_pages;
	atomic_t last_node, before_ppm, after_ppm, floor_ppm;
} zs_stats;

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
 * One run over a node: buffers and tallies.
 */
struct zs_run {
	int nid;
	struct zsp_geom g;
	struct zsp_state st;
	void *stmem;
	u64 *blocks, *tmp;
	size_t cap;
	unsigned long pcpbuf[ZS_PCP_MAX];
	/* estimates: [0] before/now, [1] after (sort) or all-cache (conflicts) */
	struct zsp_conflict est[2];
	struct zsp_floor floor;
	u32 *estmem;
	bool est_on;
	u64 moved, vanished, free_pages, pcp_pages;
	s64 max_hold_ns;
	int err;
};

static void zs_run_free(struct zs_run *r)
{
	kvfree(r->stmem);
	kvfree(r->blocks);
	kvfree(r->tmp);
	kvfree(r->estmem);
	kfree(r);
}

static struct zs_run *zs_run_alloc(int nid, const struct zsp_geom *g)
{
	struct zs_run *r = kzalloc(sizeof(*r), GFP_KERNEL);

	if (!r)
		return NULL;
	r->nid = nid;
	r->g = *g;
	r->stmem = kvmalloc(zsp_state_bytes(g), GFP_KERNEL);
	r->estmem = kvmalloc_array(4 * g->nslots, sizeof(u32), GFP_KERNEL);
	if (!r->stmem || !r->estmem) {
		zs_run_free(r);
		return NULL;
	}
	zsp_init(&r->st, g, r->stmem);
	return r;
}

static int zs_run_reserve(struct zs_run *r, size_t want)
{
	if (want > ZS_MAX_BLOCKS)
		want = ZS_MAX_BLOCKS;
	if (want <= r->cap)
		return 0;
	kvfree(r->blocks);
	kvfree(r->tmp);
	r->cap = 0;
	r->blocks = kvmalloc_array(want, sizeof(u64), GFP_KERNEL | __GFP_NOWARN);
	r->tmp = kvmalloc_array(want, sizeof(u64), GFP_KERNEL | __GFP_NOWARN);
	if (!r->blocks || !r->tmp)
		return -ENOMEM;
	r->cap = want;
	return 0;
}

static void zs_est_feed(struct zs_run *r, int which, const u64 *pfn, size_t n, unsigned int order)
{
	size_t i;

	if (!r->est_on)
		return;
	if (which == 0) {
		zsp_floor_list(&r->floor, (u64)n << order);
		for (i = 0; i < n; i++)
			zsp_floor_feed(&r->floor, pfn[i], order);
	}
	for (i = 0; i < n; i++)
		if (!zsp_conflict_feed(&r->est[which], pfn[i], order))
			break;
}

/* ------------------------------------------------------------------------
 * Free-list access under zone->lock.
 */

/* Migratetype bits of pfn's pageblock. get_pageblock_migratetype() calls
 * get_pfnblock_flags_mask(), which is not exported; the bitmap itself is
 * reachable through the exported mem_section with the layout constants of
 * <linux/pageblock-flags.h> and <linux/mmzone.h>: NR_PAGEBLOCK_BITS bits
 * per pageblock, the migratetype in the low bits. */
static unsigned int zs_pageblock_mt(unsigned long pfn)
{
	unsigned long *bitmap = section_to_usemap(__pfn_to_section(pfn));
	unsigned long bitidx = ((pfn & (PAGES_PER_SECTION - 1)) >> pageblock_order) *
			       NR_PAGEBLOCK_BITS;
	unsigned long word = READ_ONCE(bitmap[bitidx / BITS_PER_LONG]);

	return (word >> (bitidx % BITS_PER_LONG)) & MIGRATETYPE_MASK;
}

/* True while some pageblock of the zone is isolated (memory offlining,
 * alloc_contig_range, CMA): isolation moves free blocks to the
 * MIGRATE_ISOLATE lists, and we must never move one back. The count
 * changes under zone->lock, which the caller holds. */
static bool zs_zone_isolating(struct zone *zone)
{
#ifdef CONFIG_MEMORY_ISOLATION
	return READ_ONCE(zone->nr_isolate_pageblock) != 0;
#else
	return false;
#endif
}

/*
 * With zone->lock held: the page heading a free block of 2^order pages at
 * pfn in this zone, or NULL. Such a block is on one of the lists of
 * zone->free_area[order] (PageBuddy and the order in page->private change
 * only under zone->lock). With mt >= 0 its pageblock must also have
 * migratetype mt: then the block is on free_list[mt] (6.10 and later keep
 * that invariant; older kernels may leave a block on another list of the
 * same order, and moving it to the list of its pageblock's type is what
 * their own merging does).
 */
static struct page *zs_block(struct zone *zone, unsigned long pfn, unsigned int order, int mt)
{
	struct page *page = pfn_to_online_page(pfn);

	if (!page || page_zone(page) != zone)
		return NULL;
	if (!PageBuddy(page) || page_private(page) != order)
		return NULL;
	if (mt >= 0 && zs_pageblock_mt(pfn) != mt)
		return NULL;
	return page;
}

static bool zs_is_head(struct free_area *area, struct list_head *pos)
{
	return pos >= &area->free_list[0] && pos < &area->free_list[MIGRATE_TYPES];
}

static void zs_hold_done(struct zs_run *r, ktime_t t0)
{
	s64 ns = ktime_to_ns(ktime_sub(ktime_get(), t0));

	if (ns > r->max_hold_ns)
		r->max_hold_ns = ns;
}

/*
 * Records the blocks of free_area[order].free_list[mt] into r->blocks in
 * hand-out order (head first), ZS_BATCH entries per lock hold. The walk
 * goes from the tail towards the head: allocations and most frees happen
 * at the head, so the page we stop at is the least likely to go away
 * before the next hold. If it did go away (it is no longer a free block
 * of this order and type), the walk ends there: the snapshot then holds
 * the tail part of the list, which is sorted, and the head part stays as
 * it is. Blocks freed meanwhile are simply not in the snapshot.
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
	if (zs_run_reserve(r, READ_ONCE(area->nr_free) + ZS_BATCH)) {
		r->err = -ENOMEM;
		return 0;
	}
	while (!done) {
		struct list_head *pos;
		unsigned int budget = ZS_BATCH;
		ktime_t t0;

		spin_lock_irqsave(&zone->lock, flags);
		t0 = ktime_get();
		if (!started) {
			pos = head->prev;
			started = true;
		} else {
			/* Any list of this order will do: the walk stops at
			 * the first list head, whichever it is. */
			struct page *p = zs_block(zone, cursor, order, -1);

			pos = p ? p->ZS_FREE_LINK.prev : NULL;
		}
		while (pos && budget && n < r->cap && !zs_is_head(area, pos)) {
			r->blocks[n++] = page_to_pfn(list_entry(pos, struct page, ZS_FREE_LINK));
			pos = pos->prev;
			budget--;
		}
		done = !pos || n >= r->cap || zs_is_head(area, pos);
		zs_hold_done(r, t0);
		spin_unlock_irqrestore(&zone->lock, flags);
		if (!done) {
			cursor = r->blocks[n - 1];
			cond_resched();
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
 * end up behind the sorted ones.
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
		while (i > 0 && budget--) {
			struct page *p = zs_block(zone, r->blocks[--i], order, mt);

			if (p) {
				list_move(&p->ZS_FREE_LINK, head);
				r->moved++;
			} else {
				r->vanished++;
			}
		}
		zs_hold_done(r, t0);
		spin_unlock_irqrestore(&zone->lock, flags);
		cond_resched();
	}
}

/*
 * Counts the order-0 pages waiting in the per-CPU lists of this zone and
 * migratetype: an order-0 allocation takes them before anything on the
 * free lists, so the sorted lists should avoid their slots. Read only,
 * under each list's own lock, the way the kernel drains a remote CPU's
 * lists. Kernels before 6.0 protect these lists only by disabling
 * interrupts on their own CPU, so there they are not counted.
 */
static void zs_count_pcp(struct zs_run *r, struct zone *zone, int mt)
{
#if ZS_HAVE_PCP_LOCK
	int cpu;

	if (mt >= MIGRATE_PCPTYPES || !zone->per_cpu_pageset)
		return;
	for_each_online_cpu(cpu) {
		struct per_cpu_pages *pcp = per_cpu_ptr(zone->per_cpu_pageset, cpu);
		/* order_to_pindex(mt, 0) == mt on every version with pcp lists per order */
		struct list_head *list = &pcp->lists[mt];
		unsigned long flags;
		struct page *p;
		size_t k = 0, i;
		ktime_t t0;

		spin_lock_irqsave(&pcp->lock, flags);
		t0 = ktime_get();
		list_for_each_entry(p, list, ZS_PCP_LINK) {
			if (k == ZS_PCP_MAX)
				break;
			r->pcpbuf[k++] = page_to_pfn(p);
		}
		zs_hold_done(r, t0);
		spin_unlock_irqrestore(&pcp->lock, flags);
		r->pcp_pages += k;
		if (r->est_on)
			zsp_floor_list(&r->floor, k);
		for (i = 0; i < k; i++) {
			if (r->est_on)
				zsp_floor_feed(&r->floor, r->pcpbuf[i], 0);
			zsp_add_pages(&r->st, r->pcpbuf[i], 1);
			if (r->est_on) {
				zsp_conflict_feed(&r->est[0], r->pcpbuf[i], 0);
				zsp_conflict_feed(&r->est[1], r->pcpbuf[i], 0);
			}
		}
	}
#endif
}

static bool zs_exiting;

/* Stops a run early: module unloading, or the writer was killed. */
static bool zs_stop(void)
{
	return READ_ONCE(zs_exiting) || fatal_signal_pending(current);
}

/*
 * Sorts (apply) or only measures (!apply) every free list of node nid.
 * Migratetypes are independent (an allocation draws from its own type's
 * lists); zones are processed from the highest, the one allocations try
 * first; the estimate follows MIGRATE_MOVABLE, what user memory gets.
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
			zs_count_pcp(r, zone, mt);
			for (order = 0; order < ZS_NR_ORDERS && !r->err; order++) {
				bool small = (1ULL << order) < r->g.colors;
				size_t n;

				/* Transparent huge pages take the lists from
				 * pageblock order up first. */
				if (order == pageblock_order)
					zsp_begin_huge(&r->st);

				if (zs_stop()) {
					r->err = -EINTR;
					break;
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
				if (!n)
					continue;
				r->free_pages += (u64)n << order;
				zs_est_feed(r, 0, r->blocks, n, order);
				if (!apply) {
					zs_est_feed(r, 1, r->blocks, n, order);
					continue;
				}
				if (small) {
					n = zsq_filter(zone, order, mt, r->st.load, r->blocks, n, r->tmp);
					zsp_order_blocks(&r->st, r->blocks, n, order, r->tmp);
					zs_apply(r, zone, order, mt, n);
				}
				zs_est_feed(r, 1, r->blocks, n, order);
			}
		}
	}
}

/* ------------------------------------------------------------------------
 * Sorting, one writer at a time.
 */
static DEFINE_MUTEX(zs_sort_mutex);
static DEFINE_MUTEX(zs_interval_mutex);
static unsigned int zs_interval;	/* seconds, 0 = off */
static void zs_interval_work(struct work_struct *w);
static DECLARE_DELAYED_WORK(zs_work, zs_interval_work);

static u64 zs_node_free_pages(int nid)
{
	pg_data_t *pgdat = NODE_DATA(nid);
	u64 sum = 0;
	int zi;

	for (zi = 0; zi < MAX_NR_ZONES; zi++)
		sum += zone_page_state(&pgdat->node_zones[zi], NR_FREE_PAGES);
	return sum;
}

/* Caller holds zs_sort_mutex. */
static int zs_sort_node(int nid)
{
	struct zsp_geom g;
	struct zs_run *r;
	u64 size;
	ktime_t t0 = ktime_get();
	s64 ns;
	int err;

	err = zs_geometry(nid, &size, &g);
	if (err)
		goto out;
	atomic64_set(&zs_stats.last_free_pages, zs_node_free_pages(nid));
	r = zs_run_alloc(nid, &g);
	if (!r) {
		err = -ENOMEM;
		goto out;
	}
	/* Estimate for an allocation of half the cache, before and after. */
	zsp_conflict_init(&r->est[0], &g, g.colors * g.ways / 2, r->estmem);
	zsp_conflict_init(&r->est[1], &g, g.colors * g.ways / 2, r->estmem + g.nslots);
	zsp_floor_init(&r->floor, &g, g.colors * g.ways / 2, r->estmem + 2 * g.nslots,
		       r->estmem + 3 * g.nslots);
	zsq_sort_begin(nid, &g);
	zs_walk_node(r, true);
	err = r->err;
	ns = ktime_to_ns(ktime_sub(ktime_get(), t0));
	atomic64_add(r->moved, &zs_stats.moved);
	atomic64_add(r->vanished, &zs_stats.vanished);
	atomic64_add(ns, &zs_stats.total_ns);
	atomic64_set(&zs_stats.last_ns, ns);
	atomic64_set(&zs_stats.last_hold_ns, r->max_hold_ns);
	atomic64_set(&zs_stats.last_pcp_pages, r->pcp_pages);
	zs_max(&zs_stats.max_hold_ns, r->max_hold_ns);
	atomic_set(&zs_stats.last_node, nid);
	atomic_set(&zs_stats.before_ppm, zsp_conflict_ppm(&r->est[0]));
	atomic_set(&zs_stats.after_ppm, zsp_conflict_ppm(&r->est[1]));
	atomic_set(&zs_stats.floor_ppm, zsp_floor_ppm(&r->floor));
	if (!err)
		pr_debug("node %d sorted: %llu blocks moved, %lld ns, longest lock hold %lld ns\n",
			 nid, r->moved, ns, r->max_hold_ns);
	zs_run_free(r);
out:
	if (err)
		atomic64_inc(&zs_stats.failed);
	else
		atomic64_inc(&zs_stats.sorts);
	return err;
}

static void zs_interval_work(struct work_struct *w)
{
	unsigned int interval;
	int nid;

	mutex_lock(&zs_sort_mutex);
	for_each_node_state(nid, N_MEMORY) {
		if (READ_ONCE(zs_exiting))
			break;
		zs_sort_node(nid);
	}
	mutex_unlock(&zs_sort_mutex);
	interval = READ_ONCE(zs_interval);
	if (interval && !READ_ONCE(zs_exiting))
		schedule_delayed_work(&zs_work, (unsigned long)interval * HZ);
}

/* ------------------------------------------------------------------------
 * sysfs: /sys/kernel/zone_sort_free_pages/
 */
static atomic_t zs_last_written = ATOMIC_INIT(-1);

static ssize_t nodeid_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%d\n", atomic_read(&zs_last_written));
}

static ssize_t nodeid_store(struct kobject *k, struct kobj_attribute *a, const char *buf,
			    size_t len)
{
	int nid, err;

	if (kstrtoint(buf, 10, &nid) || nid < 0 || nid >= nr_node_ids || !node_online(nid))
		return -EINVAL;
	if (READ_ONCE(zs_interval))
		return -EBUSY;
	if (!mutex_trylock(&zs_sort_mutex))
		return -EBUSY;
	atomic_set(&zs_last_written, nid);
	err = node_state(nid, N_MEMORY) ? zs_sort_node(nid) : 0;
	mutex_unlock(&zs_sort_mutex);
	return err ? err : (ssize_t)len;
}

static ssize_t sort_interval_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(zs_interval));
}

static ssize_t sort_interval_store(struct kobject *k, struct kobj_attribute *a,
				   const char *buf, size_t len)
{
	unsigned int v;

	if (kstrtouint(buf, 10, &v) || v > ZS_MAX_INTERVAL)
		return -EINVAL;
	mutex_lock(&zs_interval_mutex);
	WRITE_ONCE(zs_interval, v);
	if (v)
		mod_delayed_work(system_wq, &zs_work, (unsigned long)v * HZ);
	else
		cancel_delayed_work_sync(&zs_work);
	mutex_unlock(&zs_interval_mutex);
	return len;
}

static ssize_t stats_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	return sysfs_emit(buf,
			  "version=%s\n"
			  "sorts=%lld\n"
			  "failed=%lld\n"
			  "blocks_moved=%lld\n"
			  "blocks_vanished=%lld\n"
			  "sort_ns_total=%lld\n"
			  "sort_ns_last=%lld\n"
			  "lock_hold_ns_max=%lld\n"
			  "lock_hold_ns_last=%lld\n"
			  "lock_batch=%u\n"
			  "last_node=%d\n"
			  "last_free_pages=%lld\n"
			  "last_pcp_pages=%lld\n"
			  "last_conflict_ppm_before=%d\n"
			  "last_conflict_ppm_after=%d\n"
			  "last_conflict_ppm_floor=%d\n"
			  "sort_interval=%u\n",
			  ZS_VERSION,
			  atomic64_read(&zs_stats.sorts), atomic64_read(&zs_stats.failed),
			  atomic64_read(&zs_stats.moved), atomic64_read(&zs_stats.vanished),
			  atomic64_read(&zs_stats.total_ns), atomic64_read(&zs_stats.last_ns),
			  atomic64_read(&zs_stats.max_hold_ns), atomic64_read(&zs_stats.last_hold_ns),
			  ZS_BATCH, atomic_read(&zs_stats.last_node),
			  atomic64_read(&zs_stats.last_free_pages),
			  atomic64_read(&zs_stats.last_pcp_pages),
			  atomic_read(&zs_stats.before_ppm), atomic_read(&zs_stats.after_ppm),
			  atomic_read(&zs_stats.floor_ppm),
			  READ_ONCE(zs_interval));
}

/* One line per node with memory: the estimated share (ppm) of conflicting
 * pages in a fresh allocation of half and of all of the cache, from the
 * per-CPU and free lists as they are now. */
static ssize_t conflicts_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	ssize_t len = 0;
	int nid;

	if (!mutex_trylock(&zs_sort_mutex))
		return -EBUSY;
	for_each_node_state(nid, N_MEMORY) {
		struct zsp_geom g;
		struct zs_run *r;
		u64 size;

		if (zs_geometry(nid, &size, &g)) {
			len += sysfs_emit_at(buf, len, "node=%d cache_size=0\n", nid);
			continue;
		}
		r = zs_run_alloc(nid, &g);
		if (!r) {
			len = -ENOMEM;
			break;
		}
		zsp_conflict_init(&r->est[0], &g, g.colors * g.ways / 2, r->estmem);
		zsp_conflict_init(&r->est[1], &g, g.colors * g.ways, r->estmem + g.nslots);
		zsp_floor_init(&r->floor, &g, g.colors * g.ways / 2, r->estmem + 2 * g.nslots,
			       r->estmem + 3 * g.nslots);
		zs_walk_node(r, false);
		if (r->err) {
			len = r->err;
			zs_run_free(r);
			break;
		}
		len += sysfs_emit_at(buf, len,
				     "node=%d cache_size=%llu ways=%u free_pages=%llu half_ppm=%u full_ppm=%u half_floor_ppm=%u\n",
				     nid, size, g.ways, r->free_pages, zsp_conflict_ppm(&r->est[0]),
				     zsp_conflict_ppm(&r->est[1]), zsp_floor_ppm(&r->floor));
		zs_run_free(r);
	}
	mutex_unlock(&zs_sort_mutex);
	return len;
}

static struct kobj_attribute zs_attr_nodeid = __ATTR(nodeid, 0644, nodeid_show, nodeid_store);
static struct kobj_attribute zs_attr_interval =
	__ATTR(sort_interval, 0644, sort_interval_show, sort_interval_store);
static struct kobj_attribute zs_attr_stats = __ATTR(stats, 0444, stats_show, NULL);
static struct kobj_attribute zs_attr_conflicts = __ATTR(conflicts, 0400, conflicts_show, NULL);

static struct attribute *zs_attrs[] = {
	&zs_attr_nodeid.attr,
	&zs_attr_interval.attr,
	&zs_attr_stats.attr,
	&zs_attr_conflicts.attr,
	NULL,
};

static const struct attribute_group zs_group = {
	.attrs = zs_attrs,
};

static struct kobject *zs_kobj;

static int __init zs_init(void)
{
	int err;

	BUILD_BUG_ON(ZS_NR_ORDERS != ARRAY_SIZE(((struct zone *)NULL)->free_area));
	BUILD_BUG_ON(offsetof(struct page, ZS_FREE_LINK) != offsetof(struct page, lru));
	BUILD_BUG_ON(offsetof(struct page, ZS_PCP_LINK) != offsetof(struct page, lru));

	atomic_set(&zs_stats.last_node, -1);
	zs_fw = kcalloc(nr_node_ids, sizeof(*zs_fw), GFP_KERNEL);
	if (!zs_fw)
		return -ENOMEM;
	zs_read_hmat();
	zs_kobj = kobject_create_and_add("zone_sort_free_pages", kernel_kobj);
	if (!zs_kobj) {
		err = -ENOMEM;
		goto fail;
	}
	err = sysfs_create_group(zs_kobj, &zs_group);
	if (!err)
		err = zsq_init(zs_kobj);
	if (err) {
		kobject_put(zs_kobj);
		goto fail;
	}
	pr_info("version %s loaded: cache_size=%lu ways=%u (0: from the firmware), %u list entries per lock hold\n",
		ZS_VERSION, zs_cache_size, zs_ways, ZS_BATCH);
	return 0;
fail:
	kfree(zs_fw);
	return err;
}

static void __exit zs_exit(void)
{
	WRITE_ONCE(zs_exiting, true);
	/* Removing the files waits for writers still inside them. */
	kobject_put(zs_kobj);
	WRITE_ONCE(zs_interval, 0);
	cancel_delayed_work_sync(&zs_work);
	zsq_exit();
	kfree(zs_fw);
}

module_init(zs_init);
module_exit(zs_exit);

MODULE_LICENSE("GPL");
MODULE_VERSION(ZS_VERSION);
MODULE_DESCRIPTION("Sort free page lists for direct-mapped memory-side caches (Intel zonesort interface)");
MODULE_AUTHOR("zonesort for Slurm developers");
