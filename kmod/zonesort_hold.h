/* SPDX-License-Identifier: GPL-2.0 */
/*
 * How the quarantine holds a block it took (zonesort_hold.c): so that
 * whoever isolates the block's pageblock -- memory offlining, a contiguous
 * allocation such as a gigantic huge page or virtio-mem unplugging --
 * gets it back, and compaction passes it over like a pinned page.
 */
#ifndef ZONESORT_HOLD_H
#define ZONESORT_HOLD_H

#include <linux/mm_types.h>

struct zsq_block;

/*
 * True when a pageblock's isolation takes held blocks back by itself
 * (movable operations); false when only the quarantine's memory-offline
 * notifier and its own checks give them back, which contiguous
 * allocations never call: then the quarantine takes nothing from
 * ZONE_MOVABLE, whose memory must stay removable.
 */
bool zsh_isolation_takes_back(void);

/* The largest order a block can be held at: what pageblock isolation
 * can take back whatever range it isolates. */
unsigned int zsh_max_order(void);

/*
 * head: a block of 2^b->order pages just allocated as one non-compound
 * allocation (reference count 1 on head, 0 on the others). Holds it for
 * b; 0, or an error when it could not be held (then it is still plainly
 * allocated and the caller frees it).
 */
int zsh_hold(struct zsq_block *b, struct page *head);

/*
 * Gives a block held by zsh_hold, and no longer held by the quarantine,
 * back to the page allocator, as far as it can without waiting: true
 * when all its pages are back, false when some are not yet: then a later
 * call finishes (call it again only after false). Never sleeps for the
 * kernel.
 */
bool zsh_release(struct zsq_block *b);

/* True when the kernel no longer uses b: its descriptor may be freed. */
bool zsh_idle(struct zsq_block *b);

/* What keeps b from being finished, for the kernel log. */
void zsh_describe(const struct zsq_block *b, char *buf, size_t size);

/*
 * The isolation and migration callbacks the kernel makes into the module
 * without a reference on it: how many run now, and a wait of at most
 * seconds for none to (true when none runs).
 */
int zsh_callbacks_running(void);
bool zsh_callbacks_wait(unsigned int seconds);

#endif
