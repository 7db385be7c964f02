/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The site policy: the key=value words of the plugin's plugstack.conf line
 * (also accepted by the zonesort command), turned into the options of
 * each part of the library that uses them; and the user's --zonesort
 * request. Each part takes only its own options. */
#ifndef ZS_POLICY_H
#define ZS_POLICY_H

#include "memcache.h"
#include "metrics.h"
#include "nodeclass.h"
#include "report.h"
#include "sorter.h"

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#define ZS_MAX_PERIOD 86400u
/* compact_interval bounds, seconds: a compaction takes seconds on a large
 * node, and a day is the most a site would wait for the next one. */
#define ZS_MIN_COMPACT_INTERVAL 10u
#define ZS_MAX_COMPACT_INTERVAL 86400u
/* kernel_timeout= bounds, seconds: how long one write to the kernel (the
 * module's sort of a node, a node's compaction, the quarantine's
 * give-back, drop_caches, the per-CPU lists' sysctl) may hold slurmstepd
 * before it is stopped (kwrite.h). The default lets the longest one
 * measured end: a full quarantine's compaction round of 53 s on Linux 7.x,
 * where the module's median sort took 0.1 s
 * (bench/REPORT-cachenode-decay.md). Past a minute the job or step that
 * waits is better served than the sort: a stopped write fails that sort
 * only, and the next one tries again. At least a second, for a sort to do
 * anything; an hour is the most a site would let a step's start wait. */
#define ZS_KERNEL_TIMEOUT_DEFAULT 60u
#define ZS_MIN_KERNEL_TIMEOUT 1u
#define ZS_MAX_KERNEL_TIMEOUT 3600u
/* Cache sizes from plugstack.conf are checked against the base page size
 * of the platforms Slurm nodes run (x86-64, and 4 KiB arm64 kernels). */
#define ZS_PAGE_SIZE 4096u
/* churn_watch= default, seconds: a job's start-up (MPI, input, set-up)
 * usually ends well within a minute. */
#define ZS_CHURN_WATCH_DEFAULT 60u

/* Keys that take a per-node-class value (cache_size=, ways=): either one
 * value for every node, or entries NODES:VALUE separated by commas, NODES
 * a selector (nodeclass.h); on a node several entries name, the last one
 * wins, and a node no entry names gets what the key's absence gives. */
enum zs_per_node_key { ZS_PN_CACHE_SIZE, ZS_PN_WAYS, ZS_PN_KEYS };
#define ZS_PER_NODE_VALUE_MAX 1024

enum zs_mode { ZS_MODE_OFF, ZS_MODE_ON, ZS_MODE_PERIODIC };

/* What a job asked for: off, on (sort before), or sort every period s. */
struct zs_request {
	enum zs_mode mode;
	unsigned period;
};

/* What users may ask for with --zonesort (zs_request_parse). */
struct zs_request_opts {
	struct zs_request dflt;		/* default=on|off|<seconds> */
	bool allow_off;			/* allow_off=yes|no */
	unsigned min_period;		/* min_period=: the shortest period a user may ask */
};

struct zs_policy {
	struct zs_request_opts request;
	/* The node whose class values apply (zs_policy_for_node); "" = none:
	 * in srun, sbatch and salloc, which check every entry but sort
	 * nothing. */
	char node[ZS_NODE_NAME_MAX + 1];
	/* Each per-node key's value as given (for checks across keys), and
	 * the entry that applies to node ("" = none or a plain value). */
	char per_node_value[ZS_PN_KEYS][ZS_PER_NODE_VALUE_MAX];
	char per_node_entry[ZS_PN_KEYS][ZS_PER_NODE_VALUE_MAX];
	/* The plugin's own: when a node is sorted again, and the periodic
	 * helper it starts. */
	unsigned min_interval;		/* min_interval=: seconds at least between the
					 * beginnings of two sorts of a node, by anyone */
	bool min_interval_given;	/* false: min_interval follows min_period */
	char helper[PATH_MAX];		/* helper=: the zonesort command */
	bool sample_conflicts;		/* sample_conflicts=yes|no: the helper samples
					 * the step's cache-slot conflicts */
	bool occupied_slots;		/* occupied_slots=yes|no: the helper gives each
					 * sort the slots the step's pages occupy
					 * (zs_sorter_occupy) */
	unsigned churn_watch;		/* churn_watch=: seconds from a step's start in
					 * which the helper sorts again after memory
					 * churn (0: never) */
	/* Each library part's options. */
	struct zs_sorter_opts sorter;	/* sorter.h */
	struct zs_memcache_opts memcache;	/* memcache.h */
	struct zs_metrics_opts metrics;	/* metrics.h */
	struct zs_report_opts report;	/* report.h */
};

void zs_policy_defaults(struct zs_policy *p);

/* Chooses the node whose per-node-class values the words that follow set
 * (call after zs_policy_defaults, before zs_policy_parse). */
int zs_policy_for_node(struct zs_policy *p, const char *node, char *err);

/* Applies one "key=value" word; unknown keys and bad values are errors that
 * name them. */
int zs_policy_set(struct zs_policy *p, const char *word, char *err);

/* Applies argc words in order, then checks them together; stops at the
 * first error. */
int zs_policy_parse(struct zs_policy *p, int argc, char *const argv[], char *err);

/* Parses a --zonesort value: off, on, or a whole number of seconds in
 * [min_period, 86400]. "off" is refused when the site does not allow it. */
int zs_request_parse(const struct zs_request_opts *o, const char *s,
		     struct zs_request *out, char *err);

/* "off", "on" or "every 30 s". */
const char *zs_request_describe(const struct zs_request *r, char *buf, unsigned len);

#endif
