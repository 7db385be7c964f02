/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Small files that others read while root rewrites them (node_exporter's
 * textfile metrics, the per-node counters, the users' job reports): always
 * opened relative to a directory descriptor without following a symbolic
 * link, and replaced whole through a fresh temporary file in the same
 * directory and rename(2), so a reader sees the old or the new content,
 * never a part. */
#ifndef ZS_TEXTFILE_H
#define ZS_TEXTFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Opens path as a directory, creating it with mode when create and it is
 * missing. Refuses a symbolic link as the last component, a directory that
 * anyone but root or the caller owns, and one that group or others may
 * write (they could swap the files root writes there). Returns the
 * descriptor, or -1 with err set. */
int zs_textfile_dir(const char *path, bool create, mode_t mode, char *err);

/* Opens subdirectory name of dirfd with the same checks, creating it when
 * create and it is missing. */
int zs_textfile_subdir(int dirfd, const char *name, bool create, mode_t mode, char *err);

/* Reads regular file name of dirfd into buf (at most len - 1 bytes, NUL
 * terminated). Returns the length; -1 when it is missing, a link, not a
 * regular file, or longer than len - 1 bytes (errno EFBIG). */
long zs_textfile_read(int dirfd, const char *name, char *buf, size_t len);

/* Replaces name in dirfd by text (len bytes) with mode, owned by owner
 * unless owner is (uid_t)-1. Returns 0, or -1 with err set; on failure
 * the old file is untouched. */
int zs_textfile_replace(int dirfd, const char *name, const char *text, size_t len,
			mode_t mode, uid_t owner, char *err);

/* Opens (creating it, mode 0600) the regular file name of dirfd for
 * locking, without following a link. Returns the descriptor or -1 with
 * err set. */
int zs_textfile_lockfile(int dirfd, const char *name, char *err);

/* Takes an exclusive flock on name in dirfd (created mode 0600), waiting
 * at most timeout_ms: callers run in slurmstepd, which must never hang.
 * Returns the descriptor to close, or -1 with err set. */
int zs_textfile_lock(int dirfd, const char *name, unsigned timeout_ms, char *err);

#endif
