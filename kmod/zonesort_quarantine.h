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
/* A sort of node nid with geometry g starts: what the node holds waits
 * for its list's turn in zsq_filter (all of it goes back when the
 * quarantine is off). */
void zsq_sort_begin(int nid, const struct zsp_geom *g);

/*
 * One free list of the sort, snapshot in blocks[0..n) (first pfns, hand-out
 * order), before the sort orders it; load: the sort's per-slot load so far;
 * tload: from the huge-page order on, the huge-page sequence's, else NULL.
 * Picks among those and the blocks of this list held from before, takes
 * and keeps the ones the quarantine policy picks, gives the other held
 * ones back, and returns how many blocks remain for the sort to order, at
 * the front of blocks (blocks given back among them). blocks and tmp: cap
 * entries.
 */
size_t zsq_filter(struct zone *zone, unsigned int order, int mt, u32 *load, u32 *tload,
		  u64 *blocks, size_t n, size_t cap, u64 *tmp);

/* The sort of node nid ended: held blocks of lists it did not pick go
 * back. */
void zsq_sort_end(int nid);

/* After zsq_sort_end: true when the sort gave blocks back. The per-CPU
 * lists are then drained into the free lists for one more walk, in which
 * the quarantine keeps what it holds and takes colliding free blocks with
 * what is left of its limit (nothing is given back). */
bool zsq_settle(int nid);

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
				u32 *tload, u64 *blocks, size_t n, size_t cap, u64 *tmp)
{
	return n;
}

static inline void zsq_sort_end(int nid)
{
}

static inline bool zsq_settle(int nid)
{
	return false;
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
