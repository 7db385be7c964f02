// SPDX-License-Identifier: GPL-2.0-or-later
/* Physical pages of processes from /proc/PID/pagemap; see pagemap.h. */
#include "config.h"
#include "pagemap.h"
#include "child.h"
#include "errbuf.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#define PM_PRESENT (1ULL << 63)
#define PM_PFN_MASK ((1ULL << 55) - 1)
/* pagemap entries per pread: 512 KiB, 256 MiB of address space. */
#define PM_CHUNK (64u * 1024u)

void zs_pfnset_free(struct zs_pfnset *s)
{
	free(s->pfn);
	memset(s, 0, sizeof(*s));
}

bool zs_pagemap_privileged(void)
{
	return geteuid() == 0;
}

static int reserve(struct zs_pfnset *s, size_t more)
{
	if (s->n + more <= s->cap)
		return 0;
	size_t cap = s->cap ? s->cap : 65536;

	while (cap < s->n + more)
		cap *= 2;
	uint64_t *grown = realloc(s->pfn, cap * sizeof(*grown));

	if (!grown)
		return -1;
	s->pfn = grown;
	s->cap = cap;
	return 0;
}

static bool process_exists(pid_t pid)
{
	return kill(pid, 0) == 0 || errno == EPERM;
}

/* PAGEMAP_SCAN (Linux 6.7+) lists the present ranges of an address range
 * without an entry per page; declared here for older headers. */
#define ZS_PAGE_IS_PRESENT (1ULL << 3)
struct zs_page_region {
	uint64_t start, end, categories;
};
struct zs_pm_scan_arg {
	uint64_t size, flags, start, end, walk_end, vec, vec_len, max_pages;
	uint64_t category_inverted, category_mask, category_anyof_mask, return_mask;
};
#define ZS_PAGEMAP_SCAN _IOWR('f', 16, struct zs_pm_scan_arg)
#define SCAN_REGIONS 512

struct reader {
	int fd;
	const char *path;
	pid_t pid;
	uint64_t *buf;
	long page;
	bool scan;		/* the kernel has PAGEMAP_SCAN */
};

/* Reads the pagemap entries of virtual pages [vp, last) and adds the
 * present frames, stopping after want present ones or when the budget is
 * spent. Returns 0, 1 when the address space is gone, -1 on error. */
static int read_entries(struct reader *rd, struct zs_pfnset *set, uint64_t vp, uint64_t last,
			uint64_t *want, char *err)
{
	while (vp < last && *want) {
		uint64_t cnt = last - vp;
		ssize_t got;

		if (cnt > PM_CHUNK)
			cnt = PM_CHUNK;
		if (cnt > set->budget - set->entries_read)
			cnt = set->budget - set->entries_read;
		if (!cnt) {
			set->unread_pages += last - vp;
			return 0;
		}
		got = pread(rd->fd, rd->buf, cnt * 8, (off_t)(vp * 8));
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0 && errno != ESRCH)
			return zs_fail(err, "%s: read at page %#llx: %s", rd->path, (unsigned long long)vp,
				       strerror(errno));
		if (got == 0 && pread(rd->fd, rd->buf, 8, 0) == 8)
			return 0;	/* beyond the user address space ([vsyscall]) */
		if (got <= 0)
			return 1;
		cnt = (uint64_t)got / 8;
		set->entries_read += cnt;
		if (reserve(set, cnt))
			return zs_fail(err, "out of memory");
		for (uint64_t k = 0; k < cnt && *want; k++) {
			uint64_t e = rd->buf[k];

			if (!(e & PM_PRESENT))
				continue;
			set->present++;
			(*want)--;
			if (!(e & PM_PFN_MASK)) {
				set->zero_pfn++;
				continue;
			}
			set->pfn[set->n++] = e & PM_PFN_MASK;
		}
		vp += cnt;
	}
	return 0;
}

/* One mapping [lo, hi) holding rss_pages resident pages: only the present
 * ranges are read where the kernel can list them, else the entries in
 * order until all resident pages are found. */
static int read_mapping(struct reader *rd, struct zs_pfnset *set, uint64_t lo, uint64_t hi,
			uint64_t rss_pages, char *err)
{
	uint64_t want = rss_pages, page = (uint64_t)rd->page;

	if (rd->scan) {
		struct zs_page_region regions[SCAN_REGIONS];
		struct zs_pm_scan_arg a = {
			.size = sizeof(a), .start = lo, .end = hi, .vec = (uintptr_t)regions,
			.vec_len = SCAN_REGIONS, .category_mask = ZS_PAGE_IS_PRESENT,
			.return_mask = ZS_PAGE_IS_PRESENT,
		};

		while (a.start < hi && want) {
			long nr = ioctl(rd->fd, ZS_PAGEMAP_SCAN, &a);

			if (nr < 0) {
				if (errno == EINTR)
					continue;
				/* EINVAL, ENOTTY: not this kernel after all. */
				rd->scan = false;
				return read_mapping(rd, set, a.start, hi, want, err);
			}
			for (long i = 0; i < nr && want; i++) {
				int rc = read_entries(rd, set, regions[i].start / page,
						      regions[i].end / page, &want, err);

				if (rc)
					return rc;
			}
			if (a.walk_end <= a.start)
				break;
			a.start = a.walk_end;
		}
		return 0;
	}
	return read_entries(rd, set, lo / page, hi / page, &want, err);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Sorts the frames added from start on and merges them into the sorted,
 * distinct frames before start: the set stays the size of the distinct
 * frames however many processes share them. */
static int merge_new(struct zs_pfnset *s, size_t start)
{
	size_t k = start, a, b, out;
	uint64_t *merged, *fresh;

	qsort(s->pfn + start, s->n - start, sizeof(*s->pfn), cmp_u64);
	for (size_t i = start; i < s->n; i++)
		if (k == start || s->pfn[k - 1] != s->pfn[i])
			s->pfn[k++] = s->pfn[i];
	if (!start || k == start) {
		s->n = k;
		return 0;
	}
	merged = malloc(start * sizeof(*merged));
	fresh = malloc((k - start) * sizeof(*fresh));
	if (!merged || !fresh) {
		free(merged);
		free(fresh);
		return -1;
	}
	memcpy(merged, s->pfn, start * sizeof(*merged));
	memcpy(fresh, s->pfn + start, (k - start) * sizeof(*fresh));
	for (a = 0, b = 0, out = 0; a < start || b < k - start;) {
		uint64_t v = b == k - start || (a < start && merged[a] <= fresh[b]) ? merged[a++]
										  : fresh[b++];

		if (!out || s->pfn[out - 1] != v)
			s->pfn[out++] = v;
	}
	s->n = out;
	free(fresh);
	free(merged);
	return 0;
}

/* smaps, not maps: its Rss says which mappings hold resident pages at all,
 * so reservations (PROT_NONE, MAP_NORESERVE, never touched) cost nothing
 * however large. NULL with *rc set when it cannot be opened. */
static FILE *open_smaps(pid_t pid, enum zs_pagemap_result *rc, char *err)
{
	char path[64];
	FILE *smaps;

	snprintf(path, sizeof(path), "/proc/%d/smaps", (int)pid);
	smaps = fopen(path, "re");
	if (smaps)
		return smaps;
	if (errno == ENOENT || errno == ESRCH) {
		zs_fail(err, "no process %d", (int)pid);
		*rc = ZS_PAGEMAP_GONE;
	} else {
		zs_fail(err, "cannot read %s: %s", path, strerror(errno));
		*rc = ZS_PAGEMAP_ERROR;
	}
	return NULL;
}

/* Opens rd->path (the pagemap of rd->pid) and its read buffer. */
static enum zs_pagemap_result reader_open(struct reader *rd, bool scan, char *err)
{
	rd->fd = open(rd->path, O_RDONLY | O_CLOEXEC);
	if (rd->fd < 0) {
		if (errno == ENOENT || errno == ESRCH) {
			zs_fail(err, "process %d exited before its pages were read", (int)rd->pid);
			return ZS_PAGEMAP_GONE;
		}
		return zs_fail(err, "cannot open %s: %s", rd->path, strerror(errno));
	}
	rd->buf = malloc(PM_CHUNK * sizeof(*rd->buf));
	if (!rd->buf)
		return zs_fail(err, "out of memory");
	rd->page = sysconf(_SC_PAGESIZE);
	rd->scan = scan;
	return ZS_PAGEMAP_OK;
}

static void reader_close(struct reader *rd)
{
	free(rd->buf);
	if (rd->fd >= 0)
		close(rd->fd);
}

/* Reads the frames of every mapping smaps lists with resident pages. */
static enum zs_pagemap_result read_smaps(FILE *smaps, struct reader *rd, struct zs_pfnset *set,
					 char *err)
{
	char *line = NULL;
	size_t linecap = 0;
	unsigned long long lo = 0, hi = 0;
	bool have_vma = false;
	enum zs_pagemap_result rc = ZS_PAGEMAP_OK;

	while (getline(&line, &linecap, smaps) > 0) {
		unsigned long long a, b, rss_kb;
		int r;

		if (sscanf(line, "%llx-%llx ", &a, &b) == 2 && strchr(line, '-') < strchr(line, ' ')) {
			lo = a;
			hi = b;
			have_vma = hi > lo;
			continue;
		}
		if (!have_vma || sscanf(line, "Rss: %llu kB", &rss_kb) != 1)
			continue;
		have_vma = false;
		set->mappings++;
		if (!rss_kb) {
			set->skipped_mappings++;
			continue;
		}
		r = read_mapping(rd, set, lo, hi, rss_kb * 1024 / (unsigned long long)rd->page, err);
		if (r) {
			rc = r < 0 ? ZS_PAGEMAP_ERROR : ZS_PAGEMAP_GONE;
			if (r > 0)
				zs_fail(err, "process %d exited while its pages were read", (int)rd->pid);
			break;
		}
	}
	free(line);
	if (rc == ZS_PAGEMAP_OK && ferror(smaps)) {
		if (!process_exists(rd->pid)) {
			zs_fail(err, "process %d exited while its pages were read", (int)rd->pid);
			rc = ZS_PAGEMAP_GONE;
		} else {
			rc = zs_fail(err, "/proc/%d/smaps: read error", (int)rd->pid);
		}
	}
	return rc;
}

enum zs_pagemap_result zs_pagemap_collect(pid_t pid, struct zs_pfnset *set, char *err)
{
	char path[64];
	size_t start_n = set->n;
	uint64_t start_present = set->present, start_zero = set->zero_pfn;
	struct reader rd = { .fd = -1, .pid = pid, .path = path };
	FILE *smaps;
	enum zs_pagemap_result rc = ZS_PAGEMAP_ERROR;

	if (!zs_pagemap_privileged())
		return zs_fail(err, "root is needed: /proc/%d/pagemap shows page frame numbers only to root (CAP_SYS_ADMIN), to anyone else they read as 0",
			       (int)pid);
	if (!set->budget)
		set->budget = ZS_PAGEMAP_BUDGET;
	smaps = open_smaps(pid, &rc, err);
	if (!smaps)
		return rc;
	snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)pid);
	rc = reader_open(&rd, !set->no_scan, err);
	if (rc == ZS_PAGEMAP_OK)
		rc = read_smaps(smaps, &rd, set, err);
	if (rc == ZS_PAGEMAP_OK && set->zero_pfn > start_zero && set->n == start_n)
		rc = zs_fail(err, "/proc/%d/pagemap hides page frame numbers (they read as 0): CAP_SYS_ADMIN is needed",
			     (int)pid);
	if (rc == ZS_PAGEMAP_OK && merge_new(set, start_n))
		rc = zs_fail(err, "out of memory");
	if (rc != ZS_PAGEMAP_OK) {
		set->n = start_n;
		set->present = start_present;
		set->zero_pfn = start_zero;
	}
	reader_close(&rd);
	fclose(smaps);
	return rc;
}

void zs_pfnset_unique(struct zs_pfnset *s)
{
	/* zs_pagemap_collect keeps the set sorted and distinct; frames added
	 * by other means are merged here. */
	size_t out = 0;

	qsort(s->pfn, s->n, sizeof(*s->pfn), cmp_u64);
	for (size_t i = 0; i < s->n; i++)
		if (!out || s->pfn[out - 1] != s->pfn[i])
			s->pfn[out++] = s->pfn[i];
	s->n = out;
}

/* --- processes -------------------------------------------------------------- */

static int read_links(pid_t **pid, pid_t **ppid, size_t *n, char *err)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	size_t cap = 0;

	*pid = *ppid = NULL;
	*n = 0;
	if (!d)
		return zs_fail(err, "cannot read /proc: %s", strerror(errno));
	while ((e = readdir(d))) {
		char path[300], buf[512], *rp;
		char *end;
		long p = strtol(e->d_name, &end, 10);
		int pp;
		ssize_t got;
		int fd;

		if (*end || p <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/stat", p);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		got = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (got <= 0)
			continue;
		buf[got] = '\0';
		/* "pid (comm) state ppid ...": comm may hold anything. */
		rp = strrchr(buf, ')');
		if (!rp || sscanf(rp + 1, " %*c %d", &pp) != 1)
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 512;
			pid_t *g1 = realloc(*pid, cap * sizeof(**pid));

			if (g1)
				*pid = g1;
			pid_t *g2 = g1 ? realloc(*ppid, cap * sizeof(**ppid)) : NULL;

			if (!g1 || !g2) {
				closedir(d);
				free(*pid);
				free(g2 ? g2 : *ppid);
				*pid = *ppid = NULL;
				return zs_fail(err, "out of memory");
			}
			*ppid = g2;
		}
		(*pid)[*n] = (pid_t)p;
		(*ppid)[(*n)++] = (pid_t)pp;
	}
	closedir(d);
	return 0;
}

static int cmp_by_parent(const void *a, const void *b, void *ctx)
{
	const pid_t *ppid = ctx;
	pid_t x = ppid[*(const size_t *)a], y = ppid[*(const size_t *)b];

	return x < y ? -1 : x > y;
}

/* First index in order[] (sorted by parent) whose parent is p. */
static size_t first_child(const size_t *order, const pid_t *ppid, size_t n, pid_t p)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ppid[order[mid]] < p)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int zs_descendants_of(const pid_t *pid, const pid_t *ppid, size_t n, pid_t root, pid_t exclude,
		      pid_t **pids, size_t *count, char *err)
{
	size_t *order = malloc((n ? n : 1) * sizeof(*order));
	pid_t *found = malloc((n ? n : 1) * sizeof(*found));
	size_t nfound = 0, next = 0;

	*pids = NULL;
	*count = 0;
	if (!order || !found) {
		free(order);
		free(found);
		return zs_fail(err, "out of memory");
	}
	/* Children grouped by parent once; then a breadth-first walk from
	 * root, each process visited once: n log n, whatever the depth. */
	for (size_t i = 0; i < n; i++)
		order[i] = i;
	qsort_r(order, n, sizeof(*order), cmp_by_parent, (void *)ppid);
	for (pid_t parent = root;; parent = found[next++]) {
		for (size_t k = first_child(order, ppid, n, parent); k < n && ppid[order[k]] == parent; k++) {
			pid_t child = pid[order[k]];

			if (child != exclude && child != root && nfound < n)
				found[nfound++] = child;
		}
		if (next == nfound)
			break;
	}
	free(order);
	*pids = found;
	*count = nfound;
	return 0;
}

int zs_descendants(pid_t root, pid_t exclude, pid_t **pids, size_t *n, char *err)
{
	pid_t *pid, *ppid;
	size_t nl;
	int rc;

	*pids = NULL;
	*n = 0;
	if (read_links(&pid, &ppid, &nl, err))
		return -1;
	rc = zs_descendants_of(pid, ppid, nl, root, exclude, pids, n, err);
	free(pid);
	free(ppid);
	return rc;
}

long long zs_tree_resident(pid_t root, pid_t exclude, char *err)
{
	long long pages = 0;
	pid_t *pids;
	size_t n;

	if (zs_descendants(root, exclude, &pids, &n, err))
		return -1;
	for (size_t i = 0; i < n; i++) {
		char path[32];
		unsigned long size, resident;
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/statm", (int)pids[i]);
		f = fopen(path, "re");
		/* A task that exits meanwhile holds nothing any more. */
		if (!f)
			continue;
		if (fscanf(f, "%lu %lu", &size, &resident) == 2)
			pages += (long long)resident;
		fclose(f);
	}
	free(pids);
	return pages * sysconf(_SC_PAGESIZE);
}

int zs_job_pids(const char *scontrol, const char *job, pid_t **pids, size_t *n, bool *cut,
		char *err)
{
	struct zs_output out = { .max = ZS_LISTPIDS_MAX };
	char *argv[] = { (char *)(scontrol ? scontrol : "scontrol"), "listpids", (char *)job, NULL };
	char *save = NULL;
	size_t cap = 0;
	int rc;

	*pids = NULL;
	*n = 0;
	*cut = false;
	if (!*job || strspn(job, "0123456789_.") != strlen(job) || job[0] < '0' || job[0] > '9')
		return zs_fail(err, "job '%s': expected a job id such as 1234 (or 1234.0 for one step)", job);
	rc = zs_run_inherit(argv[0], argv, 30000, &out, err);
	if (rc < 0) {
		free(out.buf);
		return -1;
	}
	if (rc) {
		char *msg = out.buf ? out.buf : "";

		msg[strcspn(msg, "\n")] = '\0';
		zs_fail(err, "scontrol listpids %s failed: %s", job, *msg ? msg : "no message");
		free(out.buf);
		return -1;
	}
	*cut = out.cut;
	/* "PID JOBID STEPID LOCALID GLOBALID" then one line per process; a
	 * line cut by the limit is dropped. */
	if (out.cut && out.buf) {
		char *last = strrchr(out.buf, '\n');

		if (last)
			last[1] = '\0';
	}
	for (char *line = out.buf ? strtok_r(out.buf, "\n", &save) : NULL; line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *end;
		long pid = strtol(line, &end, 10);

		if (end == line || pid <= 0 || (*end != ' ' && *end != '\t'))
			continue;
		if (*n == cap) {
			pid_t *grown = realloc(*pids, (cap = cap ? cap * 2 : 64) * sizeof(**pids));

			if (!grown) {
				free(*pids);
				free(out.buf);
				*pids = NULL;
				return zs_fail(err, "out of memory");
			}
			*pids = grown;
		}
		(*pids)[(*n)++] = (pid_t)pid;
	}
	free(out.buf);
	return 0;
}
