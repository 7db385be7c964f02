// SPDX-License-Identifier: GPL-2.0-or-later
/* zonesort status: what the node has (memory-side caches, NUMA nodes), which
 * sorter would be used and whether it can be used, in human form or JSON. */
#include "cli.h"
#include "config.h"
#include "memcache.h"
#include "nodeset.h"
#include "parse.h"
#include "sorter.h"

#include <getopt.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct node_state {
	int node;
	long long mem, free;
	const struct zs_memcache *cache;
	bool target;
	bool works;
	char detail[ZS_ERRLEN];
};

static const char *ways_name(int ways, char *buf, size_t len)
{
	if (ways == 1)
		snprintf(buf, len, "direct-mapped");
	else if (ways == -1)
		snprintf(buf, len, "fully associative");
	else if (ways == 0)
		snprintf(buf, len, "associativity unknown");
	else
		snprintf(buf, len, "%d-way", ways);
	return buf;
}

/* Whether the backend could sort this node now, and why not. Looking, not
 * sorting: status has no side effects. */
static void probe_backend(const struct zs_policy *p, enum zs_sorter_kind k,
			  struct node_state *n)
{
	char path[PATH_MAX + 32];

	switch (k) {
	case ZS_SORTER_KERNEL: {
		FILE *f;
		unsigned interval = 0;

		snprintf(path, sizeof(path), "%s/nodeid", p->sysfs);
		n->works = access(path, W_OK) == 0;
		snprintf(n->detail, sizeof(n->detail), "%s %s", path,
			 n->works ? "writable" : "not writable");
		snprintf(path, sizeof(path), "%s/sort_interval", p->sysfs);
		f = fopen(path, "re");
		if (f && fscanf(f, "%u", &interval) == 1 && interval) {
			size_t used = strlen(n->detail);

			snprintf(n->detail + used, sizeof(n->detail) - used,
				 "; the module's timer sorts every %u s (writes get EBUSY)", interval);
		}
		if (f)
			fclose(f);
		break;
	}
	case ZS_SORTER_COMPACT:
		snprintf(path, sizeof(path), "%s/node%d/compact", p->node_sysfs, n->node);
		n->works = access(path, W_OK) == 0;
		snprintf(n->detail, sizeof(n->detail), "%s %s", path,
			 n->works ? "writable" : "not writable");
		break;
	default:
		n->works = false;
		snprintf(n->detail, sizeof(n->detail), "no sorter");
		break;
	}
}

static void print_human(const struct zs_sorter *s, const struct zs_memcache *mc, int nmc,
			const struct node_state *ns, int nn)
{
	char a[64], b[64], c[64], buf[256];
	enum zs_sorter_kind k = zs_sorter_backend(s);

	printf("memory-side caches:");
	if (!nmc)
		printf(" none detected (hwloc); cache_size= and ways= assume one\n");
	else
		putchar('\n');
	for (int i = 0; i < nmc; i++)
		printf("  node %d: %s, %s, %u B lines (%s)\n", mc[i].node,
		       zs_format_size(mc[i].size, a, sizeof(a)), ways_name(mc[i].ways, b, sizeof(b)),
		       mc[i].line_size, mc[i].source);
	printf("sorter: %s", zs_sorter_kind_name(k));
	if (k == ZS_SORTER_NONE || zs_sorter_why(s)[0])
		printf(" (%s)", zs_sorter_why(s));
	printf("\ntarget nodes: %s\n", zs_sorter_targets(s, buf, sizeof(buf)));
	for (int i = 0; i < nn; i++)
		printf("node %d: %s memory, %s free, cache %s, %s, sorter %s: %s (%s)\n", ns[i].node,
		       zs_format_size((uint64_t)ns[i].mem, a, sizeof(a)),
		       zs_format_size((uint64_t)ns[i].free, b, sizeof(b)),
		       ns[i].cache ? zs_format_size(ns[i].cache->size, c, sizeof(c)) : "none",
		       ns[i].target ? "target" : "not a target", zs_sorter_kind_name(k),
		       ns[i].works ? "works" : "unusable", ns[i].detail);
}

static void print_json(const struct zs_sorter *s, const struct zs_memcache *mc, int nmc,
		       const struct node_state *ns, int nn)
{
	char buf[256];

	printf("{\"version\":\"" PACKAGE_VERSION "\",\"memory_side_caches\":[");
	for (int i = 0; i < nmc; i++)
		printf("%s{\"node\":%d,\"size\":%llu,\"line_size\":%u,\"ways\":%d,\"depth\":%d,\"source\":\"%s\"}",
		       i ? "," : "", mc[i].node, (unsigned long long)mc[i].size, mc[i].line_size,
		       mc[i].ways, mc[i].depth, mc[i].source);
	printf("],\"sorter\":\"%s\",\"why\":", zs_sorter_kind_name(zs_sorter_backend(s)));
	cli_json_string(zs_sorter_why(s));
	printf(",\"targets\":");
	cli_json_string(zs_sorter_targets(s, buf, sizeof(buf)));
	printf(",\"nodes\":[");
	for (int i = 0; i < nn; i++) {
		printf("%s{\"node\":%d,\"memory\":%lld,\"free\":%lld,\"cache_size\":%llu,\"target\":%s,\"works\":%s,\"detail\":",
		       i ? "," : "", ns[i].node, ns[i].mem, ns[i].free,
		       ns[i].cache ? (unsigned long long)ns[i].cache->size : 0ULL,
		       ns[i].target ? "true" : "false", ns[i].works ? "true" : "false");
		cli_json_string(ns[i].detail);
		putchar('}');
	}
	printf("]}\n");
}

int cmd_status(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool json = false;
	char err[ZS_ERRLEN];
	struct zs_policy policy;
	struct zs_sorter *s;
	struct zs_memcache *mc;
	int nmc, c, nn = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+jh", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'h':
			printf("usage: zonesort status [--json] [key=value ...]\n"
			       "Shows the memory-side caches hwloc finds (or cache_size=/ways= assume),\n"
			       "the sorter that would be used, the target nodes, and for each NUMA node\n"
			       "its memory and whether the sorter can sort it.\n");
			return ZS_EXIT_OK;
		default:
			return cli_usage_error("status", "see 'zonesort status --help'");
		}
	}
	if (cli_policy(&policy, argc - optind, argv + optind))
		return ZS_EXIT_USAGE;
	char copy[PATH_MAX + 16];

	/* status always asks hwloc, and refreshes the copy jobs use. */
	snprintf(copy, sizeof(copy), "%s/memcache", policy.statedir);
	mkdir(policy.statedir, 0755);
	if (zs_memcache_discover_cached(&policy, copy, true, &mc, &nmc, err) ||
	    zs_sorter_open(&policy, &s, err)) {
		fprintf(stderr, "zonesort status: %s\n", err);
		return ZS_EXIT_FAIL;
	}
	struct bitmask *targets = zs_nodeset_targets(policy.nodes, mc, nmc, err);
	int max = zs_nodeset_max();
	struct node_state ns[max + 1];

	for (int n = 0; n <= max; n++) {
		long long freeb = 0, mem = numa_available() < 0 ? 0 : numa_node_size64(n, &freeb);

		if (mem <= 0 && numa_available() >= 0)
			continue;
		ns[nn] = (struct node_state){ .node = n, .mem = mem, .free = freeb,
					      .cache = zs_memcache_find(mc, nmc, n),
					      .target = targets && numa_bitmask_isbitset(targets, (unsigned)n) };
		probe_backend(&policy, zs_sorter_backend(s), &ns[nn]);
		nn++;
	}
	if (json)
		print_json(s, mc, nmc, ns, nn);
	else
		print_human(s, mc, nmc, ns, nn);
	if (targets)
		numa_bitmask_free(targets);
	free(mc);
	zs_sorter_close(s);
	return ZS_EXIT_OK;
}
