// SPDX-License-Identifier: GPL-2.0-or-later
/* Writes to the kernel's files end within their bound, whatever the file
 * does: a normal file is written, a failing write reports its errno, and a
 * FIFO without a reader (whose open blocks, as a sort or compaction that
 * does not end would) is stopped at the bound and its writer reaped. */
#include "config.h"
#include "errbuf.h"
#include "kwrite.h"
#include "tap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Every Linux with sysfs has node 0, NUMA or not. */
#define RO_ATTR "/sys/devices/system/node/node0/meminfo"

static char root[] = "/tmp/zs-kwrite-XXXXXX";

static const char *at(const char *rel)
{
	static char buf[256];

	snprintf(buf, sizeof(buf), "%s/%s", root, rel);
	return buf;
}

/* No child of ours is left, running or a zombie. */
static bool no_children(void)
{
	return waitpid(-1, NULL, WNOHANG) == -1 && errno == ECHILD;
}

int main(void)
{
	char got[64] = "", how[ZS_ERRLEN];
	struct zs_kwrite w;
	double t0;
	int fd, rd;

	if (!mkdtemp(root))
		return 1;

	/* An ordinary file stands for an attribute that takes the write. */
	fd = open(at("attr"), O_CREAT | O_WRONLY | O_TRUNC, 0600);
	close(fd);
	ok(zs_kwrite(at("attr"), "1\n", 5, &w) == 0 && w.end == ZS_CALL_DONE && w.err_no == 0,
	   "a write to a normal file succeeds");
	fd = open(at("attr"), O_RDONLY);
	ok(fd >= 0 && read(fd, got, sizeof(got) - 1) == 2 && !strcmp(got, "1\n"), "... and wrote the text ('%.*s')",
	   (int)strcspn(got, "\n"), got);
	close(fd);
	ok(no_children(), "... its writer reaped");

	/* Failing writes end with their errno. */
	ok(zs_kwrite(at("missing/attr"), "1\n", 5, &w) == -1 && w.end == ZS_CALL_DONE && w.err_no == ENOENT,
	   "a missing file: ENOENT (%d)", w.err_no);
	is_str(zs_kwrite_describe(&w, how, sizeof(how)), strerror(ENOENT), "... said as its errno's text");
	ok(!zs_kwrite_timed_out(&w), "... not a time-out");
	/* A read-only sysfs attribute refuses even root. */
	ok(zs_kwrite(RO_ATTR, "1\n", 5, &w) == -1 && w.end == ZS_CALL_DONE && w.err_no == EACCES,
	   "a read-only attribute (%s): EACCES (%d)", RO_ATTR, w.err_no);
	ok(zs_kwrite("/dev/full", "1\n", 5, &w) == -1 && w.err_no == ENOSPC, "a write error: ENOSPC (%d)",
	   w.err_no);
	ok(zs_kwrite(root, "1\n", 5, &w) == -1 && w.err_no == EISDIR, "a directory: EISDIR (%d)", w.err_no);
	ok(no_children(), "... every writer reaped");

	/* A FIFO with a reader takes the write. */
	ok(mkfifo(at("fifo"), 0600) == 0, "a FIFO");
	rd = open(at("fifo"), O_RDONLY | O_NONBLOCK);
	memset(got, 0, sizeof(got));
	ok(zs_kwrite(at("fifo"), "0\n", 5, &w) == 0 && read(rd, got, sizeof(got) - 1) == 2 && !strcmp(got, "0\n"),
	   "a FIFO with a reader receives the write ('%.*s')", (int)strcspn(got, "\n"), got);
	close(rd);

	/* Without a reader its open blocks: stopped at the bound. */
	t0 = zs_now();
	ok(zs_kwrite(at("fifo"), "0\n", 1, &w) == -1 && w.end == ZS_CALL_STOPPED && zs_kwrite_timed_out(&w),
	   "a FIFO without a reader: the write is stopped (%d)", w.end);
	ok(zs_now() - t0 >= 1.0 && zs_now() - t0 < 2.5, "... after the bound of 1 s (%.2f s)", zs_now() - t0);
	is_str(zs_kwrite_describe(&w, how, sizeof(how)), "did not end within 1 s (kernel_timeout): stopped",
	       "... and says so");
	ok(no_children(), "... its writer killed and reaped: no zombie is left");
	ok(zs_call_reap_left() == 0, "... none held for later");
	/* A writer still waiting would meet this reader and write. */
	rd = open(at("fifo"), O_RDONLY | O_NONBLOCK);
	usleep(100000);
	ok(read(rd, got, sizeof(got)) <= 0, "... and no writer is still waiting on the FIFO");

	/* A write that blocks: the FIFO is full and its reader never reads. */
	int wr = open(at("fifo"), O_WRONLY | O_NONBLOCK);
	char block[4096];

	memset(block, 'x', sizeof(block));
	while (write(wr, block, sizeof(block)) > 0)
		;
	t0 = zs_now();
	ok(zs_kwrite(at("fifo"), "0\n", 1, &w) == -1 && w.end == ZS_CALL_STOPPED,
	   "a write that blocks is stopped at the bound too (%.2f s)", zs_now() - t0);
	ok(no_children(), "... its writer reaped");
	close(wr);
	close(rd);

	/* What a writer that would not die is told as. */
	w = (struct zs_kwrite){ .end = ZS_CALL_LEFT, .timeout_s = 60 };
	is_str(zs_kwrite_describe(&w, how, sizeof(how)),
	       "did not end within 60 s (kernel_timeout): killed, but still in the kernel 5 s later: left running, reaped when it ends",
	       "a writer still in the kernel after its SIGKILL is said to be left running");
	ok(zs_kwrite_timed_out(&w), "... a time-out too");

	unlink(at("fifo"));
	unlink(at("attr"));
	rmdir(root);
	return done_testing();
}
