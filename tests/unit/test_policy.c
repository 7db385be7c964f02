// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"
#include "errbuf.h"
#include "policy.h"
#include "tap.h"

#include <string.h>

static int parse(struct zs_policy *p, char *err, int n, char **words)
{
	zs_policy_defaults(p);
	return zs_policy_parse(p, n, words, err);
}

static void site_policy(void)
{
	char err[ZS_ERRLEN];
	struct zs_policy p;
	char *good[] = { "default=60", "allow_off=no", "min_period=30", "sorter=compact",
			 "modprobe=zonesort", "drop_caches=yes", "nodes=0", "sysfs=/tmp/zs",
			 "node_sysfs=/tmp/nodes", "statedir=/tmp/state", "helper=/usr/sbin/zonesort",
			 "cache_size=16GiB", "ways=1", "sample_conflicts=yes" };

	ok(!parse(&p, err, sizeof(good) / sizeof(good[0]), good), "every key accepted");
	ok(p.request.dflt.mode == ZS_MODE_PERIODIC && p.request.dflt.period == 60, "default=60");
	ok(!p.request.allow_off && p.request.min_period == 30 && p.sorter.kind == ZS_SORTER_COMPACT, "allow_off, min_period, sorter");
	is_str(p.sorter.modprobe, "zonesort", "modprobe");
	ok(p.sorter.drop_caches && p.memcache.cache_size == 16ULL << 30 && p.memcache.ways == 1 && p.sample_conflicts,
	   "drop_caches, cache_size, ways, sample_conflicts");
	is_str(p.sorter.sysfs, "/tmp/zs", "sysfs");

	zs_policy_defaults(&p);
	ok(p.request.dflt.mode == ZS_MODE_ON && p.request.allow_off && p.request.min_period == 10 && p.sorter.kind == ZS_SORTER_AUTO,
	   "defaults: on, off allowed, min_period 10, sorter auto");

	static const struct {
		const char *word, *fragment;
	} bad[] = {
		{ "colour=blue", "unknown argument 'colour=blue'" },
		{ "sorter=magic", "sorter=magic" },
		{ "min_period=0", "min_period" },
		{ "min_period=abc", "'abc'" },
		{ "default=sometimes", "sometimes" },
		{ "allow_off=perhaps", "perhaps" },
		{ "sysfs=relative/dir", "absolute path" },
		{ "helper=zonesort", "absolute path" },
		{ "cache_size=12345", "whole number of 4096-byte pages" },
		{ "cache_size=1K", "whole number of 4096-byte pages" },
		{ "cache_size=10000000TB", "too large" },
		{ "nodes=3-1", "reversed" },
		{ "nodes=,", "nodes=," },
		{ "nodes=--", "nodes=--" },
		{ "nodes=0,,1", "nodes=0,,1" },
		{ "nodes=", "empty" },
		{ "ways=0", "ways" },
		{ "nodes=a-b", "nodes=a-b" },
		{ "modprobe=evil;rm", "module name" },
		{ "min_period", "key=value" },
	};
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *w[] = { (char *)bad[i].word };

		ok(parse(&p, err, 1, w), "'%s' refused", bad[i].word);
		err_has(err, bad[i].fragment, "error for '%s' names it", bad[i].word);
	}
	/* The unknown-key message lists every key, the last ones included. */
	char *unknown[] = { "colour=blue" };

	parse(&p, err, 1, unknown);
	err_has(err, "report_days, quarantine, quarantine_max_permille, compact_full, compact_interval, nocache, pcp_high_fraction",
		"the known keys end with the newest");

	zs_policy_defaults(&p);
	ok(p.sorter.quarantine.on, "quarantine on by default");
	char *quar[] = { "quarantine=no" };

	ok(!parse(&p, err, 1, quar) && !p.sorter.quarantine.on, "quarantine=no turns it off");
	char *quarbad[] = { "quarantine=maybe" };

	ok(parse(&p, err, 1, quarbad), "quarantine=maybe refused");
	err_has(err, "maybe", "... naming the value");
	ok(p.sorter.quarantine.compact_full, "compact_full on by default");
	char *cfull[] = { "compact_full=no" };

	ok(!parse(&p, err, 1, cfull) && !p.sorter.quarantine.compact_full, "compact_full=no turns it off");
	char *cfullbad[] = { "compact_full=2" };

	ok(parse(&p, err, 1, cfullbad), "compact_full=2 refused");
	err_has(err, "compact_full: '2'", "... naming the key and value");
	ok(p.sorter.quarantine.compact_interval == 300, "compact_interval 300 s by default");
	char *cint[] = { "compact_interval=30" };

	ok(!parse(&p, err, 1, cint) && p.sorter.quarantine.compact_interval == 30, "compact_interval=30 taken");
	char *cintedge[] = { "compact_interval=10", "compact_interval=86400" };

	ok(!parse(&p, err, 1, cintedge) && p.sorter.quarantine.compact_interval == 10, "compact_interval=10 taken");
	ok(!parse(&p, err, 1, cintedge + 1) && p.sorter.quarantine.compact_interval == 86400,
	   "compact_interval=86400 taken");
	static const char *cintbad[] = { "compact_interval=9", "compact_interval=86401",
					 "compact_interval=0", "compact_interval=-5",
					 "compact_interval=5m", "compact_interval=" };

	for (unsigned i = 0; i < sizeof(cintbad) / sizeof(cintbad[0]); i++) {
		char *w[] = { (char *)cintbad[i] };

		p.sorter.quarantine.compact_interval = 77;
		ok(zs_policy_parse(&p, 1, w, err) && p.sorter.quarantine.compact_interval == 77,
		   "'%s' refused, value kept", cintbad[i]);
		err_has(err, "compact_interval", "... naming the key ('%s')", cintbad[i]);
	}

	ok(p.sorter.quarantine.max_permille == -1, "quarantine_max_permille: the module's own by default");
	char *qpm[] = { "quarantine_max_permille=0", "quarantine_max_permille=1000" };

	ok(!parse(&p, err, 1, qpm) && p.sorter.quarantine.max_permille == 0, "quarantine_max_permille=0 taken");
	ok(!parse(&p, err, 1, qpm + 1) && p.sorter.quarantine.max_permille == 1000,
	   "quarantine_max_permille=1000 taken");
	static const char *qpmbad[] = { "quarantine_max_permille=1001", "quarantine_max_permille=-1",
					"quarantine_max_permille=5%", "quarantine_max_permille=" };

	for (unsigned i = 0; i < sizeof(qpmbad) / sizeof(qpmbad[0]); i++) {
		char *w[] = { (char *)qpmbad[i] };

		p.sorter.quarantine.max_permille = 77;
		ok(zs_policy_parse(&p, 1, w, err) && p.sorter.quarantine.max_permille == 77,
		   "'%s' refused, value kept", qpmbad[i]);
		err_has(err, "quarantine_max_permille", "... naming the key ('%s')", qpmbad[i]);
	}
	/* The start of a limit the module no longer has is an unknown key. */
	char *gone[] = { "quarantine_permille=125" };

	ok(parse(&p, err, 1, gone), "quarantine_permille= refused");
	err_has(err, "quarantine_permille", "... naming it");
	/* A node without a memory-side cache is left alone unless asked. */
	zs_policy_defaults(&p);
	ok(!p.sorter.nocache_compact, "nocache=skip by default");
	char *nc[] = { "nocache=compact", "nocache=skip" };

	ok(!parse(&p, err, 1, nc) && p.sorter.nocache_compact, "nocache=compact taken");
	ok(!parse(&p, err, 2, nc) && !p.sorter.nocache_compact, "nocache=skip taken, the last word wins");
	char *ncbad[] = { "nocache=yes" };

	ok(parse(&p, err, 1, ncbad), "nocache=yes refused");
	err_has(err, "nocache=yes: expected skip or compact", "... naming the value and what is accepted");
	char *ncnone[] = { "sorter=none", "nocache=compact" };

	ok(parse(&p, err, 2, ncnone), "nocache=compact with sorter=none refused");
	err_has(err, "nocache=compact contradicts sorter=none", "... saying why");
	char *nckernel[] = { "sorter=kernel", "nocache=compact" };

	ok(!parse(&p, err, 2, nckernel), "nocache=compact with sorter=kernel taken (kernel where a cache is)");

	/* pcp_high_fraction: the per-CPU lists' size, written before a
	 * kernel sort; auto: the smallest where the kernel's own sizing is
	 * in force; keep (the default: it is a machine-wide setting) leaves
	 * them alone. */
	zs_policy_defaults(&p);
	ok(p.sorter.pcp_high_fraction == ZS_PCP_KEEP, "pcp_high_fraction: keep by default (the package's line says auto)");
	char *pcp[] = { "pcp_high_fraction=1000000", "pcp_high_fraction=0", "pcp_high_fraction=8",
			"pcp_high_fraction=keep", "pcp_high_fraction=auto" };

	ok(!parse(&p, err, 1, pcp) && p.sorter.pcp_high_fraction == 1000000, "pcp_high_fraction=1000000 taken");
	ok(!parse(&p, err, 1, pcp + 1) && p.sorter.pcp_high_fraction == 0, "pcp_high_fraction=0 taken (the kernel's sizing)");
	ok(!parse(&p, err, 1, pcp + 2) && p.sorter.pcp_high_fraction == 8, "pcp_high_fraction=8 taken (the kernel's least)");
	ok(!parse(&p, err, 2, pcp + 2) && p.sorter.pcp_high_fraction == ZS_PCP_KEEP, "pcp_high_fraction=keep after 8: keep");
	ok(!parse(&p, err, 2, pcp + 3) && p.sorter.pcp_high_fraction == ZS_PCP_AUTO, "pcp_high_fraction=auto after keep: auto");
	static const char *pcpbad[] = { "pcp_high_fraction=7", "pcp_high_fraction=1", "pcp_high_fraction=-1",
					"pcp_high_fraction=2147483648", "pcp_high_fraction=small",
					"pcp_high_fraction=" };

	for (unsigned i = 0; i < sizeof(pcpbad) / sizeof(pcpbad[0]); i++) {
		char *w[] = { (char *)pcpbad[i] };

		p.sorter.pcp_high_fraction = 77;
		ok(zs_policy_parse(&p, 1, w, err) && p.sorter.pcp_high_fraction == 77, "'%s' refused, value kept",
		   pcpbad[i]);
		err_has(err, "expected auto, keep, 0 (the kernel's own sizing) or a fraction from 8 to 2147483647",
			"... saying what is accepted ('%s')", pcpbad[i]);
	}

	/* churn_watch: how long after a step starts memory churn is sorted
	 * away again; 0 turns it off. */
	zs_policy_defaults(&p);
	ok(p.churn_watch == 60, "churn_watch 60 s by default (%u)", p.churn_watch);
	char *cw[] = { "churn_watch=0", "churn_watch=86400" };

	ok(!parse(&p, err, 1, cw) && p.churn_watch == 0, "churn_watch=0 taken (off)");
	ok(!parse(&p, err, 1, cw + 1) && p.churn_watch == 86400, "churn_watch=86400 taken");
	static const char *cwbad[] = { "churn_watch=86401", "churn_watch=-1", "churn_watch=1m",
				       "churn_watch=", "churn_watch=yes" };

	for (unsigned i = 0; i < sizeof(cwbad) / sizeof(cwbad[0]); i++) {
		char *w[] = { (char *)cwbad[i] };

		p.churn_watch = 77;
		ok(zs_policy_parse(&p, 1, w, err) && p.churn_watch == 77, "'%s' refused, value kept",
		   cwbad[i]);
		err_has(err, "churn_watch", "... naming the key ('%s')", cwbad[i]);
	}

	/* min_interval: the least time between two sorts of a node; it
	 * follows min_period unless given, in any order. */
	zs_policy_defaults(&p);
	ok(p.min_interval == 10, "min_interval follows min_period by default (10)");
	char *mp[] = { "min_period=30" };

	ok(!parse(&p, err, 1, mp) && p.min_interval == 30 && p.request.min_period == 30,
	   "min_period=30 alone: min_interval 30");
	char *mi[] = { "min_interval=2", "min_period=30" };

	ok(!parse(&p, err, 2, mi) && p.min_interval == 2 && p.request.min_period == 30,
	   "min_interval=2 before min_period=30 is kept");
	char *mi2[] = { "min_period=30", "min_interval=0" };

	ok(!parse(&p, err, 2, mi2) && p.min_interval == 0, "min_interval=0 after min_period=30 taken");
	char *miabove[] = { "min_interval=60", "min_period=30" };

	ok(parse(&p, err, 2, miabove), "min_interval above min_period refused");
	err_has(err, "min_interval=60 is above min_period=30", "... naming both values");
	char *miabove2[] = { "min_interval=11" };

	ok(parse(&p, err, 1, miabove2), "min_interval=11 above the default min_period refused");
	static const char *mibad[] = { "min_interval=abc", "min_interval=86401", "min_interval=-1",
				       "min_interval=" };

	for (unsigned i = 0; i < sizeof(mibad) / sizeof(mibad[0]); i++) {
		char *w[] = { (char *)mibad[i] };

		ok(parse(&p, err, 1, w), "'%s' refused", mibad[i]);
		err_has(err, "min_interval", "... naming the key ('%s')", mibad[i]);
	}
	parse(&p, err, 1, unknown);
	err_has(err, "known keys: default, allow_off, min_period, min_interval, sorter,",
		"the known keys list min_interval next to min_period");

	char *below[] = { "min_period=60", "default=30" };

	ok(parse(&p, err, 2, below), "default below min_period refused");
	err_has(err, "min_period", "says min_period");
	char *contra[] = { "default=off", "allow_off=no" };

	ok(parse(&p, err, 2, contra), "default=off with allow_off=no refused");

	/* Optane Memory Mode near memory: 96, 192, 384 GiB. */
	char *optane[] = { "cache_size=96GiB", "ways=1" };

	ok(!parse(&p, err, 2, optane) && p.memcache.cache_size == 96ULL << 30, "cache_size=96GiB accepted");
	char *mib384[] = { "cache_size=384MiB", "ways=3" };

	ok(!parse(&p, err, 2, mib384), "cache_size=384MiB with ways=3 accepted (slots of 3 whole pages)");
	char *odd[] = { "ways=5", "cache_size=96GiB" };

	ok(parse(&p, err, 2, odd), "96GiB with 5 ways refused, whatever the order");
	err_has(err, "multiple of ways x page size", "and says what is accepted");
}

static void requests(void)
{
	char err[ZS_ERRLEN];
	struct zs_policy p;
	struct zs_request r;

	zs_policy_defaults(&p);
	p.request.min_period = 5;
	ok(!zs_request_parse(&p.request, "off", &r, err) && r.mode == ZS_MODE_OFF, "off");
	ok(!zs_request_parse(&p.request, "on", &r, err) && r.mode == ZS_MODE_ON, "on");
	ok(!zs_request_parse(&p.request, "30", &r, err) && r.mode == ZS_MODE_PERIODIC && r.period == 30, "30");
	ok(!zs_request_parse(&p.request, "86400", &r, err) && r.period == 86400, "86400 is the maximum");
	static const char *const bad[] = { "", "abc", "-5", "0", "1e3", "99999999999999999999",
					   "4", "86401", "ON", " 30", "30s" };
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ok(zs_request_parse(&p.request, bad[i], &r, err), "--zonesort='%s' refused", bad[i]);
		err_has(err, "from 5 to 86400", "error for '%s' states the accepted range", bad[i]);
	}
	err_has(err, "'30s'", "names the value");
	err_has(err, "off, on", "lists the words");
	ok(zs_request_parse(&p.request, "5\n[2038] zonesort: forged", &r, err), "a value with a newline is refused");
	ok(!strchr(err, '\n'), "and the message holds no newline (%s)", err);
	p.request.allow_off = false;
	ok(zs_request_parse(&p.request, "off", &r, err), "off refused when the site forbids it");
	err_has(err, "not allowed", "says it is not allowed");
	zs_request_parse(&p.request, "x", &r, err);
	ok(!strstr(err, "off,"), "off is not offered when not allowed");
	char buf[32];

	r.mode = ZS_MODE_PERIODIC;
	r.period = 30;
	is_str(zs_request_describe(&r, buf, sizeof(buf)), "every 30 s", "describe periodic");
}

int main(void)
{
	site_policy();
	requests();
	return done_testing();
}
