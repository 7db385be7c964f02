// SPDX-License-Identifier: GPL-2.0-or-later
/* zonesort conflicts: how the pages of processes (a job on this node) spread
 * over the slots of the memory-side cache, against random placement. The
 * definitions (slot, conflicting page, random expectation) are in
 * lib/slots.h. */
#include "config.h"
#include "cli.h"
#include "json.h"
#include "child.h"
#include "conflicts.h"
#include "errbuf.h"
#include "parse.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CMD "conflicts"

/* Validates --cache-size and --ways as usage errors, before anything runs. */
int cli_cache_options(const char *cmd, const char *size_arg, const char *ways_arg,
		      uint64_t *size, unsigned *ways)
{
	char err[ZS_ERRLEN];
	struct zs_slotgeom g;
	uint64_t w;

	*size = 0;
	*ways = 0;
	if (size_arg) {
		if (zs_parse_size("--cache-size", size_arg, size, err))
			return cli_usage_error(cmd, "%s", err);
		if (zs_slotgeom_init(&g, *size, 1, (unsigned)sysconf(_SC_PAGESIZE), "--cache-size",
				     "--ways", err))
			return cli_usage_error(cmd, "%s (given as '%s')", err, size_arg);
	}
	if (ways_arg) {
		if (zs_parse_u64("--ways", ways_arg, 1, 64, &w, err))
			return cli_usage_error(cmd, "%s (1 = direct-mapped)", err);
		*ways = (unsigned)w;
		if (*size && zs_slotgeom_init(&g, *size, (int)w, (unsigned)sysconf(_SC_PAGESIZE),
					      "--cache-size", "--ways", err))
			return cli_usage_error(cmd, "%s", err);
	}
	return 0;
}

static void print_pids(const pid_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		printf("%s%d", i ? "," : "", (int)p[i]);
}

static void print_json(const char *job, const pid_t *read, size_t nread, const pid_t *gone,
		       size_t ngone, const struct zs_pfnset *set, const struct zs_conflict_report *r,
		       double seconds)
{
	printf("{\"version\":\"" PACKAGE_VERSION "\",\"job\":");
	if (job)
		zs_json_string(stdout, job);
	else
		printf("null");
	printf(",\"pids\":[");
	print_pids(read, nread);
	printf("],\"exited\":[");
	print_pids(gone, ngone);
	printf("],\"pagemap_entries_read\":%llu,\"unread_pages\":%llu,\"present_entries\":%llu,\"pages\":%llu,\"bytes\":%llu,\"uncached_pages\":%llu,"
	       "\"conflicting_pages\":%llu,\"excess_pages\":%llu,\"conflict_fraction\":%.6f,"
	       "\"random_fraction\":%.6f,\"seconds\":%.3f,\"nodes\":[",
	       (unsigned long long)set->entries_read, (unsigned long long)set->unread_pages,
	       (unsigned long long)set->present, (unsigned long long)r->pages,
	       (unsigned long long)(r->pages * (uint64_t)sysconf(_SC_PAGESIZE)),
	       (unsigned long long)r->uncached, (unsigned long long)r->conflicting,
	       (unsigned long long)r->excess, r->fraction, r->random_fraction, seconds);
	for (unsigned i = 0; i < r->nnodes; i++) {
		const struct zs_conflict_node *n = &r->nodes[i];

		printf("%s{\"node\":%d,\"cache_size\":%llu,\"ways\":%llu,\"fully_associative\":%s,"
		       "\"page_size\":%u,\"slots\":%llu,\"pages\":%llu,\"conflicting_pages\":%llu,"
		       "\"excess_pages\":%llu,\"used_slots\":%llu,\"overfull_slots\":%llu,"
		       "\"max_in_slot\":%llu,\"conflict_fraction\":%.6f,\"random_fraction\":%.6f,"
		       "\"worst_slots\":[",
		       i ? "," : "", n->node, (unsigned long long)n->g.cache_size,
		       (unsigned long long)n->g.ways, n->g.fully_associative ? "true" : "false",
		       n->g.page_size, (unsigned long long)n->g.nslots, (unsigned long long)n->c.pages,
		       (unsigned long long)n->c.conflicting, (unsigned long long)n->c.excess,
		       (unsigned long long)n->c.used_slots, (unsigned long long)n->c.overfull_slots,
		       (unsigned long long)n->c.max_in_slot, zs_collisions_fraction(&n->c),
		       n->random_fraction);
		for (unsigned w = 0; w < n->nworst; w++)
			printf("%s{\"slot\":%llu,\"pages\":%u}", w ? "," : "",
			       (unsigned long long)n->worst_slot[w], n->worst_count[w]);
		printf("]}");
	}
	printf("]}\n");
}

static void print_human(const char *job, const pid_t *read, size_t nread,
			const struct zs_conflict_report *r)
{
	char a[64], b[96];
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);

	printf("zonesort: %s%s%s%zu process%s: %llu pages (%s) behind a memory-side cache",
	       job ? "job " : "", job ? job : "", job ? ", " : "", nread, nread == 1 ? "" : "es",
	       (unsigned long long)r->pages, zs_format_size(r->pages * page, a, sizeof(a)));
	if (r->uncached)
		printf(", %llu pages elsewhere (not counted)", (unsigned long long)r->uncached);
	printf("\n  pids: ");
	for (size_t i = 0; i < nread; i++)
		printf("%s%d", i ? " " : "", (int)read[i]);
	putchar('\n');
	for (unsigned i = 0; i < r->nnodes; i++) {
		const struct zs_conflict_node *n = &r->nodes[i];

		printf("node %d: cache %s, %llu slots of %llu page%s: %llu pages, %llu in overfull slots (%.1f%%), %llu over capacity; random placement %.1f%%\n",
		       n->node, zs_slotgeom_describe(&n->g, b, sizeof(b)),
		       (unsigned long long)n->g.nslots, (unsigned long long)n->g.ways,
		       n->g.ways == 1 ? "" : "s", (unsigned long long)n->c.pages,
		       (unsigned long long)n->c.conflicting, 100.0 * zs_collisions_fraction(&n->c),
		       (unsigned long long)n->c.excess, 100.0 * n->random_fraction);
		if (n->nworst) {
			printf("  worst slots:");
			for (unsigned w = 0; w < n->nworst; w++)
				printf(" %llu (%u)", (unsigned long long)n->worst_slot[w], n->worst_count[w]);
			putchar('\n');
		}
	}
	printf("conflicts: %.1f%% of the pages share a slot beyond its ways (random placement: %.1f%%)\n",
	       100.0 * r->fraction, 100.0 * r->random_fraction);
}

/* The command line: options, then process ids and policy words. */
struct conflicts_args {
	const char *job;
	const char *size_arg, *ways_arg;
	bool json;
	uint64_t cache_size;
	unsigned ways;
	struct zs_policy policy;
	pid_t *pids;
	size_t npids;
};

/* What one measurement reads and finds; freed by measurement_free. */
struct measurement {
	struct zs_node_geom *geoms;
	unsigned ngeoms;
	struct zs_zone *zones;
	unsigned nzones;
	struct zs_pfnset set;
	struct zs_conflict_report report;
	pid_t *jobpids, *read, *gone;
	size_t njob, nread, ngone;
};

static void usage(void)
{
	printf("usage: zonesort conflicts [--json] [--cache-size SIZE --ways N] PID... [key=value ...]\n"
	       "       zonesort conflicts [--json] [--cache-size SIZE --ways N] --job JOBID [key=value ...]\n"
	       "Maps every resident page of the processes (or of the Slurm job's processes\n"
	       "on this node, from 'scontrol listpids') to its slot of the memory-side\n"
	       "cache and reports the fraction of the pages whose slot holds more pages\n"
	       "of them than it has ways, the worst slots, and the fraction expected\n"
	       "for the same number of pages placed at random. A page mapped by several\n"
	       "of the processes counts once. The slot of page frame F is F mod S, with\n"
	       "S = cache size / (ways * page size).\n"
	       "--cache-size and --ways (or cache_size= and ways=) override what hwloc\n"
	       "finds; they are required where no memory-side cache is known.\n"
	       "Needs root: page frame numbers are hidden from other users.\n"
	       "Exit: 0 measured, 1 failure (no such process, not root, no cache), 2 usage.\n");
}

/* The operands, in any order: process ids, and policy words (key=value). */
static int parse_operands(int argc, char **argv, struct conflicts_args *a)
{
	char err[ZS_ERRLEN];
	int npol = 0, rc;
	char **pol = calloc((size_t)argc + 1, sizeof(char *));

	a->pids = calloc((size_t)argc + 1, sizeof(pid_t));
	if (!pol || !a->pids) {
		free(pol);
		fprintf(stderr, "zonesort conflicts: out of memory\n");
		return ZS_EXIT_FAIL;
	}
	for (int i = optind; i < argc; i++) {
		uint64_t v;

		if (strchr(argv[i], '=')) {
			pol[npol++] = argv[i];
			continue;
		}
		if (zs_parse_u64("PID", argv[i], 1, 4194304, &v, err)) {
			free(pol);
			return cli_usage_error(CMD, "%s", err);
		}
		a->pids[a->npids++] = (pid_t)v;
	}
	rc = cli_policy(&a->policy, NULL, npol, pol) ? ZS_EXIT_USAGE : CLI_GO_ON;
	free(pol);
	return rc;
}

/* Fills a from the command line. Returns CLI_GO_ON, or the exit code (help
 * printed, or a usage error). */
static int parse_conflicts(int argc, char **argv, struct conflicts_args *a)
{
	static const struct option opts[] = {
		{ "job", required_argument, NULL, 'J' },
		{ "cache-size", required_argument, NULL, 'c' },
		{ "ways", required_argument, NULL, 'w' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, "J:c:w:jh", opts, NULL)) != -1) {
		switch (c) {
		case 'J':
			a->job = optarg;
			break;
		case 'c':
			a->size_arg = optarg;
			break;
		case 'w':
			a->ways_arg = optarg;
			break;
		case 'j':
			a->json = true;
			break;
		case 'h':
			usage();
			return ZS_EXIT_OK;
		default:
			return cli_usage_error(CMD, "see 'zonesort conflicts --help'");
		}
	}
	if (cli_cache_options(CMD, a->size_arg, a->ways_arg, &a->cache_size, &a->ways))
		return ZS_EXIT_USAGE;
	rc = parse_operands(argc, argv, a);
	if (rc != CLI_GO_ON)
		return rc;
	if (!a->npids && !a->job)
		return cli_usage_error(CMD, "give process ids or --job JOBID");
	return CLI_GO_ON;
}

/* Root, and every process given exists. Prints why not. */
static bool can_measure(const struct conflicts_args *a)
{
	if (!zs_pagemap_privileged()) {
		fprintf(stderr, "zonesort conflicts: root is needed: /proc/PID/pagemap shows page frame numbers only to root (CAP_SYS_ADMIN); to anyone else they read as 0\n");
		return false;
	}
	for (size_t i = 0; i < a->npids; i++)
		if (kill(a->pids[i], 0) && errno == ESRCH) {
			fprintf(stderr, "zonesort conflicts: no process %d\n", (int)a->pids[i]);
			return false;
		}
	return true;
}

static int load_geoms(const struct conflicts_args *a, struct measurement *m, char *err)
{
	if (zs_node_geoms(&a->policy.memcache, false, a->cache_size, a->ways, &m->geoms,
			  &m->ngeoms, err))
		return -1;
	for (unsigned i = 0; i < m->ngeoms; i++)
		if (m->geoms[i].error[0])
			return zs_fail(err, "%s", m->geoms[i].error);
	return 0;
}

/* The job's processes on this node, from scontrol listpids. */
static int list_job(const char *job, struct measurement *m, char *err)
{
	bool cut;

	if (zs_job_pids(NULL, job, &m->jobpids, &m->njob, &cut, err))
		return -1;
	if (cut)
		fprintf(stderr, "zonesort conflicts: warning: 'scontrol listpids %s' printed more than %u MiB; only the %zu processes listed before that are measured\n",
			job, ZS_LISTPIDS_MAX >> 20, m->njob);
	if (!m->njob)
		return zs_fail(err, "job %s has no processes on this node (scontrol listpids %s lists none)",
			       job, job);
	return 0;
}

/* Reads the pages of the processes given and of the job's. */
static int collect(const struct conflicts_args *a, struct measurement *m, char *err)
{
	size_t total = a->npids + m->njob;

	m->read = calloc(total + 1, sizeof(pid_t));
	m->gone = calloc(total + 1, sizeof(pid_t));
	if (!m->read || !m->gone)
		return zs_fail(err, "out of memory");
	for (size_t i = 0; i < total; i++) {
		pid_t pid = i < a->npids ? a->pids[i] : m->jobpids[i - a->npids];

		switch (zs_pagemap_collect(pid, &m->set, err)) {
		case ZS_PAGEMAP_OK:
			m->read[m->nread++] = pid;
			break;
		case ZS_PAGEMAP_GONE:
			/* Exited between the listing and the read: its pages are
			 * free again, so they are left out. */
			fprintf(stderr, "zonesort conflicts: %s; left out\n", err);
			m->gone[m->ngone++] = pid;
			break;
		default:
			return -1;
		}
	}
	if (!m->nread)
		return zs_fail(err, "no process could be read: every one exited");
	return 0;
}

static int measure(const struct conflicts_args *a, struct measurement *m, char *err)
{
	if (load_geoms(a, m, err) || (a->job && list_job(a->job, m, err)) || collect(a, m, err))
		return -1;
	zs_pfnset_unique(&m->set);
	if (zs_zones_read(NULL, NULL, &m->zones, &m->nzones, err) ||
	    zs_conflicts_measure(&m->set, m->zones, m->nzones, m->geoms, m->ngeoms, &m->report,
				 err))
		return -1;
	if (m->set.unread_pages)
		fprintf(stderr, "zonesort conflicts: warning: %llu pages of resident mappings were not read: the budget of %llu pagemap entries per measurement was spent\n",
			(unsigned long long)m->set.unread_pages, (unsigned long long)m->set.budget);
	return 0;
}

static void measurement_free(struct measurement *m)
{
	zs_conflict_report_free(&m->report);
	zs_pfnset_free(&m->set);
	free(m->zones);
	free(m->geoms);
	free(m->read);
	free(m->gone);
	free(m->jobpids);
}

static int run_conflicts(const struct conflicts_args *a)
{
	struct measurement m = { 0 };
	char err[ZS_ERRLEN];
	double t0 = zs_now();
	int rc = ZS_EXIT_OK;

	if (measure(a, &m, err)) {
		fprintf(stderr, "zonesort conflicts: %s\n", err);
		rc = ZS_EXIT_FAIL;
	} else if (a->json) {
		print_json(a->job, m.read, m.nread, m.gone, m.ngone, &m.set, &m.report,
			   zs_now() - t0);
	} else {
		print_human(a->job, m.read, m.nread, &m.report);
	}
	measurement_free(&m);
	return rc;
}

int cmd_conflicts(int argc, char **argv)
{
	struct conflicts_args a = { 0 };
	int rc = parse_conflicts(argc, argv, &a);

	if (rc == CLI_GO_ON)
		rc = can_measure(&a) ? run_conflicts(&a) : ZS_EXIT_FAIL;
	free(a.pids);
	return rc;
}
