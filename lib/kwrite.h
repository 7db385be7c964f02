/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Writes to the kernel's files whose store does its work inside write(2)
 * and may take long: the module's sort (nodeid), a node's compaction
 * (nodeN/compact), the quarantine's give-back, drop_caches, the per-CPU
 * lists' sysctl. The sorter makes them in slurmstepd (the job prolog and
 * before each step), which must never wait without a bound: a node's
 * compaction was seen taking 53 s inside one sort on Linux 7.x
 * (bench/REPORT-cachenode-decay.md), and a sort of a very large node takes
 * many seconds. Each write runs in a short-lived child (zs_call, child.h)
 * that is waited for at most the site's kernel_timeout= and then killed:
 * compaction and the module's sort both stop at a fatal signal.
 */
#ifndef ZS_KWRITE_H
#define ZS_KWRITE_H

#include "child.h"
#include "errbuf.h"

#include <stdbool.h>
#include <stddef.h>

/* How long a killed writer may take to end before it is left running:
 * compaction checks for a fatal signal as it goes through a zone's pages,
 * and the module's sort between batches of blocks (kmod/zonesort_sort.c,
 * zs_stop; the quarantine's takes likewise), so either ends soon after the
 * SIGKILL, on a loaded machine too. One that has not ended by then waits
 * in the kernel where a signal does not reach it (the quarantine's
 * give-back does not stop halfway). */
#define ZS_KWRITE_KILL_MS 5000

struct zs_kwrite {
	enum zs_call_end end;	/* ZS_CALL_DONE: err_no says how the write went */
	int err_no;		/* 0: written whole; else open's, write's or
				 * close's errno, EIO for a short write */
	unsigned timeout_s;	/* the bound it was given */
	char why[ZS_ERRLEN];	/* ZS_CALL_FAILED: why there is no answer */
};

/* Opens path and writes text in one write(2), in a child waited for at
 * most timeout_s seconds (then killed, see ZS_KWRITE_KILL_MS). 0 when
 * written whole; -1 otherwise, w saying how it ended. The open has no
 * O_NONBLOCK: it means nothing to sysfs and procfs, and what it did for
 * the tests' FIFOs standing in for them (a FIFO without a reader failed at
 * once instead of blocking the caller) the bound does now; such a FIFO,
 * whose open blocks until a reader comes, stands in for a kernel
 * operation that does not end. */
int zs_kwrite(const char *path, const char *text, unsigned timeout_s, struct zs_kwrite *w);

/* The same for len bytes of data, in as many write(2)s as it takes (a
 * binary sysfs file takes at most a page per call), the whole bounded by
 * timeout_s. */
int zs_kwrite_data(const char *path, const void *data, size_t len, unsigned timeout_s,
		   struct zs_kwrite *w);

/* True when the write did not end within its bound (it was stopped, or
 * left running). */
bool zs_kwrite_timed_out(const struct zs_kwrite *w);

/* How a failed write ended, in words: for one that did not end in time,
 * to follow what the write does ("/sys/.../compact: compaction " + ...):
 * "did not end within 60 s (kernel_timeout): stopped", or the same with
 * "killed, but still in the kernel 5 s later: left running, reaped when it
 * ends"; else its errno's text, or why no writer ran ("no writer: fork
 * failed: ..."). */
const char *zs_kwrite_describe(const struct zs_kwrite *w, char *buf, size_t len);

#endif
