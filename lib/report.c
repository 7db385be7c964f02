// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"
#include "report.h"
#include "errbuf.h"
#include "statedir.h"
#include "textfile.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define REPORTS_DIR "reports"
#define LOCK_FILE ".lock"
#define LOCK_WAIT_MS 2000
/* A job with more steps than fit starts a new file: the report is a
 * courtesy to the user, never a reason to hold slurmstepd. */
#define MAX_REPORT (256 * 1024)

static void put_escaped(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c < 0x20 || c == '%' || c == 0x7f)
			fprintf(f, "%%%02X", c);
		else
			putc(c, f);
	}
}

static void unescape(char *dst, size_t len, const char *src, size_t n)
{
	size_t o = 0;

	for (size_t i = 0; i < n && o + 1 < len; i++) {
		if (src[i] == '%' && i + 2 < n && isxdigit((unsigned char)src[i + 1]) &&
		    isxdigit((unsigned char)src[i + 2])) {
			char hex[3] = { src[i + 1], src[i + 2], 0 };

			dst[o++] = (char)strtol(hex, NULL, 16);
			i += 2;
		} else {
			dst[o++] = src[i];
		}
	}
	dst[o] = '\0';
}

char *zs_report_format(const struct zs_report_step *r)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return NULL;
	fprintf(f, "time=%.3f\tjob=%" PRIu32 "\twhere=", r->time, r->job);
	put_escaped(f, r->where);
	fputs("\tnode=", f);
	put_escaped(f, r->node);
	fputs("\tmode=", f);
	put_escaped(f, r->mode);
	fprintf(f, "\trounds=%u\tsorted=%u\trecent=%u\tbusy=%u\tfailed=%u\tseconds=%.6f\tcompacted=%u\tbackend=",
		r->tally.rounds, r->tally.sorted, r->tally.recent, r->tally.busy, r->tally.failed,
		r->tally.seconds, r->tally.compacted);
	put_escaped(f, r->backend);
	fputs("\tnote=", f);
	put_escaped(f, r->note);
	fprintf(f, "\tsampling=%d\tsamples=%u\tfraction=%.6f\trandom=%.6f\tpages=%" PRIu64 "\n",
		r->sampling, r->sample.samples, r->sample.fraction, r->sample.random, r->sample.pages);
	if (fclose(f)) {
		free(text);
		return NULL;
	}
	return text;
}

int zs_report_parse(const char *line, struct zs_report_step *r)
{
	bool have_job = false, have_where = false;

	memset(r, 0, sizeof(*r));
	while (*line && *line != '\n') {
		size_t n = strcspn(line, "\t\n");
		const char *eq = memchr(line, '=', n);

		if (eq) {
			size_t klen = (size_t)(eq - line), vlen = n - klen - 1;
			char v[256];

			unescape(v, sizeof(v), eq + 1, vlen);
#define KEY(k) (klen == sizeof(k) - 1 && !memcmp(line, k, klen))
			if (KEY("time"))
				r->time = strtod(v, NULL);
			else if (KEY("job"))
				r->job = (uint32_t)strtoul(v, NULL, 10), have_job = true;
			else if (KEY("where"))
				snprintf(r->where, sizeof(r->where), "%s", v), have_where = true;
			else if (KEY("node"))
				snprintf(r->node, sizeof(r->node), "%s", v);
			else if (KEY("mode"))
				snprintf(r->mode, sizeof(r->mode), "%s", v);
			else if (KEY("rounds"))
				r->tally.rounds = (unsigned)strtoul(v, NULL, 10);
			else if (KEY("sorted"))
				r->tally.sorted = (unsigned)strtoul(v, NULL, 10);
			else if (KEY("recent"))
				r->tally.recent = (unsigned)strtoul(v, NULL, 10);
			else if (KEY("busy"))
				r->tally.busy = (unsigned)strtoul(v, NULL, 10);
			else if (KEY("failed"))
				r->tally.failed = (unsigned)strtoul(v, NULL, 10);
			else if (KEY("seconds"))
				r->tally.seconds = strtod(v, NULL);
			else if (KEY("compacted"))
				r->tally.compacted = (unsigned)strtoul(v, NULL, 10);
			else if (KEY("backend"))
				snprintf(r->backend, sizeof(r->backend), "%s", v);
			else if (KEY("note"))
				snprintf(r->note, sizeof(r->note), "%s", v);
			else if (KEY("sampling"))
				r->sampling = atoi(v) != 0;
			else if (KEY("samples"))
				r->sample.samples = (unsigned)strtoul(v, NULL, 10);
			else if (KEY("fraction"))
				r->sample.fraction = strtod(v, NULL);
			else if (KEY("random"))
				r->sample.random = strtod(v, NULL);
			else if (KEY("pages"))
				r->sample.pages = strtoull(v, NULL, 10);
#undef KEY
		}
		line += n;
		if (*line == '\t')
			line++;
	}
	return have_job && have_where ? 0 : -1;
}

static int reports_dir(const struct zs_policy *p, bool create, char *err)
{
	char why[ZS_ERRLEN];
	int top = zs_statedir_open(p->statedir, create, why), fd;

	if (top < 0) {
		int e = errno;

		zs_fail(err, "%s", why);
		errno = e;
		return -1;
	}
	/* Readable by all: users list it to find their own reports, whose
	 * modes keep the contents to their owners. */
	fd = zs_textfile_subdir(top, REPORTS_DIR, create, 0755, why);
	int e = errno;

	close(top);
	if (fd < 0) {
		zs_fail(err, "%s/%s", p->statedir, why);
		errno = e;
	}
	return fd;
}

int zs_report_add(const struct zs_policy *p, uid_t uid, const struct zs_report_step *r, char *err)
{
	char name[16], why[ZS_ERRLEN];
	char *old = NULL, *line = NULL, *text = NULL;
	int dirfd, lockfd = -1, rc = -1;
	struct stat st;
	long got;

	if (!p->report_days)
		return 0;
	dirfd = reports_dir(p, true, err);
	if (dirfd < 0)
		return -1;
	snprintf(name, sizeof(name), "%" PRIu32, r->job);
	lockfd = zs_textfile_lock(dirfd, LOCK_FILE, LOCK_WAIT_MS, why);
	old = malloc(MAX_REPORT);
	line = zs_report_format(r);
	if (lockfd < 0 || !old || !line) {
		zs_fail(err, "report of job %s: %s", name, lockfd < 0 ? why : "out of memory");
		goto out;
	}
	got = zs_textfile_read(dirfd, name, old, MAX_REPORT);
	/* A report left by an earlier job of the same id (ids restart when
	 * slurmctld's state is lost) belongs to someone else: start anew. */
	if (got < 0 || fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) || st.st_uid != uid ||
	    (size_t)got + strlen(line) >= MAX_REPORT)
		got = 0;
	if (got && old[got - 1] != '\n')
		old[got++] = '\n';
	old[got] = '\0';
	if (asprintf(&text, "%s%s", old, line) < 0) {
		text = NULL;
		zs_fail(err, "report of job %s: out of memory", name);
		goto out;
	}
	if (zs_textfile_replace(dirfd, name, text, strlen(text), 0400, uid, why)) {
		zs_fail(err, "report: %s/%s/%s", p->statedir, REPORTS_DIR, why);
		goto out;
	}
	rc = 0;
out:
	free(old);
	free(line);
	free(text);
	if (lockfd >= 0)
		close(lockfd);
	close(dirfd);
	return rc;
}

static bool job_name(const char *name, uint32_t *job)
{
	char *end;
	unsigned long v;

	if (!isdigit((unsigned char)name[0]))
		return false;
	errno = 0;
	v = strtoul(name, &end, 10);
	if (*end || errno || v > UINT32_MAX)
		return false;
	*job = (uint32_t)v;
	return true;
}

/* Calls fn for each regular file of the reports directory named by a job
 * id. A directory that does not exist holds none. */
typedef void (*report_fn)(const char *name, uint32_t job, const struct stat *st, int dirfd,
			  void *ctx);

static int each_report(const struct zs_policy *p, bool create, report_fn fn, void *ctx, char *err)
{
	int dirfd = reports_dir(p, create, err);
	struct dirent *d;
	DIR *dir;

	if (dirfd < 0)
		return errno == ENOENT ? 0 : -1;
	dir = fdopendir(dirfd);
	if (!dir) {
		close(dirfd);
		return zs_fail(err, "%s/%s: %s", p->statedir, REPORTS_DIR, strerror(errno));
	}
	while ((d = readdir(dir))) {
		struct stat st;
		uint32_t job;

		if (job_name(d->d_name, &job) &&
		    !fstatat(dirfd, d->d_name, &st, AT_SYMLINK_NOFOLLOW) && S_ISREG(st.st_mode))
			fn(d->d_name, job, &st, dirfd, ctx);
	}
	closedir(dir);
	return 0;
}

struct expiry {
	time_t before;
	unsigned removed;
};

static void expire_one(const char *name, uint32_t job, const struct stat *st, int dirfd, void *ctx)
{
	struct expiry *e = ctx;

	(void)job;
	if (st->st_mtime <= e->before && !unlinkat(dirfd, name, 0))
		e->removed++;
}

int zs_report_expire(const struct zs_policy *p, time_t now, unsigned *removed, char *err)
{
	struct expiry e = { .before = now - (time_t)p->report_days * 86400 };
	int rc = each_report(p, true, expire_one, &e, err);

	*removed = e.removed;
	return rc;
}

enum zs_report_status zs_report_load(const struct zs_policy *p, uint32_t job,
				     struct zs_report_step **steps, unsigned *nsteps,
				     uid_t *owner, char *err)
{
	char name[16], *buf = NULL, *save = NULL;
	struct stat st;
	int dirfd;
	long got;

	*steps = NULL;
	*nsteps = 0;
	dirfd = reports_dir(p, false, err);
	if (dirfd < 0)
		return errno == ENOENT ? ZS_REPORT_MISSING : ZS_REPORT_ERROR;
	snprintf(name, sizeof(name), "%" PRIu32, job);
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW)) {
		close(dirfd);
		return ZS_REPORT_MISSING;
	}
	*owner = st.st_uid;
	/* The file's mode already keeps others out; this holds even when an
	 * owner opened it up. */
	if (geteuid() != 0 && st.st_uid != geteuid()) {
		close(dirfd);
		return ZS_REPORT_NOT_YOURS;
	}
	buf = malloc(MAX_REPORT);
	if (!buf) {
		close(dirfd);
		zs_fail(err, "out of memory");
		return ZS_REPORT_ERROR;
	}
	got = zs_textfile_read(dirfd, name, buf, MAX_REPORT);
	close(dirfd);
	if (got < 0) {
		zs_fail(err, "cannot read %s/%s/%s: %s", p->statedir, REPORTS_DIR, name, strerror(errno));
		free(buf);
		return errno == EACCES ? ZS_REPORT_NOT_YOURS : ZS_REPORT_ERROR;
	}
	for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct zs_report_step r, *grown;

		if (zs_report_parse(line, &r) || r.job != job)
			continue;
		grown = realloc(*steps, (*nsteps + 1) * sizeof(**steps));
		if (!grown)
			break;
		*steps = grown;
		(*steps)[(*nsteps)++] = r;
	}
	free(buf);
	return ZS_REPORT_FOUND;
}

struct listed {
	uint32_t job;
	time_t mtime;
};

static int newest_first(const void *a, const void *b)
{
	const struct listed *x = a, *y = b;

	if (x->mtime != y->mtime)
		return x->mtime < y->mtime ? 1 : -1;
	return x->job < y->job ? 1 : x->job > y->job ? -1 : 0;
}

struct listing {
	struct listed *l;
	unsigned n;
	bool oom;
};

static void list_one(const char *name, uint32_t job, const struct stat *st, int dirfd, void *ctx)
{
	struct listing *ls = ctx;
	struct listed *grown;

	(void)name;
	(void)dirfd;
	if (ls->oom || (geteuid() != 0 && st->st_uid != geteuid()))
		return;
	grown = realloc(ls->l, (ls->n + 1) * sizeof(*ls->l));
	if (!grown) {
		ls->oom = true;
		return;
	}
	ls->l = grown;
	ls->l[ls->n++] = (struct listed){ job, st->st_mtime };
}

int zs_report_list(const struct zs_policy *p, uint32_t **jobs, unsigned *njobs, char *err)
{
	struct listing ls = { 0 };

	*jobs = NULL;
	*njobs = 0;
	if (each_report(p, false, list_one, &ls, err)) {
		free(ls.l);
		return -1;
	}
	if (ls.n)
		qsort(ls.l, ls.n, sizeof(*ls.l), newest_first);
	*jobs = calloc(ls.n ? ls.n : 1, sizeof(**jobs));
	if (!*jobs || ls.oom) {
		free(ls.l);
		free(*jobs);
		*jobs = NULL;
		return zs_fail(err, "out of memory");
	}
	for (unsigned i = 0; i < ls.n; i++)
		(*jobs)[i] = ls.l[i].job;
	*njobs = ls.n;
	free(ls.l);
	return 0;
}
