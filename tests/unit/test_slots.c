// SPDX-License-Identifier: GPL-2.0-or-later
/* Cache-slot math: geometry, collision counts, the random-placement
 * expectation (against brute-force enumeration), the buddy-order model of
 * free memory, free-block reconstruction from a kpageflags image, and the
 * helper's sample line. */
#include "config.h"
#include "errbuf.h"
#include "kpageflags.h"
#include "slots.h"
#include "tap.h"

#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#define BUDDY (1ULL << ZS_KPF_BUDDY)

static bool near(double a, double b, double tol)
{
	return fabs(a - b) <= tol;
}

/* Independent oracle: the slot from the physical address, as the cache
 * indexes it: (address mod (size / ways)) / page, in 128-bit arithmetic;
 * for an extended-linear range, the address counted from the range. */
static uint64_t oracle_slot(uint64_t size, uint64_t ways, uint64_t base_pfn, uint64_t pfn)
{
	unsigned __int128 addr = (unsigned __int128)(pfn - base_pfn) * 4096;

	return (uint64_t)((addr % (size / ways)) / 4096);
}

static void non_power_of_two(void)
{
	static const struct {
		uint64_t size;
		int ways;
	} geoms[] = {
		{ 96ULL << 30, 1 }, { 192ULL << 30, 1 }, { 384ULL << 30, 1 }, { 384ULL << 20, 1 },
		{ 384ULL << 20, 3 }, { 96ULL << 30, 2 }, { 3ULL << 20, 1 },
	};
	char err[ZS_ERRLEN], buf[96];
	struct zs_slotgeom g;
	uint64_t rng = 12345;

	for (unsigned i = 0; i < sizeof(geoms) / sizeof(geoms[0]); i++) {
		bool init = !zs_slotgeom_init(&g, geoms[i].size, geoms[i].ways, 4096, "c", "w", err);
		bool same = init;

		ok(init && g.nslots == geoms[i].size / ((uint64_t)geoms[i].ways * 4096),
		   "%s: %llu slots", zs_slotgeom_describe(&g, buf, sizeof(buf)), (unsigned long long)g.nslots);
		for (unsigned k = 0; init && k < 100000; k++) {
			rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
			uint64_t pfn = (rng >> 20) % (1ULL << 40);

			if (zs_slot_of(&g, pfn) != oracle_slot(geoms[i].size, (uint64_t)geoms[i].ways, 0, pfn))
				same = false;
		}
		ok(same, "%s: slot of 100000 random frames = the address oracle", buf);
	}
	/* Flat Memory Mode: a 96 GiB near memory caching 96 GiB far memory,
	 * the range starting at 130 GiB. */
	zs_slotgeom_init(&g, 96ULL << 30, 1, 4096, "c", "w", err);
	g.base_pfn = (130ULL << 30) / 4096;
	bool same = true, alias = true;

	for (unsigned k = 0; k < 100000; k++) {
		rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
		uint64_t off = (rng >> 20) % g.nslots, pfn = g.base_pfn + off;

		if (zs_slot_of(&g, pfn) != oracle_slot(96ULL << 30, 1, g.base_pfn, pfn))
			same = false;
		if (zs_slot_of(&g, pfn) != zs_slot_of(&g, pfn + g.nslots) || zs_slot_of(&g, pfn) != off)
			alias = false;
	}
	ok(same, "extended-linear: slots count from the range's first frame");
	ok(alias, "extended-linear: X and X + 96 GiB share a slot, the near range takes every slot once");
	ok(zs_slot_of(&g, g.base_pfn - 1) == g.nslots - 1, "a frame just below the range wraps to the last slot");
	err_has(zs_slotgeom_describe(&g, buf, sizeof(buf)), "96 GiB direct-mapped extended-linear", "describe says extended-linear");

	/* The buddy model on a 3-slot cache of 3 pages: blocks at 0 (order 1:
	 * slots 0, 1) and 4 (order 0: slot 1) collide in slot 1. */
	struct zs_potential pot;
	uint64_t o0[] = { 4 }, o1[] = { 0 };
	struct zs_freeblock_list lists[2] = { { o0, 1 }, { o1, 1 } };
	struct zs_zone_blocks zone = { lists, 2 };

	zs_slotgeom_init(&g, 3 * 4096, 1, 4096, "c", "w", err);
	ok(!zs_potential_compute(&g, &zone, 1, 3, 0, 1, &pot, err) && pot.allocated == 3 &&
	   near(pot.conflicting, 2.0, 1e-12), "3-slot cache: the buddy model counts the collision in slot 1");
}

static void geometry(void)
{
	char err[ZS_ERRLEN];
	struct zs_slotgeom g;

	ok(!zs_slotgeom_init(&g, 64ULL << 20, 1, 4096, "--cache-size", "--ways", err) &&
	   g.nslots == 16384 && g.ways == 1, "64 MiB direct-mapped: 16384 slots of 1 page");
	ok(!zs_slotgeom_init(&g, 16ULL << 30, 2, 4096, "--cache-size", "--ways", err) &&
	   g.nslots == 2097152 && g.ways == 2, "16 GiB 2-way: 2 Mi slots of 2 pages");
	ok(!zs_slotgeom_init(&g, 1 << 20, -1, 4096, "c", "w", err) && g.nslots == 1 && g.ways == 256 &&
	   g.fully_associative, "fully associative 1 MiB: one slot of 256 pages");
	ok(zs_slotgeom_init(&g, 0, 1, 4096, "--cache-size", "--ways", err), "cache size 0 refused");
	err_has(err, "--cache-size 0", "the error names the option and the value");
	ok(zs_slotgeom_init(&g, (48ULL << 20) + 512, 1, 4096, "--cache-size", "--ways", err),
	   "48 MiB + 512 B refused");
	err_has(err, "50332160", "the error names the value");
	err_has(err, "multiple of the page size", "the error says what is accepted");
	ok(zs_slotgeom_init(&g, 2048, 1, 4096, "--cache-size", "--ways", err), "smaller than a page refused");
	ok(zs_slotgeom_init(&g, 64ULL << 20, 0, 4096, "c", "--ways", err), "ways 0 refused");
	err_has(err, "--ways", "the error names --ways");
	ok(zs_slotgeom_init(&g, 64ULL << 20, 3, 4096, "c", "--ways", err),
	   "3 ways do not divide 64 MiB into page slots");
	non_power_of_two();
	ok(zs_slotgeom_init(&g, 64ULL << 20, 65, 4096, "c", "--ways", err), "65 ways refused");
	ok(!zs_slotgeom_init(&g, 64ULL << 20, 1, 4096, "c", "w", err) && zs_slot_of(&g, 16384 + 7) == 7 &&
	   zs_slot_of(&g, 5 * 16384) == 0, "slot = pfn mod slots");

	char buf[64];

	zs_slotgeom_init(&g, 16ULL << 30, 4, 4096, "c", "w", err);
	is_str(zs_slotgeom_describe(&g, buf, sizeof(buf)), "16 GiB 4-way", "describe 4-way");
	zs_slotgeom_init(&g, 64ULL << 20, 1, 4096, "c", "w", err);
	is_str(zs_slotgeom_describe(&g, buf, sizeof(buf)), "64 MiB direct-mapped", "describe direct-mapped");
}

static void collisions(void)
{
	/* 4 slots, 1 way: 3, 0, 1, 2 pages. */
	uint32_t c1[] = { 3, 0, 1, 2 };
	struct zs_collisions c;

	zs_collisions_count(c1, 4, 1, &c);
	ok(c.pages == 6 && c.conflicting == 5 && c.excess == 3 && c.used_slots == 3 &&
	   c.overfull_slots == 2 && c.max_in_slot == 3,
	   "direct-mapped: 5 of 6 pages conflict, 3 over capacity");
	ok(near(zs_collisions_fraction(&c), 5.0 / 6.0, 1e-15), "fraction 5/6");
	zs_collisions_count(c1, 4, 2, &c);
	ok(c.conflicting == 3 && c.excess == 1 && c.overfull_slots == 1,
	   "2 ways: only the slot with 3 pages conflicts");
	zs_collisions_count(c1, 4, 3, &c);
	ok(c.conflicting == 0 && c.excess == 0, "3 ways: no conflict");

	uint64_t slot[3];
	uint32_t count[3];
	uint32_t c2[] = { 1, 5, 2, 5, 0, 7 };
	unsigned n = zs_worst_slots(c2, 6, 3, slot, count);

	ok(n == 3 && slot[0] == 5 && count[0] == 7 && slot[1] == 1 && slot[2] == 3 && count[2] == 5,
	   "worst slots: largest first, lower slot first on ties");
	uint32_t c3[] = { 0, 0, 4 };

	ok(zs_worst_slots(c3, 3, 3, slot, count) == 1 && slot[0] == 2, "empty slots are not listed");
}

/* Exact expectation by enumerating every placement of n pages on s slots. */
static double brute_force(unsigned n, unsigned s, unsigned w)
{
	unsigned total = 1, place[8];
	double sum = 0.0;

	for (unsigned i = 0; i < n; i++)
		total *= s;
	for (unsigned k = 0; k < total; k++) {
		uint32_t counts[8] = { 0 };
		struct zs_collisions c;
		unsigned v = k;

		for (unsigned i = 0; i < n; i++) {
			place[i] = v % s;
			v /= s;
			counts[place[i]]++;
		}
		zs_collisions_count(counts, s, w, &c);
		sum += (double)c.conflicting;
	}
	return sum / total / n;
}

static void random_placement(void)
{
	ok(zs_random_conflict_fraction(0, 16, 1) == 0.0 && zs_random_conflict_fraction(1, 16, 1) == 0.0,
	   "no or one page: nothing conflicts");
	ok(near(zs_random_conflict_fraction(2, 2, 1), 0.5, 1e-15), "2 pages, 2 slots: 1/2");
	ok(near(zs_random_conflict_fraction(3, 2, 1), 0.75, 1e-15), "3 pages, 2 slots: 3/4");
	ok(near(zs_random_conflict_fraction(3, 3, 2), 1.0 / 9.0, 1e-15), "3 pages, 3 slots of 2: 1/9");
	ok(near(zs_random_conflict_fraction(4, 2, 2), 0.5, 1e-15), "4 pages, 2 slots of 2: 1/2");
	ok(zs_random_conflict_fraction(5, 1, 4) == 1.0 && zs_random_conflict_fraction(4, 1, 4) == 0.0,
	   "one slot of 4 ways: 5 pages all conflict, 4 do not");
	bool all = true;

	for (unsigned n = 2; n <= 6; n++)
		for (unsigned s = 1; s <= 4; s++)
			for (unsigned w = 1; w <= 3; w++) {
				double want = brute_force(n, s, w), got = zs_random_conflict_fraction(n, s, w);

				if (!near(got, want, 1e-12)) {
					all = false;
					printf("#   n=%u s=%u w=%u: got %.15f, enumeration %.15f\n", n, s, w, got, want);
				}
			}
	ok(all, "matches enumeration of every placement for n 2-6, slots 1-4, ways 1-3");
	/* Half a direct-mapped cache: 1 - (1 - 1/S)^(n - 1), about 1 - e^-0.5. */
	double f = zs_random_conflict_fraction(8192, 16384, 1);

	ok(near(f, -expm1(8191.0 * log1p(-1.0 / 16384)), 1e-15) && near(f, 0.3934, 1e-4),
	   "half of a 64 MiB direct-mapped cache: 39.3%% (%.6f)", f);
	ok(zs_random_conflict_fraction(2097152, 16384, 1) > 0.999999, "8 GiB over 64 MiB: all conflict");
}

static void potential(void)
{
	char err[ZS_ERRLEN];
	struct zs_slotgeom g;
	struct zs_potential p;

	zs_slotgeom_init(&g, 4 * 4096, 1, 4096, "c", "w", err);	/* 4 slots */
	uint64_t o0[] = { 0, 4, 1 }, o1[] = { 8 }, o2[] = { 16 };
	struct zs_freeblock_list lists[3] = { { o0, 3 }, { o1, 1 }, { o2, 1 } };
	struct zs_zone_blocks zone = { lists, 3 };

	ok(!zs_potential_compute(&g, &zone, 1, 3, 16, 1, &p, err) && p.allocated == 3 &&
	   near(p.conflicting, 2.0, 0) && near(p.fraction, 2.0 / 3.0, 1e-15) && p.draws == 0,
	   "the order-0 list first: pfns 0, 4, 1 -> slots 0, 0, 1: 2 of 3 conflict, exactly");
	ok(!zs_potential_compute(&g, &zone, 1, 5, 16, 1, &p, err) && p.allocated == 5 &&
	   near(p.fraction, 1.0, 1e-15),
	   "then the order-1 block (slots 0, 1): all 5 pages conflict");
	ok(!zs_potential_compute(&g, &zone, 1, 4, 16, 1, &p, err) && near(p.conflicting, 3.0, 0),
	   "a block partly consumed gives its lowest page first (pfn 8, slot 0: 3 conflict)");
	ok(!zs_potential_compute(&g, &zone, 1, 100, 16, 1, &p, err) && p.requested == 100 &&
	   p.allocated == 9, "more than is free: every free page is modelled");

	/* Two zones: the first listed (the highest) is used first. */
	uint64_t za[] = { 2 }, zb[] = { 3, 7 };
	struct zs_freeblock_list la[1] = { { za, 1 } }, lb[1] = { { zb, 2 } };
	struct zs_zone_blocks zones[2] = { { la, 1 }, { lb, 1 } };

	ok(!zs_potential_compute(&g, zones, 2, 2, 16, 1, &p, err) && p.allocated == 2 &&
	   near(p.conflicting, 0.0, 0), "the first zone's page (slot 2), then a draw from the second");
	ok(p.draws == 16, "a partly used list of several blocks is drawn at random (%u draws)", p.draws);

	/* Random order within a list: pfns 0, 4 share slot 0, pfn 1 does not;
	 * two of three taken at random conflict with probability 1/3. */
	uint64_t r0[] = { 0, 4, 1 };
	struct zs_freeblock_list rl[1] = { { r0, 3 } };
	struct zs_zone_blocks rz = { rl, 1 };
	struct zs_potential q;
	double sum = 0.0;

	ok(!zs_potential_compute(&g, &rz, 1, 2, 16, 7, &p, err) &&
	   !zs_potential_compute(&g, &rz, 1, 2, 16, 7, &q, err) && p.fraction == q.fraction,
	   "the same seed gives the same result");
	for (uint64_t seed = 1; seed <= 200; seed++) {
		zs_potential_compute(&g, &rz, 1, 2, 16, seed, &p, err);
		sum += p.fraction;
	}
	ok(near(sum / 200, 1.0 / 3.0, 0.03), "mean over seeds near the exact 1/3 (%.4f)", sum / 200);
	ok(near(p.random_fraction, zs_random_conflict_fraction(2, 4, 1), 1e-15),
	   "the random-placement figure is for the pages modelled");
}

static char *write_file(const char *dir, const char *name, const void *data, size_t len)
{
	static char path[8][256];
	static int next;
	char *p = path[next++ % 8];
	FILE *f;

	snprintf(p, 256, "%s/%s", dir, name);
	f = fopen(p, "w");
	fwrite(data, 1, len, f);
	fclose(f);
	return p;
}

static void reconstruction(void)
{
	char err[ZS_ERRLEN], dir[] = "/tmp/zs-test-slots.XXXXXX";
	struct zs_zone *zones;
	unsigned nz;
	struct zs_freemem fm;
	uint64_t flags[64] = { 0 };

	if (!mkdtemp(dir)) {
		ok(0, "temporary directory");
		return;
	}
	const char *zi = "Node 0, zone      DMA\n  pages free     3\n        spanned  0\n"
			 "Node 0, zone   Normal\n  pages free     30\n        spanned  64\n"
			 "        present  64\n        managed  60\n  pagesets\n  start_pfn:           0\n";
	/* Free: [1,3) -> 1(o0) 2(o0); [8,16) -> 8(o3); [17,24) -> 17(o0) 18(o1)
	 * 20(o2); [32,64) -> 32(o3) 40(o3) ... with max order 3: 4 blocks. */
	const char *bi = "Node 0, zone   Normal      3      1      1      5\n";
	char *zpath = write_file(dir, "zoneinfo", zi, strlen(zi));
	char *bpath = write_file(dir, "buddyinfo", bi, strlen(bi));

	ok(!zs_zones_read(zpath, bpath, &zones, &nz, err) && nz == 1 && !strcmp(zones[0].name, "Normal") &&
	   zones[0].spanned == 64 && zones[0].managed == 60 && zones[0].norders == 4 &&
	   zones[0].buddyinfo[3] == 5, "zoneinfo and buddyinfo parsed; empty zones left out");
	for (int i = 1; i < 3; i++)
		flags[i] = BUDDY;
	for (int i = 8; i < 16; i++)
		flags[i] = BUDDY;
	for (int i = 17; i < 24; i++)
		flags[i] = BUDDY;
	for (int i = 32; i < 64; i++)
		flags[i] = BUDDY;
	flags[3] = 1ULL << 5;	/* an LRU page */
	char *kpath = write_file(dir, "kpageflags", flags, sizeof(flags));

	ok(!zs_freemem_scan(0, zones, nz, kpath, "/nonexistent", &fm, err), "scan of a kpageflags image");
	ok(fm.nzones == 1 && !fm.head_only && fm.pages_scanned == 64 && fm.flagged_pages == 49 &&
	   fm.free_pages == 49, "every flagged page is free (49)");
	ok(fm.zones[0].n[0] == 3 && fm.zones[0].n[1] == 1 && fm.zones[0].n[2] == 1 && fm.zones[0].n[3] == 5,
	   "runs split into aligned blocks: orders 3,1,1,5 as buddyinfo says");
	ok(fm.zones[0].pfn[2][0] == 20 && fm.zones[0].pfn[1][0] == 18 && fm.zones[0].pfn[3][0] == 8,
	   "block positions");

	/* A flags file that ends inside the zone (the kernel's highest pfn):
	 * the run up to the end of what was read, no further. */
	struct zs_freemem shortfm;

	kpath = write_file(dir, "kpageflags", flags, 48 * sizeof(flags[0]));
	ok(!zs_freemem_scan(0, zones, nz, kpath, "/nonexistent", &shortfm, err) &&
	   shortfm.pages_scanned == 48 && shortfm.zones[0].n[3] == 3 && shortfm.free_pages == 33,
	   "a short flags file: blocks up to where it ends (%llu pages)",
	   (unsigned long long)shortfm.free_pages);
	zs_freemem_free(&shortfm);

	struct zs_slotgeom g;
	uint32_t counts[8] = { 0 };

	zs_slotgeom_init(&g, 8 * 4096, 1, 4096, "c", "w", err);
	zs_freemem_slot_counts(&fm, &g, counts);
	ok(counts[0] == 5 && counts[1] == 7 && counts[2] == 7 && counts[3] == 6 && counts[7] == 6,
	   "free pages per slot (8 slots)");
	zs_freemem_free(&fm);

	/* A kernel that flags first pages only: the flagged count matches
	 * buddyinfo's blocks, not its pages. */
	uint64_t heads[64] = { 0 };
	const char *bi2 = "Node 0, zone   Normal      1      1      0      2\n";

	free(zones);
	bpath = write_file(dir, "buddyinfo", bi2, strlen(bi2));
	zs_zones_read(zpath, bpath, &zones, &nz, err);
	heads[5] = BUDDY;		/* order 0: pfn 6 is allocated */
	heads[6] = 1ULL << 7;
	heads[8] = BUDDY;		/* order 3 */
	heads[18] = BUDDY;		/* order 1: 20 allocated */
	heads[20] = 1ULL << 5;
	heads[24] = BUDDY;		/* order 3 */
	kpath = write_file(dir, "kpageflags", heads, sizeof(heads));
	ok(!zs_freemem_scan(0, zones, nz, kpath, "/nonexistent", &fm, err) && fm.head_only,
	   "first-page flagging detected");
	ok(fm.zones[0].n[0] == 1 && fm.zones[0].n[1] == 1 && fm.zones[0].n[2] == 0 && fm.zones[0].n[3] == 2 &&
	   fm.free_pages == 19, "orders from the flagged page and the unflagged pages after it");
	zs_freemem_free(&fm);
	ok(zs_freemem_scan(1, zones, nz, kpath, "/nonexistent", &fm, err), "a node without zones is an error");
	err_has(err, "node 1", "the error names the node");
	ok(zs_freemem_scan(0, zones, nz, "/nonexistent/kpageflags", "/nonexistent", &fm, err),
	   "a missing kpageflags is an error");
	err_has(err, "/nonexistent/kpageflags", "the error names the file");
	free(zones);
	/* By name: write_file's path buffers are reused after eight files. */
	static const char *const names[] = { "zoneinfo", "buddyinfo", "kpageflags" };
	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char path[300];

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		unlink(path);
	}
	ok(rmdir(dir) == 0, "temporary directory removed");
}

static void sample_lines(void)
{
	struct zs_sample s = { 0.032, 0.393469, 123456, 3 }, t;
	char buf[128];

	is_str(zs_sample_format(&s, buf, sizeof(buf)),
	       "conflicts fraction=0.032000 random=0.393469 pages=123456 samples=3", "sample line");
	ok(!zs_sample_parse(buf, &t) && t.pages == 123456 && t.samples == 3 && near(t.fraction, 0.032, 1e-9),
	   "parses back");
	ok(zs_sample_parse("rounds=3 sorted=3 recent=0 busy=0 failed=0 seconds=0.1", &t),
	   "a totals line is not a sample");
	ok(zs_sample_parse("conflicts fraction=1.5 random=0.3 pages=1 samples=1", &t),
	   "a fraction above 1 is refused");
	ok(zs_sample_parse("conflicts fraction=0.1 random=0.3 pages=1 samples=1 x", &t),
	   "trailing text is refused");

	char err[ZS_ERRLEN];
	double f;

	ok(!zs_parse_fraction("--fraction", "0.25", 16, &f, err) && f == 0.25, "fraction 0.25");
	ok(!zs_parse_fraction("--fraction", "5%", 16, &f, err) && near(f, 0.05, 1e-15), "fraction 5%%");
	ok(!zs_parse_fraction("--fraction", "2", 16, &f, err) && f == 2.0, "fraction 2 (twice the cache)");
	static const char *const bad[] = { "", "0", "0%", "-1", "abc", "1e-2", " 1", "1.2.3", "%", ".", "17" };
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ok(zs_parse_fraction("--fraction", bad[i], 16, &f, err), "fraction '%s' refused", bad[i]);
		err_has(err, "--fraction", "the error for '%s' names the option", bad[i]);
	}
}

int main(void)
{
	geometry();
	collisions();
	random_placement();
	potential();
	reconstruction();
	sample_lines();
	return done_testing();
}
