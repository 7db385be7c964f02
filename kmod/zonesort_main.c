// SPDX-License-Identifier: GPL-2.0
/*
 * zonesort: sort the buddy allocator's free lists so that successive page
 * allocations land in distinct slots of a direct-mapped (or few-way)
 * memory-side cache, such as KNL MCDRAM in cache mode, Optane PMem Memory
 * Mode or HBM cache mode.
 *
 * Interface (every file in zonesort_abi.h): Intel's zonesort_module's
 * nodeid (write a node id: sort it now) and sort_interval (sort every
 * node that often), and this module's interface_version, stats, and per
 * node conflicts_half_ppm and conflicts_full_ppm (the share of a fresh
 * allocation of half or all of the cache that would collide, computed from
 * the lists now); the quarantine adds its own (zonesort_quarantine.c).
 * In test builds also debugfs zonesort/freelists (zonesort_dump.c).
 *
 * Cache geometry: the module parameters cache_size (bytes, any multiple
 * of ways x page size) and ways; when cache_size is 0, the node's level-1
 * memory-side cache from the firmware's ACPI HMAT (what the kernel shows
 * in /sys/devices/system/node/nodeN/memory_side_cache/index1). Without
 * a size, or with an HMAT cache that is not direct-mapped and no ways=,
 * a sort is refused with ENODEV: the module never guesses.
 *
 * This file is the module's top: its parameters and sysfs files, the
 * interval timer, loading and unloading. The sort is zonesort_sort.c;
 * what may call what: kmod/README.md.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <generated/utsrelease.h>
#include <linux/atomic.h>
#include <linux/kobject.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/nodemask.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include <linux/utsname.h>
#include <linux/workqueue.h>

#include "zonesort_abi.h"
#include "zonesort_dump.h"
#include "zonesort_geometry.h"
#include "zonesort_internal.h"
#include "zonesort_nodedir.h"
#include "zonesort_occupied.h"
#include "zonesort_quarantine_sysfs.h"
#include "zonesort_sort.h"

#define ZS_VERSION "0.1.0"

static bool zs_ready;		/* module_init done: parameter writes size the tables */

/* ------------------------------------------------------------------------
 * Parameters: cache_size (bytes, 0 = firmware HMAT) and ways (0 = from the
 * firmware). Validated on load and on writes to
 * /sys/module/zonesort/parameters/; a write that needs bigger tables
 * than the module can allocate fails with ENOMEM and changes nothing.
 */
static int zs_param_commit(void *param, unsigned long newv, unsigned long oldv, bool is_ulong)
{
	int err;

	if (is_ulong)
		WRITE_ONCE(*(unsigned long *)param, newv);
	else
		WRITE_ONCE(*(unsigned int *)param, (unsigned int)newv);
	if (!READ_ONCE(zs_ready))
		return 0;
	err = zs_prepare_scratch();
	if (err) {
		if (is_ulong)
			WRITE_ONCE(*(unsigned long *)param, oldv);
		else
			WRITE_ONCE(*(unsigned int *)param, (unsigned int)oldv);
	}
	return err;
}

static int zs_set_cache_size(const char *val, const struct kernel_param *kp)
{
	unsigned long long v;

	if (kstrtoull(val, 0, &v)) {
		pr_warn("cache_size: '%.*s' is not a number of bytes\n", (int)strcspn(val, "\n"), val);
		return -EINVAL;
	}
	if (v && (v % PAGE_SIZE || v > ZS_MAX_CACHE_SIZE)) {
		pr_warn("cache_size: %llu is not 0 (use the firmware's value) or a multiple of the page size (%lu) up to 2^46 bytes\n",
			v, PAGE_SIZE);
		return -EINVAL;
	}
	return zs_param_commit(kp->arg, (unsigned long)v, READ_ONCE(zs_cache_size), true);
}

static int zs_set_ways(const char *val, const struct kernel_param *kp)
{
	unsigned int v;

	if (kstrtouint(val, 0, &v) || v > ZS_MAX_WAYS) {
		pr_warn("ways: '%.*s' is not 0 (from the firmware) or an associativity from 1 to 64\n",
			(int)strcspn(val, "\n"), val);
		return -EINVAL;
	}
	return zs_param_commit(kp->arg, v, READ_ONCE(zs_ways), false);
}

static const struct kernel_param_ops zs_cache_size_ops = {
	.set = zs_set_cache_size,
	.get = param_get_ulong,
};

static const struct kernel_param_ops zs_ways_ops = {
	.set = zs_set_ways,
	.get = param_get_uint,
};

module_param_cb(cache_size, &zs_cache_size_ops, &zs_cache_size, 0644);
MODULE_PARM_DESC(cache_size,
		 "memory-side cache size in bytes, a multiple of ways x page size (0: from the firmware's HMAT)");
module_param_cb(ways, &zs_ways_ops, &zs_ways, 0644);
MODULE_PARM_DESC(ways,
		 "cache associativity, 1 = direct-mapped (0: from the firmware, which must say direct-mapped)");

/* ------------------------------------------------------------------------
 * Sorting, one at a time: a second sort gets EBUSY (zs_sorting); a
 * conflicts read only makes a sort wait for it, never fail.
 */
static atomic_t zs_sorting = ATOMIC_INIT(0);
static DEFINE_MUTEX(zs_interval_mutex);
static unsigned int zs_interval;	/* seconds, 0 = off */
static void zs_interval_work(struct work_struct *w);
static DECLARE_DELAYED_WORK(zs_work, zs_interval_work);

static void zs_interval_work(struct work_struct *w)
{
	unsigned int interval;
	int nid;

	if (!atomic_cmpxchg(&zs_sorting, 0, 1)) {
		for_each_node_state(nid, N_MEMORY) {
			if (zs_sort_stopping())
				break;
			zs_sort(nid, false);
		}
		atomic_set(&zs_sorting, 0);
	}
	interval = READ_ONCE(zs_interval);
	if (interval && !zs_sort_stopping())
		queue_delayed_work(system_unbound_wq, &zs_work, (unsigned long)interval * HZ);
}

/* ------------------------------------------------------------------------
 * sysfs: /sys/kernel/zone_sort_free_pages/
 */
static atomic_t zs_last_written = ATOMIC_INIT(-1);

static ssize_t nodeid_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%d\n", atomic_read(&zs_last_written));
}

static ssize_t nodeid_store(struct kobject *k, struct kobj_attribute *a, const char *buf,
			    size_t len)
{
	int nid, err = 0;

	if (kstrtoint(buf, 10, &nid) || nid < 0 || nid >= nr_node_ids || !node_online(nid))
		return -EINVAL;
	if (READ_ONCE(zs_interval))
		return -EBUSY;
	if (atomic_cmpxchg(&zs_sorting, 0, 1))
		return -EBUSY;
	atomic_set(&zs_last_written, nid);
	if (node_state(nid, N_MEMORY)) {
		err = zs_sort(nid, true);
	}
	atomic_set(&zs_sorting, 0);
	return err ? err : (ssize_t)len;
}

static ssize_t sort_interval_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%u sec\n", READ_ONCE(zs_interval));
}

/* Seconds: "N", "N sec", either with a trailing newline. */
static int zs_parse_interval(const char *buf, unsigned int *v)
{
	char num[16];
	size_t digits = strspn(buf, "0123456789");
	const char *rest = buf + digits;

	if (!digits || digits >= sizeof(num))
		return -EINVAL;
	if (*rest && strcmp(rest, "\n") && strcmp(rest, " sec") && strcmp(rest, " sec\n"))
		return -EINVAL;
	memcpy(num, buf, digits);
	num[digits] = 0;
	if (kstrtouint(num, 10, v) || *v > ZS_MAX_SORT_INTERVAL)
		return -EINVAL;
	return 0;
}

static ssize_t sort_interval_store(struct kobject *k, struct kobj_attribute *a,
				   const char *buf, size_t len)
{
	unsigned int v;

	if (zs_parse_interval(buf, &v))
		return -EINVAL;
	mutex_lock(&zs_interval_mutex);
	WRITE_ONCE(zs_interval, v);
	if (v)
		mod_delayed_work(system_unbound_wq, &zs_work, (unsigned long)v * HZ);
	else
		cancel_delayed_work_sync(&zs_work);
	mutex_unlock(&zs_interval_mutex);
	return len;
}

static ssize_t stats_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	return zs_sort_stats(buf, ZS_VERSION, READ_ONCE(zs_interval));
}

static ssize_t interface_version_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%d\n", ZS_ABI_VERSION);
}

static struct kobj_attribute zs_attr_nodeid = __ATTR(nodeid, 0644, nodeid_show, nodeid_store);
static struct kobj_attribute zs_attr_interval =
	__ATTR(sort_interval, 0644, sort_interval_show, sort_interval_store);
static struct kobj_attribute zs_attr_stats = __ATTR(stats, 0444, stats_show, NULL);
static struct kobj_attribute zs_attr_version =
	__ATTR(interface_version, 0444, interface_version_show, NULL);

static struct attribute *zs_attrs[] = {
	&zs_attr_nodeid.attr,
	&zs_attr_interval.attr,
	&zs_attr_stats.attr,
	&zs_attr_version.attr,
	NULL,
};

static const struct attribute_group zs_group = {
	.attrs = zs_attrs,
};

static struct kobject *zs_kobj;

/* ------------------------------------------------------------------------
 * sysfs: one directory per node with memory when the module loaded.
 */
static struct zs_node_dir **zs_node_dirs;	/* nr_node_ids entries */

static ssize_t conflicts_half_ppm_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	return zs_conflicts(zs_kobj_nid(k), buf, 0);
}

static ssize_t conflicts_full_ppm_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	return zs_conflicts(zs_kobj_nid(k), buf, 1);
}

static struct kobj_attribute zs_attr_conflicts_half = __ATTR_RO_MODE(conflicts_half_ppm, 0400);
static struct kobj_attribute zs_attr_conflicts_full = __ATTR_RO_MODE(conflicts_full_ppm, 0400);

static struct attribute *zs_node_attrs[] = {
	&zs_attr_conflicts_half.attr,
	&zs_attr_conflicts_full.attr,
	NULL,
};

static const struct attribute_group zs_node_group = {
	.attrs = zs_node_attrs,
};

static const struct attribute_group *zs_node_groups[] = {
	&zs_node_group,
#ifdef ZS_HAVE_QUARANTINE
	&zsq_node_group,
#endif
	NULL,
};

static void zs_node_release(struct kobject *k)
{
	kfree(container_of(k, struct zs_node_dir, kobj));
}

static const struct kobj_type zs_node_ktype = {
	.release = zs_node_release,
	.sysfs_ops = &kobj_sysfs_ops,
	.default_groups = zs_node_groups,
};

static void zs_nodes_remove(void)
{
	int nid;

	if (!zs_node_dirs)
		return;
	for (nid = 0; nid < nr_node_ids; nid++)
		if (zs_node_dirs[nid]) {
			zs_occupied_remove(&zs_node_dirs[nid]->kobj);
			kobject_put(&zs_node_dirs[nid]->kobj);
		}
	kfree(zs_node_dirs);
	zs_node_dirs = NULL;
}

static int zs_nodes_add(void)
{
	int nid, err;

	zs_node_dirs = kcalloc(nr_node_ids, sizeof(*zs_node_dirs), GFP_KERNEL);
	if (!zs_node_dirs)
		return -ENOMEM;
	for_each_node_state(nid, N_MEMORY) {
		struct zs_node_dir *d = kzalloc(sizeof(*d), GFP_KERNEL);

		if (!d)
			return -ENOMEM;
		d->nid = nid;
		err = kobject_init_and_add(&d->kobj, &zs_node_ktype, zs_kobj, ZS_NODE_DIR_FMT, nid);
		if (!err)
			err = zs_occupied_add(&d->kobj);
		if (err) {
			kobject_put(&d->kobj);
			return err;
		}
		zs_node_dirs[nid] = d;
	}
	return 0;
}

static int __init zs_init(void)
{
	u64 nslots;
	size_t nblocks;
	int err;

	/*
	 * The module reads allocator internals (struct zone, the free lists,
	 * the pageblock bitmap) that symbol checksums do not cover: a build
	 * for another kernel that a packaging tool links in because the
	 * checksums match (RHEL's weak-modules) must not run.
	 */
	if (strcmp(init_utsname()->release, UTS_RELEASE)) {
		pr_err("built for Linux %s, but this kernel is %s: the module reads page allocator internals that symbol checksums do not cover; build it for this kernel (DKMS does)\n",
		       UTS_RELEASE, init_utsname()->release);
		return -ENOEXEC;
	}

	err = zs_geometry_init();
	if (err)
		return err;
	zs_sort_init();
	zs_kobj = kobject_create_and_add("zone_sort_free_pages", kernel_kobj);
	if (!zs_kobj) {
		err = -ENOMEM;
		goto fail;
	}
	zs_dump_init();
	err = zs_occupied_init();
	if (err)
		goto kobj;
	err = zsq_init(zs_kobj);
	if (err)
		goto occupied;
	err = zs_nodes_add();
	if (!err)
		err = sysfs_create_group(zs_kobj, &zs_group);
	if (err)
		goto nodes;
	WRITE_ONCE(zs_ready, true);
	zs_sort_tables(&nslots, &nblocks);
	pr_info("version %s (interface %d) loaded: cache_size=%lu ways=%u (0: from the firmware), %u list entries per lock hold, tables for %llu slots and %zu blocks\n",
		ZS_VERSION, ZS_ABI_VERSION, zs_cache_size, zs_ways, ZS_BATCH, nslots, nblocks);
	return 0;
nodes:
	zs_nodes_remove();
	zsq_exit();
occupied:
	zs_occupied_exit();
kobj:
	zs_dump_exit();
	kobject_put(zs_kobj);
fail:
	zs_sort_exit();
	zs_geometry_exit();
	return err;
}

static void __exit zs_exit(void)
{
	zs_sort_stop();
	zs_dump_exit();
	/* Removing the files waits for writers still inside them. */
	sysfs_remove_group(zs_kobj, &zs_group);
	zs_nodes_remove();
	WRITE_ONCE(zs_interval, 0);
	cancel_delayed_work_sync(&zs_work);
	zsq_exit();
	zs_occupied_exit();
	kobject_put(zs_kobj);
	zs_sort_exit();
	zs_geometry_exit();
}

module_init(zs_init);
module_exit(zs_exit);

MODULE_LICENSE("GPL");
MODULE_VERSION(ZS_VERSION);
MODULE_DESCRIPTION("Sort free page lists for direct-mapped memory-side caches (Intel zonesort interface)");
MODULE_AUTHOR("zonesort for Slurm developers");
