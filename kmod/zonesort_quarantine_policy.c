// SPDX-License-Identifier: GPL-2.0
/*
 * zonesort quarantine policy; see zonesort_quarantine_policy.h. Builds in
 * the kernel (Kbuild) and in user space (tests/kmod/policysim.c), C89
 * declarations as in zonesort_policy.c.
 */
#include "zonesort_quarantine_policy.h"

void zsq_pick_init(struct zsq_pick *q, const struct zsp_geom *g, uint64_t want, uint64_t budget)
{
	q->g = *g;
	q->want = want;
	q->budget = budget;
	q->before = 0;
	q->hbefore = 0;
	q->taken = 0;
	q->short_pages = 0;
	q->done = false;
	q->huge = false;
	q->hdone = false;
	q->seed = NULL;
}

void zsq_pick_zone(struct zsq_pick *q, uint64_t pages_before)
{
	q->before = pages_before;
	q->done = false;
	q->huge = false;
	q->hdone = false;
}

void zsq_pick_huge(struct zsq_pick *q, uint64_t pages_before)
{
	q->hbefore = pages_before;
	q->huge = true;
	q->hdone = false;
}

/* The loads of the sequences a list still serves: the base-page one
 * until its allocation ended, the huge-page one from its lists on. */
struct seqs {
	uint32_t *load[2];
};

/* The tracked slot j slots after slot s: a block of fewer pages than the
 * cache has colors still wraps around the last slot when colors is not a
 * multiple of its size (a 6 MiB cache and a 4 MiB block). */
static uint64_t slot_after(const struct zsp_geom *g, uint64_t s, uint64_t j)
{
	s += j;
	return s >= g->nslots ? s - g->nslots : s;
}

/* Adds (sign 1) or removes (sign -1) a block's pages from the loads. */
static void load_block(const struct zsp_geom *g, const struct seqs *sq, uint64_t pfn,
		       uint64_t span, uint64_t pp, int sign)
{
	uint64_t first = zsp_slot(g, pfn), j;
	int k;

	for (k = 0; k < 2; k++) {
		uint32_t *load = sq->load[k];

		if (!load)
			continue;
		for (j = 0; j < span; j++) {
			uint64_t s = slot_after(g, first, j);

			load[s] = sign > 0 ? load[s] + (uint32_t)pp : load[s] - (uint32_t)pp;
		}
	}
}

/* Every slot of the block has room for its pages, a running job's page
 * counted in where seed has one. */
static bool block_fits(const struct zsp_geom *g, const struct seqs *sq, const uint32_t *seed,
		       uint64_t pfn, uint64_t span, uint64_t pp)
{
	uint64_t first = zsp_slot(g, pfn), j;
	int k;

	for (k = 0; k < 2; k++)
		for (j = 0; sq->load[k] && j < span; j++) {
			uint64_t s = slot_after(g, first, j);

			if (sq->load[k][s] + (seed ? seed[s] : 0) + pp > g->cap)
				return false;
		}
	return true;
}

/*
 * Puts a list's blocks in the order the sort leaves them: blocks[0, nk)
 * holds the nk fitting ones (the nkh held among them last), tmp[0, nt)
 * the nt others (the nth held among them last), and ntake of the others
 * are to be taken. Held blocks are taken first: what is held stays held.
 * Kept: the fitting free blocks, the free ones left for lack of budget,
 * then the held ones to give back (fitting, then left); taken: the held
 * ones, then the free ones. tmp[nt, n) is free for the fitting held ones,
 * so every copy into blocks reads tmp only. Returns the number kept.
 */
static size_t arrange_list(uint64_t *blocks, uint64_t *tmp, size_t nk, size_t nkh,
			   size_t nt, size_t nth, size_t ntake, struct zsq_held_split *held)
{
	size_t htake = ntake < nth ? ntake : nth;
	size_t ftake = ntake - htake, out = nk - nkh, kept, i;

	for (i = 0; i < nkh; i++)
		tmp[nt + i] = blocks[out + i];
	for (i = ftake; i < nt - nth; i++)
		blocks[out++] = tmp[i];
	for (i = 0; i < nkh; i++)
		blocks[out++] = tmp[nt + i];
	for (i = nt - nth + htake; i < nt; i++)
		blocks[out++] = tmp[i];
	held->kept = nkh + nth - htake;
	kept = out;
	for (i = 0; i < htake; i++)
		blocks[out++] = tmp[nt - nth + i];
	for (i = 0; i < ftake; i++)
		blocks[out++] = tmp[i];
	held->taken = htake;
	return kept;
}

size_t zsq_pick_list(struct zsq_pick *q, uint32_t *load, uint32_t *tload, uint64_t *blocks,
		     size_t n, size_t nheld, unsigned int order, uint64_t *tmp,
		     struct zsq_held_split *held)
{
	const struct zsp_geom *g = &q->g;
	uint64_t bsize, span, pp, kept = 0, ntake;
	size_t nfree = n - nheld, nk = 0, nt = 0, nkh = 0, nth = 0, i;
	bool huge_on = q->huge && !q->hdone && tload;
	struct seqs sq;

	held->kept = nheld;
	held->taken = 0;
	if (order >= 40 || n == 0)
		return n;
	bsize = 1ULL << order;
	sq.load[0] = q->done ? NULL : load;
	sq.load[1] = huge_on ? tload : NULL;
	if ((!sq.load[0] && !sq.load[1]) || bsize >= g->colors) {
		q->before += (uint64_t)n << order;
		q->hbefore += (uint64_t)n << order;
		return n;
	}
	span = order > g->shift ? 1ULL << (order - g->shift) : 1;
	pp = order > g->shift ? 1ULL << g->shift : bsize;

	/* Fitting blocks to blocks[0, nk), the others to tmp[0, nt); the
	 * held ones, last in the input, stay last in each. */
	for (i = 0; i < n; i++) {
		uint64_t pfn = blocks[i];

		if (block_fits(g, &sq, q->seed, pfn, span, pp)) {
			load_block(g, &sq, pfn, span, pp, 1);
			blocks[nk++] = pfn;
			kept += bsize;
			nkh += i >= nfree;
		} else {
			tmp[nt++] = pfn;
			nth += i >= nfree;
		}
	}
	for (i = 0; i < nk; i++)
		load_block(g, &sq, blocks[i], span, pp, -1);

	if ((sq.load[0] && q->before + kept >= q->want) ||
	    (sq.load[1] && q->hbefore + kept >= q->want)) {
		/* An allocation ends in this list: the sort hands out the
		 * fitting blocks first. */
		q->done = q->done || q->before + kept >= q->want;
		q->hdone = q->hdone || (huge_on && q->hbefore + kept >= q->want);
		ntake = 0;
	} else {
		ntake = q->budget / bsize;
		if (ntake > nt)
			ntake = nt;
		q->short_pages += (uint64_t)(nt - ntake) * bsize;
	}
	nk = arrange_list(blocks, tmp, nk, nkh, nt, nth, ntake, held);
	q->before += kept + (uint64_t)(nt - ntake) * bsize;
	q->hbefore += kept + (uint64_t)(nt - ntake) * bsize;
	q->budget -= ntake * bsize;
	q->taken += ntake * bsize;
	return nk;
}

void zsq_pick_untake(struct zsq_pick *q, unsigned int order)
{
	uint64_t bsize = 1ULL << order;

	q->taken -= bsize;
	q->budget += bsize;
	q->before += bsize;
	q->hbefore += bsize;
}
