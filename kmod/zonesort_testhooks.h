/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Test builds only (make ZS_TEST_HOOKS=y): the hooks that stage races
 * the tests cannot wait for (zonesort_testhooks.c). In other builds every
 * hook is an empty inline. Calls no other part of the module.
 */
#ifndef ZONESORT_TESTHOOKS_H
#define ZONESORT_TESTHOOKS_H

#include <linux/mmzone.h>
#include <linux/types.h>

/* Where a test build can stage a race once (zonesort_testhooks.c). */
enum zs_test_point {
	ZS_TP_PICKING,	/* a sort pulled a list's held blocks (pfn: each) */
	ZS_TP_CLAIMED,	/* an isolation callback claimed a block to give back */
	ZS_TP_TAKEN,	/* a block just taken is held, before its isolation check */
	ZS_TP_CALLBACK,	/* an isolation or migration callback begins */
	ZS_TP_RESUMED,	/* a sort's walk of a movable list dropped zone->lock (pfn: next block) */
	ZS_TP_NR,
};

enum zs_test_action { ZS_TA_NONE, ZS_TA_PAUSE, ZS_TA_SHRINK, ZS_TA_REFUSE };

#ifdef ZS_TEST_HOOKS
/* The action armed for point (and the block at pfn), disarmed now and
 * done: slept for ZS_TA_PAUSE, the shrink run for ZS_TA_SHRINK, the
 * refusal window opened for ZS_TA_REFUSE. May sleep. */
enum zs_test_action zs_test_at(enum zs_test_point point, unsigned long pfn);
/* True while a refusal window is open: the migration callback then
 * fails (-EAGAIN) without touching its block, as a migration that found
 * no target page fails, and the kernel puts the page back. Counted in
 * test_refused. */
bool zs_test_refusing(void);
/* The blocks staged for the next sort to hold (test_take), at most max
 * first pfns into pfns; the list is emptied. */
size_t zs_test_takes(unsigned long *pfns, size_t max);
/* What test_at point:shrink runs: fn(nid) of the block's node, or
 * nothing when fn is NULL. */
void zs_test_set_shrink(void (*fn)(int nid));
/* Called with zone->lock held where a walk of free_list[mt] of this order
 * resumes from page (NULL when it has no page any more). */
void zs_test_resume(struct zone *zone, struct page *page, unsigned int order, int mt);
/* Called after each sort, with zs_mutex held. */
void zs_test_check(void);
/* The entries a walk records per lock hold: batch, or fewer when the
 * test_batch parameter says so (a walk then resumes on short lists too). */
unsigned int zs_test_batch(unsigned int batch);
#else
static inline void zs_test_resume(struct zone *zone, struct page *page, unsigned int order, int mt)
{
}

static inline void zs_test_check(void)
{
}

static inline unsigned int zs_test_batch(unsigned int batch)
{
	return batch;
}

static inline enum zs_test_action zs_test_at(enum zs_test_point point, unsigned long pfn)
{
	return ZS_TA_NONE;
}

static inline bool zs_test_refusing(void)
{
	return false;
}

static inline size_t zs_test_takes(unsigned long *pfns, size_t max)
{
	return 0;
}

static inline void zs_test_set_shrink(void (*fn)(int nid))
{
}
#endif

#endif
