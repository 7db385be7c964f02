/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Each user's own report of what zonesort did for their job: one line per
 * job prolog and step on this node, appended by the plugin (as root) to
 * statedir/reports/<uid>/jobs/<job id>. The files and the per-user
 * directories are root's; POSIX ACL entries let the job's user pass
 * through <uid>, list jobs and read the files, nobody else: the user can
 * neither grow a file nor change its mode or time. statedir/reports (mode
 * 0711) lists nobody; another user may look up <uid> (whether that uid
 * has records here) but not into it, and <uid> holds only jobs/, made
 * once, so its time and size tell nothing of the jobs. Hiding <uid>'s
 * existence too would take a directory only users with records may search,
 * whose ACL (readable by anyone who can reach it) would list them.
 * It holds what the summary line in the slurmd log holds:
 * mode, sorts, backend, and the sampled conflict fraction with random
 * placement for scale; never a frame number, never another job.
 *
 * Kept report_days days (plugstack.conf, default 7) by the file's time,
 * which only root sets: each job prolog removes older reports (and any
 * stamped more than a day ahead), then the oldest while all of them
 * together exceed 32 MiB; one report holds at most 64 KiB (a longer one
 * starts again). A reboot empties /run. The file system must support
 * POSIX ACLs (tmpfs and ext4 do); without them no report is kept and the
 * plugin logs why. Files are rewritten whole (textfile.h) under the
 * user's .lock. */
#ifndef ZS_REPORT_H
#define ZS_REPORT_H

#include "slots.h"
#include "sorter.h"

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

/* Where reports live and how long (plugstack.conf words, policy.h). */
struct zs_report_opts {
	char statedir[PATH_MAX];	/* statedir=: reports under statedir/reports */
	unsigned days;			/* report_days=: kept this long, 0 = none kept */
};

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
	unsigned churn_watch;		/* seconds the step was watched for memory churn
					 * (churn_watch=), 0: not watched */
	struct zs_sample sample;	/* samples == 0: none was taken */
};

/* Appends r to the report of job r->job, readable by uid. Does nothing when
 * days is 0. Returns 0, or -1 with err set. */
int zs_report_add(const struct zs_report_opts *o, uid_t uid, const struct zs_report_step *r,
		  char *err);

/* Removes reports not written for days days. Sets *removed. */
int zs_report_expire(const struct zs_report_opts *o, time_t now, unsigned *removed, char *err);

enum zs_report_status {
	ZS_REPORT_FOUND,
	ZS_REPORT_MISSING,	/* none of that job on this node, or not the caller's */
	ZS_REPORT_ERROR,
};

/* Reads job's report as the calling user. *steps is malloc'd. */
enum zs_report_status zs_report_load(const struct zs_report_opts *o, uint32_t job,
				     struct zs_report_step **steps, unsigned *nsteps,
				     uid_t *owner, char *err);

/* The ids of the reports on this node the calling user may read (all for
 * root), newest first. *jobs is malloc'd. */
int zs_report_list(const struct zs_report_opts *o, uint32_t **jobs, unsigned *njobs, char *err);

/* One report line and back (tab-separated key=value, %-escaped values).
 * Keys the parser does not know are ignored, and a key it knows that a
 * line lacks (freed=, from an older version) reads as 0. */
char *zs_report_format(const struct zs_report_step *r);
int zs_report_parse(const char *line, struct zs_report_step *r);

#endif
