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
	snprintf(p->helper, sizeof(p->helper), "%s", ZS_HELPER_PATH);
	p->sorter.kind = ZS_SORTER_AUTO;
	strcpy(p->sorter.modprobe, "no");
	strcpy(p->sorter.nodes, "auto");
	strcpy(p->sorter.sysfs, "/sys/kernel/zone_sort_free_pages");
	strcpy(p->sorter.node_sysfs, "/sys/devices/system/node");
	strcpy(p->sorter.statedir, "/run/zonesort");
	p->sorter.pcp_high_fraction = ZS_PCP_KEEP;
	p->sorter.quarantine = (struct zs_quarantine_opts){
		.on = true, .max_permille = -1,
		.compact_full = true, .compact_interval = 300,
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

static int set_churn_watch(struct zs_policy *p, const char *key, const char *v, char *err)
{
	return set_uint(key, v, 0, ZS_MAX_PERIOD, &p->churn_watch, err);
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

static int set_modprobe(struct zs_policy *p, const char *key, const char *v, char *err)
{
	(void)key;
	if (!*v || strlen(v) >= sizeof(p->sorter.modprobe))
		return zs_fail(err, "modprobe=%s: expected no or a kernel module name", v);
	for (const char *c = v; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (*c >= '0' && *c <= '9') || *c == '_' || *c == '-'))
			return zs_fail(err, "modprobe=%s: expected no or a kernel module name (letters, digits, _ and -)", v);
	strcpy(p->sorter.modprobe, v);
	return 0;
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
} keys[] = {
	{ "default", set_default },
	{ "allow_off", set_allow_off },
	{ "min_period", set_min_period },
	{ "min_interval", set_min_interval },
	{ "sorter", set_sorter },
	{ "modprobe", set_modprobe },
	{ "drop_caches", set_drop_caches },
	{ "nodes", set_nodes },
	{ "sysfs", set_sysfs },
	{ "node_sysfs", set_node_sysfs },
	{ "statedir", set_statedir },
	{ "helper", set_helper },
	{ "cache_size", set_cache_size },
	{ "ways", set_ways },
	{ "sample_conflicts", set_sample_conflicts },
	{ "churn_watch", set_churn_watch },
	{ "prometheus_dir", set_prometheus_dir },
	{ "report_days", set_report_days },
	{ "quarantine", set_quarantine },
	{ "quarantine_max_permille", set_quarantine_max_permille },
	{ "compact_full", set_compact_full },
	{ "compact_interval", set_compact_interval },
	{ "nocache", set_nocache },
	{ "pcp_high_fraction", set_pcp_high_fraction },
};

#define NKEYS (sizeof(keys) / sizeof(keys[0]))

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
			rc = keys[i].set(p, key, v, err);
	if (rc == -2)
		rc = unknown_key(word, err);
	free(key);
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
	if (p->memcache.cache_size && p->memcache.cache_size % (ways * ZS_PAGE_SIZE))
		return zs_fail(err, "cache_size=%llu with ways=%u: the cache does not split into slots of %u whole %u-byte pages; expected a multiple of ways x page size",
			       (unsigned long long)p->memcache.cache_size, (unsigned)ways,
			       (unsigned)ways, ZS_PAGE_SIZE);
	return 0;
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
