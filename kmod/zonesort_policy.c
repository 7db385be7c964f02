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
	if (!is_pow2(colors) || colors > ZSP_MAX_COLORS || !ways)
		return -1;
	g->colors = colors;
	g->ways = ways;
	g->shift = 0;
	while ((colors >> g->shift) > ZSP_MAX_SLOTS)
		g->shift++;
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
	s->heap = (uint32_t *)p;
	p += g->nslots * sizeof(uint32_t);
	s->cur = (uint32_t *)p;
	p += g->nslots * sizeof(uint32_t);
	s->start = (uint32_t *)p;
	p += g->nslots * sizeof(uint32_t);
	s->base = (uint32_t *)p;
	zsp_reset(s);
}

void zsp_reset(struct zsp_state *s)
{
	uint64_t i;

	for (i = 0; i < s->g.nslots; i++)
		s->load[i] = s->base[i] = 0;
	s->huge = false;
}

void zsp_begin_huge(struct zsp_state *s)
{
	uint64_t i;

	if (s->huge)
		return;
	for (i = 0; i < s->g.nslots; i++) {
		s->base[i] = s->load[i];
		s->load[i] = 0;
	}
	s->huge = true;
}

void zsp_add_pages(struct zsp_state *s, uint64_t pfn, uint64_t npages)
{
	uint64_t i;

	for (i = 0; i < npages; i++)
		s->load[zsp_slot(&s->g, pfn + i)]++;
}

/* Pages of the allocation that conflict when a slot holds x of them. */
static uint64_t conflicting(uint64_t x, uint64_t cap)
{
	return x > cap ? x : 0;
}

static uint64_t clamp_bits(uint64_t v, unsigned int bits)
{
	uint64_t max = (1ULL << bits) - 1;

	return v > max ? max : v;
}

/* Key of a group of `span` slots from slot `first`, each to receive pp
 * more pages: the conflicting pages that adds, then the load already
 * there. Ordering huge-page lists: the conflicting pages added against
 * their own blocks, then against all, then the whole load. */
static uint64_t group_key(const struct zsp_state *s, uint64_t first, uint64_t span, uint64_t pp)
{
	uint64_t cost = 0, cost_all = 0, load = 0, i;

	for (i = first; i < first + span; i++) {
		uint64_t l = s->load[i], all = l + (s->huge ? s->base[i] : 0);

		cost += conflicting(l + pp, s->g.cap) - conflicting(l, s->g.cap);
		cost_all += conflicting(all + pp, s->g.cap) - conflicting(all, s->g.cap);
		load += all;
	}
	if (s->huge)
		return clamp_bits(cost, 24) << 40 | clamp_bits(cost_all, 20) << 20 |
		       clamp_bits(load, 20);
	return clamp_bits(cost, 32) << 32 | clamp_bits(load, 32);
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
	uint64_t bsize, span, pp, groups, gi, j;
	size_t len = 0, out = 0, i;

	if (order >= 40 || n == 0)
		return;
	bsize = 1ULL << order;
	if (bsize >= g->colors)
		return;
	/* A block covers `span` tracked slots with pp pages in each. */
	span = order > g->shift ? 1ULL << (order - g->shift) : 1;
	pp = order > g->shift ? 1ULL << g->shift : bsize;
	groups = g->nslots / span;

	/* Counting sort by group, stable: group gi's blocks end up in
	 * tmp[start[gi] .. start[gi + 1]) in their list order. */
	for (gi = 0; gi <= groups; gi++)
		start[gi] = 0;
	for (i = 0; i < n; i++)
		start[zsp_slot(g, blocks[i]) / span + 1]++;
	for (gi = 0; gi < groups; gi++)
		start[gi + 1] += start[gi];
	for (gi = 0; gi < groups; gi++)
		cur[gi] = start[gi];
	for (i = 0; i < n; i++)
		tmp[cur[zsp_slot(g, blocks[i]) / span]++] = blocks[i];

	for (gi = 0; gi < groups; gi++) {
		cur[gi] = start[gi];
		if (start[gi] < start[gi + 1]) {
			s->key[gi] = group_key(s, gi * span, span, pp);
			heap[len++] = (uint32_t)gi;
		}
	}
	for (i = len / 2; i-- > 0;)
		heap_down(s, heap, len, i);
	while (len) {
		uint32_t top = heap[0];

		blocks[out++] = tmp[cur[top]++];
		for (j = 0; j < span; j++)
			s->load[top * span + j] += (uint32_t)pp;
		if (cur[top] == start[top + 1])
			heap[0] = heap[--len];
		else
			s->key[top] = group_key(s, top * span, span, pp);
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
	uint64_t npages = order < 40 ? 1ULL << order : 0, i;

	for (i = 0; i < npages && c->taken < c->want; i++) {
		uint64_t n = ++c->counts[zsp_slot(&c->g, pfn + i)];

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

void zsp_floor_init(struct zsp_floor *f, const struct zsp_geom *g, uint64_t want,
		    uint32_t *load, uint32_t *avail)
{
	uint64_t i;

	f->g = *g;
	f->want = want;
	f->taken = 0;
	f->partial = 0;
	f->in_partial = false;
	f->done = false;
	f->load = load;
	f->avail = avail;
	for (i = 0; i < g->nslots; i++)
		load[i] = avail[i] = 0;
}

void zsp_floor_list(struct zsp_floor *f, uint64_t pages)
{
	if (f->in_partial) {
		f->done = true;
	} else if (f->taken + pages > f->want) {
		f->in_partial = true;
		f->partial = f->want - f->taken;
	}
}

void zsp_floor_feed(struct zsp_floor *f, uint64_t pfn, unsigned int order)
{
	uint64_t npages = order < 40 ? 1ULL << order : 0, i;

	if (f->done || (!f->in_partial && f->taken >= f->want))
		return;
	for (i = 0; i < npages; i++) {
		uint64_t sl = zsp_slot(&f->g, pfn + i);

		if (f->in_partial) {
			f->avail[sl]++;
		} else {
			f->load[sl]++;
			f->taken++;
		}
	}
}

uint32_t zsp_floor_ppm(struct zsp_floor *f)
{
	uint64_t cap = f->g.cap, r = f->partial, zero = 0, conflicted = 0, maxv = 0, i, v;
	uint64_t total = f->taken + f->partial;

	/* Pages that still fit in their slot cost nothing. */
	for (i = 0; i < f->g.nslots; i++) {
		uint64_t z = f->load[i] < cap ? cap - f->load[i] : 0;

		if (z > f->avail[i])
			z = f->avail[i];
		f->load[i] += (uint32_t)z;
		f->avail[i] -= (uint32_t)z;
		zero += z;
	}
	r = r > zero ? r - zero : 0;
	/* Then pages in slots that conflict already: one each. */
	for (i = 0; i < f->g.nslots && r; i++) {
		if (f->load[i] > cap && f->avail[i]) {
			uint64_t t = f->avail[i] < r ? f->avail[i] : r;

			f->load[i] += (uint32_t)t;
			f->avail[i] -= (uint32_t)t;
			r -= t;
		}
	}
	for (i = 0; i < f->g.nslots; i++) {
		if (f->load[i] > cap)
			conflicted += f->load[i];
		if (f->load[i] == cap && f->avail[i] > maxv)
			maxv = f->avail[i];
	}
	/* Then new conflicts, in the slots with the most pages left. */
	for (v = maxv; v > 0 && r; v--) {
		for (i = 0; i < f->g.nslots && r; i++) {
			if (f->load[i] == cap && f->avail[i] == v) {
				uint64_t t = v < r ? v : r;

				conflicted += cap + t;
				r -= t;
			}
		}
	}
	if (!total)
		return 0;
	return (uint32_t)(conflicted * 1000000ULL / total);
}
