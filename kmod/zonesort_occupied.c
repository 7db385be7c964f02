// SPDX-License-Identifier: GPL-2.0
/*
 * The slots a job already occupies: a bitmap user space writes into a
 * node's ZS_FILE_OCCUPIED (zonesort_abi.h) right before it sorts the node
 * for a running job, and the sort takes (zonesort_sort.c). A sort counts
 * only free pages in its per-slot load; without this it may hand a job's
 * next allocation the very slots the job's own pages already fill.
 *
 * Locking: one mutex per node covers its bitmap. A write holds it for one
 * copy of at most a page; the sort takes it for one copy of the bitmap,
 * under zs_mutex. Writers never wait for a sort.
 *
 * Memory: a bitmap lives from the write that starts it to the sort that
 * takes it (or the next start), one per node, DIV_ROUND_UP(slots, 8)
 * bytes (512 KiB for 2^22 slots), charged to the writer's memory cgroup.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/build_bug.h>
#include <linux/jiffies.h>
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/nodemask.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/sysfs.h>

#include "zonesort_abi.h"
#include "zonesort_geometry.h"
#include "zonesort_nodedir.h"
#include "zonesort_occupied.h"
#include "zonesort_policy.h"

struct zs_occupied_node {
	struct mutex lock;
	u8 *bits;		/* NULL: nothing written since the last take */
	size_t size;		/* bytes of the bitmap: DIV_ROUND_UP(nslots, 8) */
	size_t filled;		/* bytes written so far, from offset 0 on */
	u64 nslots;		/* slots of the geometry it was written for */
	unsigned long started;	/* jiffies of the write at offset 0 */
};

static struct zs_occupied_node *zs_occ;	/* nr_node_ids entries */

static void zs_occupied_forget(struct zs_occupied_node *o)
{
	kvfree(o->bits);
	o->bits = NULL;
	o->size = o->filled = 0;
}

/*
 * A write at offset 0 starts a new bitmap for the node's geometry now;
 * each later one must go on where the last ended (write(2) on a binary
 * sysfs file arrives a page at a time, at increasing offsets). Bits past
 * the last slot must be clear. Caller holds o->lock.
 */
static ssize_t zs_occupied_store(struct zs_occupied_node *o, int nid, const char *buf,
				 loff_t off, size_t count)
{
	struct zsp_geom g;
	u64 size;
	size_t bytes;
	int err;

	err = zs_geometry(nid, &size, &g, true);
	if (err)
		return err;
	bytes = DIV_ROUND_UP(g.nslots, 8);
	/* A refused write ends the bitmap it was part of: none half right
	 * is ever taken. */
	if (off < 0 || (u64)off > bytes || count > bytes - (size_t)off) {
		zs_occupied_forget(o);
		return -EINVAL;
	}
	if (off == 0) {
		zs_occupied_forget(o);
		o->bits = kvmalloc(bytes, GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
		if (!o->bits)
			return -ENOMEM;
		o->size = bytes;
		o->nslots = g.nslots;
		o->started = jiffies;
	} else if (!o->bits || (size_t)off != o->filled || o->nslots != g.nslots) {
		zs_occupied_forget(o);
		return -EINVAL;
	}
	memcpy(o->bits + off, buf, count);
	o->filled = (size_t)off + count;
	if (o->filled < o->size)
		return count;
	if ((g.nslots & 7) && (o->bits[o->size - 1] >> (g.nslots & 7))) {
		zs_occupied_forget(o);
		return -EINVAL;
	}
	return count;
}

#ifdef ZS_HAVE_CONST_BIN_ATTR
#define ZS_BIN_ATTR const struct bin_attribute
#else
#define ZS_BIN_ATTR struct bin_attribute
#endif

static ssize_t zs_occupied_write(struct file *f, struct kobject *k, ZS_BIN_ATTR *a, char *buf,
				 loff_t off, size_t count)
{
	int nid = zs_kobj_nid(k);
	struct zs_occupied_node *o = &zs_occ[nid];
	ssize_t ret;

	mutex_lock(&o->lock);
	ret = zs_occupied_store(o, nid, buf, off, count);
	mutex_unlock(&o->lock);
	return ret;
}

static const struct bin_attribute zs_occupied_attr = {
	.attr = { .name = ZS_FILE_OCCUPIED, .mode = 0200 },
	.write = zs_occupied_write,
};

u64 zs_occupied_take(int nid, u64 nslots, u8 *bits)
{
	struct zs_occupied_node *o = &zs_occ[nid];
	bool fresh, whole;
	u64 set = 0;
	u8 *old = NULL;

	mutex_lock(&o->lock);
	fresh = o->bits && time_before_eq(jiffies, o->started + ZS_OCCUPIED_TTL_S * HZ);
	whole = o->bits && o->filled == o->size;
	if (fresh && whole && o->nslots == nslots) {
		memcpy(bits, o->bits, o->size);
		set = memweight(bits, o->size);
	}
	/* Taken, stale, or for another geometry: forgotten. One still being
	 * written is left to its writer, for the sort after this one. */
	if (whole || !fresh) {
		old = o->bits;
		o->bits = NULL;
		o->size = o->filled = 0;
	}
	mutex_unlock(&o->lock);
	kvfree(old);
	return set;
}

int zs_occupied_add(struct kobject *k)
{
	return sysfs_create_bin_file(k, &zs_occupied_attr);
}

void zs_occupied_remove(struct kobject *k)
{
	sysfs_remove_bin_file(k, &zs_occupied_attr);
}

int zs_occupied_init(void)
{
	int nid;

	/* User space builds the bitmap for the slots the policy tracks. */
	BUILD_BUG_ON(ZS_OCCUPIED_MAX_SLOTS != ZSP_MAX_SLOTS);
	zs_occ = kcalloc(nr_node_ids, sizeof(*zs_occ), GFP_KERNEL);
	if (!zs_occ)
		return -ENOMEM;
	for (nid = 0; nid < nr_node_ids; nid++)
		mutex_init(&zs_occ[nid].lock);
	return 0;
}

/* After every node's file is gone: no writer is left. */
void zs_occupied_exit(void)
{
	int nid;

	if (!zs_occ)
		return;
	for (nid = 0; nid < nr_node_ids; nid++)
		zs_occupied_forget(&zs_occ[nid]);
	kfree(zs_occ);
	zs_occ = NULL;
}
