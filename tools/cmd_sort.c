// SPDX-License-Identifier: GPL-2.0-or-later
/* zonesort sort: sort the target nodes once, now, and say what happened. */
#include "config.h"
#include "cli.h"
#include "parse.h"
#include "sorter.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

static void print_node(void *ctx, const struct zs_node_result *r)
{
	const char *backend = ctx;

	if (r->node < 0)
		printf("zonesort: %s: %s\n", zs_outcome_name(r->outcome), r->msg);
	else if (r->outcome == ZS_FALLBACK)
		printf("zonesort: node %d: compacted in place of a sort in %.3f s\n", r->node, r->seconds);
	else if (r->outcome == ZS_SORTED)
		printf("zonesort: node %d: sorted in %.3f s (%s)%s%s\n", r->node, r->seconds, backend,
		       r->msg[0] ? ": " : "", r->msg);
	else
		printf("zonesort: node %d: %s: %s\n", r->node, zs_outcome_name(r->outcome), r->msg);
}

/* The command line: --nodes is applied to the policy as nodes=. */
struct sort_args {
	uint64_t min_interval;
	struct zs_policy policy;
};

static void usage(void)
{
	printf("usage: zonesort sort [--nodes LIST] [--min-interval SECONDS] [key=value ...]\n"
	       "Sorts the free lists of the target NUMA nodes now (default: the nodes\n"
	       "behind a memory-side cache) and reports each node and the time taken.\n"
	       "A machine without a memory-side cache (none found, no cache_size=) has\n"
	       "nothing to sort and is left alone, unless nocache=compact is given.\n"
	       "Nodes sorted less than --min-interval seconds ago are skipped (default\n"
	       "0: always sort), unless 1/16 of a node's cache was freed on it since\n"
	       "(recent_freed=sort, the default; the kernel sorter only).\n"
	       "A node with a cache but without its kernel sorter (module missing or\n"
	       "refused) is degraded: with sorter=auto it is compacted in its place\n"
	       "here whatever compact_fallback= says (that key is for the plugin).\n"
	       "Exit: 0 sorted or nothing to sort, 1 a node failed or no sorter exists,\n"
	       "2 usage error.\n");
}

/* Fills a from the command line. Returns CLI_GO_ON, or the exit code (help
 * printed, or a usage error). */
static int parse_sort(int argc, char **argv, struct sort_args *a)
{
	static const struct option opts[] = {
		{ "nodes", required_argument, NULL, 'n' },
		{ "min-interval", required_argument, NULL, 'i' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *nodes = NULL;
	char err[ZS_ERRLEN];
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+n:i:h", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			nodes = optarg;
			break;
		case 'i':
			if (zs_parse_u64("--min-interval", optarg, 0, 86400, &a->min_interval, err))
				return cli_usage_error("sort", "%s", err);
			break;
		case 'h':
			usage();
			return ZS_EXIT_OK;
		default:
			return cli_usage_error("sort", "see 'zonesort sort --help'");
		}
	}
	if (cli_policy(&a->policy, NULL, argc - optind, argv + optind))
		return ZS_EXIT_USAGE;
	if (nodes) {
		char word[300];

		snprintf(word, sizeof(word), "nodes=%s", nodes);
		if (zs_policy_set(&a->policy, word, err))
			return cli_usage_error("sort", "--nodes: %s", err);
	}
	return CLI_GO_ON;
}

static int run_sort(const struct sort_args *a)
{
	char err[ZS_ERRLEN], buf[256];
	struct zs_sorter *s;
	struct zs_tally tally = { 0 };
	int rc;

	if (zs_sorter_open(&a->policy.sorter, &a->policy.memcache, &a->policy.metrics, &s, err)) {
		fprintf(stderr, "zonesort sort: %s\n", err);
		return ZS_EXIT_USAGE;
	}
	const char *backend = zs_sorter_kind_name(zs_sorter_backend(s));

	if (zs_sorter_nothing_to_sort(s)) {
		printf("zonesort: %s (nocache=compact compacts such a node all the same)\n",
		       ZS_NOTHING_TO_SORT);
		zs_sorter_close(s);
		return ZS_EXIT_OK;
	}
	if (zs_sorter_backend(s) == ZS_SORTER_NONE) {
		fprintf(stderr, "zonesort sort: no sorter available: %s\n", zs_sorter_why(s));
		zs_sorter_close(s);
		return ZS_EXIT_FAIL;
	}
	/* A cache node without its kernel sorter: say why (a refusal by
	 * name); compaction stands in here, as the administrator asked. */
	if (zs_sorter_degraded(s))
		fprintf(stderr, "zonesort sort: degraded: %s; sorting with %s instead\n", zs_sorter_why(s),
			backend);
	rc = zs_sorter_sort(s, (unsigned)a->min_interval, &tally, print_node, (void *)backend);
	printf("zonesort: nodes %s: %s, backend %s\n", zs_sorter_targets(s, buf, sizeof(buf)),
	       zs_tally_describe(&tally, err, sizeof(err)), backend);
	zs_sorter_close(s);
	return rc ? ZS_EXIT_FAIL : ZS_EXIT_OK;
}

int cmd_sort(int argc, char **argv)
{
	struct sort_args a = { 0 };
	int rc = parse_sort(argc, argv, &a);

	return rc != CLI_GO_ON ? rc : run_sort(&a);
}
