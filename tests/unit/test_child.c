// SPDX-License-Identifier: GPL-2.0-or-later
/* Children started from a process that blocks signals and holds descriptors,
 * as slurmstepd does, must start clean and always end within their bound. */
#include "config.h"
#include "child.h"
#include "errbuf.h"
#include "tap.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

/* Whether this kernel has pidfd_open() (5.3) and waitid(P_PIDFD) (5.4),
 * tried on a child of our own. */
static bool pidfd_usable(void)
{
	siginfo_t si;
	pid_t pid = fork();
	int fd, rc;

	if (pid == 0)
		_exit(0);
	fd = zs_pidfd_open(pid);
	if (fd < 0) {
		waitpid(pid, NULL, 0);
		return false;
	}
	rc = waitid((idtype_t)P_PIDFD, (id_t)fd, &si, WEXITED);
	close(fd);
	if (rc)
		waitpid(pid, NULL, 0);
	return rc == 0;
}

/* Waits up to a second for zs_call's held children to be reaped. */
static bool wait_for_left(void)
{
	for (int i = 0; i < 100; i++) {
		if (zs_call_reap_left() == 0)
			return true;
		usleep(10000);
	}
	return false;
}

/* Functions for zs_call, run in its child: async-signal-safe calls only. */
static int returns_42(void *arg)
{
	(void)arg;
	return 42;
}

/* 0 when descriptor *arg is closed in the child, else 1. */
static int fd_closed(void *arg)
{
	return fcntl(*(int *)arg, F_GETFD) == -1 && errno == EBADF ? 0 : 1;
}

/* 0 when the child blocks no signal and runs in a session of its own. */
static int clean_state(void *arg)
{
	sigset_t now;

	(void)arg;
	if (sigprocmask(SIG_SETMASK, NULL, &now))
		return 1;
	for (int sig = 1; sig < 32; sig++)
		if (sigismember(&now, sig))
			return 2;
	return getsid(0) == getpid() ? 0 : 3;
}

/* Blocks in open(2) of the FIFO *arg names, which has no reader: a killable
 * wait in the kernel that does not end by itself. */
static int open_fifo(void *arg)
{
	int fd = open((const char *)arg, O_WRONLY | O_CLOEXEC);

	if (fd >= 0)
		close(fd);
	return fd < 0 ? errno : 0;
}

static int exits_without_result(void *arg)
{
	(void)arg;
	_exit(3);
}

/* No child of ours is left, running or a zombie. */
static bool no_children(void)
{
	return waitpid(-1, NULL, WNOHANG) == -1 && errno == ECHILD;
}

static void call_in_child(void)
{
	char err[ZS_ERRLEN] = "", fifo[64] = "/tmp/zs-call-XXXXXX";
	int result = -1, fd57 = 57, end;
	double t0;

	ok(zs_call(returns_42, NULL, 5000, 1000, &result, err) == ZS_CALL_DONE && result == 42,
	   "zs_call returns the function's result (%d)", result);
	ok(no_children(), "... and the child is reaped");
	ok(zs_call(fd_closed, &fd57, 5000, 1000, &result, err) == ZS_CALL_DONE && result == 0,
	   "the parent's descriptor 57 is closed in the child (%d)", result);
	ok(zs_call(clean_state, NULL, 5000, 1000, &result, err) == ZS_CALL_DONE && result == 0,
	   "the child blocks no signal and has a session of its own (%d)", result);
	ok(zs_call(exits_without_result, NULL, 5000, 1000, &result, err) == ZS_CALL_FAILED,
	   "a child that exits without a result is an error");
	err_has(err, "the child ended without a result", "... that says so");
	ok(no_children(), "... and it is reaped");

	/* A FIFO without a reader: the open blocks until the bound. */
	ok(mkdtemp(fifo) != NULL, "a directory for a FIFO");
	strcat(fifo, "/f");
	ok(mkfifo(fifo, 0600) == 0, "a FIFO without a reader");
	t0 = zs_now();
	end = zs_call(open_fifo, fifo, 500, 2000, &result, err);
	ok(end == ZS_CALL_STOPPED, "a call past its bound is stopped (%d)", end);
	ok(zs_now() - t0 >= 0.5 && zs_now() - t0 < 1.5, "at the bound, 0.5 s (%.2f s)", zs_now() - t0);
	ok(no_children(), "the killed child is reaped: no zombie is left");
	ok(zs_call_reap_left() == 0, "and none is held for later");

	/* No time to die after the SIGKILL: left, and reaped later. */
	t0 = zs_now();
	end = zs_call(open_fifo, fifo, 200, 0, &result, err);
	ok(end == ZS_CALL_LEFT || end == ZS_CALL_STOPPED, "kill_ms 0: stopped, %s (%d)",
	   end == ZS_CALL_LEFT ? "left running" : "gone at once", end);
	ok(zs_now() - t0 < 1.0, "... within the bound (%.2f s)", zs_now() - t0);
	ok(wait_for_left(), "a child left running is reaped once it has ended");
	ok(no_children(), "... no zombie is left");

	/* A caller killed while it waits (the periodic helper at its step's
	 * end) takes its child with it. As a subreaper, this test gets the
	 * orphan and sees how it ends. */
	ok(prctl(PR_SET_CHILD_SUBREAPER, 1) == 0, "this test reaps orphans");
	pid_t caller = fork(), orphan;
	int status = 0;

	if (caller == 0) {
		zs_call(open_fifo, fifo, 60000, 1000, &result, NULL);
		_exit(0);
	}
	usleep(300000);
	ok(kill(caller, SIGKILL) == 0 && waitpid(caller, NULL, 0) == caller,
	   "a caller waiting for its child is killed");
	t0 = zs_now();
	do {
		orphan = waitpid(-1, &status, WNOHANG);
		if (orphan == 0)
			usleep(10000);
	} while (orphan == 0 && zs_now() - t0 < 2.0);
	ok(orphan > 0 && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
	   "its child is killed with it (%.2f s)", zs_now() - t0);
	if (orphan == 0) {
		/* Let the orphan's open end: it exits. */
		int rd = open(fifo, O_RDONLY | O_NONBLOCK);

		waitpid(-1, NULL, 0);
		close(rd);
	}
	prctl(PR_SET_CHILD_SUBREAPER, 0);
	ok(no_children(), "... no zombie is left");
	unlink(fifo);
	fifo[strlen(fifo) - 2] = '\0';
	rmdir(fifo);
}

int main(void)
{
	char out[4096], err[ZS_ERRLEN];
	sigset_t block;
	double t0;
	int rc;

	/* What slurmstepd does to its threads and children. */
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigprocmask(SIG_BLOCK, &block, NULL);
	signal(SIGHUP, SIG_IGN);
	ok(dup2(1, 57) == 57, "parent holds an extra descriptor 57");
	setenv("ZS_SECRET", "job-controlled", 1);

	char *status_argv[] = { "sh", "-c",
		"grep -E '^Sig(Blk|Ign)' /proc/self/status; ls /proc/$$/fd | tr '\\n' ' '; echo; echo env=${ZS_SECRET:-unset} path=$PATH",
		NULL };
	rc = zs_run("/bin/sh", status_argv, 5000, out, sizeof(out), err);
	ok(rc == 0, "zs_run runs a command");
	err_has(out, "SigBlk:\t0000000000000000", "child has no blocked signals");
	err_has(out, "SigIgn:\t0000000000000000", "child ignores no signals");
	ok(!strstr(out, " 57 ") && !strstr(out, "57\n"), "child does not inherit descriptor 57");
	err_has(out, "env=unset", "child environment is clean");
	err_has(out, "path=/usr/sbin:/usr/bin:/sbin:/bin", "child gets a fixed PATH");

	char *exit3[] = { "sh", "-c", "echo hi; exit 3", NULL };
	rc = zs_run("/bin/sh", exit3, 5000, out, sizeof(out), err);
	ok(rc == 3, "exit status returned");
	is_str(out, "hi\n", "output captured");

	char *slow[] = { "sleep", "5", NULL };
	t0 = zs_now();
	rc = zs_run("/bin/sleep", slow, 200, out, sizeof(out), err);
	ok(rc == -1 && zs_now() - t0 < 1.5, "a command over its time limit is stopped (%.2f s)", zs_now() - t0);
	err_has(err, "did not finish within 200 ms", "and says so");

	char *missing[] = { "nope", NULL };
	rc = zs_run("/nonexistent/nope", missing, 1000, out, sizeof(out), err);
	ok(rc == -1, "a missing program is an error");
	err_has(err, "cannot execute /nonexistent/nope: No such file or directory",
		"and says why, from the exec itself");

	struct zs_child c;

	ok(zs_spawn("/etc/passwd", missing, -1, &c, err) == -1, "spawning a file that is not executable fails at once");
	err_has(err, "Permission denied", "with the exec error");
	ok(waitpid(-1, NULL, WNOHANG) == -1, "the failed child was reaped");

	/* A child that ignores SIGTERM is killed after the bound. */
	char *stubborn[] = { "sh", "-c", "trap '' TERM; sleep 30", NULL };

	ok(zs_spawn("/bin/sh", stubborn, -1, &c, err) == 0 && c.pid > 0, "spawned a child that ignores SIGTERM");
	usleep(100000);
	t0 = zs_now();
	ok(zs_stop(&c, 200, 2000) == 0 && c.have_status && WIFSIGNALED(c.status) &&
	   WTERMSIG(c.status) == SIGKILL, "zs_stop reaps it with SIGKILL");
	ok(zs_now() - t0 < 1.0, "within the bound (%.2f s)", zs_now() - t0);

	char *polite[] = { "sleep", "30", NULL };
	zs_spawn("/bin/sleep", polite, -1, &c, err);
	t0 = zs_now();
	ok(zs_stop(&c, 1000, 1000) == 0 && c.have_status && WIFSIGNALED(c.status) &&
	   WTERMSIG(c.status) == SIGTERM, "a normal child ends on SIGTERM even though the parent blocks it");
	ok(zs_now() - t0 < 0.5, "quickly (%.2f s)", zs_now() - t0);
	ok(waitpid(-1, NULL, WNOHANG) == -1, "no child left unreaped");

	/* slurmstepd reaps any child with wait3(): a child that exits early
	 * is gone before we stop it, and its pid may be someone else's. */
	char *quick[] = { "true", NULL };

	ok(zs_spawn("/bin/true", quick, -1, &c, err) == 0, "spawned a child that exits at once");
	usleep(100000);
	ok(wait3(NULL, 0, NULL) == c.pid, "another waiter (as slurmstepd's wait3) reaps it");
	if (pidfd_usable())
		ok(c.pidfd >= 0, "the child is held by a pidfd");
	else
		skip("the build host's kernel has no pidfd_open() and waitid(P_PIDFD) (Linux 5.4+): children are held by their pid",
		     "the child is held by a pidfd");
	ok(zs_child_signal(&c, SIGTERM) == 1, "signalling it sends nothing: it is known to be gone");
	ok(zs_stop(&c, 100, 100) == 0 && c.ended && !c.have_status,
	   "stopping it ends at once, without a status and without ECHILD trouble");

	/* Kernels before 5.9 have no close_range: the fallback closes up to
	 * the larger of RLIMIT_NOFILE and the highest open descriptor, so a
	 * descriptor opened before the limit was lowered is closed too (and
	 * one above 65536 where the limit allows it; this machine's hard
	 * limit may not). */
	struct rlimit rl, low = { 64, 0 };
	int high;

	getrlimit(RLIMIT_NOFILE, &rl);
	high = rl.rlim_max > 200000 ? 150000 : (int)rl.rlim_max - 1;
	rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
	zs_child_set_close_range(false);
	ok(dup2(1, high) == high, "parent holds descriptor %d", high);
	low.rlim_max = rl.rlim_max;
	ok(setrlimit(RLIMIT_NOFILE, &low) == 0, "and lowers its soft limit to 64 afterwards");
	char *fds[] = { "sh", "-c", "ls /proc/$$/fd | tr '\\n' ' '", NULL };

	rc = zs_run("/bin/sh", fds, 5000, out, sizeof(out), err);
	snprintf(err, sizeof(err), " %d ", high);
	ok(rc == 0 && !strstr(out, err), "without close_range, descriptor %d is closed in the child (fds: %s)", high, out);
	close(high);
	setrlimit(RLIMIT_NOFILE, &rl);
	zs_child_set_close_range(true);

	call_in_child();
	return done_testing();
}
