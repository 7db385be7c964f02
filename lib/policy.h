/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Site policy (the plugstack.conf arguments, also accepted by the zonesort
 * command) and the user's --zonesort request. */
#ifndef ZS_POLICY_H
#define ZS_POLICY_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#define ZS_MAX_PERIOD 86400u
/* compact_interval bounds, seconds: a compaction takes seconds on a large
 * node, and a day is the most a site would wait for the next one. */
#define ZS_MIN_COMPACT_INTERVAL 10u
#define ZS_MAX_COMPACT_INTERVAL 86400u
/* The highest NUMA node id Linux allows (MAX_NUMNODES is at most 1024). */
#define ZS_MAX_NODE 1023u
/* Cache sizes from plugstack.conf are checked against the base page size
 * of the platforms Slurm nodes run (x86-64, and 4 KiB arm64 kernels). */
#define ZS_PAGE_SIZE 4096u

enum zs_mode { ZS_MODE_OFF, ZS_MODE_ON, ZS_MODE_PERIODIC };

/* What a job asked for: off, on (sort before), or sort every period s. */
struct zs_request {
	enum zs_mode mode;
	unsigned period;
};

enum zs_sorter_kind {
	ZS_SORTER_AUTO,
	ZS_SORTER_KERNEL,
	ZS_SORTER_COMPACT,
	ZS_SORTER_NONE,
};

struct zs_policy {
	struct zs_request dflt;		/* default=on|off|<seconds> */
	bool allow_off;			/* allow_off=yes|no */
	unsigned min_period;		/* min_period=<seconds> */
	enum zs_sorter_kind sorter;	/* sorter=auto|kernel|compact|none */
	char modprobe[64];		/* modprobe=no|<module name> */
	bool drop_caches;		/* drop_caches=yes|no */
	char nodes[256];		/* nodes=auto|all|<list> */
	char sysfs[PATH_MAX];		/* sysfs=<dir with nodeid> */
	char node_sysfs[PATH_MAX];	/* node_sysfs=<dir with nodeN/compact> */
	char statedir[PATH_MAX];	/* statedir=<dir for the lock and times> */
	char helper[PATH_MAX];		/* helper=<zonesort command> */
	uint64_t cache_size;		/* cache_size=<size>, 0 = discover; a
					 * multiple of ways x page size */
	unsigned ways;			/* ways=<n>, 0 = discover */
	bool sample_conflicts;		/* sample_conflicts=yes|no */
	char prometheus_dir[PATH_MAX];	/* prometheus_dir=<textfile dir>, "" = none (metrics.h) */
	unsigned report_days;		/* report_days=<days> users' job reports are kept, 0 = none (report.h) */
	bool quarantine;		/* quarantine=yes|no: the kernel module takes colliding free blocks */
	bool compact_full;		/* compact_full=yes|no: a full quarantine is given back and the node compacted (sorter.c) */
	unsigned compact_interval;	/* compact_interval=<seconds> at least between two such compactions of a node */
	int quarantine_permille;	/* quarantine_permille=<0-1000>: where a node's limit starts, per
					 * mille of its cache's pages; -1 = the module's own */
	int quarantine_max_permille;	/* quarantine_max_permille=<0-1000>: the most a node holds; -1 = the module's */
	bool nocache_compact;		/* nocache=skip|compact: a node without a memory-side
					 * cache is compacted (compact) or left alone (skip) */
};

void zs_policy_defaults(struct zs_policy *p);

/* Applies one "key=value" word; unknown keys and bad values are errors that
 * name them. */
int zs_policy_set(struct zs_policy *p, const char *word, char *err);

/* Applies argc words in order; stops at the first error. */
int zs_policy_parse(struct zs_policy *p, int argc, char *const argv[], char *err);

/* Parses a --zonesort value: off, on, or a whole number of seconds in
 * [min_period, 86400]. "off" is refused when the site does not allow it. */
int zs_request_parse(const struct zs_policy *p, const char *s,
		     struct zs_request *out, char *err);

/* "off", "on" or "every 30 s". */
const char *zs_request_describe(const struct zs_request *r, char *buf, unsigned len);

const char *zs_sorter_kind_name(enum zs_sorter_kind k);

#endif
