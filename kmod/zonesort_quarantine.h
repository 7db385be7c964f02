/* SPDX-License-Identifier: GPL-2.0 */
/*
 * zonesort quarantine, the kernel side (zonesort_quarantine.c): takes the
 * free blocks that would make the next allocation collide below what any
 * order of the lists allows, holds them, gives them back. Called by
 * zonesort_main.c with its sort mutex held, except init and exit.
 */
#ifndef ZONESORT_QUARANTINE_H
#define ZONESORT_QUARANTINE_H

#include <linux/kobject.h>
#include <linux/mmzone.h>

#include "zonesort_policy.h"

#ifdef ZS_HAVE_QUARANTINE
/* A sort of node nid with geometry g starts: gives back what the node
 * holds, so that the sort picks afresh. */
void zsq_sort_begin(int nid, const struct zsp_geom *g);

/*
 * One free list of the sort, snapshot in blocks[0..n) (first pfns, hand-out
 * order), before the sort orders it; load: the sort's per-slot load so far.
 * Takes the blocks the quarantine policy picks and returns how many remain,
 * at the front of blocks. tmp: n entries of scratch.
 */
size_t zsq_filter(struct zone *zone, unsigned int order, int mt, u32 *load, u64 *blocks,
		  size_t n, u64 *tmp);

/* Adds the "quarantine" file to the module's sysfs directory; registers the
 * shrinker and the memory-offline notifier. */
int zsq_init(struct kobject *dir);
/* Gives everything back; after the last sort. */
void zsq_exit(void);
#else
/* Kernels where held pages cannot be marked movable (see Kbuild): no
 * quarantine, no file; the sort alone. */
static inline void zsq_sort_begin(int nid, const struct zsp_geom *g)
{
}

static inline size_t zsq_filter(struct zone *zone, unsigned int order, int mt, u32 *load,
				u64 *blocks, size_t n, u64 *tmp)
{
	return n;
}

static inline int zsq_init(struct kobject *dir)
{
	return 0;
}

static inline void zsq_exit(void)
{
}
#endif

#endif
