/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Free-list access under zone->lock and the lock-hold record
 * (zonesort_freelist.c): the module's lowest layer.
 */
#ifndef ZONESORT_FREELIST_H
#define ZONESORT_FREELIST_H

#include <linux/mm_types.h>
#include <linux/mmzone.h>

/* Migratetype of pfn's pageblock, MIGRATE_ISOLATE when it is isolated. */
int zs_pageblock_mt(unsigned long pfn);

/* With zone->lock held: some pageblock of the zone is isolated. */
bool zs_zone_isolating(struct zone *zone);

/* With zone->lock held: the head page of the free block of 2^order pages
 * at pfn, in zone, on a pageblock of migratetype mt; else NULL. */
struct page *zs_block(struct zone *zone, unsigned long pfn, unsigned int order, int mt);

/* Records a lock hold that handled this many list entries; the most so
 * far (the stats file's lock_hold_entries_max). */
void zs_note_hold(unsigned int entries);
int zs_hold_entries_max(void);

#endif
