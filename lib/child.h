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
