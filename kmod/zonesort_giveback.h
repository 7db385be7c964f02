/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Giving held blocks back (zonesort_giveback.c).
 */
#ifndef ZONESORT_GIVEBACK_H
#define ZONESORT_GIVEBACK_H

#include <linux/list.h>

/* Gives back the blocks on list (by link), which the caller took off
 * their lists and uncounted; returns their pages. */
unsigned long zsq_give_back(int nid, struct list_head *list);

/* Gives back up to max_pages pages (whole blocks, at least one block) of
 * node nid held in [start, end), the lists handed out last first: lower
 * zones, then higher orders. Blocks a running sort is picking or taking
 * are left to it. Returns the pages given back. */
unsigned long zsq_release(int nid, unsigned long max_pages, unsigned long start,
			  unsigned long end);

/* Everything every node holds; and node nid's, its peak reset. */
unsigned long zsq_release_all(void);
void zsq_release_node(int nid);

#endif
