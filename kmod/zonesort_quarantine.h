/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The quarantine's part of a sort (zonesort_quarantine.c): takes the
 * free blocks that would make the next allocation collide below what any
 * order of the lists allows, holds them (zonesort_hold.c), gives them
 * back. The sort calls it with zs_mutex held, in this order:
 * zsq_sort_begin, zsq_filter for each list, zsq_sort_end, and when
 * zsq_settle says so a second walk with zsq_filter, then zsq_sort_done.
 */
#ifndef ZONESORT_QUARANTINE_H
#define ZONESORT_QUARANTINE_H

#include <linux/list.h>
#include <linux/mmzone.h>

#include "zonesort_policy.h"
#include "zonesort_quarantine_policy.h"
#include "zonesort_take.h"

/* What one sort did, in pages unless said; the quarantine file shows the
 * last sort's. */
struct zsq_figures {
	int nid;
	unsigned long taken, kept, given_back;
	unsigned long taken_huge;	/* of taken: blocks of pageblock order and up */
	unsigned long failed;		/* blocks reserved but not taken */
	unsigned long settle_taken;	/* of taken: by the walk after a give-back */
	unsigned long room_short;	/* not taken for lack of room */
	unsigned long short_pages;	/* colliding pages left beyond the maximum */
	unsigned long strays;		/* handed out instead of blocks asked for */
	unsigned long allcpu_ops;	/* drains through alloc_contig_range() */
	s64 ns;
};

/* One sort's quarantine state: the sort's, under zs_mutex. */
struct zsq_sort {
	bool on, huge, settling;
	int nid, zi;		/* zi, order: the list being picked */
	unsigned int order;
	struct zone *zone;
	struct zsq_pick pick;
	unsigned long want;	/* pages of the protected allocation */
	struct zs_strays strays;
	struct zsq_figures f;
};

/* One free list of the sort: blocks[0..n) its snapshot (first pfns,
 * hand-out order) before the sort orders it; load: the sort's per-slot
 * load so far; tload: from the huge-page order on, the huge-page
 * sequence's, else NULL. blocks and tmp: cap entries. */
struct zsq_list {
	struct zone *zone;
	unsigned int order;
	int mt;
	u32 *load, *tload;
	const u32 *seed;	/* a running job's slots (zsp_state.seed), or NULL */
	u64 *blocks, *tmp;
	size_t n, cap;
};

#ifdef ZS_HAVE_QUARANTINE
void zsq_sort_begin(struct zsq_sort *qs, int nid, const struct zsp_geom *g);

/* Picks among l's blocks and those of its list held from before, takes
 * the free ones the policy picks, keeps the held ones that still collide,
 * gives the other held ones back, and returns how many blocks remain for
 * the sort to order, at the front of l->blocks. */
size_t zsq_filter(struct zsq_sort *qs, const struct zsq_list *l);

void zsq_sort_end(struct zsq_sort *qs);

/* After zsq_sort_end: true when the sort gave blocks back. The per-CPU
 * lists are then drained into the free lists for one more walk, in which
 * the quarantine keeps what it holds and takes colliding free blocks with
 * what is left below its maximum (nothing is given back). */
bool zsq_settle(struct zsq_sort *qs);

/* The sort is over: its figures become the last sort's (quarantine/stats). */
void zsq_sort_done(struct zsq_sort *qs);

/* The parameters quarantine (on or off) and quarantine_max_permille,
 * read and written; zsq_set_max_permille checks the value as modprobe
 * does (-EINVAL, with the kernel log saying what is accepted). */
bool zsq_get_enabled(void);
void zsq_set_enabled(bool on);
unsigned int zsq_get_max_permille(void);
int zsq_set_max_permille(const char *val);

/* The last sort's figures (quarantine/stats). */
struct zsq_figures zsq_last_figures(void);

#else
/* Kernels where held pages cannot be kept out of isolation's way (see
 * Kbuild): no quarantine, no file; the sort alone. */
static inline void zsq_sort_begin(struct zsq_sort *qs, int nid, const struct zsp_geom *g)
{
}

static inline size_t zsq_filter(struct zsq_sort *qs, const struct zsq_list *l)
{
	return l->n;
}

static inline void zsq_sort_end(struct zsq_sort *qs)
{
}

static inline bool zsq_settle(struct zsq_sort *qs)
{
	return false;
}

static inline void zsq_sort_done(struct zsq_sort *qs)
{
}

#endif

#endif
