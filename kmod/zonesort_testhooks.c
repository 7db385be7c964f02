// SPDX-License-Identifier: GPL-2.0
/*
 * Test builds only (make ZS_TEST_HOOKS=y): stages states the tests cannot
 * wait for. The parameter test_batch makes walks resume after fewer list
 * entries, so that the race does not depend on how long the lists are. With the parameter test_move_resume=1, the next time a walk
 * of a free list resumes after dropping zone->lock, the block it resumes
 * from is first moved to the tail of another migratetype's list of the
 * same order, its pageblock left as it is: what kernels before 6.10 do
 * when they steal free blocks for another migratetype without re-typing
 * the pageblock (steal_suitable_fallback, move_to_free_list). The list it
 * goes to is MIGRATE_HIGHATOMIC's, which no order-0 allocation takes from:
 * on the short unmovable list of a small guest the kernel could hand the
 * block out and free it back to its pageblock's list before the check,
 * which would look like a sort moving it back. After the sort,
 * test_result says where that block is: "stayed" on the list it was moved
 * to (right: a sort only reorders lists; the hook then puts it back),
 * "returned" to its old list, "gone" (allocated or merged meanwhile:
 * nothing shown), or "none" when the sort ended with the hook still armed
 * (no walk resumed). The parameter test_give_back_delay_ms holds blocks
 * that are off their lists and on their way back that long before they
 * are freed, so that isolation (compaction, offlining) meets them there.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/mmzone.h>
#include <linux/moduleparam.h>
#include <linux/spinlock.h>

#include "zonesort_compat.h"
#include "zonesort_internal.h"

static int zs_test_move_resume;
module_param_named(test_move_resume, zs_test_move_resume, int, 0644);
MODULE_PARM_DESC(test_move_resume, "test builds: 1 = move the block the next walk resumes from to another list");

static unsigned int zs_test_batch_entries;
module_param_named(test_batch, zs_test_batch_entries, uint, 0644);
MODULE_PARM_DESC(test_batch, "test builds: most list entries a walk records per lock hold (0 = the module's own)");

static char zs_test_result[16] = "none";
module_param_string(test_result, zs_test_result, sizeof(zs_test_result), 0444);
MODULE_PARM_DESC(test_result, "test builds: where the moved block ended up after the sort");

static struct {
	struct zone *zone;
	unsigned long pfn;
	unsigned int order;
	int from, to;
} zs_moved;

static unsigned int zs_test_give_back_ms;
module_param_named(test_give_back_delay_ms, zs_test_give_back_ms, uint, 0644);
MODULE_PARM_DESC(test_give_back_delay_ms, "test builds: pause before blocks on their way back are freed (0-1000 ms)");

void zs_test_give_back_pause(void)
{
	unsigned int ms = READ_ONCE(zs_test_give_back_ms);

	if (ms)
		msleep(min(ms, 1000U));
}

unsigned int zs_test_batch(unsigned int batch)
{
	unsigned int n = READ_ONCE(zs_test_batch_entries);

	return n && n < batch ? n : batch;
}

void zs_test_resume(struct zone *zone, struct page *page, unsigned int order, int mt)
{
	if (!READ_ONCE(zs_test_move_resume) || !page || !PageBuddy(page) ||
	    page_private(page) != order)
		return;
	WRITE_ONCE(zs_test_move_resume, 0);
	zs_moved.zone = zone;
	zs_moved.pfn = page_to_pfn(page);
	zs_moved.order = order;
	zs_moved.from = mt;
	zs_moved.to = mt == MIGRATE_HIGHATOMIC ? MIGRATE_MOVABLE : MIGRATE_HIGHATOMIC;
	list_move_tail(&page->ZS_LINK, &zone->free_area[order].free_list[zs_moved.to]);
}

static bool zs_test_on_list(struct list_head *list, unsigned long pfn)
{
	struct page *p;

	list_for_each_entry(p, list, ZS_LINK)
		if (page_to_pfn(p) == pfn)
			return true;
	return false;
}

void zs_test_check(void)
{
	struct free_area *area;
	unsigned long flags;
	const char *where = "gone";

	if (!zs_moved.zone) {
		if (READ_ONCE(zs_test_move_resume))
			strscpy(zs_test_result, "none", sizeof(zs_test_result));
		return;
	}
	area = &zs_moved.zone->free_area[zs_moved.order];
	spin_lock_irqsave(&zs_moved.zone->lock, flags);
	if (zs_test_on_list(&area->free_list[zs_moved.to], zs_moved.pfn)) {
		where = "stayed";
		list_move(&pfn_to_page(zs_moved.pfn)->ZS_LINK, &area->free_list[zs_moved.from]);
	} else if (zs_test_on_list(&area->free_list[zs_moved.from], zs_moved.pfn))
		where = "returned";
	spin_unlock_irqrestore(&zs_moved.zone->lock, flags);
	strscpy(zs_test_result, where, sizeof(zs_test_result));
	pr_info("test hook: block %lx of order %u moved from list %d to %d: %s\n", zs_moved.pfn,
		zs_moved.order, zs_moved.from, zs_moved.to, where);
	zs_moved.zone = NULL;
}
