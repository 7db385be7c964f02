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
 * (no walk resumed).
 *
 * Test points (enum zs_test_point) stage a race at a chosen place once:
 * writing "point[@pfn]:pause:ms" to test_at makes the next thread that
 * passes point (with that block, when @pfn is given) sleep ms
 * milliseconds; "point[@pfn]:shrink" makes it run the quarantine's
 * shrinker on the block's node there, as reclaim entered from that thread
 * would (the quarantine registers it: zs_test_set_shrink);
 * "point[@pfn]:refuse:ms" opens a window of ms milliseconds in which
 * every migration callback fails as one without a target page does
 * (zs_test_refusing; test_refused counts them). Several arms are
 * separated by commas; "none" disarms all.
 * test_fired names the last point that fired, its block and how many have
 * fired, so a test knows when the pause began. test_take lists first
 * pfns of free blocks the next sort holds besides what it picks, so that
 * a test chooses where held blocks are.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/mmzone.h>
#include <linux/moduleparam.h>
#include <linux/spinlock.h>
#include <linux/string.h>

#include "zonesort_compat.h"
#include "zonesort_testhooks.h"

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

/* ------------------------------------------------------------------------
 * Test points.
 */
static const char *const zs_test_point_names[ZS_TP_NR] = {
	[ZS_TP_PICKING] = "picking",
	[ZS_TP_CLAIMED] = "claimed",
	[ZS_TP_TAKEN] = "taken",
	[ZS_TP_CALLBACK] = "callback",
	[ZS_TP_RESUMED] = "resumed",
};

static const char *const zs_test_action_names[] = {
	[ZS_TA_NONE] = "none",
	[ZS_TA_PAUSE] = "pause",
	[ZS_TA_SHRINK] = "shrink",
	[ZS_TA_REFUSE] = "refuse",
};

#define ZS_TEST_ARMS 8

static struct zs_test_arm {
	int point;			/* -1: free slot */
	unsigned long pfn;		/* ULONG_MAX: any block */
	enum zs_test_action action;
	unsigned int ms;
} zs_arms[ZS_TEST_ARMS] = { [0 ... ZS_TEST_ARMS - 1] = { .point = -1 } };
static DEFINE_SPINLOCK(zs_arms_lock);
static char zs_fired[64] = "none";
static unsigned long zs_fired_count;

/* One "point[@pfn]:action[:ms]" into *arm; -EINVAL when it is not one. */
static int zs_test_parse_arm(char *spec, struct zs_test_arm *arm)
{
	char *point = strsep(&spec, ":"), *action = strsep(&spec, ":"), *at;
	int i;

	if (!point || !action)
		return -EINVAL;
	arm->pfn = ULONG_MAX;
	at = strchr(point, '@');
	if (at) {
		*at++ = 0;
		if (kstrtoul(at, 0, &arm->pfn))
			return -EINVAL;
	}
	arm->point = -1;
	for (i = 0; i < ZS_TP_NR; i++)
		if (!strcmp(point, zs_test_point_names[i]))
			arm->point = i;
	if (arm->point < 0)
		return -EINVAL;
	arm->ms = 0;
	arm->action = ZS_TA_NONE;
	for (i = ZS_TA_NONE + 1; i < ARRAY_SIZE(zs_test_action_names); i++)
		if (!strcmp(action, zs_test_action_names[i]))
			arm->action = i;
	if (arm->action == ZS_TA_NONE)
		return -EINVAL;
	/* A shrink takes no time; a pause and a refusal window take one. */
	if (arm->action == ZS_TA_SHRINK)
		return spec ? -EINVAL : 0;
	if (!spec || kstrtouint(spec, 0, &arm->ms) || arm->ms > 60000)
		return -EINVAL;
	return 0;
}

static int zs_test_at_set(const char *val, const struct kernel_param *kp)
{
	struct zs_test_arm arms[ZS_TEST_ARMS];
	char buf[256], *s = buf, *spec;
	int n = 0, i, j;

	strscpy(buf, val, sizeof(buf));
	strim(buf);
	if (strcmp(buf, "none")) {
		while ((spec = strsep(&s, ",")) != NULL) {
			if (n == ZS_TEST_ARMS || zs_test_parse_arm(spec, &arms[n])) {
				pr_warn("test_at: '%s' is not point[@pfn]:pause:ms, point[@pfn]:refuse:ms or point[@pfn]:shrink (points: picking, claimed, taken, callback, resumed; at most %d)\n",
					spec, ZS_TEST_ARMS);
				return -EINVAL;
			}
			n++;
		}
	}
	spin_lock(&zs_arms_lock);
	for (i = 0; i < ZS_TEST_ARMS; i++)
		zs_arms[i].point = -1;
	for (i = 0, j = 0; j < n; j++)
		zs_arms[i++] = arms[j];
	spin_unlock(&zs_arms_lock);
	return 0;
}

static int zs_test_at_get(char *buffer, const struct kernel_param *kp)
{
	int i, len = 0;

	spin_lock(&zs_arms_lock);
	for (i = 0; i < ZS_TEST_ARMS; i++) {
		const struct zs_test_arm *a = &zs_arms[i];

		if (a->point < 0)
			continue;
		len += scnprintf(buffer + len, PAGE_SIZE - len, "%s%s", len ? "," : "",
				 zs_test_point_names[a->point]);
		if (a->pfn != ULONG_MAX)
			len += scnprintf(buffer + len, PAGE_SIZE - len, "@%#lx", a->pfn);
		len += scnprintf(buffer + len, PAGE_SIZE - len, ":%s", zs_test_action_names[a->action]);
		if (a->action != ZS_TA_SHRINK)
			len += scnprintf(buffer + len, PAGE_SIZE - len, ":%u", a->ms);
	}
	spin_unlock(&zs_arms_lock);
	len += scnprintf(buffer + len, PAGE_SIZE - len, "%s\n", len ? "" : "none");
	return len;
}

static const struct kernel_param_ops zs_test_at_ops = {
	.set = zs_test_at_set,
	.get = zs_test_at_get,
};

module_param_cb(test_at, &zs_test_at_ops, NULL, 0644);
MODULE_PARM_DESC(test_at, "test builds: point[@pfn]:pause:ms or point[@pfn]:shrink, once each (comma-separated; none)");

static int zs_test_fired_get(char *buffer, const struct kernel_param *kp)
{
	int len;

	spin_lock(&zs_arms_lock);
	len = scnprintf(buffer, PAGE_SIZE, "%s n=%lu\n", zs_fired, zs_fired_count);
	spin_unlock(&zs_arms_lock);
	return len;
}

static const struct kernel_param_ops zs_test_fired_ops = {
	.get = zs_test_fired_get,
};

module_param_cb(test_fired, &zs_test_fired_ops, NULL, 0444);
MODULE_PARM_DESC(test_fired, "test builds: the last test point that fired, its block, and how many fired");

static void (*zs_test_shrink_fn)(int nid);
static unsigned long zs_refuse_until;	/* jiffies; valid while zs_refusing */
static bool zs_refusing;
static atomic_long_t zs_refused = ATOMIC_LONG_INIT(0);

static int zs_test_refused_get(char *buffer, const struct kernel_param *kp)
{
	return scnprintf(buffer, PAGE_SIZE, "%ld\n", atomic_long_read(&zs_refused));
}

static const struct kernel_param_ops zs_test_refused_ops = {
	.get = zs_test_refused_get,
};

module_param_cb(test_refused, &zs_test_refused_ops, NULL, 0444);
MODULE_PARM_DESC(test_refused, "test builds: migration callbacks refused in refusal windows since load");

bool zs_test_refusing(void)
{
	if (!smp_load_acquire(&zs_refusing))
		return false;
	if (time_after(jiffies, READ_ONCE(zs_refuse_until))) {
		WRITE_ONCE(zs_refusing, false);
		return false;
	}
	atomic_long_inc(&zs_refused);
	return true;
}

void zs_test_set_shrink(void (*fn)(int nid))
{
	WRITE_ONCE(zs_test_shrink_fn, fn);
}

enum zs_test_action zs_test_at(enum zs_test_point point, unsigned long pfn)
{
	void (*shrink)(int nid);
	struct zs_test_arm hit = { .point = -1 };
	int i;

	spin_lock(&zs_arms_lock);
	for (i = 0; i < ZS_TEST_ARMS; i++) {
		struct zs_test_arm *a = &zs_arms[i];

		if (a->point == point && (a->pfn == ULONG_MAX || a->pfn == pfn)) {
			hit = *a;
			a->point = -1;
			zs_fired_count++;
			snprintf(zs_fired, sizeof(zs_fired), "%s pfn=%#lx", zs_test_point_names[point],
				 pfn);
			break;
		}
	}
	spin_unlock(&zs_arms_lock);
	if (hit.point < 0)
		return ZS_TA_NONE;
	pr_info("test point %s fired at pfn %#lx: %s %u ms\n", zs_test_point_names[point], pfn,
		zs_test_action_names[hit.action], hit.ms);
	if (hit.action == ZS_TA_PAUSE)
		msleep(hit.ms);
	if (hit.action == ZS_TA_REFUSE) {
		WRITE_ONCE(zs_refuse_until, jiffies + msecs_to_jiffies(hit.ms));
		smp_store_release(&zs_refusing, true);
	}
	shrink = READ_ONCE(zs_test_shrink_fn);
	if (hit.action == ZS_TA_SHRINK && shrink)
		shrink(pfn_to_nid(pfn));
	return hit.action;
}

/* ------------------------------------------------------------------------
 * Blocks the next sort holds besides its picks.
 */
#define ZS_TEST_TAKES 16

static unsigned long zs_takes[ZS_TEST_TAKES];
static unsigned int zs_ntakes;
static DEFINE_SPINLOCK(zs_takes_lock);

static int zs_test_take_set(const char *val, const struct kernel_param *kp)
{
	unsigned long pfns[ZS_TEST_TAKES];
	char buf[256], *s = buf, *tok;
	unsigned int n = 0;

	strscpy(buf, val, sizeof(buf));
	strim(buf);
	while ((tok = strsep(&s, ",")) != NULL) {
		if (!*tok)
			continue;
		if (n == ZS_TEST_TAKES || kstrtoul(tok, 0, &pfns[n])) {
			pr_warn("test_take: '%s' is not a pfn (at most %d, comma-separated)\n", tok,
				ZS_TEST_TAKES);
			return -EINVAL;
		}
		n++;
	}
	spin_lock(&zs_takes_lock);
	memcpy(zs_takes, pfns, n * sizeof(*pfns));
	zs_ntakes = n;
	spin_unlock(&zs_takes_lock);
	return 0;
}

static int zs_test_take_get(char *buffer, const struct kernel_param *kp)
{
	unsigned int i;
	int len = 0;

	spin_lock(&zs_takes_lock);
	for (i = 0; i < zs_ntakes; i++)
		len += scnprintf(buffer + len, PAGE_SIZE - len, "%s%#lx", i ? "," : "", zs_takes[i]);
	spin_unlock(&zs_takes_lock);
	len += scnprintf(buffer + len, PAGE_SIZE - len, "%s\n", len ? "" : "none");
	return len;
}

static const struct kernel_param_ops zs_test_take_ops = {
	.set = zs_test_take_set,
	.get = zs_test_take_get,
};

module_param_cb(test_take, &zs_test_take_ops, NULL, 0644);
MODULE_PARM_DESC(test_take, "test builds: first pfns of free blocks the next sort holds besides its picks");

size_t zs_test_takes(unsigned long *pfns, size_t max)
{
	size_t n;

	spin_lock(&zs_takes_lock);
	n = min_t(size_t, zs_ntakes, max);
	memcpy(pfns, zs_takes, n * sizeof(*pfns));
	zs_ntakes = 0;
	spin_unlock(&zs_takes_lock);
	return n;
}
