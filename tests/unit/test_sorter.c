// SPDX-License-Identifier: GPL-2.0-or-later
/* The sorter backends against directories standing in for sysfs: a FIFO
 * records what the kernel interface would receive. The real interfaces are
 * exercised by the cluster tests (compaction) and the QEMU tests (module).
 * This machine has no memory-side cache: the policy configures one
 * (cache_size=), or a per-boot copy of the cache layout written by the
 * test stands for what hwloc would find. */
#include "config.h"
#include "child.h"
#include "errbuf.h"
#include "occupied.h"
#include "policy.h"
#include "sorter.h"
#include "tap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/mman.h>
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
	/* A cache as a site configures one: this machine has none, and a
	 * node without one has nothing to sort (no_cache below). */
	zs_policy_set(p, "cache_size=64MiB", NULL);
	/* min_interval alone: 1/16 of that cache freed by anything on this
	 * host between two sorts would sort a recent node (freed_since turns
	 * it back on). */
	zs_policy_set(p, "recent_freed=skip", NULL);
}

/* The sorter with the options a plugstack.conf line gives it. */
static int sorter_open(const struct zs_policy *p, struct zs_sorter **s, char *err)
{
	return zs_sorter_open(&p->sorter, &p->memcache, &p->metrics, s, err);
}

static struct zs_node_result last;

static void remember(void *ctx, const struct zs_node_result *r)
{
	(void)ctx;
	last = *r;
}

/* A sorter of KIND under the test policy and, unless NULL, the plugstack
 * word KEY; NULL when the word is refused or the open fails. */
static struct zs_sorter *open_sorter_with(const char *kind, const char *key)
{
	struct zs_policy p;
	struct zs_sorter *s = NULL;
	char err[ZS_ERRLEN];

	policy_for(&p, kind);
	if (key && zs_policy_set(&p, key, err)) {
		printf("# %s refused: %s\n", key, err);
		return NULL;
	}
	if (sorter_open(&p, &s, err))
		printf("# open failed: %s\n", err);
	return s;
}

static struct zs_sorter *open_sorter(const char *kind)
{
	return open_sorter_with(kind, NULL);
}

static void path(char *buf, size_t len, const char *rel)
{
	snprintf(buf, len, "%s/%s", root, rel);
}

/* The path of rel in the fake tree, in a static buffer. */
static const char *root_path(const char *rel)
{
	static char buf[PATH_MAX];

	path(buf, sizeof(buf), rel);
	return buf;
}

static void write_text(const char *rel, const char *text)
{
	char f[PATH_MAX];
	FILE *fp;

	path(f, sizeof(f), rel);
	fp = fopen(f, "w");
	if (fp) {
		fputs(text, fp);
		fclose(fp);
	}
}

/* Reads a file of the fake tree into buf ("" when missing). */
static void read_text(const char *rel, char *buf, size_t len)
{
	char f[PATH_MAX];
	FILE *fp;
	size_t n = 0;

	path(f, sizeof(f), rel);
	fp = fopen(f, "r");
	if (fp) {
		n = fread(buf, 1, len - 1, fp);
		fclose(fp);
	}
	buf[n] = '\0';
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

	zs_sorter_close(s);

	/* No reader on the FIFO: its open blocks, as a sort that does not end
	 * would. The write is stopped at kernel_timeout and fails the node. */
	struct zs_policy p;
	char err[ZS_ERRLEN], want[PATH_MAX + 96];

	policy_for(&p, "kernel");
	ok(zs_policy_set(&p, "kernel_timeout=1", err) == 0 && sorter_open(&p, &s, err) == 0,
	   "kernel_timeout=1");
	struct zs_tally t2 = { 0 };
	double t0 = zs_now();

	ok(zs_sorter_sort(s, 0, &t2, remember, NULL) == -1 && last.outcome == ZS_FAILED && last.stopped,
	   "a sort that does not end fails the node");
	ok(zs_now() - t0 >= 1.0 && zs_now() - t0 < 3.0, "... stopped after kernel_timeout, 1 s (%.2f s)",
	   zs_now() - t0);
	snprintf(want, sizeof(want), "%s/kernel/nodeid: node 0 sort did not end within 1 s (kernel_timeout): stopped",
		 root);
	is_str(last.msg, want, "... and says so, naming the file");
	ok(t2.failed == 1 && t2.stopped == 1 && t2.sorted == 0, "tally: 1 failed, 1 stopped");
	ok(waitpid(-1, NULL, WNOHANG) == -1 && errno == ECHILD, "... its writer reaped: no zombie left");
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

/* A node with a cache (cache_size= here) whose kernel sorter is missing is
 * degraded wherever it sorts; compaction stands in only where
 * compact_fallback= lets it. */
static void degraded_sites(void)
{
	static const struct {
		const char *fallback;
		enum zs_sort_site site;
		bool compacts;
	} cases[] = {
		{ "prolog", ZS_SITE_PROLOG, true },
		{ "prolog", ZS_SITE_STEP, false },
		{ "prolog", ZS_SITE_PERIODIC, false },
		{ "steps", ZS_SITE_STEP, true },
		{ "steps", ZS_SITE_PERIODIC, false },
		{ "periodic", ZS_SITE_PERIODIC, true },
		{ "no", ZS_SITE_PROLOG, false },
		{ "no", ZS_SITE_COMMAND, true },
	};
	static const char *const sites[] = { "command", "prolog", "step", "periodic" };
	char f[PATH_MAX], word[64], err[ZS_ERRLEN];

	path(f, sizeof(f), "node/node0/compact");
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct zs_tally t = { 0 };
		struct zs_sorter *s = NULL;
		struct zs_policy p;

		write_text("node/node0/compact", "");
		policy_for(&p, "auto");
		snprintf(word, sizeof(word), "compact_fallback=%s", cases[i].fallback);
		zs_policy_set(&p, word, NULL);
		p.sorter.site = cases[i].site;
		if (sorter_open(&p, &s, err)) {
			ok(0, "open: %s", err);
			continue;
		}
		zs_sorter_sort(s, 0, &t, remember, NULL);
		FILE *fp = fopen(f, "r");
		char got[16] = "";

		if (fp) {
			if (!fgets(got, sizeof(got), fp))
				got[0] = '\0';
			fclose(fp);
		}
		ok(zs_sorter_degraded(s) != NULL, "%s at the %s: degraded", word, sites[cases[i].site]);
		if (cases[i].compacts)
			ok(!strcmp(got, "1\n") && t.fallback == 1 && t.sorted == 0 && t.degraded == 0,
			   "... compacted in place of a sort");
		else
			ok(!got[0] && t.fallback == 0 && t.sorted == 0 && t.degraded == 1 &&
			   last.outcome == ZS_DEGRADED && zs_sorter_backend(s) == ZS_SORTER_NONE,
			   "... not compacted, counted as left unsorted (%s)", zs_outcome_name(last.outcome));
		zs_sorter_close(s);
	}
	struct zs_policy p;
	struct zs_sorter *s = NULL;

	policy_for(&p, "auto");
	p.sorter.site = ZS_SITE_STEP;
	if (!sorter_open(&p, &s, err)) {
		err_has(zs_sorter_degraded(s),
			"no kernel zonesort interface (", "the degraded state names the missing interface");
		err_has(zs_sorter_degraded(s),
			"; compaction in its place in the job prolog only (compact_fallback=prolog)",
			"... and what stands in for it");
		zs_sorter_close(s);
	}
	policy_for(&p, "kernel");
	if (!sorter_open(&p, &s, err)) {
		err_has(zs_sorter_degraded(s), "; no compaction in its place (sorter=kernel)",
			"sorter=kernel without the module: degraded, nothing stands in");
		zs_sorter_close(s);
	}
	/* The site chose compaction: not degraded, its compactions are sorts. */
	policy_for(&p, "compact");
	p.sorter.site = ZS_SITE_STEP;
	if (!sorter_open(&p, &s, err)) {
		struct zs_tally t = { 0 };

		zs_sorter_sort(s, 0, &t, remember, NULL);
		ok(!zs_sorter_degraded(s) && t.sorted == 1 && t.fallback == 0,
		   "sorter=compact is the site's choice: not degraded, sorted");
		zs_sorter_close(s);
	}
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
	ok(last.outcome == ZS_DEGRADED && t.sorted == 0 && t.failed == 0 && t.degraded == 1,
	   "a cache node without its module: degraded, nothing sorted, nothing failed");
	zs_sorter_close(s);

	path(f, sizeof(f), "node/node0");
	mkdir(f, 0755);
	path(f, sizeof(f), "node/node0/compact");
	fp = fopen(f, "w");
	fclose(fp);
	s = open_sorter("auto");
	ok(s && zs_sorter_backend(s) == ZS_SORTER_COMPACT, "auto falls back to compaction (zonesort sort)");
	err_has(zs_sorter_why(s), "no kernel zonesort interface", "and says why");
	ok(zs_sorter_sort(s, 0, &t, remember, NULL) == 0 && t.sorted == 0 && t.fallback == 1 &&
	   last.outcome == ZS_FALLBACK, "compaction in place of the kernel sorter is counted as fallback, not sorted");
	fp = fopen(f, "r");
	ok(fp && fgets(got, sizeof(got), fp) && !strcmp(got, "1\n"), "wrote 1 to nodeN/compact");
	if (fp)
		fclose(fp);
	zs_sorter_close(s);

	/* A compaction that does not end (a FIFO without a reader, whose
	 * open blocks) is stopped at kernel_timeout and fails the node. */
	struct zs_policy p;
	char err[ZS_ERRLEN], want[PATH_MAX + 96];
	double t0;

	unlink(f);
	ok(mkfifo(f, 0600) == 0, "node0/compact: a FIFO without a reader");
	policy_for(&p, "compact");
	s = NULL;
	ok(zs_policy_set(&p, "kernel_timeout=1", err) == 0 && sorter_open(&p, &s, err) == 0,
	   "sorter=compact kernel_timeout=1");
	t = (struct zs_tally){ 0 };
	t0 = zs_now();
	ok(s && zs_sorter_sort(s, 0, &t, remember, NULL) == -1 && last.outcome == ZS_FAILED && last.stopped &&
	   t.failed == 1 && t.stopped == 1, "a compaction that does not end fails the node, counted as stopped");
	ok(zs_now() - t0 >= 1.0 && zs_now() - t0 < 3.0, "... after kernel_timeout, 1 s (%.2f s)", zs_now() - t0);
	snprintf(want, sizeof(want), "%s: compaction did not end within 1 s (kernel_timeout): stopped", f);
	is_str(last.msg, want, "... and says so");
	zs_sorter_close(s);
	unlink(f);

	s = open_sorter("none");
	ok(s && zs_sorter_backend(s) == ZS_SORTER_NONE, "sorter=none");
	zs_sorter_close(s);
}


/* Stamps from another boot or from the future must not hold sorting off. */
static void stamps(void)
{
	char fifo[PATH_MAX], boot[64] = "", text[200];
	struct zs_tally t = { 0 };
	struct zs_sorter *s;
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
	int rd;

	if (f && fgets(boot, sizeof(boot), f))
		boot[strcspn(boot, "\n")] = '\0';
	if (f)
		fclose(f);
	path(fifo, sizeof(fifo), "kernel/nodeid");
	unlink(fifo);
	mkfifo(fifo, 0600);
	rd = open(fifo, O_RDONLY | O_NONBLOCK);
	s = open_sorter("kernel");

	snprintf(text, sizeof(text), "boot %s %lld\n", boot, zs_boottime_ns() + 3600LL * 1000000000LL);
	write_text("state/node0.last", text);
	zs_sorter_sort(s, 3600, &t, remember, NULL);
	ok(last.outcome == ZS_SORTED, "a stamp from the future counts as absent: the node is sorted (%s)",
	   zs_outcome_name(last.outcome));
	write_text("state/node0.last", "boot 00000000-0000-0000-0000-000000000000 1\n");
	zs_sorter_sort(s, 3600, &t, remember, NULL);
	ok(last.outcome == ZS_SORTED, "a stamp from another boot counts as absent");
	write_text("state/node0.last", "1\n");
	zs_sorter_sort(s, 3600, &t, remember, NULL);
	ok(last.outcome == ZS_SORTED, "a stamp without a boot id counts as absent");
	zs_sorter_sort(s, 3600, &t, remember, NULL);
	ok(last.outcome == ZS_RECENT, "the stamp just written holds the next sort off");
	long long began = zs_sorter_last_start(s);

	ok(began > 0 && began <= zs_boottime_ns(), "the sorter tells when its last sort began");
	zs_sorter_close(s);
	close(rd);
	unlink(fifo);

	ok(zs_helper_min_interval(10, 12) == 10, "helper skip threshold: min_period when above half the period");
	ok(zs_helper_min_interval(10, 60) == 30, "half the period when above min_period");
}

/* zs_recent_decide: min_interval, and the memory freed since the sort. */
static void recent_rule(void)
{
	const long long sec = 1000000000LL, mib = 1LL << 20;

	ok(zs_recent_decide(-1, 10, 0, 200 * mib, 4 * mib) == ZS_RECENT_NOT, "no last sort known: sort");
	ok(zs_recent_decide(10 * sec, 10, 0, 0, 4 * mib) == ZS_RECENT_NOT, "sorted min_interval ago: sort");
	ok(zs_recent_decide(0, 0, 0, 200 * mib, 4 * mib) == ZS_RECENT_NOT,
	   "min_interval 0: sort, not for memory freed");
	ok(zs_recent_decide(9 * sec, 10, 100 * mib, 100 * mib, 4 * mib) == ZS_RECENT_SKIP,
	   "sorted 9 s ago with min_interval 10, nothing freed since: skip");
	ok(zs_recent_decide(9 * sec, 10, 100 * mib, 104 * mib, 4 * mib) == ZS_RECENT_FREED,
	   "... the threshold freed since: sort");
	ok(zs_recent_decide(9 * sec, 10, 100 * mib, 104 * mib - 1, 4 * mib) == ZS_RECENT_SKIP,
	   "... a byte less: skip");
	ok(zs_recent_decide(9 * sec, 10, 100 * mib, 50 * mib, 4 * mib) == ZS_RECENT_SKIP,
	   "... a counter below the sort's: skip");
	ok(zs_recent_decide(9 * sec, 10, -1, 200 * mib, 4 * mib) == ZS_RECENT_SKIP,
	   "no counter figure of the sort: skip, as without one");
	ok(zs_recent_decide(9 * sec, 10, 100 * mib, -1, 4 * mib) == ZS_RECENT_SKIP,
	   "counter now unknown: skip");
	ok(zs_recent_decide(9 * sec, 10, 0, 200 * mib, 0) == ZS_RECENT_SKIP,
	   "no cache size known (threshold 0): skip");
}

/* The "last" stamp's time, -1 when there is none. */
static long long last_stamp(void)
{
	char text[200], boot[64];
	long long ns;

	read_text("state/node0.last", text, sizeof(text));
	return sscanf(text, "boot %63s %lld", boot, &ns) == 2 ? ns : -1;
}

/*
 * A node sorted less than min_interval ago is sorted all the same when
 * 1/16 of its cache (64 MiB here: 4 MiB) was freed since: the machine's
 * freed-pages counter now against the figure kept right after the sort.
 * The host frees pages all the time, so the kept figure is rewritten to put
 * "now" far on either side of the threshold.
 */
static void freed_since(void)
{
	char fifo[PATH_MAX], text[200], boot[64] = "", b2[64], err[ZS_ERRLEN];
	struct zs_tally t = { 0 };
	struct zs_sorter *s = NULL;
	struct zs_policy p;
	long long started, at = -1, bytes = -1;
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
	int rd;

	if (f && fgets(boot, sizeof(boot), f))
		boot[strcspn(boot, "\n")] = '\0';
	if (f)
		fclose(f);
	path(fifo, sizeof(fifo), "kernel/nodeid");
	unlink(fifo);
	mkfifo(fifo, 0600);
	rd = open(fifo, O_RDONLY | O_NONBLOCK);
	unlink(root_path("state/node0.last"));
	unlink(root_path("state/node0.pgfree"));
	policy_for(&p, "kernel");
	zs_policy_set(&p, "recent_freed=sort", NULL);
	if (sorter_open(&p, &s, err)) {
		ok(0, "open: %s", err);
		return;
	}
	zs_sorter_sort(s, 0, &t, remember, NULL);
	started = last_stamp();
	read_text("state/node0.pgfree", text, sizeof(text));
	ok(last.outcome == ZS_SORTED && started > 0 &&
	   sscanf(text, "boot %63s %lld %lld", b2, &at, &bytes) == 3 && !strcmp(b2, boot) &&
	   at == started && bytes > 0,
	   "a sort keeps the freed-pages counter after it, with the boot and the sort's start ('%.*s')",
	   (int)strcspn(text, "\n"), text);

	/* A counter 1 TiB beyond today's: nothing freed since. */
	snprintf(text, sizeof(text), "boot %s %lld %lld\n", boot, started, bytes + (1LL << 40));
	write_text("state/node0.pgfree", text);
	zs_sorter_sort(s, 3600, &t, remember, NULL);
	ok(last.outcome == ZS_RECENT && !last.freed && t.recent == 1 && t.sorted == 1 && t.freed == 0,
	   "nothing freed since a recent sort: skipped (%s)", zs_outcome_name(last.outcome));
	err_has(last.msg, "less than 3600 s", "... as recent");

	/* A counter of 0 after the sort: all frees since boot came after it. */
	snprintf(text, sizeof(text), "boot %s %lld 0\n", boot, started);
	write_text("state/node0.pgfree", text);
	zs_sorter_sort(s, 3600, &t, remember, NULL);
	ok(last.outcome == ZS_SORTED && last.freed && t.sorted == 2 && t.freed == 1 && t.recent == 1,
	   "1/16 of the cache freed since a recent sort: sorted, counted as such (%s)",
	   zs_outcome_name(last.outcome));
	err_has(last.msg, " MiB freed since the sort ", "... the result says how much was freed ('%s')",
		last.msg);
	err_has(last.msg, "at least 1/16 of the cache (4 MiB): sorted within min_interval (3600 s)",
		"... against what, and that min_interval was not waited for");
	started = last_stamp();
	read_text("state/node0.pgfree", text, sizeof(text));
	ok(sscanf(text, "boot %63s %lld %lld", b2, &at, &bytes) == 3 && at == started && bytes > 0,
	   "... and the figure is renewed with the sort, measured from it next time");

	/* Memory allocated and freed again since the sort (a job that ran and
	 * exited) leaves free memory where it was, but its pages now lie in
	 * front of the sorted lists: it counts. 64 MiB touched and unmapped. */
	unsigned t_sorted = t.sorted, t_freed = t.freed;
	size_t churn = 64u << 20;
	char *mem = mmap(NULL, churn, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (mem != MAP_FAILED) {
		memset(mem, 1, churn);
		munmap(mem, churn);
	}
	zs_sorter_sort(s, 3600, &t, remember, NULL);
	ok(mem != MAP_FAILED && last.outcome == ZS_SORTED && last.freed && t.sorted == t_sorted + 1 &&
	   t.freed == t_freed + 1,
	   "64 MiB allocated and freed again since a recent sort: sorted (%s, '%s')",
	   zs_outcome_name(last.outcome), last.msg);
	started = last_stamp();

	/* Figures that cannot be trusted count as none: skipped as before. */
	static const char *const bad[] = { "", " 0 1", " -4", " x" };

	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), "boot %s %lld%s\n", boot, started, bad[i]);
		write_text("state/node0.pgfree", text);
		zs_sorter_sort(s, 3600, &t, remember, NULL);
		text[strcspn(text, "\n")] = '\0';
		ok(last.outcome == ZS_RECENT, "a garbled figure ('%s'): skipped as recent (%s)", text,
		   zs_outcome_name(last.outcome));
	}
	snprintf(text, sizeof(text), "boot %s %lld 0\n", boot, started - 1);
	write_text("state/node0.pgfree", text);
	zs_sorter_sort(s, 3600, &t, remember, NULL);
	ok(last.outcome == ZS_RECENT, "a figure of another sort: skipped as recent (%s)",
	   zs_outcome_name(last.outcome));
	snprintf(text, sizeof(text), "boot 00000000-0000-0000-0000-000000000000 %lld 0\n", started);
	write_text("state/node0.pgfree", text);
	zs_sorter_sort(s, 3600, &t, remember, NULL);
	ok(last.outcome == ZS_RECENT, "a figure of another boot: skipped as recent (%s)",
	   zs_outcome_name(last.outcome));
	unlink(root_path("state/node0.pgfree"));
	zs_sorter_sort(s, 3600, &t, remember, NULL);
	ok(last.outcome == ZS_RECENT, "no figure: skipped as recent (%s)", zs_outcome_name(last.outcome));
	zs_sorter_close(s);

	/* recent_freed=skip: min_interval alone. */
	snprintf(text, sizeof(text), "boot %s %lld 0\n", boot, started);
	write_text("state/node0.pgfree", text);
	policy_for(&p, "kernel");
	zs_policy_set(&p, "recent_freed=skip", NULL);
	s = NULL;
	if (!sorter_open(&p, &s, err)) {
		zs_sorter_sort(s, 3600, &t, remember, NULL);
		ok(last.outcome == ZS_RECENT, "recent_freed=skip: skipped as recent however much was freed (%s)",
		   zs_outcome_name(last.outcome));
		zs_sorter_close(s);
	}
	close(rd);
	unlink(fifo);

	/* Compaction (sorter=compact) is not sorted again for freed memory. */
	mkdir(root_path("node/node0"), 0755);
	write_text("node/node0/compact", "");
	policy_for(&p, "compact");
	zs_policy_set(&p, "recent_freed=sort", NULL);
	s = NULL;
	if (!sorter_open(&p, &s, err)) {
		zs_sorter_sort(s, 0, &t, remember, NULL);
		started = last_stamp();
		snprintf(text, sizeof(text), "boot %s %lld 0\n", boot, started);
		write_text("state/node0.pgfree", text);
		zs_sorter_sort(s, 3600, &t, remember, NULL);
		ok(last.outcome == ZS_RECENT, "sorter=compact: a recent compaction is not repeated for freed memory (%s)",
		   zs_outcome_name(last.outcome));
		zs_sorter_close(s);
	}
	unlink(root_path("state/node0.last"));
	unlink(root_path("state/node0.pgfree"));
}

/* A state directory owned by another user is refused: giving it away
 * needs root. */
static void another_owner(const char *dir)
{
	struct zs_tally t = { 0 };
	struct zs_sorter *s;

	if (geteuid()) {
		skip("giving a directory to another user needs root",
		     "a state directory owned by another user is refused");
		return;
	}
	ok(chown(dir, 65534, 65534) == 0, "state directory given to nobody");
	s = open_sorter("kernel");
	ok(zs_sorter_sort(s, 0, &t, remember, NULL) == -1, "a state directory owned by another user is refused");
	err_has(last.msg, "owner uid 65534", "naming the owner");
	zs_sorter_close(s);
	ok(chown(dir, 0, 0) == 0, "and back to root");
}

/* The state directory must be root's (or the caller's) alone, and nothing
 * in it is opened through a link. */
static void state_directory(void)
{
	char dir[PATH_MAX], victim[PATH_MAX], link[PATH_MAX], fifo[PATH_MAX], got[64] = "";
	struct zs_tally t = { 0 };
	struct zs_sorter *s;
	FILE *f;
	int rd;

	path(fifo, sizeof(fifo), "kernel/nodeid");
	unlink(fifo);
	mkfifo(fifo, 0600);
	rd = open(fifo, O_RDONLY | O_NONBLOCK);

	/* A root-owned file a user wants overwritten, named by a link the user
	 * left in the state directory. */
	path(victim, sizeof(victim), "victim");
	write_text("victim", "precious\n");
	path(link, sizeof(link), "state/node0.last");
	unlink(link);
	ok(symlink(victim, link) == 0, "a link node0.last -> victim in the state directory");
	s = open_sorter("kernel");
	zs_sorter_sort(s, 0, &t, remember, NULL);
	zs_sorter_close(s);
	f = fopen(victim, "r");
	ok(f && fgets(got, sizeof(got), f) && !strcmp(got, "precious\n"), "the victim is untouched after a sort (%s)", got);
	if (f)
		fclose(f);
	struct stat st;

	ok(lstat(link, &st) == 0 && S_ISREG(st.st_mode), "the link was replaced by a stamp file, not followed");

	path(link, sizeof(link), "state/lock");
	unlink(link);
	ok(symlink(victim, link) == 0, "a link lock -> victim");
	s = open_sorter("kernel");
	ok(zs_sorter_sort(s, 0, &t, remember, NULL) == -1 && last.outcome == ZS_FAILED, "a linked lock file fails the sort");
	zs_sorter_close(s);
	unlink(link);

	/* The old cache-layout temporary name was statedir/memcache.<pid>. */
	snprintf(link, sizeof(link), "%s/state/memcache.%d", root, (int)getpid());
	ok(symlink(victim, link) == 0, "a link at the old guessable temporary name");
	struct zs_policy p;
	struct zs_sorter *s2 = NULL;
	char err[ZS_ERRLEN];

	policy_for(&p, "kernel");
	zs_policy_set(&p, "nodes=auto", NULL);
	ok(sorter_open(&p, &s2, err) == 0, "discovery through the state directory works");
	zs_sorter_close(s2);
	f = fopen(victim, "r");
	ok(f && fgets(got, sizeof(got), f) && !strcmp(got, "precious\n"), "the victim is untouched by the cache-layout copy");
	if (f)
		fclose(f);
	unlink(link);

	path(dir, sizeof(dir), "state");
	chmod(dir, 0775);
	s = open_sorter("kernel");
	ok(zs_sorter_sort(s, 0, &t, remember, NULL) == -1 && last.outcome == ZS_FAILED,
	   "a group-writable state directory is refused");
	err_has(last.msg, dir, "the refusal names the directory");
	err_has(last.msg, "mode 0775", "and its mode");
	snprintf(got, sizeof(got), "owner uid %u", (unsigned)geteuid());
	err_has(last.msg, got, "and its owner");
	zs_sorter_close(s);
	chmod(dir, 0755);
	another_owner(dir);
	close(rd);
	unlink(fifo);
}

static void tally_lines(void)
{
	struct zs_tally t = { 3, 2, 1, 0, 0, 0.25, 1, 4, 5, 1, 0, 0, 0 }, u;
	char buf[240];

	zs_tally_format(&t, buf, sizeof(buf));
	is_str(buf, "rounds=3 sorted=2 recent=1 busy=0 failed=0 seconds=0.250000 compacted=1 fallback=4 degraded=5 churn=1 freed=0 stopped=0 occupied=0",
	       "format");
	ok(!zs_tally_parse(buf, &u) && u.rounds == 3 && u.sorted == 2 && u.recent == 1 && u.seconds == 0.25 &&
	   u.compacted == 1 && u.fallback == 4 && u.degraded == 5 && u.churn == 1 && u.freed == 0,
	   "parse round-trips");
	ok(zs_tally_parse("error: x", &u), "other lines are not tallies");
	ok(zs_tally_parse("rounds=3 sorted=2 recent=1 busy=0 failed=0 seconds=0.25 compacted=0 fallback=0 degraded=0 churn=0 freed=0 extra", &u),
	   "trailing text refused");
	t.freed = 1;
	zs_tally_describe(&t, buf, sizeof(buf));
	err_has(buf, "2 sorts (1 after memory churn) (1 despite a recent sort: memory freed since) (1 compacted",
		"describe names sorts despite a recent one");
	t.freed = 0;
	zs_tally_describe(&t, buf, sizeof(buf));
	err_has(buf, ", 4 compacted in place of a sort, 5 left unsorted, 1 skipped",
		"describe names a degraded node's rounds");
	t.fallback = t.degraded = 0;
	zs_tally_describe(&t, buf, sizeof(buf));
	err_has(buf, "2 sorts (1 after memory churn) (1 compacted the node for its quarantine), 1 skipped",
		"describe names sorts after churn and compactions");
	t.compacted = t.churn = 0;
	zs_tally_describe(&t, buf, sizeof(buf));
	err_has(buf, "2 sorts, 1 skipped", "... and is silent without any");
	t.compacted = t.churn = t.freed = 1;
	zs_tally_add(&u, &t);
	ok(u.rounds == 6 && u.sorted == 4 && u.recent == 2 && u.seconds == 0.5 && u.compacted == 2 &&
	   u.churn == 2 && u.freed == 1, "add");
	struct zs_tally w;

	ok(zs_tally_parse("rounds=3 sorted=2 recent=1 busy=0 failed=0 seconds=0.25 compacted=0 fallback=0 degraded=0 churn=0 extra", &w),
	   "trailing text refused where freed= would be");
	ok(!zs_tally_parse("rounds=3 sorted=2 recent=1 busy=0 failed=0 seconds=0.25 compacted=0 fallback=0 degraded=0 churn=1\n", &w) &&
	   w.sorted == 2 && w.churn == 1 && w.freed == 0, "an older helper's line, without freed=: none of them");
	ok(!zs_tally_parse("rounds=3 sorted=2 recent=1 busy=0 failed=0 seconds=0.25 compacted=0 fallback=0 degraded=0 churn=0 freed=1\n", &w) &&
	   w.sorted == 2 && w.freed == 1 && w.stopped == 0, "freed= parsed; a line without stopped= has none");

	/* Writes to the kernel stopped at kernel_timeout: failed, and said. */
	ok(!zs_tally_parse("rounds=3 sorted=1 recent=0 busy=0 failed=2 seconds=4.5 compacted=0 fallback=0 degraded=0 churn=0 freed=0 stopped=2\n", &w) &&
	   w.failed == 2 && w.stopped == 2, "stopped= parsed");
	ok(zs_tally_parse("rounds=3 sorted=1 recent=0 busy=0 failed=2 seconds=4.5 compacted=0 fallback=0 degraded=0 churn=0 freed=0 stopped=2 extra", &w),
	   "trailing text after stopped= refused");
	zs_tally_format(&w, buf, sizeof(buf));
	ok(!zs_tally_parse(buf, &u) && u.stopped == 2 && u.failed == 2, "stopped= round-trips");
	struct zs_tally v;

	ok(!zs_tally_parse("rounds=3 sorted=3 recent=0 busy=0 failed=0 seconds=1 compacted=0 fallback=0 degraded=0 churn=0 freed=0 stopped=0 occupied=2\n", &v) &&
	   v.occupied == 2 && v.sorted == 3, "occupied= parsed");
	ok(zs_tally_parse("rounds=3 sorted=3 recent=0 busy=0 failed=0 seconds=1 compacted=0 fallback=0 degraded=0 churn=0 freed=0 stopped=0 occupied=2 extra", &v),
	   "trailing text after occupied= refused");
	v.churn = 1;
	zs_tally_describe(&v, buf, sizeof(buf));
	err_has(buf, "3 sorts (1 after memory churn) (2 given the step's slots), 0 skipped",
		"describe names the sorts given the step's slots");
	zs_tally_add(&u, &w);
	ok(u.stopped == 4 && u.failed == 4, "add counts stopped");
	zs_tally_describe(&w, buf, sizeof(buf));
	err_has(buf, "1 sort, 0 skipped (recent), 0 busy, 2 failed (2 stopped after kernel_timeout), 4.500 s",
		"describe says which failures were stopped at their bound");
}

/* The module's files (kmod/zonesort_abi.h, interface version 3) of a
 * full quarantine: the last sort was node 0's, left colliding pages for
 * lack of room, and est_ppm colliding by the module's estimate. */
static void full_files(const char *est_ppm)
{
	char text[96];

	write_text("kernel/interface_version", "3\n");
	snprintf(text, sizeof(text), "sorts=3\nlast_conflict_ppm_after=%s\n", est_ppm);
	write_text("kernel/stats", text);
	write_text("kernel/quarantine/stats", "last_node=0\nlast_short_pages=40\n");
	write_text("kernel/quarantine/enabled", "");
	write_text("kernel/node0/quarantine_release", "");
	write_text("node/node0/compact", "");
}

/* The stand-in for hwloc's answer: the per-boot copy of the cache layout
 * in the state directory (memcache.h), one line per NUMA node. */
static void write_layout(const char *nodes)
{
	char boot[64] = "", text[256];
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");

	if (f && fgets(boot, sizeof(boot), f))
		boot[strcspn(boot, "\n")] = '\0';
	if (f)
		fclose(f);
	snprintf(text, sizeof(text), "boot %s v2\n%s", boot, nodes);
	write_text("state/memcache", text);
}

/* Opens a sorter for a node whose layout says no cache, with extra words. */
static struct zs_sorter *open_nocache(const char *sorter, const char *w1, const char *w2)
{
	struct zs_policy p;
	struct zs_sorter *s = NULL;
	char err[ZS_ERRLEN];

	policy_for(&p, sorter);
	p.memcache.cache_size = 0;
	if ((w1 && zs_policy_set(&p, w1, err)) || (w2 && zs_policy_set(&p, w2, err)) ||
	    sorter_open(&p, &s, err))
		printf("# open failed: %s\n", err);
	return s;
}

/*
 * No memory-side cache found (the layout) or given (no cache_size=): with
 * any sorter and any node list, nothing is written to the kernel interface
 * or to compact; nocache=compact compacts, and only compacts.
 */
static void no_cache(void)
{
	static const char *const cases[][3] = {
		{ "auto", NULL, "defaults" }, { "kernel", NULL, "sorter=kernel" },
		{ "compact", NULL, "sorter=compact" }, { "auto", "nodes=all", "nodes=all" },
		{ "auto", "modprobe=zonesort", "modprobe=zonesort" },
	};
	char fifo[PATH_MAX], got[64], buf[64];
	struct zs_tally t = { 0 };
	struct zs_sorter *s;
	int rd;

	write_layout("0 0 0 0 1 0 0\n");
	path(fifo, sizeof(fifo), "kernel/nodeid");
	unlink(fifo);
	mkfifo(fifo, 0600);
	rd = open(fifo, O_RDONLY | O_NONBLOCK);
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		write_text("node/node0/compact", "");
		s = open_nocache(cases[i][0], cases[i][1], NULL);
		ok(s && zs_sorter_nothing_to_sort(s) && zs_sorter_backend(s) == ZS_SORTER_NONE &&
		   !zs_sorter_is_target(s, 0), "no cache, %s: nothing to sort, no target", cases[i][2]);
		if (!s)
			continue;
		is_str(zs_sorter_why(s), ZS_NOTHING_TO_SORT, "... and says so");
		ok(zs_sorter_sort(s, 0, &t, remember, NULL) == 0 && last.outcome == ZS_NOTHING &&
		   t.sorted == 0 && t.failed == 0, "... a round reports nothing to sort, nothing failed");
		read_text("node/node0/compact", got, sizeof(got));
		ok(read(rd, buf, sizeof(buf)) <= 0 && !got[0], "... and writes neither nodeid nor compact");
		zs_sorter_close(s);
	}

	struct zs_policy pl;
	char err[ZS_ERRLEN];

	policy_for(&pl, "auto");
	pl.memcache.cache_size = 0;
	zs_policy_set(&pl, "nodes=0,1000", NULL);
	ok(sorter_open(&pl, &s, err), "no cache: a node list naming a node the host lacks is still refused");
	err_has(err, "NUMA node 1000 does not exist", "... naming the node");

	/* Asked for: compaction, also where a kernel interface exists. */
	write_text("node/node0/compact", "");
	s = open_nocache("kernel", "nocache=compact", NULL);
	ok(s && !zs_sorter_nothing_to_sort(s) && zs_sorter_backend(s) == ZS_SORTER_COMPACT &&
	   zs_sorter_is_target(s, 0), "no cache, sorter=kernel nocache=compact: compaction, node 0 a target");
	if (s) {
		err_has(zs_sorter_why(s), "nocache=compact", "... and why says it was asked for");
		ok(zs_sorter_sort(s, 0, &t, remember, NULL) == 0 && last.outcome == ZS_SORTED,
		   "... the node is compacted");
		zs_sorter_close(s);
	}
	read_text("node/node0/compact", got, sizeof(got));
	is_str(got, "1\n", "... through nodeN/compact");
	ok(read(rd, buf, sizeof(buf)) <= 0, "... and not through the kernel interface");
	s = open_nocache("auto", "nocache=compact", "nodes=auto");
	ok(s && zs_sorter_is_target(s, 0) && !strcmp(zs_sorter_targets(s, buf, sizeof(buf)), "0"),
	   "nocache=compact nodes=auto: every node with memory is a target");
	zs_sorter_close(s);

	/* A cache found (the layout) or given (cache_size=) is sorted. */
	write_layout("0 67108864 64 1 1 0 0\n");
	s = open_nocache("auto", "nodes=auto", NULL);
	ok(s && !zs_sorter_nothing_to_sort(s) && zs_sorter_backend(s) == ZS_SORTER_KERNEL &&
	   zs_sorter_is_target(s, 0), "a cache found: the kernel interface sorts node 0");
	zs_sorter_close(s);
	write_layout("0 0 0 0 1 0 0\n");
	s = open_nocache("auto", "cache_size=64MiB", NULL);
	ok(s && !zs_sorter_nothing_to_sort(s) && zs_sorter_backend(s) == ZS_SORTER_KERNEL,
	   "a cache given by cache_size=: the kernel interface sorts");
	zs_sorter_close(s);
	s = open_nocache("none", NULL, NULL);
	ok(s && !zs_sorter_nothing_to_sort(s) && zs_sorter_backend(s) == ZS_SORTER_NONE,
	   "sorter=none stays none, for its own reason");
	if (s)
		is_str(zs_sorter_why(s), "sorter=none", "... which it gives");
	zs_sorter_close(s);
	unlink(root_path("state/memcache"));
	close(rd);
	unlink(fifo);
}

/*
 * A full quarantine that left its sort over 1% colliding: the node's
 * blocks are given back, the node compacted and sorted again, then not
 * again within compact_interval; a compaction stamp older than the
 * interval lets the next one through.
 */
static void full_quarantine(void)
{
	char w[64], got[256], boot[64] = "", text[200];
	struct zs_policy p;
	struct zs_sorter *s = NULL;
	struct zs_tally t = { 0 };
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");

	if (f && fgets(boot, sizeof(boot), f))
		boot[strcspn(boot, "\n")] = '\0';
	if (f)
		fclose(f);
	unlink(root_path("kernel/nodeid"));
	write_text("kernel/nodeid", "");
	full_files("52000");
	unlink(root_path("state/node0.last"));
	unlink(root_path("state/node0.compacted"));
	policy_for(&p, "kernel");
	snprintf(w, sizeof(w), "compact_interval=%d", 30);
	ok(zs_policy_set(&p, w, NULL) == 0 && sorter_open(&p, &s, NULL) == 0 && s,
	   "kernel sorter with compact_interval=30");
	if (!s)
		return;
	for (int step = 0; step < 4; step++) {
		static const char *what[] = {
			"full: given back, compacted, sorted again",
			"full again at once: within the interval, not compacted",
			"full again, the last compaction 31 s ago: compacted",
			"full again, 29 s ago: not compacted",
		};
		static const int ago_s[] = { -1, -1, 31, 29 };
		bool want = step == 0 || step == 2;

		full_files("52000");
		if (ago_s[step] >= 0) {
			snprintf(text, sizeof(text), "boot %s %lld\n", boot,
				 zs_boottime_ns() - ago_s[step] * 1000000000LL);
			write_text("state/node0.compacted", text);
		}
		zs_sorter_sort(s, 0, &t, remember, NULL);
		read_text("node/node0/compact", got, sizeof(got));
		ok(last.outcome == ZS_SORTED && last.compacted == want && !strcmp(got, want ? "1\n" : ""),
		   "%s (compact file '%s')", what[step], got);
		read_text("kernel/node0/quarantine_release", got, sizeof(got));
		ok(!strcmp(got, want ? "1\n" : ""), "... node 0's blocks %s ('%s')",
		   want ? "given back first" : "kept", got);
		if (want)
			err_has(last.msg, "quarantine full, 5.2% colliding: given back, node compacted, sorted again",
				"... and the result says so");
	}
	ok(t.sorted == 4 && t.compacted == 2, "tally: 4 sorts, 2 compacted (%u, %u)", t.sorted,
	   t.compacted);

	/* Held while memory is busy: sorted only, and the next sort without
	 * the hold compacts (the held one did not count as a compaction). */
	unlink(root_path("state/node0.compacted"));
	for (int step = 0; step < 2; step++) {
		bool hold = step == 0;

		full_files("52000");
		zs_sorter_hold_compaction(s, hold);
		zs_sorter_sort(s, 0, &t, remember, NULL);
		read_text("node/node0/compact", got, sizeof(got));
		ok(last.outcome == ZS_SORTED && last.compacted == !hold && !strcmp(got, hold ? "" : "1\n"),
		   "%s (compact file '%s')",
		   hold ? "full, compaction held: sorted, not compacted" : "hold lifted: compacted", got);
		if (hold)
			err_has(last.msg, "quarantine full, 5.2% colliding: compaction held back while memory is busy",
				"... and the result says why");
	}
	ok(t.sorted == 6 && t.compacted == 3, "tally: 6 sorts, 3 compacted (%u, %u)", t.sorted,
	   t.compacted);

	/* The module's estimate against 1%: a full quarantine with 1.5% left
	 * colliding is compacted, with 1.0% it is not. */
	for (int step = 0; step < 2; step++) {
		static const char *const ppm[] = { "15000", "10000" };
		bool want = step == 0;

		unlink(root_path("state/node0.compacted"));
		full_files(ppm[step]);
		zs_sorter_sort(s, 0, &t, remember, NULL);
		read_text("node/node0/compact", got, sizeof(got));
		ok(last.outcome == ZS_SORTED && last.compacted == want && !strcmp(got, want ? "1\n" : ""),
		   "full, the estimate %s ppm: %s (compact file '%s')", ppm[step],
		   want ? "compacted" : "not compacted", got);
	}
	/* Not full, but holding more than compact_held_permille (125 here)
	 * of the cache's pages: a 500 per mille maximum of 16384 pages is a
	 * cache of 32768, an eighth of it 4096 pages. The default (1000)
	 * compacts a full quarantine only. */
	zs_sorter_close(s);
	s = open_sorter_with("kernel", "compact_held_permille=125");
	ok(s != NULL, "compact_held_permille=125 taken");
	for (int step = 0; step < 3; step++) {
		static const char *const held[] = { "5000\n", "4096\n", "5000\n" };
		bool want = step == 0;

		unlink(root_path("state/node0.compacted"));
		unlink(root_path("state/node0.compacted_held"));
		full_files("0");
		write_text("kernel/quarantine/max_permille", "500\n");
		write_text("kernel/node0/quarantine_held_pages", held[step]);
		write_text("kernel/node0/quarantine_held_blocks", "900\n");
		write_text("kernel/node0/quarantine_max_pages", "16384\n");
		write_text("kernel/node0/quarantine_peak_pages", "16384\n");
		if (step == 2) {
			struct zs_policy q;

			zs_sorter_close(s);
			policy_for(&q, "kernel");
			ok(q.sorter.quarantine.compact_held_permille == 1000 && sorter_open(&q, &s, NULL) == 0,
			   "by default (compact_held_permille=1000) only a full quarantine is compacted");
		}
		zs_sorter_sort(s, 0, &t, remember, NULL);
		read_text("node/node0/compact", got, sizeof(got));
		ok(last.outcome == ZS_SORTED && last.compacted == want && !strcmp(got, want ? "1\n" : ""),
		   "holding %.*s pages: %s (compact file '%s')", (int)strlen(held[step]) - 1, held[step],
		   want ? "compacted" : "not compacted", got);
		if (want)
			err_has(last.msg, "quarantine holds 5000 pages, above 4096 (compact_held_permille): given back, node compacted, sorted again",
				"... and the result says why");
	}
	/* compact_held_permille=125 again: a compaction for the held share
	 * does not hold back a full quarantine's (a start-up churn right
	 * after it fills the quarantine); one for the held share waits out
	 * compact_interval after either. */
	zs_sorter_close(s);
	s = open_sorter_with("kernel", "compact_held_permille=125");
	ok(s != NULL, "compact_held_permille=125 again");
	unlink(root_path("state/node0.compacted"));
	unlink(root_path("state/node0.compacted_held"));
	for (int step = 0; step < 5; step++) {
		static const char *const what[] = {
			"holding 5000 pages: compacted for the held share",
			"full right after: compacted, the held share's compaction did not count",
			"holding 5000 right after both: not compacted",
			"full again at once: not compacted, within the interval",
			"holding 5000, the held share's stamp gone: not compacted, a full one just before",
		};
		static const bool full[] = { false, true, false, true, false };
		bool want = step < 2;

		if (step == 4)
			unlink(root_path("state/node0.compacted_held"));
		full_files(full[step] ? "52000" : "0");
		write_text("kernel/node0/quarantine_held_pages", "5000\n");
		zs_sorter_sort(s, 0, &t, remember, NULL);
		read_text("node/node0/compact", got, sizeof(got));
		ok(last.outcome == ZS_SORTED && last.compacted == want && !strcmp(got, want ? "1\n" : ""),
		   "%s (compact file '%s')", what[step], got);
	}
	unlink(root_path("state/node0.compacted_held"));
	unlink(root_path("kernel/quarantine/max_permille"));
	unlink(root_path("kernel/node0/quarantine_held_pages"));
	/* The site's quarantine= reaches the module before every sort. */
	read_text("kernel/quarantine/enabled", got, sizeof(got));
	ok(!strcmp(got, "1\n"), "quarantine=yes written to quarantine/enabled ('%s')", got);
	zs_sorter_close(s);

	/* A give-back or a compaction that does not end (a FIFO without a
	 * reader) is stopped at kernel_timeout: the node fails, what it was
	 * left as unknown. */
	static const struct {
		const char *fifo, *before, *after;
	} hangs[] = {
		{ "kernel/node0/quarantine_release", "quarantine full, 5.2% colliding: give back: ",
		  ": did not end within 1 s (kernel_timeout): stopped" },
		{ "node/node0/compact", "quarantine full, 5.2% colliding: ",
		  ": compaction did not end within 1 s (kernel_timeout): stopped" },
	};
	for (unsigned i = 0; i < sizeof(hangs) / sizeof(hangs[0]); i++) {
		char want[PATH_MAX + 160];

		full_files("52000");
		unlink(root_path(hangs[i].fifo));
		mkfifo(root_path(hangs[i].fifo), 0600);
		unlink(root_path("state/node0.compacted"));
		policy_for(&p, "kernel");
		s = NULL;
		t = (struct zs_tally){ 0 };
		if (zs_policy_set(&p, "kernel_timeout=1", NULL) || sorter_open(&p, &s, NULL)) {
			ok(0, "open with kernel_timeout=1");
			continue;
		}
		zs_sorter_sort(s, 0, &t, remember, NULL);
		ok(last.outcome == ZS_FAILED && last.stopped && !last.compacted && t.failed == 1 && t.stopped == 1,
		   "full, %s does not end: the node fails, counted as stopped (%s)", hangs[i].fifo,
		   zs_outcome_name(last.outcome));
		snprintf(want, sizeof(want), "%s%s%s", hangs[i].before, root_path(hangs[i].fifo),
			 hangs[i].after);
		is_str(last.msg, want, "... and says so");
		zs_sorter_close(s);
		unlink(root_path(hangs[i].fifo));
	}
	unlink(root_path("kernel/nodeid"));
	unlink(root_path("kernel/stats"));
	unlink(root_path("kernel/interface_version"));
	unlink(root_path("kernel/quarantine/stats"));
	unlink(root_path("kernel/quarantine/enabled"));
	unlink(root_path("kernel/node0/quarantine_release"));
}

/* The slots a step occupies, given to the next sort of a node through
 * its occupied file (a plain file here: it keeps what was written) right
 * before nodeid, once; a missing file gives none, a failing write none
 * either, said, and the sort goes on. */
static void occupied_slots(void)
{
	struct zs_policy p;
	struct zs_sorter *s = NULL;
	struct zs_tally t = { 0 };
	struct zs_occupied *o;
	unsigned char got[4096];
	char f[PATH_MAX];
	FILE *fp;
	size_t n;

	unlink(root_path("kernel/nodeid"));
	write_text("kernel/nodeid", "");
	full_files("0");
	write_text("kernel/node0/occupied", "");
	policy_for(&p, "kernel");
	ok(sorter_open(&p, &s, NULL) == 0 && s, "kernel sorter, our module");
	if (!s)
		return;
	/* 64 MiB of 4 KiB pages: 16384 slots, 2048 bytes. */
	o = calloc(2, sizeof(*o));
	o[0] = (struct zs_occupied){ .node = 0, .bits = calloc(2048, 1), .bytes = 2048, .slots = 16384, .set = 3 };
	o[1] = (struct zs_occupied){ .node = 1, .bits = calloc(2048, 1), .bytes = 2048, .slots = 16384, .set = 1 };
	o[0].bits[0] = 0x05;
	o[0].bits[2047] = 0x80;
	zs_sorter_occupy(s, o, 2);
	ok(zs_sorter_sort(s, 0, &t, remember, NULL) == 0 && last.outcome == ZS_SORTED && last.occupied == 3,
	   "the sort was given node 0's 3 slots");
	path(f, sizeof(f), "kernel/node0/occupied");
	fp = fopen(f, "rb");
	n = fp ? fread(got, 1, sizeof(got), fp) : 0;
	if (fp)
		fclose(fp);
	ok(n == 2048 && got[0] == 0x05 && got[1] == 0 && got[2047] == 0x80, "... the 2048 bytes of its bitmap, as given (%zu)", n);
	ok(t.occupied == 1 && t.sorted == 1, "tally: 1 sort with occupied slots");
	ok(access(root_path("kernel/node1/occupied"), F_OK) != 0, "node 1 is no target: nothing written for it");
	write_text("kernel/node0/occupied", "");
	zs_sorter_sort(s, 0, &t, remember, NULL);
	read_text("kernel/node0/occupied", (char *)got, sizeof(got));
	ok(last.occupied == 0 && !got[0] && t.occupied == 1, "the next round is given none: one round only");

	/* A module without the file (Intel's, an older one of ours). */
	unlink(root_path("kernel/node0/occupied"));
	o = calloc(1, sizeof(*o));
	o[0] = (struct zs_occupied){ .node = 0, .bits = calloc(2048, 1), .bytes = 2048, .slots = 16384, .set = 1 };
	zs_sorter_occupy(s, o, 1);
	ok(zs_sorter_sort(s, 0, &t, remember, NULL) == 0 && last.outcome == ZS_SORTED && last.occupied == 0,
	   "no occupied file: sorted without, nothing said");

	/* A write that fails: said, and the sort goes on. */
	ok(symlink("/dev/full", f) == 0, "node0/occupied -> /dev/full");
	o = calloc(1, sizeof(*o));
	o[0] = (struct zs_occupied){ .node = 0, .bits = calloc(2048, 1), .bytes = 2048, .slots = 16384, .set = 1 };
	zs_sorter_occupy(s, o, 1);
	ok(zs_sorter_sort(s, 0, &t, remember, NULL) == 0 && last.outcome == ZS_SORTED && last.occupied == -1,
	   "a failing write: sorted all the same, occupied -1");
	err_has(last.occupied_why, "node0/occupied: No space left", "... and says which file and why");
	unlink(f);
	zs_sorter_close(s);

	/* Intel's module: no interface version, nothing but nodeid. */
	unlink(root_path("kernel/interface_version"));
	write_text("kernel/node0/occupied", "");
	ok(sorter_open(&p, &s, NULL) == 0 && s, "kernel sorter, Intel's module");
	if (!s)
		return;
	o = calloc(1, sizeof(*o));
	o[0] = (struct zs_occupied){ .node = 0, .bits = calloc(2048, 1), .bytes = 2048, .slots = 16384, .set = 1 };
	o[0].bits[0] = 1;
	zs_sorter_occupy(s, o, 1);
	zs_sorter_sort(s, 0, &t, remember, NULL);
	read_text("kernel/node0/occupied", (char *)got, sizeof(got));
	ok(last.occupied == 0 && !got[0], "Intel's module is given none");
	zs_sorter_close(s);
	unlink(root_path("kernel/node0/occupied"));
	write_text("kernel/interface_version", "3\n");
}

int main(void)
{
	char d[PATH_MAX];

	if (!mkdtemp(root))
		return 1;
	path(d, sizeof(d), "kernel");
	mkdir(d, 0755);
	path(d, sizeof(d), "kernel/quarantine");
	mkdir(d, 0755);
	path(d, sizeof(d), "kernel/node0");
	mkdir(d, 0755);
	path(d, sizeof(d), "node");
	mkdir(d, 0755);
	kernel_backend();
	stamps();
	recent_rule();
	freed_since();
	state_directory();
	compaction_backend();
	degraded_sites();
	no_cache();
	full_quarantine();
	occupied_slots();
	tally_lines();
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	if (system(cmd))
		printf("# cleanup failed\n");
	return done_testing();
}
