// SPDX-License-Identifier: GPL-2.0-or-later
/* zonesort run: the periodic helper. Sorts every N seconds until SIGTERM or
 * until the process it watches (the step's slurmstepd) is gone; with
 * --watch S, also sorts again whenever memory churned in the first S
 * seconds (the churn watch, below), with or without a period. After each
 * round it prints the running totals as one line, which the plugin reads
 * for its summary; when nobody reads, lines are dropped, never blocking.
 * With --sample PID it also measures, after each periodic round, the
 * cache-slot conflicts of PID's descendants (the step's tasks when PID is
 * their slurmstepd) and prints them as a "conflicts ..." line
 * (lib/slots.h). */
#include "config.h"
#include "cli.h"
#include "child.h"
#include "conflicts.h"
#include "metrics.h"
#include "occupied.h"
#include "pagemap.h"
#include "parse.h"
#include "sorter.h"
#include "vmstat.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <unistd.h>

/* The helper's address space, its sampler's page lists included: a step
 * of more pages than fit is not sampled (the round says "out of memory"),
 * the helper goes on sorting. 8 bytes a page: about 40 million pages. */
#define ZS_HELPER_MEMORY (512ull << 20)

static volatile sig_atomic_t stop_requested;

/* The helper runs in the step, its memory charged to the job, and inherits
 * slurmstepd's protection from the OOM killer (oom_score_adj -1000): near
 * the job's limit the kernel would kill the user's tasks rather than it.
 * A negative value is reset to 0 (raising it needs no privilege; a site's
 * positive value is kept), and the address space is bounded. */
static void helper_limits(void)
{
	struct rlimit rl;
	char buf[16] = "";
	int fd = open("/proc/self/oom_score_adj", O_RDWR | O_CLOEXEC);

	if (fd >= 0) {
		ssize_t n = read(fd, buf, sizeof(buf) - 1);

		if (n > 0 && atoi(buf) < 0 && (lseek(fd, 0, SEEK_SET) || write(fd, "0\n", 2) != 2))
			fprintf(stderr, "zonesort run: cannot reset oom_score_adj: %s\n", strerror(errno));
		close(fd);
	}
	if (!getrlimit(RLIMIT_AS, &rl) && (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > ZS_HELPER_MEMORY)) {
		rl.rlim_cur = ZS_HELPER_MEMORY;
		if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < rl.rlim_cur)
			rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_AS, &rl);
	}
}

static void on_stop(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void emit(const char *line, bool final)
{
	size_t len = strlen(line);
	int flags = fcntl(STDOUT_FILENO, F_GETFL);

	/* The final line must reach the plugin, which drains the pipe while it
	 * waits for us; the others may be dropped. */
	if (flags >= 0)
		fcntl(STDOUT_FILENO, F_SETFL, final ? flags & ~O_NONBLOCK : flags | O_NONBLOCK);
	if (write(STDOUT_FILENO, line, len) < 0 && errno != EAGAIN && errno != EPIPE)
		stop_requested = 1;
}

struct round_ctx {
	char errors[4][ZS_ERRLEN];
	unsigned nerrors;
};

static void note_failure(void *ctx, const struct zs_node_result *r)
{
	struct round_ctx *rc = ctx;

	if ((r->outcome == ZS_FAILED || r->outcome == ZS_NOSORTER) && rc->nerrors < 4)
		snprintf(rc->errors[rc->nerrors++], ZS_ERRLEN, "%s", r->msg);
	if (r->occupied < 0 && rc->nerrors < 4)
		snprintf(rc->errors[rc->nerrors++], ZS_ERRLEN, "occupied slots not given: %.400s",
			 r->occupied_why);
}

/* True while the watched process lives. pidfd polls readable when it exits;
 * without pidfd (kernels before 5.3) a changed parent pid tells us. */
static bool parent_alive(pid_t parent, int pidfd)
{
	if (!parent)
		return true;
	if (pidfd >= 0) {
		struct pollfd p = { .fd = pidfd, .events = POLLIN };

		return poll(&p, 1, 0) == 0;
	}
	return getppid() == parent;
}

/* Sleeps until deadline, a stop request or the parent's exit. */
static void wait_until(double deadline, pid_t parent, int pidfd, const sigset_t *unblocked)
{
	while (!stop_requested && parent_alive(parent, pidfd)) {
		double left = deadline - zs_now();
		struct pollfd p = { .fd = pidfd, .events = POLLIN };
		struct timespec ts;

		if (left <= 0)
			return;
		/* Without a pidfd, look at the parent at least once a second. */
		if (pidfd < 0 && left > 1.0)
			left = 1.0;
		ts.tv_sec = (time_t)left;
		ts.tv_nsec = (long)((left - (double)ts.tv_sec) * 1e9);
		ppoll(pidfd >= 0 ? &p : NULL, pidfd >= 0 ? 1 : 0, &ts, unblocked);
	}
}

/*
 * A sort orders the free lists for the next allocation, not knowing the
 * pages an allocation in flight already holds: a sort in the middle of one
 * hands the rest of it pages that share slots with the first part. Pages
 * freed in bulk (a job exiting, a file deleted) land in front of sorted
 * lists in no order of ours, and a sort racing them is slow and finds its
 * blocks gone. So a due sort waits for a quiet moment: QUIET_WINDOWS
 * windows of QUIET_WINDOW seconds in a row in none of which the node
 * allocated or freed more than 1/512 of its memory (the kernel's pgalloc
 * and pgfree counters: free memory itself lags behind the per-CPU lists,
 * which newer kernels let grow to hundreds of megabytes), nor the watched
 * step's tasks grew by more than QUIET_GROWTH bytes resident (a job
 * faulting in its arrays, however slowly). One window alone would let a
 * sort through a short pause. It never waits longer than max(period,
 * 10 s): a job that allocates all the time is still sorted.
 */
#define QUIET_WINDOW 0.5
#define QUIET_WINDOWS 2
#define QUIET_MIN_WAIT 10.0
#define QUIET_GROWTH (256LL << 10)

/* What a window compares: pages the node allocated and freed so far, and
 * the step's resident bytes (-1 when not watched or unreadable). */
struct memory_now {
	unsigned long long allocated, freed;
	long long resident;
};

static int memory_now(pid_t parent, struct memory_now *m, unsigned long long *quiet_pages)
{
	char err[ZS_ERRLEN];

	if (quiet_pages) {
		struct sysinfo si;

		if (sysinfo(&si))
			return -1;
		*quiet_pages = (unsigned long long)si.totalram * si.mem_unit / 512 /
			       (unsigned long long)sysconf(_SC_PAGESIZE);
	}
	if (zs_vm_pages(&m->allocated, &m->freed))
		return -1;
	m->resident = parent > 0 ? zs_tree_resident(parent, getpid(), err) : -1;
	return 0;
}

static bool quiet_window(const struct memory_now *a, const struct memory_now *b,
			 unsigned long long pages)
{
	if (b->allocated - a->allocated > pages || b->freed - a->freed > pages)
		return false;
	return a->resident < 0 || b->resident < 0 || b->resident - a->resident <= QUIET_GROWTH;
}

/* Waits until the deadline, then on while memory is being allocated or
 * freed in bulk (at most max_wait more seconds). False when it gave up
 * waiting: memory is still busy. */
static bool wait_quiet(double deadline, double max_wait, pid_t parent, int pidfd,
			 const sigset_t *unblocked)
{
	struct memory_now before, after;
	unsigned long long pages = 0;
	double give_up = deadline + max_wait;
	int quiet = 0;

	/* Sampling starts early enough for a quiet machine to sort on time. */
	wait_until(deadline - QUIET_WINDOWS * QUIET_WINDOW, parent, pidfd, unblocked);
	if (memory_now(parent, &before, &pages))
		return true;
	for (double t = deadline - (QUIET_WINDOWS - 1) * QUIET_WINDOW;; t += QUIET_WINDOW) {
		wait_until(t, parent, pidfd, unblocked);
		if (stop_requested || !parent_alive(parent, pidfd))
			return true;
		if (memory_now(parent, &after, NULL))
			return true;
		quiet = quiet_window(&before, &after, pages) ? quiet + 1 : 0;
		if (quiet >= QUIET_WINDOWS && t >= deadline)
			return true;
		if (zs_now() >= give_up)
			return false;
		before = after;
	}
}

/*
 * The churn watch (--watch SECONDS). Pages freed after a sort go in front
 * of the lists it ordered, as the allocator frees them (the per-CPU lists,
 * then the heads of the free lists), and are handed out first: a job whose
 * start-up (MPI, input, its own set-up) maps and unmaps memory before it
 * allocates its arrays gets mostly the pages it just freed, in no order of
 * ours, and after a churn of a few times the cache they share slots more
 * often than unsorted memory would (bench/REPORT-churn-effect.md). For
 * SECONDS after it starts, the helper looks at the node's page counters
 * every CHURN_POLL seconds and keeps an estimate of the pages freed since
 * the last sort that were not allocated again (frees add to it,
 * allocations take from it first, as the allocator does); once that
 * reaches 1/ZS_CHURN_SHARE of the caches' pages and CHURN_QUIET looks in a
 * row found the node quiet (an allocation in flight would be split by the
 * sort; one look alone let sorts through a start-up that paused for a
 * moment), it sorts again. Looks 50 ms apart let the sort in when a
 * start-up pauses a quarter of a second before its arrays
 * (bench/REPORT-churn-effect.md); each costs a read of /proc/vmstat
 * (tens of microseconds on a small node, more with more CPUs).
 * min_interval does not hold such sorts back (the
 * step's own sort a moment before would make every one of them recent);
 * instead CHURN_MIN_GAP seconds at least pass between two (short: a sort
 * in a pause of the start-up must not keep the one after its end from
 * coming in time), and a watch makes at most CHURN_MAX_SORTS. A job that
 * allocates its arrays the instant its start-up ends leaves no quiet
 * moment in between: it gets the pages it freed whatever the helper does.
 */
#define CHURN_POLL 0.05
#define CHURN_QUIET 2
#define CHURN_MIN_GAP 0.25
#define CHURN_MAX_SORTS 16

struct churn_watch {
	double until;				/* when the watch ends; 0: no watch */
	unsigned long long share;		/* pages in front that make a sort due */
	unsigned long long quiet;		/* pages one look may see moving and be quiet */
	unsigned long long front;		/* freed since the last sort, not taken again */
	unsigned long long allocated, freed;	/* the counters at the last look */
	unsigned quiet_looks;			/* quiet looks in a row */
	double last_sort;
};

/* Starts counting from now: after the step's sort, and after each sort. */
static void churn_reset(struct churn_watch *c)
{
	if (zs_vm_pages(&c->allocated, &c->freed))
		c->allocated = c->freed = 0;
	c->front = 0;
	c->quiet_looks = 0;
	c->last_sort = zs_now();
}

/* One look at the counters. *quiet: the node hardly allocated or freed
 * since the last look. True when a sort is due for churn (sorts: the
 * churn sorts so far). */
static bool churn_look(struct churn_watch *c, unsigned sorts, bool *quiet)
{
	unsigned long long a, f, da, df;

	*quiet = false;
	if (zs_vm_pages(&a, &f))
		return false;
	da = a - c->allocated;
	df = f - c->freed;
	c->allocated = a;
	c->freed = f;
	c->front = (c->front > da ? c->front - da : 0) + df;
	*quiet = da + df <= c->quiet;
	c->quiet_looks = *quiet ? c->quiet_looks + 1 : 0;
	return c->quiet_looks >= CHURN_QUIET && c->front >= c->share && sorts < CHURN_MAX_SORTS &&
	       zs_now() - c->last_sort >= CHURN_MIN_GAP;
}

/* Conflict sampling of a process tree: the cache geometry is found once. */
struct sampler {
	pid_t root;
	struct zs_node_geom *geoms;
	unsigned ngeoms;
	struct zs_sample last;
	bool off;
};

static int sampler_open(struct sampler *sm, const struct zs_memcache_opts *mc, pid_t root,
			char *err)
{
	memset(sm, 0, sizeof(*sm));
	sm->root = root;
	if (!zs_pagemap_privileged())
		return zs_fail(err, "root is needed to read page frame numbers");
	if (zs_node_geoms(mc, false, 0, 0, &sm->geoms, &sm->ngeoms, err))
		return -1;
	for (unsigned i = 0; i < sm->ngeoms; i++)
		if (sm->geoms[i].error[0])
			return zs_fail(err, "%s", sm->geoms[i].error);
	return 0;
}

/* Measures the tree once; 1 when there was nothing to measure. */
static int sampler_sample(struct sampler *sm, char *err)
{
	pid_t *pids;
	size_t n;
	struct zs_pfnset set = { 0 };
	struct zs_zone *zones = NULL;
	unsigned nzones = 0;
	struct zs_conflict_report r;
	int rc = -1;

	if (zs_descendants(sm->root, getpid(), &pids, &n, err))
		return -1;
	for (size_t i = 0; i < n; i++)
		/* A task that exits meanwhile is simply not counted. */
		if (zs_pagemap_collect(pids[i], &set, err) == ZS_PAGEMAP_ERROR)
			goto out;
	zs_pfnset_unique(&set);
	if (zs_zones_read(NULL, NULL, &zones, &nzones, err) ||
	    zs_conflicts_measure(&set, zones, nzones, sm->geoms, sm->ngeoms, &r, err))
		goto out;
	rc = 1;
	if (r.pages) {
		sm->last.fraction = r.fraction;
		sm->last.random = r.random_fraction;
		sm->last.pages = r.pages;
		sm->last.samples++;
		rc = 0;
	}
	zs_conflict_report_free(&r);
out:
	free(zones);
	zs_pfnset_free(&set);
	free(pids);
	return rc;
}

/* The command line; the policy words are read after helper_limits. */
struct run_args {
	uint64_t every, parent, max_rounds, sample, watch;
	char node[ZS_NODE_NAME_MAX + 1];	/* --node: "" = this node's name */
	struct zs_policy policy;
};

/* The slots the step's own pages occupy, given to each periodic sort
 * (occupied.h): the geometry found once; off after an error, said once.
 * Only for a step of at most 1/OCCUPIED_SHARE of the caches' pages: the
 * quarantine takes the free blocks that would land on its slots, so a
 * larger step would fill it towards its maximum and have the node
 * compacted, migrating the step's own pages, every compact_interval. Its
 * libraries, heap and stack are far below that. */
#define OCCUPIED_SHARE 8
struct occupancy {
	bool on;
	struct zs_node_geom *geoms;
	unsigned ngeoms;
	uint64_t pages_max;		/* 1/OCCUPIED_SHARE of the target caches' pages:
					 * a larger step gets none */
};

/* The running helper. */
struct helper {
	const struct run_args *a;
	struct zs_sorter *s;
	struct sampler sm;
	struct zs_tally tally;
	pid_t parent;			/* 0: none watched */
	int pidfd;
	sigset_t unblocked;		/* the mask ppoll waits with */
	unsigned min_interval;
	struct churn_watch churn;
	struct occupancy occ;
};

static void usage(void)
{
	printf("usage: zonesort run --every SECONDS|--watch SECONDS [--parent PID] [--count N] [--sample PID] [--node NAME] [key=value ...]\n"
	       "Sorts the target nodes every SECONDS (1-86400), first after one period,\n"
	       "until SIGTERM, until process PID exits, or after N rounds. A node sorted\n"
	       "by anyone less than max(min_interval, SECONDS/2) ago is skipped, unless\n"
	       "1/16 of its cache was freed on it since that sort (recent_freed=sort,\n"
	       "the kernel sorter only). A due sort waits while the node allocates or\n"
	       "frees memory fast (an allocation in flight, a job exiting) or PID's\n"
	       "descendants grow resident, at most max(SECONDS, 10) seconds.\n"
	       "With --watch SECONDS (1-86400; the kernel sorter only), for that long\n"
	       "it also looks at the node's page counters twenty times a second and sorts\n"
	       "again once the pages freed since the last sort and not allocated again\n"
	       "reach 1/16 of the caches' pages and two looks in a row found the node\n"
	       "quiet (memory churn: those pages would be handed out first, in no\n"
	       "order); such sorts are not held back by min_interval, come 0.25 s apart\n"
	       "at least and 16 at most per watch. Without --every it only watches,\n"
	       "then waits for the end.\n"
	       "Prints the running totals after each round:\n"
	       "  rounds=R sorted=S recent=R busy=B failed=F seconds=T compacted=C\n"
	       "  fallback=L degraded=D churn=K freed=E stopped=P occupied=O\n"
	       "(compacted: sorts that compacted the node for its quarantine; fallback and\n"
	       "degraded: rounds of a cache node without its kernel sorter, compacted in\n"
	       "its place or left alone, see zonesort(8); churn: sorts the churn watch\n"
	       "made; freed: sorts of a node sorted less than max(min_interval,\n"
	       "SECONDS/2) ago, made because memory was freed on it since; stopped:\n"
	       "failed sorts whose write to the kernel outlasted kernel_timeout;\n"
	       "occupied: sorts given the cache slots the step's own pages occupy,\n"
	       "occupied_slots=yes, this project's module only, a step of at most\n"
	       "an eighth of the caches: its next allocations go to other slots). On a\n"
	       "cache node without its kernel sorter, unless compact_fallback=periodic,\n"
	       "it says so once and exits 0.\n"
	       "With --sample PID, also measures after each round the cache-slot\n"
	       "conflicts of PID's descendant processes (this helper excluded), as\n"
	       "'zonesort conflicts' does, and prints\n"
	       "  conflicts fraction=F random=R pages=N samples=K\n"
	       "(the cache from hwloc, or cache_size= and ways=; needs root).\n"
	       "--node NAME: the Slurm node whose per-node-class values (cache_size=\n"
	       "knl*:16GiB) apply and whose name the metrics carry (default:\n"
	       "$SLURMD_NODENAME, else the short host name).\n"
	       "The helper resets a negative oom_score_adj (slurmstepd's) to 0 and\n"
	       "limits its address space to 512 MiB; a step too large to sample in it\n"
	       "is not sampled.\n");
}

/* Reads the options into a. Returns CLI_GO_ON, or the exit code (help
 * printed, or a usage error). */
static int parse_run(int argc, char **argv, struct run_args *a)
{
	static const struct option opts[] = {
		{ "every", required_argument, NULL, 'e' },
		{ "parent", required_argument, NULL, 'p' },
		{ "count", required_argument, NULL, 'c' },
		{ "sample", required_argument, NULL, 's' },
		{ "node", required_argument, NULL, 'N' },
		{ "watch", required_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char err[ZS_ERRLEN];
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+e:p:c:s:N:w:h", opts, NULL)) != -1) {
		switch (c) {
		case 'e':
			if (zs_parse_u64("--every", optarg, 1, ZS_MAX_PERIOD, &a->every, err))
				return cli_usage_error("run", "%s", err);
			break;
		case 'p':
			if (zs_parse_u64("--parent", optarg, 1, 4194304, &a->parent, err))
				return cli_usage_error("run", "%s", err);
			break;
		case 'c':
			if (zs_parse_u64("--count", optarg, 1, UINT32_MAX, &a->max_rounds, err))
				return cli_usage_error("run", "%s", err);
			break;
		case 's':
			if (zs_parse_u64("--sample", optarg, 1, 4194304, &a->sample, err))
				return cli_usage_error("run", "%s", err);
			break;
		case 'N':
			if (!*optarg || strlen(optarg) >= sizeof(a->node))
				return cli_usage_error("run", "--node '%.40s': expected a node name of 1-%d characters",
						       optarg, ZS_NODE_NAME_MAX);
			strcpy(a->node, optarg);
			break;
		case 'w':
			if (zs_parse_u64("--watch", optarg, 1, ZS_MAX_PERIOD, &a->watch, err))
				return cli_usage_error("run", "%s", err);
			break;
		case 'h':
			usage();
			return ZS_EXIT_OK;
		default:
			return cli_usage_error("run", "see 'zonesort run --help'");
		}
	}
	if (!a->every && !a->watch)
		return cli_usage_error("run", "--every SECONDS or --watch SECONDS is required (1-%u)",
				       ZS_MAX_PERIOD);
	return CLI_GO_ON;
}

/* "error: <what><msg>" as one line. */
static void emit_error(const char *what, const char *msg, bool final)
{
	char line[ZS_ERRLEN + 64];

	snprintf(line, sizeof(line), "error: %s%s\n", what, msg);
	emit(line, final);
}

static void emit_tally(const struct zs_tally *t, bool final)
{
	char line[ZS_ERRLEN + 64];

	zs_tally_format(t, line, sizeof(line) - 1);
	strcat(line, "\n");
	emit(line, final);
}

/* SIGTERM, SIGINT and SIGHUP request a stop. They are only delivered inside
 * ppoll (with *unblocked), so a stop request is never lost between the
 * check and the sleep. */
static void stop_on_signals(sigset_t *unblocked)
{
	static const int stops[] = { SIGTERM, SIGINT, SIGHUP };
	struct sigaction sa;
	sigset_t block;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&block);
	for (unsigned i = 0; i < sizeof(stops) / sizeof(stops[0]); i++) {
		sigaction(stops[i], &sa, NULL);
		sigaddset(&block, stops[i]);
	}
	signal(SIGPIPE, SIG_IGN);
	sigprocmask(SIG_BLOCK, &block, unblocked);
	for (unsigned i = 0; i < sizeof(stops) / sizeof(stops[0]); i++)
		sigdelset(unblocked, stops[i]);
}

/* Before a periodic sort: the slots the step's pages occupy, so that this
 * project's module steers the step's next allocation to others. Not
 * before the churn watch's sorts: reading a step's pages takes time, and
 * those sorts must come between a start-up's last free and its arrays. A
 * step whose resident memory passes pages_max gets none (struct
 * occupancy). A step that cannot be read turns it off, said once. */
static void occupy_round(struct helper *h)
{
	struct zs_pfnset set = { 0 };
	struct zs_zone *zones = NULL;
	struct zs_occupied *o = NULL;
	unsigned nzones = 0, n = 0;
	pid_t *pids = NULL;
	size_t npids = 0;
	long long resident;
	char err[ZS_ERRLEN];

	if (!h->occ.on || !zs_sorter_takes_occupied(h->s))
		return;
	resident = zs_tree_resident(h->parent, getpid(), err);
	if (resident < 0)
		goto fail;
	if ((uint64_t)resident / (uint64_t)sysconf(_SC_PAGESIZE) >= h->occ.pages_max)
		return;
	if (zs_descendants(h->parent, getpid(), &pids, &npids, err))
		goto fail;
	/* Entries read: twice pages_max covers a step below it with room for
	 * the holes of its mappings; past it the step is left without. */
	set.budget = 2 * h->occ.pages_max + 65536;
	for (size_t i = 0; i < npids; i++)
		if (zs_pagemap_collect(pids[i], &set, err) == ZS_PAGEMAP_ERROR)
			goto fail;
	if (set.unread_pages || set.n >= h->occ.pages_max)
		goto out;
	if (zs_zones_read(NULL, NULL, &zones, &nzones, err) ||
	    zs_occupied_build(&set, zones, nzones, h->occ.geoms, h->occ.ngeoms, &o, &n, err))
		goto fail;
	zs_sorter_occupy(h->s, o, n);
	goto out;
fail:
	emit_error("occupied slots: ", err, false);
	h->occ.on = false;
out:
	free(zones);
	free(pids);
	zs_pfnset_free(&set);
}

/* One sort of the target nodes, skipping those sorted by anyone less than
 * min_interval seconds ago; moves *next to a full period after the sort's
 * start when it sorted. */
static void sort_round(struct helper *h, unsigned min_interval, bool quiet, double *next)
{
	struct round_ctx ctx = { .nerrors = 0 };
	struct zs_tally tally_before = h->tally;
	char err[ZS_ERRLEN];
	long long before;

	zs_sorter_hold_compaction(h->s, !quiet);
	before = zs_sorter_last_start(h->s);
	zs_sorter_sort(h->s, min_interval, &h->tally, note_failure, &ctx);
	if (zs_metrics_sorts(&h->a->policy.metrics, h->a->policy.node, zs_sorter_kind_name(zs_sorter_backend(h->s)),
			     zs_sorter_degraded(h->s) != NULL, &tally_before, &h->tally, err) &&
	    ctx.nerrors < 4)
		snprintf(ctx.errors[ctx.nerrors++], ZS_ERRLEN, "%s", err);
	/* Our next sort is due a full period after this one began, so it is
	 * never refused as too recent by our own stamp however late this
	 * round started (every >= min_interval). */
	if (zs_sorter_last_start(h->s) != before) {
		long long since = zs_boottime_ns() - zs_sorter_last_start(h->s);

		/* The clock read last makes next fall a little after the
		 * sort's start, never before; 1 ms more for rounding. */
		*next = zs_now() - (double)since / 1e9 + 0.001;
	}
	for (unsigned i = 0; i < ctx.nerrors; i++)
		emit_error("", ctx.errors[i], false);
}

static void sample_round(struct helper *h)
{
	char err[ZS_ERRLEN], line[ZS_ERRLEN + 64];
	int got = sampler_sample(&h->sm, err);

	if (got < 0) {
		/* Say it once; sampling stays off for the step. */
		emit_error("conflict sampling: ", err, false);
		h->sm.off = true;
	} else if (got == 0) {
		if (zs_metrics_sample(&h->a->policy.metrics, h->a->policy.node, &h->sm.last, err))
			emit_error("", err, false);
		zs_sample_format(&h->sm.last, line, sizeof(line) - 1);
		strcat(line, "\n");
		emit(line, false);
	}
}

/* After a periodic round: the next one is due a period later (a round
 * that overran the period starts the next one a full period later rather
 * than at once). */
static void schedule_next(double *next, double every)
{
	*next += every;
	if (*next < zs_now())
		*next = zs_now() + every;
}

/* True while the helper should go on: no stop request, the parent lives,
 * and --count rounds are not done. */
static bool going_on(const struct helper *h)
{
	return !stop_requested && parent_alive(h->parent, h->pidfd) &&
	       !(h->a->max_rounds && h->tally.rounds >= h->a->max_rounds);
}

/* The churn watch: a look every CHURN_POLL seconds until it ends. A
 * periodic sort that falls due meanwhile is made at the first quiet look,
 * or once it has waited max_hold. */
static void watch_loop(struct helper *h, double *next, double max_hold)
{
	const double every = (double)h->a->every;

	while (going_on(h) && zs_now() < h->churn.until) {
		bool quiet, churned;

		wait_until(zs_now() + CHURN_POLL, h->parent, h->pidfd, &h->unblocked);
		if (!going_on(h))
			return;
		churned = churn_look(&h->churn, h->tally.churn, &quiet);
		if (every && zs_now() >= *next && (quiet || zs_now() >= *next + max_hold)) {
			occupy_round(h);
			sort_round(h, h->min_interval, quiet, next);
			if (!h->sm.off)
				sample_round(h);
			schedule_next(next, every);
		} else if (churned) {
			unsigned sorted = h->tally.sorted;
			double ignored = *next;

			sort_round(h, 0, true, every ? next : &ignored);
			h->tally.churn += h->tally.sorted - sorted;
			if (every && *next != ignored)
				schedule_next(next, every);
		} else {
			continue;
		}
		emit_tally(&h->tally, false);
		churn_reset(&h->churn);
	}
}

/* Rounds until a stop request, the parent's exit or --count rounds. */
static void helper_loop(struct helper *h)
{
	const double every = (double)h->a->every;
	double next = zs_now() + every;
	double max_hold = every > QUIET_MIN_WAIT ? every : QUIET_MIN_WAIT;

	if (h->churn.until)
		watch_loop(h, &next, max_hold);
	/* Watching only: nothing more to do until the step ends. */
	while (!every && going_on(h))
		wait_until(zs_now() + 3600, h->parent, h->pidfd, &h->unblocked);
	while (every && going_on(h)) {
		bool quiet = wait_quiet(next, max_hold, h->parent, h->pidfd, &h->unblocked);

		if (stop_requested || !parent_alive(h->parent, h->pidfd))
			break;
		/* Read right before the sort: pages the step freed since
		 * are no longer its own. */
		occupy_round(h);
		sort_round(h, h->min_interval, quiet, &next);
		if (!h->sm.off)
			sample_round(h);
		emit_tally(&h->tally, false);
		schedule_next(&next, every);
	}
}

/* The churn watch's share of the target nodes' caches, and what a quiet
 * look may see; 0, or -1 with err when it cannot watch. */
static int churn_open(struct helper *h, char *err)
{
	struct zs_node_geom *geoms;
	unsigned n;
	unsigned long long pages = 0;
	struct sysinfo si;

	if (zs_sorter_backend(h->s) != ZS_SORTER_KERNEL)
		return zs_fail(err, "the churn watch needs the kernel sorter (backend %s)",
			       zs_sorter_kind_name(zs_sorter_backend(h->s)));
	if (zs_node_geoms(&h->a->policy.memcache, false, 0, 0, &geoms, &n, err))
		return -1;
	for (unsigned i = 0; i < n; i++)
		if (!geoms[i].error[0] && zs_sorter_is_target(h->s, geoms[i].node))
			pages += geoms[i].g.cache_size / geoms[i].g.page_size;
	free(geoms);
	if (!pages)
		return zs_fail(err, "the churn watch found no target node behind a memory-side cache");
	if (sysinfo(&si))
		return zs_fail(err, "sysinfo: %s", strerror(errno));
	h->churn.share = pages / ZS_CHURN_SHARE;
	/* QUIET_WINDOW's 1/512 of memory, scaled to one look. */
	h->churn.quiet = (unsigned long long)((double)si.totalram * si.mem_unit / 512 /
					      (double)sysconf(_SC_PAGESIZE) * CHURN_POLL / QUIET_WINDOW);
	churn_reset(&h->churn);
	h->churn.until = zs_now() + (double)h->a->watch;
	return 0;
}

/* The geometry of the target nodes for the step's occupied slots: 0 (on
 * only with the kernel sorter), or -1 with err. */
static int occupancy_open(struct helper *h, char *err)
{
	if (zs_sorter_backend(h->s) != ZS_SORTER_KERNEL)
		return 0;
	if (!zs_pagemap_privileged())
		return zs_fail(err, "root is needed to read page frame numbers");
	if (zs_node_geoms(&h->a->policy.memcache, false, 0, 0, &h->occ.geoms, &h->occ.ngeoms, err))
		return -1;
	for (unsigned i = 0; i < h->occ.ngeoms; i++) {
		const struct zs_node_geom *g = &h->occ.geoms[i];

		if (!g->error[0] && !g->g.fully_associative && zs_sorter_is_target(h->s, g->node))
			h->occ.pages_max += g->g.nslots * g->g.ways / OCCUPIED_SHARE;
	}
	h->occ.on = h->occ.pages_max > 0;
	return 0;
}

static int run_helper(const struct run_args *a)
{
	struct helper h = { .a = a, .sm = { .off = true }, .parent = (pid_t)a->parent, .pidfd = -1 };
	struct zs_sorter_opts opts = a->policy.sorter;
	char err[ZS_ERRLEN];

	if (a->parent) {
		h.pidfd = zs_pidfd_open(h.parent);
		if (h.pidfd < 0 && errno == ESRCH)
			return ZS_EXIT_OK;
	}
	stop_on_signals(&h.unblocked);
	opts.site = ZS_SITE_PERIODIC;
	if (zs_sorter_open(&opts, &a->policy.memcache, &a->policy.metrics, &h.s, err)) {
		emit_error("", err, true);
		return ZS_EXIT_FAIL;
	}
	/* The plugin starts no helper there; one started by hand says so
	 * once and leaves the node alone. */
	if (zs_sorter_nothing_to_sort(h.s)) {
		fprintf(stderr, "zonesort run: %s\n", ZS_NOTHING_TO_SORT);
		emit_tally(&h.tally, true);
		zs_sorter_close(h.s);
		return ZS_EXIT_OK;
	}
	/* Likewise a degraded node where the site keeps compaction out of
	 * running steps (compact_fallback= below periodic). */
	if (zs_sorter_backend(h.s) == ZS_SORTER_NONE && zs_sorter_degraded(h.s)) {
		emit_error("degraded: ", zs_sorter_degraded(h.s), false);
		emit_tally(&h.tally, true);
		zs_sorter_close(h.s);
		return ZS_EXIT_OK;
	}
	if (a->sample) {
		if (sampler_open(&h.sm, &a->policy.memcache, (pid_t)a->sample, err))
			emit_error("conflict sampling: ", err, false);
		else
			h.sm.off = false;
	}
	if (a->watch && churn_open(&h, err))
		emit_error("", err, false);
	if (a->parent && a->policy.occupied_slots && occupancy_open(&h, err))
		emit_error("occupied slots: ", err, false);
	/* min_interval is the least time between two sorts of a node by any
	 * writer; another helper's or step's sort within half our period also
	 * makes ours redundant. */
	h.min_interval = zs_helper_min_interval(a->policy.min_interval, (unsigned)a->every);
	helper_loop(&h);
	emit_tally(&h.tally, true);
	zs_sorter_close(h.s);
	free(h.sm.geoms);
	free(h.occ.geoms);
	return ZS_EXIT_OK;
}

int cmd_run(int argc, char **argv)
{
	struct run_args a = { 0 };
	int rc = parse_run(argc, argv, &a);

	if (rc != CLI_GO_ON)
		return rc;
	helper_limits();
	if (cli_policy(&a.policy, a.node[0] ? a.node : NULL, argc - optind, argv + optind))
		return ZS_EXIT_USAGE;
	return run_helper(&a);
}
