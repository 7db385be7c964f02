/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The physical pages of processes, from /proc/PID/maps and /proc/PID/pagemap,
 * and the processes of a Slurm job or step on this node.
 *
 * A process's pages are the page frames of the present entries of its
 * pagemap over every mapping listed in its maps (swapped and never-touched
 * pages are not present and not counted). A transparent huge page shows as
 * its 512 (2 MiB / 4 KiB) consecutive frames. The pages of a set of
 * processes are the distinct frames over all of them: a frame mapped twice
 * (shared libraries, shared memory, the zero page) counts once.
 *
 * Only root (CAP_SYS_ADMIN) sees frame numbers: for anyone else the kernel
 * reports them as 0. */
#ifndef ZS_PAGEMAP_H
#define ZS_PAGEMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct zs_pfnset {
	uint64_t *pfn;
	size_t n, cap;
	uint64_t present;	/* present pagemap entries read (with repeats) */
	uint64_t zero_pfn;	/* present entries with frame 0: hidden frames */
};

void zs_pfnset_free(struct zs_pfnset *s);

enum zs_pagemap_result {
	ZS_PAGEMAP_OK = 0,
	ZS_PAGEMAP_ERROR = -1,	/* err says why; nothing added */
	ZS_PAGEMAP_GONE = 1,	/* the process does not exist or exited during
				 * the read; nothing added */
};

/* Adds the frames of pid's present pages to set (not yet deduplicated).
 * Root is needed: a caller without CAP_SYS_ADMIN gets an error saying so. */
enum zs_pagemap_result zs_pagemap_collect(pid_t pid, struct zs_pfnset *set, char *err);

/* Sorts and removes repeated frames. */
void zs_pfnset_unique(struct zs_pfnset *s);

/* True when the caller can see frame numbers (effective uid 0). */
bool zs_pagemap_privileged(void);

/* Every process whose parent chain reaches root (root itself excluded), minus
 * exclude and its descendants (0: none). */
int zs_descendants(pid_t root, pid_t exclude, pid_t **pids, size_t *n, char *err);

/* The processes of a Slurm job (or job.step) on this node, as
 * "scontrol listpids JOB" reports them; scontrol is looked up in PATH
 * unless the path is given. */
int zs_job_pids(const char *scontrol, const char *job, pid_t **pids, size_t *n, char *err);

#endif
