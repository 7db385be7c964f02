// SPDX-License-Identifier: GPL-2.0-or-later
/* Children started from a process that blocks signals and holds descriptors,
 * as slurmstepd does, must start clean and always end within their bound. */
#include "config.h"
#include "child.h"
#include "errbuf.h"
#include "tap.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

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
	err_has(err, "could not be started", "and says so");

	/* A child that ignores SIGTERM is killed after the bound. */
	char *stubborn[] = { "sh", "-c", "trap '' TERM; sleep 30", NULL };
	pid_t pid = zs_spawn("/bin/sh", stubborn, -1, err);
	int st;

	ok(pid > 0, "spawned a child that ignores SIGTERM");
	usleep(100000);
	t0 = zs_now();
	ok(zs_stop(pid, 200, 2000, &st) == 0 && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
	   "zs_stop reaps it with SIGKILL");
	ok(zs_now() - t0 < 1.0, "within the bound (%.2f s)", zs_now() - t0);

	char *polite[] = { "sleep", "30", NULL };
	pid = zs_spawn("/bin/sleep", polite, -1, err);
	t0 = zs_now();
	ok(zs_stop(pid, 1000, 1000, &st) == 0 && WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM,
	   "a normal child ends on SIGTERM even though the parent blocks it");
	ok(zs_now() - t0 < 0.5, "quickly (%.2f s)", zs_now() - t0);
	ok(waitpid(-1, NULL, WNOHANG) == -1, "no child left unreaped");
	return done_testing();
}
