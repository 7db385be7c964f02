// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"
#include "sorter.h"
#include "child.h"
#include "kmod.h"
#include "kwrite.h"
#include "memcache.h"
#include "metrics.h"
#include "modsig.h"
#include "nodeset.h"
#include "occupied.h"
#include "statedir.h"
#include "textfile.h"
#include "vmstat.h"
#include "zonesort_abi.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct zs_sorter {
	struct zs_sorter_opts opts;
	struct zs_memcache_opts memcache;
	struct zs_metrics_opts metrics;
	enum zs_sorter_kind backend;
	char why[ZS_ERRLEN];
	enum zs_modrefusal refusal;	/* why the kernel refused the module, by name */
	struct bitmask *targets;
	struct zs_memcache *mc;
	int nmc;
	bool discovered;
	int statefd;			/* the checked state directory, or -1 */
	long long last_start_ns;	/* when this sorter's last sort began */
	bool compaction_held;		/* see zs_sorter_hold_compaction */
	struct zs_kmod kmod;		/* the kernel module's files (kmod.h) */
	struct zs_occupied *occ;	/* zs_sorter_occupy: for the next round only */
	unsigned nocc;
	bool nothing;			/* no memory-side cache, nocache=skip */
	char degraded[ZS_ERRLEN];	/* zs_sorter_degraded; "" when not */
};

/* The state directory, checked and opened once per sorter. */
static int state_dir(struct zs_sorter *s, char *err)
{
	if (s->statefd < 0)
		s->statefd = zs_statedir_open(s->opts.statedir, true, err);
	return s->statefd;
}

/* hwloc's topology load costs milliseconds, so it happens once per boot
 * (the copy in the state directory) and only when the answer matters:
 * nodes=auto, whether the machine has a cache at all (unless cache_size=
 * says so), or a module to load with the cache geometry. */
static int discover(struct zs_sorter *s, char *err)
{
	if (s->discovered)
		return 0;
	if (zs_memcache_discover_cached(&s->memcache, false, &s->mc, &s->nmc, err))
		return -1;
	s->discovered = true;
	return 0;
}

const char *zs_sorter_kind_name(enum zs_sorter_kind k)
{
	switch (k) {
	case ZS_SORTER_AUTO: return "auto";
	case ZS_SORTER_KERNEL: return "kernel";
	case ZS_SORTER_COMPACT: return "compact";
	case ZS_SORTER_NONE: return "none";
	}
	return "?";
}

const char *zs_fallback_name(enum zs_fallback f)
{
	switch (f) {
	case ZS_FALLBACK_NO: return "no";
	case ZS_FALLBACK_PROLOG: return "prolog";
	case ZS_FALLBACK_STEPS: return "steps";
	case ZS_FALLBACK_PERIODIC: return "periodic";
	}
	return "?";
}

const char *zs_outcome_name(enum zs_outcome o)
{
	switch (o) {
	case ZS_SORTED: return "sorted";
	case ZS_RECENT: return "recent";
	case ZS_BUSY: return "busy";
	case ZS_FAILED: return "failed";
	case ZS_NOSORTER: return "nosorter";
	case ZS_NOTHING: return "nothing";
	case ZS_FALLBACK: return "fallback";
	case ZS_DEGRADED: return "degraded";
	}
	return "?";
}

static void compact_path(const struct zs_sorter *s, int node, char *buf, size_t len)
{
	snprintf(buf, len, "%s/node%d/compact", s->opts.node_sysfs, node);
}

static int first_target(const struct zs_sorter *s)
{
	for (int n = 0; n <= zs_nodeset_max(); n++)
		if (numa_bitmask_isbitset(s->targets, (unsigned)n))
			return n;
	return 0;
}

/* Loads the kernel module the site named, passing it the cache geometry
 * hwloc found so it never has to guess (Intel's module ignores them). */
static void load_module(struct zs_sorter *s)
{
	char size_arg[64] = "", ways_arg[32] = "", q_arg[32], qm_arg[48];
	char out[512], err[ZS_ERRLEN];
	const struct zs_memcache *mc;
	char *argv[8];
	int argc = 0, rc;

	discover(s, err);
	mc = s->nmc ? &s->mc[0] : NULL;
	/* Without a cache there are no slots to sort for: ours refuses every
	 * sort without a cache size, Intel's would assume one. Compaction
	 * (sorter=auto) is what such a node can use. */
	if (!mc || !mc->size) {
		snprintf(s->why, sizeof(s->why),
			 "no memory-side cache found (hwloc) or given (cache_size=): modprobe %s not run",
			 s->opts.modprobe);
		return;
	}

	argv[argc++] = "modprobe";
	argv[argc++] = s->opts.modprobe;
	snprintf(size_arg, sizeof(size_arg), ZS_PARAM_CACHE_SIZE "=%llu", (unsigned long long)mc->size);
	argv[argc++] = size_arg;
	if (mc->ways > 0) {
		snprintf(ways_arg, sizeof(ways_arg), ZS_PARAM_WAYS "=%d", mc->ways);
		argv[argc++] = ways_arg;
	}
	/* This project's module takes the site's quarantine settings from its
	 * first sort on (Intel's would refuse parameters it does not know). */
	if (!strcmp(s->opts.modprobe, "zonesort")) {
		snprintf(q_arg, sizeof(q_arg), ZS_PARAM_QUARANTINE "=%c", s->opts.quarantine.on ? 'Y' : 'N');
		argv[argc++] = q_arg;
		if (s->opts.quarantine.max_permille >= 0) {
			snprintf(qm_arg, sizeof(qm_arg), ZS_PARAM_Q_MAX_PERMILLE "=%d",
				 s->opts.quarantine.max_permille);
			argv[argc++] = qm_arg;
		}
	}
	argv[argc] = NULL;
	rc = zs_run("/sbin/modprobe", argv, 10000, out, sizeof(out), err);
	if (rc != 0) {
		struct zs_modsig_kernel k;

		out[strcspn(out, "\n")] = '\0';
		zs_modsig_kernel_read("", &k);
		s->refusal = rc < 0 ? ZS_MODREFUSAL_NONE : zs_modrefusal_classify(out, &k);
		if (s->refusal != ZS_MODREFUSAL_NONE)
			zs_modrefusal_explain(s->refusal, s->opts.modprobe, &k, s->why, sizeof(s->why));
		else
			snprintf(s->why, sizeof(s->why), "modprobe %s failed: %s", s->opts.modprobe,
				 rc < 0 ? err : out);
	}
}

/* The metrics say whether the kernel refused the module (a refusal by
 * name: Secure Boot, lockdown), and that it no longer does once the
 * interface is there; a failure to record is no reason to fail a sort. */
static void record_module(struct zs_sorter *s, bool present)
{
	char err[ZS_ERRLEN];

	if (present || s->refusal != ZS_MODREFUSAL_NONE)
		zs_metrics_module(&s->metrics, zs_modrefusal_name(s->refusal), err);
}

/* Whether compaction may stand in for the kernel sorter where this sorter
 * sorts (compact_fallback=). An administrator's command always may. */
static bool fallback_allowed(const struct zs_sorter_opts *o)
{
	switch (o->site) {
	case ZS_SITE_COMMAND: return true;
	case ZS_SITE_PROLOG: return o->fallback >= ZS_FALLBACK_PROLOG;
	case ZS_SITE_STEP: return o->fallback >= ZS_FALLBACK_STEPS;
	case ZS_SITE_PERIODIC: return o->fallback >= ZS_FALLBACK_PERIODIC;
	}
	return false;
}

/* The degraded state in words: why there is no kernel sorter, and what the
 * site lets stand in for it. */
static void describe_degraded(struct zs_sorter *s, enum zs_sorter_kind want)
{
	static const char *const in_place[] = {
		[ZS_FALLBACK_NO] = "no compaction in its place",
		[ZS_FALLBACK_PROLOG] = "compaction in its place in the job prolog only",
		[ZS_FALLBACK_STEPS] = "compaction in its place in the job prolog and before each step",
		[ZS_FALLBACK_PERIODIC] = "compaction in its place in the job prolog, before each step and every period",
	};

	if (want == ZS_SORTER_KERNEL)
		snprintf(s->degraded, sizeof(s->degraded), "%s; no compaction in its place (sorter=kernel)",
			 s->why);
	else
		snprintf(s->degraded, sizeof(s->degraded), "%s; %s (compact_fallback=%s)", s->why,
			 in_place[s->opts.fallback], zs_fallback_name(s->opts.fallback));
}

static void resolve_backend(struct zs_sorter *s, enum zs_sorter_kind want)
{
	char path[PATH_MAX + 32];

	s->why[0] = '\0';
	if (want == ZS_SORTER_NONE) {
		s->backend = ZS_SORTER_NONE;
		snprintf(s->why, sizeof(s->why), "sorter=none");
		return;
	}
	if (want == ZS_SORTER_AUTO || want == ZS_SORTER_KERNEL) {
		bool loads = strcmp(s->opts.modprobe, "no") != 0;

		zs_kmod_probe(s->opts.sysfs, &s->kmod, s->why);
		if (s->kmod.kind == ZS_KMOD_ABSENT && loads) {
			char why[ZS_ERRLEN];

			load_module(s);
			zs_kmod_probe(s->opts.sysfs, &s->kmod, why);
			if (why[0])
				snprintf(s->why, sizeof(s->why), "%s", why);
		}
		if (loads)
			record_module(s, s->kmod.kind != ZS_KMOD_ABSENT);
		if (s->kmod.kind == ZS_KMOD_OURS || s->kmod.kind == ZS_KMOD_INTEL) {
			s->backend = ZS_SORTER_KERNEL;
			return;
		}
		if (!s->why[0])
			snprintf(s->why, sizeof(s->why), "no kernel zonesort interface (%s/nodeid)",
				 s->opts.sysfs);
		/* Only nodes with a cache get here (zs_sorter_open): the
		 * kernel sorter they need is missing. */
		if (want == ZS_SORTER_KERNEL || !fallback_allowed(&s->opts)) {
			s->backend = ZS_SORTER_NONE;
			describe_degraded(s, want);
			return;
		}
	}
	compact_path(s, first_target(s), path, sizeof(path));
	if (!access(path, F_OK)) {
		s->backend = ZS_SORTER_COMPACT;
	} else {
		size_t used = strlen(s->why);

		snprintf(s->why + used, sizeof(s->why) - used, "%sno compaction interface (%s)",
			 used ? "; " : "", path);
		s->backend = ZS_SORTER_NONE;
	}
	if (want == ZS_SORTER_AUTO)
		describe_degraded(s, want);
}

int zs_sorter_open(const struct zs_sorter_opts *o, const struct zs_memcache_opts *mc,
		   const struct zs_metrics_opts *metrics, struct zs_sorter **out, char *err)
{
	struct zs_sorter *s = calloc(1, sizeof(*s));

	if (!s)
		return zs_fail(err, "out of memory");
	s->opts = *o;
	s->memcache = *mc;
	s->metrics = *metrics;
	s->statefd = -1;
	s->last_start_ns = -1;
	bool ask = o->kind != ZS_SORTER_NONE && !mc->cache_size;

	if ((ask || !strcmp(o->nodes, "auto")) && discover(s, err))
		goto fail;
	s->targets = zs_nodeset_targets(o->nodes, s->mc, s->nmc, err);
	if (!s->targets)
		goto fail;
	/* cache_size= gives every node a cache: nmc is 0 only when neither
	 * hwloc nor the site knows of one. Without one there are no slots to
	 * spread pages over, and compaction would only migrate the jobs'
	 * pages: nothing is done unless the site asks (nocache=compact). */
	bool nocache = ask && s->nmc == 0;

	if (nocache && !o->nocache_compact) {
		numa_bitmask_clearall(s->targets);
		s->nothing = true;
		s->backend = ZS_SORTER_NONE;
		snprintf(s->why, sizeof(s->why), "%s", ZS_NOTHING_TO_SORT);
	} else {
		resolve_backend(s, nocache ? ZS_SORTER_COMPACT : o->kind);
		if (nocache && s->backend == ZS_SORTER_COMPACT)
			snprintf(s->why, sizeof(s->why), "no memory-side cache; nocache=compact");
	}
	*out = s;
	return 0;
fail:
	free(s->mc);
	free(s);
	return -1;
}

bool zs_sorter_takes_occupied(const struct zs_sorter *s)
{
	char path[PATH_MAX + 64];

	if (s->backend != ZS_SORTER_KERNEL || s->kmod.kind != ZS_KMOD_OURS)
		return false;
	for (int n = 0; n <= zs_nodeset_max(); n++) {
		if (!numa_bitmask_isbitset(s->targets, (unsigned)n))
			continue;
		snprintf(path, sizeof(path), "%s/" ZS_NODE_DIR_FMT "/" ZS_FILE_OCCUPIED, s->opts.sysfs, n);
		if (!access(path, F_OK))
			return true;
	}
	return false;
}

void zs_sorter_occupy(struct zs_sorter *s, struct zs_occupied *o, unsigned n)
{
	zs_occupied_free(s->occ, s->nocc);
	s->occ = o;
	s->nocc = n;
}

/* Gives node r->node's sort the slots the step occupies, once: a sort
 * after a compaction in the same round goes without them (compaction
 * moved the step's pages). A write that fails never fails the sort. */
static void give_occupied(struct zs_sorter *s, struct zs_node_result *r)
{
	char how[ZS_ERRLEN];
	struct zs_kwrite w;

	for (unsigned i = 0; i < s->nocc; i++) {
		struct zs_occupied *o = &s->occ[i];
		int rc;

		if (o->node != r->node || !o->bits)
			continue;
		rc = zs_kmod_occupied(&s->kmod, o->node, o->bits, o->bytes, s->opts.kernel_timeout, &w);
		if (rc == 0)
			r->occupied = (long long)o->set;
		else if (rc < 0) {
			r->occupied = -1;
			snprintf(r->occupied_why, sizeof(r->occupied_why),
				 "%s/" ZS_NODE_DIR_FMT "/" ZS_FILE_OCCUPIED ": %s", s->opts.sysfs,
				 o->node, zs_kwrite_describe(&w, how, sizeof(how)));
		}
		free(o->bits);
		o->bits = NULL;
	}
}

void zs_sorter_close(struct zs_sorter *s)
{
	if (!s)
		return;
	zs_sorter_occupy(s, NULL, 0);
	if (s->targets)
		numa_bitmask_free(s->targets);
	if (s->statefd >= 0)
		close(s->statefd);
	free(s->mc);
	free(s);
}

long long zs_sorter_last_start(const struct zs_sorter *s)
{
	return s->last_start_ns;
}

enum zs_sorter_kind zs_sorter_backend(const struct zs_sorter *s)
{
	return s->backend;
}

const char *zs_sorter_why(const struct zs_sorter *s)
{
	return s->why;
}

const char *zs_sorter_degraded(const struct zs_sorter *s)
{
	return s->degraded[0] ? s->degraded : NULL;
}

const char *zs_sorter_refusal(const struct zs_sorter *s)
{
	return s->refusal == ZS_MODREFUSAL_NONE ? NULL : zs_modrefusal_name(s->refusal);
}

const char *zs_sorter_targets(const struct zs_sorter *s, char *buf, unsigned len)
{
	return zs_nodeset_format(s->targets, buf, len);
}

bool zs_sorter_is_target(const struct zs_sorter *s, int node)
{
	return node >= 0 && node <= zs_nodeset_max() &&
	       numa_bitmask_isbitset(s->targets, (unsigned)node);
}

bool zs_sorter_nothing_to_sort(const struct zs_sorter *s)
{
	return s->nothing;
}

/* The per-CPU page lists hand out the pages freed last before any sorted
 * free list, and with the kernel's own sizing they hold enough of a job's
 * start-up churn to leave a sorted node worse than an unsorted one
 * (bench/REPORT-churn-effect.md). pcp_high_fraction= sets their size
 * before a kernel sort, only when it differs (the kernel drains and
 * resizes every list on a write); auto (the package's plugstack.conf line)
 * makes them the smallest only where the kernel's own sizing (0) is in
 * force, so a site's own setting stands; keep, the library's default,
 * touches nothing (tests sort stand-in interfaces on their host). A
 * failure is said in r->msg and never fails the sort. */
static void set_pcp_lists(const struct zs_sorter *s, struct zs_node_result *r)
{
	long long want = s->opts.pcp_high_fraction, now = -1;
	char text[32], how[ZS_ERRLEN];
	struct zs_kwrite w;
	FILE *f;

	if (want == ZS_PCP_KEEP)
		return;
	f = fopen(ZS_PCP_SYSCTL, "re");
	if (f) {
		if (!fgets(text, sizeof(text), f) || sscanf(text, "%lld", &now) != 1)
			now = -1;
		fclose(f);
	}
	if (want == ZS_PCP_AUTO) {
		if (now != 0)
			return;
		want = ZS_PCP_SMALLEST;
	}
	if (now == want)
		return;
	snprintf(text, sizeof(text), "%lld\n", want);
	if (zs_kwrite(ZS_PCP_SYSCTL, text, s->opts.kernel_timeout, &w))
		snprintf(r->msg, sizeof(r->msg), "pcp_high_fraction: %s: writing %lld: %s (the per-CPU lists keep their size)",
			 ZS_PCP_SYSCTL, want, zs_kwrite_describe(&w, how, sizeof(how)));
}

/* A write to the kernel that did not end within kernel_timeout fails the
 * node, whatever it was for: the sort it belongs to did not happen, or
 * not whole. what names the write ("node 0 sort"). */
static void stopped_at_bound(struct zs_node_result *r, const char *prefix, const char *path,
			     const char *what, const struct zs_kwrite *w)
{
	char how[ZS_ERRLEN];

	r->outcome = ZS_FAILED;
	r->stopped = true;
	snprintf(r->msg, sizeof(r->msg), "%s%s: %s %s", prefix, path, what,
		 zs_kwrite_describe(w, how, sizeof(how)));
}

/* This project's module takes the free blocks a sort cannot keep from
 * colliding; the site's quarantine settings are written before each sort
 * (Intel's module has none: nothing to write). */
static void sort_kernel(struct zs_sorter *s, struct zs_node_result *r)
{
	char path[PATH_MAX + 32], what[32], how[ZS_ERRLEN];
	struct zs_kwrite w;
	int e;

	set_pcp_lists(s, r);
	if (zs_kmod_quarantine_set(&s->kmod, s->opts.quarantine.on, s->opts.quarantine.max_permille,
				   r->msg)) {
		r->outcome = ZS_FAILED;
		return;
	}
	give_occupied(s, r);
	if (!zs_kmod_sort(&s->kmod, r->node, s->opts.kernel_timeout, &w)) {
		r->outcome = ZS_SORTED;
		return;
	}
	if (zs_kwrite_timed_out(&w)) {
		snprintf(path, sizeof(path), "%s/nodeid", s->opts.sysfs);
		snprintf(what, sizeof(what), "node %d sort", r->node);
		stopped_at_bound(r, "", path, what, &w);
		return;
	}
	e = w.end == ZS_CALL_DONE ? w.err_no : 0;
	if (e == EBUSY) {
		r->outcome = ZS_BUSY;
		snprintf(r->msg, sizeof(r->msg),
			 "%s/nodeid: busy (another sort runs, or the module's sort_interval timer sorts on its own)",
			 s->opts.sysfs);
	} else if (e == EINVAL) {
		r->outcome = ZS_FAILED;
		snprintf(r->msg, sizeof(r->msg), "%s/nodeid: node %d refused (offline or out of range)",
			 s->opts.sysfs, r->node);
	} else {
		r->outcome = ZS_FAILED;
		snprintf(r->msg, sizeof(r->msg), "%s/nodeid: write of node %d failed: %s",
			 s->opts.sysfs, r->node, zs_kwrite_describe(&w, how, sizeof(how)));
	}
}

static void sort_compact(struct zs_sorter *s, struct zs_node_result *r)
{
	char path[PATH_MAX + 32], how[ZS_ERRLEN];
	struct zs_kwrite w;

	compact_path(s, r->node, path, sizeof(path));
	if (!zs_kwrite(path, "1\n", s->opts.kernel_timeout, &w)) {
		r->outcome = ZS_SORTED;
		return;
	}
	if (zs_kwrite_timed_out(&w)) {
		stopped_at_bound(r, "", path, "compaction", &w);
		return;
	}
	r->outcome = ZS_FAILED;
	snprintf(r->msg, sizeof(r->msg), "%s: %s", path, zs_kwrite_describe(&w, how, sizeof(how)));
}

long long zs_boottime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Stamps: "last" when the node's last sort began, "compacted" when a full
 * quarantine last had it compacted, "compacted_held" when a quarantine
 * past compact_held_permille did, "pgfree" the machine's freed-pages
 * counter right after its last sort (freed_stamp). */
static void stamp_name(int node, const char *what, char *buf, size_t len)
{
	snprintf(buf, len, "node%d.%s", node, what);
}

/* A stamp file holds "boot <id>" and n numbers (n is 1 or 2). Reads them
 * into v; -1 when there is none to trust: missing, garbled or from another
 * boot (a state directory on disk). */
static int stamp_fields(struct zs_sorter *s, int node, const char *what, long long v[2], int n)
{
	char name[32], text[160], boot[64], want[64];
	int end = 0, got;

	stamp_name(node, what, name, sizeof(name));
	if (state_dir(s, NULL) < 0 || zs_textfile_read(s->statefd, name, text, sizeof(text)) < 0 ||
	    zs_boot_id(want, sizeof(want)))
		return -1;
	got = n == 1 ? sscanf(text, "boot %63s %lld%n", boot, &v[0], &end)
		     : sscanf(text, "boot %63s %lld %lld%n", boot, &v[0], &v[1], &end);
	if (got != n + 1 || (text[end] && text[end] != '\n') || strcmp(boot, want))
		return -1;
	return 0;
}

static void stamp_write(struct zs_sorter *s, int node, const char *what, const long long *v, int n)
{
	char name[32], text[160], boot[64];

	stamp_name(node, what, name, sizeof(name));
	if (zs_boot_id(boot, sizeof(boot)))
		return;
	if (n == 1)
		snprintf(text, sizeof(text), "boot %s %lld\n", boot, v[0]);
	else
		snprintf(text, sizeof(text), "boot %s %lld %lld\n", boot, v[0], v[1]);
	zs_textfile_replace(s->statefd, name, text, strlen(text), 0644, (uid_t)-1, NULL);
}

/* A time stamp "boot <id> <ns>" in CLOCK_BOOTTIME nanoseconds; -1 when
 * there is none to trust (stamp_fields) or it lies in the future (it
 * would hold sorting off for as long). */
static long long stamp_read(struct zs_sorter *s, int node, const char *what)
{
	long long v[2];

	if (stamp_fields(s, node, what, v, 1) || v[0] < 0 || v[0] > zs_boottime_ns())
		return -1;
	return v[0];
}

static void stamp(struct zs_sorter *s, int node, const char *what, long long started_ns)
{
	stamp_write(s, node, what, &started_ns, 1);
}

/* Pages the machine freed since boot, in bytes, or -1 (zs_vm_pages). */
static long long bytes_freed(void)
{
	unsigned long long allocated, freed;
	long page = sysconf(_SC_PAGESIZE);

	if (zs_vm_pages(&allocated, &freed) || page <= 0)
		return -1;
	return (long long)(freed * (unsigned long long)page);
}

/* "pgfree": "boot <id> <ns> <bytes>", the machine's freed-pages counter in
 * bytes right after the sort whose "last" stamp is <ns>, written after
 * that stamp. One that cannot be written leaves an earlier sort's, which
 * names another <ns>. */
static void freed_stamp(struct zs_sorter *s, int node, long long started_ns)
{
	long long v[2] = { started_ns, bytes_freed() };

	if (v[1] >= 0)
		stamp_write(s, node, "pgfree", v, 2);
}

/* The counter freed_stamp recorded after the sort that began at
 * started_ns (the "last" stamp); -1 when there is none to trust: missing,
 * garbled, from another boot, or of another sort (a "last" stamp written
 * without one, by a sorter that keeps none). */
static long long freed_read(struct zs_sorter *s, int node, long long started_ns)
{
	long long v[2];

	if (stamp_fields(s, node, "pgfree", v, 2) || v[0] != started_ns || v[1] < 0)
		return -1;
	return v[1];
}

enum zs_recent zs_recent_decide(long long age_ns, unsigned min_interval, long long freed_then,
				long long freed_now, long long threshold)
{
	if (age_ns < 0 || age_ns >= (long long)min_interval * 1000000000LL)
		return ZS_RECENT_NOT;
	if (freed_then < 0 || freed_now < 0 || threshold <= 0)
		return ZS_RECENT_SKIP;
	return freed_now - freed_then >= threshold ? ZS_RECENT_FREED : ZS_RECENT_SKIP;
}

/*
 * Whether node is sorted now under min_interval (zs_recent_decide); msg
 * says why when it is skipped or sorted despite a recent sort. Only the
 * kernel sorter's recent sorts give way to freed memory (recent_freed=sort):
 * compaction does not order the free lists, and it migrates whatever runs,
 * which min_interval keeps rare. Freed is counted, not free memory: a job
 * that allocated from the sorted lists and exited leaves as much free as
 * the sort did, its pages in front of the lists in no order. The counter
 * is the machine's (the kernel keeps none per node), so frees on another
 * node count too: that errs towards a sort. The share is of the node's own
 * cache; a node without a known cache size, or without a counter figure of
 * its last sort, is skipped as before.
 */
static enum zs_recent recent(struct zs_sorter *s, int node, unsigned min_interval, char *msg,
			     size_t len)
{
	long long last = stamp_read(s, node, "last"), age, then = -1, now = -1, threshold = 0;
	const struct zs_memcache *mc;
	char err[ZS_ERRLEN];
	enum zs_recent v;

	if (last < 0)
		return ZS_RECENT_NOT;
	age = zs_boottime_ns() - last;
	if (zs_recent_decide(age, min_interval, -1, -1, 0) == ZS_RECENT_NOT)
		return ZS_RECENT_NOT;
	if (s->backend == ZS_SORTER_KERNEL && s->opts.recent_freed_sort && !discover(s, err) &&
	    (mc = zs_memcache_find(s->mc, s->nmc, node)) && mc->size) {
		threshold = (long long)(mc->size / ZS_CHURN_SHARE);
		then = freed_read(s, node, last);
		if (then >= 0)
			now = bytes_freed();
	}
	v = zs_recent_decide(age, min_interval, then, now, threshold);
	if (v == ZS_RECENT_FREED)
		snprintf(msg, len, "%.0f MiB freed since the sort %.1f s ago, at least 1/%d of the cache (%.0f MiB): sorted within min_interval (%u s)",
			 (double)(now - then) / 1048576.0, (double)age / 1e9, ZS_CHURN_SHARE,
			 (double)threshold / 1048576.0, min_interval);
	else
		snprintf(msg, len, "sorted %.1f s ago, less than %u s", (double)age / 1e9, min_interval);
	return v;
}

/*
 * The quarantine holds what a sort cannot keep from colliding, up to its
 * maximum. On a node that ages, the small free blocks handed out first grow
 * in number (long-lived pages scattered over memory, and held blocks
 * keeping their free buddies from merging) until the maximum no longer
 * covers their collisions: the quarantine stays full and each sort leaves
 * more colliding. Only rearranging memory helps then: give the node's held
 * blocks back (they merge with their buddies), compact the node (movable
 * pages move together, free memory joins into large blocks) and sort
 * again. Compaction migrates running jobs' pages, so a node is compacted
 * at most once per compact_interval seconds, and only with
 * compact_full=yes.
 */
/* The module's estimate after its sort, above which a full quarantine has
 * the node compacted: 1%, half the goal, since pages freed between a sort
 * and the next allocation go in front of the sorted lists. */
#define FULL_CONFLICT_PPM 10000

/* True when the module's last sort was of this node, left more than
 * FULL_CONFLICT_PPM colliding by its own estimate, and colliding blocks
 * for which the node's quarantine had no room (last_short_pages). *ppm is
 * the estimate. */
static bool quarantine_full(const struct zs_sorter *s, int node, long *ppm)
{
	long long est, last, short_pages;

	*ppm = -1;
	if (zs_kmod_stat(&s->kmod, "last_conflict_ppm_after", &est))
		return false;
	*ppm = (long)est;
	return !zs_kmod_quarantine_stat(&s->kmod, "last_node", &last) && last == node &&
	       est > FULL_CONFLICT_PPM &&
	       !zs_kmod_quarantine_stat(&s->kmod, "last_short_pages", &short_pages) &&
	       short_pages > 0;
}

/* True when the node's quarantine holds more than compact_held_permille of
 * its cache's pages after its sort (the cache's pages from its maximum and
 * the module's max_permille). *held is what it holds, *limit that share
 * in pages. */
static bool quarantine_held_over(const struct zs_sorter *s, int node, long long *held,
				 long long *limit)
{
	struct zs_kmod_quarantine q;
	long long permille;
	int share = s->opts.quarantine.compact_held_permille;

	*held = *limit = -1;
	if (share >= ZS_MAX_PERMILLE || zs_kmod_quarantine(&s->kmod, node, &q) ||
	    zs_kmod_quarantine_permille(&s->kmod, &permille) || permille <= 0)
		return false;
	*held = q.held;
	*limit = q.max * share / permille;
	return q.held > *limit;
}

int zs_sorter_quarantine(struct zs_sorter *s, int node, struct zs_quarantine_state *out)
{
	struct zs_kmod_quarantine q;
	long long last;

	*out = (struct zs_quarantine_state){ .compacted_ago_s = -1 };
	if (s->backend != ZS_SORTER_KERNEL || zs_kmod_quarantine(&s->kmod, node, &q))
		return -1;
	out->held_pages = q.held;
	out->max_pages = q.max;
	out->peak_pages = q.peak;
	if ((last = stamp_read(s, node, "compacted")) >= 0)
		out->compacted_ago_s = (double)(zs_boottime_ns() - last) / 1e9;
	return 0;
}

/* Whether the node's stamp WHAT lies less than compact_interval before now. */
static bool compacted_within(struct zs_sorter *s, int node, const char *what, long long now)
{
	long long last = stamp_read(s, node, what);

	return last >= 0 && now - last < (long long)s->opts.quarantine.compact_interval * 1000000000LL;
}

/* After a sort of r->node: a full quarantine that left the sort colliding,
 * or one holding more than compact_held_permille of the cache, is given
 * back, the node compacted and sorted again (r says how). A
 * give-back or compaction that fails leaves the node as its sort left it,
 * less what was given back, and says so; one stopped at kernel_timeout
 * fails the node: what it left is unknown. */
static void refresh_full(struct zs_sorter *s, struct zs_node_result *r)
{
	char path[PATH_MAX + 32], why[ZS_ERRLEN], prefix[128], how[ZS_ERRLEN];
	long long now = zs_boottime_ns();
	struct zs_kwrite w;
	bool timed_out, full, over;
	long long held = -1, limit = -1;
	long ppm;

	if (!s->opts.quarantine.on || !s->opts.quarantine.compact_full)
		return;
	full = quarantine_full(s, r->node, &ppm);
	over = !full && quarantine_held_over(s, r->node, &held, &limit);
	if (!full && !over)
		return;
	/* A full quarantine is compacted once per compact_interval whatever
	 * came before: a compaction for a held share must not take its
	 * place, or a start-up churn that fills the quarantine after it finds
	 * none left (bench/REPORT-churn-effect.md). One for a held share waits
	 * out the interval after either. */
	if (compacted_within(s, r->node, "compacted", now) ||
	    (over && compacted_within(s, r->node, "compacted_held", now)))
		return;
	if (full)
		snprintf(prefix, sizeof(prefix), "quarantine full, %.1f%% colliding: ", (double)ppm / 1e4);
	else
		snprintf(prefix, sizeof(prefix), "quarantine holds %lld pages, above %lld (compact_held_permille): ",
			 held, limit);
	if (s->compaction_held) {
		snprintf(r->msg, sizeof(r->msg), "%scompaction held back while memory is busy", prefix);
		return;
	}
	/* Stamped first: a compaction that fails is not retried at once. */
	stamp(s, r->node, full ? "compacted" : "compacted_held", now);
	if (zs_kmod_quarantine_release(&s->kmod, r->node, s->opts.kernel_timeout, why, &timed_out)) {
		if (timed_out) {
			r->outcome = ZS_FAILED;
			r->stopped = true;
		}
		snprintf(r->msg, sizeof(r->msg), "%sgive back: %s", prefix, why);
		return;
	}
	compact_path(s, r->node, path, sizeof(path));
	if (zs_kwrite(path, "1\n", s->opts.kernel_timeout, &w)) {
		if (zs_kwrite_timed_out(&w))
			stopped_at_bound(r, prefix, path, "compaction", &w);
		else
			snprintf(r->msg, sizeof(r->msg), "%s%s: %s", prefix, path,
				 zs_kwrite_describe(&w, how, sizeof(how)));
		return;
	}
	r->compacted = true;
	sort_kernel(s, r);
	if (r->outcome == ZS_SORTED)
		snprintf(r->msg, sizeof(r->msg), "%sgiven back, node compacted, sorted again", prefix);
}

/* Nodes are sorted one writer at a time per machine. A held lock means a
 * sort is running right now: the node will be freshly sorted when it ends,
 * so we do not wait for it. */
static int take_lock(struct zs_sorter *s, int *fd, char *msg, size_t len)
{
	char err[ZS_ERRLEN];

	if (state_dir(s, err) < 0) {
		snprintf(msg, len, "%s", err);
		return -1;
	}
	*fd = zs_textfile_lockfile(s->statefd, "lock", err);
	if (*fd < 0) {
		snprintf(msg, len, "%s/%s", s->opts.statedir, err);
		return -1;
	}
	if (flock(*fd, LOCK_EX | LOCK_NB)) {
		snprintf(msg, len, "another zonesort is sorting this machine now");
		close(*fd);
		return 1;
	}
	return 0;
}

static void drop_caches(struct zs_sorter *s, zs_node_report_fn report, void *ctx)
{
	static const char path[] = "/proc/sys/vm/drop_caches";
	char how[ZS_ERRLEN];
	struct zs_kwrite w;

	if (!zs_kwrite(path, "3\n", s->opts.kernel_timeout, &w))
		return;
	if (report) {
		struct zs_node_result r = { .node = -1, .outcome = ZS_FAILED };

		if (zs_kwrite_timed_out(&w))
			snprintf(r.msg, sizeof(r.msg), "%s: dropping the page cache %s", path,
				 zs_kwrite_describe(&w, how, sizeof(how)));
		else
			snprintf(r.msg, sizeof(r.msg), "drop_caches failed: %s",
				 zs_kwrite_describe(&w, how, sizeof(how)));
		report(ctx, &r);
	}
}

static void count(struct zs_tally *t, const struct zs_node_result *r)
{
	switch (r->outcome) {
	case ZS_SORTED: t->sorted++; break;
	case ZS_RECENT: t->recent++; break;
	case ZS_BUSY: t->busy++; break;
	case ZS_FAILED: t->failed++; break;
	case ZS_FALLBACK: t->fallback++; break;
	case ZS_DEGRADED: t->degraded++; break;
	case ZS_NOSORTER:
	case ZS_NOTHING: break;
	}
	t->compacted += r->compacted;
	t->stopped += r->outcome == ZS_FAILED && r->stopped;
	t->freed += r->outcome == ZS_SORTED && r->freed;
	t->occupied += r->outcome == ZS_SORTED && r->occupied > 0;
	t->seconds += r->seconds;
}

void zs_sorter_hold_compaction(struct zs_sorter *s, bool hold)
{
	s->compaction_held = hold;
}

int zs_sorter_sort(struct zs_sorter *s, unsigned min_interval, struct zs_tally *tally,
		   zs_node_report_fn report, void *ctx)
{
	char msg[ZS_ERRLEN] = "";
	int lockfd = -1, locked, failed = 0;
	bool dropped = false;

	tally->rounds++;
	/* A degraded node without compaction here: each target counted as
	 * left unsorted, so the metrics show what a cache node went without. */
	if (s->backend == ZS_SORTER_NONE && s->degraded[0]) {
		for (int n = 0; n <= zs_nodeset_max(); n++) {
			struct zs_node_result r = { .node = n, .outcome = ZS_DEGRADED };

			if (!numa_bitmask_isbitset(s->targets, (unsigned)n))
				continue;
			snprintf(r.msg, sizeof(r.msg), "%s", s->degraded);
			count(tally, &r);
			if (report)
				report(ctx, &r);
		}
		return 0;
	}
	if (s->backend == ZS_SORTER_NONE) {
		struct zs_node_result r = { .node = -1,
					    .outcome = s->nothing ? ZS_NOTHING : ZS_NOSORTER };

		snprintf(r.msg, sizeof(r.msg), "%s", s->why);
		if (report)
			report(ctx, &r);
		return 0;
	}
	locked = take_lock(s, &lockfd, msg, sizeof(msg));
	for (int n = 0; n <= zs_nodeset_max(); n++) {
		struct zs_node_result r = { .node = n };
		char why[ZS_ERRLEN] = "";
		enum zs_recent v = ZS_RECENT_NOT;

		if (!numa_bitmask_isbitset(s->targets, (unsigned)n))
			continue;
		if (locked) {
			r.outcome = locked > 0 ? ZS_BUSY : ZS_FAILED;
			snprintf(r.msg, sizeof(r.msg), "%s", msg);
		} else if ((v = recent(s, n, min_interval, why, sizeof(why))) == ZS_RECENT_SKIP) {
			r.outcome = ZS_RECENT;
			snprintf(r.msg, sizeof(r.msg), "%s", why);
		} else {
			double t0 = zs_now();
			long long started = zs_boottime_ns();

			if (s->backend == ZS_SORTER_COMPACT && s->opts.drop_caches && !dropped) {
				drop_caches(s, report, ctx);
				dropped = true;
			}
			if (s->backend == ZS_SORTER_KERNEL) {
				sort_kernel(s, &r);
				if (r.outcome == ZS_SORTED)
					refresh_full(s, &r);
			} else
				sort_compact(s, &r);
			r.seconds = zs_now() - t0;
			bool done = r.outcome == ZS_SORTED;

			/* Compaction in place of a missing kernel sorter is
			 * no sort: counted apart. */
			if (done && s->degraded[0])
				r.outcome = ZS_FALLBACK;
			if (done) {
				/* The start counts: min_interval is the least
				 * time between the beginnings of two sorts; the
				 * freed counter after the sort is what memory
				 * freed since is measured from. */
				stamp(s, n, "last", started);
				freed_stamp(s, n, started);
				s->last_start_ns = started;
			}
			/* Said first: a note of the sort's own follows. */
			if (v == ZS_RECENT_FREED && r.outcome == ZS_SORTED) {
				char note[ZS_ERRLEN];

				r.freed = true;
				snprintf(note, sizeof(note), "%s", r.msg);
				snprintf(r.msg, sizeof(r.msg), "%s%s%s", why, note[0] ? "; " : "", note);
			}
		}
		if (r.outcome == ZS_FAILED)
			failed = 1;
		count(tally, &r);
		if (report)
			report(ctx, &r);
	}
	if (!locked)
		close(lockfd);
	zs_sorter_occupy(s, NULL, 0);
	return failed ? -1 : 0;
}

void zs_tally_add(struct zs_tally *into, const struct zs_tally *t)
{
	into->rounds += t->rounds;
	into->sorted += t->sorted;
	into->recent += t->recent;
	into->busy += t->busy;
	into->failed += t->failed;
	into->seconds += t->seconds;
	into->compacted += t->compacted;
	into->fallback += t->fallback;
	into->degraded += t->degraded;
	into->churn += t->churn;
	into->freed += t->freed;
	into->stopped += t->stopped;
	into->occupied += t->occupied;
}

const char *zs_tally_describe(const struct zs_tally *t, char *buf, unsigned len)
{
	char compacted[64] = "", churn[48] = "", freed[64] = "", fallback[96] = "", stopped[64] = "";
	char occupied[48] = "";

	/* Compactions migrate the job's pages: said whenever there were any. */
	if (t->compacted)
		snprintf(compacted, sizeof(compacted), " (%u compacted the node for its quarantine)",
			 t->compacted);
	/* A degraded node's rounds, said whenever there were any. */
	if (t->fallback || t->degraded)
		snprintf(fallback, sizeof(fallback), ", %u compacted in place of a sort, %u left unsorted",
			 t->fallback, t->degraded);
	if (t->churn)
		snprintf(churn, sizeof(churn), " (%u after memory churn)", t->churn);
	if (t->freed)
		snprintf(freed, sizeof(freed), " (%u despite a recent sort: memory freed since)",
			 t->freed);
	/* A write to the kernel stopped at its bound, said whenever there
	 * was one: the site may want a longer kernel_timeout. */
	if (t->stopped)
		snprintf(stopped, sizeof(stopped), " (%u stopped after kernel_timeout)", t->stopped);
	if (t->occupied)
		snprintf(occupied, sizeof(occupied), " (%u given the step's slots)", t->occupied);
	snprintf(buf, len, "%u sort%s%s%s%s%s%s, %u skipped (recent), %u busy, %u failed%s, %.3f s",
		 t->sorted, t->sorted == 1 ? "" : "s", churn, freed, occupied, compacted, fallback,
		 t->recent, t->busy, t->failed, stopped, t->seconds);
	return buf;
}

const char *zs_tally_format(const struct zs_tally *t, char *buf, unsigned len)
{
	snprintf(buf, len, "rounds=%u sorted=%u recent=%u busy=%u failed=%u seconds=%.6f compacted=%u fallback=%u degraded=%u churn=%u freed=%u stopped=%u occupied=%u",
		 t->rounds, t->sorted, t->recent, t->busy, t->failed, t->seconds, t->compacted,
		 t->fallback, t->degraded, t->churn, t->freed, t->stopped, t->occupied);
	return buf;
}

int zs_tally_parse(const char *line, struct zs_tally *t)
{
	struct zs_tally v = { 0 };
	int end = 0, more = 0;

	if (sscanf(line, "rounds=%u sorted=%u recent=%u busy=%u failed=%u seconds=%lf compacted=%u fallback=%u degraded=%u churn=%u%n",
		   &v.rounds, &v.sorted, &v.recent, &v.busy, &v.failed, &v.seconds, &v.compacted,
		   &v.fallback, &v.degraded, &v.churn, &end) != 10)
		return -1;
	/* A line without freed=, stopped= or occupied= (a helper of an
	 * older package still running across an upgrade) counts none. */
	if (line[end] == ' ' && sscanf(line + end, " freed=%u%n", &v.freed, &more) == 1)
		end += more;
	if (line[end] == ' ' && sscanf(line + end, " stopped=%u%n", &v.stopped, &more) == 1)
		end += more;
	if (line[end] == ' ' && sscanf(line + end, " occupied=%u%n", &v.occupied, &more) == 1)
		end += more;
	if (line[end] && line[end] != '\n')
		return -1;
	*t = v;
	return 0;
}

unsigned zs_helper_min_interval(unsigned min_interval, unsigned every)
{
	return every / 2 > min_interval ? every / 2 : min_interval;
}
