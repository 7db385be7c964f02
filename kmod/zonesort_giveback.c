// SPDX-License-Identifier: GPL-2.0
/*
 * Giving held blocks back: the blocks a caller took off their lists, and
 * the blocks of a node, of a range of pages, or of every node, outside a
 * sort (release files, memory pressure, memory going offline, unloading)
 * or by a sort making room. Pages go back outside any lock, with
 * cond_resched() between blocks, and never wait for the kernel
 * (zsh_give_back).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/nodemask.h>
#include <linux/sched.h>
#include <linux/spinlock.h>

#include "zonesort_freelist.h"
#include "zonesort_giveback.h"
#include "zonesort_held.h"
#include "zonesort_hold.h"
#include "zonesort_internal.h"
#include "zonesort_testhooks.h"

/* Gives back the blocks on list, unlinked and uncounted already. */
unsigned long zsq_give_back(int nid, struct list_head *list)
{
	struct zsq_block *b, *next;
	unsigned long pages = 0;

	list_for_each_entry_safe(b, next, list, link) {
		list_del(&b->link);
		pages += 1UL << b->order;
		zsh_give_back(b);
		cond_resched();
	}
	if (pages) {
		zsq_account(nid, -(long)pages);
		atomic64_add(pages, &zsq_stats.released);
	}
	return pages;
}

/*
 * Moves to out the HELD blocks of qn->held[zi][order] within [start, end)
 * while *pages is under max_pages, ZS_BATCH entries per lock hold; the
 * others are rotated to the tail, each looked at once.
 */
static void zsq_collect(struct zsq_node *qn, int zi, unsigned int order, struct list_head *out,
			unsigned long max_pages, unsigned long start, unsigned long end,
			unsigned long *pages)
{
	struct list_head *list = &qn->held[zi][order];
	unsigned long left;

	spin_lock(&qn->lock);
	left = qn->count[zi][order];
	while (left && *pages < max_pages) {
		unsigned int batch = ZS_BATCH;

		while (left && batch && *pages < max_pages && !list_empty(list)) {
			struct zsq_block *b = list_first_entry(list, struct zsq_block, link);

			left--;
			batch--;
			if (b->pfn + (1UL << order) <= start || b->pfn >= end) {
				list_move_tail(&b->link, list);
				continue;
			}
			zsq_unlist(qn, b);
			list_add_tail(&b->link, out);
			*pages += 1UL << order;
		}
		zs_note_hold(ZS_BATCH - batch);
		if (list_empty(list))
			break;
		spin_unlock(&qn->lock);
		cond_resched();
		spin_lock(&qn->lock);
	}
	spin_unlock(&qn->lock);
}

/* Gives back up to max_pages pages (whole blocks, at least one block) of
 * node nid held in [start, end), the lists handed out last first: lower
 * zones, then higher orders. Blocks a running sort is picking or taking
 * are left to it. Returns the pages given back. */
unsigned long zsq_release(int nid, unsigned long max_pages, unsigned long start,
			   unsigned long end)
{
	struct zsq_node *qn = &zsq_nodes[nid];
	unsigned long pages = 0, given = 0;
	int zi, order;
	LIST_HEAD(out);

	for (zi = 0; zi < MAX_NR_ZONES && pages < max_pages; zi++) {
		for (order = ZS_NR_ORDERS - 1; order >= 0 && pages < max_pages; order--) {
			zsq_collect(qn, zi, order, &out, max_pages, start, end, &pages);
			given += zsq_give_back(nid, &out);
		}
	}
	return given;
}

unsigned long zsq_release_all(void)
{
	unsigned long pages = 0;
	int nid;

	for_each_node(nid)
		pages += zsq_release(nid, ULONG_MAX, 0, ULONG_MAX);
	return pages;
}

void zsq_release_node(int nid)
{
	struct zsq_node *qn = &zsq_nodes[nid];

	zsq_release(nid, ULONG_MAX, 0, ULONG_MAX);
	spin_lock(&qn->lock);
	qn->peak = qn->pages;
	spin_unlock(&qn->lock);
}

