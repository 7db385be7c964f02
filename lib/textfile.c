// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"
#include "textfile.h"
#include "errbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int check_dir(int fd, const char *what, char *err)
{
	struct stat st;

	if (fstat(fd, &st))
		return zs_fail(err, "%s: %s", what, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return zs_fail(err, "%s is not a directory", what);
	if ((st.st_uid != 0 && st.st_uid != geteuid()) || (st.st_mode & (S_IWGRP | S_IWOTH)))
		return zs_fail(err, "refusing %s: owner uid %u, mode %04o; it must be owned by root and writable by no one else",
			       what, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
	return 0;
}

static int open_dir_at(int at, const char *name, const char *what, bool create, mode_t mode,
		       char *err)
{
	int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0 && errno == ENOENT && create) {
		if (mkdirat(at, name, mode) && errno != EEXIST)
			return zs_fail(err, "cannot create %s: %s", what, strerror(errno));
		fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd < 0) {
		int e = errno;

		zs_fail(err, "cannot open %s: %s", what,
			e == ELOOP || e == ENOTDIR ? "not a directory (a symbolic link?)" : strerror(e));
		errno = e;
		return -1;
	}
	if (check_dir(fd, what, err)) {
		close(fd);
		return -1;
	}
	return fd;
}

int zs_textfile_dir(const char *path, bool create, mode_t mode, char *err)
{
	if (path[0] != '/')
		return zs_fail(err, "%s is not an absolute path", path);
	return open_dir_at(AT_FDCWD, path, path, create, mode, err);
}

int zs_textfile_subdir(int dirfd, const char *name, bool create, mode_t mode, char *err)
{
	return open_dir_at(dirfd, name, name, create, mode, err);
}

long zs_textfile_read(int dirfd, const char *name, char *buf, size_t len)
{
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	size_t got = 0;
	ssize_t r = 0;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	while (got < len - 1 && (r = read(fd, buf + got, len - 1 - got)) > 0)
		got += (size_t)r;
	/* A file that does not fit is refused rather than cut. */
	if (r >= 0 && got == len - 1) {
		char extra;

		if (read(fd, &extra, 1) > 0) {
			close(fd);
			errno = EFBIG;
			return -1;
		}
	}
	close(fd);
	if (r < 0)
		return -1;
	buf[got] = '\0';
	return (long)got;
}

int zs_textfile_replace(int dirfd, const char *name, const char *text, size_t len,
			mode_t mode, uid_t owner, char *err)
{
	char tmp[NAME_MAX + 1];
	int fd = -1;

	/* A leading dot and a random suffix: node_exporter reads only
	 * *.prom, and nobody can guess the name to plant a link there. */
	for (int attempt = 0; attempt < 16 && fd < 0; attempt++) {
		unsigned long long r;

		if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r))
			r = ((unsigned long long)getpid() << 20) ^ (unsigned long long)time(NULL) ^
			    (unsigned long long)attempt;
		snprintf(tmp, sizeof(tmp), ".%.200s.%016llx.tmp", name, r);
		fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0 && errno != EEXIST)
			return zs_fail(err, "cannot create a temporary file for %s: %s", name,
				       strerror(errno));
	}
	if (fd < 0)
		return zs_fail(err, "cannot create a temporary file for %s", name);
	size_t done = 0;

	while (done < len) {
		ssize_t w = write(fd, text + done, len - done);

		if (w <= 0)
			goto fail;
		done += (size_t)w;
	}
	if ((owner != (uid_t)-1 && fchown(fd, owner, (gid_t)-1)) || fchmod(fd, mode))
		goto fail;
	if (close(fd)) {
		fd = -1;
		goto fail;
	}
	fd = -1;
	/* rename replaces name, a link included, without following it. */
	if (renameat(dirfd, tmp, dirfd, name))
		goto fail;
	return 0;
fail:;
	int e = errno;

	if (fd >= 0)
		close(fd);
	unlinkat(dirfd, tmp, 0);
	return zs_fail(err, "cannot write %s: %s", name, strerror(e));
}

int zs_textfile_lockfile(int dirfd, const char *name, char *err)
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

int zs_textfile_lock(int dirfd, const char *name, unsigned timeout_ms, char *err)
{
	int fd = zs_textfile_lockfile(dirfd, name, err);

	if (fd < 0)
		return -1;
	/* flock has no timeout of its own: poll every millisecond. */
	for (unsigned waited = 0;; waited++) {
		if (!flock(fd, LOCK_EX | LOCK_NB))
			return fd;
		if (errno != EWOULDBLOCK || waited >= timeout_ms)
			break;
		nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
	}
	close(fd);
	return zs_fail(err, "%s is held by another writer for more than %u ms", name, timeout_ms);
}
