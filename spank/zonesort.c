// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * zonesort.so: a SPANK plugin that sorts the free lists of a node's memory
 * before each job and step, and every n seconds during a step when the user
 * asks (--zonesort=off|on|<n>), so consecutive page allocations land in
 * distinct slots of a direct-mapped memory-side cache.
 *
 * The entry points only dispatch on spank_context(): validation happens in
 * srun/sbatch/salloc, sorting as root in the job prolog and in slurmstepd.
 * The periodic sorting, and the churn watch that sorts again when the
 * step's start-up has churned memory (churn_watch=), are a separate
 * process ("zonesort run") that this plugin starts after the step's first
 * sort and stops when its tasks end.
 */
#include "config.h"
#include "child.h"
#include "errbuf.h"
#include "metrics.h"
#include "policy.h"
#include "report.h"
#include "slots.h"
#include "sorter.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <slurm/spank.h>

SPANK_PLUGIN(zonesort, 1);

#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(25, 5, 0)
/* Slurm 25.05 lets a plugin say what an error in slurm_spank_init in
 * slurmstepd means; by default it drains the node and requeues the job. A
 * bad plugstack.conf line is the site's configuration, not the node's
 * hardware: the job fails with the message and the node stays in service. */
int slurm_spank_init_failure_mode = ESPANK_JOB_FAILURE;
#endif

/* Slurm's special step ids (slurm.h). */
#define STEP_EXTERN 0xfffffffcU
#define STEP_BATCH 0xfffffffbU
#define STEP_INTERACTIVE 0xfffffffaU

/* How long the end of a step may wait for the periodic helper. */
#define HELPER_TERM_MS 300
#define HELPER_KILL_MS 1000

static struct zs_policy policy;
static int policy_argc;
static char **policy_argv;

static struct zs_request request;
static bool request_given;
static bool policy_refused;	/* bad plugstack.conf line, step runs unsorted */

/* Per step, in slurmstepd. */
static struct {
	uint32_t job, step;
	struct zs_tally tally;
	const char *backend;
	const char *module_refused;	/* the kernel refused modprobe=: zs_sorter_refusal */
	char unavailable[ZS_ERRLEN];
	char degraded[ZS_ERRLEN];	/* zs_sorter_degraded: a cache node without its kernel sorter */
	struct zs_child helper;
	bool helper_running;
	const char *helper_role;	/* "periodic sorting" or "the churn watch" */
	char helper_failed[ZS_ERRLEN];	/* why the helper's sorting did not run */
	int helper_out;
	char helper_errors[3][ZS_ERRLEN];
	unsigned nhelper_errors;
	struct zs_tally helper_tally;	/* the helper's last totals line */
	struct zs_sample sample;	/* the helper's last conflicts line */
	uint32_t tasks, tasks_exited;
	bool sorted;
	unsigned churn_watch;		/* the helper watches for memory churn this long */
} step = { .helper_out = -1 };

static int option_cb(int val, const char *optarg, int remote);

static char option_usage[256];
static struct spank_option zonesort_option = {
	"zonesort", "off|on|SECONDS", option_usage, 1, 0, option_cb,
};

static int option_cb(int val, const char *optarg, int remote)
{
	char err[ZS_ERRLEN];
	struct zs_request r;

	(void)val;
	if (zs_request_parse(&policy.request, optarg, &r, err)) {
		if (!remote) {
			slurm_error("zonesort: %s", err);
			return -1;
		}
		/* srun already validated it; a value that fails here came from a
		 * changed site policy or a forged environment. Never fail the
		 * step for it. */
		slurm_error("zonesort: %s; using the site default", err);
		return 0;
	}
	request = r;
	request_given = true;
	return 0;
}

static const char *node_name(void)
{
	static char name[ZS_NODE_NAME_MAX + 1];

	if (!name[0])
		zs_node_name(name, sizeof(name));
	return name;
}

static int load_policy(int ac, char **av)
{
	char err[ZS_ERRLEN];
	spank_context_t ctx = spank_context();

	zs_policy_defaults(&policy);
	/* Per-node-class values (cache_size=knl*:16GiB) apply where the
	 * plugin sorts; srun, sbatch and salloc only check them. */
	if ((ctx == S_CTX_REMOTE || ctx == S_CTX_JOB_SCRIPT || ctx == S_CTX_SLURMD) &&
	    zs_policy_for_node(&policy, node_name(), err)) {
		slurm_error("zonesort: %s", err);
		return -1;
	}
	if (zs_policy_parse(&policy, ac, av, err)) {
		slurm_error("zonesort: plugstack.conf: %s", err);
		return -1;
	}
	policy_argc = ac;
	policy_argv = av;
	return 0;
}

int slurm_spank_init(spank_t sp, int ac, char **av)
{
	spank_context_t ctx = spank_context();

	if (load_policy(ac, av)) {
#if SLURM_VERSION_NUMBER < SLURM_VERSION_NUM(25, 5, 0)
		/* Before 25.05 this error in slurmstepd drains the node (there
		 * is no slurm_spank_init_failure_mode): the step runs unsorted
		 * instead, as the job prolog does, and the log names the line. */
		if (ctx == S_CTX_REMOTE) {
			policy_refused = true;
			return 0;
		}
#endif
		return -1;
	}
	if (ctx == S_CTX_SLURMD)
		return 0;
	char dflt[32];

	/* The default as the user would write it: on, off or its period. */
	if (policy.request.dflt.mode == ZS_MODE_PERIODIC)
		snprintf(dflt, sizeof(dflt), "%u (every %u s)", policy.request.dflt.period,
			 policy.request.dflt.period);
	else
		zs_request_describe(&policy.request.dflt, dflt, sizeof(dflt));
	snprintf(option_usage, sizeof(option_usage),
		 "Sort free memory before the job: on, off%s, or a period in seconds (%u-%u) to also sort during each step. Default: %s. What it did for your job: zonesort report.",
		 policy.request.allow_off ? "" : " (not allowed here)", policy.request.min_period,
		 ZS_MAX_PERIOD, dflt);
	if (spank_option_register(sp, &zonesort_option) != ESPANK_SUCCESS) {
		slurm_error("zonesort: cannot register --zonesort");
		return -1;
	}
	return 0;
}

static struct zs_request effective_request(void)
{
	return request_given ? request : policy.request.dflt;
}

static void note_node(void *ctx, const struct zs_node_result *r)
{
	(void)ctx;
	/* A degraded node's why is in the summary line, once. */
	if (r->outcome == ZS_DEGRADED)
		return;
	if (r->outcome == ZS_NOSORTER || r->outcome == ZS_NOTHING)
		snprintf(step.unavailable, sizeof(step.unavailable), "%s", r->msg);
	else if (r->outcome == ZS_FAILED || r->outcome == ZS_BUSY || r->msg[0])
		slurm_info("zonesort: job %u: node %d %s: %s", step.job, r->node,
			   zs_outcome_name(r->outcome), r->msg);
}

/* Sorts now, at site (the prolog or a step); every failure is logged and
 * absorbed: a missing or broken sorter never fails a job. */
static struct zs_sorter *sort_now(enum zs_sort_site site)
{
	struct zs_sorter_opts opts = policy.sorter;
	char err[ZS_ERRLEN];
	struct zs_sorter *s;

	opts.site = site;
	if (zs_sorter_open(&opts, &policy.memcache, &policy.metrics, &s, err)) {
		slurm_error("zonesort: job %u: %s", step.job, err);
		return NULL;
	}
	step.backend = zs_sorter_kind_name(zs_sorter_backend(s));
	step.module_refused = zs_sorter_refusal(s);
	snprintf(step.degraded, sizeof(step.degraded), "%s",
		 zs_sorter_degraded(s) ? zs_sorter_degraded(s) : "");
	struct zs_tally before = step.tally;

	zs_sorter_sort(s, policy.min_interval, &step.tally, note_node, NULL);
	/* A node with nothing to sort has no sorter to be up or down. */
	if (!zs_sorter_nothing_to_sort(s) &&
	    zs_metrics_sorts(&policy.metrics, node_name(), step.backend, zs_sorter_degraded(s) != NULL,
			     &before, &step.tally, err))
		slurm_error("zonesort: job %u: %s", step.job, err);
	step.sorted = true;
	return s;
}

static void log_summary(const char *where, const struct zs_request *r)
{
	char req[32], tally[256];

	zs_request_describe(r, req, sizeof(req));
	if (r->mode == ZS_MODE_OFF && !step.sorted)
		slurm_info("zonesort: job %u %s on %s: zonesort=off, no sort", step.job, where,
			   node_name());
	else if (!strcmp(step.unavailable, ZS_NOTHING_TO_SORT))
		slurm_info("zonesort: job %u %s on %s: zonesort=%s, %s", step.job, where, node_name(),
			   req, step.unavailable);
	else if (step.unavailable[0])
		slurm_info("zonesort: job %u %s on %s: zonesort=%s, sorting unavailable: %s", step.job,
			   where, node_name(), req, step.unavailable);
	else {
		struct zs_tally t = step.tally;

		zs_tally_add(&t, &step.helper_tally);
		char conflicts[96] = "";

		/* The conflict fraction the periodic helper last sampled
		 * (sample_conflicts=yes), with random placement for scale. */
		if (step.sample.samples)
			snprintf(conflicts, sizeof(conflicts), ", conflicts %.1f%% (random %.1f%%)",
				 100.0 * step.sample.fraction, 100.0 * step.sample.random);
		slurm_info("zonesort: job %u %s on %s: zonesort=%s%s%s%s%s%s, %s, backend %s%s%s%s%s%s%s", step.job, where,
			   node_name(), req, step.helper_failed[0] ? " but " : "",
			   step.helper_failed[0] ? step.helper_role : "",
			   step.helper_failed[0] ? " did not run (" : "", step.helper_failed,
			   step.helper_failed[0] ? ")" : "",
			   zs_tally_describe(&t, tally, sizeof(tally)), step.backend ? step.backend : "none",
			   step.module_refused ? " (module refused by the kernel: " : "",
			   step.module_refused ? step.module_refused : "", step.module_refused ? ")" : "",
			   conflicts, step.degraded[0] ? ", degraded: " : "", step.degraded);
	}
}

/* The job owner's own copy of the summary line, which "zonesort report"
 * shows them (report.h). */
static void report_step(spank_t sp, const char *where, const struct zs_request *r)
{
	struct zs_report_step rs = { .time = (double)time(NULL), .job = step.job,
				     .tally = step.tally, .sample = step.sample,
				     .sampling = policy.sample_conflicts && r->mode == ZS_MODE_PERIODIC };
	const char *env_uid = getenv("SLURM_JOB_UID");
	char err[ZS_ERRLEN];
	uid_t uid;

	if (spank_get_item(sp, S_JOB_UID, &uid) != ESPANK_SUCCESS) {
		if (!env_uid)
			return;
		uid = (uid_t)strtoul(env_uid, NULL, 10);
	}
	zs_tally_add(&rs.tally, &step.helper_tally);
	rs.churn_watch = step.helper_failed[0] ? 0 : step.churn_watch;
	snprintf(rs.where, sizeof(rs.where), "%s", where);
	snprintf(rs.node, sizeof(rs.node), "%s", node_name());
	zs_request_describe(r, rs.mode, sizeof(rs.mode));
	snprintf(rs.backend, sizeof(rs.backend), "%s", step.backend ? step.backend : "none");
	snprintf(rs.note, sizeof(rs.note), "%s", step.unavailable[0] ? step.unavailable : step.degraded);
	if (zs_report_add(&policy.report, uid, &rs, err))
		slurm_error("zonesort: job %u: %s", step.job, err);
}

/* --- job prolog: once per node per job, as root ----------------------- */

int slurm_spank_job_prolog(spank_t sp, int ac, char **av)
{
	char *optarg = NULL;
	struct zs_request r;

	/* Slurm 22.05 calls this without slurm_spank_init: parse here. A bad
	 * line is logged and the job runs unsorted; the node is not drained. */
	if (load_policy(ac, av))
		return 0;
	spank_get_item(sp, S_JOB_ID, &step.job);
	r = policy.request.dflt;
	if (spank_option_getopt(sp, &zonesort_option, &optarg) == ESPANK_SUCCESS) {
		char err[ZS_ERRLEN];

		if (zs_request_parse(&policy.request, optarg, &r, err)) {
			slurm_error("zonesort: job %u: %s; using the site default", step.job, err);
			r = policy.request.dflt;
		}
	}
	if (r.mode != ZS_MODE_OFF)
		zs_sorter_close(sort_now(ZS_SITE_PROLOG));
	log_summary("prolog", &r);
	report_step(sp, "prolog", &r);
	unsigned expired;
	char err[ZS_ERRLEN];

	if (zs_report_expire(&policy.report, time(NULL), &expired, err))
		slurm_error("zonesort: job %u: %s", step.job, err);
	return 0;
}

/* --- job epilog: once per node per job, as root ------------------------ */

/* When the job ended here: Slurm runs this just before the Epilog script,
 * so a health check there that stops recording shows as a job end newer
 * than its last run (etc/prometheus-rules.zonesort.yml). Only with
 * prometheus_dir=; never fails the job. */
int slurm_spank_job_epilog(spank_t sp, int ac, char **av)
{
	char err[ZS_ERRLEN];

	if (load_policy(ac, av) || !policy.metrics.prometheus_dir[0])
		return 0;
	spank_get_item(sp, S_JOB_ID, &step.job);
	if (zs_metrics_job_end(&policy.metrics, node_name(), err))
		slurm_error("zonesort: job %u: %s", step.job, err);
	return 0;
}

/* --- slurmstepd: before each step, as root ----------------------------- */

/* Starts "zonesort run" with --every period (0: none) and --watch watch
 * (0: none). */
static void start_helper(unsigned period, unsigned watch)
{
	char every[16], watching[16], parent[16], err[ZS_ERRLEN];
	/* helper run [--every N] [--watch S] --parent P --node NAME
	 * [--sample P] -- WORDS... NULL: 14 besides the words at most. */
	char **argv = calloc((size_t)policy_argc + 14, sizeof(char *));
	int fds[2], argc = 0;

	step.helper_role = period ? "periodic sorting" : "the churn watch";
	if (!argv) {
		snprintf(step.helper_failed, sizeof(step.helper_failed), "out of memory");
		return;
	}
	snprintf(every, sizeof(every), "%u", period);
	snprintf(watching, sizeof(watching), "%u", watch);
	snprintf(parent, sizeof(parent), "%d", (int)getpid());
	argv[argc++] = policy.helper;
	argv[argc++] = "run";
	if (period) {
		argv[argc++] = "--every";
		argv[argc++] = every;
	}
	if (watch) {
		argv[argc++] = "--watch";
		argv[argc++] = watching;
	}
	argv[argc++] = "--parent";
	argv[argc++] = parent;
	/* The helper's environment is clean: the node its class values and
	 * metrics are for. */
	argv[argc++] = "--node";
	argv[argc++] = (char *)node_name();
	if (period && policy.sample_conflicts) {
		/* The step's tasks are this slurmstepd's descendants. */
		argv[argc++] = "--sample";
		argv[argc++] = parent;
	}
	argv[argc++] = "--";
	for (int i = 0; i < policy_argc; i++)
		argv[argc++] = policy_argv[i];
	argv[argc] = NULL;

	/* Close-on-exec, or every task of the step would hold the pipe. */
	if (pipe2(fds, O_CLOEXEC)) {
		snprintf(step.helper_failed, sizeof(step.helper_failed), "pipe: %s", strerror(errno));
		slurm_error("zonesort: job %u: %s", step.job, step.helper_failed);
		free(argv);
		return;
	}
	if (zs_spawn(policy.helper, argv, fds[1], &step.helper, err)) {
		close(fds[1]);
		free(argv);
		snprintf(step.helper_failed, sizeof(step.helper_failed), "periodic helper: %s", err);
		slurm_error("zonesort: job %u: %s", step.job, step.helper_failed);
		close(fds[0]);
		return;
	}
	close(fds[1]);
	free(argv);
	step.helper_running = true;
	step.helper_out = fds[0];
	step.churn_watch = watch;
}

int slurm_spank_init_post_opt(spank_t sp, int ac, char **av)
{
	struct zs_request r;

	(void)ac;
	(void)av;
	if (spank_context() != S_CTX_REMOTE || policy_refused)
		return 0;
	spank_get_item(sp, S_JOB_ID, &step.job);
	spank_get_item(sp, S_JOB_STEPID, &step.step);
	spank_get_item(sp, S_JOB_LOCAL_TASK_COUNT, &step.tasks);
	if (step.step == STEP_EXTERN)
		return 0;
	r = effective_request();
	if (r.mode == ZS_MODE_OFF)
		return 0;
	struct zs_sorter *s = sort_now(ZS_SITE_STEP);
	/* A degraded node's helper would only compact, which the site must
	 * have asked for (compact_fallback=periodic). */
	bool have_sorter = s && zs_sorter_backend(s) != ZS_SORTER_NONE &&
			   (!zs_sorter_degraded(s) || policy.sorter.fallback >= ZS_FALLBACK_PERIODIC);
	/* The churn watch sorts again after the step's start-up churned
	 * memory: only the kernel sorter is quick enough to do that. */
	unsigned watch = s && zs_sorter_backend(s) == ZS_SORTER_KERNEL ? policy.churn_watch : 0;

	zs_sorter_close(s);
	if (r.mode == ZS_MODE_PERIODIC && have_sorter)
		start_helper(r.period, watch);
	else if (r.mode == ZS_MODE_ON && watch)
		start_helper(0, watch);
	return 0;
}

/* Reads what the helper printed: keeps its last totals line and a few of
 * its error lines. */
static void read_helper_output(int timeout_ms)
{
	static char buf[8192];
	static size_t used;
	double deadline = zs_now() + timeout_ms / 1000.0;

	while (step.helper_out >= 0) {
		struct pollfd p = { .fd = step.helper_out, .events = POLLIN };
		int left = (int)((deadline - zs_now()) * 1000.0);
		ssize_t r;

		if (left < 0 || poll(&p, 1, left) <= 0)
			return;
		r = read(step.helper_out, buf + used, sizeof(buf) - 1 - used);
		if (r <= 0) {
			close(step.helper_out);
			step.helper_out = -1;
			return;
		}
		used += (size_t)r;
		buf[used] = '\0';
		char *line = buf, *nl;

		while ((nl = strchr(line, '\n'))) {
			struct zs_tally t;
			struct zs_sample sm;

			*nl = '\0';
			if (!zs_tally_parse(line, &t))
				step.helper_tally = t;
			else if (!zs_sample_parse(line, &sm))
				step.sample = sm;
			else if (step.nhelper_errors < 3) {
				snprintf(step.helper_errors[step.nhelper_errors++], ZS_ERRLEN, "%s", line);
			}
			line = nl + 1;
		}
		used = strlen(line);
		memmove(buf, line, used + 1);
		if (used == sizeof(buf) - 1)
			used = 0;
	}
}

/* SIGTERM, read its final totals while it exits, SIGKILL if it lingers.
 * Bounded: the step's end waits HELPER_TERM_MS + HELPER_KILL_MS at most, and
 * usually a few milliseconds. */
static void stop_helper(void)
{
	char line[ZS_ERRLEN];

	if (!step.helper_running)
		return;
	step.helper_running = false;
	/* A helper that ended by itself may have been reaped by slurmstepd
	 * already, and its pid reused: it is only ever signalled through its
	 * pidfd, which says it is gone. */
	if (zs_child_wait(&step.helper, 0) == 0) {
		if (step.helper.have_status && WIFEXITED(step.helper.status))
			snprintf(step.helper_failed, sizeof(step.helper_failed),
				 "the periodic helper exited early with status %d",
				 WEXITSTATUS(step.helper.status));
		else if (step.helper.have_status)
			snprintf(step.helper_failed, sizeof(step.helper_failed),
				 "the periodic helper was killed early by signal %d",
				 WTERMSIG(step.helper.status));
		else
			snprintf(step.helper_failed, sizeof(step.helper_failed),
				 "the periodic helper exited early");
	} else {
		zs_child_signal(&step.helper, SIGTERM);
	}
	read_helper_output(HELPER_TERM_MS);
	if (zs_stop(&step.helper, 10, HELPER_KILL_MS))
		slurm_error("zonesort: job %u step %u: periodic helper %d did not exit", step.job,
			    step.step, (int)step.helper.pid);
	if (step.helper_out >= 0) {
		close(step.helper_out);
		step.helper_out = -1;
	}
	for (unsigned i = 0; i < step.nhelper_errors; i++)
		slurm_error("zonesort: job %u step %u: periodic helper: %s", step.job, step.step,
			    zs_escape(step.helper_errors[i], line, sizeof(line)));
}

/* The helper stops as soon as the step's last local task exits, so it
 * never outlives the work it sorts for. */
int slurm_spank_task_exit(spank_t sp, int ac, char **av)
{
	(void)sp;
	(void)ac;
	(void)av;
	if (spank_context() != S_CTX_REMOTE)
		return 0;
	if (++step.tasks_exited >= step.tasks)
		stop_helper();
	return 0;
}

static const char *step_name(char *buf, size_t len)
{
	if (step.step == STEP_BATCH)
		snprintf(buf, len, "batch step");
	else if (step.step == STEP_INTERACTIVE)
		snprintf(buf, len, "interactive step");
	else
		snprintf(buf, len, "step %u", step.step);
	return buf;
}

int slurm_spank_exit(spank_t sp, int ac, char **av)
{
	char name[32];

	(void)sp;
	(void)ac;
	(void)av;
	if (spank_context() != S_CTX_REMOTE || step.step == STEP_EXTERN || !step.job)
		return 0;
	stop_helper();
	/* A writer a stopped sort left in the kernel (kwrite.h) that has
	 * ended since is reaped here; slurmstepd's wait3 takes it otherwise. */
	zs_call_reap_left();
	struct zs_request r = effective_request();

	log_summary(step_name(name, sizeof(name)), &r);
	report_step(sp, name, &r);
	return 0;
}
