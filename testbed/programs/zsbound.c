// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * zsbound: what the next allocation could at best get from the free lists
 * as they were, computed in user space independently of the module's
 * policy code (its own slot formula, its own greedy): the pass mark of
 * the kmod tests. Guest side, linked statically.
 *
 *   zsbound DIR SLOTS WAYS WANT_PAGES CPU base|thp
 *
 * DIR is what `zstest measure --dump DIR` saved right before its
 * allocation: the module's free-list dump (freelists), /proc/pagetypeinfo
 * and /proc/kpageflags, and the pfns the allocation got (pfns).
 *
 * The dump is checked against the kernel's own views first: every list's
 * length against /proc/pagetypeinfo (pti_diff: blocks that differ, of
 * pti_blocks compared), every free block's first page against the buddy
 * flag of /proc/kpageflags (buddy_missing).
 *
 * The allocation: WANT_PAGES movable pages on CPU, in the highest zone of
 * node 0, as base pages (the CPU's order-0 per-CPU list, then the free
 * lists from order 0 up) or transparent huge pages (the CPU's huge-page
 * per-CPU list, then the free lists from the huge-page order up). Sorting
 * may reorder each list but not move a block between lists, so the lists
 * the allocation consumes whole load the slots the same whatever their
 * order; from the list it consumes in part, the bound takes the best
 * pages one by one, as if blocks could be split at will: first pages
 * whose slot still has room (fewer than WAYS pages of the allocation),
 * then pages in slots that already overflow (each costs itself), then it
 * opens new overflowing slots, those with the most pages left first (the
 * first page costs WAYS + 1: it makes the WAYS already there collide).
 * A second bound keeps blocks whole (block_bound): whole blocks and the
 * first pages of one more, as the allocator hands them out; the larger
 * one counts. No order of the lists does better: bound is a lower bound
 * on the fraction of the allocation's pages that share a slot beyond its
 * ways.
 *
 * Prints key=value: bound, measured (the same fraction computed here from
 * the pfns, slot = pfn mod SLOTS), predicted (what the lists in the order
 * dumped would give, to check the allocator model), random (the expectation for pages
 * placed at random: a page collides when at least WAYS others of the n
 * land in its slot; for huge pages, 2 MiB units over SLOTS/512 slots),
 * free_pages, order_top_share (of the zone's free movable pages, the share
 * in blocks of the largest order), thp_pages (free movable pages in
 * blocks of the huge-page order and up), zone, pcp_movable (movable
 * order-0 pages in node 0's per-CPU lists, at most 256 a list: what the
 * module's last_pcp_pages counts), where the lists as dumped lose against
 * the bound (part_order ..., see where_lost), the same bound and
 * prediction up to the last whole block the allocation takes (whole_bound,
 * whole_predicted over whole_pages; tail_pages come from the block it
 * ends in), and the checks above.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXORD 16
#define MAXMT 8
#define MAXZONES 8
#define MT_MOVABLE 1
#define KPF_BUDDY 10

struct list {
	char kind;		/* 'F' free list, 'P' per-CPU list */
	int node, cpu, mt, order;
	char zone[16];
	uint64_t *pfn;
	size_t n;
};

static struct list *lists;
static size_t nlists;
static int thp_order = -1, nr_orders;

static void fail(const char *what)
{
	fprintf(stderr, "zsbound: %s: %s\n", what, errno ? strerror(errno) : "bad input");
	exit(3);
}

static void *xcalloc(size_t n, size_t s)
{
	void *p = calloc(n ? n : 1, s);

	if (!p)
		fail("calloc");
	return p;
}

static char *read_file(const char *dir, const char *name, size_t *len)
{
	char path[4096];
	FILE *f;
	char *buf;
	long sz;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "rb");
	if (!f || fseek(f, 0, SEEK_END) || (sz = ftell(f)) < 0 || fseek(f, 0, SEEK_SET))
		fail(path);
	buf = xcalloc((size_t)sz + 1, 1);
	if (fread(buf, 1, (size_t)sz, f) != (size_t)sz)
		fail(path);
	fclose(f);
	*len = (size_t)sz;
	return buf;
}

static void parse_dump(char *text)
{
	size_t cap = 256;
	char *save = NULL;

	lists = xcalloc(cap, sizeof(*lists));
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct list l = { 0 };
		int off = 0, pbo;
		char *p;
		size_t count;

		if (sscanf(line, "orders %d pageblock_order %d thp_order %d", &nr_orders, &pbo,
			   &thp_order) == 3)
			continue;
		l.kind = line[0];
		if (l.kind == 'F') {
			if (sscanf(line, "F %d %15s %d %d %zu%n", &l.node, l.zone, &l.mt, &l.order, &count,
				   &off) != 5)
				fail("freelists line");
		} else if (l.kind == 'P') {
			if (sscanf(line, "P %d %15s %d %d %d %zu%n", &l.node, l.zone, &l.cpu, &l.mt,
				   &l.order, &count, &off) != 6)
				fail("freelists line");
		} else {
			fail("freelists line kind");
		}
		if (strstr(line, "truncated"))
			fail("freelists has a truncated list");
		if (l.order < 0 || l.order >= MAXORD || l.mt < 0 || l.mt >= MAXMT)
			fail("freelists order or migratetype");
		l.pfn = xcalloc(count, sizeof(*l.pfn));
		p = line + off;
		for (size_t i = 0; i < count; i++) {
			char *end;

			l.pfn[i] = strtoull(p, &end, 16);
			if (end == p)
				fail("freelists pfn");
			p = end;
		}
		l.n = count;
		if (nlists == cap)
			lists = realloc(lists, (cap *= 2) * sizeof(*lists));
		if (!lists)
			fail("realloc");
		lists[nlists++] = l;
	}
	if (thp_order < 0 || !nr_orders)
		fail("freelists header");
}

static struct list *find(char kind, int node, const char *zone, int cpu, int mt, int order)
{
	for (size_t i = 0; i < nlists; i++) {
		struct list *l = &lists[i];

		if (l->kind == kind && l->node == node && !strcmp(l->zone, zone) && l->mt == mt &&
		    l->order == order && (kind == 'F' || l->cpu == cpu))
			return l;
	}
	return NULL;
}

/* Lists of the dump against /proc/pagetypeinfo's free counts of node 0. */
static void check_pagetypeinfo(char *text, long *diff, long *compared)
{
	char *save = NULL, zone[16] = "";
	int mt = 0;

	*diff = *compared = 0;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		int node, off;
		char z[16], type[32];
		char *p;

		if (!strncmp(line, "Number of blocks", 16))
			break;
		if (sscanf(line, "Node %d, zone %15[^,], type %31s%n", &node, z, type, &off) != 3 ||
		    node != 0)
			continue;
		if (strcmp(z, zone)) {
			snprintf(zone, sizeof(zone), "%s", z);
			mt = 0;
		}
		p = line + off;
		for (int o = 0; o < nr_orders; o++) {
			struct list *l = find('F', 0, zone, 0, mt, o);
			char *end;
			long v;

			while (*p == ' ')
				p++;
			if (*p == '>') {	/* ">100000": capped, not compared */
				strtol(p + 1, &end, 10);
				p = end;
				continue;
			}
			v = strtol(p, &end, 10);
			if (end == p)
				break;
			p = end;
			*compared += v;
			*diff += labs(v - (long)(l ? l->n : 0));
		}
		mt++;
	}
}

static int cmp_desc(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x > y ? -1 : x < y;
}

/* Pages of the allocation in a slot that holds y of them. */
static uint64_t overflow(uint64_t y, uint64_t ways)
{
	return y > ways ? y : 0;
}

struct segment {
	double slope;
	uint64_t units;
};

static int cmp_slope(const void *a, const void *b)
{
	double x = ((const struct segment *)a)->slope, y = ((const struct segment *)b)->slope;

	return x < y ? -1 : x > y;
}

/* c[t] for t = 0..n with the first r of the size slots from first
 * holding one page more: t whole blocks and the first r pages of one
 * more block (a block's pages are handed out lowest address first). */
static void group_costs_part(double *c, const uint32_t *load, uint64_t first, uint64_t size, uint64_t r,
			     uint64_t n, uint64_t ways)
{
	for (uint64_t t = 0; t <= n; t++) {
		c[t] = 0;
		for (uint64_t s = first; s < first + size; s++)
			c[t] += overflow(load[s] + t + (s < first + r), ways);
	}
}

/* c[t] for t = 0..n: what t more pages on each of the size slots from
 * first cost, given their load. */
static void group_costs(double *c, const uint32_t *load, uint64_t first, uint64_t size, uint64_t n,
			uint64_t ways)
{
	group_costs_part(c, load, first, size, 0, n, ways);
}

/* The cheapest q whole blocks and, when r > 0, the first r pages of one
 * more block, exactly: dynamic programming over the groups, the number
 * of whole blocks taken so far and whether the partial one is. */
static double cheapest_exact(const uint32_t *avail, uint64_t groups, uint64_t size, uint64_t q, uint64_t r,
			     const uint32_t *load, uint64_t ways, double *c, double *cp)
{
	double *best[2], *next[2], res;
	int parts = r ? 2 : 1;

	for (int f = 0; f < 2; f++) {
		best[f] = xcalloc(q + 1, sizeof(double));
		next[f] = xcalloc(q + 1, sizeof(double));
		for (uint64_t k = 0; k <= q; k++)
			best[f][k] = k || f ? HUGE_VAL : 0;
	}
	for (uint64_t g = 0; g < groups; g++) {
		if (!avail[g])
			continue;
		group_costs(c, load, g * size, size, avail[g], ways);
		if (r)
			group_costs_part(cp, load, g * size, size, r, avail[g] - 1, ways);
		for (int f = 0; f < parts; f++)
			for (uint64_t k = 0; k <= q; k++) {
				double v = best[f][k];

				for (uint64_t t = 1; t <= avail[g] && t <= k; t++)
					if (best[f][k - t] + c[t] - c[0] < v)
						v = best[f][k - t] + c[t] - c[0];
				/* group g also gives the partial block */
				for (uint64_t t = 0; f && t < avail[g] && t <= k; t++)
					if (best[0][k - t] + cp[t] - c[0] < v)
						v = best[0][k - t] + cp[t] - c[0];
				next[f][k] = v;
			}
		for (int f = 0; f < parts; f++)
			memcpy(best[f], next[f], (q + 1) * sizeof(double));
	}
	/* no group has a block to spare for the partial one: whole blocks */
	res = best[parts - 1][q] < HUGE_VAL ? best[parts - 1][q] : best[0][q];
	if (res == HUGE_VAL)
		res = 0;
	for (int f = 0; f < 2; f++) {
		free(best[f]);
		free(next[f]);
	}
	return res;
}

/* A lower bound on the cheapest q blocks: the same problem over the lower
 * convex envelope of each group's costs, which taking the flattest
 * envelope segments first solves. */
static double cheapest_envelope(const uint32_t *avail, uint64_t groups, uint64_t size, uint64_t q,
				uint64_t nblocks, const uint32_t *load, uint64_t ways, double *c)
{
	uint64_t *hull = xcalloc(nblocks + 1, sizeof(*hull)), nseg = 0;
	struct segment *seg = xcalloc(nblocks + 1, sizeof(*seg));
	double r = 0;

	for (uint64_t g = 0; g < groups; g++) {
		uint64_t nh = 0;

		if (!avail[g])
			continue;
		group_costs(c, load, g * size, size, avail[g], ways);
		for (uint64_t t = 0; t <= avail[g]; t++) {
			/* drop the last point while it lies on or above the
			 * line from the one before it to t */
			while (nh >= 2) {
				uint64_t a = hull[nh - 2], b = hull[nh - 1];

				if ((c[b] - c[a]) * (double)(t - a) < (c[t] - c[a]) * (double)(b - a))
					break;
				nh--;
			}
			hull[nh++] = t;
		}
		for (uint64_t i = 1; i < nh; i++) {
			seg[nseg].units = hull[i] - hull[i - 1];
			seg[nseg].slope = (c[hull[i]] - c[hull[i - 1]]) / seg[nseg].units;
			nseg++;
		}
	}
	qsort(seg, nseg, sizeof(*seg), cmp_slope);
	for (uint64_t i = 0; i < nseg && q; i++) {
		uint64_t t = seg[i].units < q ? seg[i].units : q;

		r += seg[i].slope * t;
		q -= t;
	}
	free(hull);
	free(seg);
	return r;
}

/*
 * The same with blocks taken whole: the allocation takes
 * q = floor(rest / 2^k) whole blocks of the partial list (order k) and
 * the first r = rest mod 2^k pages of one more. When SLOTS is a multiple
 * of 2^k, a block covers an aligned group of 2^k slots and adds one page
 * to each; t blocks from group g cost c_g(t) = sum over its slots of
 * overflow(load + t). The cheapest choice of t_g (sum q) and of the group
 * giving the partial block is found exactly when the blocks times q are
 * few (up to 5e7), else the whole blocks alone are bounded below over
 * convex envelopes. Returns -1 when it does not apply.
 */
static double block_bound(const struct list *part, uint64_t rest, const uint32_t *load, uint64_t slots,
			  uint64_t ways)
{
	uint64_t size = 1ULL << part->order, groups, q = rest / size, maxa = 0;
	uint32_t *avail;
	double *c, *cp, cost = 0;

	if (!part->order || slots % size)
		return -1;
	groups = slots / size;
	avail = xcalloc(groups, sizeof(*avail));
	for (size_t i = 0; i < part->n; i++)
		avail[(part->pfn[i] % slots) / size]++;
	for (uint64_t g = 0; g < groups; g++)
		if (avail[g] > maxa)
			maxa = avail[g];
	c = xcalloc(maxa + 1, sizeof(*c));
	cp = xcalloc(maxa + 1, sizeof(*cp));
	for (uint64_t s = 0; s < slots; s++)
		cost += overflow(load[s], ways);
	if ((q + 1) * part->n <= 50000000)
		cost += cheapest_exact(avail, groups, size, q, rest % size, load, ways, c, cp);
	else
		cost += cheapest_envelope(avail, groups, size, q, part->n, load, ways, c);
	free(avail);
	free(c);
	free(cp);
	return cost;
}

/* Pages of the allocation that overflow their slot, at least; want pages
 * from the lists seq[0..nseq) in that order, the last one taken in part
 * at best. The larger of two lower bounds: pages taken one by one, and
 * whole blocks (block_bound). */
static double lower_bound(struct list **seq, int nseq, uint64_t slots, uint64_t ways, uint64_t want,
			  uint64_t *short_by)
{
	uint32_t *load = xcalloc(slots, sizeof(*load)), *avail = xcalloc(slots, sizeof(*avail));
	uint64_t taken = 0, rest = 0, cost = 0;
	const struct list *part = NULL;
	double blocks = -1;

	for (int k = 0; k < nseq && taken < want; k++) {
		struct list *l = seq[k];
		uint64_t pages = (uint64_t)l->n << l->order;
		uint32_t *to = taken + pages <= want ? load : avail;

		for (size_t i = 0; i < l->n; i++)
			for (uint64_t j = 0; j < (1ULL << l->order); j++)
				to[(l->pfn[i] + j) % slots]++;
		if (to == avail) {
			part = l;
			rest = want - taken;
			taken = want;
		} else {
			taken += pages;
		}
	}
	*short_by = want - taken;
	if (part)
		blocks = block_bound(part, rest, load, slots, ways);
	/* Room left in slots below their ways: free. */
	for (uint64_t s = 0; s < slots && rest; s++) {
		uint64_t room = load[s] < ways ? ways - load[s] : 0, t = room < avail[s] ? room : avail[s];

		if (t > rest)
			t = rest;
		load[s] += t;
		avail[s] -= t;
		rest -= t;
	}
	/* Slots that overflow already: one each. */
	for (uint64_t s = 0; s < slots && rest; s++) {
		if (load[s] > ways) {
			uint64_t t = avail[s] < rest ? avail[s] : rest;

			load[s] += t;
			rest -= t;
		}
	}
	for (uint64_t s = 0; s < slots; s++)
		if (load[s] > ways)
			cost += load[s];
	/* New overflowing slots, the fullest supply first. */
	if (rest) {
		uint32_t *cand = xcalloc(slots, sizeof(*cand));
		uint64_t nc = 0;

		for (uint64_t s = 0; s < slots; s++)
			if (load[s] == ways && avail[s])
				cand[nc++] = avail[s];
		qsort(cand, nc, sizeof(*cand), cmp_desc);
		for (uint64_t i = 0; i < nc && rest; i++) {
			uint64_t t = cand[i] < rest ? cand[i] : rest;

			cost += ways + t;
			rest -= t;
		}
		free(cand);
	}
	free(load);
	free(avail);
	return blocks > (double)cost ? blocks : (double)cost;
}

/* The allocation the lists as dumped predict: blocks in list order, each
 * one's pages lowest first (how the buddy allocator splits them). */
static uint64_t predicted(struct list **seq, int nseq, uint64_t slots, uint64_t ways, uint64_t want)
{
	uint32_t *count = xcalloc(slots, sizeof(*count));
	uint64_t taken = 0, cost = 0;

	for (int k = 0; k < nseq && taken < want; k++)
		for (size_t i = 0; i < seq[k]->n && taken < want; i++)
			for (uint64_t j = 0; j < (1ULL << seq[k]->order) && taken < want; j++, taken++)
				count[(seq[k]->pfn[i] + j) % slots]++;
	for (uint64_t s = 0; s < slots; s++)
		cost += overflow(count[s], ways);
	free(count);
	return cost;
}

/*
 * Where the lists as dumped lose: the list the allocation consumes in part
 * (part_order), how many of its blocks the allocation takes (part_taken),
 * and how many of those, in the dumped order, did not fit the load of
 * everything handed out before them (part_unfit; first at part_first_unfit,
 * counted from the head). Lists consumed whole cost the same in any order,
 * so a predicted fraction above the bound comes from this list, and unfit
 * blocks near its head mean it is not in the order a sort leaves.
 */
static void where_lost(struct list **seq, int nseq, uint64_t slots, uint64_t ways, uint64_t want)
{
	uint32_t *count = xcalloc(slots, sizeof(*count));
	uint64_t taken = 0, unfit = 0, first_unfit = 0, part_taken = 0;
	int part = -1;

	for (int k = 0; k < nseq && taken < want; k++) {
		struct list *l = seq[k];
		bool whole = taken + ((uint64_t)l->n << l->order) <= want;

		for (size_t i = 0; i < l->n && taken < want; i++) {
			uint64_t size = 1ULL << l->order, j;
			bool fits = true;

			for (j = 0; j < size; j++)
				fits = fits && count[(l->pfn[i] + j) % slots] < ways;
			for (j = 0; j < size && taken < want; j++, taken++)
				count[(l->pfn[i] + j) % slots]++;
			if (whole)
				continue;
			part = l->order;
			part_taken++;
			if (!fits && !unfit++)
				first_unfit = part_taken;
		}
	}
	printf(" part_order=%d part_taken=%llu part_unfit=%llu part_first_unfit=%llu", part,
	       (unsigned long long)part_taken, (unsigned long long)unfit,
	       (unsigned long long)first_unfit);
	free(count);
}

/* Pages the allocation takes from a block it does not take whole: the
 * rest of want after the lists it takes whole and the whole blocks of
 * the list it takes in part. */
static uint64_t tail_pages(struct list **seq, int nseq, uint64_t want)
{
	uint64_t taken = 0;

	for (int k = 0; k < nseq; k++) {
		uint64_t pages = (uint64_t)seq[k]->n << seq[k]->order;

		if (taken + pages >= want)
			return (want - taken) & ((1ULL << seq[k]->order) - 1);
		taken += pages;
	}
	return 0;
}

/* P(Binomial(n, p) >= k). */
static double binom_tail(uint64_t n, double p, uint64_t k)
{
	double below = 0;

	for (uint64_t i = 0; i < k && i <= n; i++)
		below += exp(lgamma(n + 1.0) - lgamma(i + 1.0) - lgamma(n - i + 1.0) + i * log(p) +
			     (n - i) * log1p(-p));
	return 1 - below;
}

int main(int argc, char **argv)
{
	size_t dlen, plen, klen, flen;
	char *dump, *pti, *kpf, *pfns_raw;
	uint64_t slots, ways, want, free_pages = 0, top_pages = 0, thp_pages = 0, short_by;
	uint64_t buddy_missing = 0, blocks = 0, measured = 0, pcp_movable = 0;
	uint64_t tail, whole, whole_short;
	struct list *seq[MAXORD + 1];
	int cpu, nseq = 0, thp;
	char zone[16] = "", missing_example[96] = "-";
	long pti_diff, pti_compared;
	uint32_t *count;
	uint64_t *pfn, npfn;
	double random;

	if (argc != 7 || (strcmp(argv[6], "base") && strcmp(argv[6], "thp"))) {
		fprintf(stderr, "usage: zsbound DIR SLOTS WAYS WANT_PAGES CPU base|thp\n");
		return 2;
	}
	slots = strtoull(argv[2], NULL, 0);
	ways = strtoull(argv[3], NULL, 0);
	want = strtoull(argv[4], NULL, 0);
	cpu = atoi(argv[5]);
	thp = !strcmp(argv[6], "thp");
	if (!slots || !ways || !want)
		fail("SLOTS, WAYS and WANT_PAGES must be positive");
	dump = read_file(argv[1], "freelists", &dlen);
	pti = read_file(argv[1], "pagetypeinfo", &plen);
	kpf = read_file(argv[1], "kpageflags", &klen);
	pfns_raw = read_file(argv[1], "pfns", &flen);
	parse_dump(dump);

	/* The zone: the highest of node 0 with free movable pages. */
	for (size_t i = 0; i < nlists; i++) {
		struct list *l = &lists[i];

		if (l->kind == 'F' && l->node == 0 && l->mt == MT_MOVABLE && l->n &&
		    strcmp(l->zone, "Movable") && strcmp(l->zone, "Device"))
			snprintf(zone, sizeof(zone), "%s", l->zone);
	}
	if (!zone[0])
		fail("no free movable pages on node 0 in the dump");
	for (size_t i = 0; i < nlists; i++) {
		struct list *l = &lists[i];

		if (l->kind != 'F')
			continue;
		blocks += l->n;
		for (size_t j = 0; j < l->n; j++) {
			uint64_t at = l->pfn[j] * 8, flags;

			if (at + 8 > klen)
				continue;
			memcpy(&flags, kpf + at, 8);
			if (!(flags >> KPF_BUDDY & 1) && !buddy_missing++)
				snprintf(missing_example, sizeof(missing_example), "%llx:%s:%d:%d:%llx",
					 (unsigned long long)l->pfn[j], l->zone, l->mt, l->order,
					 (unsigned long long)flags);
		}
		if (l->node == 0 && l->mt == MT_MOVABLE && !strcmp(l->zone, zone)) {
			uint64_t pages = (uint64_t)l->n << l->order;

			free_pages += pages;
			if (l->order == nr_orders - 1)
				top_pages += pages;
			if (l->order >= thp_order)
				thp_pages += pages;
		}
	}
	check_pagetypeinfo(pti, &pti_diff, &pti_compared);
	/* What the module counts of the per-CPU lists at a sort: movable
	 * order-0 pages of node 0, the first 256 of each list. */
	for (size_t i = 0; i < nlists; i++)
		if (lists[i].kind == 'P' && lists[i].node == 0 && lists[i].mt == MT_MOVABLE &&
		    lists[i].order == 0)
			pcp_movable += lists[i].n < 256 ? lists[i].n : 256;

	seq[nseq] = find('P', 0, zone, cpu, MT_MOVABLE, thp ? thp_order : 0);
	if (seq[nseq])
		nseq++;
	for (int o = thp ? thp_order : 0; o < nr_orders; o++) {
		seq[nseq] = find('F', 0, zone, 0, MT_MOVABLE, o);
		if (seq[nseq])
			nseq++;
	}

	/* The allocation as measured, with this program's slot formula. */
	npfn = flen / 8;
	pfn = (uint64_t *)pfns_raw;
	count = xcalloc(slots, sizeof(*count));
	for (uint64_t i = 0; i < npfn; i++)
		count[pfn[i] % slots]++;
	for (uint64_t s = 0; s < slots; s++)
		if (count[s] > ways)
			measured += count[s];

	if (thp && slots % 512 == 0)
		random = binom_tail(want / 512 - 1, 512.0 / slots, ways);
	else
		random = binom_tail(want - 1, 1.0 / slots, ways);
	printf("bound=%.6f measured=%.6f random=%.6f", lower_bound(seq, nseq, slots, ways, want, &short_by) / want,
	       npfn ? (double)measured / npfn : 0, random);
	printf(" predicted=%.6f", (double)predicted(seq, nseq, slots, ways, want) / want);
	where_lost(seq, nseq, slots, ways, want);
	/* The same up to the last whole block: the order a sort gives serves
	 * every size at once, the block an allocation ends in is luck. */
	tail = tail_pages(seq, nseq, want);
	whole = want - tail;
	printf(" tail_pages=%llu whole_pages=%llu whole_bound=%.6f whole_predicted=%.6f",
	       (unsigned long long)tail, (unsigned long long)whole,
	       whole ? lower_bound(seq, nseq, slots, ways, whole, &whole_short) / whole : 0,
	       whole ? (double)predicted(seq, nseq, slots, ways, whole) / whole : 0);
	printf(" short_pages=%llu free_pages=%llu order_top_share=%.4f thp_pages=%llu zone=%s cpu=%d",
	       (unsigned long long)short_by, (unsigned long long)free_pages,
	       free_pages ? (double)top_pages / free_pages : 0, (unsigned long long)thp_pages, zone, cpu);
	printf(" blocks=%llu buddy_missing=%llu first_missing=%s pti_blocks=%ld pti_diff=%ld pcp_movable=%llu\n",
	       (unsigned long long)blocks, (unsigned long long)buddy_missing, missing_example, pti_compared,
	       pti_diff, (unsigned long long)pcp_movable);
	return 0;
}
