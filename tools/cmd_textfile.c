// SPDX-License-Identifier: GPL-2.0-or-later
/* zonesort check-dir and zonesort textfile-write: the checks and the
 * atomic write that prometheus_dir= gets (statedir.h, zs_publicdir_open),
 * for shell programs that write into node_exporter's textfile directory,
 * such as the health check's -M. */
#include "config.h"
#include "cli.h"
#include "statedir.h"
#include "textfile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Larger than any metrics file; a runaway producer is refused, not cut. */
#define MAX_TEXT (16u << 20)

static int usage_check(FILE *f)
{
	fprintf(f, "usage: zonesort check-dir DIR\n"
		   "Checks DIR as prometheus_dir= is checked before root writes there: an\n"
		   "absolute path without '.', '..' or a symbolic link on the way, every\n"
		   "directory writable by group or others only with the sticky bit. DIR may\n"
		   "belong to another user (node_exporter's). Prints nothing and exits 0 when\n"
		   "it may be written, else says why and exits 1 (2: usage error).\n");
	return f == stdout ? ZS_EXIT_OK : ZS_EXIT_USAGE;
}

static int usage_write(FILE *f)
{
	fprintf(f, "usage: zonesort textfile-write DIR NAME\n"
		   "Replaces DIR/NAME by what standard input holds (at most 16 MiB), mode\n"
		   "0644: written to a fresh file of an unguessable name in DIR (O_EXCL, no\n"
		   "link followed) and renamed over NAME, so a reader sees the old or the new\n"
		   "content, never a part. DIR is checked as by 'zonesort check-dir' and\n"
		   "created (0755) when only its last component is missing. NAME is a file\n"
		   "name without '/'. Exit 0 written, 1 refused or failed (nothing changed),\n"
		   "2 usage error.\n");
	return f == stdout ? ZS_EXIT_OK : ZS_EXIT_USAGE;
}

static bool wants_help(int argc, char **argv)
{
	return argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"));
}

int cmd_check_dir(int argc, char **argv)
{
	char err[ZS_ERRLEN];
	int fd;

	if (wants_help(argc, argv))
		return usage_check(stdout);
	if (argc != 2)
		return usage_check(stderr);
	fd = zs_publicdir_open("zonesort check-dir", argv[1], false, err);
	if (fd < 0) {
		fprintf(stderr, "%s\n", err);
		return ZS_EXIT_FAIL;
	}
	close(fd);
	return ZS_EXIT_OK;
}

static int valid_name(const char *name)
{
	return name[0] && !strchr(name, '/') && strcmp(name, ".") && strcmp(name, "..") &&
	       strlen(name) <= 200;
}

/* All of standard input, or NULL (too long, a read error). */
static char *read_all(size_t *len)
{
	size_t cap = 65536, used = 0;
	char *buf = malloc(cap);

	while (buf) {
		size_t got;

		if (used == cap) {
			char *bigger = cap < MAX_TEXT + 1 ? realloc(buf, cap * 2) : NULL;

			if (!bigger)
				break;
			buf = bigger;
			cap *= 2;
		}
		got = fread(buf + used, 1, cap - used, stdin);
		used += got;
		if (got == 0) {
			if (ferror(stdin) || used > MAX_TEXT)
				break;
			*len = used;
			return buf;
		}
	}
	free(buf);
	return NULL;
}

int cmd_textfile_write(int argc, char **argv)
{
	char err[ZS_ERRLEN];
	size_t len = 0;
	char *text;
	int fd, rc;

	if (wants_help(argc, argv))
		return usage_write(stdout);
	if (argc != 3)
		return usage_write(stderr);
	if (!valid_name(argv[2]))
		return cli_usage_error("textfile-write", "NAME '%s': expected a file name without '/' (not . or ..), at most 200 bytes",
				       argv[2]);
	text = read_all(&len);
	if (!text) {
		fprintf(stderr, "zonesort textfile-write: standard input is unreadable or longer than %u bytes; %s/%s unchanged\n",
			MAX_TEXT, argv[1], argv[2]);
		return ZS_EXIT_FAIL;
	}
	fd = zs_publicdir_open("zonesort textfile-write", argv[1], true, err);
	if (fd < 0) {
		fprintf(stderr, "%s\n", err);
		free(text);
		return ZS_EXIT_FAIL;
	}
	rc = zs_textfile_replace(fd, argv[2], text, len, 0644, (uid_t)-1, err);
	close(fd);
	free(text);
	if (rc) {
		fprintf(stderr, "zonesort textfile-write: %s: %s\n", argv[1], err);
		return ZS_EXIT_FAIL;
	}
	return ZS_EXIT_OK;
}
