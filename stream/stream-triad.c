// SPDX-License-Identifier: GPL-2.0-or-later
/* stream-triad: the node's memory bandwidth, measured as the STREAM
 * benchmark does, for health checks and for people.
 *
 * Exit status: 0 measured and fine, 1 triad below --min-bw, 2 usage error,
 * 3 could not measure, 4 a kernel computed a wrong result. */
#include "config.h"
#include "errbuf.h"
#include "json.h"
#include "memcache.h"
#include "parse.h"
#include "probe.h"

#include <errno.h>
#include <getopt.h>
#include <numa.h>
#include <omp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PROG "stream-triad"

enum {
	EXIT_OK = 0,
	EXIT_BELOW = 1,
	EXIT_USAGE = 2,
	EXIT_MEASURE = 3,
	EXIT_INVALID = 4,
	GO_ON = -1,		/* not an exit status: the next step runs */
};

#define DEFAULT_REPEATS 20u
/* Without -r, the timed repetitions stop once they took this long (after
 * ST_MIN_REPEATS): a large footprint on a slow node still fits the
 * health check's time limit (-T 5: allocation, first touch, the warm-up
 * and this). */
#define DEFAULT_BUDGET_S 2.0
/* Past this, some combination of kernels would overflow the validation's
 * recurrence (see probe.c). */
#define MAX_REPEATS 2000u
/* The default footprint: STREAM's rule (each array at least four times the
 * caches, so twelve times for three arrays), at least FLOOR so that a small
 * or unknown cache still measures memory, and at most half of the memory
 * available. */
#define CACHE_FACTOR 12u
#define FLOOR_BYTES ((uint64_t)256 << 20)
/* With a memory-side cache: a quarter of it. Conflicts grow with the
 * footprint's share of the cache; a quarter keeps enough of what a
 * half-cache job meets to fail a node whose jobs collide 30% (the node
 * tests measure it), at half the time. At most MEMCACHE_MAX: the
 * allocation and first touch of hundreds of GiB (Optane Memory Mode)
 * would not fit a health check's time limit; stream-triad(1) says how to
 * size -s against it. */
#define MEMCACHE_SHARE 4u
#define MEMCACHE_MAX ((uint64_t)32 << 30)

enum numa_cpus { NUMA_CPUS_LOCAL, NUMA_CPUS_ALL };

struct opts {
	uint64_t size;			/* footprint of the three arrays, 0 = default */
	const char *size_text;
	unsigned repeats;
	bool repeats_given;		/* -r: exactly that many, no time budget */
	unsigned kernel_mask;
	double min_bw;			/* bytes/s, 0 = none */
	bool json;
	bool streaming;
	enum st_isa isa;
	bool numa;
	enum numa_cpus numa_cpus;
	uint64_t memcache_size;		/* assumed memory-side cache, 0 = discover */
};

/* One measurement: the whole machine, or one NUMA node. */
struct plan {
	int node;			/* -1: whole machine, first touch */
	int threads;
	int *places;			/* one CPU per core */
	int nplaces;
	bool runtime_placement;		/* OMP_PROC_BIND/OMP_PLACES decide */
	bool cpus_fallback;		/* memory-only node: all allowed CPUs */
	uint64_t elements;
	const char *size_rule;
	struct st_result res;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((format(printf, 1, 2))) static void warnx_(const char *fmt, ...)
{
	va_list ap;

	fputs(PROG ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

__attribute__((format(printf, 1, 2))) static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs(PROG ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry '" PROG " --help' for the options.\n", stderr);
	return EXIT_USAGE;
}

static void usage(void)
{
	printf("Usage: " PROG " [OPTION]...\n"
	       "Measures the memory bandwidth of this node with the STREAM triad\n"
	       "a[i] = b[i] + s*c[i], one pinned OpenMP thread per allowed core.\n"
	       "\n"
	       "  -s, --size=SIZE         footprint of the three arrays together (not per\n"
	       "                          array), e.g. 512M, 2GiB, 4GB; default: a quarter\n"
	       "                          of a memory-side cache (at most 32 GiB), else 12\n"
	       "                          times the CPU caches (at least 256 MiB); at most\n"
	       "                          half of MemAvailable\n"
	       "  -r, --repeats=N         timed repetitions, 1 to %u, after one untimed\n"
	       "                          warm-up; default %u, fewer (at least 3) when they\n"
	       "                          would take more than 2 s\n"
	       "  -k, --kernels=LIST      comma-separated kernels to run: triad, copy,\n"
	       "                          scale, add or all; triad always runs (default triad)\n"
	       "  -m, --min-bw=BW         exit 1 when the best triad bandwidth is below BW:\n"
	       "                          a number with GB/s, MB/s, TB/s, GiB/s, MiB/s or\n"
	       "                          TiB/s; a bare number is GB/s\n"
	       "  -j, --json              print one JSON object instead of the table\n"
	       "      --no-streaming-stores  use ordinary stores instead of non-temporal ones\n"
	       "      --isa=ISA           kernels to use: auto (default: the widest this CPU\n"
	       "                          has, avx on AMD CPUs), avx512, avx, sse2 or\n"
	       "                          generic (plain C, no streaming stores)\n"
	       "      --numa              also measure each NUMA node on its own: its memory\n"
	       "                          with the threads of --numa-cpus\n"
	       "      --numa-cpus=WHICH   local (default): the node's own allowed CPUs (all\n"
	       "                          allowed CPUs for a node without CPUs); all: every\n"
	       "                          allowed CPU for every node\n"
	       "      --memcache-size=SIZE  assume a memory-side cache of SIZE in front of\n"
	       "                          every NUMA node for the default size, instead of\n"
	       "                          what hwloc discovers\n"
	       "  -h, --help              show this help and exit\n"
	       "  -V, --version           show the version and exit\n"
	       "\n"
	       "Threads: one per allowed core (the process's CPU affinity: taskset, Slurm),\n"
	       "each bound to one CPU. OMP_NUM_THREADS sets the number; more threads than\n"
	       "cores run with a warning. When OMP_PROC_BIND or OMP_PLACES is set, the\n"
	       "OpenMP runtime places the threads of the whole-node measurement.\n"
	       "\n"
	       "Bandwidth counts bytes as STREAM does (24 per triad and add element, 16 per\n"
	       "copy and scale element; 1 GB = 1e9 bytes).\n"
	       "\n"
	       "Exit status: 0 ok, 1 triad below --min-bw, 2 usage error, 3 failure to\n"
	       "measure, 4 wrong results (validation failed).\n",
	       MAX_REPEATS, DEFAULT_REPEATS);
}

static int parse_kernels(const char *s, unsigned *mask, char *err)
{
	char *copy = strdup(s), *save = NULL, *tok;
	unsigned m = 1u << ST_TRIAD;
	int rc = 0;

	if (!copy)
		return zs_fail(err, "out of memory");
	if (!*s || s[strlen(s) - 1] == ',' || *s == ',' || strstr(s, ",,")) {
		free(copy);
		return zs_fail(err, "--kernels: '%s' has an empty entry; expected a comma-separated list of triad, copy, scale, add or all",
			       s);
	}
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int k;

		if (!strcmp(tok, "all")) {
			m = (1u << ST_NKERNELS) - 1;
			continue;
		}
		for (k = 0; k < ST_NKERNELS; k++)
			if (!strcmp(tok, st_kernel_name((enum st_kernel)k)))
				break;
		if (k == ST_NKERNELS) {
			rc = zs_fail(err, "--kernels: '%s' is not a kernel; expected a comma-separated list of triad, copy, scale, add or all",
				     tok);
			break;
		}
		m |= 1u << k;
	}
	free(copy);
	if (!rc)
		*mask = m;
	return rc;
}

/* A size that must not be zero; example names one for the message. */
static int parse_nonzero_size(const char *name, const char *arg, const char *example,
			      uint64_t *v)
{
	char err[ZS_ERRLEN];

	if (zs_parse_size(name, arg, v, err))
		return usage_error("%s", err);
	if (!*v)
		return usage_error("%s: '%s' is zero; expected a size such as %s", name, arg, example);
	return GO_ON;
}

static int parse_min_bw(const char *arg, double *bw)
{
	char err[ZS_ERRLEN];

	/* The unit parser ignores case; a lower-case b is bits. */
	if (strstr(arg, "b/s"))
		return usage_error("--min-bw: '%s' is in bits per second; expected a number with a unit GB/s, MB/s, TB/s, GiB/s, MiB/s or TiB/s (a bare number means GB/s), e.g. 300GB/s",
				   arg);
	if (zs_parse_bandwidth("--min-bw", arg, bw, err))
		return usage_error("%s", err);
	if (*bw <= 0)
		return usage_error("--min-bw: '%s' is not above zero; expected a bandwidth such as 300GB/s",
				   arg);
	return GO_ON;
}

static int parse_isa(const char *arg, enum st_isa *isa)
{
	*isa = st_isa_parse(arg);
	if (*isa == ST_NISA)
		return usage_error("--isa: '%s' is not an instruction set; expected auto, avx512, avx, sse2 or generic",
				   arg);
	if (*isa != ST_ISA_AUTO && !st_isa_supported(*isa))
		return usage_error("--isa: this CPU (or this build) cannot run '%s' kernels; the widest it can run is %s",
				   arg, st_isa_name(st_isa_best()));
	return GO_ON;
}

static int parse_numa_cpus(const char *arg, enum numa_cpus *which)
{
	if (!strcmp(arg, "local"))
		*which = NUMA_CPUS_LOCAL;
	else if (!strcmp(arg, "all"))
		*which = NUMA_CPUS_ALL;
	else
		return usage_error("--numa-cpus: '%s' is not accepted; expected local or all", arg);
	return GO_ON;
}

enum { OPT_NO_NT = 256, OPT_ISA, OPT_NUMA, OPT_NUMA_CPUS, OPT_MEMCACHE };

/* One option c that getopt_long returned, its value in optarg. Returns GO_ON
 * to go on, else the exit code. */
static int parse_option(int c, char **argv, struct opts *o)
{
	char err[ZS_ERRLEN];
	uint64_t u;

	switch (c) {
	case 's':
		o->size_text = optarg;
		return parse_nonzero_size("--size", optarg, "512M or 2GiB", &o->size);
	case 'r':
		if (zs_parse_u64("--repeats", optarg, 1, MAX_REPEATS, &u, err))
			return usage_error("%s", err);
		o->repeats = (unsigned)u;
		o->repeats_given = true;
		return GO_ON;
	case 'k':
		return parse_kernels(optarg, &o->kernel_mask, err) ? usage_error("%s", err) : GO_ON;
	case 'm':
		return parse_min_bw(optarg, &o->min_bw);
	case 'j':
		o->json = true;
		return GO_ON;
	case OPT_NO_NT:
		o->streaming = false;
		return GO_ON;
	case OPT_ISA:
		return parse_isa(optarg, &o->isa);
	case OPT_NUMA:
		o->numa = true;
		return GO_ON;
	case OPT_NUMA_CPUS:
		return parse_numa_cpus(optarg, &o->numa_cpus);
	case OPT_MEMCACHE:
		return parse_nonzero_size("--memcache-size", optarg, "16GiB", &o->memcache_size);
	case 'h':
		usage();
		exit(EXIT_OK);
	case 'V':
		printf(PROG " (" PACKAGE_NAME ") " PACKAGE_VERSION "\n");
		exit(EXIT_OK);
	case ':':
		return usage_error("option '%s' needs a value", argv[optind - 1]);
	default:
		if (!strncmp(argv[optind - 1], "--", 2))
			return usage_error("unknown or ambiguous option, or an option that takes no value: '%s'",
					   argv[optind - 1]);
		return usage_error("unknown option '-%c'", optopt);
	}
}

static int parse_options(int argc, char **argv, struct opts *o)
{
	static const struct option longopts[] = {
		{ "size", required_argument, NULL, 's' },
		{ "repeats", required_argument, NULL, 'r' },
		{ "kernels", required_argument, NULL, 'k' },
		{ "min-bw", required_argument, NULL, 'm' },
		{ "json", no_argument, NULL, 'j' },
		{ "no-streaming-stores", no_argument, NULL, OPT_NO_NT },
		{ "isa", required_argument, NULL, OPT_ISA },
		{ "numa", no_argument, NULL, OPT_NUMA },
		{ "numa-cpus", required_argument, NULL, OPT_NUMA_CPUS },
		{ "memcache-size", required_argument, NULL, OPT_MEMCACHE },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int c, rc;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":s:r:k:m:jhV", longopts, NULL)) != -1) {
		rc = parse_option(c, argv, o);
		if (rc != GO_ON)
			return rc;
	}
	if (optind < argc)
		return usage_error("unexpected argument '%s'; " PROG " takes options only",
				   argv[optind]);
	return GO_ON;
}

/* ---- memory ----------------------------------------------------------------- */

static int read_u64_file(const char *path, uint64_t *v)
{
	FILE *f = fopen(path, "r");
	char buf[64];
	int rc = -1;

	if (!f)
		return -1;
	if (fgets(buf, sizeof(buf), f)) {
		char *end;

		errno = 0;
		unsigned long long x = strtoull(buf, &end, 10);

		if (!errno && end != buf) {
			*v = x;
			rc = 0;
		}
	}
	fclose(f);
	return rc;
}

/* The room left under the memory limits of the cgroup at path (relative
 * to the controller's mount dir) and of its ancestors; UINT64_MAX when
 * none is set. limit and usage name the files (v2: memory.max and
 * memory.current; v1: memory.limit_in_bytes and memory.usage_in_bytes). */
static uint64_t cgroup_room(const char *dir, const char *path, const char *limit,
			    const char *usage)
{
	char p[4096], file[4200];
	uint64_t room = UINT64_MAX, max, cur;

	snprintf(p, sizeof(p), "%s", path);
	for (;;) {
		snprintf(file, sizeof(file), "%s%s/%s", dir, p, limit);
		if (!read_u64_file(file, &max)) {
			snprintf(file, sizeof(file), "%s%s/%s", dir, p, usage);
			if (!read_u64_file(file, &cur) && max < ((uint64_t)1 << 62))
				room = max > cur ? (max - cur < room ? max - cur : room) : 0;
		}
		char *slash = strrchr(p, '/');

		if (!slash || slash == p)
			break;
		*slash = '\0';
	}
	return room;
}

/* MemAvailable, lowered to the room left under a cgroup memory limit (a
 * Slurm job's, cgroup v2 or v1). *what names the source for messages. */
static uint64_t mem_available(const char **what)
{
	uint64_t avail = UINT64_MAX;
	char line[4096];
	FILE *f = fopen("/proc/meminfo", "r");

	*what = "MemAvailable";
	if (f) {
		unsigned long long kb;

		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
				avail = (uint64_t)kb * 1024;
		fclose(f);
	}
	f = fopen("/proc/self/cgroup", "r");
	if (!f)
		return avail;
	while (fgets(line, sizeof(line), f)) {
		char *path = strchr(line, ':'), *ctl;
		uint64_t room = UINT64_MAX;

		line[strcspn(line, "\n")] = '\0';
		if (!path || !(ctl = path + 1, path = strchr(ctl, ':')))
			continue;
		*path++ = '\0';
		if (!*ctl) {
			room = cgroup_room("/sys/fs/cgroup", path, "memory.max", "memory.current");
			if (room == UINT64_MAX)
				room = cgroup_room("/sys/fs/cgroup/unified", path, "memory.max",
						   "memory.current");
		} else if (!strcmp(ctl, "memory")) {
			room = cgroup_room("/sys/fs/cgroup/memory", path, "memory.limit_in_bytes",
					   "memory.usage_in_bytes");
		}
		if (room < avail) {
			avail = room;
			*what = "the cgroup's memory limit";
		}
	}
	fclose(f);
	return avail;
}

/* ---- planning ---------------------------------------------------------------- */

static uint64_t elements_for(uint64_t footprint)
{
	return footprint / (ST_NARRAYS * ST_ELEM) / ST_LINE_ELEMS * ST_LINE_ELEMS;
}

static uint64_t min_footprint(int threads)
{
	return (uint64_t)threads * ST_LINE_ELEMS * ST_NARRAYS * ST_ELEM;
}

static bool env_set(const char *name)
{
	const char *v = getenv(name);

	return v && *v;
}

/* Whether the OpenMP runtime places the threads (the user asked it to). */
static bool runtime_placement(void)
{
	return env_set("OMP_PROC_BIND") || env_set("OMP_PLACES") ||
	       env_set("GOMP_CPU_AFFINITY");
}

/* The default footprint for the CPUs in cpus; *rule says why. */
static uint64_t default_footprint(const struct st_topo *t, hwloc_const_bitmap_t cpus,
				  const struct zs_memcache *mc, int nmc,
				  const struct st_node *nodes, int nnodes, int only_node,
				  const char **rule)
{
	uint64_t cache = 0;

	for (int i = 0; i < nnodes; i++) {
		const struct zs_memcache *m = zs_memcache_find(mc, nmc, nodes[i].os_index);

		if (!m)
			continue;
		if (only_node >= 0 ? nodes[i].os_index == only_node :
		    hwloc_bitmap_intersects(nodes[i].cpus, cpus))
			cache += m->size;
	}
	if (cache) {
		*rule = "memory-side cache";
		return cache / MEMCACHE_SHARE < MEMCACHE_MAX ? cache / MEMCACHE_SHARE : MEMCACHE_MAX;
	}
	*rule = "caches";
	uint64_t f = CACHE_FACTOR * st_topo_cache_bytes(t, cpus);

	return f > FLOOR_BYTES ? f : FLOOR_BYTES;
}

static int plan_threads(const struct st_topo *t, hwloc_const_bitmap_t within, bool whole,
			struct plan *p, char *err)
{
	if (st_topo_places(t, within, &p->places, &p->nplaces, err))
		return -1;
	if (!p->nplaces)
		return zs_fail(err, "no CPU to run on (the allowed CPUs are not in the topology)");
	p->threads = p->nplaces;
	if (env_set("OMP_NUM_THREADS"))
		p->threads = omp_get_max_threads();
	if (p->threads < 1)
		p->threads = 1;
	p->runtime_placement = whole && runtime_placement();
	return 0;
}

/* With OMP_PROC_BIND (or OMP_PLACES) set, the OpenMP runtime has already
 * bound the initial thread to its first place when main starts, so the
 * process's binding no longer shows the CPUs it may use: the union of the
 * runtime's places does. */
static int runtime_allowed(struct st_topo *t, char *err)
{
	int np = omp_get_num_places();
	hwloc_bitmap_t set;

	if (np <= 0)
		return 0;
	set = hwloc_bitmap_alloc();
	if (!set)
		return zs_fail(err, "out of memory");
	for (int i = 0; i < np; i++) {
		int n = omp_get_place_num_procs(i);
		int *ids = calloc(n > 0 ? (size_t)n : 1, sizeof(*ids));

		if (!ids) {
			hwloc_bitmap_free(set);
			return zs_fail(err, "out of memory");
		}
		omp_get_place_proc_ids(i, ids);
		for (int j = 0; j < n; j++)
			hwloc_bitmap_set(set, (unsigned)ids[j]);
		free(ids);
	}
	hwloc_bitmap_and(set, set, hwloc_topology_get_allowed_cpuset(t->topo));
	if (!hwloc_bitmap_iszero(set))
		hwloc_bitmap_copy(t->allowed, set);
	hwloc_bitmap_free(set);
	return 0;
}

/* ---- output ------------------------------------------------------------------ */

/* Output order: triad first, the one the verdict uses. */
static const enum st_kernel order[ST_NKERNELS] = { ST_TRIAD, ST_COPY, ST_SCALE, ST_ADD };

static void json_cpus(const struct st_result *r)
{
	putchar('[');
	for (int i = 0; i < r->ncpus; i++)
		printf("%s%d", i ? "," : "", r->cpus[i]);
	putchar(']');
}

static void json_kernels(const struct st_result *r, unsigned mask)
{
	bool first = true;

	putchar('{');
	for (int j = 0; j < ST_NKERNELS; j++) {
		const enum st_kernel k = order[j];

		if (!(mask & (1u << k)))
			continue;
		const struct st_stats *s = &r->kernel[k];

		printf("%s\"%s\":{\"best_gbs\":%.3f,\"median_gbs\":%.3f,\"min_gbs\":%.3f,\"best_s\":%.6f}",
		       first ? "" : ",", st_kernel_name(k), s->best_gbs, s->median_gbs,
		       s->min_gbs, s->best_s);
		first = false;
	}
	putchar('}');
}

static const char *cpu_list(const struct st_result *r, char *buf, size_t len)
{
	size_t o = 0;

	buf[0] = '\0';
	for (int i = 0; i < r->ncpus && o < len; i++) {
		int j = i;

		while (j + 1 < r->ncpus && r->cpus[j + 1] == r->cpus[j] + 1)
			j++;
		if (j > i)
			o += (size_t)snprintf(buf + o, len - o, "%s%d-%d", i ? "," : "",
					      r->cpus[i], r->cpus[j]);
		else
			o += (size_t)snprintf(buf + o, len - o, "%s%d", i ? "," : "", r->cpus[i]);
		i = j;
	}
	return buf;
}

static void table(const struct plan *p, unsigned mask)
{
	printf("%-8s %12s %12s %12s %12s\n", "kernel", "best GB/s", "median GB/s",
	       "min GB/s", "best time s");
	for (int j = 0; j < ST_NKERNELS; j++) {
		const enum st_kernel k = order[j];

		if (!(mask & (1u << k)))
			continue;
		const struct st_stats *s = &p->res.kernel[k];

		printf("%-8s %12.2f %12.2f %12.2f %12.6f\n", st_kernel_name(k),
		       s->best_gbs, s->median_gbs, s->min_gbs, s->best_s);
	}
}

static void describe(const struct plan *p, const char *label)
{
	char cpus[1024], size[32];

	printf("%s: %d thread%s on CPU%s %s (%s), arrays 3 x %llu doubles = %s (%s)\n", label,
	       p->threads, p->threads == 1 ? "" : "s", p->res.ncpus == 1 ? "" : "s",
	       cpu_list(&p->res, cpus, sizeof(cpus)),
	       p->runtime_placement ? "placed by the OpenMP runtime" :
	       p->cpus_fallback ? "pinned; the node has no CPUs of its own" : "pinned",
	       (unsigned long long)p->elements,
	       zs_format_size(p->elements * ST_NARRAYS * ST_ELEM, size, sizeof(size)),
	       p->size_rule);
}

/* At most three decimals, without trailing zeros: 300, 1099.512, 0.001. */
static const char *plain_number(double v, char *buf, size_t len)
{
	char *p;

	snprintf(buf, len, "%.3f", v);
	p = buf + strlen(buf) - 1;
	while (p > buf && *p == '0')
		*p-- = '\0';
	if (*p == '.')
		*p = '\0';
	return buf;
}

/* ---- main -------------------------------------------------------------------- */

static int measure(const struct st_topo *t, const struct opts *o, enum st_isa isa,
		   struct plan *p, bool corrupt)
{
	char err[ZS_ERRLEN];
	struct st_run_cfg cfg = {
		.threads = p->threads,
		.pin = p->runtime_placement ? NULL : p->places,
		.npin = p->nplaces,
		.node = p->node,
		.elements = p->elements,
		.repeats = o->repeats,
		.budget_s = o->repeats_given ? 0 : DEFAULT_BUDGET_S,
		.kernel_mask = o->kernel_mask,
		.isa = isa,
		.streaming = o->streaming,
		.corrupt = corrupt,
	};

	if (st_run(t, &cfg, &p->res, err)) {
		if (p->node >= 0)
			warnx_("cannot measure NUMA node %d: %s", p->node, err);
		else
			warnx_("cannot measure: %s", err);
		return -1;
	}
	return 0;
}

/* What a run finds and plans; freed by run_free. */
struct run {
	struct st_topo topo;
	struct st_node *nodes;
	int nnodes;
	struct zs_memcache *mc;		/* only when the size is a default */
	int nmc;
	struct plan *plans;		/* the whole machine, then each node with --numa */
	int nplans;
	enum st_isa isa;
};

static uint64_t footprint_of(const struct plan *p)
{
	return p->elements * ST_NARRAYS * ST_ELEM;
}

/* The CPUs this process may use, the NUMA nodes and, for a default size,
 * the memory-side caches. */
static int discover(struct run *r, const struct opts *o)
{
	char err[ZS_ERRLEN];

	if (runtime_placement() && runtime_allowed(&r->topo, err)) {
		warnx_("%s", err);
		return EXIT_MEASURE;
	}
	if (hwloc_bitmap_iszero(r->topo.allowed)) {
		warnx_("no CPU to run on: the process's CPU affinity is empty");
		return EXIT_MEASURE;
	}
	if (st_topo_nodes(&r->topo, &r->nodes, &r->nnodes, err)) {
		warnx_("%s", err);
		return EXIT_MEASURE;
	}
	if (!o->size) {
		struct zs_memcache_opts mo = { .cache_size = o->memcache_size };

		if (zs_memcache_discover(&mo, &r->mc, &r->nmc, err)) {
			warnx_("memory-side caches: %s", err);
			return EXIT_MEASURE;
		}
	}
	return GO_ON;
}

/* Plan i: its threads and, before the memory check, its array size. */
static int plan_one(struct run *r, const struct opts *o, int i)
{
	struct plan *p = &r->plans[i];
	const struct st_node *nd = i ? &r->nodes[i - 1] : NULL;
	hwloc_const_bitmap_t cpus = r->topo.allowed;
	char err[ZS_ERRLEN];

	p->node = nd ? nd->os_index : -1;
	if (nd && o->numa_cpus == NUMA_CPUS_LOCAL) {
		if (hwloc_bitmap_iszero(nd->cpus))
			p->cpus_fallback = true;
		else
			cpus = nd->cpus;
	}
	if (plan_threads(&r->topo, cpus, !nd, p, err)) {
		warnx_("%s", err);
		return EXIT_MEASURE;
	}
	if (!o->size) {
		p->elements = elements_for(default_footprint(&r->topo, cpus, r->mc, r->nmc, r->nodes,
							     r->nnodes, p->node, &p->size_rule));
		return GO_ON;
	}
	p->size_rule = "--size";
	p->elements = elements_for(o->size);
	if (o->size < min_footprint(p->threads))
		return usage_error("--size: '%s' is below the minimum of %llu bytes for %d thread%s (one 64-byte cache line per array and thread)",
				   o->size_text, (unsigned long long)min_footprint(p->threads),
				   p->threads, p->threads == 1 ? "" : "s");
	return GO_ON;
}

static int make_plans(struct run *r, const struct opts *o)
{
	r->nplans = 1 + (o->numa ? r->nnodes : 0);
	r->plans = calloc((size_t)r->nplans, sizeof(*r->plans));
	if (!r->plans) {
		warnx_("out of memory");
		return EXIT_MEASURE;
	}
	for (int i = 0; i < r->nplans; i++) {
		int rc = plan_one(r, o, i);

		if (rc != GO_ON)
			return rc;
	}
	return GO_ON;
}

/* A default size that needs more than half of the available memory
 * shrinks to fit in it; a given size that does not fit is a usage error. */
static int fit_memory(struct run *r, const struct opts *o)
{
	char sz[32], sz2[32];
	const char *avail_src;
	uint64_t avail = mem_available(&avail_src), need = 0;

	for (int i = 0; i < r->nplans; i++) {
		struct plan *p = &r->plans[i];

		if (!o->size && st_run_bytes(p->elements) > avail / 2) {
			p->elements = elements_for(avail / 2 > (uint64_t)8 << 20 ?
						   avail / 2 - ((uint64_t)8 << 20) : 0);
			p->size_rule = "half of the available memory";
			if (p->elements < (uint64_t)p->threads * ST_LINE_ELEMS) {
				warnx_("not enough memory to measure: %s is %s", avail_src,
				       zs_format_size(avail, sz, sizeof(sz)));
				return EXIT_MEASURE;
			}
		}
		if (st_run_bytes(p->elements) > need)
			need = st_run_bytes(p->elements);
	}
	if (o->size && need > avail)
		return usage_error("--size: '%s' does not fit: the arrays need %s but %s is %s; give a smaller size",
				   o->size_text, zs_format_size(need, sz, sizeof(sz)), avail_src,
				   zs_format_size(avail, sz2, sizeof(sz2)));
	return GO_ON;
}

static void warn_plans(const struct run *r)
{
	const struct plan *whole = &r->plans[0];
	char sz[32], sz2[32];

	if (whole->threads > whole->nplaces)
		warnx_("warning: %d threads for %d allowed core%s (OMP_NUM_THREADS): threads share cores and the bandwidth may be understated",
		       whole->threads, whole->nplaces, whole->nplaces == 1 ? "" : "s");
	for (int i = 1; i < r->nplans; i++)
		if (footprint_of(&r->plans[i]) > r->nodes[i - 1].bytes)
			warnx_("warning: NUMA node %d has %s, less than the %s footprint",
			       r->plans[i].node, zs_format_size(r->nodes[i - 1].bytes, sz, sizeof(sz)),
			       zs_format_size(footprint_of(&r->plans[i]), sz2, sizeof(sz2)));
}

static int measure_all(struct run *r, const struct opts *o)
{
	const char *corrupt_env = getenv("ZS_STREAM_CORRUPT");
	bool corrupt = corrupt_env && !strcmp(corrupt_env, "1");

	for (int i = 0; i < r->nplans; i++)
		if (measure(&r->topo, o, r->isa, &r->plans[i], corrupt && i == 0))
			return EXIT_MEASURE;
	return GO_ON;
}

static bool streaming_stores(const struct run *r, const struct opts *o)
{
	return o->streaming && st_isa_has_streaming(r->isa);
}

static void print_json_numa(const struct run *r, const struct opts *o)
{
	printf(",\"numa\":[");
	for (int i = 1; i < r->nplans; i++) {
		const struct plan *p = &r->plans[i];

		printf("%s{\"node\":%d,\"threads\":%d,\"cpus\":", i > 1 ? "," : "", p->node,
		       p->threads);
		json_cpus(&p->res);
		printf(",\"size_bytes\":%llu,\"array_elements\":%llu,\"kernels\":",
		       (unsigned long long)footprint_of(p), (unsigned long long)p->elements);
		json_kernels(&p->res, o->kernel_mask);
		printf(",\"validation\":\"%s\"}", p->res.valid ? "passed" : "failed");
	}
	putchar(']');
}

static void print_json(const struct run *r, const struct opts *o, const char *host, bool failed,
		       double elapsed)
{
	const struct plan *whole = &r->plans[0];

	printf("{\"version\":\"%s\",\"host\":", PACKAGE_VERSION);
	zs_json_string(stdout, host);
	printf(",\"threads\":%d,\"cpus\":", whole->threads);
	json_cpus(&whole->res);
	printf(",\"size_bytes\":%llu,\"array_elements\":%llu,\"size_rule\":\"%s\"",
	       (unsigned long long)footprint_of(whole), (unsigned long long)whole->elements,
	       whole->size_rule);
	printf(",\"repeats\":%u,\"streaming_stores\":%s,\"isa\":\"%s\",\"pinned\":%s",
	       whole->res.repeats, streaming_stores(r, o) ? "true" : "false", st_isa_name(r->isa),
	       whole->runtime_placement ? "false" : "true");
	printf(",\"kernels\":");
	json_kernels(&whole->res, o->kernel_mask);
	print_json_numa(r, o);
	printf(",\"min_bw_gbs\":");
	if (o->min_bw > 0)
		printf("%.3f", o->min_bw / 1e9);
	else
		printf("null");
	printf(",\"validation\":\"%s\",\"elapsed_s\":%.3f}\n", failed ? "failed" : "passed",
	       elapsed);
}

static void print_tables(const struct run *r, const struct opts *o, const char *host,
			 bool failed, double elapsed)
{
	printf(PROG " %s on %s: %u repetitions (+1 warm-up), %s stores (%s kernels)\n",
	       PACKAGE_VERSION, host, r->plans[0].res.repeats, streaming_stores(r, o) ? "streaming" : "ordinary",
	       st_isa_name(r->isa));
	describe(&r->plans[0], "node");
	table(&r->plans[0], o->kernel_mask);
	for (int i = 1; i < r->nplans; i++) {
		char label[64];

		snprintf(label, sizeof(label), "\nNUMA node %d", r->plans[i].node);
		describe(&r->plans[i], label);
		table(&r->plans[i], o->kernel_mask);
	}
	printf("\nvalidation %s; %.2f s\n", failed ? "FAILED" : "passed", elapsed);
}

/* The exit status, with its reason on stderr: wrong results first, then
 * the triad against --min-bw. */
static int verdict(const struct run *r, const struct opts *o, const struct plan *bad)
{
	const struct plan *whole = &r->plans[0];
	const struct st_stats *triad = &whole->res.kernel[ST_TRIAD];
	char sz[32], sz2[32];

	if (bad) {
		if (bad->node >= 0)
			warnx_("validation failed on NUMA node %d: %s", bad->node,
			       bad->res.validation_msg);
		else
			warnx_("validation failed: %s", bad->res.validation_msg);
		return EXIT_INVALID;
	}
	if (o->min_bw > 0 && triad->best_gbs * 1e9 < o->min_bw) {
		warnx_("triad %.1f GB/s < %s GB/s (%d thread%s, %s)", triad->best_gbs,
		       plain_number(o->min_bw / 1e9, sz2, sizeof(sz2)),
		       whole->threads, whole->threads == 1 ? "" : "s",
		       zs_format_size(footprint_of(whole), sz, sizeof(sz)));
		return EXIT_BELOW;
	}
	return EXIT_OK;
}

static int report(const struct run *r, const struct opts *o, double t_start)
{
	const struct plan *bad = NULL;
	char host[256] = "";

	for (int i = 0; i < r->nplans && !bad; i++)
		if (!r->plans[i].res.valid)
			bad = &r->plans[i];
	gethostname(host, sizeof(host) - 1);
	const double elapsed = now() - t_start;

	if (o->json)
		print_json(r, o, host, bad != NULL, elapsed);
	else
		print_tables(r, o, host, bad != NULL, elapsed);
	fflush(stdout);
	return verdict(r, o, bad);
}

static void run_free(struct run *r)
{
	for (int i = 0; r->plans && i < r->nplans; i++) {
		free(r->plans[i].places);
		free(r->plans[i].res.cpus);
	}
	free(r->plans);
	free(r->mc);
	if (r->nodes)
		st_topo_nodes_free(r->nodes, r->nnodes);
	st_topo_fini(&r->topo);
}

int main(int argc, char **argv)
{
	const double t_start = now();
	struct opts o = {
		.repeats = DEFAULT_REPEATS,
		.kernel_mask = 1u << ST_TRIAD,
		.streaming = true,
		.isa = ST_ISA_AUTO,
		.numa_cpus = NUMA_CPUS_LOCAL,
	};
	struct run r = { .nodes = NULL };
	char err[ZS_ERRLEN];
	int rc;

	rc = parse_options(argc, argv, &o);
	if (rc != GO_ON)
		return rc;
	r.isa = o.isa == ST_ISA_AUTO ? st_isa_auto() : o.isa;
	if (o.numa && numa_available() < 0) {
		warnx_("--numa: this system has no NUMA support (libnuma: numa_available failed)");
		return EXIT_MEASURE;
	}
	if (st_topo_init(&r.topo, err)) {
		warnx_("%s", err);
		return EXIT_MEASURE;
	}
	rc = discover(&r, &o);
	if (rc == GO_ON)
		rc = make_plans(&r, &o);
	if (rc == GO_ON)
		rc = fit_memory(&r, &o);
	if (rc == GO_ON) {
		warn_plans(&r);
		rc = measure_all(&r, &o);
	}
	if (rc == GO_ON)
		rc = report(&r, &o, t_start);
	run_free(&r);
	return rc;
}
