/*
 * slotpair: two pages of this process whose physical frame numbers differ
 * by exactly DELTA_PAGES, read alternately ITER times each. A
 * direct-mapped cache of DELTA_PAGES pages indexed by physical address
 * maps them to the same slot: every read evicts the other (a miss each);
 * with DELTA_PAGES one more than the cache's pages they share no slot.
 * Used to check that a cache model sees physical addresses.
 *
 *   slotpair BUFFER_MIB DELTA_PAGES ITER
 *
 * Prints "ZSTEST slotpair_pfn_a=N slotpair_pfn_b=N slotpair_iter=N" or
 * exits 1 when no such pair is in the buffer (grow BUFFER_MIB).
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static int cmp_pfn(const void *a, const void *b)
{
	uint64_t x = ((const uint64_t *)a)[0], y = ((const uint64_t *)b)[0];

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: slotpair BUFFER_MIB DELTA_PAGES ITER\n");
		return 2;
	}
	size_t pages = strtoull(argv[1], NULL, 10) * 256;
	uint64_t delta = strtoull(argv[2], NULL, 10);
	long iter = strtol(argv[3], NULL, 10);
	long psz = sysconf(_SC_PAGESIZE);
	char *buf = mmap(NULL, pages * psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (!pages || !delta || iter <= 0 || buf == MAP_FAILED) {
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

		if (fd < 0 || pread(fd, &e, 8, ((uintptr_t)buf / psz + i) * 8) != 8 || !(e >> 63)) {
			fprintf(stderr, "slotpair: pagemap unreadable (root needed)\n");
			return 1;
		}
		map[2 * i] = e & ((1ULL << 55) - 1);
		map[2 * i + 1] = i;
	}
	qsort(map, pages, 16, cmp_pfn);
	/* Two cursors over the sorted frames: the first pair DELTA apart. */
	for (size_t i = 0, j = 0; i < pages; i++) {
		while (j < pages && map[2 * j] < map[2 * i] + delta)
			j++;
		if (j < pages && map[2 * j] == map[2 * i] + delta) {
			volatile char *a = buf + map[2 * i + 1] * psz, *b = buf + map[2 * j + 1] * psz;
			long sum = 0;

			printf("ZSTEST slotpair_pfn_a=%llu slotpair_pfn_b=%llu slotpair_iter=%ld\n",
			       (unsigned long long)map[2 * i], (unsigned long long)map[2 * j], iter);
			fflush(stdout);
			for (long k = 0; k < iter; k++)
				sum += *a + *b;
			printf("ZSTEST slotpair_sum=%ld\n", sum);
			return 0;
		}
	}
	fprintf(stderr, "slotpair: no two pages %llu frames apart in %zu pages\n", (unsigned long long)delta, pages);
	return 1;
}
