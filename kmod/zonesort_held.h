/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The quarantine's ledger (zonesort_held.c): one descriptor per held
 * block, each node's lists and counts of them, the accounting of held
 * pages, and the claim isolation makes on a block. The lowest layer of
 * the quarantine: it calls no other part of the module but the test
 * points.
 *
 * Held blocks are in one of these states, always reachable under their
 * node's lock:
 *   INFLIGHT  being taken: owned by the sort, on no list; counted;
 *   HELD      on the node's list for its zone and order;
 *   PICKING   pulled onto the node's picking list by the sort, which
 *             decides whether it stays held; only the sort unlinks it;
 *   GONE      a PICKING block whose pages went back meanwhile; the sort
 *             frees its descriptor;
 *   RELEASING off every list, given back by whoever took it off
 *             (zsq_give_back, zonesort_giveback.c); isolation leaves it
 *             to them.
 */
#ifndef ZONESORT_HELD_H
#define ZONESORT_HELD_H

#include <linux/atomic.h>
#include <linux/list.h>
#include <linux/mmzone.h>
#include <linux/spinlock.h>
#ifdef ZS_HOLD_BALLOON
#include <linux/balloon.h>
#endif

#include "zonesort_compat.h"

enum zsq_state { ZSQ_INFLIGHT = 1, ZSQ_HELD, ZSQ_PICKING, ZSQ_GONE, ZSQ_RELEASING };

/* A held block, from its take until it is back in the free lists. */
struct zsq_block {
	struct list_head link;	/* see enum zsq_state; under the node's lock */
	unsigned long pfn;	/* first page */
	unsigned char order, zone;	/* zone: zone_idx() */
	unsigned char state;	/* enum zsq_state */
	bool release_wanted;	/* isolated while in flight: give it back */
	bool pending;		/* given back, pages not all back yet (reaper) */
#ifdef ZS_HOLD_BALLOON
	struct balloon_dev_info balloon;	/* the block's pages (zonesort_hold.c) */
	atomic_t balloon_pages;		/* of them, not yet back with the allocator */
#endif
};

/* A node's held blocks; the lock guards everything here (a spinlock,
 * never with interrupts off: no interrupt handler takes it), each hold
 * handling at most ZS_BATCH list entries. */
struct zsq_node {
	spinlock_t lock;
	struct list_head held[MAX_NR_ZONES][ZS_NR_ORDERS];
	unsigned long count[MAX_NR_ZONES][ZS_NR_ORDERS];	/* blocks on held[][] */
	struct list_head picking;
	unsigned long pages, nblocks;	/* INFLIGHT, HELD and PICKING blocks */
	unsigned long peak;		/* most pages at any instant */
	unsigned long max;		/* pages, from the last sort's geometry */
};


extern struct zsq_node *zsq_nodes;	/* nr_node_ids entries */

/* What the quarantine did since load, in pages unless said. */
struct zsq_counters {
	atomic64_t taken, released, shrunk, isolated, offlined;
	atomic64_t taken_huge;	/* of taken: blocks of pageblock order and up */
	/* blocks not taken: gone from the lists before the allocator got
	 * there, or no room under the node's maximum */
	atomic64_t gone, no_room;
};

extern struct zsq_counters zsq_stats;

/* Held pages count in NR_KERNEL_MISC_RECLAIMABLE (KReclaimable,
 * MemAvailable): pages more (or less) held on node nid. */
void zsq_account(int nid, long pages);

struct zsq_node *zsq_node_of(const struct zsq_block *b);

/* Caller holds qn->lock. */
static inline void zsq_uncount(struct zsq_node *qn, const struct zsq_block *b)
{
	qn->pages -= 1UL << b->order;
	qn->nblocks--;
}

/* Caller holds qn->lock; b is off every list and the caller gives it
 * back now: isolation leaves it alone from here on. */
static inline void zsq_releasing(struct zsq_node *qn, struct zsq_block *b)
{
	b->state = ZSQ_RELEASING;
	zsq_uncount(qn, b);
}

/* Caller holds qn->lock; b is HELD and the caller gives it back now. */
static inline void zsq_unlist(struct zsq_node *qn, struct zsq_block *b)
{
	list_del(&b->link);
	qn->count[b->zone][b->order]--;
	zsq_releasing(qn, b);
}

/* What zsq_claim found, read under the node's lock. */
struct zsq_claim {
	unsigned long pfn;
	unsigned int order;
	bool owner;	/* the caller frees the descriptor (zsh_free) */
};

/*
 * For zonesort_hold.c: someone isolating b's pageblock, or migrating one
 * of its pages, wants it back. True when the caller must now give its
 * pages back; c then says what they are and whether the caller also
 * frees b: else the sort holding it does, and b may be freed as soon as
 * this returns.
 */
bool zsq_claim(struct zsq_block *b, struct zsq_claim *c);
/* A descriptor for a block about to be taken, or NULL (no retry, no
 * OOM killer); freed by zsq_block_destroy. */
struct zsq_block *zsq_block_new(void);
void zsq_block_destroy(struct zsq_block *b);

/* The nodes' lists and the descriptor cache, at load; freed at unload,
 * when nothing is held and no descriptor is left. */
int zsq_held_init(void);
void zsq_held_exit(void);

#ifdef ZS_TEST_HOOKS
struct dentry;
/* Test builds: dir/held, one line per held block of every node. */
void zsq_held_debugfs(struct dentry *dir);
#endif

#endif
