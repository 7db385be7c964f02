// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * policysim: compares free-list orderings for a direct-mapped (or N-way)
 * memory-side cache on a simulated buddy allocator, using the kernel
 * module's own policy code (kmod/zonesort_policy.c).
 *
 * The simulator keeps Linux's free-list discipline for order-0 requests:
 * a freed block merges with its free buddy and goes to the head of its
 * order's list; an allocation takes the head of the lowest non-empty
 * order and, when splitting, puts the upper halves at the heads of the
 * lower lists. A state is "aged" by random allocations and frees of
 * single pages, leaving some pages allocated (holes). Each policy then
 * reorders the lists of that same state, and the next allocation of half
 * and all of the cache's pages is simulated page by page through the
 * allocator. Reported: the fraction of those pages whose slot (pfn mod
 * slots) holds more than `ways` pages of the allocation.
 *
 * Policies:
 *   none     the lists as aging left them (unsorted Linux)
 *   address  every list in ascending address order
 *   random   every list shuffled (like page_alloc.shuffle)
 *   buckets4 a four-bucket scheme after Intel's idea: walk the lists from
 *            order 0 up in their current order, marking the slots the
 *            blocks seen so far occupy; a block whose pages hit no marked
 *            slot goes to bucket 0, under half of them to bucket 1, half
 *            or more but not all to bucket 2, all to bucket 3; each list
 *            becomes bucket 0, 1, 2, 3, each in its previous order
 *   ours     kmod/zonesort_policy.c
 *
 * usage: policysim PAGES_LOG2 SLOTS WAYS HOLES_PERMILLE SEED...
 * (SLOTS: below 64, the log2 of the number of slots; else the number,
 * which need not be a power of two: slot = pfn mod SLOTS)
 * (HOLES_PERMILLE: pages left allocated after aging, per mille, +-50%)
 * Prints one line per seed and allocation size, then mean lines.
 */
#include "../../kmod/zonesort_policy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXO 10
#define NPOL 5
static const char *polname[NPOL] = { "none", "address", "random", "buckets4", "ours" };

struct buddy {
	unsigned long npages;
	signed char *order;	/* order of the free block headed here, -1 if none */
	long *next, *prev;	/* list links; heads are npages + o */
};

static unsigned long long rs;

static unsigned long long rnd(void)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return rs;
}

static void *xcalloc(size_t n, size_t s)
{
	void *p = calloc(n ? n : 1, s);

	if (!p) {
		fprintf(stderr, "policysim: out of memory\n");
		exit(3);
	}
	return p;
}

static void b_init(struct buddy *b, unsigned long npages)
{
	b->npages = npages;
	b->order = xcalloc(npages, 1);
	b->next = xcalloc(npages + MAXO + 1, sizeof(long));
	b->prev = xcalloc(npages + MAXO + 1, sizeof(long));
	memset(b->order, -1, npages);
	for (int o = 0; o <= MAXO; o++)
		b->next[npages + o] = b->prev[npages + o] = (long)npages + o;
}

static void b_copy(struct buddy *d, const struct buddy *s)
{
	memcpy(d->order, s->order, s->npages);
	memcpy(d->next, s->next, (s->npages + MAXO + 1) * sizeof(long));
	memcpy(d->prev, s->prev, (s->npages + MAXO + 1) * sizeof(long));
}

static void l_del(struct buddy *b, long x)
{
	b->next[b->prev[x]] = b->next[x];
	b->prev[b->next[x]] = b->prev[x];
}

static void l_add_after(struct buddy *b, long at, long x)
{
	b->next[x] = b->next[at];
	b->prev[x] = at;
	b->prev[b->next[at]] = x;
	b->next[at] = x;
}

static void add_block(struct buddy *b, unsigned long pfn, int o, int tail)
{
	long h = (long)b->npages + o;

	b->order[pfn] = (signed char)o;
	l_add_after(b, tail ? b->prev[h] : h, (long)pfn);
}

static void b_free(struct buddy *b, unsigned long pfn)
{
	int o = 0;

	while (o < MAXO) {
		unsigned long buddy = pfn ^ (1UL << o);

		if (b->order[buddy] != o)
			break;
		l_del(b, (long)buddy);
		b->order[buddy] = -1;
		pfn &= ~(1UL << o);
		o++;
	}
	add_block(b, pfn, o, 0);
}

static long b_alloc(struct buddy *b)
{
	for (int o = 0; o <= MAXO; o++) {
		long h = (long)b->npages + o, x = b->next[h];

		if (x == h)
			continue;
		l_del(b, x);
		b->order[x] = -1;
		for (int k = o; k > 0; k--)
			add_block(b, (unsigned long)x + (1UL << (k - 1)), k - 1, 0);
		return x;
	}
	return -1;
}

/* List of order o as an array, head first. */
static size_t list_get(const struct buddy *b, int o, uint64_t *out)
{
	long h = (long)b->npages + o;
	size_t n = 0;

	for (long x = b->next[h]; x != h; x = b->next[x])
		out[n++] = (uint64_t)x;
	return n;
}

static void list_set(struct buddy *b, int o, const uint64_t *v, size_t n)
{
	long h = (long)b->npages + o;

	b->next[h] = b->prev[h] = h;
	for (size_t i = 0; i < n; i++)
		l_add_after(b, b->prev[h], (long)v[i]);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void apply_policy(struct buddy *b, int pol, uint64_t slots, unsigned ways, uint64_t *v,
			 uint64_t *tmp, struct zsp_state *st, unsigned char *mark)
{
	if (pol == 4)
		zsp_reset(st);
	if (pol == 3)
		memset(mark, 0, slots);
	for (int o = 0; o <= MAXO; o++) {
		size_t n = list_get(b, o, v);
		uint64_t bs = 1ULL << o;

		switch (pol) {
		case 0:
			break;
		case 1:
			qsort(v, n, sizeof(*v), cmp_u64);
			break;
		case 2:
			for (size_t i = n; i > 1; i--) {
				size_t j = rnd() % i;
				uint64_t t = v[i - 1];

				v[i - 1] = v[j];
				v[j] = t;
			}
			break;
		case 3: {
			size_t cnt[4] = { 0 }, pos[4];
			unsigned char *bucket = xcalloc(n, 1);

			for (size_t i = 0; i < n; i++) {
				uint64_t hit = 0, np = bs < slots ? bs : slots;

				for (uint64_t k = 0; k < np; k++)
					hit += mark[(v[i] + k) % slots];
				for (uint64_t k = 0; k < np; k++)
					mark[(v[i] + k) % slots] = 1;
				bucket[i] = hit == 0 ? 0 : 2 * hit < np ? 1 : hit < np ? 2 : 3;
				cnt[bucket[i]]++;
			}
			pos[0] = 0;
			for (int k = 1; k < 4; k++)
				pos[k] = pos[k - 1] + cnt[k - 1];
			for (size_t i = 0; i < n; i++)
				tmp[pos[bucket[i]]++] = v[i];
			memcpy(v, tmp, n * sizeof(*v));
			free(bucket);
			break;
		}
		case 4:
			/* as the module does on x86: huge-page faults start at order 9 */
			if (o == 9)
				zsp_mark_sequence(st);
			zsp_order_blocks(st, v, n, (unsigned)o, tmp);
			break;
		}
		list_set(b, o, v, n);
	}
	(void)ways;
}

/* Allocates `want` pages one by one; conflicted fraction. The buddy state
 * is consumed. */
static double next_alloc(struct buddy *b, const struct zsp_geom *g, uint64_t want,
			 uint32_t *counts)
{
	struct zsp_conflict c;

	zsp_conflict_init(&c, g, want, counts);
	for (uint64_t i = 0; i < want; i++) {
		long p = b_alloc(b);

		if (p < 0)
			break;
		zsp_conflict_feed(&c, (uint64_t)p, 0);
	}
	return c.taken ? (double)c.conflicted / c.taken : 0;
}

static int cmp_desc_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x > y ? -1 : x < y;
}

/*
 * A lower bound on the conflicting pages of the next allocation of `want`
 * pages under any ordering of the lists: the lists wholly consumed give
 * a fixed load; from the list consumed in part, the best choice of pages
 * ignoring that they come in blocks: first pages that fit in their slot,
 * then pages in slots that conflict already (one each), then new
 * conflicts in the slots with the most pages left (ways + 1 for the
 * first, one for each further page).
 */
static double bound(const struct buddy *b, uint64_t slots, unsigned ways, uint64_t want,
		    uint64_t *v, uint32_t *load, uint32_t *avail)
{
	uint64_t taken = 0, conflicted = 0, r = 0, zero = 0, c;
	int o;

	memset(load, 0, slots * sizeof(*load));
	memset(avail, 0, slots * sizeof(*avail));
	for (o = 0; o <= MAXO && taken < want; o++) {
		size_t n = list_get(b, o, v);
		uint64_t pages = (uint64_t)n << o;
		uint32_t *dst = taken + pages <= want ? load : avail;

		for (size_t i = 0; i < n; i++)
			for (uint64_t k = 0; k < (1ULL << o); k++)
				dst[(v[i] + k) % slots]++;
		if (dst == avail) {
			r = want - taken;
			taken = want;
		} else {
			taken += pages;
		}
	}
	for (c = 0; c < slots; c++) {
		uint32_t z = load[c] < ways ? ways - load[c] : 0;

		if (z > avail[c])
			z = avail[c];
		load[c] += z;
		avail[c] -= z;
		zero += z;
	}
	r = r > zero ? r - zero : 0;
	for (c = 0; c < slots && r; c++) {
		if (load[c] > ways && avail[c]) {
			uint64_t t = avail[c] < r ? avail[c] : r;

			load[c] += (uint32_t)t;
			avail[c] -= (uint32_t)t;
			r -= t;
		}
	}
	for (c = 0; c < slots; c++)
		if (load[c] > ways)
			conflicted += load[c];
	if (r) {
		for (c = 0; c < slots; c++)
			if (load[c] != ways)
				avail[c] = 0;
		qsort(avail, slots, sizeof(*avail), cmp_desc_u32);
		for (c = 0; c < slots && r; c++) {
			uint64_t t = avail[c] < r ? avail[c] : r;

			if (!t)
				break;
			conflicted += ways + t;
			r -= t;
		}
	}
	return (double)conflicted / want;
}

int main(int argc, char **argv)
{
	if (argc < 6) {
		fprintf(stderr, "usage: policysim PAGES_LOG2 SLOTS WAYS HOLES_PERMILLE SEED...\n");
		return 2;
	}
	unsigned long npages = 1UL << atoi(argv[1]);
	uint64_t slots = strtoull(argv[2], NULL, 10) < 64 ? 1ULL << atoi(argv[2]) : strtoull(argv[2], NULL, 10);
	unsigned ways = (unsigned)atoi(argv[3]);
	unsigned long holes = (unsigned long)atoi(argv[4]);
	struct buddy aged, work;
	uint64_t *v = xcalloc(npages, sizeof(*v)), *tmp = xcalloc(npages, sizeof(*tmp));
	uint32_t *counts = xcalloc(slots, sizeof(*counts));
	unsigned char *mark = xcalloc(slots, 1);
	uint32_t *bl = xcalloc(slots, sizeof(*bl)), *ba = xcalloc(slots, sizeof(*ba));
	struct zsp_geom geom;
	struct zsp_state st;
	void *stmem;
	double sum[2][NPOL] = { { 0 } }, bsum[2] = { 0 };
	int nseeds = argc - 5;

	if (zsp_geom_init(&geom, slots, ways)) {
		fprintf(stderr, "policysim: bad geometry\n");
		return 2;
	}
	stmem = xcalloc(1, zsp_state_bytes(&geom));
	zsp_init(&st, &geom, stmem);
	b_init(&aged, npages);
	b_init(&work, npages);
	for (int si = 5; si < argc; si++) {
		unsigned long seed = strtoul(argv[si], NULL, 10);
		unsigned long *live = xcalloc(npages, sizeof(*live));
		unsigned long nlive = 0, distinct = 0;

		rs = 0x9E3779B97F4A7C15ULL * (seed + 1);
		/* Boot: every max-order block, lowest address first. */
		memset(aged.order, -1, npages);
		for (int o = 0; o <= MAXO; o++)
			aged.next[npages + o] = aged.prev[npages + o] = (long)npages + o;
		for (unsigned long p = 0; p < npages; p += 1UL << MAXO)
			add_block(&aged, p, MAXO, 1);
		/* Aging: phases of filling to a random level, then freeing
		 * random pages down to a random level. */
		for (int phase = 0; phase < 12; phase++) {
			unsigned long hi = npages / 4 + rnd() % (npages / 2);
			unsigned long lo = npages * holes / 2000 + rnd() % (npages * holes / 1000 + 1);

			while (nlive < hi) {
				long p = b_alloc(&aged);

				if (p < 0)
					break;
				live[nlive++] = (unsigned long)p;
			}
			while (nlive > lo) {
				unsigned long i = rnd() % nlive;

				b_free(&aged, live[i]);
				live[i] = live[--nlive];
			}
		}
		memset(mark, 0, slots);
		for (int o = 0; o <= MAXO; o++) {
			size_t n = list_get(&aged, o, v);

			for (size_t i = 0; i < n; i++)
				for (uint64_t k = 0; k < (1ULL << o) && k < slots; k++)
					mark[(v[i] + k) % slots] = 1;
		}
		for (uint64_t s = 0; s < slots; s++)
			distinct += mark[s];
		for (int half = 0; half < 2; half++) {
			uint64_t want = half == 0 ? slots * ways / 2 : slots * ways;

			double lb = bound(&aged, slots, ways, want, v, bl, ba);

			bsum[half] += lb;
			printf("seed=%lu holes=%lu slots=%llu ways=%u alloc=%s free_pages=%lu free_slots=%lu bound=%.6f",
			       seed, holes, (unsigned long long)slots, ways, half == 0 ? "half" : "full",
			       npages - nlive, distinct, lb);
			for (int pol = 0; pol < NPOL; pol++) {
				double f;

				b_copy(&work, &aged);
				apply_policy(&work, pol, slots, ways, v, tmp, &st, mark);
				f = next_alloc(&work, &geom, want, counts);
				sum[half][pol] += f;
				printf(" %s=%.6f", polname[pol], f);
			}
			printf("\n");
		}
		free(live);
	}
	for (int half = 0; half < 2; half++) {
		printf("mean holes=%lu slots=%llu ways=%u alloc=%s seeds=%d bound=%.6f", holes,
		       (unsigned long long)slots, ways, half == 0 ? "half" : "full", nseeds, bsum[half] / nseeds);
		for (int pol = 0; pol < NPOL; pol++)
			printf(" %s=%.6f", polname[pol], sum[half][pol] / nseeds);
		printf("\n");
	}
	return 0;
}
