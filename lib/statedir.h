/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The state directory (statedir=, /run/zonesort): the sort lock, the
 * last-sort stamps and the per-boot copy of the cache layout. Root writes
 * there, so nobody else may be able to steer those writes: the directory
 * and every directory above it must be owned by root (or by the user
 * running the command, when that is not root) and not writable by others
 * (a sticky directory such as /tmp may be above it); a symbolic link on
 * the way is followed only when root owns it. Files in it are opened
 * relative to the checked directory with textfile.h, never through a
 * symbolic link, and replaced through a fresh temporary file and rename. */
#ifndef ZS_STATEDIR_H
#define ZS_STATEDIR_H

#include <stdbool.h>
#include <stddef.h>

#define ZS_STATEDIR_REFUSED (-2)

/* Opens path as a directory descriptor after the checks above, creating
 * the last component (mode 0755) when create and it is missing. Returns
 * the descriptor; -1 when it cannot be opened or made (err says why; the
 * caller may go on without state), ZS_STATEDIR_REFUSED when it must not be
 * trusted (err names the directory, its owner and mode). */
int zs_statedir_open(const char *path, bool create, char *err);

/* The same walk and checks for another directory root writes to (what
 * names it in messages, e.g. "prometheus_dir"). */
int zs_safedir_open(const char *what, const char *path, bool create, char *err);

/*
 * A directory that others read what root writes there: node_exporter's
 * textfile directory (prometheus_dir=, the health check's -M). Unlike the
 * state directory it may belong to another user, as Debian's
 * /var/lib/prometheus/node-exporter belongs to prometheus: root never
 * reads back what is there and only ever creates a fresh file under an
 * unguessable name (O_EXCL, no link followed) and renames it into place,
 * so the owner can change the directory's files, as it can anyway, but
 * cannot steer root's writes elsewhere. The walk from / opens each
 * component relative to the last with O_NOFOLLOW and refuses:
 *   - a symbolic link anywhere on the path (whoever owns the directory
 *     holding it decides where it leads);
 *   - a directory, on the way or the last, that group or others may
 *     write without the sticky bit (any of them could swap a component or
 *     the files root writes there);
 *   - '.' and '..'.
 * Creates the last component (mode 0755) when create and it is missing.
 * Returns the descriptor; -1 when it cannot be opened or made,
 * ZS_STATEDIR_REFUSED when it must not be used; err says why, naming the
 * directory (what names the setting, e.g. "prometheus_dir").
 */
int zs_publicdir_open(const char *what, const char *path, bool create, char *err);

/* This boot's id (/proc/sys/kernel/random/boot_id), or -1. */
int zs_boot_id(char *buf, size_t len);

#endif
