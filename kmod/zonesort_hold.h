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

#include "zonesort_held.h"

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
 * Gives b, which the quarantine no longer holds, back to the page
 * allocator without waiting for the kernel: what cannot go back at once
 * (pages a migration isolated, a head another thread has locked) the
 * reaper finishes, which then frees the descriptor. Never sleeps for the
 * kernel.
 */
void zsh_give_back(struct zsq_block *b);

/* Frees b, whose pages were given back, once the kernel no longer uses
 * it (the reaper's when it does); on 7.x first frees the pages a failed
 * migration put back on its list since. May sleep: never under a lock. */
void zsh_free(struct zsq_block *b);

/*
 * Unloading, after the last block was given back: waits until no
 * isolation or migration callback runs in the module (the kernel makes
 * them without a reference on it) and the reaper has finished every
 * block, saying with pr_err every ZS_WAIT_WARN_S what it waits for.
 */
void zsh_drain(void);

#endif
