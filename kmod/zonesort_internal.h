/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the parts of zonesort.ko share besides the policy: the debugfs
 * dump of the free lists (zonesort_dump.c), the quarantine
 * (zonesort_quarantine.c) and, in test builds only
 * (make ZS_TEST_HOOKS=y), the hooks that stage races the tests cannot
 * wait for (zonesort_testhooks.c).
 */
#ifndef ZONESORT_INTERNAL_H
#define ZONESORT_INTERNAL_H

#include <linux/mm_types.h>
#include <linux/mmzone.h>

/* Migratetype of pfn's pageblock, MIGRATE_ISOLATE when it is isolated
 * (zonesort_main.c). */
int zs_pageblock_mt(unsigned long pfn);

/* debugfs zonesort/freelists; without debugfs, nothing. */
void zs_dump_init(void);
void zs_dump_exit(void);

#ifdef ZS_TEST_HOOKS
/* Called with zone->lock held where a walk of free_list[mt] of this order
 * resumes from page (NULL when it has no page any more). */
void zs_test_resume(struct zone *zone, struct page *page, unsigned int order, int mt);
/* Called after each sort, with zs_mutex held. */
void zs_test_check(void);
/* The entries a walk records per lock hold: batch, or fewer when the
 * test_batch parameter says so (a walk then resumes on short lists too). */
unsigned int zs_test_batch(unsigned int batch);
/* True while the test_refuse_contig parameter is 1: the quarantine then
 * treats every alloc_contig_range() as refused (a busy pageblock). */
bool zs_test_refuse_contig(void);
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

static inline bool zs_test_refuse_contig(void)
{
	return false;
}
#endif

#endif
