// SPDX-License-Identifier: GPL-2.0-or-later
/* Cache slots of physical pages, collisions, and the conflict potential of
 * free memory. The definitions are in slots.h. */
#include "config.h"
#include "slots.h"
#include "errbuf.h"
#include "parse.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int zs_slotgeom_init(struct zs_slotgeom *g, uint64_t cache_size, int ways, unsigned page_size,
		     const char *cache_what, const char *ways_what, char *err)
{
	char a[64];

	memset(g, 0, sizeof(*g));
	if (!page_size || (page_size & (page_size - 1)))
		return zs_fail(err, "page size %u is not a power of two", page_size);
	if (!cache_size)
		return zs_fail(err, "%s 0: the cache size must be a positive multiple of the page size (%u bytes), e.g. 16GiB",
			       cache_what, page_size);
	if (cache_size < page_size)
		return zs_fail(err, "%s %llu: smaller than the page size (%u bytes)", cache_what,
			       (unsigned long long)cache_size, page_size);
	if (cache_size % page_size)
		return zs_fail(err, "%s %llu (%s): not a whole number of %u-byte pages; expected a multiple of the page size, e.g. 16GiB or 96GiB",
			       cache_what, (unsigned long long)cache_size,
			       zs_format_size(cache_size, a, sizeof(a)), page_size);
	g->cache_size = cache_size;
	g->page_size = page_size;
	if (ways == -1) {
		g->fully_associative = true;
		g->ways = cache_size / page_size;
		g->nslots = 1;
		return 0;
	}
	if (ways == 0)
		return zs_fail(err, "%s unknown (0): the cache's associativity is needed; give the number of ways (1 = direct-mapped)",
			       ways_what);
	if (ways < 0 || ways > 64)
		return zs_fail(err, "%s %d: expected 1 (direct-mapped) to 64", ways_what, ways);
	if ((uint64_t)ways * page_size > cache_size ||
	    cache_size % ((uint64_t)ways * page_size))
		return zs_fail(err, "%s %d with %s %s: the cache does not split into whole page slots of %d pages of %u bytes",
			       ways_what, ways, cache_what, zs_format_size(cache_size, a, sizeof(a)), ways,
			       page_size);
	g->ways = (uint64_t)ways;
	g->nslots = cache_size / ((uint64_t)ways * page_size);
	return 0;
}

const char *zs_slotgeom_describe(const struct zs_slotgeom *g, char *buf, unsigned len)
{
	char a[64];

	zs_format_size(g->cache_size, a, sizeof(a));
	if (g->fully_associative)
		snprintf(buf, len, "%s fully associative", a);
	else if (g->ways == 1)
		snprintf(buf, len, "%s direct-mapped", a);
	else
		snprintf(buf, len, "%s %llu-way", a, (unsigned long long)g->ways);
	if (g->base_pfn) {
		size_t used = strlen(buf);

		snprintf(buf + used, len - used, " extended-linear from frame %llu",
			 (unsigned long long)g->base_pfn);
	}
	return buf;
}

void zs_collisions_count(const uint32_t *counts, uint64_t nslots, uint64_t ways,
			 struct zs_collisions *out)
{
	memset(out, 0, sizeof(*out));
	for (uint64_t s = 0; s < nslots; s++) {
		uint64_t c = counts[s];

		if (!c)
			continue;
		out->pages += c;
		out->used_slots++;
		if (c > out->max_in_slot)
			out->max_in_slot = c;
		if (c > ways) {
			out->conflicting += c;
			out->excess += c - ways;
			out->overfull_slots++;
		}
	}
}

double zs_collisions_fraction(const struct zs_collisions *c)
{
	return c->pages ? (double)c->conflicting / (double)c->pages : 0.0;
}

double zs_random_conflict_fraction(uint64_t n, uint64_t nslots, uint64_t ways)
{
	uint64_t others;

	if (n < 2 || !nslots || !ways)
		return 0.0;
	others = n - 1;
	if (others < ways)
		return 0.0;
	if (nslots == 1)
		return 1.0;
	/* P[Bin(N, p) >= W] = 1 - sum_{k < W} C(N, k) p^k (1 - p)^(N - k), the
	 * terms in logarithms so that large N does not underflow the first. */
	double N = (double)others, p = 1.0 / (double)nslots;
	double lq = log1p(-p), lr = log(p) - lq;

	if (ways == 1)
		return -expm1(N * lq);
	double lterm = N * lq, cdf = 0.0;

	for (uint64_t k = 0; k < ways; k++) {
		cdf += exp(lterm);
		lterm += log((N - (double)k) / (double)(k + 1)) + lr;
	}
	return cdf >= 1.0 ? 0.0 : 1.0 - cdf;
}

unsigned zs_worst_slots(const uint32_t *counts, uint64_t nslots, unsigned max, uint64_t *slot,
			uint32_t *count)
{
	unsigned n = 0;

	for (uint64_t s = 0; s < nslots && max; s++) {
		uint32_t c = counts[s];
		unsigned i;

		if (!c || (n == max && c <= count[n - 1]))
			continue;
		if (n < max)
			n++;
		/* Insert keeping counts descending, earlier slots first on ties. */
		for (i = n - 1; i > 0 && count[i - 1] < c; i--) {
			count[i] = count[i - 1];
			slot[i] = slot[i - 1];
		}
		count[i] = c;
		slot[i] = s;
	}
	return n;
}

int zs_parse_fraction(const char *what, const char *s, double max, double *out, char *err)
{
	char *end;
	double v;
	size_t len = s ? strlen(s) : 0;
	bool pct = len && s[len - 1] == '%';

	/* Digits and at most one dot; strtod alone would take blanks, signs,
	 * exponents, hex, inf and nan. */
	if (!len || strspn(s, "0123456789.") != len - pct || !strchr("0123456789.", s[0]) ||
	    strchr(s, '.') != strrchr(s, '.') || !strpbrk(s, "0123456789"))
		goto bad;
	v = strtod(s, &end);
	if (end != s + len - pct)
		goto bad;
	if (pct)
		v /= 100.0;
	if (!(v > 0.0) || v > max)
		return zs_fail(err, "%s '%s': out of range; expected a fraction above 0 and at most %g (%g%%)",
			       what, s, max, max * 100.0);
	*out = v;
	return 0;
bad:
	return zs_fail(err, "%s '%s': expected a fraction such as 0.5 or a percentage such as 50%%", what,
		       s ? s : "");
}

/* --- conflict potential ---------------------------------------------------- */

struct tracker {
	uint32_t *counts;
	uint64_t ways;
	uint64_t conflicting;
};

static inline void track_add(struct tracker *t, uint64_t slot)
{
	uint64_t c = ++t->counts[slot];

	if (c == t->ways + 1)
		t->conflicting += c;
	else if (c > t->ways + 1)
		t->conflicting++;
}

static inline void track_remove(struct tracker *t, uint64_t slot)
{
	uint64_t c = t->counts[slot]--;

	if (c == t->ways + 1)
		t->conflicting -= c;
	else if (c > t->ways + 1)
		t->conflicting--;
}

/* Adds (sign > 0) or removes the first npages pages of a block. */
static void track_block(struct tracker *t, const struct zs_slotgeom *g, uint64_t pfn,
			uint64_t npages, int sign)
{
	for (uint64_t i = 0; i < npages; i++) {
		uint64_t s = zs_slot_of(g, pfn + i);

		if (sign > 0)
			track_add(t, s);
		else
			track_remove(t, s);
	}
}

static uint64_t splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* The blocks of a list the allocation only partly consumes, in random
 * order: the mean conflicting pages over draws. */
static double partial_list(struct tracker *t, const struct zs_slotgeom *g,
			   const struct zs_freeblock_list *l, unsigned order, uint64_t want,
			   unsigned draws, uint64_t *rng, unsigned *used_draws, char *err)
{
	uint64_t bsize = 1ULL << order;
	uint64_t nblocks = (want + bsize - 1) / bsize;
	size_t *idx;
	double sum = 0.0;

	if (l->n == 1 || draws == 0) {
		/* One block, or no draws asked: take the blocks in list order. */
		uint64_t left = want;

		for (size_t b = 0; b < l->n && left; b++) {
			uint64_t take = left < bsize ? left : bsize;

			track_block(t, g, l->pfn[b], take, +1);
			left -= take;
		}
		return (double)t->conflicting;
	}
	idx = malloc(l->n * sizeof(*idx));
	if (!idx) {
		zs_fail(err, "out of memory");
		return -1.0;
	}
	for (size_t i = 0; i < l->n; i++)
		idx[i] = i;
	for (unsigned d = 0; d < draws; d++) {
		uint64_t left = want;

		/* Partial Fisher-Yates: the first nblocks entries are a uniform
		 * random ordered selection. */
		for (uint64_t i = 0; i < nblocks; i++) {
			uint64_t j = i + splitmix64(rng) % (l->n - i);
			size_t tmp = idx[i];

			idx[i] = idx[j];
			idx[j] = tmp;
		}
		for (uint64_t i = 0; i < nblocks; i++) {
			uint64_t take = left < bsize ? left : bsize;

			track_block(t, g, l->pfn[idx[i]], take, +1);
			left -= take;
		}
		sum += (double)t->conflicting;
		left = want;
		for (uint64_t i = 0; i < nblocks; i++) {
			uint64_t take = left < bsize ? left : bsize;

			track_block(t, g, l->pfn[idx[i]], take, -1);
			left -= take;
		}
	}
	free(idx);
	*used_draws = draws;
	return sum / draws;
}

int zs_potential_compute(const struct zs_slotgeom *g, const struct zs_zone_blocks *zones,
			 unsigned nzones, uint64_t npages, unsigned draws, uint64_t seed,
			 struct zs_potential *out, char *err)
{
	struct tracker t = { .ways = g->ways };
	uint64_t rng = seed;
	double conflicting = 0.0;
	bool done = false;

	memset(out, 0, sizeof(*out));
	out->requested = npages;
	t.counts = calloc(g->nslots, sizeof(*t.counts));
	if (!t.counts)
		return zs_fail(err, "out of memory for %llu slot counters", (unsigned long long)g->nslots);
	for (unsigned z = 0; z < nzones && !done; z++) {
		for (unsigned o = 0; o < zones[z].norders && !done; o++) {
			const struct zs_freeblock_list *l = &zones[z].lists[o];
			uint64_t left = npages - out->allocated;
			uint64_t total = (uint64_t)l->n << o;

			if (!left) {
				conflicting = (double)t.conflicting;
				done = true;
				break;
			}
			if (!l->n)
				continue;
			if (total <= left) {
				for (size_t b = 0; b < l->n; b++)
					track_block(&t, g, l->pfn[b], 1ULL << o, +1);
				out->allocated += total;
				continue;
			}
			conflicting = partial_list(&t, g, l, o, left, draws, &rng, &out->draws, err);
			if (conflicting < 0) {
				free(t.counts);
				return -1;
			}
			out->allocated += left;
			done = true;
		}
	}
	if (!done)
		conflicting = (double)t.conflicting;
	free(t.counts);
	out->conflicting = conflicting;
	out->fraction = out->allocated ? conflicting / (double)out->allocated : 0.0;
	out->random_fraction = zs_random_conflict_fraction(out->allocated, g->nslots, g->ways);
	return 0;
}

/* --- sample lines ----------------------------------------------------------- */

const char *zs_sample_format(const struct zs_sample *s, char *buf, unsigned len)
{
	snprintf(buf, len, "conflicts fraction=%.6f random=%.6f pages=%llu samples=%u", s->fraction,
		 s->random, (unsigned long long)s->pages, s->samples);
	return buf;
}

int zs_sample_parse(const char *line, struct zs_sample *s)
{
	struct zs_sample v;
	unsigned long long pages;
	int end = 0;

	if (sscanf(line, "conflicts fraction=%lf random=%lf pages=%llu samples=%u%n", &v.fraction,
		   &v.random, &pages, &v.samples, &end) != 4 ||
	    (line[end] && line[end] != '\n') || !(v.fraction >= 0.0 && v.fraction <= 1.0) ||
	    !(v.random >= 0.0 && v.random <= 1.0))
		return -1;
	v.pages = pages;
	*s = v;
	return 0;
}
