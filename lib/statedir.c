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
static int check_dir(const char *path, const struct stat *st, bool last, char *err)
{
	bool open_to_others = st->st_mode & (S_IWGRP | S_IWOTH);

	if (!S_ISDIR(st->st_mode))
		return zs_fail(err, "statedir: %s is not a directory", path);
	if (!trusted_owner(st->st_uid) || (open_to_others && (last || !(st->st_mode & S_ISVTX))))
		return zs_fail(err, "statedir: refusing %s%s: owner uid %u, mode %04o; it must be owned by root and writable by no one else",
			       last ? "" : "a state directory under ", path, (unsigned)st->st_uid,
			       (unsigned)(st->st_mode & 07777));
	return 0;
}

int zs_statedir_open(const char *path, bool create, char *err)
{
	char copy[PATH_MAX], walked[PATH_MAX] = "";
	char *save = NULL, *comp, *next;
	struct stat st;
	int fd;

	if (path[0] != '/' || strlen(path) >= sizeof(copy))
		return zs_fail(err, "statedir: %s is not an absolute path", path);
	strcpy(copy, path);
	fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return zs_fail(err, "statedir: cannot open /: %s", strerror(errno));
	if (fstat(fd, &st) || check_dir("/", &st, false, err))
		goto refused;
	for (comp = strtok_r(copy, "/", &save); comp; comp = next) {
		bool last;
		int nfd;

		next = strtok_r(NULL, "/", &save);
		last = !next;
		if (!strcmp(comp, ".") || !strcmp(comp, "..")) {
			zs_fail(err, "statedir: %s: '.' and '..' are not allowed in the path", path);
			goto refused;
		}
		snprintf(walked + strlen(walked), sizeof(walked) - strlen(walked), "/%s", comp);
		if (fstatat(fd, comp, &st, AT_SYMLINK_NOFOLLOW)) {
			if (errno != ENOENT || !last || !create) {
				zs_fail(err, "statedir: %s: %s", walked, strerror(errno));
				goto unavailable;
			}
			if (mkdirat(fd, comp, 0755) && errno != EEXIST) {
				zs_fail(err, "statedir: cannot create %s: %s", walked, strerror(errno));
				goto unavailable;
			}
			if (fstatat(fd, comp, &st, AT_SYMLINK_NOFOLLOW)) {
				zs_fail(err, "statedir: %s: %s", walked, strerror(errno));
				goto unavailable;
			}
		}
		if (S_ISLNK(st.st_mode) && st.st_uid != 0) {
			zs_fail(err, "statedir: refusing %s: a symbolic link owned by uid %u; only root's links are followed",
				walked, (unsigned)st.st_uid);
			goto refused;
		}
		/* The directory holding comp was checked, so comp is what its
		 * trusted owner put there: a root-owned link may be followed. */
		nfd = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_CLOEXEC |
				       (S_ISLNK(st.st_mode) ? 0 : O_NOFOLLOW));
		if (nfd < 0) {
			zs_fail(err, "statedir: cannot open %s: %s", walked, strerror(errno));
			goto unavailable;
		}
		close(fd);
		fd = nfd;
		if (fstat(fd, &st) || check_dir(walked, &st, last, err))
			goto refused;
	}
	return fd;
refused:
	close(fd);
	return ZS_STATEDIR_REFUSED;
unavailable:
	close(fd);
	return -1;
}

long zs_statedir_read(int dirfd, const char *name, char *buf, size_t len)
{
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	ssize_t got = -1;

	if (fd < 0)
		return -1;
	if (!fstat(fd, &st) && S_ISREG(st.st_mode))
		got = read(fd, buf, len - 1);
	close(fd);
	if (got < 0)
		return -1;
	buf[got] = '\0';
	return (long)got;
}

int zs_statedir_write(int dirfd, const char *name, const char *text, char *err)
{
	char tmp[NAME_MAX + 1];
	size_t len = strlen(text);
	int fd = -1;

	for (int attempt = 0; attempt < 16 && fd < 0; attempt++) {
		unsigned long long r = 0;

		if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r))
			r = (unsigned long long)getpid() * 2654435761ULL + (unsigned long long)attempt;
		snprintf(tmp, sizeof(tmp), ".%.200s.%016llx", name, r);
		fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd < 0 && errno != EEXIST)
			return zs_fail(err, "cannot create a temporary file for %s: %s", name, strerror(errno));
	}
	if (fd < 0)
		return zs_fail(err, "cannot create a temporary file for %s", name);
	if (write(fd, text, len) != (ssize_t)len || close(fd)) {
		unlinkat(dirfd, tmp, 0);
		return zs_fail(err, "cannot write %s: %s", name, strerror(errno));
	}
	/* rename replaces whatever name is, a link included, without following it. */
	if (renameat(dirfd, tmp, dirfd, name)) {
		int e = errno;

		unlinkat(dirfd, tmp, 0);
		return zs_fail(err, "cannot replace %s: %s", name, strerror(e));
	}
	return 0;
}

int zs_statedir_lockfile(int dirfd, const char *name, char *err)
{
	int fd = openat(dirfd, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
	struct stat st;

	if (fd < 0)
		return zs_fail(err, "cannot open %s: %s", name, strerror(errno));
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return zs_fail(err, "%s is not a regular file", name);
	}
	return fd;
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
