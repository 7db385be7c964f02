/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The sort and the conflicts estimate (zonesort_sort.c), one at a time.
 */
#ifndef ZONESORT_SORT_H
#define ZONESORT_SORT_H

#include <linux/types.h>

/* Sets up the tables for the geometry known at load; frees them. */
void zs_sort_init(void);
void zs_sort_exit(void);

/* Grows the tables to the geometry now: 0, or -ENOMEM (-EINTR when the
 * writer was killed while it waited for a sort). */
int zs_prepare_scratch(void);

/* The tables' sizes: slots and blocks. */
void zs_sort_tables(u64 *nslots, size_t *nblocks);

/* Sorts node nid: 0 or an error (zonesort_abi.h). Waits for a running
 * sort or conflicts read; killable: a fatal signal ends the wait
 * (-EINTR). */
int zs_sort(int nid, bool killable);

/* Writes the estimated share (ppm) of colliding pages in a fresh
 * allocation of half (which 0) or all (1) of node nid's cache, from its
 * lists now, as a sysfs value into buf; or an error. */
ssize_t zs_conflicts(int nid, char *buf, int which);

/* The stats file (key=value lines) into buf. */
ssize_t zs_sort_stats(char *buf, const char *version, unsigned int interval);

/* Unloading: running sorts stop at their next list; zs_sort_stopping()
 * says so. */
void zs_sort_stop(void);
bool zs_sort_stopping(void);

#endif
