// SPDX-License-Identifier: GPL-2.0-or-later
/* The textfile metrics and the users' job reports: concurrent writers lose
 * no update, a reader never sees a half-written file, unsafe directories
 * are refused, records survive odd text, old records expire. */
#include "config.h"
#include "metrics.h"
#include "policy.h"
#include "report.h"
#include "textfile.h"
#include "tap.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define WRITERS 4
#define UPDATES 150

static char top[] = "/tmp/zs-test-metrics.XXXXXX";

static struct zs_policy policy_in(const char *sub)
{
	struct zs_policy p;
	char dir[PATH_MAX + 32];

	/* The words of a plugstack.conf line reach the metrics and reports. */
	zs_policy_defaults(&p);
	snprintf(dir, sizeof(dir), "statedir=%s/%s/state", top, sub);
	zs_policy_set(&p, dir, NULL);
	snprintf(dir, sizeof(dir), "prometheus_dir=%s/%s/prom", top, sub);
	zs_policy_set(&p, dir, NULL);
	snprintf(dir, sizeof(dir), "%s/%s", top, sub);
	mkdir(dir, 0755);
	return p;
}

static long read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	long got = 0, r;

	if (fd < 0)
		return -1;
	while ((r = read(fd, buf + got, len - 1 - (size_t)got)) > 0)
		got += r;
	close(fd);
	buf[got] = '\0';
	return got;
}

/* A complete zonesort.prom ends with the last family the writers produce:
 * the sample's timestamp. A torn read ends anywhere else. */
static bool complete(const char *text)
{
	const char *last = strrchr(text, '\n');

	if (!last || last[1])
		return false;
	while (last > text && last[-1] != '\n')
		last--;
	return !strncmp(last, "zonesort_sampled_conflict_timestamp_seconds{", 44) &&
	       strstr(text, "# TYPE zonesort_sorts_total counter\n");
}

static unsigned long long counter(const char *text, const char *series)
{
	const char *at = strstr(text, series);

	return at ? strtoull(at + strlen(series), NULL, 10) : ~0ULL;
}

static void concurrent_writers(void)
{
	struct zs_policy p = policy_in("concurrent");
	struct zs_sample sm = { .fraction = 0.25, .random = 0.5, .pages = 100, .samples = 1 };
	char err[ZS_ERRLEN], path[PATH_MAX + 32], *buf = malloc(1 << 16);
	pid_t kids[WRITERS];
	unsigned reads = 0, torn = 0;
	int status, failed = 0;

	ok(!zs_metrics_sample(&p.metrics, "n1", &sm, err), "a first sample is recorded: %s", err);
	snprintf(path, sizeof(path), "%s/" ZS_METRICS_FILE, p.metrics.prometheus_dir);
	for (int w = 0; w < WRITERS; w++) {
		kids[w] = fork();
		if (kids[w] == 0) {
			for (int i = 0; i < UPDATES; i++) {
				struct zs_tally before = { 0 }, after = { .rounds = 1, .sorted = 1, .busy = w == 0, .seconds = 0.001 };

				if (zs_metrics_sorts(&p.metrics, w ? NULL : "n1", "kernel", false, &before, &after, err) ||
				    (i % 10 == 0 && zs_metrics_sample(&p.metrics, NULL, &sm, err)))
					_exit(1);
			}
			_exit(0);
		}
	}
	/* Read while they write: every read must be a whole file. */
	for (;;) {
		bool running = false;

		for (int w = 0; w < WRITERS; w++)
			running |= kids[w] > 0 && waitpid(kids[w], &status, WNOHANG) == 0;
		if (read_file(path, buf, 1 << 16) >= 0) {
			reads++;
			torn += !complete(buf);
		}
		if (!running)
			break;
		/* A reader that never sleeps takes a CPU the writers need on a
		 * small, loaded machine (node_exporter reads every few seconds). */
		usleep(500);
	}
	for (int w = 0; w < WRITERS; w++) {
		waitpid(kids[w], &status, 0);
		failed += !(errno == ECHILD || (WIFEXITED(status) && !WEXITSTATUS(status)));
	}
	ok(!failed, "every writer finished every update (%d failed)", failed);
	ok(reads > 50 && !torn, "%u reads during %d writes, %u torn", reads, WRITERS * UPDATES, torn);
	ok(read_file(path, buf, 1 << 16) > 0, "the metrics file is there");
	ok(counter(buf, "zonesort_sorts_total{node=\"n1\",outcome=\"sorted\"} ") == WRITERS * UPDATES,
	   "sorted counts every update of every writer (%llu of %d)",
	   counter(buf, "zonesort_sorts_total{node=\"n1\",outcome=\"sorted\"} "), WRITERS * UPDATES);
	ok(counter(buf, "zonesort_sorts_total{node=\"n1\",outcome=\"busy\"} ") == UPDATES,
	   "busy counts the first writer's updates (%llu)",
	   counter(buf, "zonesort_sorts_total{node=\"n1\",outcome=\"busy\"} "));
	ok(strstr(buf, "zonesort_sorter_up{node=\"n1\",backend=\"kernel\"} 1\n") != NULL,
	   "the sorter is up, and the node name of the first writer stays");
	ok(strstr(buf, "zonesort_sampled_conflict_ratio{node=\"n1\"} 0.250000\n") != NULL,
	   "the sample is kept through the sort updates");
	free(buf);
}

static void sorter_state(void)
{
	struct zs_policy p = policy_in("sorter");
	struct zs_tally none = { 0 }, failed = { .rounds = 1, .failed = 1 }, recent = { .rounds = 1, .recent = 1 };
	char err[ZS_ERRLEN], path[PATH_MAX + 32], buf[8192];

	snprintf(path, sizeof(path), "%s/" ZS_METRICS_FILE, p.metrics.prometheus_dir);
	zs_metrics_sorts(&p.metrics, "n2", "kernel", false, &none, &failed, err);
	read_file(path, buf, sizeof(buf));
	ok(strstr(buf, "zonesort_sorter_up{node=\"n2\",backend=\"kernel\"} 0\n") != NULL, "a failed sort: sorter down");
	zs_metrics_sorts(&p.metrics, "n2", "kernel", false, &none, &recent, err);
	read_file(path, buf, sizeof(buf));
	ok(strstr(buf, "zonesort_sorter_up{node=\"n2\",backend=\"kernel\"} 0\n") != NULL, "a skipped round changes nothing");
	ok(!strstr(buf, "zonesort_last_sort_timestamp_seconds"), "no sort yet, no last-sort time");
	zs_metrics_sorts(&p.metrics, "n2", "none", false, &none, &recent, err);
	read_file(path, buf, sizeof(buf));
	ok(strstr(buf, "zonesort_sorter_up{node=\"n2\",backend=\"none\"} 0\n") != NULL, "no sorter: down, backend none");
	ok(!strstr(buf, "zonesort_sampled"), "no sample, no sample series");

	struct zs_policy off = p;

	off.metrics.prometheus_dir[0] = '\0';
	snprintf(off.metrics.statedir, sizeof(off.metrics.statedir), "%s/never", top);
	ok(!zs_metrics_sorts(&off.metrics, "n2", "kernel", false, &none, &failed, err) && access(off.metrics.statedir, F_OK),
	   "without prometheus_dir nothing is written");
}

/* A node with nothing to sort (no memory-side cache, nocache=skip) is never
 * sorted, but its job epilog records each job's end: its file has no
 * sorter to call down, or every CPU-only node of a cluster would raise
 * ZonesortSorterDown. */
static void nothing_to_sort(void)
{
	struct zs_policy p = policy_in("nocache");
	char err[ZS_ERRLEN], path[PATH_MAX + 32], buf[8192];

	snprintf(path, sizeof(path), "%s/" ZS_METRICS_FILE, p.metrics.prometheus_dir);
	ok(!zs_metrics_job_end(&p.metrics, "cpu1", err), "a job's end on a node never sorted is recorded");
	read_file(path, buf, sizeof(buf));
	ok(strstr(buf, "zonesort_last_job_end_timestamp_seconds{node=\"cpu1\"} ") != NULL, "... as the job end time");
	ok(!strstr(buf, "zonesort_sorter_up"), "... with no zonesort_sorter_up: no sorter was ever used there");
	ok(!strstr(buf, "zonesort_sorter_degraded"), "... nor zonesort_sorter_degraded");
	ok(!zs_metrics_job_end(&p.metrics, "cpu1", err), "a second job's end");
	read_file(path, buf, sizeof(buf));
	ok(!strstr(buf, "zonesort_sorter_up"), "... still no zonesort_sorter_up (the state file keeps it unknown)");
}

/* A cache node without its kernel sorter: degraded 1, its compactions and
 * unsorted rounds by outcome, never as sorted; 0 again once it sorts. */
static void degraded_state(void)
{
	struct zs_policy p = policy_in("degraded");
	struct zs_tally none = { 0 }, fell = { .rounds = 1, .fallback = 1 },
			left = { .rounds = 1, .degraded = 2 }, sorted = { .rounds = 1, .sorted = 1 };
	char err[ZS_ERRLEN], path[PATH_MAX + 32], buf[8192];

	snprintf(path, sizeof(path), "%s/" ZS_METRICS_FILE, p.metrics.prometheus_dir);
	zs_metrics_sorts(&p.metrics, "n4", "compact", true, &none, &fell, err);
	zs_metrics_sorts(&p.metrics, "n4", "none", true, &none, &left, err);
	read_file(path, buf, sizeof(buf));
	ok(strstr(buf, "zonesort_sorter_degraded{node=\"n4\"} 1\n") != NULL, "degraded: the gauge is 1");
	ok(strstr(buf, "zonesort_sorts_total{node=\"n4\",outcome=\"fallback\"} 1\n") != NULL &&
	   strstr(buf, "zonesort_sorts_total{node=\"n4\",outcome=\"degraded\"} 2\n") != NULL,
	   "compactions in place of a sort and unsorted rounds have outcomes of their own");
	ok(strstr(buf, "zonesort_sorts_total{node=\"n4\",outcome=\"sorted\"} 0\n") != NULL,
	   "... and none counts as sorted");
	ok(!strstr(buf, "zonesort_last_sort_timestamp_seconds"), "... nor as the last sort");
	ok(strstr(buf, "zonesort_sorter_up{node=\"n4\",backend=\"compact\"} 1\n") != NULL,
	   "a round that ran nothing leaves the sorter that last ran (compaction, up)");
	ok(strstr(buf, "# TYPE zonesort_sorter_degraded gauge\n") != NULL, "the gauge is typed");
	zs_metrics_sorts(&p.metrics, "n4", "kernel", false, &none, &sorted, err);
	read_file(path, buf, sizeof(buf));
	ok(strstr(buf, "zonesort_sorter_degraded{node=\"n4\"} 0\n") != NULL, "once the module sorts: 0");
}

/* The kernel's refusal of the module, by name, and its end once it loads;
 * an unchanged answer is not written again. */
static void module_refusal(void)
{
	struct zs_policy p = policy_in("module");
	struct zs_tally none = { 0 }, sorted = { .rounds = 1, .sorted = 1 };
	char err[ZS_ERRLEN], path[PATH_MAX + 32], buf[8192];
	struct stat before, after;

	snprintf(path, sizeof(path), "%s/" ZS_METRICS_FILE, p.metrics.prometheus_dir);
	zs_metrics_sorts(&p.metrics, "n3", "compact", false, &none, &sorted, err);
	read_file(path, buf, sizeof(buf));
	ok(!strstr(buf, "zonesort_module_refused"), "no load tried: no refusal series");
	ok(!zs_metrics_module(&p.metrics, "signature", err), "a refusal is recorded: %s", err);
	read_file(path, buf, sizeof(buf));
	ok(strstr(buf, "zonesort_module_refused{node=\"n3\",reason=\"signature\"} 1\n") != NULL,
	   "the metrics name it: reason signature, 1");
	ok(strstr(buf, "zonesort_sorter_up{node=\"n3\",backend=\"compact\"} 1\n") != NULL,
	   "... next to the sorter that is used instead");
	stat(path, &before);
	ok(!zs_metrics_module(&p.metrics, "signature", err), "the same refusal again");
	stat(path, &after);
	ok(before.st_ino == after.st_ino, "... does not rewrite the file");
	zs_metrics_sorts(&p.metrics, "n3", "compact", false, &none, &sorted, err);
	read_file(path, buf, sizeof(buf));
	ok(strstr(buf, "reason=\"signature\"} 1\n") != NULL, "sorts keep the refusal");
	zs_metrics_module(&p.metrics, "none", err);
	read_file(path, buf, sizeof(buf));
	ok(strstr(buf, "zonesort_module_refused{node=\"n3\",reason=\"none\"} 0\n") != NULL &&
	   !strstr(buf, "reason=\"signature\""), "once the module loads: reason none, 0");
}

static void unsafe_dirs(void)
{
	char dir[PATH_MAX], link[PATH_MAX + 8], err[ZS_ERRLEN];
	int fd;

	snprintf(dir, sizeof(dir), "%s/open", top);
	mkdir(dir, 0777);
	chmod(dir, 0777);
	fd = zs_textfile_dir(dir, false, 0755, err);
	ok(fd < 0, "a directory others may write is refused");
	err_has(err, "mode 0777", "naming its mode");
	snprintf(link, sizeof(link), "%s/link", top);
	snprintf(dir, sizeof(dir), "%s/concurrent", top);
	symlink(dir, link);
	fd = zs_textfile_dir(link, false, 0755, err);
	ok(fd < 0, "a symbolic link is refused: %s", err);
	fd = zs_textfile_dir("relative/dir", false, 0755, err);
	ok(fd < 0, "a relative path is refused");

	/* prometheus_dir: every component is checked, as for the state
	 * directory, not only the last one. */
	char parent[PATH_MAX], prom[PATH_MAX + 8];

	snprintf(parent, sizeof(parent), "%s/open", top);
	snprintf(prom, sizeof(prom), "%s/prom", parent);
	mkdir(prom, 0755);
	ok(zs_prom_publish(prom, "x.prom", "x 1\n", 4, err) == -1,
	   "prometheus_dir under a directory others may write is refused");
	err_has(err, "prometheus_dir: refusing a directory on the way to", "saying it is a directory on the way");
	char want[128];

	snprintf(want, sizeof(want), "/open: mode 0777, owner uid %u: group or others may write it without the sticky bit",
		 (unsigned)geteuid());
	err_has(err, want, "naming that directory and why");
	ok(access(prom, F_OK) == 0 && access(strcat(prom, "/x.prom"), F_OK) == -1, "and nothing is written there");
	chmod(parent, 01777);
	snprintf(prom, sizeof(prom), "%s/prom", parent);
	err[0] = '\0';
	ok(zs_prom_publish(prom, "x.prom", "x 1\n", 4, err) == 0, "a sticky directory on the way (like /tmp) is accepted: %s", err);
	chmod(parent, 0777);
}

/* node_exporter's directory belongs to its own user on Debian
 * (/var/lib/prometheus/node-exporter, prometheus's, and so is its
 * parent): root writes there through a directory descriptor, a fresh
 * O_EXCL file and rename, and follows no link on the way or at the end. */
static void foreign_dirs(void)
{
	char base[PATH_MAX], mid[PATH_MAX + 16], prom[PATH_MAX + 32], file[PATH_MAX + 48];
	char victim[PATH_MAX + 16], link[PATH_MAX + 32], err[ZS_ERRLEN], buf[256], want[128];
	/* As root (the tests' usual case) the directories go to another
	 * user; a package build runs them unprivileged, as their owner. */
	const uid_t owner = geteuid() == 0 ? 65534 : geteuid();
	struct stat st;

	snprintf(base, sizeof(base), "%s/foreign", top);
	snprintf(mid, sizeof(mid), "%s/prometheus", base);
	snprintf(prom, sizeof(prom), "%s/node-exporter", mid);
	snprintf(victim, sizeof(victim), "%s/victim", top);
	mkdir(base, 0755);
	mkdir(mid, 0755);
	mkdir(prom, 0755);
	ok(!chown(mid, owner, (gid_t)-1) && !chown(prom, owner, (gid_t)-1),
	   "a textfile directory and its parent given to uid %u, mode 0755", (unsigned)owner);
	FILE *vf = fopen(victim, "w");

	if (vf) {
		fputs("precious\n", vf);
		fclose(vf);
	}
	snprintf(file, sizeof(file), "%s/x.prom", prom);
	ok(!symlink(victim, file), "its owner plants x.prom -> a file of root's");
	err[0] = '\0';
	ok(zs_prom_publish(prom, "x.prom", "x 1\n", 4, err) == 0, "writing there is accepted: %s", err);
	ok(read_file(victim, buf, sizeof(buf)) > 0 && !strcmp(buf, "precious\n"), "the link's target is untouched");
	ok(!lstat(file, &st) && S_ISREG(st.st_mode) && st.st_uid == geteuid() && (st.st_mode & 07777) == 0644,
	   "x.prom is a regular file of the writer's, mode 0644, in place of the link");
	ok(read_file(file, buf, sizeof(buf)) > 0 && !strcmp(buf, "x 1\n"), "... holding what was written");
	DIR *d = opendir(prom);
	unsigned others = 0;

	for (struct dirent *e; d && (e = readdir(d));)
		others += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	if (d)
		closedir(d);
	ok(others == 1, "no temporary file is left behind (%u entries)", others);

	/* A link on the way, whoever owns it, is refused and named. */
	snprintf(link, sizeof(link), "%s/linked", base);
	ok(!symlink(mid, link), "a link to the parent, owned by root");
	snprintf(file, sizeof(file), "%s/node-exporter", link);
	ok(zs_prom_publish(file, "y.prom", "y 1\n", 4, err) == -1, "a path through a link is refused");
	err_has(err, "linked: a symbolic link (to ", "naming the link");
	err_has(err, "no link is followed", "... and why");
	ok(zs_prom_publish(link, "y.prom", "y 1\n", 4, err) == -1, "a link as the last component too");
	ok(access(strcat(strcpy(buf, mid), "/y.prom"), F_OK), "and nothing is written through it");

	/* Group write without the sticky bit, on the last component. */
	chmod(prom, 0775);
	ok(zs_prom_publish(prom, "z.prom", "z 1\n", 4, err) == -1, "a group-writable textfile directory is refused");
	snprintf(want, sizeof(want), "mode 0775, owner uid %u: group or others may write it without the sticky bit",
		 (unsigned)owner);
	err_has(err, want, "naming its mode, owner and why");
	chmod(prom, 01777);
	err[0] = '\0';
	ok(zs_prom_publish(prom, "z.prom", "z 1\n", 4, err) == 0, "a sticky one (1777) is accepted: %s", err);
	chmod(prom, 0755);
}

static void records(void)
{
	struct zs_report_step r = { .time = 1700000000.5, .job = 42, .tally = { .rounds = 3, .sorted = 2, .recent = 1, .seconds = 0.25, .churn = 1, .freed = 1 },
				    .sampling = true, .sample = { 0.03, 0.39, 1234, 2 }, .churn_watch = 60 }, back;
	char *line;

	snprintf(r.where, sizeof(r.where), "step 0");
	snprintf(r.node, sizeof(r.node), "n\t1");
	snprintf(r.mode, sizeof(r.mode), "every 30 s");
	snprintf(r.backend, sizeof(r.backend), "kernel");
	snprintf(r.note, sizeof(r.note), "100%% odd\nnote=x");
	line = zs_report_format(&r);
	ok(line && strchr(line, '\n') == line + strlen(line) - 1, "a record is one line");
	ok(line && !zs_report_parse(line, &back), "and reads back");
	is_str(back.node, "n\t1", "a tab in a value survives");
	is_str(back.note, "100% odd\nnote=x", "so do newlines, %% and =");
	ok(back.job == 42 && back.tally.sorted == 2 && back.tally.recent == 1 && back.sample.pages == 1234 &&
	   back.sample.fraction == 0.03 && back.sampling, "numbers survive");
	ok(back.tally.churn == 1 && back.churn_watch == 60, "sorts after memory churn and the watch survive");
	ok(back.tally.freed == 1, "so do sorts despite a recent one");
	ok(!zs_report_parse("time=1700000000.500\tjob=42\twhere=prolog\tsorted=1\tchurn=0\tbackend=kernel\n", &back) &&
	   back.tally.sorted == 1 && back.tally.freed == 0, "an older record, without freed=: none of them");
	ok(zs_report_parse("garbage\n", &back) == -1, "a line without job and where is refused");
	free(line);

	/* Reports are root's files, read by their users through ACLs. */
	if (geteuid()) {
		skip("writing users' reports (root's files with ACLs) needs root",
		     "records are written, read back and expired");
		return;
	}
	struct zs_policy p = policy_in("reports");
	char err[ZS_ERRLEN], path[PATH_MAX + 64];
	struct zs_report_step *steps;
	unsigned n, removed;
	uid_t owner;

	ok(!zs_report_add(&p.report, getuid(), &r, err) && !zs_report_add(&p.report, getuid(), &r, err), "two records added: %s", err);
	ok(zs_report_load(&p.report, 42, &steps, &n, &owner, err) == ZS_REPORT_FOUND && n == 2 && owner == getuid(),
	   "both are read back (%u)", n);
	free(steps);
	ok(zs_report_load(&p.report, 43, &steps, &n, &owner, err) == ZS_REPORT_MISSING, "another job has none");
	snprintf(path, sizeof(path), "%s/reports/%u/jobs/42", p.report.statedir, (unsigned)getuid());
	struct stat st;

	ok(!stat(path, &st) && (st.st_mode & 07777) == 0400, "the record has mode 0400");

	/* Another user's record: root's file, readable by that user through
	 * an ACL entry; statedir/reports lists nobody's reports. */
	char upath[PATH_MAX + 64], acl[64];
	struct zs_report_step u = r;

	u.job = 77;
	ok(!zs_report_add(&p.report, 65534, &u, err), "a record of uid 65534's job: %s", err);
	snprintf(upath, sizeof(upath), "%s/reports/65534/jobs/77", p.report.statedir);
	ok(!stat(upath, &st) && st.st_uid == 0 && (st.st_mode & 0777) == 0440,
	   "it is root's, mode 0440 (the ACL mask: read) (uid %u mode %o)", (unsigned)st.st_uid,
	   (unsigned)(st.st_mode & 07777));
	ssize_t alen = getxattr(upath, "system.posix_acl_access", acl, sizeof(acl));

	ok(alen == 44 && acl[0] == 2 && !memcmp(acl + 12, "\x02\x00\x04\x00\xfe\xff\x00\x00", 8),
	   "with an ACL entry: user 65534 may read (%zd bytes)", alen);
	snprintf(upath, sizeof(upath), "%s/reports", p.report.statedir);
	ok(!stat(upath, &st) && (st.st_mode & 0777) == 0711, "statedir/reports is mode 0711: nobody lists it");
	snprintf(upath, sizeof(upath), "%s/reports/65534", p.report.statedir);
	ok(!stat(upath, &st) && st.st_uid == 0 && (st.st_mode & 0777) == 0710,
	   "the user's directory is root's, 0710 with the ACL (mask --x: the user passes through), others nothing (%o)",
	   (unsigned)(st.st_mode & 07777));
	alen = getxattr(upath, "system.posix_acl_access", acl, sizeof(acl));
	ok(alen == 44 && !memcmp(acl + 12, "\x02\x00\x01\x00\xfe\xff\x00\x00", 8),
	   "... its ACL entry: user 65534 may search it, not list it");
	struct stat before = st, after;
	struct zs_report_step u2 = u;

	u2.job = 78;
	sleep(1);
	ok(!zs_report_add(&p.report, 65534, &u2, err) && !stat(upath, &after) &&
	   after.st_mtime == before.st_mtime && after.st_ctime == before.st_ctime && after.st_size == before.st_size &&
	   after.st_nlink == before.st_nlink,
	   "another record leaves the user's directory as it was: its time and size tell nothing of the jobs");
	snprintf(upath, sizeof(upath), "%s/reports/65534/jobs", p.report.statedir);
	ok(!stat(upath, &st) && st.st_uid == 0 && (st.st_mode & 0777) == 0750,
	   "the records are in its jobs directory: root's, 0750 with the ACL (mask r-x) (%o)", (unsigned)(st.st_mode & 07777));
	snprintf(upath, sizeof(upath), "%s/reports/65534/jobs/78", p.report.statedir);
	unlink(upath);
	ok(zs_report_load(&p.report, 77, &steps, &n, &owner, err) == ZS_REPORT_FOUND && owner == 65534,
	   "root finds it, and whose it is");
	free(steps);
	/* Root's clock: a report stamped far ahead does not stay for ever. */
	snprintf(upath, sizeof(upath), "%s/reports/65534/jobs/77", p.report.statedir);
	struct timespec ahead[2] = { { time(NULL) + 3 * 86400, 0 }, { time(NULL) + 3 * 86400, 0 } };

	utimensat(AT_FDCWD, upath, ahead, 0);
	ok(!zs_report_expire(&p.report, time(NULL), &removed, err) && removed == 1 && access(upath, F_OK),
	   "a report stamped days ahead is removed");
	ok(!zs_report_expire(&p.report, time(NULL), &removed, err) && removed == 0, "a fresh record is kept");
	/* Counted from the record's own time: a file's mtime can be a second
	 * ahead of time(), whose clock is coarser (multigrain timestamps). */
	ok(!zs_report_expire(&p.report, st.st_mtime + 7 * 86400, &removed, err) && removed == 1 && access(path, F_OK),
	   "after report_days it is removed");
	/* A record of the layout before the jobs directory goes with the next
	 * expiry. */
	snprintf(upath, sizeof(upath), "%s/reports/65534/76", p.report.statedir);
	int old_fd = open(upath, O_WRONLY | O_CREAT | O_EXCL, 0400);

	ok(old_fd >= 0 && !close(old_fd) && !zs_report_expire(&p.report, time(NULL), &removed, err) && access(upath, F_OK),
	   "a record of the older layout (reports/UID/JOB) is removed");
	p.report.days = 0;
	ok(!zs_report_add(&p.report, getuid(), &r, err) && access(path, F_OK), "report_days=0 writes none");
}

int main(void)
{
	if (!mkdtemp(top)) {
		printf("Bail out! mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	chmod(top, 0755);
	concurrent_writers();
	sorter_state();
	nothing_to_sort();
	module_refusal();
	degraded_state();
	unsafe_dirs();
	foreign_dirs();
	records();
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", top);
	if (system(cmd))
		printf("# could not remove %s\n", top);
	printf("1..%d\n", tap_count);
	return tap_failures ? 1 : 0;
}
