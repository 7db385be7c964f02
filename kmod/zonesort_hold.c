// SPDX-License-Identifier: GPL-2.0
/*
 * Holding the quarantine's blocks; see zonesort_hold.h.
 *
 * A held block is one non-compound allocation of 2^order pages: the head
 * page has a reference count of 1, the others 0. Pageblock isolation
 * (has_unmovable_pages) passes pages with a count of 0, so only the head
 * decides whether the block is in the way of memory offlining or of a
 * contiguous allocation.
 *
 * Giving a block back never waits for the kernel: what cannot go back at
 * once (a head another thread has locked, pages a migration isolated) is
 * left to the reaper, at the end of this file. The kernel calls the isolation and migration callbacks below
 * without a reference on the module: each counts itself in
 * zsh_callbacks while it runs, and unloading waits for none to be left
 * (zsh_callbacks_wait).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/errno.h>
#include <linux/gfp.h>
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/migrate.h>
#include <linux/mm.h>
#include <linux/page_ref.h>
#include <linux/pagemap.h>
#include <linux/sched.h>
#include <linux/vmstat.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include "zonesort_compat.h"
#include "zonesort_freelist.h"
#include "zonesort_held.h"
#include "zonesort_hold.h"
#include "zonesort_internal.h"
#include "zonesort_testhooks.h"

static atomic_t zsh_callbacks = ATOMIC_INIT(0);
static DECLARE_WAIT_QUEUE_HEAD(zsh_callbacks_done);

static void zsh_callback_enter(void)
{
	atomic_inc(&zsh_callbacks);
}

/* The callback's last access to anything of the module's; the few
 * instructions of its return after it are covered by the RCU grace
 * period the kernel waits for before it frees a module's memory. */
static void zsh_callback_leave(void)
{
	if (atomic_dec_and_test(&zsh_callbacks))
		wake_up_all(&zsh_callbacks_done);
}

static bool zsh_callbacks_wait(unsigned int seconds)
{
	return wait_event_timeout(zsh_callbacks_done, !atomic_read(&zsh_callbacks),
				  seconds * HZ) > 0;
}

static int zsh_callbacks_running(void)
{
	return atomic_read(&zsh_callbacks);
}

#ifdef ZS_HOLD_MOVABLE
/*
 * Kernels where a module can give pages movable operations (6.x): the
 * head page is marked movable with operations that never migrate it.
 * Isolation then passes the block, and whoever then tries to migrate it
 * asks us first (isolate_page, called with the page locked and a
 * reference taken):
 *   - memory offlining and soft offlining (ISOLATE_UNEVICTABLE),
 *     contiguous allocations (the pageblock is isolated) and compaction
 *     while vm.compact_unevictable_allowed is 1 (its default; compaction
 *     then passes ISOLATE_UNEVICTABLE too) get the block back: we drop
 *     our reference, which frees the other pages now, clear the page's
 *     movable operations and let the isolation succeed; the migration
 *     then finds the head freed under it (its own reference is the last)
 *     and is done when it lets go. Held blocks never stand in the way of
 *     huge pages, and memory offlining never logs a failed isolation for
 *     them;
 *   - compaction with the sysctl at 0 is refused, as for a pinned page.
 * A block another path is giving back already, or one a sort is taking,
 * is refused: that path gives it back.
 * page_private of the head points to the block while it is held; it is
 * cleared under the page lock before the block can be freed, so a block
 * found there with the page locked is alive.
 */
static bool zsh_isolate(struct page *page, isolate_mode_t mode)
{
	struct zsq_block *b;
	struct zsq_claim c;
	bool taken = false;

	zsh_callback_enter();
	zs_test_at(ZS_TP_CALLBACK, page_to_pfn(page));
	b = (struct zsq_block *)page_private(page);
	if (b && ((mode & ISOLATE_UNEVICTABLE) ||
		  zs_pageblock_mt(page_to_pfn(page)) == MIGRATE_ISOLATE) &&
	    zsq_claim(b, &c)) {
		__ClearPageMovable(page);
		set_page_private(page, 0);
		__free_pages(page, c.order);
		if (c.owner)
			zsh_free(b);
		taken = true;
	}
	zsh_callback_leave();
	return taken;
}

static int zsh_migrate(struct page *dst, struct page *src, enum migrate_mode mode)
{
	WARN_ON_ONCE(1);	/* freed at isolation, so never migrated */
	return -EBUSY;
}

static void zsh_putback(struct page *page)
{
	WARN_ON_ONCE(1);
}

static const struct movable_operations zsh_mops = {
	.isolate_page = zsh_isolate,
	.migrate_page = zsh_migrate,
	.putback_page = zsh_putback,
};

bool zsh_isolation_takes_back(void)
{
	return true;
}

unsigned int zsh_max_order(void)
{
	/* Only the head is movable: a range that starts at a later
	 * pageblock of a larger block would meet its tail pages alone. */
	return pageblock_order;
}

int zsh_hold(struct zsq_block *b, struct page *head)
{
	set_page_private(head, (unsigned long)b);
	/* A page just allocated: nobody else locks it. */
	lock_page(head);
	__SetPageMovable(head, &zsh_mops);
	unlock_page(head);
	return 0;
}

/* The page lock is taken without waiting: a thread that holds it is in
 * isolate_movable_page(), where zsh_isolate refuses a block on its way
 * back; a later call finds the lock free. */
static bool zsh_release(struct zsq_block *b)
{
	struct page *head = pfn_to_page(b->pfn);

	if (!trylock_page(head))
		return false;
	__ClearPageMovable(head);
	set_page_private(head, 0);
	unlock_page(head);
	__free_pages(head, b->order);
	return true;
}

static void zsh_describe(const struct zsq_block *b, char *buf, size_t size)
{
	snprintf(buf, size, "head page locked by another thread");
}
#elif defined(ZS_HOLD_BALLOON)
/*
 * Kernels where modules cannot give pages operations of their own (7.x)
 * but balloon pages are movable: each block is a balloon of its own
 * (b->balloon) holding its pages as order-0 balloon pages, which
 * isolation passes and whose migration asks us first (zsh_migrate). A
 * page asked for is never migrated: it goes back to the allocator
 * ("deflated"), and with it the rest of its block while the quarantine
 * holds it, whoever asks: memory offlining and contiguous allocations,
 * which isolated its pageblock, and compaction, as on 6.x by default
 * (refusing compaction made every pass isolate each held page under the
 * kernel's one balloon lock only to put it back). Pages a migration
 * isolated and then put back without asking (it found no target page,
 * or it was aborted) land on the block's balloon list again, also after
 * the block was given back: whoever frees the descriptor, or the reaper
 * until it can, frees them first (zsh_settle). The pages count in the
 * Balloon line of /proc/meminfo. The kernel uses b->balloon until a
 * migration it started on one of the pages has ended: the block's
 * descriptor is freed only when none is under way (zsh_settle).
 */
/* Frees the block's pages on its balloon list; pages under migration are
 * not there. */
static void zsh_put_pages(struct zsq_block *b)
{
	LIST_HEAD(pages);
	size_t n;

	do {
		struct page *page, *next;

		n = balloon_page_list_dequeue(&b->balloon, &pages, ZS_BATCH);
		list_for_each_entry_safe(page, next, &pages, lru) {
			list_del(&page->lru);
			put_page(page);
			atomic_dec(&b->balloon_pages);
		}
		cond_resched();
	} while (n);
}

static int zsh_migrate(struct balloon_dev_info *bi, struct page *newpage, struct page *page,
		       enum migrate_mode mode)
{
	struct zsq_block *b = container_of(bi, struct zsq_block, balloon);
	struct zsq_claim c;

	zsh_callback_enter();
	zs_test_at(ZS_TP_CALLBACK, page_to_pfn(page));
	if (zs_test_refusing()) {
		zsh_callback_leave();
		return -EAGAIN;
	}
	if (zsq_claim(b, &c)) {
		zsh_put_pages(b);
		if (c.owner)
			zsh_free(b);	/* the reaper's until settled */
	}
	/* This page is deflated: the kernel frees it on -ENOENT but leaves
	 * the node's balloon count to the balloon's owner. Whoever gives
	 * the block back counts it gone. */
	mod_node_page_state(page_pgdat(page), NR_BALLOON_PAGES, -1);
	atomic_dec(&b->balloon_pages);
	zsh_callback_leave();
	return -ENOENT;
}

bool zsh_isolation_takes_back(void)
{
	return true;
}

unsigned int zsh_max_order(void)
{
	return ZS_NR_ORDERS - 1;	/* every page is movable */
}

int zsh_hold(struct zsq_block *b, struct page *head)
{
	unsigned long i, n = 1UL << b->order;

	balloon_devinfo_init(&b->balloon);
	b->balloon.migratepage = zsh_migrate;
	atomic_set(&b->balloon_pages, n);
	split_page(head, b->order);
	for (i = 0; i < n; i += ZS_BATCH) {
		unsigned long j;
		LIST_HEAD(pages);

		for (j = i; j < n && j < i + ZS_BATCH; j++)
			list_add_tail(&head[j].lru, &pages);
		balloon_page_list_enqueue(&b->balloon, &pages);
	}
	return 0;
}

static bool zsh_release(struct zsq_block *b)
{
	zsh_put_pages(b);
	return !atomic_read(&b->balloon_pages);
}

/*
 * Every page of a block given back is on its balloon list, isolated by
 * a migration (which either deflates it through zsh_migrate or puts it
 * back on the list), or back with the allocator. So a block is finished
 * once the list is emptied and no page is isolated; pages put back after
 * the give-back are freed here, since no callback will ask for them.
 */
static bool zsh_settle(struct zsq_block *b)
{
	LIST_HEAD(none);

	zsh_put_pages(b);
	if (atomic_read(&b->balloon_pages))
		return false;
	/* The kernel drops isolated_pages under the balloon lock after it
	 * last uses the balloon; taking that lock orders this read after. */
	balloon_page_list_dequeue(&b->balloon, &none, 0);
	return !READ_ONCE(b->balloon.isolated_pages);
}

static void zsh_describe(const struct zsq_block *b, char *buf, size_t size)
{
	snprintf(buf, size, "%d page(s) not back, %lu isolated by a migration",
		 atomic_read(&b->balloon_pages), READ_ONCE(b->balloon.isolated_pages));
}
#else
/*
 * Kernels without either (7.x without balloon migration): the head page
 * is frozen (reference count 0), as the kernel's own frozen allocations
 * are. Isolation passes it and nobody can take a reference; memory
 * offlining gets it back through the quarantine's memory notifier, a
 * contiguous allocation does not (zsh_isolation_takes_back).
 */
bool zsh_isolation_takes_back(void)
{
	return false;
}

unsigned int zsh_max_order(void)
{
	return ZS_NR_ORDERS - 1;
}

int zsh_hold(struct zsq_block *b, struct page *head)
{
	/* Fails while someone holds a speculative reference for a moment. */
	return page_ref_freeze(head, 1) ? 0 : -EBUSY;
}

static bool zsh_release(struct zsq_block *b)
{
	struct page *head = pfn_to_page(b->pfn);

	page_ref_unfreeze(head, 1);
	__free_pages(head, b->order);
	return true;
}

static void zsh_describe(const struct zsq_block *b, char *buf, size_t size)
{
	snprintf(buf, size, "nothing");
}
#endif

#ifndef ZS_HOLD_BALLOON
/* A block whose pages are back is finished: the kernel keeps no pointer
 * to its descriptor. */
static bool zsh_settle(struct zsq_block *b)
{
	return true;
}
#endif

/*
 * The reaper: descriptors of blocks given back whose pages are not all
 * back yet (zsh_release could not finish: a head another thread has
 * locked, pages a migration isolated and may put back) or that the
 * kernel may still use (zsh_settle). A work item finishes them every
 * ZSQ_REAP_MS, ZS_BATCH per hold of zsq_late_lock, so that nothing that
 * gives blocks back waits for the kernel: not the shrinker, which a
 * thread holding such pages can enter; not the memory notifier; not a
 * sort. Unloading runs it until it is empty (zsh_drain).
 */
#define ZSQ_REAP_MS 20

static LIST_HEAD(zsq_late);
static unsigned long zsq_nlate;
static DEFINE_SPINLOCK(zsq_late_lock);
static bool zsq_stopping;	/* zsh_drain runs the reaper itself */
static void zsq_reaper_fn(struct work_struct *w);
static DECLARE_DELAYED_WORK(zsq_reaper, zsq_reaper_fn);

static void zsq_late_add(struct zsq_block *b, bool pending)
{
	b->pending = pending;
	spin_lock(&zsq_late_lock);
	list_add_tail(&b->link, &zsq_late);
	zsq_nlate++;
	spin_unlock(&zsq_late_lock);
	if (!READ_ONCE(zsq_stopping))
		queue_delayed_work(system_unbound_wq, &zsq_reaper, msecs_to_jiffies(ZSQ_REAP_MS));
}

void zsh_free(struct zsq_block *b)
{
	if (zsh_settle(b))
		zsq_block_destroy(b);
	else
		zsq_late_add(b, false);
}

void zsh_give_back(struct zsq_block *b)
{
	if (zsh_release(b))
		zsh_free(b);
	else
		zsq_late_add(b, true);
}

/* One pass of the reaper over what was there when it began; returns how
 * many descriptors are left. */
static unsigned long zsq_reap(void)
{
	unsigned long n, left;

	spin_lock(&zsq_late_lock);
	n = zsq_nlate;
	spin_unlock(&zsq_late_lock);
	while (n) {
		struct zsq_block *b, *next;
		unsigned int k = 0;
		LIST_HEAD(batch);
		LIST_HEAD(keep);

		spin_lock(&zsq_late_lock);
		while (k < ZS_BATCH && k < n && !list_empty(&zsq_late)) {
			list_move_tail(zsq_late.next, &batch);
			zsq_nlate--;
			k++;
		}
		spin_unlock(&zsq_late_lock);
		zs_note_hold(k);
		if (!k)
			break;
		n -= k;
		list_for_each_entry_safe(b, next, &batch, link) {
			list_del(&b->link);
			if (b->pending && zsh_release(b))
				b->pending = false;
			if (!b->pending && zsh_settle(b))
				zsq_block_destroy(b);
			else
				list_add_tail(&b->link, &keep);
		}
		spin_lock(&zsq_late_lock);
		list_for_each_entry_safe(b, next, &keep, link) {
			list_move_tail(&b->link, &zsq_late);
			zsq_nlate++;
		}
		spin_unlock(&zsq_late_lock);
		cond_resched();
	}
	spin_lock(&zsq_late_lock);
	left = zsq_nlate;
	spin_unlock(&zsq_late_lock);
	return left;
}

static void zsq_reaper_fn(struct work_struct *w)
{
	if (zsq_reap() && !READ_ONCE(zsq_stopping))
		queue_delayed_work(system_unbound_wq, &zsq_reaper, msecs_to_jiffies(ZSQ_REAP_MS));
}

/* Names what unloading still waits for: callbacks running in the
 * module, and the first blocks the reaper has not finished. */
static void zsh_drain_report(unsigned int seconds)
{
	struct zsq_block *b;
	unsigned int n = 0;

	pr_err("unloading has waited %u s: %d isolation or migration callback(s) still running in the module, %lu block(s) given back and not finished\n",
	       seconds, zsh_callbacks_running(), READ_ONCE(zsq_nlate));
	spin_lock(&zsq_late_lock);
	list_for_each_entry(b, &zsq_late, link) {
		char what[96];

		if (n++ == 4)
			break;
		zsh_describe(b, what, sizeof(what));
		pr_err("  block at pfn %#lx, order %u: %s\n", b->pfn, b->order, what);
	}
	spin_unlock(&zsq_late_lock);
}

void zsh_drain(void)
{
	unsigned long t0 = jiffies, warn_at = jiffies + ZS_WAIT_WARN_S * HZ;

	/*
	 * The kernel calls the isolation and migration callbacks without a
	 * reference on the module, and uses a block's descriptor until the
	 * migrations it started on the block's pages end: the module stays
	 * until no callback runs and the reaper has finished every block.
	 * Both are bounded by the kernel's own migrations: a page not back
	 * is on its block's list, which each pass empties, or isolated by a
	 * migration, which ends by deflating it or putting it back on the
	 * list. Past ZS_WAIT_WARN_S the kernel log says every ZS_WAIT_WARN_S
	 * what is waited for.
	 */
	WRITE_ONCE(zsq_stopping, true);
	cancel_delayed_work_sync(&zsq_reaper);
	while (zsq_reap() || zsh_callbacks_running()) {
		if (time_after(jiffies, warn_at)) {
			zsh_drain_report(jiffies_to_msecs(jiffies - t0) / 1000);
			warn_at = jiffies + ZS_WAIT_WARN_S * HZ;
		}
		zsh_callbacks_wait(1);
		msleep(ZSQ_REAP_MS);
	}
}
