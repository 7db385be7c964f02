/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Taking given free blocks out of a zone's movable free lists
 * (zonesort_take.c), for the quarantine.
 */
#ifndef ZONESORT_TAKE_H
#define ZONESORT_TAKE_H

#include <linux/list.h>
#include <linux/mm_types.h>
#include <linux/mmzone.h>

/* Most blocks one zs_take_blocks() call moves and allocates. */
#define ZS_TAKE_BATCH 64U

/*
 * Blocks the page allocator handed out instead of the ones asked for:
 * held aside until zs_strays_put(), so that the next allocation of the
 * same run does not get them again. pages: their total.
 */
struct zs_strays {
	struct list_head list;	/* head pages by lru, the order in page_private */
	unsigned long pages;
	unsigned long budget;	/* pages that may still be set aside */
};

void zs_strays_init(struct zs_strays *st, unsigned long budget);
/* Frees every stray (back to the allocator) and empties st. */
void zs_strays_put(struct zs_strays *st);

/*
 * Allocates the free blocks of 2^order pages whose first pfns are
 * pfns[0..n) (n <= ZS_TAKE_BATCH, all in zone, movable pageblocks), each as
 * one non-compound allocation: got[i] is its head page, or NULL when the
 * block is not taken (gone from the lists, or the allocator handed out
 * others first and st's budget ran out). Returns how many were taken.
 * Sleeps (clearing pages); never reclaims or waits for memory.
 */
size_t zs_take_blocks(struct zone *zone, unsigned int order, const u64 *pfns, size_t n,
		      struct page **got, struct zs_strays *st);

#endif
