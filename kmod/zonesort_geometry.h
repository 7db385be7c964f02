/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The cache geometry of a node (zonesort_geometry.c): parameters, else
 * the firmware's HMAT.
 */
#ifndef ZONESORT_GEOMETRY_H
#define ZONESORT_GEOMETRY_H

#include <linux/types.h>

struct zsp_geom;

/* The parameters cache_size (bytes, 0 = the firmware's) and ways (0 =
 * the firmware's, direct-mapped), as last written. */
extern unsigned long zs_cache_size;
extern unsigned int zs_ways;

/* Reads the firmware's memory-side caches (module load). */
int zs_geometry_init(void);
void zs_geometry_exit(void);

/*
 * The geometry a sort of node nid uses: 0, -ENODEV (no size, or an
 * indexing the firmware does not spell out and no ways= to go by) or
 * -EDOM (no whole number of page-sized slots), with dmesg saying why
 * unless quiet.
 */
int zs_geometry(int nid, u64 *size, struct zsp_geom *geom, bool quiet);

#endif
