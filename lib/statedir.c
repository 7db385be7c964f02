// SPDX-License-Identifier: GPL-2.0-or-later
/* The state directory, opened and used so that nobody but root can steer
 * root's writes there; see statedir.h. */
#include "config.h"
#include "statedir.h"
#include "errbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

static bool trusted_owner(uid_t uid)
{
	return uid == 0 || uid == geteuid();
}

/* A directory on the way may be writable by others only when sticky (they
 * cannot rename or remove what root put there); the state directory
 * itself never. */
static int check_dir(const char *what, const char *path, const struct stat *st, bool last,
		     char *err)
{
	bool open_to_others = st->st_mode & (S_IWGRP | S_IWOTH);

	if (!S_ISDIR(st->st_mode))
		return zs_fail(err, "%s: %s is not a directory", what, path);
	if (!trusted_owner(st->st_uid) || (open_to_others && (last || !(st->st_mode & S_ISVTX))))
		return zs_fail(err, "%s: refusing %s%s: owner uid %u, mode %04o; it must be owned by root and writable by no one else",
			       what, last ? "" : "a directory on the way to ", path,
			       (unsigned)st->st_uid, (unsigned)(st->st_mode & 07777));
	return 0;
}

int zs_statedir_open(const char *path, bool create, char *err)
{
	return zs_safedir_open("statedir", path, create, err);
}

/* How a walk checks each directory it opened, and how it opens the next
 * component comp of dirfd (walked: the path so far, for messages): the
 * descriptor, or -1 (cannot be opened or made) or ZS_STATEDIR_REFUSED
 * with err set. */
typedef int (*dir_check)(const char *what, const char *path, const struct stat *st, bool last,
			 char *err);
typedef int (*dir_step)(const char *what, int dirfd, const char *comp, const char *walked,
			bool last, bool create, char *err);

/* Opens path from / one component at a time, each relative to the one
 * before, checking every directory on the way. */
static int walk(const char *what, const char *path, bool create, dir_check check, dir_step step,
		char *err)
{
	char copy[PATH_MAX], walked[PATH_MAX] = "";
	char *save = NULL, *comp, *next;
	struct stat st;
	int fd, rc = ZS_STATEDIR_REFUSED;

	if (path[0] != '/' || strlen(path) >= sizeof(copy))
		return zs_fail(err, "%s: %s is not an absolute path", what, path);
	strcpy(copy, path);
	fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return zs_fail(err, "%s: cannot open /: %s", what, strerror(errno));
	if (fstat(fd, &st) || check(what, "/", &st, false, err))
		goto fail;
	for (comp = strtok_r(copy, "/", &save); comp; comp = next) {
		bool last;
		int nfd;

		next = strtok_r(NULL, "/", &save);
		last = !next;
		if (!strcmp(comp, ".") || !strcmp(comp, "..")) {
			zs_fail(err, "%s: %s: '.' and '..' are not allowed in the path", what, path);
			goto fail;
		}
		snprintf(walked + strlen(walked), sizeof(walked) - strlen(walked), "/%s", comp);
		nfd = step(what, fd, comp, walked, last, create, err);
		if (nfd < 0) {
			rc = nfd;
			goto fail;
		}
		close(fd);
		fd = nfd;
		if (fstat(fd, &st) || check(what, walked, &st, last, err))
			goto fail;
	}
	return fd;
fail:
	close(fd);
	return rc;
}

/* The state directory's step: a missing last component is made; a
 * symbolic link is followed only when root owns it (the directory holding
 * it was checked, so it is what its trusted owner put there). */
static int safe_step(const char *what, int fd, const char *comp, const char *walked, bool last,
		     bool create, char *err)
{
	struct stat st;
	int nfd;

	if (fstatat(fd, comp, &st, AT_SYMLINK_NOFOLLOW)) {
		if (errno != ENOENT || !last || !create)
			return zs_fail(err, "%s: %s: %s", what, walked, strerror(errno));
		if (mkdirat(fd, comp, 0755) && errno != EEXIST)
			return zs_fail(err, "%s: cannot create %s: %s", what, walked, strerror(errno));
		if (fstatat(fd, comp, &st, AT_SYMLINK_NOFOLLOW))
			return zs_fail(err, "%s: %s: %s", what, walked, strerror(errno));
	}
	if (S_ISLNK(st.st_mode) && st.st_uid != 0) {
		zs_fail(err, "%s: refusing %s: a symbolic link owned by uid %u; only root's links are followed",
			what, walked, (unsigned)st.st_uid);
		return ZS_STATEDIR_REFUSED;
	}
	nfd = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_CLOEXEC |
			       (S_ISLNK(st.st_mode) ? 0 : O_NOFOLLOW));
	if (nfd < 0)
		return zs_fail(err, "%s: cannot open %s: %s", what, walked, strerror(errno));
	return nfd;
}

int zs_safedir_open(const char *what, const char *path, bool create, char *err)
{
	return walk(what, path, create, check_dir, safe_step, err);
}

/* See statedir.h: writable by group or others only with the sticky bit. */
static int check_public(const char *what, const char *path, const struct stat *st, bool last,
			char *err)
{
	if (!S_ISDIR(st->st_mode))
		return zs_fail(err, "%s: %s is not a directory", what, path);
	if ((st->st_mode & (S_IWGRP | S_IWOTH)) && !(st->st_mode & S_ISVTX))
		return zs_fail(err, "%s: refusing %s%s: mode %04o, owner uid %u: group or others may write it without the sticky bit, so they could swap what root writes there; remove their write permission (chmod go-w) or set the sticky bit",
			       what, last ? "" : "a directory on the way to ", path,
			       (unsigned)(st->st_mode & 07777), (unsigned)st->st_uid);
	return 0;
}

/* Why comp of dirfd could not be opened as a directory without following
 * a link: a link (named with its target), something else, or errno. */
static int explain_open(const char *what, int dirfd, const char *comp, const char *walked, int e,
			char *err)
{
	struct stat st;
	char target[PATH_MAX];
	ssize_t n;

	if (fstatat(dirfd, comp, &st, AT_SYMLINK_NOFOLLOW) || !S_ISLNK(st.st_mode)) {
		zs_fail(err, "%s: cannot open %s: %s", what, walked,
			e == ENOTDIR ? "not a directory" : strerror(e));
		return e == ENOTDIR ? ZS_STATEDIR_REFUSED : -1;
	}
	n = readlinkat(dirfd, comp, target, sizeof(target) - 1);
	target[n > 0 ? n : 0] = '\0';
	zs_fail(err, "%s: refusing %s: a symbolic link (to %s), and no link is followed on the way to the files root writes there: name the directory it leads to instead",
		what, walked, target[0] ? target : "?");
	return ZS_STATEDIR_REFUSED;
}

/* A textfile directory's step: no link followed, whoever owns it. */
static int public_step(const char *what, int fd, const char *comp, const char *walked, bool last,
		       bool create, char *err)
{
	int nfd = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (nfd < 0 && errno == ENOENT && last && create) {
		if (mkdirat(fd, comp, 0755) && errno != EEXIST)
			return zs_fail(err, "%s: cannot create %s: %s", what, walked, strerror(errno));
		nfd = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (nfd >= 0)
		return nfd;
	int e = errno;

	if (e == ELOOP || e == ENOTDIR)
		return explain_open(what, fd, comp, walked, e, err);
	return zs_fail(err, "%s: cannot open %s: %s", what, walked, strerror(e));
}

int zs_publicdir_open(const char *what, const char *path, bool create, char *err)
{
	return walk(what, path, create, check_public, public_step, err);
}

int zs_boot_id(char *buf, size_t len)
{
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");
	int ok = f && fgets(buf, (int)len, f);

	if (f)
		fclose(f);
	if (!ok)
		return -1;
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}
