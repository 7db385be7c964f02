// SPDX-License-Identifier: GPL-2.0-or-later
/* The sorter backends against directories standing in for sysfs: a FIFO
 * records what the kernel interface would receive. The real interfaces are
 * exercised by the cluster tests (compaction) and the QEMU tests (module). */
#include "config.h"
#include "errbuf.h"
#include "sorter.h"
#include "tap.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[] = "/tmp/zs-unit-XXXXXX";

static void policy_for(struct zs_policy *p, const char *sorter)
{
	char w[PATH_MAX + 32];

	zs_policy_defaults(p);
	snprintf(w, sizeof(w), "sysfs=%s/kernel", root);
	zs_policy_set(p, w, NULL);
	snprintf(w, sizeof(w), "node_sysfs=%s/node", root);
	zs_policy_set(p, w, NULL);
	snprintf(w, sizeof(w), "statedir=%s/state", root);
	zs_policy_set(p, w, NULL);
	snprintf(w, sizeof(w), "sorter=%s", sorter);
	zs_policy_set(p, w, NULL);
	zs_policy_set(p, "nodes=0", NULL);
}

static struct zs_node_result last;

static void remember(void *ctx, const struct zs_node_result *r)
{
	(void)ctx;
	last = *r;
}

static struct zs_sorter *open_sorter(const char *kind)
{
	struct zs_policy p;
	struct zs_sorter *s = NULL;
	char err[ZS_ERRLEN];

	policy_for(&p, kind);
	if (zs_sorter_open(&p, &s, err))
		printf("# open failed: %s\n", err);
	return s;
}

static void path(char *buf, size_t len, const char *rel)
{
	snprintf(buf, len, "%s/%s", root, rel);
}

static void kernel_backend(void)
{
	char fifo[PATH_MAX], got[64] = "", state[PATH_MAX];
	struct zs_tally t = { 0 };
	struct zs_sorter *s;
	int rd;

	path(fifo, sizeof(fifo), "kernel/nodeid");
	mkfifo(fifo, 0600);
	rd = open(fifo, O_RDONLY | O_NONBLOCK);
	s = open_sorter("auto");
	ok(s && zs_sorter_backend(s) == ZS_SORTER_KERNEL, "auto picks the kernel interface when nodeid exists");
	ok(zs_sorter_sort(s, 0, &t, remember, NULL) == 0, "sort succeeds");
	ok(read(rd, got, sizeof(got) - 1) == 2 && !strncmp(got, "0\n", 2), "wrote the node id and a newline");
	ok(t.sorted == 1 && t.rounds == 1 && last.outcome == ZS_SORTED && last.node == 0, "tally: one sort");

	zs_sorter_sort(s, 3600, &t, remember, NULL);
	ok(t.sorted == 1 && t.recent == 1 && last.outcome == ZS_RECENT, "a node sorted within min_interval is skipped");
	err_has(last.msg, "ago", "the skip says when it was sorted");

	/* Another writer holds the lock: skip, never wait. */
	path(state, sizeof(state), "state/lock");
	int lk = open(state, O_RDWR);

	ok(lk >= 0 && flock(lk, LOCK_EX | LOCK_NB) == 0, "test holds the lock");
	zs_sorter_sort(s, 0, &t, remember, NULL);
	ok(t.busy == 1 && last.outcome == ZS_BUSY, "held lock: counted busy, not blocked");
	close(lk);
	zs_sorter_sort(s, 0, &t, remember, NULL);
	ok(t.sorted == 2, "sorts again once the lock is free");
	close(rd);

	/* No reader on the FIFO: O_NONBLOCK turns a hang into an error. */
	ok(zs_sorter_sort(s, 0, &t, remember, NULL) == -1 && last.outcome == ZS_FAILED,
	   "an interface that cannot be opened fails the node, without blocking");
	err_has(last.msg, "nodeid", "the failure names the file");
	zs_sorter_close(s);

	/* A write error (here ENOSPC from /dev/full) is reported with errno. */
	unlink(fifo);
	ok(symlink("/dev/full", fifo) == 0, "nodeid -> /dev/full");
	s = open_sorter("kernel");
	ok(zs_sorter_sort(s, 0, &t, remember, NULL) == -1 && last.outcome == ZS_FAILED, "write error fails the node");
	err_has(last.msg, "No space left", "errno text is in the message");
	zs_sorter_close(s);
	unlink(fifo);
}

static void compaction_backend(void)
{
	char f[PATH_MAX], got[16] = "";
	struct zs_tally t = { 0 };
	struct zs_sorter *s;
	FILE *fp;

	s = open_sorter("kernel");
	ok(s && zs_sorter_backend(s) == ZS_SORTER_NONE, "sorter=kernel without nodeid: none");
	err_has(zs_sorter_why(s), "kernel/nodeid", "why names the missing interface");
	zs_sorter_sort(s, 0, &t, remember, NULL);
	ok(last.outcome == ZS_NOSORTER && t.sorted == 0 && t.failed == 0, "no sorter: nothing sorted, nothing failed");
	zs_sorter_close(s);

	path(f, sizeof(f), "node/node0");
	mkdir(f, 0755);
	path(f, sizeof(f), "node/node0/compact");
	fp = fopen(f, "w");
	fclose(fp);
	s = open_sorter("auto");
	ok(s && zs_sorter_backend(s) == ZS_SORTER_COMPACT, "auto falls back to compaction");
	err_has(zs_sorter_why(s), "no kernel zonesort interface", "and says why");
	ok(zs_sorter_sort(s, 0, &t, remember, NULL) == 0 && t.sorted == 1, "compaction sorts");
	fp = fopen(f, "r");
	ok(fp && fgets(got, sizeof(got), fp) && !strcmp(got, "1\n"), "wrote 1 to nodeN/compact");
	if (fp)
		fclose(fp);
	zs_sorter_close(s);

	s = open_sorter("none");
	ok(s && zs_sorter_backend(s) == ZS_SORTER_NONE, "sorter=none");
	zs_sorter_close(s);
}

static void tally_lines(void)
{
	struct zs_tally t = { 3, 2, 1, 0, 0, 0.25 }, u;
	char buf[200];

	zs_tally_format(&t, buf, sizeof(buf));
	is_str(buf, "rounds=3 sorted=2 recent=1 busy=0 failed=0 seconds=0.250000", "format");
	ok(!zs_tally_parse(buf, &u) && u.rounds == 3 && u.sorted == 2 && u.recent == 1 && u.seconds == 0.25,
	   "parse round-trips");
	ok(zs_tally_parse("error: x", &u), "other lines are not tallies");
	ok(zs_tally_parse("rounds=3 sorted=2 recent=1 busy=0 failed=0 seconds=0.25 extra", &u), "trailing text refused");
	zs_tally_describe(&t, buf, sizeof(buf));
	err_has(buf, "2 sorts", "describe");
	zs_tally_add(&u, &t);
	ok(u.rounds == 6 && u.sorted == 4 && u.recent == 2 && u.seconds == 0.5, "add");
}

int main(void)
{
	char d[PATH_MAX];

	if (!mkdtemp(root))
		return 1;
	path(d, sizeof(d), "kernel");
	mkdir(d, 0755);
	path(d, sizeof(d), "node");
	mkdir(d, 0755);
	kernel_backend();
	compaction_backend();
	tally_lines();
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	if (system(cmd))
		printf("# cleanup failed\n");
	return done_testing();
}
