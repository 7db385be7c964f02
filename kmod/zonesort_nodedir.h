/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A node's sysfs directory (ZS_NODE_DIR_FMT), made by zonesort_main.c;
 * the files in it find their node here.
 */
#ifndef ZONESORT_NODEDIR_H
#define ZONESORT_NODEDIR_H

#include <linux/container_of.h>
#include <linux/kobject.h>

struct zs_node_dir {
	struct kobject kobj;
	int nid;
};

/* The node of a node's sysfs directory. */
static inline int zs_kobj_nid(struct kobject *k)
{
	return container_of(k, struct zs_node_dir, kobj)->nid;
}

#endif
