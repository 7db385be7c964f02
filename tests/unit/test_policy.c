// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"
#include "errbuf.h"
#include "nodeclass.h"
#include "policy.h"
#include "tap.h"

#include <stdlib.h>
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
		{ "modprobe=evil;rm", "expected no (load nothing), zonesort (this project's module) or zonesort_module (Intel's)" },
		/* A yes/no habit, not a module name. */
		{ "modprobe=yes", "modprobe=yes: expected no (load nothing), zonesort" },
		{ "modprobe=", "modprobe=: expected no" },
		{ "compact_fallback=yes", "compact_fallback=yes: expected no, prolog, steps or periodic" },
		{ "compact_fallback=", "compact_fallback=: expected no, prolog" },
		{ "min_period", "key=value" },
		{ "occupied_slots=maybe", "occupied_slots: 'maybe' is not a yes/no value; expected yes or no" },
		{ "compact_held_permille=1001", "compact_held_permille" },
		{ "compact_held_permille=-1", "compact_held_permille" },
	};
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *w[] = { (char *)bad[i].word };

		ok(parse(&p, err, 1, w), "'%s' refused", bad[i].word);
		err_has(err, bad[i].fragment, "error for '%s' names it", bad[i].word);
	}
	/* The unknown-key message lists every key, the last ones included. */
	char *unknown[] = { "colour=blue" };

	parse(&p, err, 1, unknown);
	err_has(err, "report_days, quarantine, quarantine_max_permille, compact_full, compact_interval, compact_fallback, nocache, pcp_high_fraction, recent_freed, kernel_timeout, occupied_slots, compact_held_permille",
		"the known keys end with the newest");

	/* The step's slots and the share held before a compaction. */
	zs_policy_defaults(&p);
	ok(p.occupied_slots && p.sorter.quarantine.compact_held_permille == 1000,
	   "occupied_slots=yes and compact_held_permille=1000 by default");
	char *occ_words[] = { "occupied_slots=no", "compact_held_permille=125" };

	ok(!parse(&p, err, 2, occ_words) && !p.occupied_slots && p.sorter.quarantine.compact_held_permille == 125,
	   "occupied_slots=no and compact_held_permille=125 taken");

	/* kernel_timeout=: how long each write to the kernel may take. */
	zs_policy_defaults(&p);
	ok(p.sorter.kernel_timeout == 60, "kernel_timeout 60 s by default (%u)", p.sorter.kernel_timeout);
	static const struct {
		const char *word;
		unsigned want;
	} ktgood[] = { { "kernel_timeout=1", 1 }, { "kernel_timeout=120", 120 }, { "kernel_timeout=3600", 3600 } };

	for (unsigned i = 0; i < sizeof(ktgood) / sizeof(ktgood[0]); i++) {
		char *w[] = { (char *)ktgood[i].word };

		ok(!parse(&p, err, 1, w) && p.sorter.kernel_timeout == ktgood[i].want, "%s taken",
		   ktgood[i].word);
	}
	static const char *const ktbad[] = { "kernel_timeout=0", "kernel_timeout=3601",
					     "kernel_timeout=-5", "kernel_timeout=5s",
					     "kernel_timeout=1.5", "kernel_timeout=",
					     "kernel_timeout=99999999999999999999999" };

	for (unsigned i = 0; i < sizeof(ktbad) / sizeof(ktbad[0]); i++) {
		char *w[] = { (char *)ktbad[i] }, want[ZS_ERRLEN];

		zs_policy_defaults(&p);
		p.sorter.kernel_timeout = 77;
		ok(zs_policy_parse(&p, 1, w, err) && p.sorter.kernel_timeout == 77, "'%s' refused, value kept",
		   ktbad[i]);
		snprintf(want, sizeof(want), "%s: expected whole seconds from 1 to 3600, how long a sort, compaction or other write to the kernel may take before it is stopped",
			 ktbad[i]);
		is_str(err, want, "... naming the value and what is accepted");
	}

	/* modprobe= names one of the modules that give the interface. */
	const char *const modules[] = { "no", "zonesort", "zonesort_module" };

	for (unsigned i = 0; i < 3; i++) {
		char word[64], *w[] = { word };

		snprintf(word, sizeof(word), "modprobe=%s", modules[i]);
		zs_policy_defaults(&p);
		ok(!parse(&p, err, 1, w) && !strcmp(p.sorter.modprobe, modules[i]), "%s accepted", word);
	}
	/* compact_fallback=: prolog by default, each level by name. */
	zs_policy_defaults(&p);
	ok(p.sorter.fallback == ZS_FALLBACK_PROLOG, "compact_fallback=prolog by default");
	for (enum zs_fallback f = ZS_FALLBACK_NO; f <= ZS_FALLBACK_PERIODIC; f++) {
		char word[64], *w[] = { word };

		snprintf(word, sizeof(word), "compact_fallback=%s", zs_fallback_name(f));
		ok(!parse(&p, err, 1, w) && p.sorter.fallback == f, "%s accepted", word);
	}

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

	/* recent_freed: whether memory freed since a recent sort makes a node
	 * sorted again within min_interval; sort by default. */
	zs_policy_defaults(&p);
	ok(p.sorter.recent_freed_sort, "recent_freed=sort by default");
	char *rf[] = { "recent_freed=skip", "recent_freed=sort" };

	ok(!parse(&p, err, 1, rf) && !p.sorter.recent_freed_sort, "recent_freed=skip taken");
	ok(!parse(&p, err, 2, rf) && p.sorter.recent_freed_sort, "recent_freed=sort taken, the last word wins");
	static const char *rfbad[] = { "recent_freed=yes", "recent_freed=", "recent_freed=Sort" };

	for (unsigned i = 0; i < sizeof(rfbad) / sizeof(rfbad[0]); i++) {
		char *w[] = { (char *)rfbad[i] };

		p.sorter.recent_freed_sort = false;
		ok(zs_policy_parse(&p, 1, w, err) && !p.sorter.recent_freed_sort, "'%s' refused, value kept",
		   rfbad[i]);
		err_has(err, "expected sort or skip", "... saying what is accepted ('%s')", rfbad[i]);
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

/* Parses words as the plugin does on node (NULL: in srun, no node). */
static int parse_on(struct zs_policy *p, const char *node, char *err, int n, char **words)
{
	zs_policy_defaults(p);
	if (node && zs_policy_for_node(p, node, err))
		return -1;
	return zs_policy_parse(p, n, words, err);
}

static void selectors(void)
{
	char err[ZS_ERRLEN];
	/* Slurm expands knl[001-128] to knl001..knl128: the width is the first
	 * bound's, and a number wider than it is written in full. */
	static const struct {
		const char *sel, *node;
		bool match;
	} cases[] = {
		{ "*", "n1", true },
		{ "knl*", "knl007", true },
		{ "knl*", "xmax1", false },
		{ "n?1", "na1", true },
		{ "n?1", "n1", false },
		{ "n1", "n1", true },
		{ "n1", "n10", false },
		{ "knl[001-128]", "knl007", true },
		{ "knl[001-128]", "knl128", true },
		{ "knl[001-128]", "knl7", false },
		{ "knl[001-128]", "knl129", false },
		{ "knl[001-128]", "knl000", false },
		{ "knl[001-128]", "knl0007", false },
		{ "n[1-10]", "n1", true },
		{ "n[1-10]", "n10", true },
		{ "n[1-10]", "n01", false },
		{ "n[01-10]", "n01", true },
		{ "n[01-10]", "n1", false },
		{ "n[8-12]", "n9", true },
		{ "n[8-12]", "n11", true },
		{ "knl[001-004,010]", "knl010", true },
		{ "knl[001-004,010]", "knl003", true },
		{ "knl[001-004,010]", "knl005", false },
		{ "r[1-2]n[01-16]", "r2n16", true },
		{ "r[1-2]n[01-16]", "r3n01", false },
		{ "r[1-2]n[01-16]", "r1n17", false },
		{ "cn[1-3]-ib", "cn2-ib", true },
		{ "cn[1-3]-ib", "cn2", false },
		{ "knl*", "", false },
	};
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ok(!zs_nodeclass_check("t", cases[i].sel, err), "selector %s is well formed", cases[i].sel);
		ok(zs_nodeclass_match(cases[i].sel, cases[i].node) == cases[i].match, "%s %s %s", cases[i].sel,
		   cases[i].match ? "names" : "does not name", cases[i].node);
	}
	static const struct {
		const char *sel, *fragment;
	} bad[] = {
		{ "", "empty node selector" },
		{ "knl[128-001]", "reversed" },
		{ "knl[001-128", "'[' without ']'" },
		{ "knl[]", "not a Slurm host range" },
		{ "knl[1,,2]", "not a Slurm host range" },
		{ "knl[a-b]", "not a Slurm host range" },
		{ "knl[1-2]*", "mixes a glob and a Slurm host list" },
		{ "knl%", "character '%'" },
		{ "a/b", "character '/'" },
		{ "feature=hbm", "selects nodes by name only" },
		{ "n[1234567890]", "up to 9 digits" },
	};
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ok(zs_nodeclass_check("cache_size=x", bad[i].sel, err), "selector '%s' refused", bad[i].sel);
		err_has(err, bad[i].fragment, "... saying why ('%s')", bad[i].sel);
	}
	setenv("SLURMD_NODENAME", "knl042", 1);
	char name[64];

	is_str(zs_node_name(name, sizeof(name)), "knl042", "the node is $SLURMD_NODENAME when set");
	unsetenv("SLURMD_NODENAME");
	ok(zs_node_name(name, sizeof(name))[0] && !strchr(name, '.'), "else the short host name (%s)", name);
}

/* cache_size= and ways= per node class, as plugstack.conf gives them. */
static void per_node_classes(void)
{
	char err[ZS_ERRLEN];
	struct zs_policy p;
	char *mixed[] = { "cache_size=knl[001-128]:16GiB,xmax*:64GiB", "ways=xmax*:1" };

	ok(!parse_on(&p, "knl007", err, 2, mixed) && p.memcache.cache_size == 16ULL << 30 && p.memcache.ways == 0,
	   "knl007 gets 16GiB and the ways hwloc finds");
	ok(!parse_on(&p, "xmax12", err, 2, mixed) && p.memcache.cache_size == 64ULL << 30 && p.memcache.ways == 1,
	   "xmax12 gets 64GiB, 1 way");
	ok(!parse_on(&p, "cpu001", err, 2, mixed) && p.memcache.cache_size == 0 && p.memcache.ways == 0,
	   "cpu001, named by no entry, gets what no cache_size= gives (hwloc decides)");
	ok(!parse_on(&p, "knl7", err, 2, mixed) && p.memcache.cache_size == 0, "knl7 is not knl[001-128]");
	ok(!parse_on(&p, NULL, err, 2, mixed) && p.memcache.cache_size == 0,
	   "without a node (srun) every entry is checked and none applies");
	char *later[] = { "cache_size=*:16GiB,xmax*:64GiB" };

	ok(!parse_on(&p, "xmax1", err, 1, later) && p.memcache.cache_size == 64ULL << 30,
	   "the last entry that names a node wins (xmax1: 64GiB)");
	ok(!parse_on(&p, "n1", err, 1, later) && p.memcache.cache_size == 16ULL << 30, "n1: *:16GiB");
	char *plain[] = { "cache_size=16GiB", "ways=2" };

	ok(!parse_on(&p, "anything", err, 2, plain) && p.memcache.cache_size == 16ULL << 30 && p.memcache.ways == 2,
	   "a plain value still applies to every node");
	ok(!parse_on(&p, NULL, err, 2, plain) && p.memcache.cache_size == 16ULL << 30,
	   "... and in srun too");
	char *replaced[] = { "cache_size=16GiB", "cache_size=knl*:32GiB" };

	ok(!parse_on(&p, "cpu1", err, 2, replaced) && p.memcache.cache_size == 0,
	   "a key given again replaces its whole value (cpu1: none)");
	char *glob_in_bracket[] = { "cache_size=knl[001-004,010]:16GiB" };

	ok(!parse_on(&p, "knl010", err, 1, glob_in_bracket) && p.memcache.cache_size == 16ULL << 30,
	   "a comma inside brackets belongs to the host list");

	static const struct {
		const char *word, *fragment;
	} bad[] = {
		{ "cache_size=knl*:16Gx", "(entry 'knl*:16Gx' of cache_size=knl*:16Gx)" },
		{ "cache_size=knl*:12345", "whole number of 4096-byte pages" },
		{ "cache_size=:16GiB", "entry ':16GiB' is not NODES:VALUE" },
		{ "cache_size=knl*:", "entry 'knl*:' is not NODES:VALUE" },
		{ "cache_size=16GiB,xmax*:64GiB", "entry '16GiB' is not NODES:VALUE" },
		{ "cache_size=knl*:16GiB,,xmax*:64GiB", "entry '' is not NODES:VALUE" },
		{ "cache_size=knl*:16GiB,", "entry '' is not NODES:VALUE" },
		{ "cache_size=knl*:1:16GiB", "entry 'knl*:1:16GiB' is not NODES:VALUE" },
		{ "cache_size=knl[128-001]:16GiB", "reversed" },
		{ "cache_size=knl[001-128:16GiB", "'[' without ']'" },
		{ "cache_size=feature=hbm:16GiB", "selects nodes by name only" },
		{ "ways=knl*:0", "ways" },
		{ "ways=knl*:65", "(entry 'knl*:65' of ways=knl*:65)" },
		{ "ways=knl*:one", "'one'" },
	};
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *w[] = { (char *)bad[i].word };

		ok(parse_on(&p, "knl1", err, 1, w), "'%s' refused on a node", bad[i].word);
		err_has(err, bad[i].fragment, "... naming what is wrong ('%s')", bad[i].word);
		ok(parse_on(&p, NULL, err, 1, w), "'%s' refused in srun too", bad[i].word);
	}
	char *form[] = { "cache_size=knl*:16GiB,xmax" };

	parse_on(&p, NULL, err, 1, form);
	err_has(err, "entries NODES:VALUE separated by commas, NODES being *, a glob of node names (xmax*) or a Slurm host list (knl[001-128]), e.g. cache_size=knl[001-128]:16GiB,xmax*:64GiB",
		"the message gives the accepted form with an example");

	/* Cache and ways of the same nodes split into slots of whole pages:
	 * checked in srun where sure, on the node for what it gets. */
	char *same_class[] = { "cache_size=knl*:16GiB", "ways=knl*:3" };

	ok(parse_on(&p, NULL, err, 2, same_class), "16GiB with 3 ways for the same class refused in srun");
	err_has(err, "cache_size knl*:16GiB with ways knl*:3", "... naming both entries");
	char *plain_ways[] = { "cache_size=knl*:16GiB", "ways=3" };

	ok(parse_on(&p, NULL, err, 2, plain_ways), "16GiB for knl* with 3 ways for every node refused in srun");
	char *other_class[] = { "cache_size=knl*:16GiB,opt*:96GiB", "ways=opt*:3" };

	ok(!parse_on(&p, NULL, err, 2, other_class), "96GiB with 3 ways for opt*, 16GiB for knl*: accepted");
	ok(!parse_on(&p, "opt1", err, 2, other_class) && p.memcache.cache_size == 96ULL << 30 && p.memcache.ways == 3,
	   "... opt1 gets 96GiB, 3 ways");
	char *overlap[] = { "cache_size=knl*:16GiB", "ways=knl[1-2]:3" };

	ok(!parse_on(&p, NULL, err, 2, overlap), "classes named in other words cannot be paired in srun");
	ok(parse_on(&p, "knl1", err, 2, overlap), "... but knl1, which gets 16GiB with 3 ways, refuses them");
	err_has(err, "on node knl1 (cache_size=knl*:16GiB, ways=knl[1-2]:3)", "... naming the node and both values");
	ok(!parse_on(&p, "knl3", err, 2, overlap), "... and knl3 (16GiB, the ways hwloc finds) takes them");

	char *toolong = malloc(ZS_PER_NODE_VALUE_MAX + 32);

	strcpy(toolong, "cache_size=");
	for (size_t n = strlen(toolong); n < ZS_PER_NODE_VALUE_MAX + 20; n = strlen(toolong))
		strcat(toolong, "k*:16GiB,");
	ok(parse_on(&p, NULL, err, 1, &toolong), "a value over %d characters refused", ZS_PER_NODE_VALUE_MAX - 1);
	err_has(err, "longer than", "... saying so");
	free(toolong);
	char *nodename = malloc(300);

	memset(nodename, 'n', 299);
	nodename[299] = '\0';
	zs_policy_defaults(&p);
	ok(zs_policy_for_node(&p, nodename, err), "a node name over %d characters refused", ZS_NODE_NAME_MAX);
	free(nodename);
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
	selectors();
	per_node_classes();
	requests();
	return done_testing();
}
