// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pickheld: the quarantine policy's handling of blocks an earlier sort
 * took and still holds (kmod/zonesort_quarantine_policy.c, compiled here
 * in user space). Eight cache slots, direct-mapped, order-0 blocks, so
 * that each case's answer can be worked out by hand from the rule in
 * zonesort_quarantine_policy.h: in hand-out order a block whose slot is
 * still empty is kept, the others collide; colliding held blocks are
 * taken before colliding free ones while the budget lasts. Prints TAP.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "../../kmod/zonesort_quarantine_policy.h"

#define SLOTS 8

static int failures, tests;

static void check(int cond, const char *what)
{
	tests++;
	if (!cond)
		failures++;
	printf("%sok %d - %s\n", cond ? "" : "not ", tests, what);
}

static int same(const uint64_t *got, const uint64_t *want, size_t n)
{
	return memcmp(got, want, n * sizeof(*got)) == 0;
}

static void show(const char *name, const uint64_t *v, size_t n)
{
	printf("# %s:", name);
	for (size_t i = 0; i < n; i++)
		printf(" %" PRIu64, v[i]);
	printf("\n");
}

/* One list: free blocks, then held ones; budget and protected size in
 * pages. want_blocks: kept then taken, as the header orders them. */
static void pick_case(const char *name, const uint64_t *in, size_t n, size_t nheld,
		      uint64_t budget, uint64_t want_pages, const uint64_t *want_blocks,
		      size_t want_kept, size_t want_held_kept, size_t want_held_taken,
		      uint64_t want_budget_left, uint64_t want_short)
{
	struct zsp_geom g;
	struct zsq_pick q;
	struct zsq_held_split held;
	uint32_t load[SLOTS] = { 0 }, zero[SLOTS] = { 0 };
	uint64_t blocks[16], tmp[16];
	char what[160];
	size_t kept;

	if (zsp_geom_init(&g, SLOTS, 1)) {
		check(0, "geometry of 8 slots, direct-mapped");
		return;
	}
	zsq_pick_init(&q, &g, want_pages, budget);
	zsq_pick_zone(&q, 0);
	memcpy(blocks, in, n * sizeof(*in));
	kept = zsq_pick_list(&q, load, NULL, blocks, n, nheld, 0, tmp, &held);
	show(name, blocks, n);
	snprintf(what, sizeof(what), "%s: %zu kept, held given back %zu, held still held %zu", name,
		 want_kept, want_held_kept, want_held_taken);
	check(kept == want_kept && held.kept == want_held_kept && held.taken == want_held_taken, what);
	snprintf(what, sizeof(what), "%s: blocks in the order kept, then taken", name);
	check(same(blocks, want_blocks, n), what);
	snprintf(what, sizeof(what),
		 "%s: budget left %" PRIu64 ", %" PRIu64 " colliding pages left for lack of it, load as it was",
		 name, want_budget_left, want_short);
	check(q.budget == want_budget_left && q.short_pages == want_short &&
	      !memcmp(load, zero, sizeof(load)), what);
}

/*
 * The lists huge-page faults start from, reached while the base-page
 * allocation is still going on (base_before pages of it handed out below,
 * all on slot 0) or after it ended in a list below (base_before == 0: a
 * list of one block on slot 3 ended it). Blocks 8 (slot 0), 1 and 2:
 * while base pages still come from here 8 collides with them and is
 * taken, though it fits the huge-page sequence; after, it is kept.
 */
static void huge_case(const char *name, uint64_t base_before, const uint64_t *want_blocks,
		      size_t want_kept)
{
	static const uint64_t in[] = { 8, 1, 2 };
	struct zsp_geom g;
	struct zsq_pick q;
	struct zsq_held_split held;
	uint32_t load[SLOTS] = { 0 }, tload[SLOTS] = { 0 }, zero[SLOTS] = { 0 };
	uint64_t blocks[3], tmp[3], below = 3;
	char what[200];
	size_t kept;

	if (zsp_geom_init(&g, SLOTS, 1)) {
		check(0, "geometry of 8 slots, direct-mapped");
		return;
	}
	zsq_pick_init(&q, &g, 4, 10);
	zsq_pick_zone(&q, base_before);
	if (base_before) {
		load[0] = (uint32_t)base_before;
	} else {
		q.want = 1;
		zsq_pick_list(&q, load, NULL, &below, 1, 0, 0, tmp, &held);
		load[3] = 1;
		q.want = 4;
	}
	zsq_pick_huge(&q, 0);
	memcpy(zero, load, sizeof(load));
	memcpy(blocks, in, sizeof(in));
	kept = zsq_pick_list(&q, load, tload, blocks, 3, 0, 0, tmp, &held);
	show(name, blocks, 3);
	snprintf(what, sizeof(what), "%s: %zu kept, in the order kept, then taken", name, want_kept);
	check(kept == want_kept && same(blocks, want_blocks, 3), what);
	snprintf(what, sizeof(what), "%s: both loads as they were", name);
	check(!memcmp(load, zero, sizeof(load)) && !tload[0] && !tload[1] && !tload[2], what);
}

/*
 * Twelve slots (not a power of two), direct-mapped, blocks of 8 pages: the
 * block at pfn 8 covers slots 8-11 and, wrapping around, 0-3, so it
 * collides with the page handed out before on slot 1; the block at 16
 * covers slots 4-11 and fits. Slots past the last are not slots: the
 * array has room for them so that a reading there shows, zero.
 */
static void wrap_case(void)
{
	struct zsp_geom g;
	struct zsq_pick q;
	struct zsq_held_split held;
	uint32_t load[16] = { 0 }, want_load[16] = { 0 };
	uint64_t blocks[2] = { 8, 16 }, tmp[2];
	static const uint64_t want_blocks[2] = { 16, 8 };
	size_t kept;

	if (zsp_geom_init(&g, 12, 1)) {
		check(0, "geometry of 12 slots, direct-mapped");
		return;
	}
	load[1] = want_load[1] = 1;
	zsq_pick_init(&q, &g, 1000, 100);
	zsq_pick_zone(&q, 1);
	kept = zsq_pick_list(&q, load, NULL, blocks, 2, 0, 3, tmp, &held);
	show("wrap", blocks, 2);
	check(kept == 1 && same(blocks, want_blocks, 2),
	      "12 slots: a block wrapping around the last slot collides there (8 taken, 16 kept)");
	check(!memcmp(load, want_load, sizeof(load)) && q.taken == 8,
	      "12 slots: load as it was, nothing written past the last slot; 8 pages taken");
}

int main(void)
{
	/* Slots are pfn mod 8. Free 0 (slot 0), 8 (slot 0), 1 (slot 1);
	 * held 16 (slot 0), 2 (slot 2). Kept in order: 0, 1; 8 and 16
	 * collide with 0; 2 fits and is given back. */
	static const uint64_t in[] = { 0, 8, 1, 16, 2 };
	static const uint64_t all_taken[] = { 0, 1, 2, 16, 8 };
	static const uint64_t one_taken[] = { 0, 1, 8, 2, 16 };
	static const uint64_t none_taken[] = { 0, 1, 8, 2, 16 };
	/* Without held blocks, as before: 0 and 1 kept, 8 and 9 taken. */
	static const uint64_t plain_in[] = { 0, 8, 1, 9 };
	static const uint64_t plain_out[] = { 0, 1, 8, 9 };
	/* Two held blocks colliding with each other only: 24 (slot 0) kept
	 * in the list, 32 (slot 0) stays held. */
	static const uint64_t pair_in[] = { 1, 24, 32 };
	static const uint64_t pair_out[] = { 1, 24, 32 };

	static const uint64_t huge_taken[] = { 1, 2, 8 };
	static const uint64_t huge_kept[] = { 8, 1, 2 };

	printf("1..%d\n", 6 * 3 + 2 * 2 + 2);
	pick_case("budget for both colliding blocks", in, 5, 2, 10, 1000, all_taken, 3, 1, 1, 8, 0);
	pick_case("budget for one: the held one stays held, the free one stays in the list", in, 5,
		  2, 1, 1000, one_taken, 4, 1, 1, 0, 1);
	pick_case("no budget: both held blocks given back", in, 5, 2, 0, 1000, none_taken, 5, 2, 0,
		  0, 2);
	pick_case("no held blocks", plain_in, 4, 0, 10, 1000, plain_out, 2, 0, 0, 8, 0);
	pick_case("held blocks colliding with each other", pair_in, 3, 2, 10, 1000, pair_out, 2, 1,
		  1, 9, 0);
	/* The allocation (2 pages) ends in this list: nothing is taken,
	 * every held block is given back, and nothing is short. */
	pick_case("the allocation ends in this list", in, 5, 2, 10, 2, none_taken, 5, 2, 0, 10, 0);
	huge_case("huge-page lists while base pages still come from them", 1, huge_taken, 2);
	huge_case("huge-page lists after the base-page allocation ended below", 0, huge_kept, 3);
	wrap_case();
	return failures ? 1 : 0;
}
