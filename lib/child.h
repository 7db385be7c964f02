/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Starting and stopping child processes from inside slurmstepd or slurmd:
 * a clean environment, no inherited descriptors or blocked signals, a new
 * session, and waits that always end. */
#ifndef ZS_CHILD_H
#define ZS_CHILD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* A started child, held by a pidfd where the kernel has them (5.3+), so
 * that it is never signalled or waited for by a bare pid: slurmstepd reaps
 * any child with wait3(), and the pid of a helper that exited early may
 * belong to another process by the time the step ends. */
struct zs_child {
	pid_t pid;
	int pidfd;		/* -1 without pidfd support */
	bool ended;		/* exited and reaped, by us or by another waiter */
	bool have_status;	/* reaped by us: status is its wait status */
	int status;
};

/* Starts path with argv and a fixed minimal environment. The child's stdin
 * is /dev/null; its stdout and stderr go to out_fd (or /dev/null if -1).
 * Every other descriptor is closed, the signal mask cleared and handlers
 * reset. Returns 0 once the program runs, or -1 with err set; a program
 * that cannot be executed is reported here ("cannot execute PATH: ..."),
 * through a close-on-exec pipe, not as an exit status later. */
int zs_spawn(const char *path, char *const argv[], int out_fd, struct zs_child *c, char *err);

/* Sends sig. 0 sent, 1 the child has already exited (nothing sent), -1
 * error. */
int zs_child_signal(struct zs_child *c, int sig);

/* Waits up to timeout_ms for the child to end. 0 ended (c->ended), 1 still
 * running, -1 error. A child reaped by someone else counts as ended,
 * without a status. */
int zs_child_wait(struct zs_child *c, int timeout_ms);

/* SIGTERM, up to term_ms, then SIGKILL, up to kill_ms. Returns 0 when it
 * ended (and releases c), 1 when it would not die in time. */
int zs_stop(struct zs_child *c, int term_ms, int kill_ms);

/* pidfd_open(pid, 0), or -1 with errno (ENOSYS before Linux 5.3). */
int zs_pidfd_open(pid_t pid);

/* Closes the pidfd. */
void zs_child_release(struct zs_child *c);

/* Tests turn close_range off to exercise the fallback kernels before 5.9
 * take: closing each descriptor up to a bound found before fork. */
void zs_child_set_close_range(bool allowed);

/* How a function run by zs_call ended. */
enum zs_call_end {
	ZS_CALL_FAILED = -1,	/* no result: the child could not be started, or
				 * ended without one (killed by someone else); err
				 * says which */
	ZS_CALL_DONE = 0,	/* fn returned: *result is its value */
	ZS_CALL_STOPPED,	/* fn had not returned within timeout_ms: the child
				 * was killed (SIGKILL) and is gone */
	ZS_CALL_LEFT,		/* as STOPPED, but still not gone kill_ms after the
				 * SIGKILL (uninterruptible in the kernel): left
				 * running, reaped when it ends (below) */
};

/*
 * Runs fn(arg) in a forked child and waits at most timeout_ms for its
 * result: for a system call that may not end, such as a write to a kernel
 * attribute whose store sorts or compacts memory, made from slurmstepd.
 * The parent is multi-threaded there, so fn runs between fork and _exit
 * and may make async-signal-safe calls only (open, write, close; no
 * malloc, no stdio, no locks); it must not return before its work is done,
 * and returns a small int (an errno, 0 for success). The child starts with
 * no inherited descriptors but /dev/null on 0-2, default signal handlers
 * (SIGPIPE ignored, so a write returns EPIPE), no blocked signals and a
 * session of its own, and is killed if the calling thread dies (a helper
 * killed while it waits). Its result comes back through a pipe, not its
 * exit status, which slurmstepd's wait3() may take first.
 *
 * Past timeout_ms the child gets SIGKILL, which ends any killable wait of
 * the kernel (a FIFO's open, a compaction, a sort that checks
 * fatal_signal_pending), and is waited for up to kill_ms more. One still
 * there then is held (by its pidfd) and reaped by a later zs_call or
 * zs_call_reap_left, or by whoever else reaps the caller's children
 * (slurmstepd's wait3; init once the caller has exited). Every wait is
 * bounded: zs_call returns within about timeout_ms + kill_ms. Not for
 * concurrent use by several threads of one process.
 */
int zs_call(int (*fn)(void *arg), void *arg, int timeout_ms, int kill_ms, int *result,
	    char *err);

/* Reaps the children zs_call left that have ended since; returns how many
 * are still held. */
unsigned zs_call_reap_left(void);

/* Output captured from a command: up to max bytes in buf (malloc'ed,
 * terminated; the caller frees it); cut is set when there was more. */
struct zs_output {
	char *buf;
	size_t len, cap, max;
	bool cut;
};

/* Runs a command to completion within timeout_ms, capturing up to outlen-1
 * bytes of its output. Returns its exit status, or -1 with err set (timeout,
 * signal or failure to start). */
int zs_run(const char *path, char *const argv[], int timeout_ms, char *out,
	   unsigned outlen, char *err);

/* As zs_run, for the administrator's command only, never for anything
 * started from slurmstepd: looks prog up in PATH and keeps the caller's
 * environment (scontrol needs SLURM_CONF). */
int zs_run_inherit(const char *prog, char *const argv[], int timeout_ms, struct zs_output *out,
		   char *err);

/* A monotonic clock in seconds. */
double zs_now(void);

#endif
