/*
 * slotpair: checks that a cache model attached to QEMU indexes by guest
 * physical address. Two pairs of pages of this process: pair A whose frame
 * numbers differ by exactly CACHE_PAGES (the same slot of a direct-mapped
 * cache of that many pages), pair B whose frames differ by CACHE_PAGES + 1
 * (neighbouring slots). Loop A reads pair A alternately ITER times, loop
 * B reads pair B 2 * ITER times, each in a function of its own (distinct
 * instructions, so a model counting per instruction tells them apart). A
 * physically indexed direct-mapped cache misses on every read of loop A
 * and on none of loop B after the first.
 *
 *   slotpair BUFFER_MIB CACHE_PAGES ITER
 *
 * Prints "ZSTEST slotpair_a=PFN,PFN slotpair_b=PFN,PFN slotpair_iter=N"
 * then "ZSTEST slotpair_done=SUM"; exits 1 when the buffer holds no such
 * pairs (grow BUFFER_MIB).
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

static int cmp_pfn(const void *a, const void *b)
{
	uint64_t x = ((const uint64_t *)a)[0], y = ((const uint64_t *)b)[0];

	return x < y ? -1 : x > y;
}

/* The first two pages of map (sorted (pfn, index) pairs) DELTA frames
 * apart: their indexes in *i and *j; 0 when there are none. */
static int find_pair(const uint64_t *map, size_t pages, uint64_t delta, size_t *i, size_t *j)
{
	for (size_t a = 0, b = 0; a < pages; a++) {
		while (b < pages && map[2 * b] < map[2 * a] + delta)
			b++;
		if (b < pages && map[2 * b] == map[2 * a] + delta) {
			*i = a;
			*j = b;
			return 1;
		}
	}
	return 0;
}

static __attribute__((noinline)) long loop_a(volatile char *x, volatile char *y, long n)
{
	long s = 0;

	for (long k = 0; k < n; k++)
		s += *x + *y;
	return s;
}

static __attribute__((noinline)) long loop_b(volatile char *x, volatile char *y, long n)
{
	long s = 0;

	for (long k = 0; k < n; k++)
		s -= *x - *y;
	return s;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: slotpair BUFFER_MIB CACHE_PAGES ITER\n");
		return 2;
	}
	size_t pages = strtoull(argv[1], NULL, 10) * 256, ai, aj, bi, bj;
	uint64_t cache = strtoull(argv[2], NULL, 10);
	long iter = strtol(argv[3], NULL, 10);
	long psz = sysconf(_SC_PAGESIZE);
	char *buf = mmap(NULL, pages * psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (!pages || !cache || iter <= 0 || buf == MAP_FAILED) {
		fprintf(stderr, "slotpair: bad arguments or no memory\n");
		return 2;
	}
	madvise(buf, pages * psz, MADV_NOHUGEPAGE);
	for (size_t i = 0; i < pages; i++)
		buf[i * psz] = 1;
	int fd = open("/proc/self/pagemap", O_RDONLY);
	uint64_t *map = calloc(pages, 16);

	for (size_t i = 0; i < pages; i++) {
		uint64_t e;

		if (fd < 0 || !map || pread(fd, &e, 8, ((uintptr_t)buf / psz + i) * 8) != 8 || !(e >> 63)) {
			fprintf(stderr, "slotpair: pagemap unreadable (root needed)\n");
			return 1;
		}
		map[2 * i] = e & ((1ULL << 55) - 1);
		map[2 * i + 1] = i;
	}
	qsort(map, pages, 16, cmp_pfn);
	if (!find_pair(map, pages, cache, &ai, &aj) || !find_pair(map, pages, cache + 1, &bi, &bj)) {
		fprintf(stderr, "slotpair: no pages %llu and %llu frames apart in %zu pages\n",
			(unsigned long long)cache, (unsigned long long)cache + 1, pages);
		return 1;
	}
	printf("ZSTEST slotpair_a=%llu,%llu slotpair_b=%llu,%llu slotpair_iter=%ld\n",
	       (unsigned long long)map[2 * ai], (unsigned long long)map[2 * aj],
	       (unsigned long long)map[2 * bi], (unsigned long long)map[2 * bj], iter);
	fflush(stdout);
	long s = loop_a(buf + map[2 * ai + 1] * psz, buf + map[2 * aj + 1] * psz, iter);

	s += loop_b(buf + map[2 * bi + 1] * psz, buf + map[2 * bj + 1] * psz, 2 * iter);
	printf("ZSTEST slotpair_done=%ld\n", s);
	return 0;
}
