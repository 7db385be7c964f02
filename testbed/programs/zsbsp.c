// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * zsbsp: a bulk-synchronous OpenMP job, the kind OS noise hurts most:
 * every thread computes for a fixed amount of work, then all meet at a
 * barrier, over and over. Guest side of bench/quarantine-noise, linked
 * statically (-fopenmp).
 *
 *   zsbsp SECONDS WORK OUT
 *
 * One thread per CPU, each pinned to its own (OMP_PROC_BIND is not
 * needed: sched_setaffinity). WORK is the number of inner steps per
 * iteration (calibrate it so that an iteration takes about 1 ms on an
 * idle guest: "zsbsp calibrate MICROSECONDS" prints the WORK that takes
 * that long on one thread). For SECONDS, iteration after iteration; OUT
 * gets one line per iteration: its start (CLOCK_MONOTONIC seconds, which
 * in a guest that never suspends is /proc/uptime's clock), its wall time (barrier to barrier, ns), and the
 * longest time one thread spent on its share (ns). Prints
 * "iterations=N threads=N median_ns=N p99_ns=N max_ns=N kept_max_ns=N":
 * kept_max is the longest any thread took for its share less the median
 * share, the longest time a CPU was kept from the job.
 */
#define _GNU_SOURCE
#include <omp.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* WORK steps of dependent arithmetic the compiler cannot drop. */
static double spin(long work, double x)
{
	for (long i = 0; i < work; i++)
		x = x * 1.0000001 + 1e-9;
	return x;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The work that takes us microseconds on one thread: the fastest of ten
 * timed runs of a million steps, scaled (the fastest run is the one no
 * one interrupted). */
static long calibrate(long us)
{
	const long probe = 1000000;
	uint64_t best = UINT64_MAX;
	volatile double sink;

	for (int i = 0; i < 10; i++) {
		uint64_t t0 = now_ns(), t;

		sink = spin(probe, 1.0);
		t = now_ns() - t0;
		if (t < best)
			best = t;
	}
	(void)sink;
	return (long)((double)probe * us * 1000 / (double)best);
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "calibrate")) {
		printf("work=%ld\n", calibrate(atol(argv[2])));
		return 0;
	}
	if (argc != 4) {
		fprintf(stderr, "usage: zsbsp SECONDS WORK OUT | zsbsp calibrate MICROSECONDS\n");
		return 2;
	}
	double seconds = atof(argv[1]);
	long work = atol(argv[2]);
	FILE *out = fopen(argv[3], "w");
	int threads = omp_get_max_threads();
	size_t cap = (size_t)(seconds * 20000) + 16, n = 0;
	uint64_t *wall = calloc(cap, sizeof(*wall)), *share = calloc(cap * threads, sizeof(*share));
	uint64_t *start = calloc(cap, sizeof(*start)), t_begin, t_end;
	volatile int stop = 0;

	if (!out || !wall || !share || !start || seconds <= 0 || work <= 0) {
		fprintf(stderr, "zsbsp: bad arguments or out of memory\n");
		return 2;
	}
	t_begin = now_ns();
	t_end = t_begin + (uint64_t)(seconds * 1e9);
#pragma omp parallel shared(n, stop)
	{
		int me = omp_get_thread_num();
		cpu_set_t set;
		double x = 1.0 + me;

		CPU_ZERO(&set);
		CPU_SET(me, &set);
		sched_setaffinity(0, sizeof(set), &set);
#pragma omp barrier
		while (!stop) {
			uint64_t t0 = now_ns();

			x = spin(work, x);
			share[n * threads + me] = now_ns() - t0;
#pragma omp barrier
#pragma omp single
			{
				uint64_t t = now_ns();

				start[n] = t0;
				wall[n] = t - t0;
				if (++n == cap || t >= t_end)
					stop = 1;
			}
		}
		if (x == 0.5)
			printf("unlikely\n");
	}
	uint64_t *sorted = malloc(n * sizeof(*sorted)), *shares = malloc(n * threads * sizeof(*shares));
	uint64_t kept = 0, med_share;

	memcpy(sorted, wall, n * sizeof(*sorted));
	qsort(sorted, n, sizeof(*sorted), cmp_u64);
	memcpy(shares, share, n * threads * sizeof(*shares));
	qsort(shares, n * threads, sizeof(*shares), cmp_u64);
	med_share = shares[n * threads / 2];
	for (size_t i = 0; i < n; i++) {
		uint64_t longest = 0;

		for (int t = 0; t < threads; t++)
			if (share[i * threads + t] > longest)
				longest = share[i * threads + t];
		if (longest > med_share && longest - med_share > kept)
			kept = longest - med_share;
		fprintf(out, "%.6f %llu %llu\n", start[i] / 1e9, (unsigned long long)wall[i],
			(unsigned long long)longest);
	}
	fclose(out);
	printf("iterations=%zu threads=%d median_ns=%llu p99_ns=%llu max_ns=%llu kept_max_ns=%llu\n", n,
	       threads, (unsigned long long)sorted[n / 2], (unsigned long long)sorted[n * 99 / 100],
	       (unsigned long long)sorted[n - 1], (unsigned long long)kept);
	return 0;
}
