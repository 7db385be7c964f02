// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"
#include "report.h"
#include "errbuf.h"
#include "statedir.h"
#include "textfile.h"

#include <ctype.h>
#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#define REPORTS_DIR "reports"
/* Each user's records, under statedir/reports/UID (report.h). */
#define JOBS_DIR "jobs"
#define LOCK_FILE ".lock"
#define LOCK_WAIT_MS 2000
/* A job with more steps than fit starts a new file: the report is a
 * courtesy to the user, never a reason to hold slurmstepd. */
#define MAX_REPORT (64 * 1024)
/* All reports of the node together: beyond it the oldest go first. */
#define MAX_REPORTS_BYTES (32ull << 20)

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
	fprintf(f, "\trounds=%u\tsorted=%u\trecent=%u\tbusy=%u\tfailed=%u\tseconds=%.6f\tcompacted=%u\tchurn=%u\tfreed=%u\tbackend=",
		r->tally.rounds, r->tally.sorted, r->tally.recent, r->tally.busy, r->tally.failed,
		r->tally.seconds, r->tally.compacted, r->tally.churn, r->tally.freed);
	put_escaped(f, r->backend);
	fputs("\tnote=", f);
	put_escaped(f, r->note);
	fprintf(f, "\tsampling=%d\tsamples=%u\tfraction=%.6f\trandom=%.6f\tpages=%" PRIu64 "\twatch=%u\n",
		r->sampling, r->sample.samples, r->sample.fraction, r->sample.random, r->sample.pages,
		r->churn_watch);
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
			else if (KEY("churn"))
				r->tally.churn = (unsigned)strtoul(v, NULL, 10);
			else if (KEY("freed"))
				r->tally.freed = (unsigned)strtoul(v, NULL, 10);
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
			else if (KEY("watch"))
				r->churn_watch = (unsigned)strtoul(v, NULL, 10);
#undef KEY
		}
		line += n;
		if (*line == '\t')
			line++;
	}
	return have_job && have_where ? 0 : -1;
}

/* POSIX access ACL (the kernel's xattr layout, little-endian): the owner
 * (root) with owner_perm, the user uid with perm, nobody else. */
static int grant(int fd, unsigned owner_perm, uid_t uid, unsigned perm)
{
	struct {
		uint16_t tag, perm;
		uint32_t id;
	} e[5] = {
		{ 0x01, (uint16_t)owner_perm, UINT32_MAX },	/* ACL_USER_OBJ */
		{ 0x02, (uint16_t)perm, (uint32_t)uid },	/* ACL_USER */
		{ 0x04, 0, UINT32_MAX },			/* ACL_GROUP_OBJ */
		{ 0x10, (uint16_t)perm, UINT32_MAX },		/* ACL_MASK */
		{ 0x20, 0, UINT32_MAX },			/* ACL_OTHER */
	};
	unsigned char buf[4 + sizeof(e)];
	uint32_t version = htole32(2);

	for (unsigned i = 0; i < 5; i++) {
		e[i].tag = htole16(e[i].tag);
		e[i].perm = htole16(e[i].perm);
		e[i].id = htole32(e[i].id);
	}
	memcpy(buf, &version, 4);
	memcpy(buf + 4, e, sizeof(e));
	return fsetxattr(fd, "system.posix_acl_access", buf, sizeof(buf), 0);
}

/* A directory a user may only pass through (search, no read): O_PATH.
 * It must be root's and writable by no one else. */
static int search_only(int at, const char *name)
{
	int fd = openat(at, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), e = errno;
	struct stat st;

	if (fd >= 0 && (fstat(fd, &st) || st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH)))) {
		close(fd);
		fd = -1;
		e = EPERM;
	}
	errno = e;
	return fd;
}

/* Sets a directory's ACL (grant) unless its mode already shows it: an
 * ACL write changes the directory's ctime, which others can see. */
static int grant_dir(int fd, uid_t uid, unsigned perm, mode_t want)
{
	struct stat st;

	if (uid == 0 || (!fstat(fd, &st) && (st.st_mode & 07777) == want))
		return 0;
	return grant(fd, 07, uid, perm);
}

/* statedir/reports: root's, mode 0711, so nobody can list whose reports
 * are here. */
static int reports_top(const struct zs_report_opts *o, bool create, char *err)
{
	char why[ZS_ERRLEN];
	int top = zs_statedir_open(o->statedir, create, why), fd;

	if (top < 0) {
		int e = errno;

		zs_fail(err, "%s", why);
		errno = e;
		return -1;
	}
	if (geteuid() != 0) {
		fd = search_only(top, REPORTS_DIR);
		int e = errno;

		close(top);
		if (fd < 0)
			zs_fail(err, "%s/%s: %s", o->statedir, REPORTS_DIR, strerror(e));
		errno = e;
		return fd;
	}
	fd = zs_textfile_subdir(top, REPORTS_DIR, create, 0711, why);
	int e = errno;

	close(top);
	if (fd < 0) {
		zs_fail(err, "%s/%s", o->statedir, why);
		errno = e;
	} else {
		fchmod(fd, 0711);
	}
	return fd;
}

/* statedir/reports/UID: root's, mode 0710 with an ACL that lets uid only
 * pass through, and no one else. Anyone may learn that it exists (the
 * name is looked up in a directory all may search), but it holds only
 * JOBS_DIR, made once: its time and size say nothing of uid's jobs.
 * Returns statedir/reports/UID/jobs: root's, mode 0750 with an ACL that
 * lets uid list and read it, and no one else. */
static int reports_dir(const struct zs_report_opts *o, uid_t uid, bool create, char *err)
{
	char name[16], why[ZS_ERRLEN];
	int top = reports_top(o, create, err), udir, fd = -1, e;

	if (top < 0)
		return -1;
	snprintf(name, sizeof(name), "%u", (unsigned)uid);
	if (geteuid() != 0) {
		udir = search_only(top, name);
		if (udir < 0)
			snprintf(why, sizeof(why), "%s: %s", name, strerror(errno));
	} else {
		udir = zs_textfile_subdir(top, name, create, 0100, why);
	}
	e = errno;
	close(top);
	if (udir < 0) {
		zs_fail(err, "%s/%s/%s", o->statedir, REPORTS_DIR, why);
		errno = e;
		return -1;
	}
	if (create && grant_dir(udir, uid, 01, 0710)) {
		e = errno;
		zs_fail(err, "%s/%s/%s: cannot grant uid %u access (%s)%s", o->statedir, REPORTS_DIR, name,
			(unsigned)uid, strerror(e),
			e == EOPNOTSUPP ? "; the file system needs POSIX ACLs, or set report_days=0" : "");
		close(udir);
		errno = e;
		return -1;
	}
	fd = zs_textfile_subdir(udir, JOBS_DIR, create, 0500, why);
	e = errno;
	close(udir);
	if (fd < 0) {
		zs_fail(err, "%s/%s/%s/%s", o->statedir, REPORTS_DIR, name, why);
		errno = e;
		return -1;
	}
	if (create && grant_dir(fd, uid, 05, 0750)) {
		e = errno;
		zs_fail(err, "%s/%s/%s/" JOBS_DIR ": cannot grant uid %u access (%s)", o->statedir, REPORTS_DIR,
			name, (unsigned)uid, strerror(e));
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

int zs_report_add(const struct zs_report_opts *o, uid_t uid, const struct zs_report_step *r,
		  char *err)
{
	char name[16], why[ZS_ERRLEN];
	char *old = NULL, *line = NULL, *text = NULL;
	int dirfd, lockfd = -1, fd, rc = -1;
	long got;

	if (!o->days)
		return 0;
	dirfd = reports_dir(o, uid, true, err);
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
	if (got < 0 || (size_t)got + strlen(line) >= MAX_REPORT)
		got = 0;
	if (got && old[got - 1] != '\n')
		old[got++] = '\n';
	old[got] = '\0';
	if (asprintf(&text, "%s%s", old, line) < 0) {
		text = NULL;
		zs_fail(err, "report of job %s: out of memory", name);
		goto out;
	}
	/* Root's file, its user may only read it (an ACL entry): the user can
	 * neither grow it, nor change its mode or its time. */
	if (zs_textfile_replace(dirfd, name, text, strlen(text), 0400, (uid_t)-1, why)) {
		zs_fail(err, "report: %s/%s/%u/" JOBS_DIR "/%s", o->statedir, REPORTS_DIR, (unsigned)uid, why);
		goto out;
	}
	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || (uid != 0 && grant(fd, 04, uid, 04))) {
		zs_fail(err, "report of job %s: cannot grant uid %u read access: %s", name, (unsigned)uid,
			strerror(errno));
		if (fd >= 0)
			close(fd);
		goto out;
	}
	close(fd);
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

/* Calls fn for each report: every user's for root, the caller's own for
 * anyone else. path is "UID/JOB", relative to topfd (statedir/reports).
 * A directory that does not exist holds none. */
typedef void (*report_fn)(const char *path, uint32_t job, uid_t uid, const struct stat *st,
			  int topfd, void *ctx);

/* The records of statedir/reports/UNAME/jobs. tidy (root): also removes
 * the records an older layout kept in UNAME itself. */
static void each_in(int topfd, const char *uname, bool tidy, report_fn fn, void *ctx)
{
	int ufd = geteuid() != 0 ? search_only(topfd, uname)
				 : openat(topfd, uname, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int fd = ufd < 0 ? -1 : openat(ufd, JOBS_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	uint32_t uid, job;
	struct dirent *d;
	DIR *dir;

	if (tidy && ufd >= 0 && (dir = fdopendir(dup(ufd)))) {
		while ((d = readdir(dir)))
			if (job_name(d->d_name, &job))
				unlinkat(dirfd(dir), d->d_name, 0);
		closedir(dir);
	}
	if (ufd >= 0)
		close(ufd);
	if (fd < 0 || !job_name(uname, &uid) || !(dir = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((d = readdir(dir))) {
		char path[48];
		struct stat st;

		if (job_name(d->d_name, &job) &&
		    !fstatat(dirfd(dir), d->d_name, &st, AT_SYMLINK_NOFOLLOW) && S_ISREG(st.st_mode)) {
			snprintf(path, sizeof(path), "%s/" JOBS_DIR "/%s", uname, d->d_name);
			fn(path, job, (uid_t)uid, &st, topfd, ctx);
		}
	}
	closedir(dir);
}

static int each_report(const struct zs_report_opts *o, bool create, report_fn fn, void *ctx,
		       char *err)
{
	int topfd = reports_top(o, create && geteuid() == 0, err);
	char uname[16];
	struct dirent *d;
	DIR *dir;

	if (topfd < 0)
		return errno == ENOENT ? 0 : -1;
	if (geteuid() != 0) {
		snprintf(uname, sizeof(uname), "%u", (unsigned)geteuid());
		each_in(topfd, uname, false, fn, ctx);
		close(topfd);
		return 0;
	}
	dir = fdopendir(topfd);
	if (!dir) {
		close(topfd);
		return zs_fail(err, "%s/%s: %s", o->statedir, REPORTS_DIR, strerror(errno));
	}
	while ((d = readdir(dir)))
		if (isdigit((unsigned char)d->d_name[0]))
			each_in(dirfd(dir), d->d_name, create, fn, ctx);
	closedir(dir);
	return 0;
}

struct kept {
	char path[48];
	time_t mtime;
	off_t size;
};

struct expiry {
	time_t before, after;
	unsigned removed;
	struct kept *k;
	size_t n;
	bool oom;
};

/* Root's files, root's clock: a report not written for report_days days
 * goes, and so does one stamped more than a day ahead (a clock set back
 * must not keep it for ever). */
static void expire_one(const char *path, uint32_t job, uid_t uid, const struct stat *st, int topfd,
		       void *ctx)
{
	struct expiry *e = ctx;
	struct kept *grown;

	(void)job;
	(void)uid;
	if (st->st_mtime <= e->before || st->st_mtime > e->after) {
		if (!unlinkat(topfd, path, 0))
			e->removed++;
		return;
	}
	grown = e->oom ? NULL : realloc(e->k, (e->n + 1) * sizeof(*e->k));
	if (!grown) {
		e->oom = true;
		return;
	}
	e->k = grown;
	snprintf(e->k[e->n].path, sizeof(e->k[e->n].path), "%s", path);
	e->k[e->n].mtime = st->st_mtime;
	e->k[e->n++].size = st->st_size;
}

static int oldest_first(const void *a, const void *b)
{
	const struct kept *x = a, *y = b;

	return x->mtime < y->mtime ? -1 : x->mtime > y->mtime;
}

int zs_report_expire(const struct zs_report_opts *o, time_t now, unsigned *removed, char *err)
{
	struct expiry e = { .before = now - (time_t)o->days * 86400, .after = now + 86400 };
	int rc = each_report(o, true, expire_one, &e, err);
	unsigned long long total = 0;

	/* All reports together stay under MAX_REPORTS_BYTES: the oldest go. */
	for (size_t i = 0; i < e.n; i++)
		total += (unsigned long long)e.k[i].size;
	if (total > MAX_REPORTS_BYTES) {
		char why[ZS_ERRLEN];
		int top = reports_top(o, false, why);

		qsort(e.k, e.n, sizeof(*e.k), oldest_first);
		for (size_t i = 0; top >= 0 && i < e.n && total > MAX_REPORTS_BYTES; i++)
			if (!unlinkat(top, e.k[i].path, 0)) {
				total -= (unsigned long long)e.k[i].size;
				e.removed++;
			}
		if (top >= 0)
			close(top);
	}
	free(e.k);
	*removed = e.removed;
	return rc;
}

struct found {
	uint32_t job;
	uid_t uid;
	time_t mtime;
	bool any;
};

static void find_one(const char *path, uint32_t job, uid_t uid, const struct stat *st, int topfd,
		     void *ctx)
{
	struct found *f = ctx;

	(void)path;
	(void)topfd;
	if (job == f->job && (!f->any || st->st_mtime > f->mtime))
		*f = (struct found){ job, uid, st->st_mtime, true };
}

enum zs_report_status zs_report_load(const struct zs_report_opts *o, uint32_t job,
				     struct zs_report_step **steps, unsigned *nsteps,
				     uid_t *owner, char *err)
{
	char name[16], *buf = NULL, *save = NULL;
	struct found f = { .job = job };
	int dirfd;
	long got;

	*steps = NULL;
	*nsteps = 0;
	/* A user looks only among their own reports: another user's job is
	 * missing to them, which tells them nothing about it. */
	if (geteuid() != 0)
		f = (struct found){ job, geteuid(), 0, true };
	else if (each_report(o, false, find_one, &f, err))
		return ZS_REPORT_ERROR;
	if (!f.any)
		return ZS_REPORT_MISSING;
	*owner = f.uid;
	dirfd = reports_dir(o, f.uid, false, err);
	if (dirfd < 0)
		return errno == ENOENT || errno == EACCES ? ZS_REPORT_MISSING : ZS_REPORT_ERROR;
	snprintf(name, sizeof(name), "%" PRIu32, job);
	buf = malloc(MAX_REPORT);
	if (!buf) {
		close(dirfd);
		zs_fail(err, "out of memory");
		return ZS_REPORT_ERROR;
	}
	got = zs_textfile_read(dirfd, name, buf, MAX_REPORT);
	close(dirfd);
	if (got < 0) {
		int e = errno;

		free(buf);
		if (e == ENOENT || e == EACCES)
			return ZS_REPORT_MISSING;
		zs_fail(err, "cannot read %s/%s/%u/" JOBS_DIR "/%s: %s", o->statedir, REPORTS_DIR, (unsigned)f.uid, name,
			strerror(e));
		return ZS_REPORT_ERROR;
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

static void list_one(const char *path, uint32_t job, uid_t uid, const struct stat *st, int topfd,
		     void *ctx)
{
	struct listing *ls = ctx;
	struct listed *grown;

	(void)path;
	(void)uid;
	(void)topfd;
	if (ls->oom)
		return;
	grown = realloc(ls->l, (ls->n + 1) * sizeof(*ls->l));
	if (!grown) {
		ls->oom = true;
		return;
	}
	ls->l = grown;
	ls->l[ls->n++] = (struct listed){ job, st->st_mtime };
}

int zs_report_list(const struct zs_report_opts *o, uint32_t **jobs, unsigned *njobs, char *err)
{
	struct listing ls = { 0 };

	*jobs = NULL;
	*njobs = 0;
	if (each_report(o, false, list_one, &ls, err)) {
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
