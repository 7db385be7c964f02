// SPDX-License-Identifier: GPL-2.0
/*
 * Holding the quarantine's blocks; see zonesort_hold.h.
 *
 * A held block is one non-compound allocation of 2^order pages: the head
 * page has a reference count of 1, the others 0. Pageblock isolation
 * (has_unmovable_pages) passes pages with a count of 0, so only the head
 * decides whether the block is in the way of memory offlining or of a
 * contiguous allocation.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/errno.h>
#include <linux/gfp.h>
#include <linux/jiffies.h>
#include <linux/migrate.h>
#include <linux/mm.h>
#include <linux/page_ref.h>
#include <linux/pagemap.h>

#include "zonesort_compat.h"
#include "zonesort_hold.h"
#include "zonesort_internal.h"
#include "zonesort_quarantine.h"

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
 *     our reference, which frees the other pages now, and the caller's
 *     reference frees the head when it lets go. Held blocks never stand
 *     in the way of huge pages;
 *   - compaction with the sysctl at 0 is refused, as for a pinned page.
 * A block another path is giving back already (zsq_block_isolated says
 * so) is refused: that path frees it once it has the page lock.
 * page_private of the head points to the block while it is held; it is
 * cleared under the page lock before the block can be freed, so a block
 * found there with the page locked is alive.
 */
static bool zsh_isolate(struct page *page, isolate_mode_t mode)
{
	struct zsq_block *b;
	unsigned int order;
	bool free_block;

	if (zs_test_at(ZS_TP_CALLBACK, page_to_pfn(page)) == ZS_TA_SHRINK)
		zsq_test_shrink(page_to_nid(page));
	if (!(mode & ISOLATE_UNEVICTABLE) && zs_pageblock_mt(page_to_pfn(page)) != MIGRATE_ISOLATE)
		return false;
	b = (struct zsq_block *)page_private(page);
	if (!b)
		return false;
	order = b->order;
	if (!zsq_block_isolated(b, &free_block))
		return false;
	__ClearPageMovable(page);
	set_page_private(page, 0);
	__free_pages(page, order);
	if (free_block)
		zsq_block_free(b);
	return false;
}

static int zsh_migrate(struct page *dst, struct page *src, enum migrate_mode mode)
{
	WARN_ON_ONCE(1);	/* never isolated, so never migrated */
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

void zsh_release(struct zsq_block *b)
{
	struct page *head = pfn_to_page(b->pfn);

	/* Waits for an isolation attempt holding the lock to let go. */
	lock_page(head);
	__ClearPageMovable(head);
	set_page_private(head, 0);
	unlock_page(head);
	__free_pages(head, b->order);
}
#elif defined(ZS_HOLD_BALLOON)
/*
 * Kernels where modules cannot give pages operations of their own (7.x)
 * but balloon pages are movable: each block is a balloon of its own
 * (b->balloon) holding its pages as order-0 balloon pages, which
 * isolation passes and whose migration asks us first (zsh_migrate):
 *   - a page whose pageblock is isolated (memory offlining, a contiguous
 *     allocation) is given back, with the rest of its block;
 *   - compaction is refused, as for a pinned page.
 * The pages also count in the Balloon line of /proc/meminfo. The kernel
 * uses b->balloon until a migration it started on one of the pages has
 * ended: the block's descriptor is freed only when none is under way
 * (zsh_idle).
 */
/* Frees the block's pages on its balloon list; pages under migration are
 * not there and come back through zsh_migrate or to the list. */
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
	} while (n);
}

static int zsh_migrate(struct balloon_dev_info *bi, struct page *newpage, struct page *page,
		       enum migrate_mode mode)
{
	struct zsq_block *b = container_of(bi, struct zsq_block, balloon);
	bool free_block;

	if (zs_test_at(ZS_TP_CALLBACK, page_to_pfn(page)) == ZS_TA_SHRINK)
		zsq_test_shrink(page_to_nid(page));
	if (zs_pageblock_mt(page_to_pfn(page)) != MIGRATE_ISOLATE)
		return -EBUSY;
	if (zsq_block_isolated(b, &free_block)) {
		zsh_put_pages(b);
		if (free_block)
			zsq_block_free(b);
	}
	/* Whoever else gives the block back waits for this page, which the
	 * kernel frees: "deflated, not migrated". */
	atomic_dec(&b->balloon_pages);
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

void zsh_release(struct zsq_block *b)
{
	unsigned long warn_at = jiffies + ZS_WAIT_WARN_S * HZ;

	for (;;) {
		zsh_put_pages(b);
		if (!atomic_read(&b->balloon_pages))
			break;
		/* A page compaction is trying to move: it comes back when
		 * zsh_migrate refuses, or goes if its pageblock was isolated. */
		if (time_after(jiffies, warn_at)) {
			pr_warn("block at pfn %#lx: waiting for %d page(s) a migration isolated\n",
				b->pfn, atomic_read(&b->balloon_pages));
			warn_at = jiffies + ZS_WAIT_WARN_S * HZ;
		}
		cond_resched();
	}
}

bool zsh_idle(struct zsq_block *b)
{
	LIST_HEAD(none);

	if (atomic_read(&b->balloon_pages))
		return false;
	/* The kernel drops isolated_pages under the balloon lock after it
	 * last uses the balloon; taking that lock orders this read after. */
	balloon_page_list_dequeue(&b->balloon, &none, 0);
	return !READ_ONCE(b->balloon.isolated_pages);
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

void zsh_release(struct zsq_block *b)
{
	struct page *head = pfn_to_page(b->pfn);

	page_ref_unfreeze(head, 1);
	__free_pages(head, b->order);
}
#endif

#ifndef ZS_HOLD_BALLOON
bool zsh_idle(struct zsq_block *b)
{
	return true;
}
#endif
