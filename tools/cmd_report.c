// SPDX-License-Identifier: GPL-2.0-or-later
/* zonesort report: a user's own view of what zonesort did for their job on
 * this node, from the records the plugin keeps (lib/report.h). Needs no
 * privilege; shows only the caller's jobs (root: every job). */
#include "config.h"
#include "cli.h"
#include "json.h"
#include "parse.h"
#include "report.h"

#include <getopt.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *user_name(uid_t uid, char *buf, size_t len)
{
	struct passwd *pw = getpwuid(uid);

	if (pw)
		snprintf(buf, len, "%s (uid %u)", pw->pw_name, (unsigned)uid);
	else
		snprintf(buf, len, "uid %u", (unsigned)uid);
	return buf;
}

static const char *host_name(void)
{
	static char host[256];

	if (gethostname(host, sizeof(host) - 1))
		strcpy(host, "this node");
	host[strcspn(host, ".")] = '\0';
	return host;
}

/* The records are the user's own file: print them, never trust them. */
static const char *printable(const char *s, char *buf, size_t len)
{
	size_t i = 0;

	for (; *s && i + 1 < len; s++, i++)
		buf[i] = (*s >= 0x20 && *s != 0x7f) ? *s : '?';
	buf[i] = '\0';
	return buf;
}

/* Sorts made within min_interval of an earlier one, for memory freed on
 * the node since (by an earlier job's end, or the step's own start-up). */
static void print_freed(const struct zs_report_step *r)
{
	if (r->tally.freed)
		printf("      sorted %u time%s within min_interval of an earlier sort: memory was freed on the node since, which is handed out first, in no order\n",
		       r->tally.freed, r->tally.freed == 1 ? "" : "s");
}

/* When the order of a sort is lost, for the steps whose record says it. */
static void print_churn(const struct zs_report_step *r)
{
	if (!strcmp(r->where, "prolog") || !strcmp(r->mode, "off") || r->note[0])
		return;
	if (r->tally.churn)
		printf("      sorted again %u time%s after memory churn: the step freed memory after its sort (its start-up), which is handed out first, in no order\n",
		       r->tally.churn, r->tally.churn == 1 ? "" : "s");
	else if (!r->churn_watch)
		printf("      not watched for memory churn: what the step frees after its sort (its start-up) is handed out before the sorted pages\n");
}

static void print_human(uint32_t job, const struct zs_report_step *st, unsigned n)
{
	char tally[256], a[256], b[256], c[64], when[16];
	bool unsampled = false;

	printf("job %u:\n", job);
	for (unsigned i = 0; i < n; i++) {
		const struct zs_report_step *r = &st[i];
		time_t t = (time_t)r->time;
		struct tm tm;

		strftime(when, sizeof(when), "%H:%M:%S", localtime_r(&t, &tm));
		printf("  %s %-12s on %s: zonesort=%s, ", when, printable(r->where, c, sizeof(c)),
		       printable(r->node, a, sizeof(a)), printable(r->mode, b, sizeof(b)));
		if (!strcmp(r->mode, "off") && !r->tally.rounds)
			printf("no sort\n");
		else if (!strcmp(r->note, ZS_NOTHING_TO_SORT))
			printf("%s\n", ZS_NOTHING_TO_SORT);
		else if (r->note[0])
			printf("sorting unavailable: %s\n", printable(r->note, a, sizeof(a)));
		else
			printf("%s, backend %s\n", zs_tally_describe(&r->tally, tally, sizeof(tally)),
			       printable(r->backend, a, sizeof(a)));
		print_freed(r);
		print_churn(r);
		if (r->sample.samples) {
			double f = r->sample.fraction, rnd = r->sample.random;

			printf("      cache-slot conflicts: %.1f%% of the step's %llu pages shared a slot; random placement: %.1f%%",
			       100.0 * f, (unsigned long long)r->sample.pages, 100.0 * rnd);
			if (f == 0)
				printf(" (none collided)\n");
			else if (f > 1.1 * rnd)
				printf(" (%.1fx worse than random)\n", rnd > 0 ? f / rnd : 0.0);
			else if (f < 0.9 * rnd)
				printf(" (%.1fx fewer than random)\n", rnd / f);
			else
				printf(" (about as many as random placement)\n");
		} else if (r->sampling && strcmp(r->where, "prolog")) {
			printf("      cache-slot conflicts: not sampled (the step ended before the first period)\n");
		} else if (strcmp(r->where, "prolog")) {
			unsampled = true;
		}
	}
	if (unsampled)
		printf("  (conflicts are sampled only with --zonesort=SECONDS where the site sets sample_conflicts=yes)\n");
}

static void print_json(uint32_t job, uid_t owner, const struct zs_report_step *st, unsigned n)
{
	char who[128];

	printf("{\"job\":%u,\"owner\":", job);
	zs_json_string(stdout, user_name(owner, who, sizeof(who)));
	printf(",\"records\":[");
	for (unsigned i = 0; i < n; i++) {
		const struct zs_report_step *r = &st[i];

		printf("%s{\"time\":%.3f,\"where\":", i ? "," : "", r->time);
		zs_json_string(stdout, r->where);
		printf(",\"node\":");
		zs_json_string(stdout, r->node);
		printf(",\"mode\":");
		zs_json_string(stdout, r->mode);
		printf(",\"sorts\":{\"rounds\":%u,\"sorted\":%u,\"recent\":%u,\"busy\":%u,\"failed\":%u,\"seconds\":%.6f,\"after_churn\":%u,\"after_freed\":%u},\"churn_watch\":%u,\"backend\":",
		       r->tally.rounds, r->tally.sorted, r->tally.recent, r->tally.busy, r->tally.failed,
		       r->tally.seconds, r->tally.churn, r->tally.freed, r->churn_watch);
		zs_json_string(stdout, r->backend);
		printf(",\"unavailable\":");
		if (r->note[0])
			zs_json_string(stdout, r->note);
		else
			printf("null");
		printf(",\"sampling\":%s,\"conflicts\":", r->sampling ? "true" : "false");
		if (r->sample.samples)
			printf("{\"fraction\":%.6f,\"random_fraction\":%.6f,\"pages\":%llu,\"samples\":%u}",
			       r->sample.fraction, r->sample.random, (unsigned long long)r->sample.pages,
			       r->sample.samples);
		else
			printf("null");
		putchar('}');
	}
	printf("]}");
}

/* 0 shown (after prefix), 1 missing or refused (message printed). */
static int show_job(const struct zs_report_opts *o, uint32_t job, bool json, bool quiet_missing,
		    const char *prefix)
{
	struct zs_report_step *steps;
	unsigned n;
	uid_t owner = 0;
	char err[ZS_ERRLEN];

	switch (zs_report_load(o, job, &steps, &n, &owner, err)) {
	case ZS_REPORT_FOUND:
		break;
	case ZS_REPORT_MISSING:
		/* Also another user's job: the same words say nothing
		 * about other users' jobs. */
		if (!quiet_missing)
			fprintf(stderr, "zonesort report: no record of job %u of yours on %s: the job did not run here, is not yours, zonesort did not act for it, or its record is older than the site keeps them\n",
				job, host_name());
		return 1;
	case ZS_REPORT_ERROR:
		fprintf(stderr, "zonesort report: job %u: %s\n", job, err);
		return 1;
	}
	fputs(prefix, stdout);
	if (json)
		print_json(job, owner, steps, n);
	else
		print_human(job, steps, n);
	free(steps);
	return 0;
}

/* The command line; job 0: every job of the caller's on this node. */
struct report_args {
	uint64_t job;
	bool json;
	struct zs_policy policy;
};

static void usage(void)
{
	printf("usage: zonesort report [--job JOBID] [--json] [key=value ...]\n"
	       "Shows what zonesort did for your job on this node: for the job prolog\n"
	       "and each step, the mode (--zonesort=off|on|SECONDS), the sorts made,\n"
	       "skipped, busy or failed, the sorter used, and, where the site samples\n"
	       "conflicts (sample_conflicts=yes) and the step sorted periodically, the\n"
	       "fraction of the step's pages that shared a memory-side cache slot next\n"
	       "to what random placement would give. A sort orders free memory for\n"
	       "what is allocated next; memory a step frees after it (its start-up)\n"
	       "is handed out first, in no order: the report says how often the step\n"
	       "was sorted again for that (churn_watch=), or that it was not watched,\n"
	       "and how often the prolog or a step was sorted within min_interval of\n"
	       "an earlier sort because memory was freed on the node since.\n"
	       "Without --job: the job in\n"
	       "$SLURM_JOB_ID, else every job of yours recorded on this node, newest\n"
	       "first. Only a job's owner and root can read its record; records are\n"
	       "kept report_days days (plugstack.conf, default 7) and until reboot.\n"
	       "Run it on each node of the job to see that node.\n");
}

/* Fills a from the command line and $SLURM_JOB_ID. Returns CLI_GO_ON, or
 * the exit code (help printed, or a usage error). */
static int parse_report(int argc, char **argv, struct report_args *a)
{
	static const struct option opts[] = {
		{ "job", required_argument, NULL, 'j' },
		{ "json", no_argument, NULL, 'J' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char err[ZS_ERRLEN];
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "j:Jh", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			if (zs_parse_u64("--job", optarg, 1, UINT32_MAX, &a->job, err))
				return cli_usage_error("report", "%s", err);
			break;
		case 'J':
			a->json = true;
			break;
		case 'h':
			usage();
			return ZS_EXIT_OK;
		default:
			return cli_usage_error("report", "see 'zonesort report --help'");
		}
	}
	if (cli_policy(&a->policy, NULL, argc - optind, argv + optind))
		return ZS_EXIT_USAGE;
	if (!a->job && getenv("SLURM_JOB_ID") &&
	    zs_parse_u64("SLURM_JOB_ID", getenv("SLURM_JOB_ID"), 1, UINT32_MAX, &a->job, err))
		return cli_usage_error("report", "%s", err);
	return CLI_GO_ON;
}

/* Every job of the caller's recorded on this node. */
static int report_all(const struct report_args *a)
{
	char err[ZS_ERRLEN];
	uint32_t *jobs;
	unsigned n, shown = 0;

	if (zs_report_list(&a->policy.report, &jobs, &n, err)) {
		fprintf(stderr, "zonesort report: %s\n", err);
		return ZS_EXIT_FAIL;
	}
	if (a->json) {
		printf("{\"node\":");
		zs_json_string(stdout, host_name());
		printf(",\"jobs\":[");
	}
	for (unsigned i = 0; i < n; i++)
		if (!show_job(&a->policy.report, jobs[i], a->json, true, a->json && shown ? "," : ""))
			shown++;
	if (a->json)
		printf("]}\n");
	else if (!shown)
		printf("zonesort report: no job of yours recorded on %s\n", host_name());
	free(jobs);
	return ZS_EXIT_OK;
}

int cmd_report(int argc, char **argv)
{
	struct report_args a = { 0 };
	int rc = parse_report(argc, argv, &a);

	if (rc != CLI_GO_ON)
		return rc;
	if (!a.job)
		return report_all(&a);
	rc = show_job(&a.policy.report, (uint32_t)a.job, a.json, false, "");
	if (a.json && !rc)
		putchar('\n');
	return rc ? ZS_EXIT_FAIL : ZS_EXIT_OK;
}
