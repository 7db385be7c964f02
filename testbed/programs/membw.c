/*
 * membw: a memory-bound job for a cache model to count: a STREAM triad
 * (a[i] = b[i] + s * c[i] over three arrays that share BYTES) or random
 * updates (GUPS-like: table[r % n] ^= r over a table of BYTES, r from a
 * fixed xorshift sequence), PASSES times over the footprint, in base
 * pages. Before the passes it reads its own pagemap and counts the pages
 * of the footprint that share a slot (pfn mod CACHE_BYTES / 4096) with
 * another of them: the placement the cache model then sees.
 *
 *   membw triad|gups|none BYTES PASSES CACHE_BYTES
 *
 * "none" allocates, touches and measures the footprint but runs no pass:
 * the run to subtract. Prints one line:
 *   ZSTEST membw_work=W membw_bytes=N membw_passes=N membw_pages=N
 *          membw_colliding=N membw_accesses=N membw_check=X
 * (accesses: the loads and stores of the passes, 8 bytes each).
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Pages of [buf, buf + pages) whose slot holds another of them; -1 when
 * the pagemap cannot be read. */
static long colliding(const char *buf, size_t pages, uint64_t slots)
{
	long psz = sysconf(_SC_PAGESIZE), n = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY);
	uint64_t *slot = malloc(pages * sizeof(*slot));

	if (fd < 0 || !slot)
		return -1;
	for (size_t i = 0; i < pages; i++) {
		uint64_t e;

		if (pread(fd, &e, 8, ((uintptr_t)buf / psz + i) * 8) != 8 || !(e >> 63) || !(e & ((1ULL << 55) - 1)))
			return -1;
		slot[i] = (e & ((1ULL << 55) - 1)) % slots;
	}
	close(fd);
	qsort(slot, pages, sizeof(*slot), cmp_u64);
	for (size_t i = 0; i < pages; i++)
		if ((i > 0 && slot[i - 1] == slot[i]) || (i + 1 < pages && slot[i + 1] == slot[i]))
			n++;
	free(slot);
	return n;
}

int main(int argc, char **argv)
{
	if (argc != 5 || (strcmp(argv[1], "triad") && strcmp(argv[1], "gups") && strcmp(argv[1], "none"))) {
		fprintf(stderr, "usage: membw triad|gups|none BYTES PASSES CACHE_BYTES\n");
		return 2;
	}
	const char *work = argv[1];
	size_t bytes = strtoull(argv[2], NULL, 10);
	long passes = strtol(argv[3], NULL, 10);
	uint64_t cache = strtoull(argv[4], NULL, 10);
	long psz = sysconf(_SC_PAGESIZE);

	bytes -= bytes % (3 * psz);
	if (bytes < (size_t)(3 * psz) || passes < 0 || cache < (uint64_t)psz) {
		fprintf(stderr, "membw: BYTES '%s', PASSES '%s' or CACHE_BYTES '%s' out of range\n", argv[2], argv[3], argv[4]);
		return 2;
	}
	char *buf = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (buf == MAP_FAILED) {
		perror("membw: mmap");
		return 1;
	}
	madvise(buf, bytes, MADV_NOHUGEPAGE);
	memset(buf, 1, bytes);
	long coll = colliding(buf, bytes / psz, cache / psz);

	if (coll < 0) {
		fprintf(stderr, "membw: /proc/self/pagemap unreadable (root needed)\n");
		return 1;
	}
	uint64_t accesses = 0;
	double check = 0;

	if (!strcmp(work, "triad")) {
		size_t n = bytes / 3 / sizeof(double);
		double *a = (double *)buf, *b = a + n, *c = b + n;

		for (size_t i = 0; i < n; i++) {
			b[i] = 1.0;
			c[i] = 2.0;
		}
		for (long p = 0; p < passes; p++)
			for (size_t i = 0; i < n; i++)
				a[i] = b[i] + 3.0 * c[i];
		accesses = (uint64_t)passes * n * 3;
		check = a[n / 2];
	} else if (!strcmp(work, "gups")) {
		size_t n = bytes / sizeof(uint64_t);
		uint64_t *t = (uint64_t *)buf, r = 88172645463325252ULL, x = 0;

		for (size_t i = 0; i < n; i++)
			t[i] = i;
		for (uint64_t u = 0; u < (uint64_t)passes * n; u++) {
			r ^= r << 13;
			r ^= r >> 7;
			r ^= r << 17;
			t[r % n] ^= r;
		}
		for (size_t i = 0; i < n; i++)
			x ^= t[i];
		accesses = (uint64_t)passes * n * 2;
		check = (double)(x % 1000003);
	}
	printf("ZSTEST membw_work=%s membw_bytes=%zu membw_passes=%ld membw_pages=%zu membw_colliding=%ld "
	       "membw_accesses=%llu membw_check=%.1f\n",
	       work, bytes, passes, bytes / psz, coll, (unsigned long long)accesses, check);
	return 0;
}
