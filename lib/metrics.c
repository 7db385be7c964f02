// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"
#include "metrics.h"
#include "errbuf.h"
#include "nodeclass.h"
#include "statedir.h"
#include "textfile.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define STATE_FILE "metrics.state"
#define LOCK_FILE "metrics.lock"
/* Longer than any writer holds the lock (a read, two small writes). */
#define LOCK_WAIT_MS 2000

/* What statedir/metrics.state holds: one "key value" line per field. */
struct state {
	char node[128];
	char backend[16];
	uint64_t sorted, recent, busy, failed, fallback, degraded;
	double seconds;
	int sorter_up;			/* -1: not known yet */
	int sorter_degraded;		/* -1: not known yet; zs_sorter_degraded */
	double last_sort;		/* epoch seconds, 0: never */
	double last_job_end;		/* epoch seconds, 0: never */
	bool sampled;
	double sample_fraction, sample_random, sample_time;
	uint64_t sample_pages;
	char module_refused[16];	/* modsig.h name of the last load's refusal; "": never tried */
};

static double epoch_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void copy_word(char *dst, size_t len, const char *src)
{
	size_t n = strcspn(src, " \t\r\n");

	if (n >= len)
		n = len - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* Unknown or malformed lines are ignored: a damaged state file costs the
 * counters (Prometheus sees a reset), never an update. */
static void state_parse(struct state *s, char *text)
{
	char *save = NULL;

	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char key[32];
		const char *v = strchr(line, ' ');

		if (!v || (size_t)(v - line) >= sizeof(key))
			continue;
		memcpy(key, line, (size_t)(v - line));
		key[v - line] = '\0';
		v++;
		if (!strcmp(key, "node"))
			copy_word(s->node, sizeof(s->node), v);
		else if (!strcmp(key, "backend"))
			copy_word(s->backend, sizeof(s->backend), v);
		else if (!strcmp(key, "sorted"))
			s->sorted = strtoull(v, NULL, 10);
		else if (!strcmp(key, "recent"))
			s->recent = strtoull(v, NULL, 10);
		else if (!strcmp(key, "busy"))
			s->busy = strtoull(v, NULL, 10);
		else if (!strcmp(key, "failed"))
			s->failed = strtoull(v, NULL, 10);
		else if (!strcmp(key, "fallback"))
			s->fallback = strtoull(v, NULL, 10);
		else if (!strcmp(key, "degraded"))
			s->degraded = strtoull(v, NULL, 10);
		else if (!strcmp(key, "sorter_degraded"))
			s->sorter_degraded = atoi(v);
		else if (!strcmp(key, "seconds"))
			s->seconds = strtod(v, NULL);
		else if (!strcmp(key, "sorter_up"))
			s->sorter_up = atoi(v);
		else if (!strcmp(key, "last_sort"))
			s->last_sort = strtod(v, NULL);
		else if (!strcmp(key, "last_job_end"))
			s->last_job_end = strtod(v, NULL);
		else if (!strcmp(key, "sample_fraction"))
			s->sampled = true, s->sample_fraction = strtod(v, NULL);
		else if (!strcmp(key, "sample_random"))
			s->sample_random = strtod(v, NULL);
		else if (!strcmp(key, "sample_pages"))
			s->sample_pages = strtoull(v, NULL, 10);
		else if (!strcmp(key, "sample_time"))
			s->sample_time = strtod(v, NULL);
		else if (!strcmp(key, "module_refused"))
			copy_word(s->module_refused, sizeof(s->module_refused), v);
	}
}

static char *state_format(const struct state *s, size_t *len)
{
	char *text = NULL;
	FILE *f = open_memstream(&text, len);

	if (!f)
		return NULL;
	fprintf(f, "node %s\nbackend %s\nsorted %" PRIu64 "\nrecent %" PRIu64 "\nbusy %" PRIu64
		   "\nfailed %" PRIu64 "\nfallback %" PRIu64 "\ndegraded %" PRIu64
		   "\nseconds %.6f\nsorter_up %d\nsorter_degraded %d\nlast_sort %.3f\n",
		s->node, s->backend[0] ? s->backend : "none", s->sorted, s->recent, s->busy,
		s->failed, s->fallback, s->degraded, s->seconds, s->sorter_up, s->sorter_degraded,
		s->last_sort);
	if (s->last_job_end > 0)
		fprintf(f, "last_job_end %.3f\n", s->last_job_end);
	if (s->sampled)
		fprintf(f, "sample_fraction %.6f\nsample_random %.6f\nsample_pages %" PRIu64
			   "\nsample_time %.3f\n",
			s->sample_fraction, s->sample_random, s->sample_pages, s->sample_time);
	if (s->module_refused[0])
		fprintf(f, "module_refused %s\n", s->module_refused);
	if (fclose(f)) {
		free(text);
		return NULL;
	}
	return text;
}

void zs_prom_family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

void zs_prom_label(FILE *f, const char *value)
{
	putc('"', f);
	for (; *value; value++) {
		if (*value == '\\' || *value == '"')
			fprintf(f, "\\%c", *value);
		else if (*value == '\n')
			fputs("\\n", f);
		else
			putc(*value, f);
	}
	putc('"', f);
}

int zs_prom_publish(const char *dir, const char *name, const char *text, size_t len, char *err)
{
	char why[ZS_ERRLEN];
	/* node_exporter's directory may be another user's (statedir.h): no
	 * link is followed on the way, and the file is created fresh. */
	int fd = zs_publicdir_open("prometheus_dir", dir, true, why);
	int rc;

	if (fd < 0)
		return zs_fail(err, "%s", why);
	/* node_exporter runs as an unprivileged user: the file is for all. */
	rc = zs_textfile_replace(fd, name, text, len, 0644, (uid_t)-1, why);
	close(fd);
	return rc ? zs_fail(err, "prometheus_dir %s: %s", dir, why) : 0;
}

static void sample_line(FILE *f, const char *name, const char *node, int decimals, double v)
{
	fprintf(f, "%s{node=", name);
	zs_prom_label(f, node);
	fprintf(f, "} %.*f\n", decimals, v);
}

static char *render(const struct state *s, size_t *len)
{
	static const char *outcomes[] = { "sorted", "recent", "busy", "failed", "fallback", "degraded" };
	const uint64_t counts[] = { s->sorted, s->recent, s->busy, s->failed, s->fallback, s->degraded };
	char *text = NULL;
	FILE *f = open_memstream(&text, len);

	if (!f)
		return NULL;
	zs_prom_family(f, "zonesort_sorts_total", "counter",
		       "Sorts of the free lists of a NUMA node by the zonesort SPANK plugin and its periodic helper, by outcome: sorted, recent (skipped: sorted less than the minimum interval before), busy (skipped: another sort was running), failed, fallback (degraded: compacted in place of a sort), degraded (degraded: left unsorted).");
	for (unsigned i = 0; i < sizeof(outcomes) / sizeof(outcomes[0]); i++) {
		fputs("zonesort_sorts_total{node=", f);
		zs_prom_label(f, s->node);
		fprintf(f, ",outcome=\"%s\"} %" PRIu64 "\n", outcomes[i], counts[i]);
	}
	zs_prom_family(f, "zonesort_sort_seconds_total", "counter",
		       "Time spent sorting free lists, in seconds.");
	sample_line(f, "zonesort_sort_seconds_total", s->node, 6, s->seconds);
	/* Unknown until a sort round ran: a node with nothing to sort (no
	 * memory-side cache) records its jobs' ends but has no sorter to be
	 * up or down. */
	if (s->sorter_up >= 0) {
		zs_prom_family(f, "zonesort_sorter_up", "gauge",
			       "1 when the sorter worked at its last use, 0 when the node has none or it failed.");
		fputs("zonesort_sorter_up{node=", f);
		zs_prom_label(f, s->node);
		fputs(",backend=", f);
		zs_prom_label(f, s->backend[0] ? s->backend : "none");
		fprintf(f, "} %d\n", s->sorter_up > 0);
	}
	if (s->sorter_degraded >= 0) {
		zs_prom_family(f, "zonesort_sorter_degraded", "gauge",
			       "1 when this node has a memory-side cache but not its kernel sorter (module missing, refused or of another interface version) at the last use: compaction or nothing stands in (compact_fallback=); the plugin's summary line and zonesort status say why. 0 otherwise.");
		sample_line(f, "zonesort_sorter_degraded", s->node, 0, s->sorter_degraded);
	}
	if (s->last_sort > 0) {
		zs_prom_family(f, "zonesort_last_sort_timestamp_seconds", "gauge",
			       "When a NUMA node of this machine was last sorted, in seconds since the epoch.");
		sample_line(f, "zonesort_last_sort_timestamp_seconds", s->node, 3, s->last_sort);
	}
	if (s->last_job_end > 0) {
		zs_prom_family(f, "zonesort_last_job_end_timestamp_seconds", "gauge",
			       "When a job last ended on this node (the plugin's job epilog, which Slurm runs just before the Epilog script), in seconds since the epoch.");
		sample_line(f, "zonesort_last_job_end_timestamp_seconds", s->node, 3, s->last_job_end);
	}
	if (s->module_refused[0]) {
		bool refused = strcmp(s->module_refused, "none") != 0;

		zs_prom_family(f, "zonesort_module_refused", "gauge",
			       "1 when the kernel refused the last load of the sorter's kernel module (modprobe=), with the reason: signature (Secure Boot, module.sig_enforce), lockdown or disabled (kernel.modules_disabled); 0 with reason none once it loads.");
		fputs("zonesort_module_refused{node=", f);
		zs_prom_label(f, s->node);
		fputs(",reason=", f);
		zs_prom_label(f, s->module_refused);
		fprintf(f, "} %d\n", refused);
	}
	if (s->sampled) {
		zs_prom_family(f, "zonesort_sampled_conflict_ratio", "gauge",
			       "Fraction (0-1) of the last sampled job step's pages that shared a memory-side cache slot beyond its ways (sample_conflicts=yes).");
		sample_line(f, "zonesort_sampled_conflict_ratio", s->node, 6, s->sample_fraction);
		zs_prom_family(f, "zonesort_sampled_conflict_random_ratio", "gauge",
			       "The conflict fraction (0-1) random placement of as many pages would give, for comparison.");
		sample_line(f, "zonesort_sampled_conflict_random_ratio", s->node, 6, s->sample_random);
		zs_prom_family(f, "zonesort_sampled_pages", "gauge",
			       "Pages of the last sampled job step.");
		sample_line(f, "zonesort_sampled_pages", s->node, 0, (double)s->sample_pages);
		zs_prom_family(f, "zonesort_sampled_conflict_timestamp_seconds", "gauge",
			       "When the last job step was sampled, in seconds since the epoch.");
		sample_line(f, "zonesort_sampled_conflict_timestamp_seconds", s->node, 3, s->sample_time);
	}
	if (fclose(f)) {
		free(text);
		return NULL;
	}
	return text;
}

/* Fills an empty node name from $SLURMD_NODENAME, else the short host name. */
static void default_node(char *node, size_t len)
{
	char name[ZS_NODE_NAME_MAX + 1];

	if (node[0])
		return;
	copy_word(node, len, zs_node_name(name, sizeof(name)));
}

const char *zs_metrics_node(const struct zs_metrics_opts *o, char *buf, size_t len)
{
	char text[4096], why[ZS_ERRLEN];
	struct state s = { .sorter_up = -1, .sorter_degraded = -1 };
	int dirfd = zs_statedir_open(o->statedir, false, why);

	if (dirfd >= 0) {
		if (zs_textfile_read(dirfd, STATE_FILE, text, sizeof(text)) >= 0)
			state_parse(&s, text);
		close(dirfd);
	}
	default_node(s.node, sizeof(s.node));
	snprintf(buf, len, "%s", s.node);
	return buf;
}

typedef void (*change_fn)(struct state *s, const void *ctx);

/* Reads the state, changes it, writes it back and publishes it, all under
 * the metrics lock. */
static int update(const struct zs_metrics_opts *o, const char *node, change_fn change,
		  const void *ctx, char *err)
{
	char why[ZS_ERRLEN], buf[4096];
	struct state s = { .sorter_up = -1, .sorter_degraded = -1 };
	char *text = NULL, *prom = NULL;
	size_t len = 0, plen = 0;
	int dirfd, lockfd = -1, rc = -1;

	if (!o->prometheus_dir[0])
		return 0;
	dirfd = zs_statedir_open(o->statedir, true, why);
	if (dirfd < 0)
		return zs_fail(err, "metrics: %s", why);
	lockfd = zs_textfile_lock(dirfd, LOCK_FILE, LOCK_WAIT_MS, why);
	if (lockfd < 0) {
		zs_fail(err, "metrics: %s", why);
		goto out;
	}
	if (zs_textfile_read(dirfd, STATE_FILE, buf, sizeof(buf)) >= 0)
		state_parse(&s, buf);
	if (node && *node)
		copy_word(s.node, sizeof(s.node), node);
	default_node(s.node, sizeof(s.node));
	change(&s, ctx);
	text = state_format(&s, &len);
	prom = render(&s, &plen);
	if (!text || !prom) {
		zs_fail(err, "metrics: out of memory");
		goto out;
	}
	if (zs_textfile_replace(dirfd, STATE_FILE, text, len, 0644, (uid_t)-1, why)) {
		zs_fail(err, "metrics: %s/%s", o->statedir, why);
		goto out;
	}
	rc = zs_prom_publish(o->prometheus_dir, ZS_METRICS_FILE, prom, plen, err);
out:
	free(text);
	free(prom);
	if (lockfd >= 0)
		close(lockfd);
	close(dirfd);
	return rc;
}

struct sorts_ctx {
	const char *backend;
	bool degraded;
	const struct zs_tally *before, *after;
};

static void add_sorts(struct state *s, const void *vctx)
{
	const struct sorts_ctx *c = vctx;
	const struct zs_tally *a = c->after, *b = c->before;
	struct zs_tally d = { .sorted = a->sorted - b->sorted, .recent = a->recent - b->recent,
			      .busy = a->busy - b->busy, .failed = a->failed - b->failed,
			      .fallback = a->fallback - b->fallback, .degraded = a->degraded - b->degraded,
			      .seconds = a->seconds - b->seconds };
	bool none = !c->backend || !strcmp(c->backend, "none");

	s->sorted += d.sorted;
	s->recent += d.recent;
	s->busy += d.busy;
	s->failed += d.failed;
	s->fallback += d.fallback;
	s->degraded += d.degraded;
	s->sorter_degraded = c->degraded;
	if (d.seconds > 0)
		s->seconds += d.seconds;
	/* A degraded node's round that ran nothing (no compaction allowed
	 * here) says nothing new about the sorter that last ran: the
	 * degraded gauge tells that state. */
	if (none && c->degraded && s->sorter_up >= 0)
		return;
	copy_word(s->backend, sizeof(s->backend), none ? "none" : c->backend);
	/* A round that only skipped says nothing new about the sorter. */
	if (none || d.failed)
		s->sorter_up = 0;
	else if (d.sorted || d.fallback || s->sorter_up < 0)
		s->sorter_up = 1;
	if (d.sorted)
		s->last_sort = epoch_now();
}

int zs_metrics_sorts(const struct zs_metrics_opts *o, const char *node, const char *backend,
		     bool degraded, const struct zs_tally *before, const struct zs_tally *after,
		     char *err)
{
	struct sorts_ctx c = { backend, degraded, before, after };

	return update(o, node, add_sorts, &c, err);
}

static void set_sample(struct state *s, const void *ctx)
{
	const struct zs_sample *sm = ctx;

	s->sampled = true;
	s->sample_fraction = sm->fraction;
	s->sample_random = sm->random;
	s->sample_pages = sm->pages;
	s->sample_time = epoch_now();
}

int zs_metrics_sample(const struct zs_metrics_opts *o, const char *node,
		      const struct zs_sample *s, char *err)
{
	return update(o, node, set_sample, s, err);
}

static void set_job_end(struct state *s, const void *ctx)
{
	(void)ctx;
	s->last_job_end = epoch_now();
}

int zs_metrics_job_end(const struct zs_metrics_opts *o, const char *node, char *err)
{
	return update(o, node, set_job_end, NULL, err);
}

static void set_module(struct state *s, const void *ctx)
{
	copy_word(s->module_refused, sizeof(s->module_refused), ctx);
}

int zs_metrics_module(const struct zs_metrics_opts *o, const char *reason, char *err)
{
	char text[4096], why[ZS_ERRLEN];
	struct state s = { .sorter_up = -1, .sorter_degraded = -1 };
	int dirfd;

	if (!o->prometheus_dir[0])
		return 0;
	/* Every sorter that may load the module reports; only a change is
	 * written (a read without the lock: a race costs one rewrite). */
	dirfd = zs_statedir_open(o->statedir, false, why);
	if (dirfd >= 0) {
		if (zs_textfile_read(dirfd, STATE_FILE, text, sizeof(text)) >= 0)
			state_parse(&s, text);
		close(dirfd);
		if (!strcmp(s.module_refused, reason))
			return 0;
	}
	return update(o, NULL, set_module, reason, err);
}
