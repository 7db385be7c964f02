// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"
#include "policy.h"
#include "errbuf.h"
#include "nodeset.h"
#include "parse.h"
#include "zonesort_abi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef ZS_HELPER_PATH
#define ZS_HELPER_PATH "/usr/sbin/zonesort"
#endif

void zs_policy_defaults(struct zs_policy *p)
{
	memset(p, 0, sizeof(*p));
	p->request.dflt.mode = ZS_MODE_ON;
	p->request.allow_off = true;
	p->request.min_period = 10;
	p->min_interval = p->request.min_period;
	p->churn_watch = ZS_CHURN_WATCH_DEFAULT;
	p->occupied_slots = true;
	snprintf(p->helper, sizeof(p->helper), "%s", ZS_HELPER_PATH);
	p->sorter.kind = ZS_SORTER_AUTO;
	p->sorter.fallback = ZS_FALLBACK_PROLOG;
	strcpy(p->sorter.modprobe, "no");
	strcpy(p->sorter.nodes, "auto");
	strcpy(p->sorter.sysfs, "/sys/kernel/zone_sort_free_pages");
	strcpy(p->sorter.node_sysfs, "/sys/devices/system/node");
	strcpy(p->sorter.statedir, "/run/zonesort");
	p->sorter.pcp_high_fraction = ZS_PCP_KEEP;
	p->sorter.kernel_timeout = ZS_KERNEL_TIMEOUT_DEFAULT;
	p->sorter.recent_freed_sort = true;
	p->sorter.quarantine = (struct zs_quarantine_opts){
		.on = true, .max_permille = -1,
		.compact_full = true, .compact_held_permille = ZS_COMPACT_HELD_PERMILLE,
		.compact_interval = 300,
	};
	strcpy(p->memcache.node_sysfs, p->sorter.node_sysfs);
	strcpy(p->memcache.statedir, p->sorter.statedir);
	strcpy(p->metrics.statedir, p->sorter.statedir);
	strcpy(p->report.statedir, p->sorter.statedir);
	p->report.days = 7;
}

static int set_path(const char *key, const char *v, char *dst, size_t len, char *err)
{
	if (v[0] != '/')
		return zs_fail(err, "%s=%s: expected an absolute path", key, v);
	if (strlen(v) >= len)
		return zs_fail(err, "%s=%s: path too long", key, v);
	strcpy(dst, v);
	return 0;
}

static int set_uint(const char *key, const char *v, uint64_t lo, uint64_t hi, unsigned *dst,
		    char *err)
{
	uint64_t n;

	if (zs_parse_u64(key, v, lo, hi, &n, err))
		return -1;
	*dst = (unsigned)n;
	return 0;
}

static int set_permille(const char *key, const char *v, int *dst, char *err)
{
	uint64_t n;

	if (zs_parse_u64(key, v, 0, ZS_MAX_PERMILLE, &n, err))
		return -1;
	*dst = (int)n;
	return 0;
}

/* Each key's setter: p, the key (for messages), its value, err. */
typedef int (*setter)(struct zs_policy *p, const char *key, const char *v, char *err);

/* --- what users may ask, and when a node is sorted again ------------- */

static int set_default(struct zs_policy *p, const char *key, const char *v, char *err)
{
	/* The default is checked against the final min_period and allow_off
	 * in zs_policy_parse; here only its form. */
	struct zs_request_opts loose = { .min_period = 1, .allow_off = true };

	(void)key;
	return zs_request_parse(&loose, v, &p->request.dflt, err);
}

static int set_allow_off(struct zs_policy *p, const char *key, const char *v, char *err)
{
	return zs_parse_bool(key, v, &p->request.allow_off, err);
}

static int set_min_period(struct zs_policy *p, const char *key, const char *v, char *err)
{
	if (set_uint(key, v, 1, ZS_MAX_PERIOD, &p->request.min_period, err))
		return -1;
	if (!p->min_interval_given)
		p->min_interval = p->request.min_period;
	return 0;
}

static int set_min_interval(struct zs_policy *p, const char *key, const char *v, char *err)
{
	if (set_uint(key, v, 0, ZS_MAX_PERIOD, &p->min_interval, err))
		return -1;
	p->min_interval_given = true;
	return 0;
}

static int set_helper(struct zs_policy *p, const char *key, const char *v, char *err)
{
	return set_path(key, v, p->helper, sizeof(p->helper), err);
}

static int set_sample_conflicts(struct zs_policy *p, const char *key, const char *v, char *err)
{
	return zs_parse_bool(key, v, &p->sample_conflicts, err);
}

static int set_occupied_slots(struct zs_policy *p, const char *key, const char *v, char *err)
{
	return zs_parse_bool(key, v, &p->occupied_slots, err);
}

static int set_churn_watch(struct zs_policy *p, const char *key, const char *v, char *err)
{
	return set_uint(key, v, 0, ZS_MAX_PERIOD, &p->churn_watch, err);
}

/* recent_freed=sort (the default): a node sorted less than min_interval
 * ago is sorted all the same once 1/16 of its cache was freed on it since
 * (sorter.h, zs_recent_decide); skip: min_interval alone decides. */
static int set_recent_freed(struct zs_policy *p, const char *key, const char *v, char *err)
{
	(void)key;
	if (strcmp(v, "sort") && strcmp(v, "skip"))
		return zs_fail(err, "recent_freed=%s: expected sort or skip", v);
	p->sorter.recent_freed_sort = !strcmp(v, "sort");
	return 0;
}

/* --- the sorter ------------------------------------------------------ */

static int set_sorter(struct zs_policy *p, const char *key, const char *v, char *err)
{
	(void)key;
	for (enum zs_sorter_kind k = ZS_SORTER_AUTO; k <= ZS_SORTER_NONE; k++)
		if (!strcmp(v, zs_sorter_kind_name(k))) {
			p->sorter.kind = k;
			return 0;
		}
	return zs_fail(err, "sorter=%s: expected auto, kernel, compact or none", v);
}

/* The modules that provide the kernel zonesort interface: a site names
 * one of them, so a yes/no habit ("modprobe=yes") is caught here rather
 * than by a modprobe of a module named "yes" on every node. */
static int set_modprobe(struct zs_policy *p, const char *key, const char *v, char *err)
{
	static const char *const accepted[] = { "no", "zonesort", "zonesort_module" };

	(void)key;
	for (size_t i = 0; i < sizeof(accepted) / sizeof(accepted[0]); i++)
		if (!strcmp(v, accepted[i])) {
			strcpy(p->sorter.modprobe, v);
			return 0;
		}
	return zs_fail(err, "modprobe=%s: expected no (load nothing), zonesort (this project's module) or zonesort_module (Intel's)",
		       v);
}

/* Where compaction stands in for the kernel sorter of a cache node whose
 * module is missing (sorter.h). */
static int set_compact_fallback(struct zs_policy *p, const char *key, const char *v, char *err)
{
	(void)key;
	for (enum zs_fallback f = ZS_FALLBACK_NO; f <= ZS_FALLBACK_PERIODIC; f++)
		if (!strcmp(v, zs_fallback_name(f))) {
			p->sorter.fallback = f;
			return 0;
		}
	return zs_fail(err, "compact_fallback=%s: expected no, prolog, steps or periodic", v);
}

static int set_drop_caches(struct zs_policy *p, const char *key, const char *v, char *err)
{
	return zs_parse_bool(key, v, &p->sorter.drop_caches, err);
}

static int set_nodes(struct zs_policy *p, const char *key, const char *v, char *err)
{
	if (strlen(v) >= sizeof(p->sorter.nodes))
		return zs_fail(err, "nodes=%.40s...: too long; expected auto, all or a NUMA node list such as 0-3,6", v);
	/* The whole list is checked here, where srun reads plugstack.conf;
	 * whether each node exists is a property of the host that sorts. */
	if (strcmp(v, "auto") && strcmp(v, "all") &&
	    zs_parse_nodelist(key, v, ZS_MAX_NODE, NULL, NULL, err))
		return -1;
	strcpy(p->sorter.nodes, v);
	return 0;
}

/* nocache=skip (the default): a node where no memory-side cache is found
 * or given has no cache slots to spread pages over, so it is left alone;
 * compact: it is compacted all the same. */
static int set_nocache(struct zs_policy *p, const char *key, const char *v, char *err)
{
	(void)key;
	if (strcmp(v, "skip") && strcmp(v, "compact"))
		return zs_fail(err, "nocache=%s: expected skip or compact", v);
	p->sorter.nocache_compact = !strcmp(v, "compact");
	return 0;
}

static int set_sysfs(struct zs_policy *p, const char *key, const char *v, char *err)
{
	return set_path(key, v, p->sorter.sysfs, sizeof(p->sorter.sysfs), err);
}

/* The compaction files and the caches' address_mode files. */
static int set_node_sysfs(struct zs_policy *p, const char *key, const char *v, char *err)
{
	if (set_path(key, v, p->sorter.node_sysfs, sizeof(p->sorter.node_sysfs), err))
		return -1;
	strcpy(p->memcache.node_sysfs, v);
	return 0;
}

/* One directory for every part's state: the lock, the stamps, the cache
 * copy, the metrics and the reports. */
static int set_statedir(struct zs_policy *p, const char *key, const char *v, char *err)
{
	if (set_path(key, v, p->sorter.statedir, sizeof(p->sorter.statedir), err))
		return -1;
	strcpy(p->memcache.statedir, v);
	strcpy(p->metrics.statedir, v);
	strcpy(p->report.statedir, v);
	return 0;
}

static int set_quarantine(struct zs_policy *p, const char *key, const char *v, char *err)
{
	return zs_parse_bool(key, v, &p->sorter.quarantine.on, err);
}

static int set_quarantine_max_permille(struct zs_policy *p, const char *key, const char *v,
				       char *err)
{
	return set_permille(key, v, &p->sorter.quarantine.max_permille, err);
}

static int set_compact_full(struct zs_policy *p, const char *key, const char *v, char *err)
{
	return zs_parse_bool(key, v, &p->sorter.quarantine.compact_full, err);
}

static int set_compact_held_permille(struct zs_policy *p, const char *key, const char *v,
				     char *err)
{
	return set_permille(key, v, &p->sorter.quarantine.compact_held_permille, err);
}

static int set_compact_interval(struct zs_policy *p, const char *key, const char *v, char *err)
{
	return set_uint(key, v, ZS_MIN_COMPACT_INTERVAL, ZS_MAX_COMPACT_INTERVAL,
			&p->sorter.quarantine.compact_interval, err);
}

/* pcp_high_fraction=auto|keep|0|N: the kernel's
 * vm.percpu_pagelist_high_fraction (0: its own sizing; else at least 8),
 * set before each kernel sort; auto: the smallest lists where it is 0;
 * keep leaves it alone. */
static int set_pcp_high_fraction(struct zs_policy *p, const char *key, const char *v, char *err)
{
	uint64_t n;

	if (!strcmp(v, "keep") || !strcmp(v, "auto")) {
		p->sorter.pcp_high_fraction = !strcmp(v, "keep") ? ZS_PCP_KEEP : ZS_PCP_AUTO;
		return 0;
	}
	if (zs_parse_u64(key, v, 0, 2147483647, &n, NULL) || (n > 0 && n < 8))
		return zs_fail(err, "pcp_high_fraction=%s: expected auto, keep, 0 (the kernel's own sizing) or a fraction from 8 to 2147483647 (vm.percpu_pagelist_high_fraction)",
			       v);
	p->sorter.pcp_high_fraction = (long long)n;
	return 0;
}

/* kernel_timeout=SECONDS: how long each write to the kernel may take before
 * its writer is killed (policy.h says why 60 and 1-3600). */
static int set_kernel_timeout(struct zs_policy *p, const char *key, const char *v, char *err)
{
	uint64_t n;

	if (zs_parse_u64(key, v, ZS_MIN_KERNEL_TIMEOUT, ZS_MAX_KERNEL_TIMEOUT, &n, NULL))
		return zs_fail(err, "kernel_timeout=%s: expected whole seconds from %u to %u, how long a sort, compaction or other write to the kernel may take before it is stopped",
			       v, ZS_MIN_KERNEL_TIMEOUT, ZS_MAX_KERNEL_TIMEOUT);
	p->sorter.kernel_timeout = (unsigned)n;
	return 0;
}

/* --- the memory-side cache, metrics, reports ------------------------- */

static int set_cache_size(struct zs_policy *p, const char *key, const char *v, char *err)
{
	uint64_t size;

	if (zs_parse_size(key, v, &size, err))
		return -1;
	if (!size || size % ZS_PAGE_SIZE)
		return zs_fail(err, "cache_size=%s: expected a whole number of %u-byte pages, e.g. 16GiB or 96GiB",
			       v, ZS_PAGE_SIZE);
	p->memcache.cache_size = size;
	return 0;
}

static int set_ways(struct zs_policy *p, const char *key, const char *v, char *err)
{
	return set_uint(key, v, 1, 64, &p->memcache.ways, err);
}

static int set_prometheus_dir(struct zs_policy *p, const char *key, const char *v, char *err)
{
	return set_path(key, v, p->metrics.prometheus_dir, sizeof(p->metrics.prometheus_dir), err);
}

static int set_report_days(struct zs_policy *p, const char *key, const char *v, char *err)
{
	return set_uint(key, v, 0, 366, &p->report.days, err);
}

/* Every key, in the order the unknown-key message lists them. */
static const struct {
	const char *key;
	setter set;
	int per_node;		/* 1 + enum zs_per_node_key, 0: one value for every node */
} keys[] = {
	{ "default", set_default, 0 },
	{ "allow_off", set_allow_off, 0 },
	{ "min_period", set_min_period, 0 },
	{ "min_interval", set_min_interval, 0 },
	{ "sorter", set_sorter, 0 },
	{ "modprobe", set_modprobe, 0 },
	{ "drop_caches", set_drop_caches, 0 },
	{ "nodes", set_nodes, 0 },
	{ "sysfs", set_sysfs, 0 },
	{ "node_sysfs", set_node_sysfs, 0 },
	{ "statedir", set_statedir, 0 },
	{ "helper", set_helper, 0 },
	{ "cache_size", set_cache_size, 1 + ZS_PN_CACHE_SIZE },
	{ "ways", set_ways, 1 + ZS_PN_WAYS },
	{ "sample_conflicts", set_sample_conflicts, 0 },
	{ "churn_watch", set_churn_watch, 0 },
	{ "prometheus_dir", set_prometheus_dir, 0 },
	{ "report_days", set_report_days, 0 },
	{ "quarantine", set_quarantine, 0 },
	{ "quarantine_max_permille", set_quarantine_max_permille, 0 },
	{ "compact_full", set_compact_full, 0 },
	{ "compact_interval", set_compact_interval, 0 },
	{ "compact_fallback", set_compact_fallback, 0 },
	{ "nocache", set_nocache, 0 },
	{ "pcp_high_fraction", set_pcp_high_fraction, 0 },
	{ "recent_freed", set_recent_freed, 0 },
	{ "kernel_timeout", set_kernel_timeout, 0 },
	{ "occupied_slots", set_occupied_slots, 0 },
	{ "compact_held_permille", set_compact_held_permille, 0 },
};

#define NKEYS (sizeof(keys) / sizeof(keys[0]))

/* --- per-node-class values ------------------------------------------- */

int zs_policy_for_node(struct zs_policy *p, const char *node, char *err)
{
	if (strlen(node) >= sizeof(p->node))
		return zs_fail(err, "node name '%.40s...' is longer than %d characters", node,
			       ZS_NODE_NAME_MAX);
	strcpy(p->node, node);
	return 0;
}

/* What the absence of a per-node key gives: the cache as hwloc finds it. */
static void per_node_unset(struct zs_policy *p, enum zs_per_node_key k)
{
	if (k == ZS_PN_CACHE_SIZE)
		p->memcache.cache_size = 0;
	else
		p->memcache.ways = 0;
}

/* One NODES:VALUE entry of a per-node-class value. */
struct class_entry {
	char sel[ZS_NODE_NAME_MAX + 1];
	char val[64];
	const char *text;	/* the entry within the value, for messages */
	int len;
};

#define MAX_CLASS_ENTRIES 64

/* Splits v at the commas outside brackets into entries NODES:VALUE, each
 * checked in form; *n entries. */
static int split_classes(const char *key, const char *v, struct class_entry *e, unsigned *n,
			 char *err)
{
	const char *p = v;

	*n = 0;
	for (;;) {
		const char *end = p;
		int depth = 0;

		for (; *end && (depth || *end != ','); end++)
			depth += *end == '[' ? 1 : *end == ']' ? -1 : 0;
		int len = (int)(end - p);
		const char *colon = memchr(p, ':', (size_t)len);

		if (*n == MAX_CLASS_ENTRIES)
			return zs_fail(err, "%s=%.60s...: more than %d NODES:VALUE entries", key, v,
				       MAX_CLASS_ENTRIES);
		if (!colon || colon == p || colon == end - 1 || memchr(colon + 1, ':', (size_t)(end - colon - 1)))
			return zs_fail(err, "%s=%s: entry '%.*s' is not NODES:VALUE; expected one value for every node, or entries NODES:VALUE separated by commas, NODES being *, a glob of node names (xmax*) or a Slurm host list (knl[001-128]), e.g. %s",
				       key, v, len, p,
				       !strcmp(key, "ways") ? "ways=knl*:1,optane[01-16]:1" : "cache_size=knl[001-128]:16GiB,xmax*:64GiB");
		if ((size_t)(colon - p) >= sizeof(e->sel) || (size_t)(end - colon - 1) >= sizeof(e->val))
			return zs_fail(err, "%s=%.60s...: entry '%.*s' is too long", key, v, len > 60 ? 60 : len, p);
		e[*n] = (struct class_entry){ .text = p, .len = len };
		memcpy(e[*n].sel, p, (size_t)(colon - p));
		memcpy(e[*n].val, colon + 1, (size_t)(end - colon - 1));
		(*n)++;
		if (!*end)
			return 0;
		p = end + 1;
	}
}

/* Sets a per-node key from its plain value or its NODES:VALUE entries:
 * every entry is checked whatever the node, and the last one that names
 * p->node applies. */
static int set_per_node(struct zs_policy *p, const char *key, const char *v, setter set,
			enum zs_per_node_key k, char *err)
{
	struct class_entry *e;
	struct zs_policy *scratch;
	char what[ZS_ERRLEN], inner[ZS_ERRLEN];
	unsigned n = 0;
	int rc = 0;

	if (strlen(v) >= sizeof(p->per_node_value[k]))
		return zs_fail(err, "%s=%.60s...: longer than %d characters", key, v,
			       ZS_PER_NODE_VALUE_MAX - 1);
	if (!strchr(v, ':')) {
		if (set(p, key, v, err))
			return -1;
		strcpy(p->per_node_value[k], v);
		p->per_node_entry[k][0] = '\0';
		return 0;
	}
	e = calloc(MAX_CLASS_ENTRIES, sizeof(*e));
	scratch = malloc(sizeof(*scratch));
	if (!e || !scratch)
		rc = zs_fail(err, "out of memory");
	else if (split_classes(key, v, e, &n, err))
		rc = -1;
	for (unsigned i = 0; i < n && !rc; i++) {
		snprintf(what, sizeof(what), "%s=%s", key, v);
		*scratch = *p;
		if (zs_nodeclass_check(what, e[i].sel, err))
			rc = -1;
		else if (set(scratch, key, e[i].val, inner))
			rc = zs_fail(err, "%s (entry '%.*s' of %s=%s)", inner, e[i].len, e[i].text, key, v);
	}
	free(scratch);
	if (rc) {
		free(e);
		return -1;
	}
	strcpy(p->per_node_value[k], v);
	p->per_node_entry[k][0] = '\0';
	per_node_unset(p, k);
	for (unsigned i = 0; i < n; i++)
		if (zs_nodeclass_match(e[i].sel, p->node)) {
			set(p, key, e[i].val, NULL);
			snprintf(p->per_node_entry[k], sizeof(p->per_node_entry[k]), "%.*s", e[i].len, e[i].text);
		}
	free(e);
	return 0;
}

static int unknown_key(const char *word, char *err)
{
	char known[512];
	size_t used = 0;

	known[0] = '\0';
	for (size_t i = 0; i < NKEYS && used < sizeof(known); i++)
		used += (size_t)snprintf(known + used, sizeof(known) - used, "%s%s", i ? ", " : "",
					 keys[i].key);
	return zs_fail(err, "unknown argument '%s'; known keys: %s", word, known);
}

int zs_policy_set(struct zs_policy *p, const char *word, char *err)
{
	char *key;
	const char *v;
	int rc = -2;

	if (zs_split_kv(word, &key, &v, err))
		return -1;
	for (size_t i = 0; i < NKEYS && rc == -2; i++)
		if (!strcmp(key, keys[i].key))
			rc = keys[i].per_node ? set_per_node(p, key, v, keys[i].set, keys[i].per_node - 1, err)
					      : keys[i].set(p, key, v, err);
	if (rc == -2)
		rc = unknown_key(word, err);
	free(key);
	return rc;
}

/* The entries of a per-node value; a plain value is one entry that names
 * every node, "" (the key not given) none. */
static unsigned class_entries(const struct zs_policy *p, enum zs_per_node_key k,
			      struct class_entry *e, bool *plain)
{
	const char *v = p->per_node_value[k];
	unsigned n = 0;

	*plain = v[0] && !strchr(v, ':');
	if (*plain) {
		e[0] = (struct class_entry){ .sel = "*", .text = v, .len = (int)strlen(v) };
		snprintf(e[0].val, sizeof(e[0].val), "%s", v);
		return 1;
	}
	if (v[0] && split_classes(k == ZS_PN_WAYS ? "ways" : "cache_size", v, e, &n, NULL))
		return 0;
	return n;
}

/* cache_size= and ways= for the same nodes must split the cache into
 * slots of whole pages. Checked wherever it is sure, without a node (srun
 * sees every entry): entries that name the same class in the same words,
 * or one given for every node. On a node, zs_policy_parse checks what the
 * node gets. */
static int check_classes_together(const struct zs_policy *p, char *err)
{
	struct class_entry *c = calloc(2 * MAX_CLASS_ENTRIES, sizeof(*c)), *w = c + MAX_CLASS_ENTRIES;
	bool c_plain, w_plain;
	unsigned nc, nw;
	int rc = 0;

	if (!c)
		return zs_fail(err, "out of memory");
	nc = class_entries(p, ZS_PN_CACHE_SIZE, c, &c_plain);
	nw = class_entries(p, ZS_PN_WAYS, w, &w_plain);
	for (unsigned i = 0; i < nc && !rc; i++)
		for (unsigned j = 0; j < nw && !rc; j++) {
			uint64_t size, ways;

			if (!c_plain && !w_plain && strcmp(c[i].sel, w[j].sel))
				continue;
			if (zs_parse_size("cache_size", c[i].val, &size, NULL) ||
			    zs_parse_u64("ways", w[j].val, 1, 64, &ways, NULL) || size % (ways * ZS_PAGE_SIZE) == 0)
				continue;
			rc = zs_fail(err, "cache_size %.*s with ways %.*s: the cache does not split into slots of %u whole %u-byte pages; expected a multiple of ways x page size for the same nodes",
				     c[i].len, c[i].text, w[j].len, w[j].text, (unsigned)ways, ZS_PAGE_SIZE);
		}
	free(c);
	return rc;
}

int zs_policy_parse(struct zs_policy *p, int argc, char *const argv[], char *err)
{
	const struct zs_request_opts *r = &p->request;
	uint64_t ways;

	for (int i = 0; i < argc; i++)
		if (zs_policy_set(p, argv[i], err))
			return -1;
	ways = p->memcache.ways ? p->memcache.ways : 1;
	if (r->dflt.mode == ZS_MODE_PERIODIC && r->dflt.period < r->min_period)
		return zs_fail(err, "default=%u is below min_period=%u", r->dflt.period, r->min_period);
	if (r->dflt.mode == ZS_MODE_OFF && !r->allow_off)
		return zs_fail(err, "default=off contradicts allow_off=no");
	/* A periodic helper never sorts a node sooner than min_interval after
	 * the last sort began: a shorter period would not be kept. */
	if (p->min_interval > r->min_period)
		return zs_fail(err, "min_interval=%u is above min_period=%u: a period of %u s would be sorted only every %u s; expected min_interval at most min_period",
			       p->min_interval, r->min_period, r->min_period, p->min_interval);
	if (p->sorter.nocache_compact && p->sorter.kind == ZS_SORTER_NONE)
		return zs_fail(err, "nocache=compact contradicts sorter=none");
	/* Any size splits into slots (slot = frame mod slots), as long as every
	 * slot holds whole pages: 96 GiB and 384 MiB caches are real. */
	if (p->memcache.cache_size && p->memcache.cache_size % (ways * ZS_PAGE_SIZE)) {
		char from[2 * ZS_PER_NODE_VALUE_MAX + 128] = "";

		if (p->per_node_entry[ZS_PN_CACHE_SIZE][0] || p->per_node_entry[ZS_PN_WAYS][0])
			snprintf(from, sizeof(from), " on node %s (cache_size=%s, ways=%s)", p->node,
				 p->per_node_value[ZS_PN_CACHE_SIZE],
				 p->per_node_value[ZS_PN_WAYS][0] ? p->per_node_value[ZS_PN_WAYS] : "not given");
		return zs_fail(err, "cache_size=%llu with ways=%u%s: the cache does not split into slots of %u whole %u-byte pages; expected a multiple of ways x page size",
			       (unsigned long long)p->memcache.cache_size, (unsigned)ways, from,
			       (unsigned)ways, ZS_PAGE_SIZE);
	}
	return check_classes_together(p, err);
}

int zs_request_parse(const struct zs_request_opts *o, const char *s, struct zs_request *out,
		     char *err)
{
	char what[64];
	uint64_t n;

	if (!s)
		s = "";
	if (!strcmp(s, "off")) {
		if (!o->allow_off)
			return zs_fail(err, "--zonesort=off is not allowed on this system; expected on or a period in seconds from %u to %u",
				       o->min_period, ZS_MAX_PERIOD);
		out->mode = ZS_MODE_OFF;
		out->period = 0;
		return 0;
	}
	if (!strcmp(s, "on")) {
		out->mode = ZS_MODE_ON;
		out->period = 0;
		return 0;
	}
	snprintf(what, sizeof(what), "--zonesort=%s", s);
	if (zs_parse_u64(what, s, o->min_period, ZS_MAX_PERIOD, &n, NULL))
		return zs_fail(err, "invalid --zonesort value '%s': expected %son, or a period in whole seconds from %u to %u",
			       s, o->allow_off ? "off, " : "", o->min_period, ZS_MAX_PERIOD);
	out->mode = ZS_MODE_PERIODIC;
	out->period = (unsigned)n;
	return 0;
}

const char *zs_request_describe(const struct zs_request *r, char *buf, unsigned len)
{
	switch (r->mode) {
	case ZS_MODE_OFF:
		snprintf(buf, len, "off");
		break;
	case ZS_MODE_ON:
		snprintf(buf, len, "on");
		break;
	case ZS_MODE_PERIODIC:
		snprintf(buf, len, "every %u s", r->period);
		break;
	}
	return buf;
}
