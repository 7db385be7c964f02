/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The quarantine's sysfs files, shrinker, memory notifier, loading and
 * unloading (zonesort_quarantine_sysfs.c).
 */
#ifndef ZONESORT_QUARANTINE_SYSFS_H
#define ZONESORT_QUARANTINE_SYSFS_H

#include <linux/kobject.h>
#include <linux/sysfs.h>

#ifdef ZS_HAVE_QUARANTINE
/* The quarantine's files in each node's sysfs directory. */
extern const struct attribute_group zsq_node_group;

/* Adds the quarantine directory to the module's sysfs directory dir;
 * registers the shrinker and the memory-offline notifier. Before the
 * nodes' directories are made. */
int zsq_init(struct kobject *dir);
/* Gives everything back and waits for the kernel to let go of it; after
 * the last sort, the nodes' directories removed. */
void zsq_exit(void);
#else
/* Kernels where held pages cannot be kept out of isolation's way (see
 * Kbuild): no quarantine, no files. */
static inline int zsq_init(struct kobject *dir)
{
	return 0;
}

static inline void zsq_exit(void)
{
}
#endif

#endif
