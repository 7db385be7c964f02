// SPDX-License-Identifier: GPL-2.0
/*
 * debugfs zonesort/freelists (root only): every free list and per-CPU
 * page list of every node, in hand-out order, as the kernel holds them at
 * the moment of open(). Tests compute what an allocation could at best
 * get from it, independently of the module's policy; admins can see what
 * a sort did. One line per list:
 *
 *   F node zone migratetype order count pfn...      free lists
 *   P node zone cpu migratetype order count pfn...  per-CPU lists
 *
 * zone by name (as in /proc/zoneinfo), numbers in decimal, pfns in hex, head of the list first; a list that
 * grew past the buffer while it was read ends in " truncated". The first
 * line names the orders: "orders N pageblock_order N thp_order N".
 *
 * Each list is copied under its own lock in one hold (interrupts off for
 * as many entries as the list has): a diagnosis tool, not for the
 * production path; the sort itself never holds a lock that long.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpumask.h>
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/mmzone.h>
#include <linux/nodemask.h>
#include <linux/percpu.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include "zonesort_compat.h"
#include "zonesort_dump.h"

struct zs_dump {
	char *text;
	size_t len, size;
	unsigned long *pfns;
	size_t npfns;
};

static __printf(2, 3) void zs_dump_printf(struct zs_dump *d, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (d->len < d->size)
		d->len += vscnprintf(d->text + d->len, d->size - d->len, fmt, ap);
	va_end(ap);
}

/* Copies one list under lock into d->pfns; prints it after the lock is
 * dropped. */
static void zs_dump_list(struct zs_dump *d, spinlock_t *lock, struct list_head *list,
			 const char *prefix)
{
	unsigned long flags;
	struct page *p;
	size_t n = 0, i;
	bool truncated = false;

	spin_lock_irqsave(lock, flags);
	list_for_each_entry(p, list, ZS_LINK) {
		if (n == d->npfns) {
			truncated = true;
			break;
		}
		d->pfns[n++] = page_to_pfn(p);
	}
	spin_unlock_irqrestore(lock, flags);
	zs_dump_printf(d, "%s %zu", prefix, n);
	for (i = 0; i < n; i++)
		zs_dump_printf(d, " %lx", d->pfns[i]);
	zs_dump_printf(d, "%s\n", truncated ? " truncated" : "");
}

static void zs_dump_pcp(struct zs_dump *d, int nid, struct zone *zone)
{
#ifdef ZS_HAVE_PCP_LOCK
	int cpu, mt;
	char prefix[64];

	if (!zone->per_cpu_pageset)
		return;
	for_each_online_cpu(cpu) {
		struct per_cpu_pages *pcp = per_cpu_ptr(zone->per_cpu_pageset, cpu);

		for (mt = 0; mt < MIGRATE_PCPTYPES; mt++) {
			snprintf(prefix, sizeof(prefix), "P %d %s %d %d 0", nid, zone->name, cpu, mt);
			zs_dump_list(d, &pcp->lock, &pcp->lists[mt], prefix);
		}
#ifdef ZS_PCP_THP_INDEX
		snprintf(prefix, sizeof(prefix), "P %d %s %d %d %d", nid, zone->name, cpu,
			 MIGRATE_MOVABLE, ZS_THP_ORDER);
		zs_dump_list(d, &pcp->lock, &pcp->lists[ZS_PCP_THP_INDEX(MIGRATE_MOVABLE)], prefix);
#endif
	}
#endif
}

/* Free blocks and per-CPU pages now, with room for some growth. */
static size_t zs_dump_entries(void)
{
	size_t n = 0;
	int nid, zi;
	unsigned int order;

	for_each_node_state(nid, N_MEMORY) {
		for (zi = 0; zi < MAX_NR_ZONES; zi++) {
			struct zone *zone = &NODE_DATA(nid)->node_zones[zi];

			if (!populated_zone(zone))
				continue;
			for (order = 0; order < ZS_NR_ORDERS; order++)
				n += READ_ONCE(zone->free_area[order].nr_free);
		}
	}
	return n;
}

static int zs_dump_open(struct inode *inode, struct file *file)
{
	struct zs_dump *d;
	int nid, zi, mt;
	unsigned int order;
	char prefix[64];
	size_t entries = zs_dump_entries();

	d = kzalloc(sizeof(*d), GFP_KERNEL);
	if (!d)
		return -ENOMEM;
	/* per-CPU lists: at most their high mark, which the free count
	 * plus a margin covers in practice; a longer list says truncated */
	d->npfns = entries + 65536;
	d->size = (entries + 65536) * 17 + 4096 * num_online_cpus() + 65536;
	/*
	 * vmalloc, not kvmalloc: a megabyte from kmalloc is a costly order,
	 * whose first try compacts memory and drains this CPU's per-CPU
	 * lists, changing the lists about to be dumped.
	 */
	d->pfns = vmalloc(array_size(d->npfns, sizeof(*d->pfns)));
	d->text = vmalloc(d->size);
	if (!d->pfns || !d->text) {
		vfree(d->pfns);
		vfree(d->text);
		kfree(d);
		return -ENOMEM;
	}
	zs_dump_printf(d, "orders %u pageblock_order %u thp_order %u\n", (unsigned int)ZS_NR_ORDERS,
		       (unsigned int)pageblock_order, (unsigned int)ZS_THP_ORDER);
	for_each_node_state(nid, N_MEMORY) {
		for (zi = 0; zi < MAX_NR_ZONES; zi++) {
			struct zone *zone = &NODE_DATA(nid)->node_zones[zi];

			if (!populated_zone(zone))
				continue;
			zs_dump_pcp(d, nid, zone);
			for (mt = 0; mt < MIGRATE_TYPES; mt++) {
				for (order = 0; order < ZS_NR_ORDERS; order++) {
					snprintf(prefix, sizeof(prefix), "F %d %s %d %u", nid, zone->name,
						 mt, order);
					zs_dump_list(d, &zone->lock, &zone->free_area[order].free_list[mt],
						     prefix);
				}
				cond_resched();
			}
		}
	}
	/* d->pfns is freed with the rest at release: freeing it now would
	 * put its pages on the lists just dumped while the reader still
	 * compares them with what the kernel shows. */
	if (d->len >= d->size - 1) {
		vfree(d->pfns);
		vfree(d->text);
		kfree(d);
		return -EOVERFLOW;
	}
	file->private_data = d;
	return 0;
}

static ssize_t zs_dump_read(struct file *file, char __user *buf, size_t count, loff_t *ppos)
{
	struct zs_dump *d = file->private_data;

	return simple_read_from_buffer(buf, count, ppos, d->text, d->len);
}

static int zs_dump_release(struct inode *inode, struct file *file)
{
	struct zs_dump *d = file->private_data;

	vfree(d->pfns);
	vfree(d->text);
	kfree(d);
	return 0;
}

static const struct file_operations zs_dump_fops = {
	.owner = THIS_MODULE,
	.open = zs_dump_open,
	.read = zs_dump_read,
	.release = zs_dump_release,
	.llseek = default_llseek,
};

static struct dentry *zs_dump_dir;

struct dentry *zs_debugfs_dir(void)
{
	return zs_dump_dir;
}

void zs_dump_init(void)
{
	zs_dump_dir = debugfs_create_dir("zonesort", NULL);
	debugfs_create_file("freelists", 0400, zs_dump_dir, NULL, &zs_dump_fops);
}

void zs_dump_exit(void)
{
	debugfs_remove_recursive(zs_dump_dir);
}
