/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The slots a job already occupies (zonesort_occupied.c): written by user
 * space into a node's ZS_FILE_OCCUPIED, taken by that node's next sort,
 * which orders the free lists as if those slots held a page each, so that
 * the job's next allocation goes to the slots it does not use yet.
 */
#ifndef ZONESORT_OCCUPIED_H
#define ZONESORT_OCCUPIED_H

#include <linux/kobject.h>
#include <linux/types.h>

/* Per-node state for every possible node; frees it. */
int zs_occupied_init(void);
void zs_occupied_exit(void);

/* The file in node nid's directory k; removes it (before k goes). */
int zs_occupied_add(struct kobject *k);
void zs_occupied_remove(struct kobject *k);

/*
 * For a sort of node nid whose geometry tracks nslots slots: copies a
 * bitmap written whole within ZS_OCCUPIED_TTL_S seconds for exactly that
 * many slots into bits (DIV_ROUND_UP(nslots, 8) bytes) and forgets it.
 * Returns the number of slots set, 0 when there was none to take.
 */
u64 zs_occupied_take(int nid, u64 nslots, u8 *bits);

#endif
