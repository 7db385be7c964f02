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
 *
 * usage: policysim remedy ... (below): what the sort cannot reach, and the
 * module's quarantine (kmod/zonesort_quarantine_policy.c).
 * usage: policysim churn ... and policysim order ... (below): the overflow
 * orders pile and spread after a job's start-up churn, and on small cases.
 * usage: policysim occupied ... (below): the slots a running job occupies.
 */
#include "../../kmod/zonesort_policy.h"
#include "../../kmod/zonesort_quarantine_policy.h"

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
/* Boots b (every max-order block, lowest address first) and ages it:
 * phases of filling to a random level, then freeing random pages down to
 * a random level (holes per mille left allocated, +-50%). live: npages
 * entries; the pages left allocated, *nlive of them. */
static void age(struct buddy *b, unsigned long npages, unsigned long holes, unsigned long *live,
		unsigned long *nlive)
{
	unsigned long n = 0;

	memset(b->order, -1, npages);
	for (int o = 0; o <= MAXO; o++)
		b->next[npages + o] = b->prev[npages + o] = (long)npages + o;
	for (unsigned long p = 0; p < npages; p += 1UL << MAXO)
		add_block(b, p, MAXO, 1);
	for (int phase = 0; phase < 12; phase++) {
		unsigned long hi = npages / 4 + rnd() % (npages / 2);
		unsigned long lo = npages * holes / 2000 + rnd() % (npages * holes / 1000 + 1);

		while (n < hi) {
			long p = b_alloc(b);

			if (p < 0)
				break;
			live[n++] = (unsigned long)p;
		}
		while (n > lo) {
			unsigned long i = rnd() % n;

			b_free(b, live[i]);
			live[i] = live[--n];
		}
	}
	*nlive = n;
}

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

/* ------------------------------------------------------------------------
 * policysim remedy PAGES_LOG2 SLOTS_LOG2 AGE_PAGES ROUNDS KEEP_PERMILLE
 *                  BUDGET_PERMILLE SEED...
 *
 * Below the sort's floor: what changes the set of free blocks. A node is
 * aged as the QEMU tests age it: R_RESERVED_PERMILLE of the pages at the
 * bottom stay allocated for good (the kernel), then ROUNDS times
 * AGE_PAGES pages are allocated one by one and freed in random order,
 * KEEP_PERMILLE of them kept for good (long-lived pages). Each remedy
 * then works on a copy of that state, and the next allocation goes
 * through the allocator: half of the cache in single pages (4k), half of
 * it in 2^9-page blocks falling back to single pages when no block of
 * order >= 9 is left (thp), all of the cache in single pages (4kfull).
 * Remedies:
 *   none          the lists as aging left them
 *   shuffle       every list shuffled (random placement)
 *   sortflat      kmod/zonesort_policy.c with one load through all orders
 *   sortreset     the same, the load forgotten at order 9
 *   sort          the module's sort (zsp_mark_sequence at order 9)
 *   quar          the module's quarantine (kmod/zonesort_quarantine_policy.c,
 *                 at most BUDGET_PERMILLE of the cache's pages), then sort
 *   compact_*     Linux's compaction of the node first (migration scanner
 *                 from the bottom, free scanner from the top, kept pages
 *                 moved up until they meet), then sortflat, sort or quar
 *   age1_quar, compact_age1_quar
 *                 one more round of aging (the same random sequence for
 *                 both) after nothing or after a compaction, then quar:
 *                 what the quarantine needs in the round after a
 *                 compaction, against the round after none
 * The collision count is the simulator's own (pages of the allocation
 * whose slot holds more than one of them); it shares no code with the
 * module.
 */
#define R_RESERVED_PERMILLE 80
enum r_huge { R_FLAT, R_RESET, R_HUGE };
struct r_remedy {
	const char *name;
	bool compact, shuffle, sort, quarantine;
	enum r_huge huge;
	bool age_after;		/* one more aging round before the sort */
};
static const struct r_remedy r_remedies[] = {
	{ "none", false, false, false, false, R_FLAT, false },
	{ "shuffle", false, true, false, false, R_FLAT, false },
	{ "sortflat", false, false, true, false, R_FLAT, false },
	{ "sortreset", false, false, true, false, R_RESET, false },
	{ "sort", false, false, true, false, R_HUGE, false },
	{ "quar", false, false, true, true, R_HUGE, false },
	{ "compact_sortflat", true, false, true, false, R_FLAT, false },
	{ "compact_sort", true, false, true, false, R_HUGE, false },
	{ "compact_quar", true, false, true, true, R_HUGE, false },
	{ "age1_quar", false, false, true, true, R_HUGE, true },
	{ "compact_age1_quar", true, false, true, true, R_HUGE, true },
};
#define R_NREM (sizeof(r_remedies) / sizeof(r_remedies[0]))

struct rnode {
	struct buddy b;
	unsigned char *used;	/* 0 free, 1 long-lived movable, 2 kernel, 3 quarantined */
};

static void r_copy(struct rnode *d, const struct rnode *s)
{
	b_copy(&d->b, &s->b);
	memcpy(d->used, s->used, s->b.npages);
}

/* Takes the free block at pfn (any order) out of the lists. */
static void r_take_block(struct rnode *n, unsigned long pfn, unsigned char how)
{
	int o = n->b.order[pfn];

	l_del(&n->b, (long)pfn);
	n->b.order[pfn] = -1;
	for (unsigned long k = 0; k < (1UL << o); k++)
		n->used[pfn + k] = how;
}

/* A node as booted: every max-order block free, lowest address first, but
 * the bottom R_RESERVED_PERMILLE of the pages, allocated for good (the
 * kernel's). Needs n->b and n->used of the node's size. */
static void r_boot(struct rnode *n)
{
	unsigned long npages = n->b.npages, reserved = npages * R_RESERVED_PERMILLE / 1000;

	memset(n->b.order, -1, npages);
	memset(n->used, 0, npages);
	for (int o = 0; o <= MAXO; o++)
		n->b.next[npages + o] = n->b.prev[npages + o] = (long)npages + o;
	for (unsigned long p = 0; p < npages; p += 1UL << MAXO)
		add_block(&n->b, p, MAXO, 1);
	for (unsigned long p = 0; p < reserved; p++)
		if (n->b.order[p] >= 0)
			r_take_block(n, p, 2);
	for (unsigned long p = 0; p < reserved; p++)
		n->used[p] = 2;
}

/* Shuffles pages[0, n). */
static void r_shuffle_pages(unsigned long *pages, unsigned long n)
{
	for (unsigned long i = n; i > 1; i--) {
		unsigned long j = rnd() % i, t = pages[i - 1];

		pages[i - 1] = pages[j];
		pages[j] = t;
	}
}

static void r_free_page(struct rnode *n, unsigned long pfn)
{
	n->used[pfn] = 0;
	b_free(&n->b, pfn);
}

static long r_alloc_order(struct buddy *b, int order);

/* One round of aging: age pages allocated one by one, freed in random
 * order but keep per mille of them (pages: age entries of scratch).
 * Returns the pages kept. */
static unsigned long r_age(struct rnode *n, unsigned long *pages, unsigned long age, unsigned keep)
{
	unsigned long got = 0, kept = 0;

	for (; got < age; got++) {
		long p = r_alloc_order(&n->b, 0);

		if (p < 0)
			break;
		pages[got] = (unsigned long)p;
		n->used[p] = 1;
	}
	r_shuffle_pages(pages, got);
	for (unsigned long i = 0; i < got; i++) {
		if (rnd() % 1000 < keep) {
			kept++;
			continue;
		}
		r_free_page(n, pages[i]);
	}
	return kept;
}

/* Linux's compaction of a whole zone (compact_node, order -1): the
 * migration scanner walks pageblocks upwards moving every movable page
 * to free pages that the free scanner isolates pageblock by pageblock
 * from the top, until the two meet; isolated free pages left over are
 * freed again. */
static void r_compact(struct rnode *n)
{
	const unsigned long pb = 1UL << 9, npages = n->b.npages;
	unsigned long *iso = xcalloc(npages, sizeof(*iso)), niso = 0, next = 0;
	long free_pb = (long)(npages / pb) - 1;

	for (long mig_pb = 0; mig_pb < free_pb; mig_pb++) {
		for (unsigned long p = (unsigned long)mig_pb * pb; p < (unsigned long)(mig_pb + 1) * pb; p++) {
			if (n->used[p] != 1)
				continue;
			while (next == niso && free_pb > mig_pb) {
				unsigned long lo = (unsigned long)free_pb * pb;

				for (unsigned long q = lo; q < lo + pb;) {
					int o = n->b.order[q];

					if (o < 0) {
						q++;
						continue;
					}
					r_take_block(n, q, 0);
					for (unsigned long k = 0; k < (1UL << o); k++)
						iso[niso++] = q + k;
					q += 1UL << o;
				}
				free_pb--;
			}
			if (next == niso)
				goto out;
			n->used[iso[next++]] = 1;
			r_free_page(n, p);
		}
	}
out:
	while (next < niso)
		b_free(&n->b, iso[next++]);
	free(iso);
}

/* Sorts every list, orders ascending; with q, first takes the blocks the
 * quarantine policy picks (as the module's hook does). Returns the pages
 * taken. */
static uint64_t r_sort(struct rnode *n, struct zsp_state *st, struct zsq_pick *q, uint64_t *v,
		       uint64_t *tmp, enum r_huge huge, uint64_t *taken_huge)
{
	zsp_reset(st);
	if (q)
		zsq_pick_zone(q, 0);
	for (int o = 0; o <= MAXO; o++) {
		size_t cnt = list_get(&n->b, o, v), kept = cnt;

		if (o == 9 && huge == R_HUGE)
			zsp_mark_sequence(st);
		if (o == 9 && huge == R_RESET)
			zsp_reset(st);
		if (q && o == 9)
			zsq_pick_huge(q, 0);
		if (q) {
			/* From order 9 on, against the huge-page
			 * sequence too, as the module's hook does. */
			struct zsq_held_split none;

			kept = zsq_pick_list(q, st->load, st->marked ? st->tload : NULL, v, cnt, 0,
					     (unsigned)o, tmp, &none);
			for (size_t i = kept; i < cnt; i++)
				r_take_block(n, (unsigned long)v[i], 3);
			if (o >= 9)
				*taken_huge += (uint64_t)(cnt - kept) << o;
		}
		zsp_order_blocks(st, v, kept, (unsigned)o, tmp);
		list_set(&n->b, o, v, kept);
	}
	return q ? q->taken : 0;
}

static void r_shuffle(struct rnode *n, uint64_t *v)
{
	for (int o = 0; o <= MAXO; o++) {
		size_t cnt = list_get(&n->b, o, v);

		for (size_t i = cnt; i > 1; i--) {
			size_t j = rnd() % i;
			uint64_t t = v[i - 1];

			v[i - 1] = v[j];
			v[j] = t;
		}
		list_set(&n->b, o, v, cnt);
	}
}

/* The allocator taking one block of 2^order pages (Linux's
 * __rmqueue_smallest: head of the lowest non-empty list of at least that
 * order, upper halves of a split to the heads of the lists below). */
static long r_alloc_order(struct buddy *b, int order)
{
	for (int o = order; o <= MAXO; o++) {
		long h = (long)b->npages + o, x = b->next[h];

		if (x == h)
			continue;
		l_del(b, x);
		b->order[x] = -1;
		for (int k = o; k > order; k--)
			add_block(b, (unsigned long)x + (1UL << (k - 1)), k - 1, 0);
		return x;
	}
	return -1;
}

/* Allocates want pages (thp: in 2^9-page blocks while there are any);
 * the fraction of them whose slot holds more than one of them. */
static double r_measure(struct buddy *b, uint64_t slots, uint64_t want, int thp, uint32_t *count)
{
	uint64_t got = 0, conflicted = 0;

	memset(count, 0, slots * sizeof(*count));
	while (got < want) {
		long p = thp && want - got >= 512 ? r_alloc_order(b, 9) : -1;
		uint64_t np = 512;

		if (p < 0) {
			p = r_alloc_order(b, 0);
			np = 1;
		}
		if (p < 0)
			break;
		for (uint64_t k = 0; k < np; k++)
			count[((uint64_t)p + k) & (slots - 1)]++;
		got += np;
	}
	for (uint64_t s = 0; s < slots; s++)
		if (count[s] > 1)
			conflicted += count[s];
	return got ? (double)conflicted / got : 0;
}

static int remedy_main(int argc, char **argv)
{
	if (argc < 8) {
		fprintf(stderr, "usage: policysim remedy PAGES_LOG2 SLOTS_LOG2 AGE_PAGES ROUNDS KEEP_PERMILLE BUDGET_PERMILLE SEED...\n");
		return 2;
	}
	unsigned long npages = 1UL << atoi(argv[1]);
	uint64_t slots = 1ULL << atoi(argv[2]);
	unsigned long age = strtoul(argv[3], NULL, 10);
	int rounds = atoi(argv[4]);
	unsigned keep = (unsigned)atoi(argv[5]);
	uint64_t budget = slots * (uint64_t)atoi(argv[6]) / 1000;
	int nseeds = argc - 7;
	struct rnode aged, work;
	uint64_t *v = xcalloc(npages, sizeof(*v)), *tmp = xcalloc(npages, sizeof(*tmp));
	uint32_t *count = xcalloc(slots, sizeof(*count));
	unsigned long *pages = xcalloc(age, sizeof(*pages));
	struct zsp_geom geom;
	struct zsp_state st;
	double sum[3][R_NREM] = { { 0 } }, held[R_NREM] = { 0 }, held_huge[R_NREM] = { 0 };
	static const char *alloc_name[3] = { "4k", "thp", "4kfull" };

	if (zsp_geom_init(&geom, slots, 1) || age > npages) {
		fprintf(stderr, "policysim: bad geometry or age\n");
		return 2;
	}
	zsp_init(&st, &geom, xcalloc(1, zsp_state_bytes(&geom)));
	b_init(&aged.b, npages);
	b_init(&work.b, npages);
	aged.used = xcalloc(npages, 1);
	work.used = xcalloc(npages, 1);
	for (int si = 7; si < argc; si++) {
		unsigned long seed = strtoul(argv[si], NULL, 10), kept = 0;

		rs = 0x9E3779B97F4A7C15ULL * (seed + 1);
		r_boot(&aged);
		for (int r = 0; r < rounds; r++)
			kept += r_age(&aged, pages, age, keep);
		printf("seed=%lu kept=%lu", seed, kept);
		for (int a = 0; a < 3; a++) {
			int thp = a == 1;

			for (size_t m = 0; m < R_NREM; m++) {
				const struct r_remedy *rem = &r_remedies[m];
				struct zsq_pick q;
				uint64_t taken = 0, taken_huge = 0, saved = rs;
				double f;

				r_copy(&work, &aged);
				if (rem->compact)
					r_compact(&work);
				if (rem->age_after) {
					rs = 0x9E3779B97F4A7C15ULL * (seed + 2);
					r_age(&work, pages, age, keep);
					rs = saved;
				}
				if (rem->shuffle)
					r_shuffle(&work, v);
				zsq_pick_init(&q, &geom, slots / 2, budget);
				if (rem->sort)
					taken = r_sort(&work, &st, rem->quarantine ? &q : NULL, v, tmp, rem->huge,
						       &taken_huge);
				f = r_measure(&work.b, slots, a == 2 ? slots : slots / 2, thp, count);
				sum[a][m] += f;
				if (!a) {
					held[m] += (double)taken;
					held_huge[m] += (double)taken_huge;
				}
				printf(" %s_%s=%.6f", alloc_name[a], rem->name, f);
				if (!a && rem->quarantine)
					printf(" %s_held=%llu %s_held_huge=%llu %s_short=%llu", rem->name,
					       (unsigned long long)taken, rem->name, (unsigned long long)taken_huge,
					       rem->name, (unsigned long long)q.short_pages);
			}
		}
		printf("\n");
	}
	printf("mean seeds=%d kept_permille=%u budget=%llu", nseeds, keep, (unsigned long long)budget);
	for (int a = 0; a < 3; a++)
		for (size_t m = 0; m < R_NREM; m++)
			printf(" %s_%s=%.6f", alloc_name[a], r_remedies[m].name, sum[a][m] / nseeds);
	for (size_t m = 0; m < R_NREM; m++)
		if (r_remedies[m].quarantine)
			printf(" %s_held=%.0f %s_held_huge=%.0f", r_remedies[m].name, held[m] / nseeds,
			       r_remedies[m].name, held_huge[m] / nseeds);
	printf("\n");
	free(pages);
	return 0;
}


/* Pages of pg[0..n) whose slot holds another of them (direct-mapped).
 * cnt: slots entries of scratch. */
static unsigned long colliding(const unsigned long *pg, unsigned long n, uint64_t slots, uint32_t *cnt)
{
	unsigned long c = 0;

	memset(cnt, 0, slots * sizeof(*cnt));
	for (unsigned long i = 0; i < n; i++)
		cnt[pg[i] % slots]++;
	for (unsigned long i = 0; i < n; i++)
		c += cnt[pg[i] % slots] > 1;
	return c;
}

/* Takes up to n pages from b into pg; how many it got. */
static unsigned long take(struct buddy *b, unsigned long *pg, unsigned long n)
{
	unsigned long got = 0;

	while (got < n) {
		long p = b_alloc(b);

		if (p < 0)
			break;
		pg[got++] = (unsigned long)p;
	}
	return got;
}

/*
 * usage: policysim churn PAGES_LOG2 SLOTS_LOG2 LEVEL_PERMILLE HOLES_PERMILLE SEED...
 * A job's start-up after the sort, direct-mapped: an aged state is left
 * unsorted ("none") or sorted with the overflow order pile or spread
 * (zsp_set_overflow); then chunks of 1-512 pages are taken up to LEVEL
 * per mille of the cache, a random half of the chunks is freed, and a
 * buffer of half the cache is taken. Per seed and mean: the buffer's
 * colliding fraction (buffer), the churn's pages colliding within their
 * own chunk (chunkself), and, from the same sorted state with no churn,
 * the pages of a job of twice the cache alone in their slot (big2x_alone:
 * the ones that can hit).
 */
static int churn_main(int argc, char **argv)
{
	static const char *const names[] = { "none", "pile", "spread" };
	enum { NK = 3 };

	if (argc < 6) {
		fprintf(stderr, "usage: policysim churn PAGES_LOG2 SLOTS_LOG2 LEVEL_PERMILLE HOLES_PERMILLE SEED...\n");
		return 2;
	}
	unsigned long npages = 1UL << atoi(argv[1]);
	uint64_t slots = 1ULL << atoi(argv[2]);
	unsigned long level = strtoul(argv[3], NULL, 10), holes = strtoul(argv[4], NULL, 10);
	unsigned long *live = xcalloc(npages, sizeof(*live)), nlive;
	unsigned long *cp = xcalloc(npages, sizeof(*cp)), *cstart = xcalloc(npages + 1, sizeof(*cstart));
	unsigned long *perm = xcalloc(npages, sizeof(*perm)), *buf = xcalloc(npages, sizeof(*buf));
	uint64_t *v = xcalloc(npages, sizeof(*v)), *tmp = xcalloc(npages, sizeof(*tmp));
	uint32_t *cnt = xcalloc(slots, sizeof(*cnt));
	unsigned char *mark = xcalloc(slots, 1);
	double sb[NK] = { 0 }, sc[NK] = { 0 }, sa[NK] = { 0 };
	int nseeds = argc - 5;
	struct buddy aged, work;
	struct zsp_geom geom;
	struct zsp_state st;

	if (zsp_geom_init(&geom, slots, 1) || 2 * slots > npages) {
		fprintf(stderr, "policysim: bad geometry\n");
		return 2;
	}
	zsp_init(&st, &geom, xcalloc(1, zsp_state_bytes(&geom)));
	b_init(&aged, npages);
	b_init(&work, npages);
	for (int si = 5; si < argc; si++) {
		unsigned long seed = strtoul(argv[si], NULL, 10);

		rs = 0x9E3779B97F4A7C15ULL * (seed + 1);
		age(&aged, npages, holes, live, &nlive);
		printf("seed=%lu level=%lu", seed, level);
		for (int k = 0; k < NK; k++) {
			unsigned long nch = 0, np = 0, want = slots * level / 1000, self = 0, nb, nbig;
			unsigned long long save = rs;
			double fb, alone;

			zsp_set_overflow(&st, k == 2 ? ZSP_SPREAD : ZSP_PILE);
			b_copy(&work, &aged);
			if (k)
				apply_policy(&work, 4, slots, 1, v, tmp, &st, mark);
			while (np < want) {
				unsigned long len = 1 + rnd() % 512, got;

				cstart[nch++] = np;
				got = take(&work, cp + np, len < want - np ? len : want - np);
				np += got;
				if (!got)
					break;
			}
			cstart[nch] = np;
			for (unsigned long c = 0; c < nch; c++)
				self += colliding(cp + cstart[c], cstart[c + 1] - cstart[c], slots, cnt);
			for (unsigned long c = 0; c < nch; c++)
				perm[c] = c;
			for (unsigned long c = nch; c > 1; c--) {
				unsigned long j = rnd() % c, t = perm[c - 1];

				perm[c - 1] = perm[j];
				perm[j] = t;
			}
			for (unsigned long c = 0; c < nch / 2; c++)
				for (unsigned long i = cstart[perm[c]]; i < cstart[perm[c] + 1]; i++)
					b_free(&work, cp[i]);
			nb = take(&work, buf, slots / 2);
			fb = nb ? (double)colliding(buf, nb, slots, cnt) / nb : 0;

			b_copy(&work, &aged);
			if (k)
				apply_policy(&work, 4, slots, 1, v, tmp, &st, mark);
			nbig = take(&work, buf, 2 * slots);
			alone = nbig ? 1.0 - (double)colliding(buf, nbig, slots, cnt) / nbig : 0;

			rs = save;	/* every order meets the same churn */
			sb[k] += fb;
			sc[k] += np ? (double)self / np : 0;
			sa[k] += alone;
			printf(" %s:buffer=%.4f,chunkself=%.4f,big2x_alone=%.4f", names[k], fb,
			       np ? (double)self / np : 0, alone);
		}
		printf("\n");
	}
	printf("mean level=%lu holes=%lu seeds=%d", level, holes, nseeds);
	for (int k = 0; k < NK; k++)
		printf(" %s:buffer=%.4f,chunkself=%.4f,big2x_alone=%.4f", names[k], sb[k] / nseeds,
		       sc[k] / nseeds, sa[k] / nseeds);
	printf("\n");
	return 0;
}

/*
 * usage: policysim order COLORS WAYS pile|spread ORDER PFN... [--occupied SLOT,...]
 * One list of blocks of 2^ORDER pages, in hand-out order, after an empty
 * sequence: prints the pfns in the order zsp_order_blocks gives them, for
 * cases worked out by hand. --occupied: the slots a running job occupies
 * (zsp_set_seed).
 */
static int order_main(int argc, char **argv)
{
	struct zsp_geom geom;
	struct zsp_state st;
	const char *occupied = NULL;
	int spread = argc > 3 && !strcmp(argv[3], "spread");

	if (argc > 7 && !strcmp(argv[argc - 2], "--occupied")) {
		occupied = argv[argc - 1];
		argc -= 2;
	}
	size_t n = argc > 5 ? (size_t)(argc - 5) : 0;
	uint64_t *v = xcalloc(n + 1, sizeof(*v)), *tmp = xcalloc(n + 1, sizeof(*tmp));

	if (argc < 6 || zsp_geom_init(&geom, strtoull(argv[1], NULL, 10), (unsigned)atoi(argv[2])) ||
	    (!spread && strcmp(argv[3], "pile"))) {
		fprintf(stderr, "usage: policysim order COLORS WAYS pile|spread ORDER PFN... [--occupied SLOT,...]\n");
		return 2;
	}
	zsp_init(&st, &geom, xcalloc(1, zsp_state_bytes(&geom)));
	zsp_set_overflow(&st, spread ? ZSP_SPREAD : ZSP_PILE);
	if (occupied) {
		uint8_t *bits = xcalloc((geom.nslots + 7) / 8, 1);

		for (const char *p = occupied; *p;) {
			char *end;
			unsigned long long slot = strtoull(p, &end, 10);

			if (end == p || slot >= geom.nslots) {
				fprintf(stderr, "policysim: --occupied '%s': want slots below %llu, comma-separated\n",
					occupied, (unsigned long long)geom.nslots);
				return 2;
			}
			bits[slot / 8] |= (uint8_t)(1u << (slot % 8));
			p = *end == ',' ? end + 1 : end;
		}
		zsp_set_seed(&st, bits);
	}
	zsp_reset(&st);
	for (size_t i = 0; i < n; i++)
		v[i] = strtoull(argv[5 + i], NULL, 10);
	zsp_order_blocks(&st, v, n, (unsigned)atoi(argv[4]), tmp);
	for (size_t i = 0; i < n; i++)
		printf("%s%llu", i ? " " : "", (unsigned long long)v[i]);
	printf("\n");
	return 0;
}

/*
 * usage: policysim occupied PAGES_LOG2 SLOTS_LOG2 HOLES_PERMILLE OCCUPIED_PERMILLE SEED...
 * The slots a running job occupies (zsp_set_seed) without the quarantine:
 * per seed an aged state (as the main mode ages), OCCUPIED_PERMILLE of the
 * slots drawn at random as the job's, the lists ordered by the module's
 * policy without and with them, and a half-cache allocation taken from
 * each: its conflicted fraction and the fraction of its pages on the
 * job's slots. Prints one line per seed, then a mean line:
 *   mean plain:conflict=F,on_occupied=F seeded:conflict=F,on_occupied=F
 */
static int occupied_main(int argc, char **argv)
{
	if (argc < 6) {
		fprintf(stderr, "usage: policysim occupied PAGES_LOG2 SLOTS_LOG2 HOLES_PERMILLE OCCUPIED_PERMILLE SEED...\n");
		return 2;
	}
	unsigned long npages = 1UL << atoi(argv[1]);
	uint64_t slots = 1ULL << atoi(argv[2]), want = slots / 2;
	unsigned long holes = (unsigned long)atoi(argv[3]), occ = (unsigned long)atoi(argv[4]);
	struct buddy aged, work;
	struct zsp_geom g;
	struct zsp_state st;
	uint64_t *v = xcalloc(npages, sizeof(*v)), *tmp = xcalloc(npages, sizeof(*tmp));
	uint32_t *counts = xcalloc(slots, sizeof(*counts));
	unsigned long *live = xcalloc(npages, sizeof(*live)), nlive;
	uint8_t *bits = xcalloc(slots / 8 + 1, 1);
	double sum[2][2] = { { 0 } };
	int nseeds = argc - 5;

	if (zsp_geom_init(&g, slots, 1) || occ > 1000) {
		fprintf(stderr, "policysim: occupied: bad geometry or OCCUPIED_PERMILLE above 1000\n");
		return 2;
	}
	zsp_init(&st, &g, xcalloc(1, zsp_state_bytes(&g)));
	b_init(&aged, npages);
	b_init(&work, npages);
	for (int si = 5; si < argc; si++) {
		rs = strtoull(argv[si], NULL, 10) * 0x9E3779B97F4A7C15ULL + 1;
		age(&aged, npages, holes, live, &nlive);
		memset(bits, 0, slots / 8 + 1);
		for (uint64_t k = 0; k < slots; k++)
			if (rnd() % 1000 < occ)
				bits[k / 8] |= (uint8_t)(1u << (k % 8));
		printf("seed %s", argv[si]);
		for (int seeded = 0; seeded < 2; seeded++) {
			uint64_t on = 0, taken = 0;
			struct zsp_conflict c;

			b_copy(&work, &aged);
			zsp_set_seed(&st, seeded ? bits : NULL);
			apply_policy(&work, 4, slots, 1, v, tmp, &st, NULL);
			zsp_conflict_init(&c, &g, want, counts);
			for (uint64_t i = 0; i < want; i++) {
				long p = b_alloc(&work);
				uint64_t k;

				if (p < 0)
					break;
				k = (uint64_t)p % slots;
				on += (bits[k / 8] >> (k % 8)) & 1;
				taken++;
				zsp_conflict_feed(&c, (uint64_t)p, 0);
			}
			double conf = c.taken ? (double)c.conflicted / c.taken : 0;
			double frac = taken ? (double)on / taken : 0;

			sum[seeded][0] += conf;
			sum[seeded][1] += frac;
			printf(" %s:conflict=%.4f,on_occupied=%.4f", seeded ? "seeded" : "plain", conf, frac);
		}
		printf("\n");
	}
	printf("mean plain:conflict=%.4f,on_occupied=%.4f seeded:conflict=%.4f,on_occupied=%.4f\n",
	       sum[0][0] / nseeds, sum[0][1] / nseeds, sum[1][0] / nseeds, sum[1][1] / nseeds);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "occupied"))
		return occupied_main(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "churn"))
		return churn_main(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "order"))
		return order_main(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "remedy"))
		return remedy_main(argc - 1, argv + 1);
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
		age(&aged, npages, holes, live, &nlive);
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
