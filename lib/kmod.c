// SPDX-License-Identifier: GPL-2.0-or-later
/* The kernel module's files; see kmod.h and kmod/zonesort_abi.h. */
#include "config.h"
#include "kmod.h"
#include "textfile.h"
#include "zonesort_abi.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Writes text with one write(2), in this process: only for the
 * quarantine's settings, whose stores set a value and return (the sort and
 * the give-back go through zs_kwrite, bounded). O_NONBLOCK keeps a test's
 * FIFO from blocking us; it means nothing to sysfs. 0, or -1 with *err_no
 * set. */
static int write_file(const char *path, const char *text, int *err_no)
{
	int fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	size_t len = strlen(text);
	ssize_t w;

	if (fd < 0) {
		*err_no = errno;
		return -1;
	}
	w = write(fd, text, len);
	*err_no = errno;
	if (close(fd) && w == (ssize_t)len) {
		*err_no = errno;
		return -1;
	}
	if (w != (ssize_t)len) {
		if (w >= 0)
			*err_no = EIO;
		return -1;
	}
	return 0;
}

/* A file holding one integer: 0, or -1 when it is missing or holds
 * something else. */
static int read_number(const char *path, long long *v)
{
	char text[64], *end;
	long long x;

	if (zs_textfile_read(AT_FDCWD, path, text, sizeof(text)) < 0)
		return -1;
	errno = 0;
	x = strtoll(text, &end, 10);
	if (end == text || errno || (*end && *end != '\n'))
		return -1;
	*v = x;
	return 0;
}

/* The value of "key=" in a key=value statistics file. */
static int read_key(const char *path, const char *key, long long *v)
{
	char text[8192], *save = NULL;
	size_t klen = strlen(key);

	if (zs_textfile_read(AT_FDCWD, path, text, sizeof(text)) < 0)
		return -1;
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char *end;

		if (strncmp(l, key, klen) || l[klen] != '=')
			continue;
		errno = 0;
		*v = strtoll(l + klen + 1, &end, 10);
		return end == l + klen + 1 || errno || *end ? -1 : 0;
	}
	return -1;
}

void zs_kmod_probe(const char *dir, struct zs_kmod *k, char why[ZS_ERRLEN])
{
	char path[sizeof(k->dir) + 64];
	long long version;

	memset(k, 0, sizeof(*k));
	snprintf(k->dir, sizeof(k->dir), "%s", dir);
	why[0] = '\0';
	snprintf(path, sizeof(path), "%s/" ZS_FILE_NODEID, dir);
	if (access(path, F_OK)) {
		k->kind = ZS_KMOD_ABSENT;
		return;
	}
	snprintf(path, sizeof(path), "%s/" ZS_FILE_ABI_VERSION, dir);
	if (read_number(path, &version)) {
		k->kind = ZS_KMOD_INTEL;
		return;
	}
	k->version = (int)version;
	if (version != ZS_ABI_VERSION) {
		k->kind = ZS_KMOD_MISMATCH;
		snprintf(why, ZS_ERRLEN,
			 "%s: the loaded zonesort module has interface version %lld, this zonesort needs %d: install the zonesort packages of one release and reload the module",
			 path, version, ZS_ABI_VERSION);
		return;
	}
	k->kind = ZS_KMOD_OURS;
	snprintf(path, sizeof(path), "%s/" ZS_QUARANTINE_DIR "/" ZS_QUARANTINE_STATS, dir);
	k->quarantine = !access(path, F_OK);
}

int zs_kmod_sort(const struct zs_kmod *k, int node, unsigned timeout_s, struct zs_kwrite *w)
{
	char path[sizeof(k->dir) + 64], text[16];

	snprintf(path, sizeof(path), "%s/" ZS_FILE_NODEID, k->dir);
	snprintf(text, sizeof(text), "%d\n", node);
	return zs_kwrite(path, text, timeout_s, w);
}

int zs_kmod_occupied(const struct zs_kmod *k, int node, const void *bits, size_t bytes,
		     unsigned timeout_s, struct zs_kwrite *w)
{
	char path[sizeof(k->dir) + 64];

	memset(w, 0, sizeof(*w));
	if (k->kind != ZS_KMOD_OURS)
		return 1;
	snprintf(path, sizeof(path), "%s/" ZS_NODE_DIR_FMT "/" ZS_FILE_OCCUPIED, k->dir, node);
	if (access(path, F_OK))
		return 1;
	return zs_kwrite_data(path, bits, bytes, timeout_s, w);
}

int zs_kmod_stat(const struct zs_kmod *k, const char *key, long long *v)
{
	char path[sizeof(k->dir) + 64];

	if (k->kind != ZS_KMOD_OURS)
		return -1;
	snprintf(path, sizeof(path), "%s/" ZS_FILE_STATS, k->dir);
	return read_key(path, key, v);
}

int zs_kmod_quarantine(const struct zs_kmod *k, int node, struct zs_kmod_quarantine *q)
{
	static const char *const files[] = { ZS_FILE_Q_HELD, ZS_FILE_Q_BLOCKS, ZS_FILE_Q_MAX,
					     ZS_FILE_Q_PEAK };
	long long *to[] = { &q->held, &q->blocks, &q->max, &q->peak };
	char path[sizeof(k->dir) + 128];

	if (!k->quarantine)
		return -1;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/" ZS_NODE_DIR_FMT "/%s", k->dir, node, files[i]);
		if (read_number(path, to[i]))
			return -1;
	}
	return 0;
}

int zs_kmod_quarantine_permille(const struct zs_kmod *k, long long *v)
{
	char path[sizeof(k->dir) + 64];

	if (!k->quarantine)
		return -1;
	snprintf(path, sizeof(path), "%s/" ZS_QUARANTINE_DIR "/" ZS_QUARANTINE_MAX_PERMILLE, k->dir);
	return read_number(path, v);
}

int zs_kmod_quarantine_stat(const struct zs_kmod *k, const char *key, long long *v)
{
	char path[sizeof(k->dir) + 64];

	if (!k->quarantine)
		return -1;
	snprintf(path, sizeof(path), "%s/" ZS_QUARANTINE_DIR "/" ZS_QUARANTINE_STATS, k->dir);
	return read_key(path, key, v);
}

static int write_quarantine(const struct zs_kmod *k, const char *file, const char *text,
			    char why[ZS_ERRLEN])
{
	char path[sizeof(k->dir) + 64];
	int e;

	snprintf(path, sizeof(path), "%s/" ZS_QUARANTINE_DIR "/%s", k->dir, file);
	if (!write_file(path, text, &e))
		return 0;
	snprintf(why, ZS_ERRLEN, "%s: cannot write '%.*s': %s", path, (int)strcspn(text, "\n"),
		 text, strerror(e));
	return -1;
}

int zs_kmod_quarantine_set(const struct zs_kmod *k, bool on, int max_permille, char why[ZS_ERRLEN])
{
	char text[16];

	if (!k->quarantine)
		return 0;
	if (max_permille >= 0) {
		snprintf(text, sizeof(text), "%d\n", max_permille);
		if (write_quarantine(k, ZS_QUARANTINE_MAX_PERMILLE, text, why))
			return -1;
	}
	return write_quarantine(k, ZS_QUARANTINE_ENABLED, on ? "1\n" : "0\n", why);
}

int zs_kmod_quarantine_release(const struct zs_kmod *k, int node, unsigned timeout_s,
			       char why[ZS_ERRLEN], bool *timed_out)
{
	char path[sizeof(k->dir) + 128], how[ZS_ERRLEN];
	struct zs_kwrite w;

	if (timed_out)
		*timed_out = false;
	if (!k->quarantine)
		return 0;
	if (node < 0)
		snprintf(path, sizeof(path), "%s/" ZS_QUARANTINE_DIR "/" ZS_QUARANTINE_RELEASE, k->dir);
	else
		snprintf(path, sizeof(path), "%s/" ZS_NODE_DIR_FMT "/" ZS_FILE_Q_NODE_RELEASE, k->dir,
			 node);
	if (!zs_kwrite(path, "1\n", timeout_s, &w))
		return 0;
	if (timed_out)
		*timed_out = zs_kwrite_timed_out(&w);
	snprintf(why, ZS_ERRLEN, "%s: %s", path, zs_kwrite_describe(&w, how, sizeof(how)));
	return -1;
}
