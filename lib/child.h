/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Starting and stopping child processes from inside slurmstepd or slurmd:
 * a clean environment, no inherited descriptors or blocked signals, a new
 * session, and waits that always end. */
#ifndef ZS_CHILD_H
#define ZS_CHILD_H

#include <sys/types.h>

/* Starts path with argv and a fixed minimal environment. The child's stdin
 * is /dev/null; its stdout and stderr go to out_fd (or /dev/null if -1).
 * Every other descriptor is closed, the signal mask cleared and handlers
 * reset. Returns the pid, or -1 with err set. */
pid_t zs_spawn(const char *path, char *const argv[], int out_fd, char *err);

/* Waits up to timeout_ms for pid. Returns 0 when reaped (*status set),
 * 1 on timeout, -1 on error. */
int zs_wait_for(pid_t pid, int timeout_ms, int *status);

/* SIGTERM, up to term_ms, then SIGKILL, up to kill_ms. Returns 0 when
 * reaped, 1 when the child would not die in time (left for init to reap). */
int zs_stop(pid_t pid, int term_ms, int kill_ms, int *status);

/* Runs a command to completion within timeout_ms, capturing up to outlen-1
 * bytes of its output. Returns its exit status, or -1 with err set (timeout,
 * signal or failure to start). */
int zs_run(const char *path, char *const argv[], int timeout_ms, char *out,
	   unsigned outlen, char *err);

/* As zs_run, for the administrator's command only, never for anything
 * started from slurmstepd: looks prog up in PATH and keeps the caller's
 * environment (scontrol needs SLURM_CONF). */
int zs_run_inherit(const char *prog, char *const argv[], int timeout_ms, char *out,
		   unsigned outlen, char *err);

/* A monotonic clock in seconds. */
double zs_now(void);

#endif
