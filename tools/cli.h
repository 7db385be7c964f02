/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The zonesort command's subcommands and what they share. */
#ifndef ZS_CLI_H
#define ZS_CLI_H

#include "policy.h"

/* Exit codes of every subcommand. */
enum { ZS_EXIT_OK = 0, ZS_EXIT_FAIL = 1, ZS_EXIT_USAGE = 2 };

/* What a subcommand's parse step returns when the command goes on to run;
 * any other value is its exit code. */
#define CLI_GO_ON (-1)

int cmd_sort(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_conflicts(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_check_dir(int argc, char **argv);
int cmd_textfile_write(int argc, char **argv);

/* Parses --cache-size and --ways (either may be NULL: not given) into size
 * and ways (0 = not given), printing a usage error for a bad value: a size
 * that is zero or not a power of two, ways outside 1-64 or not dividing the
 * cache into whole page slots. Returns 0, or ZS_EXIT_USAGE. */
int cli_cache_options(const char *cmd, const char *size_arg, const char *ways_arg,
		      uint64_t *size, unsigned *ways);

/* Reads the policy words (key=value, as in plugstack.conf) that follow the
 * options of a subcommand, with the per-node-class values of node (NULL:
 * this node, zs_node_name). Prints the error and returns -1 on a bad one. */
int cli_policy(struct zs_policy *p, const char *node, int argc, char **argv);

/* Prints "zonesort <cmd>: <message>" to stderr and returns ZS_EXIT_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));


#endif
