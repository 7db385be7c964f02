/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Each user's own report of what zonesort did for their job: one line per
 * job prolog and step on this node, appended by the plugin (as root) to
 * statedir/reports/<job id>, a file owned by the job's user with mode 0400,
 * so only that user and root can read it ("zonesort report"). It holds what
 * the summary line in the slurmd log holds: mode, sorts, backend, and the
 * sampled conflict fraction with random placement for scale; never a frame
 * number, never another job.
 *
 * Kept report_days days (plugstack.conf, default 7): each job prolog
 * removes the reports last written longer ago; a reboot empties /run.
 * The file is rewritten whole (textfile.h) under reports/.lock. */
#ifndef ZS_REPORT_H
#define ZS_REPORT_H

#include "policy.h"
#include "slots.h"
#include "sorter.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

struct zs_report_step {
	double time;			/* epoch seconds */
	uint32_t job;
	char where[32];			/* prolog, step 0, batch step ... */
	char node[128];
	char mode[32];			/* off, on, every 30 s */
	struct zs_tally tally;
	char backend[16];		/* kernel, compact, none */
	char note[256];			/* why sorting or its helper did not run */
	bool sampling;			/* the site samples conflicts (sample_conflicts=yes) */
	struct zs_sample sample;	/* samples == 0: none was taken */
};

/* Appends r to the report of job r->job, owned by uid. Does nothing when
 * report_days=0. Returns 0, or -1 with err set. */
int zs_report_add(const struct zs_policy *p, uid_t uid, const struct zs_report_step *r, char *err);

/* Removes reports not written for report_days days. Sets *removed. */
int zs_report_expire(const struct zs_policy *p, time_t now, unsigned *removed, char *err);

enum zs_report_status {
	ZS_REPORT_FOUND,
	ZS_REPORT_MISSING,	/* no report of that job on this node */
	ZS_REPORT_NOT_YOURS,	/* another user's job: *owner says whose */
	ZS_REPORT_ERROR,
};

/* Reads job's report as the calling user. *steps is malloc'd. */
enum zs_report_status zs_report_load(const struct zs_policy *p, uint32_t job,
				     struct zs_report_step **steps, unsigned *nsteps,
				     uid_t *owner, char *err);

/* The ids of the reports on this node the calling user may read (all for
 * root), newest first. *jobs is malloc'd. */
int zs_report_list(const struct zs_policy *p, uint32_t **jobs, unsigned *njobs, char *err);

/* One report line and back (tab-separated key=value, %-escaped values). */
char *zs_report_format(const struct zs_report_step *r);
int zs_report_parse(const char *line, struct zs_report_step *r);

#endif
