/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The physical pages of processes, from /proc/PID/maps and /proc/PID/pagemap,
 * and the processes of a Slurm job or step on this node.
 *
 * A process's pages are the page frames of the present entries of its
 * pagemap over the mappings /proc/PID/smaps shows with resident pages
 * (swapped and never-touched pages are not present and not counted; a
 * mapping with no Rss, such as a PROT_NONE or MAP_NORESERVE reservation of
 * any size, costs nothing). Within a mapping only the present ranges are
 * read where the kernel has the PAGEMAP_SCAN ioctl (6.7+); elsewhere the
 * entries are read in order until the mapping's resident pages are found.
 * The work of one sample is bounded by a budget of pagemap entries. A transparent huge page shows as
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

/* pagemap entries one set may read: 512 MiB of reads, 256 GiB of address
 * space read page by page (a fraction of a second here). */
#define ZS_PAGEMAP_BUDGET (64ULL << 20)

struct zs_pfnset {
	uint64_t *pfn;		/* sorted and distinct after each process */
	size_t n, cap;
	uint64_t present;	/* present pagemap entries read (with repeats) */
	uint64_t zero_pfn;	/* present entries with frame 0: hidden frames */
	uint64_t entries_read;	/* pagemap entries read */
	uint64_t budget;	/* entries allowed, 0 = ZS_PAGEMAP_BUDGET */
	uint64_t unread_pages;	/* pages of resident mappings left unread (budget) */
	uint64_t mappings, skipped_mappings;	/* smaps entries; those without Rss */
	bool no_scan;		/* tests: read as kernels without PAGEMAP_SCAN do */
};

void zs_pfnset_free(struct zs_pfnset *s);

enum zs_pagemap_result {
	ZS_PAGEMAP_OK = 0,
	ZS_PAGEMAP_ERROR = -1,	/* err says why; nothing added */
	ZS_PAGEMAP_GONE = 1,	/* the process does not exist or exited during
				 * the read; nothing added */
};

/* Adds the frames of pid's present pages to set, which stays sorted and
 * distinct (a frame shared by many processes is held once).
 * Root is needed: a caller without CAP_SYS_ADMIN gets an error saying so. */
enum zs_pagemap_result zs_pagemap_collect(pid_t pid, struct zs_pfnset *set, char *err);

/* Sorts and removes repeated frames (needed only for frames added by other
 * means than zs_pagemap_collect). */
void zs_pfnset_unique(struct zs_pfnset *s);

/* True when the caller can see frame numbers (effective uid 0). */
bool zs_pagemap_privileged(void);

/* Every process whose parent chain reaches root (root itself excluded), minus
 * exclude and its descendants (0: none). */
int zs_descendants(pid_t root, pid_t exclude, pid_t **pids, size_t *n, char *err);

/* Resident bytes of root's descendants (as zs_descendants() finds them),
 * summed over their /proc/PID/statm; -1 on error. */
long long zs_tree_resident(pid_t root, pid_t exclude, char *err);

/* The processes of a Slurm job (or job.step) on this node, as
 * "scontrol listpids JOB" reports them; scontrol is looked up in PATH
 * unless the path is given. Reads up to ZS_LISTPIDS_MAX bytes of its
 * output; *cut says when there was more (the processes past it are not
 * listed). */
#define ZS_LISTPIDS_MAX (64u << 20)
int zs_job_pids(const char *scontrol, const char *job, pid_t **pids, size_t *n, bool *cut,
		char *err);

/* The descendants of root among n (pid, parent) links, minus exclude and
 * its descendants, in one pass over a parent-to-children index (linear in
 * n). Fills pids (caller frees). */
int zs_descendants_of(const pid_t *pid, const pid_t *ppid, size_t n, pid_t root, pid_t exclude,
		      pid_t **pids, size_t *count, char *err);

#endif
