// SPDX-License-Identifier: GPL-2.0
/*
 * zonesort ordering policy; see zonesort_policy.h for the model. Builds in
 * the kernel (Kbuild) and in user space (tests/kmod/policysim.c), in the
 * C dialect of either (no declarations in for statements: 5.14 kernels
 * still build with gnu89).
 */
#include "zonesort_policy.h"

static bool is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

int zsp_geom_init(struct zsp_geom *g, uint64_t colors, unsigned int ways)
{
	if (!colors || colors > ZSP_MAX_COLORS || !ways)
		return -1;
	g->colors = colors;
	g->pow2 = is_pow2(colors);
	g->recip = g->pow2 ? 0 : ~0ULL / colors;
	g->ways = ways;
	g->shift = 0;
	while ((colors >> g->shift) > ZSP_MAX_SLOTS)
		g->shift++;
	if (colors & ((1ULL << g->shift) - 1))
		return -1;
	g->nslots = colors >> g->shift;
	g->cap = (uint64_t)ways << g->shift;
	return 0;
}

void zsp_init(struct zsp_state *s, const struct zsp_geom *g, void *mem)
{
	unsigned char *p = mem;

	s->g = *g;
	s->key = (uint64_t *)p;
	p += g->nslots * sizeof(uint64_t);
	s->load = (uint32_t *)p;
	p += g->nslots * sizeof(uint32_t);
	s->tload = (uint32_t *)p;
	p += g->nslots * sizeof(uint32_t);
	s->heap = (uint32_t *)p;
	p += g->nslots * sizeof(uint32_t);
	s->cur = (uint32_t *)p;
	p += g->nslots * sizeof(uint32_t);
	s->start = (uint32_t *)p;
	p += (g->nslots + 2) * sizeof(uint32_t);
	s->seed = (uint32_t *)p;
	s->seeded = false;
	s->overflow = ZSP_PILE;
	zsp_reset(s);
}

void zsp_set_overflow(struct zsp_state *s, enum zsp_overflow overflow)
{
	s->overflow = overflow;
}

void zsp_reset(struct zsp_state *s)
{
	uint64_t i;

	for (i = 0; i < s->g.nslots; i++)
		s->load[i] = 0;
	s->marked = false;
}

void zsp_set_seed(struct zsp_state *s, const uint8_t *bits)
{
	uint64_t i;

	s->seeded = bits != NULL;
	if (!bits)
		return;
	for (i = 0; i < s->g.nslots; i++)
		s->seed[i] = (bits[i / 8] >> (i % 8)) & 1;
}

void zsp_mark_sequence(struct zsp_state *s)
{
	uint64_t i;

	for (i = 0; i < s->g.nslots; i++)
		s->tload[i] = 0;
	s->marked = true;
}

static void add_load(struct zsp_state *s, uint64_t slot, uint32_t pages)
{
	s->load[slot] += pages;
	if (s->marked)
		s->tload[slot] += pages;
}

void zsp_add_pages(struct zsp_state *s, uint64_t pfn, uint64_t npages)
{
	uint64_t c = zsp_mod(&s->g, pfn), i;

	for (i = 0; i < npages; i++, c = zsp_next(&s->g, c))
		add_load(s, zsp_color_slot(&s->g, c), 1);
}

/* Pages of the allocation that conflict when a slot holds x of them. */
static uint64_t conflicting(uint64_t x, uint64_t cap)
{
	return x > cap ? x : 0;
}

/* The groups of one list: blocks of 2^order pages whose pages fall on the
 * same `span` tracked slots, pp pages on each. With `aligned`, group gi
 * covers slots gi * span .. gi * span + span - 1; otherwise group gi
 * starts at slot gi and wraps around at nslots. */
struct zsp_groups {
	uint64_t span, pp, count;
	bool aligned;
};

static uint64_t group_first(const struct zsp_groups *gr, uint64_t gi)
{
	return gr->aligned ? gi * gr->span : gi;
}

static uint64_t group_of(const struct zsp_geom *g, const struct zsp_groups *gr, uint64_t pfn)
{
	uint64_t slot = zsp_slot(g, pfn);

	return gr->aligned ? slot / gr->span : slot;
}

static uint64_t saturate(uint64_t v, unsigned int bits)
{
	uint64_t max = (1ULL << bits) - 1;

	return v < max ? v : max;
}

/* The cost of pp more pages in a slot holding l: the conflicting pages
 * they add (ZSP_PILE), or the pages beyond capacity after them
 * (ZSP_SPREAD). */
static uint64_t slot_cost(const struct zsp_state *s, uint64_t l, uint64_t pp)
{
	uint64_t cap = s->g.cap;

	if (s->overflow == ZSP_SPREAD)
		return l + pp > cap ? l + pp - cap : 0;
	return conflicting(l + pp, cap) - conflicting(l, cap);
}

/* Key of group gi, each of whose slots is to receive pp more pages: the
 * conflicting pages that adds, then its slots a running job occupies
 * (zsp_set_seed), then the load already there; after zsp_mark_sequence,
 * first the conflicting pages it adds to the marked sequence. ZSP_SPREAD
 * counts the pages beyond capacity after the block instead of the
 * conflicting pages it adds: 0 while the slots have room (the same choice
 * as ZSP_PILE), then the least-loaded slots first. The occupied slots only
 * break ties: a block there never goes before one that adds fewer
 * conflicts within the allocation. Lower is better; the fields saturate. */
static uint64_t group_key(const struct zsp_state *s, const struct zsp_groups *gr, uint64_t gi)
{
	uint64_t cost = 0, tcost = 0, load = 0, seeded = 0, sl = group_first(gr, gi), i;

	for (i = 0; i < gr->span; i++) {
		cost += slot_cost(s, s->load[sl], gr->pp);
		load += s->load[sl];
		if (s->seeded)
			seeded += s->seed[sl];
		if (s->marked)
			tcost += slot_cost(s, s->tload[sl], gr->pp);
		if (++sl == s->g.nslots)
			sl = 0;
	}
	/* Without occupied slots, the load has the bits they would take. */
	if (!s->marked)
		return saturate(cost, 32) << 32 |
		       (s->seeded ? saturate(seeded, 8) << 24 | saturate(load, 24) : saturate(load, 32));
	return saturate(tcost, 20) << 44 |
	       (s->seeded ? saturate(cost, 18) << 26 | saturate(seeded, 6) << 20 | saturate(load, 20)
			  : saturate(cost, 20) << 24 | saturate(load, 24));
}

static void group_take(struct zsp_state *s, const struct zsp_groups *gr, uint64_t gi)
{
	uint64_t sl = group_first(gr, gi), i;

	for (i = 0; i < gr->span; i++) {
		add_load(s, sl, (uint32_t)gr->pp);
		if (++sl == s->g.nslots)
			sl = 0;
	}
}

/* Heap order: lower key; then the group with more blocks left (so that
 * piled-up conflicts stay in few slots); then the lower group. */
static bool heap_less(const struct zsp_state *s, uint32_t a, uint32_t b)
{
	uint32_t ra, rb;

	if (s->key[a] != s->key[b])
		return s->key[a] < s->key[b];
	ra = s->start[a + 1] - s->cur[a];
	rb = s->start[b + 1] - s->cur[b];
	if (ra != rb)
		return ra > rb;
	return a < b;
}

static void heap_down(const struct zsp_state *s, uint32_t *h, size_t len, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		uint32_t t;

		if (l < len && heap_less(s, h[l], h[m]))
			m = l;
		if (r < len && heap_less(s, h[r], h[m]))
			m = r;
		if (m == i)
			return;
		t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

void zsp_order_blocks(struct zsp_state *s, uint64_t *blocks, size_t n, unsigned int order,
		      uint64_t *tmp)
{
	const struct zsp_geom *g = &s->g;
	uint32_t *start = s->start, *cur = s->cur, *heap = s->heap;
	struct zsp_groups gr;
	uint64_t bsize, gi;
	size_t len = 0, out = 0, i;

	if (order >= 40 || n == 0)
		return;
	bsize = 1ULL << order;
	if (bsize >= g->colors)
		return;
	/* A block covers `span` tracked slots with pp pages in each. */
	gr.span = order > g->shift ? 1ULL << (order - g->shift) : 1;
	gr.pp = order > g->shift ? 1ULL << g->shift : bsize;
	/* Blocks start at multiples of their size; in slot space too when
	 * colors is a multiple of it. */
	gr.aligned = !(g->colors & (bsize - 1));
	gr.count = gr.aligned ? g->nslots / gr.span : g->nslots;

	/* Counting sort by group, stable: group gi's blocks end up in
	 * tmp[start[gi] .. start[gi + 1]) in their list order. */
	for (gi = 0; gi <= gr.count; gi++)
		start[gi] = 0;
	for (i = 0; i < n; i++)
		start[group_of(g, &gr, blocks[i]) + 1]++;
	for (gi = 0; gi < gr.count; gi++)
		start[gi + 1] += start[gi];
	for (gi = 0; gi < gr.count; gi++)
		cur[gi] = start[gi];
	for (i = 0; i < n; i++)
		tmp[cur[group_of(g, &gr, blocks[i])]++] = blocks[i];

	for (gi = 0; gi < gr.count; gi++) {
		cur[gi] = start[gi];
		if (start[gi] < start[gi + 1]) {
			s->key[gi] = group_key(s, &gr, gi);
			heap[len++] = (uint32_t)gi;
		}
	}
	for (i = len / 2; i-- > 0;)
		heap_down(s, heap, len, i);
	while (len) {
		uint32_t top = heap[0];

		if (!gr.aligned) {
			/* Overlapping groups: taking a block of one raised
			 * the load under others, whose keys are now low. */
			uint64_t k = group_key(s, &gr, top);

			if (k != s->key[top]) {
				s->key[top] = k;
				heap_down(s, heap, len, 0);
				continue;
			}
		}
		blocks[out++] = tmp[cur[top]++];
		group_take(s, &gr, top);
		if (cur[top] == start[top + 1])
			heap[0] = heap[--len];
		else
			s->key[top] = group_key(s, &gr, top);
		heap_down(s, heap, len, 0);
	}
}

void zsp_conflict_init(struct zsp_conflict *c, const struct zsp_geom *g, uint64_t want,
		       uint32_t *counts)
{
	uint64_t i;

	c->g = *g;
	c->want = want;
	c->taken = 0;
	c->conflicted = 0;
	c->counts = counts;
	for (i = 0; i < g->nslots; i++)
		counts[i] = 0;
}

bool zsp_conflict_feed(struct zsp_conflict *c, uint64_t pfn, unsigned int order)
{
	uint64_t npages = order < 40 ? 1ULL << order : 0, i, color;

	if (c->taken >= c->want)
		return false;
	color = zsp_mod(&c->g, pfn);
	for (i = 0; i < npages && c->taken < c->want; i++, color = zsp_next(&c->g, color)) {
		uint64_t n = ++c->counts[zsp_color_slot(&c->g, color)];

		if (n == c->g.cap + 1)
			c->conflicted += n;
		else if (n > c->g.cap + 1)
			c->conflicted++;
		c->taken++;
	}
	return c->taken < c->want;
}

uint32_t zsp_conflict_ppm(const struct zsp_conflict *c)
{
	if (!c->taken)
		return 0;
	return (uint32_t)(c->conflicted * 1000000ULL / c->taken);
}
