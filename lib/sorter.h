/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Sorting the free lists of NUMA nodes through the best backend a node has:
 * the kernel zonesort interface (Intel's zonesort_module or this project's
 * module), compaction, or none. One writer at a time per machine, and a node
 * is not sorted again sooner than the caller's minimum interval unless
 * memory was freed on it since its last sort (zs_recent_decide). */
#ifndef ZS_SORTER_H
#define ZS_SORTER_H

#include "errbuf.h"

#include <limits.h>
#include <stdbool.h>

struct zs_memcache_opts;
struct zs_metrics_opts;
struct zs_occupied;

enum zs_sorter_kind {
	ZS_SORTER_AUTO,
	ZS_SORTER_KERNEL,
	ZS_SORTER_COMPACT,
	ZS_SORTER_NONE,
};

const char *zs_sorter_kind_name(enum zs_sorter_kind k);

/* What this project's module may hold out of the free lists, and when a
 * full quarantine has its node compacted (zs_sorter_sort). */
struct zs_quarantine_opts {
	bool on;			/* quarantine=yes|no */
	int max_permille;		/* quarantine_max_permille=: the most a node
					 * holds, per mille of its cache's pages;
					 * -1 = the module's own */
	bool compact_full;		/* compact_full=yes|no */
	int compact_held_permille;	/* compact_held_permille=: a node holding more
					 * than this per mille of its cache's pages
					 * after a sort is compacted as a full one is
					 * (1000: only a full one) */
	unsigned compact_interval;	/* compact_interval=: seconds at least between
					 * two such compactions of a node */
};

/* compact_held_permille's default: a full quarantine only. A lower share
 * also compacts before the quarantine is short, at most once per
 * compact_interval and never in place of a full quarantine's compaction
 * (refresh_full), which a job's start-up churn may need right after:
 * when the two shared one interval, at 125 per mille jobs' arrays collided
 * again after such churn (bench/REPORT-churn-effect.md). */
#define ZS_COMPACT_HELD_PERMILLE 1000

/* Where a sort is asked for. Compaction stands in for a missing kernel
 * sorter only where the site lets it (compact_fallback=): it migrates the
 * pages of whatever runs on the node, the more so the later in a job. */
enum zs_sort_site {
	ZS_SITE_COMMAND,	/* an administrator's "zonesort sort": always */
	ZS_SITE_PROLOG,		/* the job prolog, before the job's tasks exist */
	ZS_SITE_STEP,		/* slurmstepd, before a step's tasks */
	ZS_SITE_PERIODIC,	/* the periodic helper, while tasks run */
};

/* compact_fallback=no|prolog|steps|periodic: the last site (above) at
 * which compaction stands in for the kernel sorter of a node with a
 * memory-side cache; each level includes the ones before it. */
enum zs_fallback {
	ZS_FALLBACK_NO,
	ZS_FALLBACK_PROLOG,
	ZS_FALLBACK_STEPS,
	ZS_FALLBACK_PERIODIC,
};

const char *zs_fallback_name(enum zs_fallback f);

/* The sorter's own settings (plugstack.conf words, policy.h). */
struct zs_sorter_opts {
	enum zs_sorter_kind kind;	/* sorter=auto|kernel|compact|none */
	enum zs_fallback fallback;	/* compact_fallback= */
	enum zs_sort_site site;		/* set by the caller, not a key */
	bool nocache_compact;		/* nocache=compact: a node without a memory-side
					 * cache is compacted, not left alone */
	char nodes[256];		/* nodes=auto|all|<list> */
	char modprobe[64];		/* modprobe=no|<module name> */
	bool drop_caches;		/* drop_caches=yes|no, before compaction */
	char sysfs[PATH_MAX];		/* sysfs=: the kernel interface (kmod.h) */
	char node_sysfs[PATH_MAX];	/* node_sysfs=: nodeN/compact */
	char statedir[PATH_MAX];	/* statedir=: the lock and last-sort stamps */
	bool recent_freed_sort;		/* recent_freed=sort|skip: a node sorted less
					 * than min_interval ago is sorted all the same
					 * once memory was freed on it since
					 * (zs_recent_decide) */
	struct zs_quarantine_opts quarantine;
	unsigned kernel_timeout;	/* kernel_timeout=: seconds each write to the
					 * kernel may take before it is stopped
					 * (kwrite.h); a sort stopped so fails */
	long long pcp_high_fraction;	/* pcp_high_fraction=: the size of the per-CPU
					 * page lists (vm.percpu_pagelist_high_fraction)
					 * set before a kernel sort; ZS_PCP_KEEP (the
					 * default: a machine-wide setting): left alone;
					 * ZS_PCP_AUTO: the smallest where the kernel's
					 * own sizing (0) is in force */
};

/* The kernel's setting pcp_high_fraction= writes, and its special values. */
#define ZS_PCP_SYSCTL "/proc/sys/vm/percpu_pagelist_high_fraction"
#define ZS_PCP_KEEP (-1LL)
#define ZS_PCP_AUTO (-2LL)
/* A fraction so large that every list is the kernel's least (four batches). */
#define ZS_PCP_SMALLEST 1000000LL

enum zs_outcome {
	ZS_SORTED,	/* the backend sorted the node */
	ZS_RECENT,	/* skipped: sorted less than the minimum interval ago */
	ZS_BUSY,	/* skipped: another sort runs, or the kernel module sorts on its own timer */
	ZS_FAILED,	/* the backend refused or failed */
	ZS_NOSORTER,	/* no backend on this machine */
	ZS_NOTHING,	/* no memory-side cache found or given: nothing to sort (nocache=skip) */
	ZS_FALLBACK,	/* degraded: compacted in place of a sort */
	ZS_DEGRADED,	/* degraded: not sorted, no compaction here */
};

/* What a node without a memory-side cache gets with nocache=skip, the
 * default: the sorter's why, and the words of the summary line, the
 * user's report and zonesort status. */
#define ZS_NOTHING_TO_SORT "no memory-side cache: nothing to sort"

struct zs_node_result {
	int node;
	enum zs_outcome outcome;
	bool compacted;		/* a full quarantine was given back and the node compacted */
	bool freed;		/* sorted less than min_interval after its last sort:
				 * memory was freed on it since (zs_recent_decide) */
	bool stopped;		/* failed: a write to the kernel did not end within
				 * kernel_timeout and was stopped (kwrite.h) */
	long long occupied;	/* slots of the step's own pages given to the sort
				 * (zs_sorter_occupy); 0: none given; -1: giving
				 * them failed, occupied_why says how (the sort
				 * went on without them) */
	char occupied_why[ZS_ERRLEN];
	double seconds;
	char msg[ZS_ERRLEN];
};

/* Totals over one or more rounds. */
struct zs_tally {
	unsigned rounds, sorted, recent, busy, failed;
	double seconds;
	unsigned compacted;	/* sorts that compacted a node for its full quarantine */
	unsigned fallback;	/* degraded: compactions in place of a sort */
	unsigned degraded;	/* degraded: nodes left unsorted, no compaction allowed */
	unsigned churn;		/* sorts made because memory churned after the last one
				 * (the helper's churn watch), counted in sorted too */
	unsigned freed;		/* sorts of a node sorted less than min_interval ago,
				 * made because memory was freed on it since that
				 * sort, counted in sorted too */
	unsigned stopped;	/* sorts whose write to the kernel did not end within
				 * kernel_timeout and was stopped, counted in failed
				 * too */
	unsigned occupied;	/* sorts given the slots the step's pages occupy
				 * (zs_sorter_occupy), counted in sorted too */
};

/* Pages freed after a sort go in front of the lists it ordered and are
 * handed out first, in no order of ours (bench/REPORT-churn-effect.md).
 * Once 1/ZS_CHURN_SHARE of a cache's pages were freed since the last sort
 * of the node behind it, a sort is due: the helper's churn watch sorts
 * again, and min_interval no longer holds a sort back (zs_recent_decide). */
#define ZS_CHURN_SHARE 16

/* Whether a node whose last sort began age_ns ago (-1: none known) is
 * sorted now under min_interval: not recent; recent and skipped; or recent
 * and sorted all the same because at least threshold bytes were freed
 * since (freed_then, freed_now: the machine's freed-pages counter in bytes
 * right after that sort and now; -1, or a threshold of 0, when unknown:
 * skipped). Every page freed since counts, whether or not it was allocated
 * again: it went in front of the sorted lists either way. */
enum zs_recent {
	ZS_RECENT_NOT,		/* not sorted within min_interval: sort */
	ZS_RECENT_SKIP,		/* sorted within min_interval: skip */
	ZS_RECENT_FREED,	/* sorted within min_interval, memory freed since: sort */
};

enum zs_recent zs_recent_decide(long long age_ns, unsigned min_interval, long long freed_then,
				long long freed_now, long long threshold);

struct zs_sorter;

/* A node's quarantine in this project's module, and the sorter's last
 * compaction of the node for a full one (zs_sorter_quarantine). */
struct zs_quarantine_state {
	long long held_pages;	/* held now */
	long long max_pages;	/* the most it ever holds (quarantine_max_permille) */
	long long peak_pages;	/* the most it held at once */
	double compacted_ago_s;	/* -1: none this boot */
};

/* Resolves the backend and the target nodes. mc says how to find the
 * memory-side caches (memcache.h), metrics where to record the kernel's
 * answer to a module load (metrics.h); all three are copied. Fails only on
 * bad settings (a node list naming absent nodes, an unusable statedir); a
 * machine without a sorter gets backend "none" and zs_sorter_why says why.
 * A machine where no memory-side cache is found (hwloc) or given
 * (cache_size=) has nothing to sort: backend "none", no targets, and every
 * round reports ZS_NOTHING, unless nocache_compact (then its nodes are
 * compacted, whatever the kind, since no other sorter has slots to sort
 * for). */
int zs_sorter_open(const struct zs_sorter_opts *o, const struct zs_memcache_opts *mc,
		   const struct zs_metrics_opts *metrics, struct zs_sorter **out, char *err);
void zs_sorter_close(struct zs_sorter *s);

/* 0 and the node's quarantine when the kernel backend's module keeps one
 * for it; -1 otherwise (another backend, a module without a quarantine).
 * Reads only. */
int zs_sorter_quarantine(struct zs_sorter *s, int node, struct zs_quarantine_state *out);

enum zs_sorter_kind zs_sorter_backend(const struct zs_sorter *s);
const char *zs_sorter_why(const struct zs_sorter *s);

/* A node with a memory-side cache (found or given) whose kernel sorter is
 * missing or refused while sorter=auto or kernel asks for it is degraded:
 * NULL when it is not, else why and what stands in for the sorter here
 * ("no kernel zonesort interface (...); compaction in its place in the job
 * prolog only (compact_fallback=prolog)"). Rounds of a degraded node count
 * as fallback (compacted) or degraded (left alone), never as sorted. */
const char *zs_sorter_degraded(const struct zs_sorter *s);
/* When the kernel refused the module modprobe= names, the refusal's name
 * ("signature", "lockdown", "disabled": modsig.h), else NULL; why() then
 * explains it. */
const char *zs_sorter_refusal(const struct zs_sorter *s);
const char *zs_sorter_targets(const struct zs_sorter *s, char *buf, unsigned len);
bool zs_sorter_is_target(const struct zs_sorter *s, int node);

/* True when the machine has no memory-side cache and the settings leave
 * such a machine alone (nocache=skip): nothing is sorted or compacted. */
bool zs_sorter_nothing_to_sort(const struct zs_sorter *s);

typedef void (*zs_node_report_fn)(void *ctx, const struct zs_node_result *r);

/* Sorts every target node once, skipping nodes sorted less than
 * min_interval seconds ago, unless (with the kernel sorter and
 * recent_freed=sort) 1/ZS_CHURN_SHARE of the node's cache was freed on it
 * since (zs_recent_decide; the machine's freed-pages counter right after
 * each sort is kept next to its last-sort stamp). Adds to *tally; calls report (if not
 * NULL) for each node. Never blocks on another writer: if the lock is held the round
 * is counted as busy. Returns 0, or -1 if any node failed. */
int zs_sorter_sort(struct zs_sorter *s, unsigned min_interval, struct zs_tally *tally,
		   zs_node_report_fn report, void *ctx);

/* The slots a running step's pages occupy on each node (occupied.h), for
 * the next zs_sorter_sort only: this project's module orders each node's
 * lists as if they held a page each, so that the step's next allocation
 * goes to the slots it does not use yet. Takes o (n entries) over; NULL
 * drops what was given. Nodes skipped, busy, or on another backend, and a
 * module without the file, take none; a sort that had them says how many
 * in its result. */
void zs_sorter_occupy(struct zs_sorter *s, struct zs_occupied *o, unsigned n);

/* True when a target node's module takes them: the kernel backend, this
 * project's module, a node directory with the occupied file. */
bool zs_sorter_takes_occupied(const struct zs_sorter *s);

/* While held, a full quarantine is not compacted: its node is only sorted,
 * and the first sort after the hold is lifted compacts it (compact_interval
 * counts from compactions that happened). The periodic helper holds it for
 * a sort it could not keep out of an allocation: compaction then would
 * migrate the pages the allocation already has and hand the rest of it the
 * blocks compaction just made, in no order of ours. */
void zs_sorter_hold_compaction(struct zs_sorter *s, bool hold);

const char *zs_outcome_name(enum zs_outcome o);

/* When the last sort this sorter made began (CLOCK_BOOTTIME ns), or -1. */
long long zs_sorter_last_start(const struct zs_sorter *s);

/* CLOCK_BOOTTIME in nanoseconds: the clock of the last-sort stamps. */
long long zs_boottime_ns(void);

/* The least time the periodic helper leaves between two sorts of a node by
 * anyone: the site's min_interval or half the helper's own period,
 * whichever is longer. */
unsigned zs_helper_min_interval(unsigned min_interval, unsigned every);

void zs_tally_add(struct zs_tally *into, const struct zs_tally *t);

/* "3 sorts, 1 skipped (recent), 0 busy, 0 failed, 0.012 s"; sorts after
 * memory churn and sorts despite a recent one are named: "3 sorts (2 after
 * memory churn) (1 despite a recent sort: memory freed since), ...", and
 * failures that were writes stopped at their bound: "1 failed (1 stopped
 * after kernel_timeout)". */
const char *zs_tally_describe(const struct zs_tally *t, char *buf, unsigned len);

/* One machine-readable line, the periodic helper's report format:
 * "rounds=3 sorted=3 recent=0 busy=0 failed=0 seconds=0.012000
 * compacted=0 fallback=0 degraded=0 churn=0 freed=0 stopped=0"; the parser
 * also takes the lines without freed= or stopped= (0) that older helpers
 * print. */
const char *zs_tally_format(const struct zs_tally *t, char *buf, unsigned len);
int zs_tally_parse(const char *line, struct zs_tally *t);

#endif
