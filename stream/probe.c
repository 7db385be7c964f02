// SPDX-License-Identifier: GPL-2.0-or-later
/* The measurement behind stream-triad. See probe.h. */
#include "config.h"
#include "probe.h"
#include "errbuf.h"
#include "parse.h"

#include <errno.h>
#include <math.h>
#include <numaif.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define HUGE_PAGE ((uint64_t)2 << 20)
/* Consecutive arrays start 64 elements (512 bytes) further into their
 * 2 MiB-aligned slot than the one before: arrays a large power of two apart
 * compete for the same cache sets and the same memory-side cache slots,
 * which would make the probe report the collisions of its own layout. */
#define STAGGER ((uint64_t)64 * ST_ELEM)

/* The scalar of scale and triad, and the initial values. STREAM uses 3.0;
 * 0.5 keeps every combination of kernels finite for ST_MAX_REPEATS
 * repetitions (the fastest growth, scale+add+triad, is 1.37x per
 * repetition) and never decays towards denormals, which would slow the
 * kernels down. */
#define SCALAR 0.5
#define INIT_A 1.0
#define INIT_B 2.0
#define INIT_C 0.5
/* STREAM's tolerance for double precision. */
#define EPSILON 1e-13

int st_topo_init(struct st_topo *t, char *err)
{
	memset(t, 0, sizeof(*t));
	if (hwloc_topology_init(&t->topo))
		return zs_fail(err, "hwloc could not initialise a topology");
	hwloc_topology_set_io_types_filter(t->topo, HWLOC_TYPE_FILTER_KEEP_NONE);
	if (hwloc_topology_load(t->topo)) {
		hwloc_topology_destroy(t->topo);
		return zs_fail(err, "hwloc could not load the topology: %s", strerror(errno));
	}
	t->allowed = hwloc_bitmap_alloc();
	if (!t->allowed) {
		hwloc_topology_destroy(t->topo);
		return zs_fail(err, "out of memory");
	}
	/* The process's binding: taskset, numactl, Slurm's task affinity and
	 * cgroup cpusets all show here. Called before any OpenMP thread exists. */
	if (hwloc_get_cpubind(t->topo, t->allowed, HWLOC_CPUBIND_PROCESS) &&
	    hwloc_get_cpubind(t->topo, t->allowed, HWLOC_CPUBIND_THREAD))
		hwloc_bitmap_copy(t->allowed, hwloc_topology_get_allowed_cpuset(t->topo));
	hwloc_bitmap_and(t->allowed, t->allowed, hwloc_topology_get_allowed_cpuset(t->topo));
	return 0;
}

void st_topo_fini(struct st_topo *t)
{
	if (t->allowed)
		hwloc_bitmap_free(t->allowed);
	if (t->topo)
		hwloc_topology_destroy(t->topo);
	memset(t, 0, sizeof(*t));
}

int st_topo_places(const struct st_topo *t, hwloc_const_bitmap_t within, int **cpus,
		   int *n, char *err)
{
	hwloc_obj_type_t type = HWLOC_OBJ_CORE;
	int nobj = hwloc_get_nbobjs_by_type(t->topo, type);
	hwloc_bitmap_t tmp = hwloc_bitmap_alloc();
	int *out, k = 0;

	if (nobj <= 0) {
		type = HWLOC_OBJ_PU;
		nobj = hwloc_get_nbobjs_by_type(t->topo, type);
	}
	out = calloc(nobj > 0 ? (size_t)nobj : 1, sizeof(*out));
	if (!tmp || !out) {
		hwloc_bitmap_free(tmp);
		free(out);
		return zs_fail(err, "out of memory");
	}
	for (int i = 0; i < nobj; i++) {
		hwloc_obj_t o = hwloc_get_obj_by_type(t->topo, type, (unsigned)i);

		if (!o || !o->cpuset)
			continue;
		hwloc_bitmap_and(tmp, o->cpuset, t->allowed);
		if (within)
			hwloc_bitmap_and(tmp, tmp, within);
		if (!hwloc_bitmap_iszero(tmp))
			out[k++] = hwloc_bitmap_first(tmp);
	}
	hwloc_bitmap_free(tmp);
	*cpus = out;
	*n = k;
	return 0;
}

uint64_t st_topo_cache_bytes(const struct st_topo *t, hwloc_const_bitmap_t within)
{
	uint64_t total = 0;

	if (!within)
		within = t->allowed;
	for (hwloc_obj_type_t ty = HWLOC_OBJ_L1CACHE; ty <= HWLOC_OBJ_L5CACHE; ty++) {
		if (!hwloc_obj_type_is_dcache(ty))
			continue;
		int n = hwloc_get_nbobjs_by_type(t->topo, ty);

		for (int i = 0; i < n; i++) {
			hwloc_obj_t o = hwloc_get_obj_by_type(t->topo, ty, (unsigned)i);

			if (o && o->cpuset && hwloc_bitmap_intersects(o->cpuset, within))
				total += o->attr->cache.size;
		}
	}
	return total;
}

int st_topo_nodes(const struct st_topo *t, struct st_node **nodes, int *n, char *err)
{
	int nn = hwloc_get_nbobjs_by_type(t->topo, HWLOC_OBJ_NUMANODE), k = 0;
	struct st_node *out = calloc(nn > 0 ? (size_t)nn : 1, sizeof(*out));

	if (!out)
		return zs_fail(err, "out of memory");
	for (int i = 0; i < nn; i++) {
		hwloc_obj_t o = hwloc_get_obj_by_type(t->topo, HWLOC_OBJ_NUMANODE, (unsigned)i);

		if (!o || !o->attr->numanode.local_memory)
			continue;
		out[k].os_index = (int)o->os_index;
		out[k].bytes = o->attr->numanode.local_memory;
		out[k].cpus = hwloc_bitmap_alloc();
		if (!out[k].cpus) {
			st_topo_nodes_free(out, k);
			return zs_fail(err, "out of memory");
		}
		if (o->cpuset)
			hwloc_bitmap_and(out[k].cpus, o->cpuset, t->allowed);
		k++;
	}
	*nodes = out;
	*n = k;
	return 0;
}

void st_topo_nodes_free(struct st_node *nodes, int n)
{
	for (int i = 0; i < n; i++)
		hwloc_bitmap_free(nodes[i].cpus);
	free(nodes);
}

/* ---- arrays ---------------------------------------------------------------- */

static uint64_t round_up(uint64_t v, uint64_t to)
{
	return (v + to - 1) / to * to;
}

static uint64_t array_span(uint64_t elements)
{
	return round_up(elements * ST_ELEM, HUGE_PAGE);
}

uint64_t st_run_bytes(uint64_t elements)
{
	return ST_NARRAYS * array_span(elements) + (ST_NARRAYS - 1) * STAGGER + HUGE_PAGE;
}

struct arrays {
	void *map;
	size_t maplen;
	double *a, *b, *c;
};

static int arrays_alloc(const struct st_run_cfg *cfg, struct arrays *ar, char *err)
{
	uint64_t span = array_span(cfg->elements), len = st_run_bytes(cfg->elements);
	char *base;

	if (len > SIZE_MAX)
		return zs_fail(err, "cannot map %llu bytes", (unsigned long long)len);
	ar->maplen = (size_t)len;
	ar->map = mmap(NULL, ar->maplen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);
	if (ar->map == MAP_FAILED) {
		char sz[32];

		return zs_fail(err, "cannot allocate %s for the arrays: %s",
			       zs_format_size(len, sz, sizeof(sz)), strerror(errno));
	}
	base = (char *)round_up((uintptr_t)ar->map, HUGE_PAGE);
	size_t used = (size_t)(len - HUGE_PAGE);

	/* Transparent huge pages when the system allows them on request. */
	(void)madvise(base, used, MADV_HUGEPAGE);
	if (cfg->node >= 0) {
		unsigned long mask[16] = { 0 };
		const unsigned long bits = 8 * sizeof(mask[0]);

		if ((unsigned)cfg->node >= bits * 16) {
			munmap(ar->map, ar->maplen);
			return zs_fail(err, "NUMA node %d is out of range", cfg->node);
		}
		mask[(unsigned)cfg->node / bits] = 1UL << ((unsigned)cfg->node % bits);
		if (mbind(base, used, MPOL_BIND, mask, bits * 16, 0)) {
			int e = errno;

			munmap(ar->map, ar->maplen);
			return zs_fail(err, "cannot bind the arrays to NUMA node %d: %s",
				       cfg->node, strerror(e));
		}
	}
	ar->a = (double *)base;
	ar->b = (double *)(base + span + STAGGER);
	ar->c = (double *)(base + 2 * span + 2 * STAGGER);
	return 0;
}

static void arrays_free(struct arrays *ar)
{
	if (ar->map && ar->map != MAP_FAILED)
		munmap(ar->map, ar->maplen);
}

/* ---- measurement ----------------------------------------------------------- */

/* Thread t's share: whole cache lines, the same split for first touch, the
 * kernels and validation (a static schedule). */
static void chunk(uint64_t n, int t, int nt, size_t *lo, size_t *hi)
{
	uint64_t lines = n / ST_LINE_ELEMS;

	*lo = (size_t)(lines * (uint64_t)t / (uint64_t)nt * ST_LINE_ELEMS);
	*hi = (size_t)(lines * (uint64_t)(t + 1) / (uint64_t)nt * ST_LINE_ELEMS);
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return (a > b) - (a < b);
}

static void stats(const double *times, unsigned n, double bytes, struct st_stats *st)
{
	double *gbs = malloc(n * sizeof(*gbs));

	st->best_s = times[0];
	for (unsigned i = 0; i < n; i++)
		if (times[i] < st->best_s)
			st->best_s = times[i];
	if (!gbs) {
		st->best_gbs = st->median_gbs = st->min_gbs = bytes / st->best_s / 1e9;
		return;
	}
	for (unsigned i = 0; i < n; i++)
		gbs[i] = bytes / times[i] / 1e9;
	qsort(gbs, n, sizeof(*gbs), cmp_double);
	st->min_gbs = gbs[0];
	st->best_gbs = gbs[n - 1];
	st->median_gbs = n % 2 ? gbs[n / 2] : (gbs[n / 2 - 1] + gbs[n / 2]) / 2;
	free(gbs);
}

/* The array each kernel writes. */
static double *kernel_dst(enum st_kernel k, const struct arrays *ar)
{
	switch (k) {
	case ST_COPY:
	case ST_ADD:
		return ar->c;
	case ST_SCALE:
		return ar->b;
	default:
		return ar->a;
	}
}

struct bad {
	uint64_t count;
	size_t index;
	int array;
	double got, want;
};

static void check_range(const double *x, int which, double want, size_t lo, size_t hi,
			struct bad *bad)
{
	for (size_t i = lo; i < hi; i++) {
		if (fabs(x[i] - want) > EPSILON * fabs(want) || x[i] != x[i]) {
			if (!bad->count++) {
				bad->index = i;
				bad->array = which;
				bad->got = x[i];
				bad->want = want;
			}
		}
	}
}

/* Per-thread state of one run, and its timings. */
struct team {
	int nt;
	hwloc_bitmap_t *sets;	/* the CPUs to bind each thread to, later those
				 * it is bound to */
	int *bind_err;		/* errno of a failed binding, per thread */
	struct bad *bads;	/* wrong elements found, per thread */
	double *times;		/* kernel k, repetition r: times[k * R + r] */
};

static int team_alloc(const struct st_run_cfg *cfg, struct team *tm, char *err)
{
	const int nt = cfg->threads;

	tm->nt = nt;
	tm->times = calloc((size_t)ST_NKERNELS * cfg->repeats, sizeof(*tm->times));
	tm->sets = calloc((size_t)nt, sizeof(*tm->sets));
	tm->bind_err = calloc((size_t)nt, sizeof(*tm->bind_err));
	tm->bads = calloc((size_t)nt, sizeof(*tm->bads));
	if (!tm->times || !tm->sets || !tm->bind_err || !tm->bads)
		return zs_fail(err, "out of memory");
	for (int i = 0; i < nt; i++) {
		tm->sets[i] = hwloc_bitmap_alloc();
		if (!tm->sets[i])
			return zs_fail(err, "out of memory");
		if (cfg->pin)
			hwloc_bitmap_only(tm->sets[i], (unsigned)cfg->pin[i % cfg->npin]);
	}
	return 0;
}

static void team_free(struct team *tm)
{
	for (int i = 0; tm->sets && i < tm->nt; i++)
		hwloc_bitmap_free(tm->sets[i]);
	free(tm->sets);
	free(tm->times);
	free(tm->bind_err);
	free(tm->bads);
}

/* Bind, then first touch: each thread writes the share it will work on,
 * so its pages come from its own node (or the bound node). */
static int bind_and_touch(const struct st_topo *t, const struct st_run_cfg *cfg,
			  struct team *tm, const struct arrays *ar, char *err)
{
	const int nt = cfg->threads;
	const uint64_t n = cfg->elements;
	int team = 0;

	omp_set_dynamic(0);
#pragma omp parallel num_threads(nt)
	{
		const int me = omp_get_thread_num();
		size_t lo, hi;

		if (me == 0)
			team = omp_get_num_threads();
		if (cfg->pin && hwloc_set_cpubind(t->topo, tm->sets[me], HWLOC_CPUBIND_THREAD))
			tm->bind_err[me] = errno ? errno : EINVAL;
		chunk(n, me, nt, &lo, &hi);
		for (size_t i = lo; i < hi; i++) {
			ar->a[i] = INIT_A;
			ar->b[i] = INIT_B;
			ar->c[i] = INIT_C;
		}
	}
	if (team != nt)
		return zs_fail(err, "the OpenMP runtime gave %d threads instead of %d (check OMP_THREAD_LIMIT)",
			       team, nt);
	for (int i = 0; i < nt; i++)
		if (tm->bind_err[i])
			return zs_fail(err, "cannot bind thread %d to CPU %d: %s", i,
				       cfg->pin[i % cfg->npin], strerror(tm->bind_err[i]));
	return 0;
}

/* One untimed warm-up repetition, then up to R timed ones: fewer when a
 * budget is set and one more would take the timed part past it (at an
 * average repetition's time). Returns how many ran. */
static unsigned time_kernels(const struct st_run_cfg *cfg, const struct arrays *ar, double *times)
{
	const int nt = cfg->threads;
	const unsigned R = cfg->repeats;
	const uint64_t n = cfg->elements;
	st_kernel_fn fn[ST_NKERNELS];
	double timed_start = 0;

	for (int k = 0; k < ST_NKERNELS; k++)
		fn[k] = st_kernel_get(cfg->isa, cfg->streaming, (enum st_kernel)k);
	for (int r = -1; r < (int)R; r++) {
		if (r == 0)
			timed_start = omp_get_wtime();
		if (cfg->budget_s > 0 && r >= (int)ST_MIN_REPEATS) {
			double spent = omp_get_wtime() - timed_start;

			if (spent + spent / r > cfg->budget_s)
				return (unsigned)r;
		}
		for (int k = 0; k < ST_NKERNELS; k++) {
			if (!(cfg->kernel_mask & (1u << k)))
				continue;
			const st_kernel_fn f = fn[k];
			const double t0 = omp_get_wtime();

#pragma omp parallel num_threads(nt)
			{
				size_t lo, hi;

				chunk(n, omp_get_thread_num(), nt, &lo, &hi);
				f(ar->a, ar->b, ar->c, SCALAR, lo, hi);
			}
			double dt = omp_get_wtime() - t0;

			if (r >= 0)
				times[(size_t)k * R + (unsigned)r] = dt > 1e-9 ? dt : 1e-9;
		}
	}
	return R;
}

/* The test hook: one element of the array the last kernel wrote. */
static void spoil_result(const struct st_run_cfg *cfg, const struct arrays *ar)
{
	int last = 0;

	for (int k = 0; k < ST_NKERNELS; k++)
		if (cfg->kernel_mask & (1u << k))
			last = k;
	kernel_dst((enum st_kernel)last, ar)[cfg->elements / 2] += 1.0;
}

/* Expected values: the same operations on scalars, repeated as often
 * (STREAM's checkSTREAMresults). */
static void expected_values(const struct st_run_cfg *cfg, unsigned repeats, double *ea,
			    double *eb, double *ec)
{
	*ea = INIT_A;
	*eb = INIT_B;
	*ec = INIT_C;
	for (unsigned r = 0; r <= repeats; r++) {
		if (cfg->kernel_mask & (1u << ST_COPY))
			*ec = *ea;
		if (cfg->kernel_mask & (1u << ST_SCALE))
			*eb = SCALAR * *ec;
		if (cfg->kernel_mask & (1u << ST_ADD))
			*ec = *ea + *eb;
		if (cfg->kernel_mask & (1u << ST_TRIAD))
			*ea = *eb + SCALAR * *ec;
	}
}

/* Checks every element and reads back what each thread is bound to. */
static void validate(const struct st_topo *t, const struct st_run_cfg *cfg, struct team *tm,
		     const struct arrays *ar, struct st_result *res)
{
	const int nt = cfg->threads;
	const uint64_t n = cfg->elements;
	double ea, eb, ec;
	uint64_t nbad = 0;
	const struct bad *first = NULL;

	expected_values(cfg, res->repeats, &ea, &eb, &ec);
#pragma omp parallel num_threads(nt)
	{
		const int me = omp_get_thread_num();
		size_t lo, hi;

		/* What each thread is bound to now: the CPUs reported. */
		if (hwloc_get_cpubind(t->topo, tm->sets[me], HWLOC_CPUBIND_THREAD))
			hwloc_bitmap_zero(tm->sets[me]);
		chunk(n, me, nt, &lo, &hi);
		check_range(ar->a, 0, ea, lo, hi, &tm->bads[me]);
		check_range(ar->b, 1, eb, lo, hi, &tm->bads[me]);
		check_range(ar->c, 2, ec, lo, hi, &tm->bads[me]);
	}
	for (int i = 0; i < nt; i++) {
		if (tm->bads[i].count && !first)
			first = &tm->bads[i];
		nbad += tm->bads[i].count;
	}
	res->valid = nbad == 0;
	if (first)
		snprintf(res->validation_msg, sizeof(res->validation_msg),
			 "%c[%zu] = %.17g but %.17g was expected (%llu of %llu elements wrong)",
			 "abc"[first->array], first->index, first->got, first->want,
			 (unsigned long long)nbad, (unsigned long long)(ST_NARRAYS * n));
}

/* The union of the threads' bindings, in increasing order. */
static int bound_cpus(const struct team *tm, struct st_result *res, char *err)
{
	hwloc_bitmap_t all = hwloc_bitmap_alloc();
	int w, cpu, j = 0;

	if (!all)
		return zs_fail(err, "out of memory");
	for (int i = 0; i < tm->nt; i++)
		hwloc_bitmap_or(all, all, tm->sets[i]);
	w = hwloc_bitmap_weight(all);
	res->cpus = calloc(w > 0 ? (size_t)w : 1, sizeof(int));
	if (!res->cpus) {
		hwloc_bitmap_free(all);
		return zs_fail(err, "out of memory");
	}
	hwloc_bitmap_foreach_begin(cpu, all)
		res->cpus[j++] = cpu;
	hwloc_bitmap_foreach_end();
	res->ncpus = j;
	hwloc_bitmap_free(all);
	return 0;
}

int st_run(const struct st_topo *t, const struct st_run_cfg *cfg, struct st_result *res,
	   char *err)
{
	const unsigned R = cfg->repeats;
	const uint64_t n = cfg->elements;
	struct arrays ar = { 0 };
	struct team tm = { 0 };
	int rc = -1;

	memset(res, 0, sizeof(*res));
	if (cfg->threads < 1 || n < (uint64_t)cfg->threads * ST_LINE_ELEMS || !R ||
	    !cfg->kernel_mask)
		return zs_fail(err, "nothing to measure (%d threads, %llu elements)", cfg->threads,
			       (unsigned long long)n);
	if (team_alloc(cfg, &tm, err) || arrays_alloc(cfg, &ar, err) ||
	    bind_and_touch(t, cfg, &tm, &ar, err))
		goto out;
	res->repeats = time_kernels(cfg, &ar, tm.times);
	if (cfg->corrupt)
		spoil_result(cfg, &ar);
	validate(t, cfg, &tm, &ar, res);
	for (int k = 0; k < ST_NKERNELS; k++)
		if (cfg->kernel_mask & (1u << k))
			stats(tm.times + (size_t)k * R, res->repeats,
			      (double)st_kernel_bytes((enum st_kernel)k) * (double)n,
			      &res->kernel[k]);
	rc = bound_cpus(&tm, res, err);
out:
	arrays_free(&ar);
	team_free(&tm);
	return rc;
}
