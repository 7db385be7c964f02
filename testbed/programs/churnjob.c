// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * churnjob: a job whose start-up churns memory before it allocates its main
 * buffer, run by Slurm in the cache-node guest (bench/churn-effect,
 * tests/node/). Written apart from the project's code on purpose: it is
 * the independent measurement the project's figures are checked against
 * (its own slot formula, its own pagemap reading).
 *
 *   churnjob DIR CHURN_BYTES SEED BYTES CACHE_BYTES PASSES [GAP_MS]
 *
 * 1. Start-up churn: maps anonymous chunks of 1-512 base pages (sizes from
 *    a xorshift sequence seeded with SEED) until CHURN_BYTES are mapped,
 *    touches every page, then unmaps a random half of the chunks, in random
 *    order, and keeps the rest mapped to the end.
 * 2. Waits GAP_MS (default 0): the job's own set-up between its start-up
 *    and its arrays.
 * 3. Maps BYTES of fresh anonymous memory (the main buffer, base pages),
 *    touches it page by page, reads its frames from /proc/self/pagemap
 *    (root only).
 * 4. Runs a STREAM triad over the buffer split in three arrays: one
 *    warm-up pass (triad_warm), then PASSES passes (triad_passes); a cache
 *    model attached to QEMU tells the two apart by their instructions.
 *
 * A page conflicts when its cache slot, frame number mod CACHE_BYTES /
 * page size (direct-mapped), holds another page of the buffer. Prints one
 * line, also written to DIR/res:
 *   CHURNJOB churn_pages=N chunks=N freed_pages=N kept_pages=N
 *     kept_slots=N freed_slots=N buffer_pages=N buffer_conflicting=N
 *     buffer_fraction=F random=F recycled=N recycled_conflicting=N
 *     pair_recycled=N pair_mixed=N pair_fresh=N on_kept_slots=N
 *     lines=N passes=N check=X cpu0=N cpu1=N churn_ms=T alloc_ms=T
 * (kept_slots, freed_slots: distinct slots of the pages the churn kept and
 * freed; chunk_colliding: churn pages sharing a slot with another page of
 * their own chunk; recycled: buffer pages the churn had freed, recycled_conflicting
 * those of them that conflict; pair_*: conflicting pages in slots whose
 * buffer pages are all recycled, mixed, or none recycled; on_kept_slots:
 * buffer pages in a slot of a page the churn kept; lines: cache lines per
 * array, so a pass makes 3 x lines accesses to distinct lines; random: the
 * fraction expected for pages placed at random, 1 - (1 - 1/S)^(n - 1)).
 *
 * With CHURNJOB_SORTS naming a file of key=value lines with a "sorts=" line
 * (the module's stats), its value is read when the churn begins, when it
 * ends, when the buffer begins and when it is touched: the line then also
 * has sorts_churn, sorts_gap and sorts_buffer, the sorts between them (a
 * figure of the module's, read only to tell when sorts came).
 *
 * Files in DIR, for a diagnosis from outside:
 *   DIR/pause     when it exists at start, the job creates DIR/started and
 *                 waits for DIR/go.0 before the churn, then creates
 *                 DIR/churned and waits for DIR/go.1 before the buffer
 *   DIR/keep-pfns when it exists, the frames go to DIR/freed, DIR/kept
 *                 (the churn's) and DIR/pfns (the buffer's, touch order),
 *                 raw 64-bit words
 * Each wait gives up after 600 s with exit status 2.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PFN_MASK ((1ULL << 55) - 1)
#define PRESENT (1ULL << 63)
#define MAX_CHUNK_PAGES 512

static size_t psz;
static const char *dir;
static int pagemap = -1;

static void die(const char *what)
{
	fprintf(stderr, "churnjob: %s: %s\n", what, strerror(errno));
	exit(3);
}

static unsigned long long number(const char *what, const char *s)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || *s == '-') {
		fprintf(stderr, "churnjob: %s: '%s' is not a non-negative integer\n", what, s);
		exit(2);
	}
	return v;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t rng;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static int dir_has(const char *name)
{
	char path[4096];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return stat(path, &st) == 0;
}

static void dir_touch(const char *name)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT, 0644);
	if (fd < 0)
		die(path);
	close(fd);
}

static void wait_for(const char *name)
{
	double end = now() + 600;

	while (!dir_has(name)) {
		if (now() > end) {
			fprintf(stderr, "churnjob: %s/%s did not appear within 600 s\n", dir, name);
			exit(2);
		}
		usleep(20000);
	}
}

static void dir_write(const char *name, const void *data, size_t bytes)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f || fwrite(data, 1, bytes, f) != bytes || fclose(f))
		die(path);
}

static void pagemap_read(uintptr_t va, size_t n, uint64_t *out)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = pread(pagemap, out + got, (n - got) * 8, (off_t)((va / psz + got) * 8));

		if (r <= 0)
			die("/proc/self/pagemap");
		got += (size_t)r / 8;
	}
}

/* Frames of the n pages from va, all present (they were touched). A page
 * being migrated (compaction, a huge page collapsed) shows no frame for a
 * moment: reading it waits for the migration, and its entry is read
 * again; one still without a frame after that is an error (not root). */
static void frames(uintptr_t va, size_t n, uint64_t *out)
{
	pagemap_read(va, n, out);
	for (size_t i = 0; i < n; i++) {
		for (int tries = 0; !(out[i] & PRESENT) || !(out[i] & PFN_MASK); tries++) {
			if (tries == 100) {
				fprintf(stderr, "churnjob: a touched page shows no frame (not root?)\n");
				exit(3);
			}
			(void)*(volatile char *)(va + i * psz);
			if (tries)
				usleep(1000);
			pagemap_read(va + i * psz, 1, out + i);
		}
		out[i] &= PFN_MASK;
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Of n frames: how many distinct slots they fall on, and how many of them
 * share a slot with another of them. */
static void slot_counts(const uint64_t *pfn, size_t n, uint64_t slots, size_t *distinct,
			size_t *sharing)
{
	uint64_t *s = malloc((n + 1) * sizeof(*s));

	if (!s)
		die("malloc");
	for (size_t i = 0; i < n; i++)
		s[i] = pfn[i] % slots;
	qsort(s, n, sizeof(*s), cmp_u64);
	*distinct = *sharing = 0;
	for (size_t i = 0; i < n; i++) {
		*distinct += i == 0 || s[i] != s[i - 1];
		*sharing += (i > 0 && s[i] == s[i - 1]) || (i + 1 < n && s[i] == s[i + 1]);
	}
	free(s);
}

/* The "sorts=" value of the file CHURNJOB_SORTS names, or -1. */
static long long sorts_now(void)
{
	const char *path = getenv("CHURNJOB_SORTS");
	char line[256];
	long long v = -1;
	FILE *f;

	if (!path || !(f = fopen(path, "r")))
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "sorts=%lld", &v) == 1)
			break;
	fclose(f);
	return v;
}

static int in_sorted(const uint64_t *set, size_t n, uint64_t v)
{
	return bsearch(&v, set, n, sizeof(*set), cmp_u64) != NULL;
}

/* The triad: two functions, so that a cache model's per-instruction counts
 * tell the warm-up pass from the measured ones. */
__attribute__((noipa)) static void triad_warm(double *a, const double *b, const double *c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		a[i] = b[i] + 3.0 * c[i];
}

__attribute__((noipa)) static void triad_passes(double *a, const double *b, const double *c, size_t n,
						 unsigned long passes)
{
	for (unsigned long p = 0; p < passes; p++)
		for (size_t i = 0; i < n; i++)
			a[i] = b[i] + 3.0 * c[i];
}

struct chunk {
	char *va;
	size_t pages;
};

int main(int argc, char **argv)
{
	if (argc < 7 || argc > 8) {
		fprintf(stderr, "usage: churnjob DIR CHURN_BYTES SEED BYTES CACHE_BYTES PASSES [GAP_MS]\n");
		return 2;
	}
	psz = (size_t)sysconf(_SC_PAGESIZE);
	dir = argv[1];
	size_t churn_pages = number("CHURN_BYTES", argv[2]) / psz;
	uint64_t seed = number("SEED", argv[3]);
	size_t bpages = number("BYTES", argv[4]) / psz;
	uint64_t cache = number("CACHE_BYTES", argv[5]);
	unsigned long passes = number("PASSES", argv[6]);
	unsigned long gap_ms = argc == 8 ? number("GAP_MS", argv[7]) : 0;

	bpages -= bpages % 3;
	if (bpages < 3 || !cache || cache % psz) {
		fprintf(stderr, "churnjob: BYTES '%s' (3 pages at least) or CACHE_BYTES '%s' (whole pages) out of range\n",
			argv[4], argv[5]);
		return 2;
	}
	uint64_t slots = cache / psz;
	int pause = dir_has("pause"), keep = dir_has("keep-pfns");

	pagemap = open("/proc/self/pagemap", O_RDONLY);
	if (pagemap < 0)
		die("/proc/self/pagemap");
	rng = seed * 0x9E3779B97F4A7C15ULL + 88172645463325252ULL;
	if (pause) {
		dir_touch("started");
		wait_for("go.0");
	}

	/* 1. The churn. */
	long long s0 = sorts_now(), s1, s2, s3;
	double t0 = now();
	size_t cap = churn_pages / 1 + 1, nchunks = 0, mapped = 0;
	struct chunk *ch = malloc(cap * sizeof(*ch));
	uint64_t *cpfn = malloc((churn_pages + MAX_CHUNK_PAGES) * sizeof(*cpfn));
	size_t *first = malloc(cap * sizeof(*first));

	if (!ch || !cpfn || !first)
		die("malloc");
	while (mapped < churn_pages) {
		size_t n = 1 + rnd() % MAX_CHUNK_PAGES;
		char *p = mmap(NULL, n * psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			die("mmap (churn)");
		madvise(p, n * psz, MADV_NOHUGEPAGE);
		for (size_t i = 0; i < n; i++)
			p[i * psz] = 1;
		frames((uintptr_t)p, n, cpfn + mapped);
		ch[nchunks].va = p;
		ch[nchunks].pages = n;
		first[nchunks++] = mapped;
		mapped += n;
	}
	/* A random half of the chunks, unmapped in random order. */
	size_t *order = malloc(nchunks * sizeof(*order));
	uint64_t *freed = malloc((mapped + 1) * sizeof(*freed)), *kept = malloc((mapped + 1) * sizeof(*kept));
	size_t nfreed = 0, nkept = 0;
	char *is_freed = calloc(nchunks, 1);

	if (!order || !freed || !kept || !is_freed)
		die("malloc");
	for (size_t i = 0; i < nchunks; i++)
		order[i] = i;
	for (size_t i = nchunks; i > 1; i--) {
		size_t j = rnd() % i, t = order[i - 1];

		order[i - 1] = order[j];
		order[j] = t;
	}
	for (size_t k = 0; k < nchunks / 2; k++) {
		size_t c = order[k];

		is_freed[c] = 1;
		memcpy(freed + nfreed, cpfn + first[c], ch[c].pages * sizeof(*cpfn));
		nfreed += ch[c].pages;
		if (munmap(ch[c].va, ch[c].pages * psz))
			die("munmap (churn)");
	}
	for (size_t c = 0; c < nchunks; c++)
		if (!is_freed[c]) {
			memcpy(kept + nkept, cpfn + first[c], ch[c].pages * sizeof(*cpfn));
			nkept += ch[c].pages;
		}
	double churn_ms = (now() - t0) * 1e3;
	s1 = sorts_now();

	/* 2. The job's own set-up. */
	if (gap_ms)
		usleep((useconds_t)(gap_ms * 1000));
	if (pause) {
		dir_touch("churned");
		wait_for("go.1");
	}

	/* 3. The main buffer. */
	s2 = sorts_now();
	double t1 = now();
	size_t bytes = bpages * psz;
	char *buf = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int cpu0 = sched_getcpu();

	if (buf == MAP_FAILED)
		die("mmap (buffer)");
	madvise(buf, bytes, MADV_NOHUGEPAGE);
	for (size_t off = 0; off < bytes; off += psz)
		buf[off] = 1;
	double alloc_ms = (now() - t1) * 1e3;
	int cpu1 = sched_getcpu();

	s3 = sorts_now();
	uint64_t *bpfn = malloc(bpages * sizeof(*bpfn));

	if (!bpfn)
		die("malloc");
	frames((uintptr_t)buf, bpages, bpfn);
	if (keep) {
		dir_write("freed", freed, nfreed * 8);
		dir_write("kept", kept, nkept * 8);
		dir_write("pfns", bpfn, bpages * 8);
	}

	/* Where the buffer's pages came from, and which conflict. */
	uint32_t *per_slot = calloc(slots, sizeof(*per_slot)), *rec_slot = calloc(slots, sizeof(*rec_slot));
	char *kept_slot = calloc(slots, 1);

	if (!per_slot || !rec_slot || !kept_slot)
		die("calloc");
	qsort(freed, nfreed, sizeof(*freed), cmp_u64);
	for (size_t i = 0; i < nkept; i++)
		kept_slot[kept[i] % slots] = 1;
	size_t recycled = 0, conflicting = 0, rec_conf = 0, pair_rec = 0, pair_mixed = 0, pair_fresh = 0,
	       on_kept = 0;

	for (size_t i = 0; i < bpages; i++) {
		uint64_t s = bpfn[i] % slots;

		per_slot[s]++;
		if (in_sorted(freed, nfreed, bpfn[i])) {
			rec_slot[s]++;
			recycled++;
		}
	}
	for (size_t i = 0; i < bpages; i++) {
		uint64_t s = bpfn[i] % slots;

		on_kept += kept_slot[s];
		if (per_slot[s] < 2)
			continue;
		conflicting++;
		rec_conf += in_sorted(freed, nfreed, bpfn[i]);
		if (rec_slot[s] == per_slot[s])
			pair_rec++;
		else if (rec_slot[s])
			pair_mixed++;
		else
			pair_fresh++;
	}
	size_t kept_slots, freed_slots, chunk_colliding = 0, ignored;

	slot_counts(kept, nkept, slots, &kept_slots, &ignored);
	slot_counts(freed, nfreed, slots, &freed_slots, &ignored);
	for (size_t c = 0; c < nchunks; c++) {
		size_t sharing;

		slot_counts(cpfn + first[c], ch[c].pages, slots, &ignored, &sharing);
		chunk_colliding += sharing;
	}

	/* 4. The triad. */
	size_t n = bytes / 3 / sizeof(double);
	double *a = (double *)buf, *b = a + n, *c = b + n;

	for (size_t i = 0; i < n; i++) {
		b[i] = 1.0;
		c[i] = 2.0;
	}
	triad_warm(a, b, c, n);
	triad_passes(a, b, c, n, passes);

	double random = 1 - exp((double)(bpages - 1) * log1p(-1.0 / (double)slots));
	char out[1300], path[4096], tmp[4096], sorts[96] = "";

	if (s0 >= 0 && s3 >= 0)
		snprintf(sorts, sizeof(sorts), " sorts_churn=%lld sorts_gap=%lld sorts_buffer=%lld", s1 - s0,
			 s2 - s1, s3 - s2);

	snprintf(out, sizeof(out),
		 "CHURNJOB churn_pages=%zu chunks=%zu freed_pages=%zu kept_pages=%zu kept_slots=%zu "
		 "freed_slots=%zu chunk_colliding=%zu buffer_pages=%zu buffer_conflicting=%zu buffer_fraction=%.6f random=%.6f "
		 "recycled=%zu recycled_conflicting=%zu pair_recycled=%zu pair_mixed=%zu pair_fresh=%zu "
		 "on_kept_slots=%zu lines=%zu passes=%lu check=%.1f cpu0=%d cpu1=%d churn_ms=%.1f "
		 "alloc_ms=%.1f gap_ms=%lu%s\n",
		 mapped, nchunks, nfreed, nkept, kept_slots, freed_slots, chunk_colliding, bpages, conflicting,
		 (double)conflicting / (double)bpages, random, recycled, rec_conf, pair_rec, pair_mixed,
		 pair_fresh, on_kept, n * sizeof(double) / 64, passes, a[n / 2], cpu0, cpu1, churn_ms,
		 alloc_ms, gap_ms, sorts);
	fputs(out, stdout);
	fflush(stdout);
	snprintf(tmp, sizeof(tmp), "%s/.res", dir);
	snprintf(path, sizeof(path), "%s/res", dir);
	FILE *f = fopen(tmp, "w");

	if (!f || fputs(out, f) < 0 || fclose(f) || rename(tmp, path))
		die(path);
	return 0;
}
