// SPDX-License-Identifier: GPL-2.0-or-later
/* zonesort: the administrator's command, and the periodic helper the SPANK
 * plugin starts. Entry point; each subcommand lives in its own file. */
#include "config.h"
#include "cli.h"
#include "errbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const struct {
	const char *name;
	int (*fn)(int, char **);
	const char *summary;
} commands[] = {
	{ "sort", cmd_sort, "sort the free lists of the target NUMA nodes now" },
	{ "run", cmd_run, "sort every N seconds until stopped (the plugin's periodic helper)" },
	{ "status", cmd_status, "show memory-side caches, the sorter, target nodes and free-memory slot balance" },
	{ "conflicts", cmd_conflicts, "cache-slot collisions of processes or of a Slurm job on this node" },
	{ "report", cmd_report, "what zonesort did for your job on this node (any user, own jobs only)" },
	{ "check-dir", cmd_check_dir, "whether root may write into a textfile directory (as prometheus_dir=)" },
	{ "textfile-write", cmd_textfile_write, "replace DIR/NAME by standard input, atomically, as prometheus_dir= is written" },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: zonesort <command> [options] [key=value ...]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-14s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\nkey=value words are the site policy keys of the SPANK plugin's\n"
		   "plugstack.conf line (sorter=, nodes=, sysfs=, cache_size=, ...).\n"
		   "'zonesort <command> --help' describes a command. Version " PACKAGE_VERSION ".\n");
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "zonesort %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return ZS_EXIT_USAGE;
}

int cli_policy(struct zs_policy *p, const char *node, int argc, char **argv)
{
	char err[ZS_ERRLEN], name[ZS_NODE_NAME_MAX + 1];

	zs_policy_defaults(p);
	if (zs_policy_for_node(p, node ? node : zs_node_name(name, sizeof(name)), err) ||
	    zs_policy_parse(p, argc, argv, err)) {
		fprintf(stderr, "zonesort: %s\n", err);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? ZS_EXIT_USAGE : ZS_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("zonesort " PACKAGE_VERSION "\n");
		return ZS_EXIT_OK;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "zonesort: unknown command '%s'; expected one of: sort, run, status, conflicts, report, check-dir, textfile-write\n",
		argv[1]);
	return ZS_EXIT_USAGE;
}
