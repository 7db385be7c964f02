// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"
#include "child.h"
#include "errbuf.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

double zs_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static bool close_range_allowed = true;

void zs_child_set_close_range(bool allowed)
{
	close_range_allowed = allowed;
}

/* The highest descriptor a child might have inherited, found before fork:
 * between fork and exec only async-signal-safe calls are allowed (the
 * parent, slurmstepd, is multi-threaded), so no opendir of /proc/self/fd
 * there. Every descriptor open now is listed in /proc/self/fd; any opened
 * by another thread after this look is below RLIMIT_NOFILE, which the
 * kernel enforces on every new descriptor. The larger of the two bounds
 * the child's close loop. */
static int highest_fd(void)
{
	struct rlimit rl;
	long high = 1023;
	DIR *d = opendir("/proc/self/fd");

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur != RLIM_INFINITY)
		high = rl.rlim_cur > (rlim_t)INT_MAX ? INT_MAX : (long)rl.rlim_cur - 1;
	else {
		/* Unlimited: the kernel's own ceiling is fs.nr_open. */
		FILE *f = fopen("/proc/sys/fs/nr_open", "re");
		long nr = 0;

		if (f && fscanf(f, "%ld", &nr) == 1 && nr > 0)
			high = nr - 1;
		if (f)
			fclose(f);
	}
	if (d) {
		struct dirent *e;

		while ((e = readdir(d))) {
			long fd = strtol(e->d_name, NULL, 10);

			if (fd > high)
				high = fd;
		}
		closedir(d);
	}
	return (int)high;
}

/* Closes every descriptor from lowfd up: close_range (5.9+) in one call,
 * else one close per descriptor up to the bound found before fork. */
static void close_from(int lowfd, int high)
{
#ifdef SYS_close_range
	if (close_range_allowed && syscall(SYS_close_range, (unsigned)lowfd, ~0U, 0) == 0)
		return;
#endif
	for (int fd = lowfd; fd <= high; fd++)
		close(fd);
}

/* The raw system call: glibc's sigaction refuses its two internal
 * real-time signals, and an ignored signal stays ignored across exec.
 * handler is SIG_DFL or SIG_IGN, which need no restorer. */
static void set_signal(int sig, void (*handler)(int))
{
	struct {
		void (*handler)(int);
		unsigned long flags;
		void *restorer;
		unsigned long mask;
	} act = { handler, 0, NULL, 0 };

	syscall(SYS_rt_sigaction, sig, &act, NULL, sizeof(act.mask));
}

static void reset_signal(int sig)
{
	set_signal(sig, SIG_DFL);
}

static char *const clean_env[] = {
	"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C", NULL,
};

int zs_pidfd_open(pid_t pid)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, pid, 0);
#else
	(void)pid;
	errno = ENOSYS;
	return -1;
#endif
}

/* A descriptor at 3 or above, close-on-exec: the child's 0-2 are taken. */
static int above_stdio(int fd)
{
	int moved;

	if (fd >= 3)
		return fd;
	moved = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	close(fd);
	return moved;
}

static void close_pair(int p[2])
{
	if (p[0] >= 0)
		close(p[0]);
	if (p[1] >= 0)
		close(p[1]);
	p[0] = p[1] = -1;
}

/* The child between fork and exec: async-signal-safe calls only. It waits
 * for the parent's go before anything else, so it cannot exit (and be
 * reaped by slurmstepd's wait3) before the parent holds its pidfd; an exec
 * failure is sent back through the close-on-exec report pipe. */
static void child_main(const char *path, char *const argv[], char *const envp[], int out_fd,
		       int devnull, int go, int report, int high)
{
	sigset_t none;
	char byte;
	int e;

	/* slurmstepd blocks SIGTERM and others; a helper that inherits the
	 * mask could never be stopped. */
	for (int s = 1; s < NSIG; s++)
		reset_signal(s);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (read(go, &byte, 1) != 1)
		_exit(127);
	setsid();
	if (out_fd < 0)
		out_fd = devnull;
	if (dup2(devnull, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(out_fd, 2) < 0 ||
	    (report != 3 && dup3(report, 3, O_CLOEXEC) < 0))
		_exit(127);
	/* The step's stdio descriptors held open by the helper would keep
	 * srun waiting for EOF; 3 is the report pipe, closed by exec. */
	close_from(4, high);
	execve(path, argv, envp);
	e = errno;
	if (write(3, &e, sizeof(e)) < 0)
		_exit(127);
	_exit(127);
}

/* The descriptors a child is started with. The child waits on go[0] for
 * the parent's go and reports on report[1] (closed by exec or exit: EOF
 * means done); 0-2 become devnull; high bounds the descriptors it closes. */
struct start {
	int go[2];
	int report[2];
	int devnull;
	int high;
};

static void start_close(struct start *s)
{
	close_pair(s->go);
	close_pair(s->report);
	if (s->devnull >= 0)
		close(s->devnull);
	s->devnull = -1;
}

/* Forks a child that will wait for the go. Returns 0 in the child, which
 * runs its own main with s's descriptors and never returns; in the parent
 * the child's pid, with go[1] and report[0] left open and the rest closed;
 * -1 with err set and everything closed when it could not. */
static pid_t start_child(struct start *s, char *err)
{
	pid_t pid;

	s->go[0] = s->go[1] = s->report[0] = s->report[1] = -1;
	s->devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (s->devnull < 0) {
		zs_fail(err, "cannot open /dev/null: %s", strerror(errno));
		return -1;
	}
	if (pipe2(s->go, O_CLOEXEC) || pipe2(s->report, O_CLOEXEC)) {
		zs_fail(err, "pipe failed: %s", strerror(errno));
		goto fail;
	}
	s->go[0] = above_stdio(s->go[0]);
	s->report[1] = above_stdio(s->report[1]);
	if (s->go[0] < 0 || s->report[1] < 0) {
		zs_fail(err, "cannot move a pipe: %s", strerror(errno));
		goto fail;
	}
	s->high = highest_fd();
	pid = fork();
	if (pid < 0) {
		zs_fail(err, "fork failed: %s", strerror(errno));
		goto fail;
	}
	if (pid == 0)
		return 0;
	close(s->go[0]);
	close(s->report[1]);
	close(s->devnull);
	s->go[0] = s->report[1] = s->devnull = -1;
	return pid;
fail:
	start_close(s);
	return -1;
}

static int spawn(const char *path, char *const argv[], char *const envp[], int out_fd,
		 struct zs_child *c, char *err)
{
	struct start s;
	int e = 0;
	ssize_t got;
	pid_t pid;

	memset(c, 0, sizeof(*c));
	c->pid = -1;
	c->pidfd = -1;
	pid = start_child(&s, err);
	if (pid < 0)
		return -1;
	if (pid == 0)
		child_main(path, argv, envp, out_fd, s.devnull, s.go[0], s.report[1], s.high);
	c->pid = pid;
	/* Our unreaped child, still waiting for the go: the pid is its. */
	c->pidfd = zs_pidfd_open(pid);
	if (write(s.go[1], "g", 1) != 1) {
		zs_fail(err, "cannot start %s: %s", path, strerror(errno));
		zs_stop(c, 0, 1000);
		goto fail;
	}
	close(s.go[1]);
	s.go[1] = -1;
	/* EOF: exec succeeded and closed the pipe. Bounded: the child does
	 * nothing that blocks between the go and exec. */
	struct pollfd p = { .fd = s.report[0], .events = POLLIN };

	if (poll(&p, 1, 5000) <= 0) {
		zs_fail(err, "%s did not start within 5 s", path);
		zs_stop(c, 0, 1000);
		goto fail;
	}
	got = read(s.report[0], &e, sizeof(e));
	if (got > 0) {
		zs_fail(err, "cannot execute %s: %s", path, strerror(e));
		zs_child_wait(c, 1000);
		zs_child_release(c);
		goto fail;
	}
	start_close(&s);
	return 0;
fail:
	start_close(&s);
	c->pid = -1;
	return -1;
}

int zs_spawn(const char *path, char *const argv[], int out_fd, struct zs_child *c, char *err)
{
	return spawn(path, argv, clean_env, out_fd, c, err);
}

void zs_child_release(struct zs_child *c)
{
	if (c->pidfd >= 0)
		close(c->pidfd);
	c->pidfd = -1;
}

/* Reaps the child if it has exited; 0 when it is gone (c->ended set), 1
 * when it still runs, -1 on error. Never waits on a bare pid that may have
 * been reaped elsewhere: with a pidfd, waitid(P_PIDFD); without one, the
 * pid is only used while waitid(WNOWAIT) shows it is still our child. */
static int reap(struct zs_child *c)
{
	siginfo_t si;

	if (c->ended)
		return 0;
	memset(&si, 0, sizeof(si));
	if (c->pidfd >= 0) {
		struct pollfd p = { .fd = c->pidfd, .events = POLLIN };

		if (poll(&p, 1, 0) == 0)
			return 1;
		/* Exited. slurmstepd reaps any child with wait3(), so ours may
		 * be gone already: ECHILD. */
		if (waitid((idtype_t)P_PIDFD, (id_t)c->pidfd, &si, WEXITED) == 0) {
			c->status = si.si_code == CLD_EXITED ? W_EXITCODE(si.si_status, 0)
							      : si.si_status;
			c->have_status = true;
		} else if (errno != ECHILD && errno != EINVAL) {
			return -1;
		}
		c->ended = true;
		return 0;
	}
	if (waitid(P_PID, (id_t)c->pid, &si, WEXITED | WNOHANG) == 0) {
		if (si.si_pid == 0)
			return 1;
		c->status = si.si_code == CLD_EXITED ? W_EXITCODE(si.si_status, 0) : si.si_status;
		c->have_status = true;
		c->ended = true;
		return 0;
	}
	if (errno == ECHILD) {
		c->ended = true;
		return 0;
	}
	return errno == EINTR ? 1 : -1;
}

int zs_child_signal(struct zs_child *c, int sig)
{
	if (reap(c) == 0)
		return 1;
#ifdef SYS_pidfd_send_signal
	if (c->pidfd >= 0) {
		if (syscall(SYS_pidfd_send_signal, c->pidfd, sig, NULL, 0) == 0)
			return 0;
		return errno == ESRCH ? 1 : -1;
	}
#endif
	/* Without pidfd (Linux before 5.3): reap() just saw, with WNOHANG and
	 * no reaping, that the pid is still our child; a narrow window
	 * remains in which another thread's wait3 could reap it first. */
	return kill(c->pid, sig) ? -1 : 0;
}

int zs_child_wait(struct zs_child *c, int timeout_ms)
{
	double deadline = zs_now() + timeout_ms / 1000.0;

	for (;;) {
		int r = reap(c);

		if (r <= 0)
			return r;
		double left = deadline - zs_now();

		if (left <= 0)
			return 1;
		if (c->pidfd >= 0) {
			struct pollfd p = { .fd = c->pidfd, .events = POLLIN };

			poll(&p, 1, (int)(left * 1000.0) + 1);
		} else {
			usleep(left > 0.01 ? 10000 : (useconds_t)(left * 1e6));
		}
	}
}

int zs_stop(struct zs_child *c, int term_ms, int kill_ms)
{
	int rc;

	if (c->pid <= 0)
		return 0;
	if (zs_child_signal(c, SIGTERM) != 1) {
		rc = zs_child_wait(c, term_ms);
		if (rc == 1) {
			zs_child_signal(c, SIGKILL);
			rc = zs_child_wait(c, kill_ms);
		}
	} else {
		rc = zs_child_wait(c, kill_ms);
	}
	if (rc == 0)
		zs_child_release(c);
	return rc == 0 ? 0 : 1;
}

/* --- a function in a forked child (zs_call) ---------------------------- */

/* Children zs_call killed that had not ended kill_ms later, held by their
 * pidfds until they do. A pidfd names its process for good, so holding one
 * can never reach another process; without pidfds (Linux before 5.3) a
 * bare pid could, once slurmstepd's wait3 has reaped ours, and such a
 * child is left to the other reapers at once. Bounded: the oldest is let
 * go when another comes. */
#define MAX_LEFT 8
static struct zs_child left_children[MAX_LEFT];
static unsigned nleft;

unsigned zs_call_reap_left(void)
{
	unsigned kept = 0;

	for (unsigned i = 0; i < nleft; i++) {
		if (reap(&left_children[i]) == 0) {
			zs_child_release(&left_children[i]);
			continue;
		}
		left_children[kept++] = left_children[i];
	}
	nleft = kept;
	return nleft;
}

static void hold_left(struct zs_child *c)
{
	if (c->pidfd < 0)
		return;
	if (zs_call_reap_left() == MAX_LEFT) {
		zs_child_release(&left_children[0]);
		memmove(left_children, left_children + 1, (MAX_LEFT - 1) * sizeof(left_children[0]));
		nleft--;
	}
	left_children[nleft++] = *c;
	c->pidfd = -1;
}

/* The child of zs_call: async-signal-safe calls only, as in child_main. It
 * waits for the parent's go, so it cannot end (and be reaped by
 * slurmstepd's wait3) before the parent holds its pidfd. Every descriptor
 * but 0-2 (/dev/null) and 3 (the result pipe) is closed first: one left
 * running in the kernel must not hold the step's stdio open (srun would
 * wait for EOF) nor anything else of the parent's. */
static void call_main(int (*fn)(void *), void *arg, int devnull, int go, int report, int high)
{
	sigset_t none;
	char byte;
	int r;

	for (int s = 1; s < NSIG; s++)
		reset_signal(s);
	set_signal(SIGPIPE, SIG_IGN);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	/* The child outlives no caller: one killed while it waits (the
	 * periodic helper, SIGKILLed at its step's end) takes its writer
	 * with it, whose sort or compaction would otherwise go on with no
	 * bound. A caller that died before this shows as EOF at the go. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (read(go, &byte, 1) != 1)
		_exit(127);
	setsid();
	if (dup2(devnull, 0) < 0 || dup2(devnull, 1) < 0 || dup2(devnull, 2) < 0 ||
	    (report != 3 && dup2(report, 3) < 0))
		_exit(127);
	close_from(4, high);
	r = fn(arg);
	if (write(3, &r, sizeof(r)) != (ssize_t)sizeof(r))
		_exit(127);
	_exit(0);
}

/* Waits until deadline for the child's result: 1 and *result, 0 when the
 * pipe closed without one (the child ended), -1 when none came in time. */
static int read_result(int fd, double deadline, int *result)
{
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		double left = deadline - zs_now();
		int r = poll(&p, 1, left > 0 ? (int)(left * 1000.0) + 1 : 0);
		ssize_t n;

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		n = read(fd, result, sizeof(*result));
		if (n < 0 && errno == EINTR)
			continue;
		/* A pipe write of an int is atomic: all of it or nothing. */
		return n == (ssize_t)sizeof(*result) ? 1 : 0;
	}
}

int zs_call(int (*fn)(void *arg), void *arg, int timeout_ms, int kill_ms, int *result,
	    char *err)
{
	struct start s;
	struct zs_child c;
	int got, end;
	pid_t pid;

	memset(&c, 0, sizeof(c));
	c.pid = -1;
	c.pidfd = -1;
	zs_call_reap_left();
	pid = start_child(&s, err);
	if (pid < 0)
		return ZS_CALL_FAILED;
	if (pid == 0)
		call_main(fn, arg, s.devnull, s.go[0], s.report[1], s.high);
	c.pid = pid;
	/* Our unreaped child, still waiting for the go: the pid is its. */
	c.pidfd = zs_pidfd_open(pid);
	if (write(s.go[1], "g", 1) != 1) {
		zs_fail(err, "cannot start the child: %s", strerror(errno));
		zs_child_signal(&c, SIGKILL);
		if (zs_child_wait(&c, kill_ms) != 0)
			hold_left(&c);
		zs_child_release(&c);
		goto fail;
	}
	close(s.go[1]);
	s.go[1] = -1;
	got = read_result(s.report[0], zs_now() + timeout_ms / 1000.0, result);
	if (got < 0) {
		zs_child_signal(&c, SIGKILL);
		end = zs_child_wait(&c, kill_ms) == 0 ? ZS_CALL_STOPPED : ZS_CALL_LEFT;
		/* It may have returned just as the time ran out. */
		if (read_result(s.report[0], 0, result) == 1)
			got = 1;
	} else {
		/* Its result sent, it only has to exit. */
		end = zs_child_wait(&c, kill_ms) == 0 ? ZS_CALL_DONE : ZS_CALL_LEFT;
	}
	start_close(&s);
	if (end == ZS_CALL_LEFT)
		hold_left(&c);
	zs_child_release(&c);
	if (got == 1)
		return ZS_CALL_DONE;
	if (got == 0) {
		if (c.have_status && WIFSIGNALED(c.status))
			return zs_fail(err, "the child ended by signal %d without a result",
				       WTERMSIG(c.status));
		return zs_fail(err, "the child ended without a result");
	}
	return end;
fail:
	start_close(&s);
	return ZS_CALL_FAILED;
}

/* Appends what the child wrote to out (up to out->max bytes; the rest is
 * read and dropped, and out->cut says so). */
static void take_output(struct zs_output *out, const char *data, size_t n)
{
	size_t room = out->max - out->len;

	if (n > room) {
		out->cut = true;
		n = room;
	}
	if (!n)
		return;
	if (out->len + n + 1 > out->cap) {
		size_t cap = out->cap ? out->cap : 4096;

		while (cap < out->len + n + 1)
			cap *= 2;
		char *grown = realloc(out->buf, cap);

		if (!grown) {
			out->cut = true;
			return;
		}
		out->buf = grown;
		out->cap = cap;
	}
	memcpy(out->buf + out->len, data, n);
	out->len += n;
	out->buf[out->len] = '\0';
}

static int run(const char *path, char *const argv[], char *const envp[], int timeout_ms,
	       struct zs_output *out, char *err)
{
	int fds[2], status;
	struct zs_child c;
	double deadline = zs_now() + timeout_ms / 1000.0;

	if (pipe2(fds, O_CLOEXEC))
		return zs_fail(err, "pipe failed: %s", strerror(errno));
	if (spawn(path, argv, envp, fds[1], &c, err)) {
		close(fds[1]);
		close(fds[0]);
		return -1;
	}
	close(fds[1]);
	for (;;) {
		struct pollfd pfd = { .fd = fds[0], .events = POLLIN };
		int left = (int)((deadline - zs_now()) * 1000.0);
		char chunk[65536];
		ssize_t r;

		if (left <= 0)
			break;
		if (poll(&pfd, 1, left) <= 0)
			continue;
		r = read(fds[0], chunk, sizeof(chunk));
		if (r <= 0)
			break;
		if (out)
			take_output(out, chunk, (size_t)r);
	}
	close(fds[0]);
	int left = (int)((deadline - zs_now()) * 1000.0);

	if (zs_child_wait(&c, left > 0 ? left : 0) != 0) {
		zs_stop(&c, 100, 1000);
		return zs_fail(err, "%s did not finish within %d ms", path, timeout_ms);
	}
	zs_child_release(&c);
	if (!c.have_status)
		return zs_fail(err, "%s: its exit status was taken by another waiter", path);
	status = c.status;
	if (WIFSIGNALED(status))
		return zs_fail(err, "%s was killed by signal %d", path, WTERMSIG(status));
	if (WEXITSTATUS(status) == 127)
		return zs_fail(err, "%s could not be started", path);
	return WEXITSTATUS(status);
}

int zs_run(const char *path, char *const argv[], int timeout_ms, char *out, unsigned outlen,
	   char *err)
{
	struct zs_output o = { .max = outlen ? outlen - 1 : 0 };
	int rc = run(path, argv, clean_env, timeout_ms, out ? &o : NULL, err);

	if (out && outlen)
		snprintf(out, outlen, "%s", o.buf ? o.buf : "");
	free(o.buf);
	return rc;
}

int zs_run_inherit(const char *prog, char *const argv[], int timeout_ms, struct zs_output *out,
		   char *err)
{
	extern char **environ;
	const char *path = getenv("PATH");
	char found[PATH_MAX];

	if (strchr(prog, '/'))
		return run(prog, argv, environ, timeout_ms, out, err);
	for (const char *dir = path ? path : "/usr/bin:/bin"; *dir;) {
		size_t len = strcspn(dir, ":");

		snprintf(found, sizeof(found), "%.*s/%s", (int)len, len ? dir : ".", prog);
		if (!access(found, X_OK))
			return run(found, argv, environ, timeout_ms, out, err);
		dir += len + (dir[len] == ':');
	}
	return zs_fail(err, "%s not found in PATH", prog);
}
