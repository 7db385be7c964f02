// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nocache-job: the memory-bound job of bench/nocache-cost, and its own
 * witness of what happens to its pages. Written apart from the project's
 * code: it is the independent measurement.
 *
 *   nocache-job MIB SECONDS [THREADS]
 *
 * Maps MIB MiB of anonymous memory (no huge pages) as three arrays, each
 * staggered by a few cache lines so they are not a power of two apart,
 * touches them, and runs the STREAM triad a[i] = b[i] + s * c[i] on
 * THREADS OpenMP threads (default 1; each touches the part it computes)
 * for SECONDS. After each pass it reads its own /proc/self/pagemap
 * (frame numbers need root) and counts the pages whose frame changed since
 * the pass before: each such change is a migration of one of the job's
 * pages (compaction, NUMA balancing, ...). Prints one line:
 *
 *   NOCACHEJOB seconds=S passes=N gbps=G pass_median_ms=M pass_max_ms=X
 *              pages=P moves=V pages_moved=D absent=A pagemap_ms=R
 *              moved_passes=K moved_pass_median_ms=Q excess_ms=E threads=T
 *
 * gbps counts 24 bytes per triad element, as STREAM does, over the triad
 * time alone (pagemap reads excluded); moves counts every change seen,
 * pages_moved the distinct pages that moved at least once; absent, page
 * reads that found a page not present (a migration in flight). The passes
 * after which moved pages were seen are the moved passes: their median
 * time, and excess_ms, what they took beyond the run's median pass each,
 * summed (the time the migrations cost the job, measured within the run,
 * so slow changes of the machine's load cancel out). Exit 2 on usage
 * errors, 3 when memory or the pagemap cannot be had.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define PFN_MASK ((1ULL << 55) - 1)
#define PRESENT (1ULL << 63)
#define STAGGER 64		/* elements between arrays beyond their length */

static void die(const char *what)
{
	fprintf(stderr, "nocache-job: %s: %s\n", what, strerror(errno));
	exit(3);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Reads the frames of npages pages from addr into pfn (0: absent). */
static void read_frames(int fd, const char *addr, size_t npages, uint64_t *pfn, size_t psz)
{
	static uint64_t buf[4096];
	size_t first = (uintptr_t)addr / psz;

	for (size_t done = 0; done < npages;) {
		size_t n = npages - done < 4096 ? npages - done : 4096;
		ssize_t r = pread(fd, buf, n * 8, (off_t)((first + done) * 8));

		if (r != (ssize_t)(n * 8))
			die("pread /proc/self/pagemap");
		for (size_t i = 0; i < n; i++)
			pfn[done + i] = (buf[i] & PRESENT) ? (buf[i] & PFN_MASK) : 0;
		done += n;
	}
}

int main(int argc, char **argv)
{
	if (argc < 3 || argc > 4 || atol(argv[1]) < 3 || atof(argv[2]) <= 0 ||
	    (argc == 4 && atoi(argv[3]) < 1)) {
		fprintf(stderr, "usage: nocache-job MIB SECONDS [THREADS]\n");
		return 2;
	}
	omp_set_num_threads(argc == 4 ? atoi(argv[3]) : 1);
	size_t psz = (size_t)sysconf(_SC_PAGESIZE), n = (size_t)atol(argv[1]) * 1024 * 1024 / 3 / 8;
	size_t bytes = (3 * (n + STAGGER) * 8 + psz - 1) / psz * psz, npages = bytes / psz;
	double seconds = atof(argv[2]), s = 3.0;
	char *mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (mem == MAP_FAILED)
		die("mmap");
	madvise(mem, bytes, MADV_NOHUGEPAGE);
	double *a = (double *)mem, *b = a + n + STAGGER, *c = b + n + STAGGER;

#pragma omp parallel for schedule(static)
	for (size_t i = 0; i < n; i++) {
		a[i] = 0.0;
		b[i] = 1.0;
		c[i] = 2.0;
	}
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	uint64_t *prev = calloc(npages, 8), *cur = calloc(npages, 8);
	unsigned char *moved = calloc(npages, 1);
	size_t cap = 1 << 16, passes = 0;
	double *pass_s = malloc(cap * sizeof(double)), *moved_s = malloc(cap * sizeof(double));
	double triad_s = 0, map_s = 0;
	size_t nmoved = 0;
	unsigned long long moves = 0, distinct = 0, absent = 0;

	if (fd < 0 || !prev || !cur || !moved || !pass_s || !moved_s)
		die("pagemap or memory for the frame tables");
	read_frames(fd, mem, npages, prev, psz);
	if (!prev[0])
		die("no frame numbers in /proc/self/pagemap (run as root)");
	for (double end = now() + seconds; now() < end;) {
		double t0 = now();

#pragma omp parallel for schedule(static)
		for (size_t i = 0; i < n; i++)
			a[i] = b[i] + s * c[i];
		double t1 = now();

		unsigned long long moves_before = moves;

		read_frames(fd, mem, npages, cur, psz);
		for (size_t p = 0; p < npages; p++) {
			if (!cur[p]) {
				absent++;
				continue;
			}
			if (prev[p] && cur[p] != prev[p]) {
				moves++;
				distinct += !moved[p];
				moved[p] = 1;
			}
			prev[p] = cur[p];
		}
		map_s += now() - t1;
		triad_s += t1 - t0;
		if (passes == cap) {
			cap *= 2;
			pass_s = realloc(pass_s, cap * sizeof(double));
			moved_s = realloc(moved_s, cap * sizeof(double));
			if (!pass_s || !moved_s)
				die("realloc");
		}
		pass_s[passes++] = t1 - t0;
		if (moves != moves_before)
			moved_s[nmoved++] = t1 - t0;
	}
	for (size_t i = 0; i < n; i += 4096)
		if (a[i] != 1.0 + s * 2.0) {
			fprintf(stderr, "nocache-job: wrong triad result at %zu: %g\n", i, a[i]);
			return 3;
		}
	qsort(pass_s, passes, sizeof(double), cmp_double);
	qsort(moved_s, nmoved, sizeof(double), cmp_double);
	double median = pass_s[passes / 2], excess = 0;

	for (size_t i = 0; i < nmoved; i++)
		excess += moved_s[i] - median;
	printf("NOCACHEJOB seconds=%.3f passes=%zu gbps=%.3f pass_median_ms=%.3f pass_max_ms=%.3f "
	       "pages=%zu moves=%llu pages_moved=%llu absent=%llu pagemap_ms=%.1f "
	       "moved_passes=%zu moved_pass_median_ms=%.3f excess_ms=%.1f threads=%d\n",
	       triad_s + map_s, passes, 24.0 * (double)n * (double)passes / triad_s / 1e9,
	       1e3 * median, 1e3 * pass_s[passes - 1], npages, moves, distinct, absent, 1e3 * map_s,
	       nmoved, nmoved ? 1e3 * moved_s[nmoved / 2] : 0.0, 1e3 * excess, omp_get_max_threads());
	return 0;
}
