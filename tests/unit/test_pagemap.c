// SPDX-License-Identifier: GPL-2.0-or-later
/* Reading the frames of processes: the cost follows resident memory, not
 * reserved address space; frames shared by many processes are held once;
 * a job's process list is read whole; descendants are found in one pass.
 * Needs root (page frame numbers). */
#include "config.h"
#include "errbuf.h"
#include "pagemap.h"
#include "tap.h"
#include "child.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static unsigned long long rchar(void)
{
	char line[128];
	unsigned long long v = 0;
	FILE *f = fopen("/proc/self/io", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "rchar: %llu", &v) == 1)
			break;
	if (f)
		fclose(f);
	return v;
}

#define TIB (1ULL << 40)
#define MIB (1ULL << 20)

/* A child holding a 4 TiB reservation and 1 MiB of touched memory, inside
 * the reservation (mode 1: PROT_NONE reservation, the touched part made
 * writable; mode 2: a writable MAP_NORESERVE mapping touched in the
 * middle). */
static pid_t reserver(int mode)
{
	int p[2];
	pid_t pid;
	char c = 0;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid == 0) {
		int prot = mode == 1 ? PROT_NONE : PROT_READ | PROT_WRITE;
		char *r = mmap(NULL, 4 * TIB, prot, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		char *touch = r + 2 * TIB;

		if (r == MAP_FAILED)
			_exit(1);
		if (mode == 1 && mprotect(touch, MIB, PROT_READ | PROT_WRITE))
			_exit(1);
		for (size_t i = 0; i < MIB; i += 4096)
			touch[i] = 1;
		if (write(p[1], &c, 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(p[1]);
	if (read(p[0], &c, 1) != 1) {
		close(p[0]);
		return -1;
	}
	close(p[0]);
	return pid;
}

static void end(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static void reservations(void)
{
	char err[ZS_ERRLEN];

	for (int mode = 1; mode <= 2; mode++) {
		struct zs_pfnset set = { 0 };
		pid_t pid = reserver(mode);
		unsigned long long before = rchar();
		double t0 = zs_now();

		ok(pid > 0, "a process reserving 4 TiB (%s) and touching 1 MiB",
		   mode == 1 ? "PROT_NONE" : "writable, MAP_NORESERVE");
		ok(zs_pagemap_collect(pid, &set, err) == ZS_PAGEMAP_OK, "its pages are read");
		unsigned long long read_bytes = rchar() - before;

		/* The old reading went through 8 bytes of pagemap per reserved
		 * page: 8 GiB here. */
		ok(read_bytes < 64 * MIB, "reading it read %llu bytes (pagemap and smaps), not the 8 GiB of entries of the reservation",
		   read_bytes);
		ok(set.entries_read < 4 * MIB, "%llu pagemap entries read", (unsigned long long)set.entries_read);
		ok(set.n >= 256, "the 256 touched pages are among the %zu frames", set.n);
		printf("# read in %.3f s\n", zs_now() - t0);
		zs_pfnset_free(&set);
		end(pid);
	}

	/* Without PAGEMAP_SCAN (kernels before 6.7), a sparse writable
	 * reservation is read entry by entry, within the budget. */
	struct zs_pfnset set = { .no_scan = true, .budget = 16 * MIB };
	pid_t pid = reserver(2);

	ok(zs_pagemap_collect(pid, &set, err) == ZS_PAGEMAP_OK, "without PAGEMAP_SCAN the read still ends");
	ok(set.entries_read <= 16 * MIB, "within the budget: %llu entries of %llu",
	   (unsigned long long)set.entries_read, 16 * MIB);
	ok(set.unread_pages > 0, "and says how many pages of resident mappings were left unread (%llu)",
	   (unsigned long long)set.unread_pages);
	zs_pfnset_free(&set);
	end(pid);
}

static void sharing(void)
{
	enum { SHARERS = 6 };
	char err[ZS_ERRLEN];
	size_t len = 16 * MIB;
	char *shm = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pid_t pids[SHARERS];
	struct zs_pfnset set = { 0 };
	size_t one = 0;

	int ready[2];
	char c;

	for (size_t i = 0; i < len; i += 4096)
		shm[i] = 1;
	if (pipe(ready)) {
		printf("Bail out! pipe: %s\n", strerror(errno));
		exit(1);
	}
	for (int i = 0; i < SHARERS; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			for (size_t k = 0; k < len; k += 4096)
				shm[k]++;
			/* Mapped in full: the parent may read this process. */
			if (write(ready[1], "", 1) != 1)
				_exit(1);
			pause();
			_exit(0);
		}
	}
	close(ready[1]);
	for (int i = 0; i < SHARERS; i++)
		if (read(ready[0], &c, 1) != 1)
			printf("# sharer %d did not say it was ready\n", i);
	close(ready[0]);
	for (int i = 0; i < SHARERS; i++) {
		ok(zs_pagemap_collect(pids[i], &set, err) == ZS_PAGEMAP_OK, "sharer %d read", i);
		if (i == 0)
			one = set.n;
	}
	ok(set.n < one + one / 2, "%d processes sharing 16 MiB hold %zu frames, not %d x %zu", SHARERS, set.n,
	   SHARERS, one);
	bool sorted = true;

	for (size_t i = 1; i < set.n; i++)
		if (set.pfn[i - 1] >= set.pfn[i])
			sorted = false;
	ok(sorted, "the frames are sorted and distinct");
	for (int i = 0; i < SHARERS; i++)
		end(pids[i]);
	zs_pfnset_free(&set);
	munmap(shm, len);
}

static void descendants(void)
{
	enum { N = 200000 };
	pid_t *pid = malloc(N * sizeof(*pid)), *ppid = malloc(N * sizeof(*ppid)), *out;
	size_t n;
	char err[ZS_ERRLEN];

	/* A chain 1000 <- 1001 <- ... listed deepest first, as /proc may list
	 * recycled pids, plus unrelated processes. */
	for (int i = 0; i < N; i++) {
		pid[i] = 1000 + (N - 1 - i);
		ppid[i] = i == N - 1 ? 1 : pid[i] - 1;
	}
	ppid[N / 2] = 1;	/* the chain breaks here: the part below is not ours */
	ok(!zs_descendants_of(pid, ppid, N, 1000, 0, &out, &n, err), "descendants of a 200000-long chain");
	ok(n == (size_t)(N - 1 - N / 2 - 1), "exactly the processes above the break (%zu)", n);
	free(out);
	ok(!zs_descendants_of(pid, ppid, N, 1000, 1010, &out, &n, err) && n == 9,
	   "an excluded process cuts its own descendants (%zu)", n);
	free(out);
	free(pid);
	free(ppid);

	pid_t kid = fork();

	if (kid == 0) {
		pause();
		_exit(0);
	}
	ok(!zs_descendants(getpid(), 0, &out, &n, err) && n >= 1, "a real child is a descendant");
	bool found = false;

	for (size_t i = 0; i < n; i++)
		found |= out[i] == kid;
	ok(found, "and it is the one forked");
	free(out);
	end(kid);
}

static void job_pids(void)
{
	char dir[] = "/tmp/zs-pm-XXXXXX", script[128], err[ZS_ERRLEN];
	pid_t *pids;
	size_t n;
	bool cut;
	FILE *f;

	if (!mkdtemp(dir))
		return;
	snprintf(script, sizeof(script), "%s/scontrol", dir);
	f = fopen(script, "w");
	/* 150000 processes: about 3 MiB of "scontrol listpids" output. */
	fprintf(f, "#!/bin/sh\necho 'PID      JOBID    STEPID   LOCALID GLOBALID'\n"
		   "seq 100000 249999 | sed 's/$/ 42       0        0       0/'\n");
	fclose(f);
	chmod(script, 0755);
	ok(!zs_job_pids(script, "42", &pids, &n, &cut, err), "listpids read");
	ok(n == 150000 && !cut, "all 150000 processes listed, none cut (%zu)", n);
	ok(n && pids[n - 1] == 249999, "up to the last line");
	free(pids);
	unlink(script);
	rmdir(dir);
}

int main(void)
{
	if (geteuid())
		return skip_all("root is needed to read page frame numbers (/proc/PID/pagemap)");
	reservations();
	sharing();
	descendants();
	job_pids();
	return done_testing();
}
