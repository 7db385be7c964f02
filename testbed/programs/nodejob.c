// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nodejob: the jobs of the cache-node tests and benches, run by Slurm in
 * the guest. Written apart from the project's code on purpose: it is the
 * independent measurement the project's figures are checked against.
 *
 *   nodejob hold DIR BYTES CACHE_BYTES WAYS ROUNDS [MAX_WAIT_S [PAGES]]
 *       For K = 1..ROUNDS: waits for the file DIR/go.K, maps BYTES of fresh
 *       anonymous memory, touches it, reads its own /proc/self/pagemap
 *       (root only) and prints one line
 *         NODEJOB round=K buffer_pages=.. buffer_conflicting=.. buffer_fraction=..
 *                 all_pages=.. all_conflicting=.. all_fraction=.. random=..
 *                 buffer_huge_pages=.. prefix2_fraction=.. prefix4_fraction=..
 *                 prefix8_fraction=.. prefix2_random=.. prefix4_random=..
 *                 prefix8_random=..
 *       also written to DIR/res.K; then keeps the memory until DIR/release.K
 *       exists and unmaps it. "buffer" counts the fresh memory alone, "all"
 *       every present page the process maps (what a tool reading the
 *       process from outside sees). A page conflicts when its cache slot,
 *       frame number mod CACHE_BYTES / (WAYS * page size), holds more than
 *       WAYS of the counted pages. "random" is the fraction expected when
 *       the buffer's pages were placed at random: P[Binomial(n-1, 1/slots)
 *       >= WAYS]; cpu0 and cpu1 are the CPUs the touching began and ended
 *       on. While DIR/keep-pfns exists, the buffer's frame numbers in
 *       address (touch) order also go to DIR/pfns.K (raw 64-bit words), for
 *       a diagnosis against the free lists dumped before. Each wait gives
 *       up after MAX_WAIT_S (default 1800) with exit status 2; the file DIR/stop ends the job at once (status 0).
 *       PAGES: "base" (the default) asks for no huge pages in the buffer;
 *       "system" leaves that to the system's transparent huge page setting.
 *       Pages are counted in base pages whatever backs them (pagemap gives
 *       the frame of every base page of a huge page), so a huge page counts
 *       once per cache slot it covers; buffer_huge_pages is how many of the
 *       buffer's base pages a huge page backs (/proc/self/smaps).
 *       prefixN_fraction counts the first 1/N of the buffer alone: the
 *       buffer is touched one page after the other from its start, so that
 *       prefix holds the pages a job of 1/N the size would have got from
 *       the same free lists (the conflicts a smaller probe would meet);
 *       prefixN_random is its random-placement reference.
 *       The other pages the process maps, by what maps them: "exe" (this
 *       program's file), "lib" (every other file: shared libraries, the
 *       loader), "anon" (anonymous memory besides the buffer: heap, stack,
 *       this program's frame lists) and "special" ([vdso], [vvar], ...);
 *       for each K of those, K_pages, K_conflicting (in an overfull slot
 *       of the "all" count) and K_with_buffer (sharing a slot with a
 *       buffer page); buffer_conflicting_all is the buffer's own pages in
 *       an overfull slot of that count.
 *   nodejob age MIB KEEP_PERMILLE FILE SEED
 *       Ages the free lists as a job that comes and goes does: faults in
 *       MIB of anonymous memory page by page, and after each page, with
 *       probability KEEP_PERMILLE/1000, appends one page to FILE (a tmpfs
 *       file, so page cache that outlives the job, scattered among the
 *       job's pages); then frees the anonymous pages one at a time in
 *       random order.
 *   nodejob alloc BYTES
 *       A job that needs memory: maps BYTES of anonymous memory in base
 *       pages, touches every page and prints
 *         NODEJOB alloc bytes=.. ms=..
 *       (the time from the mapping to the last page touched), then exits.
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
/* What maps a frame of the "all" list, kept above the frame number while
 * the maps are read (TAG_SHIFT is above every bit of PFN_MASK). */
enum kind { K_BUFFER, K_EXE, K_LIB, K_ANON, K_SPECIAL, K_KINDS };
static const char *const kind_name[K_KINDS] = { "buffer", "exe", "lib", "anon", "special" };
#define TAG_SHIFT 56

static size_t page_size;

static void die(const char *what)
{
	fprintf(stderr, "nodejob: %s: %s\n", what, strerror(errno));
	exit(3);
}

static unsigned long long number(const char *what, const char *s)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || *s == '-') {
		fprintf(stderr, "nodejob: %s: '%s' is not a non-negative integer\n", what, s);
		exit(2);
	}
	return v;
}

/* --- frames and slots ------------------------------------------------- */

struct frames {
	uint64_t *pfn;
	size_t n, cap;
};

static void add_frame(struct frames *f, uint64_t pfn)
{
	if (f->n == f->cap) {
		f->cap = f->cap ? 2 * f->cap : 65536;
		f->pfn = realloc(f->pfn, f->cap * sizeof(*f->pfn));
		if (!f->pfn)
			die("realloc");
	}
	f->pfn[f->n++] = pfn;
}

/* Present frames of [lo, hi) of this process, each with TAG above its
 * frame number. */
static void read_range(int pagemap, uintptr_t lo, uintptr_t hi, struct frames *f, uint64_t tag)
{
	static uint64_t buf[4096];

	for (uintptr_t va = lo; va < hi;) {
		size_t want = (hi - va) / page_size;

		if (want > 4096)
			want = 4096;
		ssize_t got = pread(pagemap, buf, want * 8, (off_t)(va / page_size * 8));

		if (got <= 0)
			return;	/* e.g. [vsyscall]: not readable, not memory */
		for (ssize_t i = 0; i < got / 8; i++)
			if ((buf[i] & PRESENT) && (buf[i] & PFN_MASK))
				add_frame(f, (buf[i] & PFN_MASK) | tag << TAG_SHIFT);
		va += (uintptr_t)(got / 8) * page_size;
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Distinct frames, their count, and how many lie in overfull slots. */
static void count_conflicts(struct frames *f, uint64_t slots, unsigned ways, size_t *pages,
			    size_t *conflicting)
{
	uint32_t *per_slot = calloc(slots, sizeof(*per_slot));
	size_t n = 0;

	if (!per_slot)
		die("calloc");
	qsort(f->pfn, f->n, sizeof(*f->pfn), cmp_u64);
	for (size_t i = 0; i < f->n; i++)
		if (i == 0 || f->pfn[i] != f->pfn[i - 1]) {
			f->pfn[n++] = f->pfn[i];
			per_slot[f->pfn[i] % slots]++;
		}
	f->n = n;
	*pages = n;
	*conflicting = 0;
	for (size_t i = 0; i < n; i++)
		if (per_slot[f->pfn[i] % slots] > ways)
			(*conflicting)++;
	free(per_slot);
}

static int cmp_pfn(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a & PFN_MASK, y = *(const uint64_t *)b & PFN_MASK;

	return x < y ? -1 : x > y;
}

struct kind_count {
	size_t pages, conflicting, with_buffer;
};

/* Of the tagged "all" list: distinct frames by kind (a frame mapped twice
 * counts once, under one of its mappings' kinds), how many lie in an overfull slot of the
 * whole count, and how many share a slot with a buffer page. Leaves the
 * list untagged, so that count_conflicts() counts the frames it always
 * did. */
static void count_kinds(struct frames *f, uint64_t slots, unsigned ways,
			struct kind_count out[K_KINDS])
{
	uint32_t *per_slot = calloc(slots, sizeof(*per_slot));
	uint32_t *buffer_slot = calloc(slots, sizeof(*buffer_slot));

	if (!per_slot || !buffer_slot)
		die("calloc");
	memset(out, 0, K_KINDS * sizeof(*out));
	qsort(f->pfn, f->n, sizeof(*f->pfn), cmp_pfn);
	for (size_t i = 0; i < f->n; i++) {
		uint64_t pfn = f->pfn[i] & PFN_MASK;

		if (i > 0 && pfn == (f->pfn[i - 1] & PFN_MASK))
			continue;
		per_slot[pfn % slots]++;
		if (f->pfn[i] >> TAG_SHIFT == K_BUFFER)
			buffer_slot[pfn % slots]++;
	}
	for (size_t i = 0; i < f->n; i++) {
		uint64_t pfn = f->pfn[i] & PFN_MASK, slot = pfn % slots;
		unsigned k = (unsigned)(f->pfn[i] >> TAG_SHIFT);

		if (i > 0 && pfn == (f->pfn[i - 1] & PFN_MASK))
			continue;
		out[k].pages++;
		out[k].conflicting += per_slot[slot] > ways;
		out[k].with_buffer += buffer_slot[slot] > (k == K_BUFFER);
	}
	for (size_t i = 0; i < f->n; i++)
		f->pfn[i] &= PFN_MASK;
	free(per_slot);
	free(buffer_slot);
}

/* What maps [lo, hi): the buffer, this program's file, another file, an
 * anonymous mapping, or a kernel one ("[vdso]" and the like). */
static enum kind map_kind(const char *line, uintptr_t lo, const char *buf, const char *exe)
{
	const char *path = strchr(line, '/');
	const char *bracket = strchr(line, '[');

	if (lo == (uintptr_t)buf)
		return K_BUFFER;
	if (path) {
		size_t n = strcspn(path, "\n");

		return strlen(exe) == n && !strncmp(path, exe, n) ? K_EXE : K_LIB;
	}
	if (bracket && strncmp(bracket, "[heap]", 6) && strncmp(bracket, "[stack]", 7))
		return K_SPECIAL;
	return K_ANON;
}

/* P[Binomial(n - 1, 1/slots) >= ways]: another page of the n lands in a
 * page's slot at least `ways` times. */
static double random_fraction(size_t n, uint64_t slots, unsigned ways)
{
	double p = 1.0 / (double)slots, cdf = 0;
	double trials = (double)n - 1;

	if (n < 2)
		return 0;
	for (unsigned k = 0; k < ways; k++)
		cdf += exp(lgamma(trials + 1) - lgamma(k + 1.0) - lgamma(trials - k + 1) +
			   k * log(p) + (trials - k) * log1p(-p));
	return cdf >= 1 ? 0 : 1 - cdf;
}

/* --- hold ------------------------------------------------------------- */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int exists(const char *dir, const char *name, unsigned long long k)
{
	char path[4096];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s.%llu", dir, name, k);
	return stat(path, &st) == 0;
}

/* 1 when DIR/NAME.K appeared, 0 on DIR/stop, exits 2 after max_wait s. */
static int wait_file(const char *dir, const char *name, unsigned long long k, double max_wait)
{
	double end = now() + max_wait;
	char stop[4096];
	struct stat st;

	snprintf(stop, sizeof(stop), "%s/stop", dir);
	for (;;) {
		if (exists(dir, name, k))
			return 1;
		if (stat(stop, &st) == 0)
			return 0;
		if (now() > end) {
			fprintf(stderr, "nodejob: %s/%s.%llu did not appear within %.0f s\n", dir, name,
				k, max_wait);
			exit(2);
		}
		usleep(20000);
	}
}

/* The frame lists live as long as the job: reserved and touched before the
 * first reading, so that the process maps the same pages when it reads
 * itself as when a tool reads it from outside while it holds its memory. */
static struct frames mine, all;

static void reserve(struct frames *f, size_t cap)
{
	f->cap = cap;
	f->pfn = malloc(cap * sizeof(*f->pfn));
	if (!f->pfn)
		die("malloc");
	memset(f->pfn, 0, cap * sizeof(*f->pfn));
}

/* DIR/pfns.K: the buffer's frames in touch order, before counting sorts them. */
static void keep_pfns(const char *dir, unsigned long long round)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/keep-pfns", dir);
	if (access(path, F_OK))
		return;
	snprintf(path, sizeof(path), "%s/pfns.%llu", dir, round);
	f = fopen(path, "w");
	if (!f || fwrite(mine.pfn, sizeof(*mine.pfn), mine.n, f) != mine.n || fclose(f))
		die(path);
}

/* Base pages of [buf, buf + bytes) that huge pages back: the
 * AnonHugePages of the mapping that starts at buf, from /proc/self/smaps. */
static size_t huge_pages(const char *buf)
{
	FILE *smaps = fopen("/proc/self/smaps", "r");
	char line[4096];
	int inside = 0;
	size_t kib = 0;

	if (!smaps)
		die("/proc/self/smaps");
	while (fgets(line, sizeof(line), smaps)) {
		unsigned long lo, hi;
		char c;

		if (sscanf(line, "%lx-%lx %c", &lo, &hi, &c) == 3)
			inside = lo == (uintptr_t)buf;
		else if (inside)
			sscanf(line, "AnonHugePages: %zu kB", &kib);
	}
	fclose(smaps);
	return kib * 1024 / page_size;
}

static void measure(const char *dir, unsigned long long round, char *buf, size_t bytes,
		    uint64_t slots, unsigned ways, int cpu0, int cpu1)
{
	size_t bpages, bconf, apages, aconf, huge = huge_pages(buf);
	int pagemap = open("/proc/self/pagemap", O_RDONLY);
	FILE *maps = fopen("/proc/self/maps", "r");
	char line[4096], path[4096], tmp[4096], out[1536], exe[4096];
	struct kind_count kinds[K_KINDS];
	ssize_t exe_len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (pagemap < 0 || !maps || exe_len < 0)
		die("/proc/self/pagemap, maps or exe");
	exe[exe_len] = 0;
	mine.n = all.n = 0;
	/* A page that compaction is migrating reads as a migration entry, not
	 * a frame, until the move ends: read the buffer again, for at most
	 * a second, before calling a missing frame an error. */
	for (int tries = 0;; tries++) {
		read_range(pagemap, (uintptr_t)buf, (uintptr_t)buf + bytes, &mine, 0);
		if (mine.n == bytes / page_size)
			break;
		if (tries == 50) {
			fprintf(stderr, "nodejob: %zu of %zu pages show a frame after %d reads (not root?)\n",
				mine.n, bytes / page_size, tries + 1);
			exit(3);
		}
		mine.n = 0;
		usleep(20000);
	}
	keep_pfns(dir, round);
	while (fgets(line, sizeof(line), maps)) {
		unsigned long lo, hi;

		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2)
			read_range(pagemap, lo, hi, &all, map_kind(line, lo, buf, exe));
	}
	fclose(maps);
	close(pagemap);
	/* Before the whole buffer is counted (which sorts it): its prefixes
	 * in touch order. */
	double prefix[3], prefix_random[3];
	struct frames part = { 0 };

	reserve(&part, mine.n / 2 + 1);
	for (int i = 0; i < 3; i++) {
		size_t ppages, pconf;

		part.n = mine.n >> (i + 1);
		memcpy(part.pfn, mine.pfn, part.n * sizeof(*part.pfn));
		count_conflicts(&part, slots, ways, &ppages, &pconf);
		prefix[i] = ppages ? (double)pconf / (double)ppages : 0;
		prefix_random[i] = random_fraction(ppages, slots, ways);
	}
	free(part.pfn);
	count_conflicts(&mine, slots, ways, &bpages, &bconf);
	count_kinds(&all, slots, ways, kinds);
	count_conflicts(&all, slots, ways, &apages, &aconf);
	snprintf(out, sizeof(out),
		 "NODEJOB round=%llu buffer_pages=%zu buffer_conflicting=%zu buffer_fraction=%.6f "
		 "all_pages=%zu all_conflicting=%zu all_fraction=%.6f random=%.6f cpu0=%d cpu1=%d "
		 "buffer_huge_pages=%zu prefix2_fraction=%.6f prefix4_fraction=%.6f "
		 "prefix8_fraction=%.6f prefix2_random=%.6f prefix4_random=%.6f prefix8_random=%.6f\n",
		 round, bpages, bconf, (double)bconf / (double)bpages, apages, aconf,
		 (double)aconf / (double)apages, random_fraction(bpages, slots, ways), cpu0, cpu1,
		 huge, prefix[0], prefix[1], prefix[2], prefix_random[0], prefix_random[1],
		 prefix_random[2]);
	/* The line ends in its newline: the kinds go in front of it. */
	size_t len = strlen(out) - 1;

	len += (size_t)snprintf(out + len, sizeof(out) - len, " buffer_conflicting_all=%zu",
				kinds[K_BUFFER].conflicting);
	for (int k = K_EXE; k < K_KINDS && len < sizeof(out); k++)
		len += (size_t)snprintf(out + len, sizeof(out) - len,
					" %s_pages=%zu %s_conflicting=%zu %s_with_buffer=%zu",
					kind_name[k], kinds[k].pages, kind_name[k],
					kinds[k].conflicting, kind_name[k], kinds[k].with_buffer);
	if (len + 2 > sizeof(out))
		die("result line too long");
	strcpy(out + len, "\n");
	fputs(out, stdout);
	fflush(stdout);
	snprintf(tmp, sizeof(tmp), "%s/.res.%llu", dir, round);
	snprintf(path, sizeof(path), "%s/res.%llu", dir, round);
	FILE *f = fopen(tmp, "w");

	if (!f || fputs(out, f) < 0 || fclose(f) || rename(tmp, path))
		die(path);
}

static int cmd_hold(const char *dir, size_t bytes, uint64_t cache, unsigned ways,
		    unsigned long long rounds, double max_wait, int base_pages)
{
	uint64_t slots;

	if (!ways || cache % ((uint64_t)ways * page_size) || bytes < page_size) {
		fprintf(stderr, "nodejob: cache %llu bytes with %u ways, %zu bytes: no whole slots\n",
			(unsigned long long)cache, ways, bytes);
		return 2;
	}
	slots = cache / ((uint64_t)ways * page_size);
	bytes -= bytes % page_size;
	reserve(&mine, bytes / page_size + 1024);
	reserve(&all, bytes / page_size + 65536);
	for (unsigned long long k = 1; k <= rounds; k++) {
		if (!wait_file(dir, "go", k, max_wait))
			return 0;
		char *buf = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (buf == MAP_FAILED)
			die("mmap");
		if (base_pages)
			madvise(buf, bytes, MADV_NOHUGEPAGE);
		int cpu0 = sched_getcpu();

		for (size_t off = 0; off < bytes; off += page_size)
			buf[off] = 1;
		measure(dir, k, buf, bytes, slots, ways, cpu0, sched_getcpu());
		/* After the last round the process exits with its memory still
		 * mapped, so that nobody sampling the job sees it without it. */
		if (!wait_file(dir, "release", k, max_wait) || k == rounds)
			return 0;
		munmap(buf, bytes);
	}
	return 0;
}

/* --- age -------------------------------------------------------------- */

static uint64_t rng;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static int cmd_age(size_t mib, unsigned keep_permille, const char *file, uint64_t seed)
{
	size_t n = mib * 1024 * 1024 / page_size, kept = 0;
	size_t *order = malloc(n * sizeof(*order));
	char *page = calloc(1, page_size);
	int fd = open(file, O_WRONLY | O_CREAT | O_APPEND, 0600);
	char *p = mmap(NULL, n * page_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (!order || !page || fd < 0 || p == MAP_FAILED)
		die(fd < 0 ? file : "memory");
	rng = seed * 0x9E3779B97F4A7C15ULL + 88172645463325252ULL;
	madvise(p, n * page_size, MADV_NOHUGEPAGE);
	for (size_t i = 0; i < n; i++) {
		p[i * page_size] = 1;
		if (rnd() % 1000 < keep_permille) {
			page[0] = (char)i;
			if (write(fd, page, page_size) != (ssize_t)page_size)
				die(file);
			kept++;
		}
		order[i] = i;
	}
	close(fd);
	for (size_t i = n; i > 1; i--) {
		size_t j = rnd() % i, t = order[i - 1];

		order[i - 1] = order[j];
		order[j] = t;
	}
	for (size_t i = 0; i < n; i++)
		madvise(p + order[i] * page_size, page_size, MADV_DONTNEED);
	printf("NODEJOB aged pages=%zu kept=%zu\n", n, kept);
	return 0;
}

/* --- alloc ------------------------------------------------------------ */

static int cmd_alloc(size_t bytes)
{
	double t0 = now();
	char *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		die("mmap");
	madvise(p, bytes, MADV_NOHUGEPAGE);
	for (size_t off = 0; off < bytes; off += page_size)
		p[off] = 1;
	printf("NODEJOB alloc bytes=%zu ms=%.1f\n", bytes, (now() - t0) * 1e3);
	return 0;
}

/* PAGES of hold: 1 for "base", 0 for "system". */
static int page_choice(const char *s)
{
	if (!strcmp(s, "base") || !strcmp(s, "system"))
		return !strcmp(s, "base");
	fprintf(stderr, "nodejob: PAGES '%s': want base or system\n", s);
	exit(2);
}

int main(int argc, char **argv)
{
	page_size = (size_t)sysconf(_SC_PAGESIZE);
	if (argc >= 7 && argc <= 9 && !strcmp(argv[1], "hold"))
		return cmd_hold(argv[2], number("BYTES", argv[3]), number("CACHE_BYTES", argv[4]),
				(unsigned)number("WAYS", argv[5]), number("ROUNDS", argv[6]),
				argc >= 8 ? (double)number("MAX_WAIT_S", argv[7]) : 1800,
				argc == 9 ? page_choice(argv[8]) : 1);
	if (argc == 3 && !strcmp(argv[1], "alloc"))
		return cmd_alloc(number("BYTES", argv[2]));
	if (argc == 6 && !strcmp(argv[1], "age"))
		return cmd_age(number("MIB", argv[2]), (unsigned)number("KEEP_PERMILLE", argv[3]),
			       argv[4], number("SEED", argv[5]));
	fprintf(stderr, "usage: nodejob hold DIR BYTES CACHE_BYTES WAYS ROUNDS [MAX_WAIT_S [base|system]]\n"
			"       nodejob age MIB KEEP_PERMILLE FILE SEED\n"
			"       nodejob alloc BYTES\n");
	return 2;
}
