/* SPDX-License-Identifier: GPL-2.0-or-later */
/* stream-triad's measurement: topology and thread placement (hwloc),
 * array allocation (aligned, huge-page friendly, optionally bound to one
 * NUMA node), first touch, timed kernels and STREAM-style validation. */
#ifndef ST_PROBE_H
#define ST_PROBE_H

#include "kernels.h"

#include <hwloc.h>
#include <stdbool.h>
#include <stdint.h>

/* Bytes of one array element, and the footprint granule: every array holds
 * whole 64-byte cache lines, so one thread's share starts on a line. */
#define ST_ELEM ((uint64_t)sizeof(double))
#define ST_LINE_ELEMS 8u
#define ST_NARRAYS 3u

struct st_topo {
	hwloc_topology_t topo;
	hwloc_bitmap_t allowed;		/* CPUs this process may run on */
};

int st_topo_init(struct st_topo *t, char *err);
void st_topo_fini(struct st_topo *t);

/* One CPU (OS index of a PU) per core that has an allowed PU inside
 * within (NULL = all allowed CPUs). Caller frees *cpus. *n may be 0. */
int st_topo_places(const struct st_topo *t, hwloc_const_bitmap_t within,
		   int **cpus, int *n, char *err);

/* Total bytes of the data and unified caches (every level) serving the
 * CPUs in within (NULL = all allowed CPUs). */
uint64_t st_topo_cache_bytes(const struct st_topo *t, hwloc_const_bitmap_t within);

/* The NUMA nodes with memory this process may allocate on. For each node,
 * its local CPUs intersected with the allowed ones (may be empty for a
 * memory-only node). */
struct st_node {
	int os_index;
	uint64_t bytes;
	hwloc_bitmap_t cpus;
};
int st_topo_nodes(const struct st_topo *t, struct st_node **nodes, int *n, char *err);
void st_topo_nodes_free(struct st_node *nodes, int n);

/* What one measurement uses. */
struct st_run_cfg {
	int threads;
	const int *pin;		/* threads CPUs to bind thread i to (round robin
				 * if fewer); NULL = leave placement to the
				 * OpenMP runtime */
	int npin;
	int node;		/* bind the arrays to this NUMA node, -1 = first touch */
	uint64_t elements;	/* per array, a multiple of ST_LINE_ELEMS */
	unsigned repeats;	/* timed repetitions, at most */
	double budget_s;	/* > 0: stop repeating once the timed repetitions
				 * took this long (after ST_MIN_REPEATS at least) */
	unsigned kernel_mask;	/* 1 << enum st_kernel */
	enum st_isa isa;
	bool streaming;
	bool corrupt;		/* test hook: spoil one result element */
};

struct st_stats {
	double best_gbs, median_gbs, min_gbs;
	double best_s;		/* shortest time of one repetition */
};

/* The fewest timed repetitions a time budget leaves: a best, a median
 * and a minimum of their own. */
#define ST_MIN_REPEATS 3u

struct st_result {
	struct st_stats kernel[ST_NKERNELS];
	unsigned repeats;	/* timed repetitions run */
	int *cpus;		/* sorted OS indexes the threads were bound to */
	int ncpus;
	bool valid;
	char validation_msg[256];
};

/* Bytes the arrays of cfg occupy, alignment and staggering included. */
uint64_t st_run_bytes(uint64_t elements);

/* Runs one measurement. Returns 0 (check res->valid) or -1 with err set
 * when nothing could be measured. Caller frees res->cpus. */
int st_run(const struct st_topo *t, const struct st_run_cfg *cfg,
	   struct st_result *res, char *err);

#endif
