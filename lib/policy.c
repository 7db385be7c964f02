// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"
#include "policy.h"
#include "errbuf.h"
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
	p->dflt.mode = ZS_MODE_ON;
	p->allow_off = true;
	p->min_period = 10;
	p->sorter = ZS_SORTER_AUTO;
	p->quarantine = true;
	p->compact_full = true;
	p->compact_interval = 300;
	p->quarantine_permille = -1;
	p->quarantine_max_permille = -1;
	strcpy(p->modprobe, "no");
	strcpy(p->nodes, "auto");
	strcpy(p->sysfs, "/sys/kernel/zone_sort_free_pages");
	strcpy(p->node_sysfs, "/sys/devices/system/node");
	strcpy(p->statedir, "/run/zonesort");
	snprintf(p->helper, sizeof(p->helper), "%s", ZS_HELPER_PATH);
	p->report_days = 7;
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

static int set_path(const char *key, const char *v, char *dst, size_t len, char *err)
{
	if (v[0] != '/')
		return zs_fail(err, "%s=%s: expected an absolute path", key, v);
	if (strlen(v) >= len)
		return zs_fail(err, "%s=%s: path too long", key, v);
	strcpy(dst, v);
	return 0;
}

static int set_module(const char *v, char *dst, size_t len, char *err)
{
	if (!*v || strlen(v) >= len)
		return zs_fail(err, "modprobe=%s: expected no or a kernel module name", v);
	for (const char *c = v; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (*c >= '0' && *c <= '9') || *c == '_' || *c == '-'))
			return zs_fail(err, "modprobe=%s: expected no or a kernel module name (letters, digits, _ and -)", v);
	strcpy(dst, v);
	return 0;
}

static int set_nodes(const char *v, char *dst, size_t len, char *err)
{
	if (strlen(v) >= len)
		return zs_fail(err, "nodes=%.40s...: too long; expected auto, all or a NUMA node list such as 0-3,6", v);
	/* The whole list is checked here, where srun reads plugstack.conf;
	 * whether each node exists is a property of the host that sorts. */
	if (strcmp(v, "auto") && strcmp(v, "all") &&
	    zs_parse_nodelist("nodes", v, ZS_MAX_NODE, NULL, NULL, err))
		return -1;
	strcpy(dst, v);
	return 0;
}

static int set_sorter(const char *v, enum zs_sorter_kind *out, char *err)
{
	for (enum zs_sorter_kind k = ZS_SORTER_AUTO; k <= ZS_SORTER_NONE; k++)
		if (!strcmp(v, zs_sorter_kind_name(k))) {
			*out = k;
			return 0;
		}
	return zs_fail(err, "sorter=%s: expected auto, kernel, compact or none", v);
}

/* nocache=skip (the default): a node where no memory-side cache is found
 * or given has no cache slots to spread pages over, so it is left alone;
 * compact: it is compacted all the same. */
static int set_nocache(const char *v, bool *compact, char *err)
{
	if (strcmp(v, "skip") && strcmp(v, "compact"))
		return zs_fail(err, "nocache=%s: expected skip or compact", v);
	*compact = !strcmp(v, "compact");
	return 0;
}

int zs_policy_set(struct zs_policy *p, const char *word, char *err)
{
	char *key;
	const char *v;
	uint64_t n;
	int rc;
	char what[80];

	if (zs_split_kv(word, &key, &v, err))
		return -1;
	snprintf(what, sizeof(what), "%s", key);

	if (!strcmp(key, "default")) {
		/* The default is checked against the final min_period and
		 * allow_off in zs_policy_parse; here only its form. */
		struct zs_policy loose = *p;

		loose.min_period = 1;
		loose.allow_off = true;
		rc = zs_request_parse(&loose, v, &p->dflt, err);
	} else if (!strcmp(key, "allow_off")) {
		rc = zs_parse_bool(what, v, &p->allow_off, err);
	} else if (!strcmp(key, "min_period")) {
		rc = zs_parse_u64(what, v, 1, ZS_MAX_PERIOD, &n, err);
		if (!rc)
			p->min_period = (unsigned)n;
	} else if (!strcmp(key, "sorter")) {
		rc = set_sorter(v, &p->sorter, err);
	} else if (!strcmp(key, "modprobe")) {
		rc = set_module(v, p->modprobe, sizeof(p->modprobe), err);
	} else if (!strcmp(key, "drop_caches")) {
		rc = zs_parse_bool(what, v, &p->drop_caches, err);
	} else if (!strcmp(key, "nodes")) {
		rc = set_nodes(v, p->nodes, sizeof(p->nodes), err);
	} else if (!strcmp(key, "sysfs")) {
		rc = set_path(key, v, p->sysfs, sizeof(p->sysfs), err);
	} else if (!strcmp(key, "node_sysfs")) {
		rc = set_path(key, v, p->node_sysfs, sizeof(p->node_sysfs), err);
	} else if (!strcmp(key, "statedir")) {
		rc = set_path(key, v, p->statedir, sizeof(p->statedir), err);
	} else if (!strcmp(key, "helper")) {
		rc = set_path(key, v, p->helper, sizeof(p->helper), err);
	} else if (!strcmp(key, "cache_size")) {
		rc = zs_parse_size(what, v, &p->cache_size, err);
		if (!rc && (!p->cache_size || p->cache_size % ZS_PAGE_SIZE))
			rc = zs_fail(err, "cache_size=%s: expected a whole number of %u-byte pages, e.g. 16GiB or 96GiB",
				     v, ZS_PAGE_SIZE);
	} else if (!strcmp(key, "ways")) {
		rc = zs_parse_u64(what, v, 1, 64, &n, err);
		if (!rc)
			p->ways = (unsigned)n;
	} else if (!strcmp(key, "sample_conflicts")) {
		rc = zs_parse_bool(what, v, &p->sample_conflicts, err);
	} else if (!strcmp(key, "prometheus_dir")) {
		rc = set_path(key, v, p->prometheus_dir, sizeof(p->prometheus_dir), err);
	} else if (!strcmp(key, "report_days")) {
		rc = zs_parse_u64(what, v, 0, 366, &n, err);
		if (!rc)
			p->report_days = (unsigned)n;
	} else if (!strcmp(key, "quarantine")) {
		rc = zs_parse_bool(what, v, &p->quarantine, err);
	} else if (!strcmp(key, "compact_full")) {
		rc = zs_parse_bool(what, v, &p->compact_full, err);
	} else if (!strcmp(key, "quarantine_permille")) {
		rc = zs_parse_u64(what, v, 0, ZS_MAX_PERMILLE, &n, err);
		if (!rc)
			p->quarantine_permille = (int)n;
	} else if (!strcmp(key, "quarantine_max_permille")) {
		rc = zs_parse_u64(what, v, 0, ZS_MAX_PERMILLE, &n, err);
		if (!rc)
			p->quarantine_max_permille = (int)n;
	} else if (!strcmp(key, "nocache")) {
		rc = set_nocache(v, &p->nocache_compact, err);
	} else if (!strcmp(key, "compact_interval")) {
		rc = zs_parse_u64(what, v, ZS_MIN_COMPACT_INTERVAL, ZS_MAX_COMPACT_INTERVAL, &n, err);
		if (!rc)
			p->compact_interval = (unsigned)n;
	} else {
		rc = zs_fail(err, "unknown argument '%s'; known keys: default, allow_off, min_period, sorter, modprobe, drop_caches, nodes, sysfs, node_sysfs, statedir, helper, cache_size, ways, sample_conflicts, prometheus_dir, report_days, quarantine, quarantine_permille, quarantine_max_permille, compact_full, compact_interval, nocache",
			     word);
	}
	free(key);
	return rc;
}

int zs_policy_parse(struct zs_policy *p, int argc, char *const argv[], char *err)
{
	for (int i = 0; i < argc; i++)
		if (zs_policy_set(p, argv[i], err))
			return -1;
	if (p->dflt.mode == ZS_MODE_PERIODIC && p->dflt.period < p->min_period)
		return zs_fail(err, "default=%u is below min_period=%u", p->dflt.period, p->min_period);
	if (p->dflt.mode == ZS_MODE_OFF && !p->allow_off)
		return zs_fail(err, "default=off contradicts allow_off=no");
	if (p->nocache_compact && p->sorter == ZS_SORTER_NONE)
		return zs_fail(err, "nocache=compact contradicts sorter=none");
	/* Any size splits into slots (slot = frame mod slots), as long as every
	 * slot holds whole pages: 96 GiB and 384 MiB caches are real. */
	if (p->cache_size && p->cache_size % ((uint64_t)(p->ways ? p->ways : 1) * ZS_PAGE_SIZE))
		return zs_fail(err, "cache_size=%llu with ways=%u: the cache does not split into slots of %u whole %u-byte pages; expected a multiple of ways x page size",
			       (unsigned long long)p->cache_size, p->ways ? p->ways : 1,
			       p->ways ? p->ways : 1, ZS_PAGE_SIZE);
	return 0;
}

int zs_request_parse(const struct zs_policy *p, const char *s, struct zs_request *out,
		     char *err)
{
	char what[64];
	uint64_t n;

	if (!s)
		s = "";
	if (!strcmp(s, "off")) {
		if (!p->allow_off)
			return zs_fail(err, "--zonesort=off is not allowed on this system; expected on or a period in seconds from %u to %u",
				       p->min_period, ZS_MAX_PERIOD);
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
	if (zs_parse_u64(what, s, p->min_period, ZS_MAX_PERIOD, &n, NULL))
		return zs_fail(err, "invalid --zonesort value '%s': expected %son, or a period in whole seconds from %u to %u",
			       s, p->allow_off ? "off, " : "", p->min_period, ZS_MAX_PERIOD);
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
