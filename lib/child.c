// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"
#include "child.h"
#include "errbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
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

/* Only async-signal-safe calls between fork and exec: slurmstepd is
 * multi-threaded. */
static void close_from(int lowfd)
{
#ifdef SYS_close_range
	if (syscall(SYS_close_range, (unsigned)lowfd, ~0U, 0) == 0)
		return;
#endif
	for (int fd = lowfd; fd < 65536; fd++)
		close(fd);
}

/* The raw system call: glibc's sigaction refuses its two internal
 * real-time signals, and an ignored signal stays ignored across exec. */
static void reset_signal(int sig)
{
	struct {
		void *handler;
		unsigned long flags;
		void *restorer;
		unsigned long mask;
	} dfl = { SIG_DFL, 0, NULL, 0 };

	syscall(SYS_rt_sigaction, sig, &dfl, NULL, sizeof(dfl.mask));
}

static char *const clean_env[] = {
	"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C", NULL,
};

static pid_t spawn(const char *path, char *const argv[], char *const envp[], int out_fd,
		   char *err)
{
	int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	pid_t pid;

	if (devnull < 0)
		return zs_fail(err, "cannot open /dev/null: %s", strerror(errno));
	pid = fork();
	if (pid < 0) {
		int e = errno;

		close(devnull);
		return zs_fail(err, "fork failed: %s", strerror(e));
	}
	if (pid == 0) {
		sigset_t none;

		/* slurmstepd blocks SIGTERM and others; a helper that inherits
		 * the mask could never be stopped. */
		for (int s = 1; s < NSIG; s++)
			reset_signal(s);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		setsid();
		if (out_fd < 0)
			out_fd = devnull;
		if (dup2(devnull, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(out_fd, 2) < 0)
			_exit(127);
		/* The step's stdio descriptors held open by the helper would
		 * keep srun waiting for EOF. */
		close_from(3);
		execve(path, argv, envp);
		_exit(127);
	}
	close(devnull);
	return pid;
}

pid_t zs_spawn(const char *path, char *const argv[], int out_fd, char *err)
{
	return spawn(path, argv, clean_env, out_fd, err);
}

int zs_wait_for(pid_t pid, int timeout_ms, int *status)
{
	double deadline = zs_now() + timeout_ms / 1000.0;
	int st, delay_us = 1000;

	for (;;) {
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r == pid) {
			if (status)
				*status = st;
			return 0;
		}
		if (r < 0 && errno != EINTR)
			return -1;
		if (zs_now() >= deadline)
			return 1;
		usleep((useconds_t)delay_us);
		if (delay_us < 20000)
			delay_us *= 2;
	}
}

int zs_stop(pid_t pid, int term_ms, int kill_ms, int *status)
{
	int rc;

	if (kill(pid, SIGTERM) && errno == ESRCH)
		return zs_wait_for(pid, kill_ms, status) == 0 ? 0 : 1;
	rc = zs_wait_for(pid, term_ms, status);
	if (rc != 1)
		return rc < 0 ? 1 : 0;
	kill(pid, SIGKILL);
	return zs_wait_for(pid, kill_ms, status) == 0 ? 0 : 1;
}

static int run(const char *path, char *const argv[], char *const envp[], int timeout_ms,
	       char *out, unsigned outlen, char *err)
{
	int fds[2], status;
	size_t used = 0;
	pid_t pid;
	double deadline = zs_now() + timeout_ms / 1000.0;

	if (pipe2(fds, O_CLOEXEC))
		return zs_fail(err, "pipe failed: %s", strerror(errno));
	pid = spawn(path, argv, envp, fds[1], err);
	close(fds[1]);
	if (pid < 0) {
		close(fds[0]);
		return -1;
	}
	for (;;) {
		struct pollfd pfd = { .fd = fds[0], .events = POLLIN };
		int left = (int)((deadline - zs_now()) * 1000.0);
		char sink[256];
		ssize_t r;

		if (left <= 0)
			break;
		if (poll(&pfd, 1, left) <= 0)
			continue;
		if (out && used + 1 < outlen)
			r = read(fds[0], out + used, outlen - 1 - used);
		else
			r = read(fds[0], sink, sizeof(sink));
		if (r <= 0)
			break;
		if (out && used + 1 < outlen)
			used += (size_t)r;
	}
	close(fds[0]);
	if (out && outlen)
		out[used] = '\0';
	int left = (int)((deadline - zs_now()) * 1000.0);

	if (zs_wait_for(pid, left > 0 ? left : 0, &status) != 0) {
		zs_stop(pid, 100, 1000, NULL);
		return zs_fail(err, "%s did not finish within %d ms", path, timeout_ms);
	}
	if (WIFSIGNALED(status))
		return zs_fail(err, "%s was killed by signal %d", path, WTERMSIG(status));
	if (WEXITSTATUS(status) == 127)
		return zs_fail(err, "%s could not be started", path);
	return WEXITSTATUS(status);
}

int zs_run(const char *path, char *const argv[], int timeout_ms, char *out, unsigned outlen,
	   char *err)
{
	return run(path, argv, clean_env, timeout_ms, out, outlen, err);
}

int zs_run_inherit(const char *prog, char *const argv[], int timeout_ms, char *out,
		   unsigned outlen, char *err)
{
	extern char **environ;
	const char *path = getenv("PATH");
	char found[PATH_MAX];

	if (strchr(prog, '/'))
		return run(prog, argv, environ, timeout_ms, out, outlen, err);
	for (const char *dir = path ? path : "/usr/bin:/bin"; *dir;) {
		size_t len = strcspn(dir, ":");

		snprintf(found, sizeof(found), "%.*s/%s", (int)len, len ? dir : ".", prog);
		if (!access(found, X_OK))
			return run(found, argv, environ, timeout_ms, out, outlen, err);
		dir += len + (dir[len] == ':');
	}
	return zs_fail(err, "%s not found in PATH", prog);
}
