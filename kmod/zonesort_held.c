// SPDX-License-Identifier: GPL-2.0
/*
 * The quarantine's ledger: see zonesort_held.h.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/debugfs.h>
#include <linux/gfp.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/vmstat.h>

#include "zonesort_held.h"
#include "zonesort_testhooks.h"

struct zsq_node *zsq_nodes;
struct zsq_counters zsq_stats;
static struct kmem_cache *zsq_cache;

void zsq_account(int nid, long pages)
{
	mod_node_page_state(NODE_DATA(nid), NR_KERNEL_MISC_RECLAIMABLE, pages);
}

struct zsq_node *zsq_node_of(const struct zsq_block *b)
{
	return &zsq_nodes[pfn_to_nid(b->pfn)];
}

bool zsq_claim(struct zsq_block *b, struct zsq_claim *c)
{
	struct zsq_node *qn = zsq_node_of(b);
	bool give = true;

	spin_lock(&qn->lock);
	c->pfn = b->pfn;
	c->order = b->order;
	c->owner = false;
	switch (b->state) {
	case ZSQ_HELD:
		zsq_unlist(qn, b);
		c->owner = true;
		break;
	case ZSQ_PICKING:
		/* The sort frees the descriptor: b may be gone as soon as the
		 * lock is dropped. */
		zsq_uncount(qn, b);
		b->state = ZSQ_GONE;
		break;
	case ZSQ_INFLIGHT:
		b->release_wanted = true;
		give = false;
		break;
	default:	/* GONE, RELEASING: another path gives it back */
		give = false;
	}
	spin_unlock(&qn->lock);
	if (give) {
		zs_test_at(ZS_TP_CLAIMED, c->pfn);
		zsq_account(pfn_to_nid(c->pfn), -(1L << c->order));
		atomic64_add(1UL << c->order, &zsq_stats.isolated);
		atomic64_add(1UL << c->order, &zsq_stats.released);
	}
	return give;
}

struct zsq_block *zsq_block_new(void)
{
	return kmem_cache_alloc(zsq_cache, GFP_KERNEL | __GFP_NORETRY | __GFP_NOWARN);
}

void zsq_block_destroy(struct zsq_block *b)
{
	kmem_cache_free(zsq_cache, b);
}

int zsq_held_init(void)
{
	int nid, zi, order;

	zsq_cache = kmem_cache_create("zonesort_held_block", sizeof(struct zsq_block), 0, 0, NULL);
	if (!zsq_cache)
		return -ENOMEM;
	zsq_nodes = kcalloc(nr_node_ids, sizeof(*zsq_nodes), GFP_KERNEL);
	if (!zsq_nodes) {
		kmem_cache_destroy(zsq_cache);
		return -ENOMEM;
	}
	for (nid = 0; nid < nr_node_ids; nid++) {
		struct zsq_node *qn = &zsq_nodes[nid];

		spin_lock_init(&qn->lock);
		INIT_LIST_HEAD(&qn->picking);
		for (zi = 0; zi < MAX_NR_ZONES; zi++)
			for (order = 0; order < ZS_NR_ORDERS; order++)
				INIT_LIST_HEAD(&qn->held[zi][order]);
	}
	return 0;
}

#ifdef ZS_TEST_HOOKS
/* debugfs zonesort/held: one line per held block of every node. */
static int zsq_held_show(struct seq_file *m, void *v)
{
	int nid, zi, order;

	for_each_node(nid) {
		struct zsq_node *qn = &zsq_nodes[nid];
		struct zsq_block *b;

		spin_lock(&qn->lock);
		for (zi = 0; zi < MAX_NR_ZONES; zi++)
			for (order = 0; order < ZS_NR_ORDERS; order++)
				list_for_each_entry(b, &qn->held[zi][order], link)
					seq_printf(m, "node=%d zone=%d order=%u pfn=%#lx\n", nid, zi,
						   b->order, b->pfn);
		spin_unlock(&qn->lock);
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(zsq_held);

void zsq_held_debugfs(struct dentry *dir)
{
	if (dir)
		debugfs_create_file("held", 0400, dir, NULL, &zsq_held_fops);
}
#endif

void zsq_held_exit(void)
{
	kfree(zsq_nodes);
	zsq_nodes = NULL;
	kmem_cache_destroy(zsq_cache);
}
