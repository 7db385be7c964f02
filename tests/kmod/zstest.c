// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * zstest: the guest side of the kmod tests, linked statically so that it
 * runs in a busybox initramfs.
 *
 *   zstest age MIB ROUNDS KEEP_PERMILLE
 *       Ages the free lists: ROUNDS times, fault in MIB MiB page by page,
 *       then free the pages one at a time in random order, keeping
 *       KEEP_PERMILLE of them. The kept pages (holes that stop buddies
 *       merging) stay allocated in a background child until it is killed;
 *       its pid is printed.
 *   zstest measure BYTES SLOTS [WAYS [SORTFILE]]
 *       With SORTFILE, first writes "0" to it (sorts node 0) so that no
 *       other process frees pages between the sort and the allocation.
 *       Faults in BYTES of fresh anonymous memory (no huge pages), reads
 *       each page's frame number from /proc/self/pagemap (root only) and
 *       prints the fraction of the pages whose cache slot (pfn mod SLOTS)
 *       holds more than WAYS pages of this allocation, i.e. that share a
 *       slot of a direct-mapped cache with another of its pages.
 *   zstest measure-thp BYTES SLOTS [SORTFILE]
 *       The same for memory that may get transparent huge pages, as a job's
 *       does by default (2 MiB aligned, no madvise); also prints how much of
 *       it the kernel backed with huge pages.
 *   zstest measure-random BYTES SLOTS POOL_BYTES
 *       Random placement on this node as it is: faults in POOL_BYTES
 *       (most of the free memory), then counts the collisions of BYTES
 *       worth of its pages chosen at random.
 *   zstest hog SECONDS MIB SEED
 *       Allocates and frees memory of random sizes and lifetimes (up to
 *       MIB MiB at a time, huge pages allowed) for SECONDS.
 *   zstest write PATH TEXT
 *       Writes TEXT to PATH with one write(2) and prints "ok" or the errno
 *       name; exits 0 either way unless PATH cannot be opened.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static size_t page_size;

static uint64_t rng_state = 88172645463325252ULL;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static void shuffle(size_t *v, size_t n)
{
	for (size_t i = n; i > 1; i--) {
		size_t j = rnd() % i, t = v[i - 1];

		v[i - 1] = v[j];
		v[j] = t;
	}
}

static char *map(size_t bytes, int huge)
{
	char *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		fprintf(stderr, "zstest: mmap of %zu bytes: %s\n", bytes, strerror(errno));
		exit(3);
	}
	madvise(p, bytes, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
	return p;
}

static void touch(char *p, size_t bytes)
{
	for (size_t off = 0; off < bytes; off += page_size)
		p[off] = (char)off | 1;
}

static int cmd_age(size_t mib, unsigned rounds, unsigned keep_permille)
{
	size_t npages = mib * 1024 * 1024 / page_size, kept = 0;
	size_t *order = malloc(npages * sizeof(*order));
	char **keep = calloc(rounds, sizeof(*keep));

	if (!order || !keep)
		return 3;
	for (unsigned r = 0; r < rounds; r++) {
		char *p = map(npages * page_size, 0);

		touch(p, npages * page_size);
		for (size_t i = 0; i < npages; i++)
			order[i] = i;
		shuffle(order, npages);
		for (size_t i = 0; i < npages; i++) {
			if (rnd() % 1000 < keep_permille) {
				kept++;
				continue;
			}
			madvise(p + order[i] * page_size, page_size, MADV_DONTNEED);
		}
		keep[r] = p;
	}
	fflush(stdout);
	pid_t pid = fork();

	if (pid < 0)
		return 3;
	if (pid == 0) {
		/* The kept pages stay allocated in this child. */
		for (;;)
			pause();
	}
	printf("aged rounds=%u mib=%zu kept_pages=%zu holder=%d\n", rounds, mib, kept, (int)pid);
	return 0;
}

enum measure_mode { MEASURE_4K, MEASURE_THP, MEASURE_RANDOM };

/* A 2 MiB-aligned mapping with the system's huge-page default. */
static char *map_thp_aligned(size_t bytes)
{
	const size_t huge = 2UL << 20;
	char *p = mmap(NULL, bytes + huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		fprintf(stderr, "zstest: mmap of %zu bytes: %s\n", bytes + huge, strerror(errno));
		exit(3);
	}
	return (char *)(((uintptr_t)p + huge - 1) & ~(uintptr_t)(huge - 1));
}

/* AnonHugePages of this process, in KiB (0 when unknown). */
static long anon_huge_kb(void)
{
	FILE *f = fopen("/proc/self/smaps_rollup", "r");
	char line[256];
	long kb = 0;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}

static int cmd_measure(size_t bytes, uint64_t slots, unsigned ways, const char *sortfile,
		       enum measure_mode mode, size_t pool)
{
	size_t npages = bytes / page_size, conflicted = 0, distinct = 0;
	size_t mapped = mode == MEASURE_RANDOM && pool / page_size > npages ? pool / page_size : npages;
	uint32_t *count = calloc(slots, sizeof(*count));
	uint64_t *pm = malloc(mapped * sizeof(*pm));
	char *p = mode == MEASURE_THP ? map_thp_aligned(mapped * page_size) : map(mapped * page_size, 0);
	int fd = open("/proc/self/pagemap", O_RDONLY);

	if (!count || !pm || fd < 0) {
		fprintf(stderr, "zstest: measure: %s\n", strerror(errno));
		return 3;
	}
	if (sortfile) {
		int sfd = open(sortfile, O_WRONLY);

		if (sfd < 0 || write(sfd, "0", 1) != 1) {
			fprintf(stderr, "zstest: sort through %s: %s\n", sortfile, strerror(errno));
			return 3;
		}
		close(sfd);
	}
	touch(p, mapped * page_size);
	if (pread(fd, pm, mapped * sizeof(*pm), (off_t)((uintptr_t)p / page_size * sizeof(*pm))) !=
	    (ssize_t)(mapped * sizeof(*pm))) {
		fprintf(stderr, "zstest: pagemap read: %s\n", strerror(errno));
		return 3;
	}
	if (mode == MEASURE_RANDOM) {
		/* A random npages of the mapped pages, to the front. */
		for (size_t i = 0; i < npages; i++) {
			size_t j = i + rnd() % (mapped - i);
			uint64_t t = pm[i];

			pm[i] = pm[j];
			pm[j] = t;
		}
	}
	for (size_t i = 0; i < npages; i++) {
		uint64_t pfn = pm[i] & ((1ULL << 55) - 1);

		if (!(pm[i] >> 63) || !pfn) {
			fprintf(stderr, "zstest: page %zu not present or no PFN (not root?)\n", i);
			return 3;
		}
		count[pfn & (slots - 1)]++;
	}
	for (uint64_t s = 0; s < slots; s++) {
		if (count[s])
			distinct++;
		if (count[s] > ways)
			conflicted += count[s];
	}
	printf("%.6f pages=%zu slots_used=%zu", (double)conflicted / npages, npages, distinct);
	if (mode == MEASURE_THP)
		printf(" anon_huge_kb=%ld", anon_huge_kb());
	printf("\n");
	return 0;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int cmd_hog(double seconds, size_t mib, uint64_t seed)
{
	enum { SLOTS = 8 };
	char *p[SLOTS] = { 0 };
	size_t len[SLOTS] = { 0 };
	double end = now() + seconds;
	unsigned long cycles = 0;

	rng_state ^= seed * 0x9E3779B97F4A7C15ULL;
	while (now() < end) {
		unsigned s = rnd() % SLOTS;

		if (p[s]) {
			/* Free part of it at random first, then the rest. */
			for (size_t off = 0; off < len[s]; off += page_size)
				if (rnd() % 4 == 0)
					madvise(p[s] + off, page_size, MADV_DONTNEED);
			munmap(p[s], len[s]);
			p[s] = NULL;
		}
		len[s] = (1 + rnd() % (mib * 1024 * 1024 / SLOTS / page_size)) * page_size;
		p[s] = map(len[s], (int)(rnd() % 2));
		touch(p[s], len[s]);
		cycles++;
	}
	printf("hog cycles=%lu\n", cycles);
	return 0;
}

static const char *errname(int e)
{
	switch (e) {
	case EINVAL: return "EINVAL";
	case EBUSY: return "EBUSY";
	case ENODEV: return "ENODEV";
	case EINTR: return "EINTR";
	case ENOMEM: return "ENOMEM";
	case EPERM: return "EPERM";
	case EACCES: return "EACCES";
	case ERANGE: return "ERANGE";
	}
	return strerror(e);
}

static int cmd_write(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY);
	ssize_t w;

	if (fd < 0) {
		printf("open failed: %s\n", errname(errno));
		return 1;
	}
	w = write(fd, text, strlen(text));
	if (w < 0)
		printf("%s\n", errname(errno));
	else
		printf("ok\n");
	close(fd);
	return 0;
}

static unsigned long long num(const char *s)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 0);

	if (!*s || *end) {
		fprintf(stderr, "zstest: '%s' is not a number\n", s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	page_size = (size_t)sysconf(_SC_PAGESIZE);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 5 && !strcmp(argv[1], "age"))
		return cmd_age(num(argv[2]), (unsigned)num(argv[3]), (unsigned)num(argv[4]));
	if (argc >= 4 && argc <= 6 && !strcmp(argv[1], "measure"))
		return cmd_measure(num(argv[2]), num(argv[3]), argc >= 5 ? (unsigned)num(argv[4]) : 1,
				   argc == 6 ? argv[5] : NULL, MEASURE_4K, 0);
	if ((argc == 4 || argc == 5) && !strcmp(argv[1], "measure-thp"))
		return cmd_measure(num(argv[2]), num(argv[3]), 1, argc == 5 ? argv[4] : NULL, MEASURE_THP, 0);
	if (argc == 5 && !strcmp(argv[1], "measure-random"))
		return cmd_measure(num(argv[2]), num(argv[3]), 1, NULL, MEASURE_RANDOM, num(argv[4]));
	if (argc == 5 && !strcmp(argv[1], "hog"))
		return cmd_hog((double)num(argv[2]), num(argv[3]), num(argv[4]));
	if (argc == 4 && !strcmp(argv[1], "write"))
		return cmd_write(argv[2], argv[3]);
	fprintf(stderr, "usage: zstest age MIB ROUNDS KEEP_PERMILLE | measure BYTES SLOTS [WAYS [SORTFILE]] | measure-thp BYTES SLOTS [SORTFILE] | measure-random BYTES SLOTS POOL_BYTES | hog SECONDS MIB SEED | write PATH TEXT\n");
	return 2;
}
