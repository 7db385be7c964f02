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

enum zs_pagemap_result zs_pagemap_collect(pid_t pid, struct zs_pfnset *set, char *err)
{
	char path[64], *line = NULL;
	size_t linecap = 0, start_n = set->n;
	uint64_t start_present = set->present, start_zero = set->zero_pfn;
	uint64_t *buf = NULL;
	FILE *maps;
	int fd = -1;
	enum zs_pagemap_result rc = ZS_PAGEMAP_ERROR;

	if (!zs_pagemap_privileged())
		return zs_fail(err, "root is needed: /proc/%d/pagemap shows page frame numbers only to root (CAP_SYS_ADMIN), to anyone else they read as 0",
			       (int)pid);
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	maps = fopen(path, "re");
	if (!maps) {
		if (errno == ENOENT || errno == ESRCH) {
			zs_fail(err, "no process %d", (int)pid);
			return ZS_PAGEMAP_GONE;
		}
		return zs_fail(err, "cannot read %s: %s", path, strerror(errno));
	}
	snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT || errno == ESRCH) {
			zs_fail(err, "process %d exited before its pages were read", (int)pid);
			rc = ZS_PAGEMAP_GONE;
		} else {
			zs_fail(err, "cannot open %s: %s", path, strerror(errno));
		}
		goto out;
	}
	buf = malloc(PM_CHUNK * sizeof(*buf));
	if (!buf) {
		zs_fail(err, "out of memory");
		goto out;
	}
	long page = sysconf(_SC_PAGESIZE);

	while (getline(&line, &linecap, maps) > 0) {
		unsigned long long lo, hi;

		if (sscanf(line, "%llx-%llx", &lo, &hi) != 2 || hi <= lo)
			continue;
		uint64_t first = lo / (uint64_t)page, last = hi / (uint64_t)page;

		for (uint64_t vp = first; vp < last;) {
			uint64_t want = last - vp;
			ssize_t got;

			if (want > PM_CHUNK)
				want = PM_CHUNK;
			got = pread(fd, buf, want * 8, (off_t)(vp * 8));
			if (got < 0 && errno == EINTR)
				continue;
			if (got < 0 && errno != ESRCH) {
				zs_fail(err, "%s: read at page %#llx: %s", path, (unsigned long long)vp,
					strerror(errno));
				goto out;
			}
			if (got == 0 && pread(fd, buf, 8, 0) == 8) {
				/* Beyond the user address space ([vsyscall]):
				 * pagemap has nothing there. */
				break;
			}
			if (got <= 0) {
				/* The address space is gone: the process exited. */
				zs_fail(err, "process %d exited while its pages were read", (int)pid);
				rc = ZS_PAGEMAP_GONE;
				goto out;
			}
			uint64_t cnt = (uint64_t)got / 8;

			if (reserve(set, cnt)) {
				zs_fail(err, "out of memory");
				goto out;
			}
			for (uint64_t k = 0; k < cnt; k++) {
				uint64_t e = buf[k];

				if (!(e & PM_PRESENT))
					continue;
				set->present++;
				if (!(e & PM_PFN_MASK)) {
					set->zero_pfn++;
					continue;
				}
				set->pfn[set->n++] = e & PM_PFN_MASK;
			}
			vp += cnt;
		}
	}
	if (ferror(maps)) {
		if (!process_exists(pid)) {
			zs_fail(err, "process %d exited while its pages were read", (int)pid);
			rc = ZS_PAGEMAP_GONE;
		} else {
			zs_fail(err, "/proc/%d/maps: read error", (int)pid);
		}
		goto out;
	}
	if (set->zero_pfn > start_zero && set->n == start_n) {
		zs_fail(err, "/proc/%d/pagemap hides page frame numbers (they read as 0): CAP_SYS_ADMIN is needed",
			(int)pid);
		goto out;
	}
	rc = ZS_PAGEMAP_OK;
out:
	if (rc != ZS_PAGEMAP_OK) {
		set->n = start_n;
		set->present = start_present;
		set->zero_pfn = start_zero;
	}
	free(line);
	free(buf);
	if (fd >= 0)
		close(fd);
	fclose(maps);
	return rc;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

void zs_pfnset_unique(struct zs_pfnset *s)
{
	uint64_t max = 0;
	size_t out = 0;

	for (size_t i = 0; i < s->n; i++)
		if (s->pfn[i] > max)
			max = s->pfn[i];
	/* A bitmap of the physical address space when it is small enough
	 * (64 MiB of bitmap covers 2 TiB of 4 KiB pages): linear time. */
	if (s->n && max / 8 < (64ULL << 20)) {
		uint64_t *seen = calloc(max / 64 + 1, sizeof(uint64_t));

		if (seen) {
			for (size_t i = 0; i < s->n; i++) {
				uint64_t p = s->pfn[i], bit = 1ULL << (p % 64);

				if (seen[p / 64] & bit)
					continue;
				seen[p / 64] |= bit;
				s->pfn[out++] = p;
			}
			free(seen);
			s->n = out;
			return;
		}
	}
	qsort(s->pfn, s->n, sizeof(*s->pfn), cmp_u64);
	for (size_t i = 0; i < s->n; i++)
		if (!out || s->pfn[out - 1] != s->pfn[i])
			s->pfn[out++] = s->pfn[i];
	s->n = out;
}

/* --- processes -------------------------------------------------------------- */

struct proc_link {
	pid_t pid, ppid;
	char mark;	/* 0 unknown, 1 in, 2 out */
};

static int read_links(struct proc_link **out, size_t *n, char *err)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	size_t cap = 0;

	*out = NULL;
	*n = 0;
	if (!d)
		return zs_fail(err, "cannot read /proc: %s", strerror(errno));
	while ((e = readdir(d))) {
		char path[300], buf[512], *rp;
		char *end;
		long pid = strtol(e->d_name, &end, 10);
		int ppid;
		ssize_t got;
		int fd;

		if (*end || pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
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
		if (!rp || sscanf(rp + 1, " %*c %d", &ppid) != 1)
			continue;
		if (*n == cap) {
			struct proc_link *grown = realloc(*out, (cap = cap ? cap * 2 : 512) * sizeof(**out));

			if (!grown) {
				closedir(d);
				free(*out);
				*out = NULL;
				return zs_fail(err, "out of memory");
			}
			*out = grown;
		}
		(*out)[(*n)++] = (struct proc_link){ (pid_t)pid, (pid_t)ppid, 0 };
	}
	closedir(d);
	return 0;
}

int zs_descendants(pid_t root, pid_t exclude, pid_t **pids, size_t *n, char *err)
{
	struct proc_link *l;
	size_t nl, count = 0;
	bool changed = true;

	*pids = NULL;
	*n = 0;
	if (read_links(&l, &nl, err))
		return -1;
	/* Mark until nothing changes: a process is in when its parent is root
	 * or in, out when it is exclude or its parent is out. */
	while (changed) {
		changed = false;
		for (size_t i = 0; i < nl; i++) {
			char m = 0;

			if (l[i].mark)
				continue;
			if (exclude && l[i].pid == exclude) {
				m = 2;
			} else if (l[i].ppid == root) {
				m = 1;
			} else {
				for (size_t j = 0; j < nl; j++)
					if (l[j].pid == l[i].ppid) {
						m = l[j].mark;
						break;
					}
			}
			if (m) {
				l[i].mark = m;
				changed = true;
				count += m == 1;
			}
		}
	}
	*pids = malloc((count ? count : 1) * sizeof(**pids));
	if (!*pids) {
		free(l);
		return zs_fail(err, "out of memory");
	}
	for (size_t i = 0; i < nl; i++)
		if (l[i].mark == 1)
			(*pids)[(*n)++] = l[i].pid;
	free(l);
	return 0;
}

int zs_job_pids(const char *scontrol, const char *job, pid_t **pids, size_t *n, char *err)
{
	static char out[1 << 20];
	char *argv[] = { (char *)(scontrol ? scontrol : "scontrol"), "listpids", (char *)job, NULL };
	size_t cap = 0;
	int rc;

	*pids = NULL;
	*n = 0;
	if (!*job || strspn(job, "0123456789_.") != strlen(job) || job[0] < '0' || job[0] > '9')
		return zs_fail(err, "job '%s': expected a job id such as 1234 (or 1234.0 for one step)", job);
	rc = zs_run_inherit(argv[0], argv, 30000, out, sizeof(out), err);
	if (rc < 0)
		return -1;
	if (rc) {
		out[strcspn(out, "\n")] = '\0';
		return zs_fail(err, "scontrol listpids %s failed: %s", job, out[0] ? out : "no message");
	}
	/* "PID JOBID STEPID LOCALID GLOBALID" then one line per process. */
	for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
		char *end;
		long pid = strtol(line, &end, 10);

		if (end == line || pid <= 0 || (*end != ' ' && *end != '\t'))
			continue;
		if (*n == cap) {
			pid_t *grown = realloc(*pids, (cap = cap ? cap * 2 : 64) * sizeof(**pids));

			if (!grown) {
				free(*pids);
				*pids = NULL;
				return zs_fail(err, "out of memory");
			}
			*pids = grown;
		}
		(*pids)[(*n)++] = (pid_t)pid;
	}
	return 0;
}
