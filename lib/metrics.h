/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Prometheus metrics of the plugin and its periodic helper, for
 * node_exporter's textfile collector (prometheus_dir= in plugstack.conf).
 *
 * The counters live in statedir/metrics.state, one file per machine, so
 * they add up over every step and job since boot; each writer (the job
 * prolog, each step's slurmstepd, each periodic helper) adds its part
 * under statedir/metrics.lock and rewrites prometheus_dir/zonesort.prom
 * whole (textfile.h), while still holding the lock: concurrent writers
 * lose no update and the newest state is what stays on disk.
 *
 * Series (labels node, and outcome or backend):
 *   zonesort_sorts_total{outcome="sorted|recent|busy|failed|fallback|degraded"}
 *                                                               counter
 *   zonesort_sort_seconds_total                                 counter
 *   zonesort_sorter_up{backend}                                 gauge 0/1
 *   zonesort_sorter_degraded                                    gauge 0/1
 *   zonesort_last_sort_timestamp_seconds                        gauge
 *   zonesort_last_job_end_timestamp_seconds                     gauge
 *                                     (only once a job ended)
 *   zonesort_sampled_conflict_ratio, _random_ratio, _timestamp_seconds
 *                                     (only once a step was sampled)
 *   zonesort_module_refused{reason}                             gauge 0/1
 *                                     (only once a load was tried)
 */
#ifndef ZS_METRICS_H
#define ZS_METRICS_H

#include "slots.h"
#include "sorter.h"

#include <limits.h>

#define ZS_METRICS_FILE "zonesort.prom"

/* Where the metrics live (plugstack.conf words, policy.h). */
struct zs_metrics_opts {
	char statedir[PATH_MAX];	/* statedir=: the state file and its lock */
	char prometheus_dir[PATH_MAX];	/* prometheus_dir=: the textfile directory,
					 * "" = no metrics */
};

/* Adds the sorts counted between before and after (one caller's running
 * tally) made with backend, degraded as zs_sorter_degraded says. node is
 * the Slurm node name for the node label, or NULL to keep the one
 * recorded (else the short host name). Does nothing without
 * prometheus_dir. Returns 0, or -1 with err set. */
int zs_metrics_sorts(const struct zs_metrics_opts *o, const char *node, const char *backend,
		     bool degraded, const struct zs_tally *before, const struct zs_tally *after,
		     char *err);

/* Records the conflict fraction a step's periodic helper just sampled. */
int zs_metrics_sample(const struct zs_metrics_opts *o, const char *node,
		      const struct zs_sample *s, char *err);

/* Records that a job ended on this node now (the plugin's job epilog):
 * a health check that runs as Epilog follows it within seconds, and an
 * alert compares the two. */
int zs_metrics_job_end(const struct zs_metrics_opts *o, const char *node, char *err);

/* Records the kernel's answer to the last load of the sorter's module:
 * reason is a modsig.h refusal name ("signature", "lockdown", "disabled")
 * or "none" once it loads. Writes only when it changed. */
int zs_metrics_module(const struct zs_metrics_opts *o, const char *reason, char *err);

/* The node label: the Slurm node name the plugin recorded, else
 * $SLURMD_NODENAME, else the short host name. */
const char *zs_metrics_node(const struct zs_metrics_opts *o, char *buf, size_t len);

/* Prometheus text format helpers shared by every writer of metrics. */
#include <stdio.h>

/* Writes "# HELP name help\n# TYPE name type\n". */
void zs_prom_family(FILE *f, const char *name, const char *type, const char *help);

/* Writes value as a label value: quotes, backslashes and newlines escaped. */
void zs_prom_label(FILE *f, const char *value);

/* Replaces name in directory dir by the text of a memory stream. */
int zs_prom_publish(const char *dir, const char *name, const char *text, size_t len, char *err);

#endif
