// SPDX-License-Identifier: GPL-2.0
/*
 * Free-list access under zone->lock, and the record of how long the
 * module holds locks: what every other part of the module builds on.
 * Calls no other part of the module.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/mm.h>
#include <linux/mmzone.h>
#include <linux/page-flags.h>

#include "zonesort_compat.h"
#include "zonesort_freelist.h"

static atomic_t zs_hold_entries = ATOMIC_INIT(0);

void zs_note_hold(unsigned int entries)
{
	int old = atomic_read(&zs_hold_entries);

	while ((int)entries > old) {
		int seen = atomic_cmpxchg(&zs_hold_entries, old, entries);

		if (seen == old)
			break;
		old = seen;
	}
}

int zs_hold_entries_max(void)
{
	return atomic_read(&zs_hold_entries);
}

/* Migratetype of pfn's pageblock, MIGRATE_ISOLATE when it is isolated.
 * get_pfnblock_migratetype() is not exported; the bitmap is reachable
 * through the exported mem_section with the layout constants of
 * <linux/pageblock-flags.h> and <linux/mmzone.h>: NR_PAGEBLOCK_BITS bits
 * per pageblock, the migratetype in the low bits. */
int zs_pageblock_mt(unsigned long pfn)
{
	unsigned long *bitmap = section_to_usemap(__pfn_to_section(pfn));
	unsigned long bitidx = ((pfn & (PAGES_PER_SECTION - 1)) >> pageblock_order) *
			       NR_PAGEBLOCK_BITS;
	unsigned long word = READ_ONCE(bitmap[bitidx / BITS_PER_LONG]) >> (bitidx % BITS_PER_LONG);

#ifdef CONFIG_MEMORY_ISOLATION
	if (word & ZS_ISO_MASK)
		return MIGRATE_ISOLATE;
#endif
	return word & ZS_MT_MASK;
}

/* True while some pageblock of the zone is isolated (memory offlining,
 * alloc_contig_range, CMA): isolation moves free blocks to the
 * MIGRATE_ISOLATE lists, and we must never move one back. The count
 * changes under zone->lock, which the caller holds. */
bool zs_zone_isolating(struct zone *zone)
{
#ifdef CONFIG_MEMORY_ISOLATION
	return READ_ONCE(zone->nr_isolate_pageblock) != 0;
#else
	return false;
#endif
}

/*
 * With zone->lock held: the page heading a free block of 2^order pages at
 * pfn in this zone whose pageblock has migratetype mt, or NULL. Such a
 * block is on one of the lists of zone->free_area[order] (PageBuddy and
 * the order in page->private change only under zone->lock). Since 6.10
 * the kernel keeps every block on the list of its pageblock's type;
 * before, a block can sit on another list of its order (the kernel moves
 * free blocks between lists when it steals a pageblock without re-typing
 * it), so zs_snapshot() also checks which list head a walk ends at.
 */
struct page *zs_block(struct zone *zone, unsigned long pfn, unsigned int order, int mt)
{
	struct page *page = pfn_to_online_page(pfn);

	if (!page || page_zone(page) != zone)
		return NULL;
	if (!PageBuddy(page) || page_private(page) != order)
		return NULL;
	if (zs_pageblock_mt(pfn) != mt)
		return NULL;
	return page;
}

