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

/* List entries handled at most per lock hold (zone->lock with interrupts
 * off, a per-CPU list's lock, the quarantine's lock). */
#define ZS_BATCH 256

/* Seconds between the kernel-log lines of a wait on the kernel that has
 * no bound of its own (pages a migration isolated): such waits keep
 * scheduling, so the hung-task detector never names them. */
#define ZS_WAIT_WARN_S 10

/* Migratetype of pfn's pageblock, MIGRATE_ISOLATE when it is isolated
 * (zonesort_main.c). */
int zs_pageblock_mt(unsigned long pfn);

/* With zone->lock held: some pageblock of the zone is isolated. */
bool zs_zone_isolating(struct zone *zone);

/* With zone->lock held: the head page of the free block of 2^order pages
 * at pfn, in zone, on a pageblock of migratetype mt; else NULL. */
struct page *zs_block(struct zone *zone, unsigned long pfn, unsigned int order, int mt);

/* Records a lock hold that handled this many list entries (the stats
 * file's lock_hold_entries_max). */
void zs_note_hold(unsigned int entries);

struct kobject;
/* The node of a node's sysfs directory (ZS_NODE_DIR_FMT). */
int zs_kobj_nid(struct kobject *k);

#ifdef ZS_TEST_HOOKS
/* debugfs zonesort/freelists, test builds only: each list is copied in
 * one lock hold, interrupts off, into memory sized by the free blocks. */
void zs_dump_init(void);
void zs_dump_exit(void);
#else
static inline void zs_dump_init(void)
{
}

static inline void zs_dump_exit(void)
{
}
#endif

/* Where a test build can stage a race once (zonesort_testhooks.c). */
enum zs_test_point {
	ZS_TP_PICKING,	/* a sort pulled a list's held blocks (pfn: each) */
	ZS_TP_CLAIMED,	/* an isolation callback claimed a block to give back */
	ZS_TP_TAKEN,	/* a block just taken is held, before its isolation check */
	ZS_TP_CALLBACK,	/* an isolation or migration callback begins */
	ZS_TP_NR,
};

enum zs_test_action { ZS_TA_NONE, ZS_TA_PAUSE, ZS_TA_SHRINK };

#ifdef ZS_TEST_HOOKS
/* The action armed for point (and the block at pfn), disarmed now; it
 * has already slept for ZS_TA_PAUSE. May sleep. */
enum zs_test_action zs_test_at(enum zs_test_point point, unsigned long pfn);
/* The blocks staged for the next sort to hold (test_take), at most max
 * first pfns into pfns; the list is emptied. */
size_t zs_test_takes(unsigned long *pfns, size_t max);
/* The module's debugfs directory, or NULL (test builds). */
struct dentry *zs_debugfs_dir(void);
/* Called with zone->lock held where a walk of free_list[mt] of this order
 * resumes from page (NULL when it has no page any more). */
void zs_test_resume(struct zone *zone, struct page *page, unsigned int order, int mt);
/* Called after each sort, with zs_mutex held. */
void zs_test_check(void);
/* The entries a walk records per lock hold: batch, or fewer when the
 * test_batch parameter says so (a walk then resumes on short lists too). */
unsigned int zs_test_batch(unsigned int batch);
/* Called in process context before blocks on their way back are freed. */
void zs_test_give_back_pause(void);
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

static inline void zs_test_give_back_pause(void)
{
}

static inline enum zs_test_action zs_test_at(enum zs_test_point point, unsigned long pfn)
{
	return ZS_TA_NONE;
}

static inline size_t zs_test_takes(unsigned long *pfns, size_t max)
{
	return 0;
}
#endif

#endif
