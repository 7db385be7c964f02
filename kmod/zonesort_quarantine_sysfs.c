// SPDX-License-Identifier: GPL-2.0
/*
 * The quarantine's top: its sysfs files (zonesort_abi.h), the shrinker
 * that gives held blocks back under memory pressure, the notifier that
 * gives them back before memory goes offline, and loading and unloading
 * (everything given back, the callbacks and the reaper waited for).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/kobject.h>
#include <linux/memory.h>
#include <linux/mm.h>
#include <linux/nodemask.h>
#include <linux/notifier.h>
#include <linux/sched.h>
#include <linux/shrinker.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/swap.h>
#include <linux/sysfs.h>

#include "zonesort_abi.h"
#include "zonesort_dump.h"
#include "zonesort_giveback.h"
#include "zonesort_held.h"
#include "zonesort_hold.h"
#include "zonesort_nodedir.h"
#include "zonesort_quarantine.h"
#include "zonesort_quarantine_sysfs.h"
#include "zonesort_testhooks.h"

/* ------------------------------------------------------------------------
 * Memory pressure and memory going offline.
 */

/* Pages given back count as reclaimed: the allocation that asked gets
 * them, and reclaim sees its progress. */
static void zsq_reclaimed(unsigned long pages)
{
#ifdef ZS_HAVE_ACCOUNT_RECLAIMED
	mm_account_reclaimed_pages(pages);
#else
	if (current->reclaim_state)
		current->reclaim_state->reclaimed_slab += pages;
#endif
}

static unsigned long zsq_count(struct shrinker *s, struct shrink_control *sc)
{
	unsigned long pages = READ_ONCE(zsq_nodes[sc->nid].pages);

	return pages ? pages : SHRINK_EMPTY;
}

static unsigned long zsq_scan(struct shrinker *s, struct shrink_control *sc)
{
	unsigned long pages = zsq_release(sc->nid, sc->nr_to_scan, 0, ULONG_MAX);

	zsq_reclaimed(pages);
	atomic64_add(pages, &zsq_stats.shrunk);
	return pages ? pages : SHRINK_STOP;
}

#ifdef SHRINKER_ALLOCATED
/* 6.7 and later: shrinkers are allocated by the kernel. */
static struct shrinker *zsq_shrinker;

static int zsq_shrinker_add(void)
{
	zsq_shrinker = shrinker_alloc(SHRINKER_NUMA_AWARE, "zonesort-quarantine");
	if (!zsq_shrinker)
		return -ENOMEM;
	zsq_shrinker->count_objects = zsq_count;
	zsq_shrinker->scan_objects = zsq_scan;
	zsq_shrinker->seeks = 0;
	shrinker_register(zsq_shrinker);
	return 0;
}

static void zsq_shrinker_del(void)
{
	shrinker_free(zsq_shrinker);
}
#else
/* seeks 0: the held pages cost nothing to recreate; reclaim takes half of
 * them at every pass. */
static struct shrinker zsq_shrinker = {
	.count_objects = zsq_count,
	.scan_objects = zsq_scan,
	.seeks = 0,
	.flags = SHRINKER_NUMA_AWARE,
};

static int zsq_shrinker_add(void)
{
#ifdef ZS_HAVE_SHRINKER_NAME	/* 6.0-6.6, RHEL 9.3+: conftest-shrinker-name.c */
	return register_shrinker(&zsq_shrinker, "zonesort-quarantine");
#else
	return register_shrinker(&zsq_shrinker);
#endif
}

static void zsq_shrinker_del(void)
{
	unregister_shrinker(&zsq_shrinker);
}
#endif

/*
 * Memory going offline was isolated already: its held blocks go back
 * before the offlining code looks for pages to migrate. Blocks a running
 * sort is taking or picking see the isolation themselves and go back
 * before that sort moves on to another list (zsq_hold_taken,
 * zsq_settle_picked); the offlining code retries until then.
 */
static int zsq_memory_event(struct notifier_block *nb, unsigned long action, void *arg)
{
	struct memory_notify *mn = arg;
	unsigned long pages = 0;
	int nid;

	if (action != MEM_GOING_OFFLINE)
		return NOTIFY_OK;
	for_each_node(nid)
		pages += zsq_release(nid, ULONG_MAX, mn->start_pfn, mn->start_pfn + mn->nr_pages);
	atomic64_add(pages, &zsq_stats.offlined);
	return NOTIFY_OK;
}

static struct notifier_block zsq_memory_nb = {
	.notifier_call = zsq_memory_event,
};

#ifdef ZS_TEST_HOOKS
/* The shrinker's scan over everything node nid holds, from the thread at
 * a test point (test_at point:shrink). */
static void zsq_test_shrink(int nid)
{
	unsigned long pages = zsq_release(nid, ULONG_MAX, 0, ULONG_MAX);

	atomic64_add(pages, &zsq_stats.shrunk);
}
#else
#define zsq_test_shrink NULL
#endif

/* ------------------------------------------------------------------------
 * sysfs (zonesort_abi.h): quarantine/stats and quarantine/release, and in
 * each node's directory what the node holds and quarantine_release.
 */
static ssize_t stats_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	struct zsq_figures f = zsq_last_figures();

	return sysfs_emit(buf,
			  "taken_pages_total=%lld\n"
			  "taken_huge_pages_total=%lld\n"
			  "released_pages_total=%lld\n"
			  "released_by_pressure_pages=%lld\n"
			  "released_by_isolation_pages=%lld\n"
			  "released_by_offline_pages=%lld\n"
			  "not_taken_gone=%lld\n"
			  "not_taken_no_room=%lld\n"
			  "last_node=%d\n"
			  "last_taken_pages=%lu\n"
			  "last_taken_huge_pages=%lu\n"
			  "last_kept_pages=%lu\n"
			  "last_given_back_pages=%lu\n"
			  "last_take_failed=%lu\n"
			  "last_short_pages=%lu\n"
			  "last_settle_taken_pages=%lu\n"
			  "last_stray_pages=%lu\n"
			  "last_allcpu_ops=%lu\n"
			  "last_take_ns=%lld\n",
			  atomic64_read(&zsq_stats.taken), atomic64_read(&zsq_stats.taken_huge),
			  atomic64_read(&zsq_stats.released),
			  atomic64_read(&zsq_stats.shrunk), atomic64_read(&zsq_stats.isolated),
			  atomic64_read(&zsq_stats.offlined), atomic64_read(&zsq_stats.gone),
			  atomic64_read(&zsq_stats.no_room), f.nid, f.taken, f.taken_huge, f.kept, f.given_back,
			  f.failed, f.short_pages + f.room_short, f.settle_taken, f.strays,
			  f.allcpu_ops, f.ns);
}

/* "1" (a newline may follow): the only value a release file takes. */
static bool zsq_one(const char *buf)
{
	return sysfs_streq(buf, "1");
}

static ssize_t release_store(struct kobject *k, struct kobj_attribute *a, const char *buf,
			     size_t len)
{
	int nid;

	if (!zsq_one(buf))
		return -EINVAL;
	for_each_node(nid)
		zsq_release_node(nid);
	return len;
}

/* The parameters, also as files of the quarantine's directory, so that
 * everything user space sets is under ZS_SYSFS_DIR. */
static ssize_t enabled_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%d\n", zsq_get_enabled());
}

static ssize_t enabled_store(struct kobject *k, struct kobj_attribute *a, const char *buf,
			     size_t len)
{
	bool v;

	if (kstrtobool(buf, &v))
		return -EINVAL;
	zsq_set_enabled(v);
	return len;
}

static ssize_t max_permille_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%u\n", zsq_get_max_permille());
}

/* The parameter's own check and message, as modprobe would give them. */
static ssize_t max_permille_store(struct kobject *k, struct kobj_attribute *a, const char *buf,
				  size_t len)
{
	char val[16];

	strscpy(val, buf, sizeof(val));
	return zsq_set_max_permille(val) ?: len;
}

static struct kobj_attribute zsq_attr_stats = __ATTR_RO(stats);
static struct kobj_attribute zsq_attr_release = __ATTR_WO(release);
static struct kobj_attribute zsq_attr_enabled = __ATTR_RW(enabled);
static struct kobj_attribute zsq_attr_max_permille = __ATTR_RW(max_permille);

static struct attribute *zsq_attrs[] = {
	&zsq_attr_stats.attr,
	&zsq_attr_release.attr,
	&zsq_attr_enabled.attr,
	&zsq_attr_max_permille.attr,
	NULL,
};

static const struct attribute_group zsq_group = {
	.attrs = zsq_attrs,
};

static struct kobject *zsq_kobj;

#define ZSQ_NODE_SHOW(name, field)						\
static ssize_t name##_show(struct kobject *k, struct kobj_attribute *a, char *buf)	\
{										\
	return sysfs_emit(buf, "%lu\n", READ_ONCE(zsq_nodes[zs_kobj_nid(k)].field));	\
}										\
static struct kobj_attribute zsq_attr_##name = __ATTR_RO(name)

ZSQ_NODE_SHOW(quarantine_held_pages, pages);
ZSQ_NODE_SHOW(quarantine_held_blocks, nblocks);
ZSQ_NODE_SHOW(quarantine_max_pages, max);
ZSQ_NODE_SHOW(quarantine_peak_pages, peak);

static ssize_t quarantine_release_store(struct kobject *k, struct kobj_attribute *a,
					const char *buf, size_t len)
{
	if (!zsq_one(buf))
		return -EINVAL;
	zsq_release_node(zs_kobj_nid(k));
	return len;
}

static struct kobj_attribute zsq_attr_quarantine_release = __ATTR_WO(quarantine_release);

static struct attribute *zsq_node_attrs[] = {
	&zsq_attr_quarantine_held_pages.attr,
	&zsq_attr_quarantine_held_blocks.attr,
	&zsq_attr_quarantine_max_pages.attr,
	&zsq_attr_quarantine_peak_pages.attr,
	&zsq_attr_quarantine_release.attr,
	NULL,
};

const struct attribute_group zsq_node_group = {
	.attrs = zsq_node_attrs,
};

int zsq_init(struct kobject *dir)
{
	int err;

	err = zsq_held_init();
	if (err)
		return err;
	err = -ENOMEM;
	zsq_kobj = kobject_create_and_add(ZS_QUARANTINE_DIR, dir);
	if (!zsq_kobj)
		goto free;
	err = sysfs_create_group(zsq_kobj, &zsq_group);
	if (err)
		goto kobj;
	err = zsq_shrinker_add();
	if (err)
		goto kobj;
	err = register_memory_notifier(&zsq_memory_nb);
	if (err)
		goto shrinker;
	zs_test_set_shrink(zsq_test_shrink);
#ifdef ZS_TEST_HOOKS
	zsq_held_debugfs(zs_debugfs_dir());
#endif
	return 0;
shrinker:
	zsq_shrinker_del();
kobj:
	kobject_put(zsq_kobj);
free:
	zsq_held_exit();
	return err;
}

void zsq_exit(void)
{
	if (!zsq_nodes)
		return;
	zs_test_set_shrink(NULL);
	/* Removing the files waits for writers still inside them. */
	kobject_put(zsq_kobj);
	unregister_memory_notifier(&zsq_memory_nb);
	zsq_shrinker_del();
	zsq_release_all();
	zsh_drain();
	zsq_held_exit();
}
