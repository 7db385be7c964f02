// SPDX-License-Identifier: GPL-2.0-or-later
/* zonesort status: what the node has (memory-side caches, NUMA nodes), which
 * sorter would be used and whether it can be used, in human form or JSON. */
#include "config.h"
#include "cli.h"
#include "json.h"
#include "child.h"
#include "conflicts.h"
#include "kpageflags.h"
#include "memcache.h"
#include "metrics.h"
#include "modsig.h"
#include "nodeset.h"
#include "parse.h"
#include "sorter.h"

#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define HIST_BINS 32

/* How the node's free memory spreads over the cache slots (slots.h). */
struct free_slots {
	bool shown;			/* the node has a cache geometry */
	char error[ZS_ERRLEN];		/* non-empty: could not be worked out */
	struct zs_node_geom geom;
	struct zs_freemem fm;
	uint64_t min, max, empty;	/* free pages per slot */
	double mean, sd;
	double fraction;		/* of the cache's pages, the allocation modelled */
	struct zs_potential pot;
	unsigned nbins;
	uint64_t slots_per_bin;
	uint64_t bins[HIST_BINS];
	double seconds;
};

struct node_state {
	int node;
	long long mem, free;
	const struct zs_memcache *cache;
	bool target;
	bool works;
	char detail[ZS_ERRLEN];
	bool have_quarantine;
	struct zs_quarantine_state quarantine;
	struct free_slots fs;
};

/* The kernel module the kernel backend would use, and whether this kernel
 * loads it: the refusal of this run's modprobe (modprobe=), or the one a
 * load of the installed file will meet (an unsigned module where
 * signatures are enforced). Shown when the kernel backend is not in use. */
struct module_state {
	const char *name;
	bool found;
	char file[PATH_MAX], signer[256], error[ZS_ERRLEN];
	struct zs_modsig_kernel k;
	const char *refused;		/* this run's modprobe: a modsig.h name, or NULL */
	enum zs_modrefusal predicted;
};

static void module_state_read(const struct zs_sorter_opts *o, const struct zs_sorter *s,
			      struct module_state *m)
{
	m->name = strcmp(o->modprobe, "no") ? o->modprobe : "zonesort";
	m->found = !zs_modsig_module(m->name, m->file, sizeof(m->file), m->signer, sizeof(m->signer),
				     m->error);
	zs_modsig_kernel_read("", &m->k);
	m->refused = zs_sorter_refusal(s);
	m->predicted = m->found ? zs_modsig_predict(&m->k, m->signer) : ZS_MODREFUSAL_NONE;
}

static void print_module_human(const struct module_state *m)
{
	char kd[128], ex[ZS_ERRLEN];

	printf("module %s: ", m->name);
	if (!m->found)
		printf("%s", m->error);
	else
		printf("%s, %s%s", m->file, m->signer[0] ? "signed by " : "unsigned", m->signer);
	printf("; kernel: %s, signatures %s\n", zs_modsig_kernel_describe(&m->k, kd, sizeof(kd)),
	       zs_modsig_enforced(&m->k) ? "enforced" : "not enforced");
	if (m->refused)
		printf("  refused by the kernel: %s (see the sorter line)\n", m->refused);
	else if (m->predicted != ZS_MODREFUSAL_NONE)
		printf("  a load would be refused: %s: %s\n", zs_modrefusal_name(m->predicted),
		       zs_modrefusal_explain(m->predicted, m->name, &m->k, ex, sizeof(ex)));
}

static void json_name_or_null(const char *v)
{
	if (v)
		zs_json_string(stdout, v);
	else
		printf("null");
}

static void print_module_json(const struct module_state *m)
{
	printf(",\"module\":{\"name\":");
	zs_json_string(stdout, m->name);
	printf(",\"file\":");
	json_name_or_null(m->found ? m->file : NULL);
	printf(",\"signer\":");
	json_name_or_null(m->found ? m->signer : NULL);
	printf(",\"refused\":");
	json_name_or_null(m->refused);
	printf(",\"would_be_refused\":");
	json_name_or_null(m->predicted == ZS_MODREFUSAL_NONE ? NULL : zs_modrefusal_name(m->predicted));
	printf(",\"signatures_enforced\":%s,\"sig_enforce\":%d,\"lockdown\":",
	       zs_modsig_enforced(&m->k) ? "true" : "false", m->k.sig_enforce);
	json_name_or_null(m->k.lockdown[0] ? m->k.lockdown : NULL);
	printf(",\"secure_boot\":%s}", m->k.secure_boot < 0 ? "null" : m->k.secure_boot ? "true" : "false");
}

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
static void probe_backend(const struct zs_sorter_opts *o, enum zs_sorter_kind k,
			  struct node_state *n)
{
	char path[PATH_MAX + 32];

	switch (k) {
	case ZS_SORTER_KERNEL: {
		FILE *f;
		unsigned interval = 0;

		snprintf(path, sizeof(path), "%s/nodeid", o->sysfs);
		n->works = access(path, W_OK) == 0;
		snprintf(n->detail, sizeof(n->detail), "%s %s", path,
			 n->works ? "writable" : "not writable");
		snprintf(path, sizeof(path), "%s/sort_interval", o->sysfs);
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
		snprintf(path, sizeof(path), "%s/node%d/compact", o->node_sysfs, n->node);
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

/* Reads the node's free blocks, the free pages per slot and the conflict
 * potential of the next allocation of fraction of the cache's pages. */
static void free_slots_compute(struct free_slots *fs, int node, const struct zs_zone *zones,
			       unsigned nzones, const char *zones_error, double fraction)
{
	const struct zs_slotgeom *g = &fs->geom.g;
	double t0 = zs_now();
	uint32_t *counts;

	fs->shown = true;
	fs->fraction = fraction;
	if (fs->geom.error[0]) {
		snprintf(fs->error, sizeof(fs->error), "%s", fs->geom.error);
		return;
	}
	if (zones_error) {
		snprintf(fs->error, sizeof(fs->error), "%s", zones_error);
		return;
	}
	if (zs_freemem_scan(node, zones, nzones, NULL, NULL, &fs->fm, fs->error))
		return;
	counts = calloc(g->nslots, sizeof(*counts));
	if (!counts) {
		snprintf(fs->error, sizeof(fs->error), "out of memory for %llu slot counters",
			 (unsigned long long)g->nslots);
		return;
	}
	zs_freemem_slot_counts(&fs->fm, g, counts);
	double sum = 0.0, sq = 0.0;

	fs->min = UINT64_MAX;
	fs->nbins = g->nslots < HIST_BINS ? (unsigned)g->nslots : HIST_BINS;
	while (g->nslots % fs->nbins)
		fs->nbins--;
	fs->slots_per_bin = g->nslots / fs->nbins;
	for (uint64_t i = 0; i < g->nslots; i++) {
		uint64_t c = counts[i];

		sum += (double)c;
		sq += (double)c * (double)c;
		fs->min = c < fs->min ? c : fs->min;
		fs->max = c > fs->max ? c : fs->max;
		fs->empty += !c;
		fs->bins[i / fs->slots_per_bin] += c;
	}
	free(counts);
	fs->mean = sum / (double)g->nslots;
	fs->sd = sqrt(fmax(0.0, sq / (double)g->nslots - fs->mean * fs->mean));
	uint64_t want = (uint64_t)llround(fraction * (double)(g->cache_size / g->page_size));

	if (zs_freemem_potential(&fs->fm, g, want ? want : 1, &fs->pot, fs->error))
		return;
	fs->seconds = zs_now() - t0;
}

static void print_free_slots_human(const struct node_state *n, const struct zs_zone *zones,
				   bool histogram)
{
	const struct free_slots *fs = &n->fs;
	const struct zs_slotgeom *g = &fs->geom.g;
	char a[64], b[96];

	if (!fs->shown)
		return;
	if (fs->error[0]) {
		printf("  free memory over cache slots: unknown: %s\n", fs->error);
		return;
	}
	printf("  free memory over cache slots: cache %s (%s), %llu slots of %llu page%s; %s free in buddy lists\n",
	       zs_slotgeom_describe(g, b, sizeof(b)), fs->geom.source, (unsigned long long)g->nslots,
	       (unsigned long long)g->ways, g->ways == 1 ? "" : "s",
	       zs_format_size(fs->fm.free_pages * g->page_size, a, sizeof(a)));
	printf("  free pages per slot: mean %.1f, min %llu, max %llu, sd %.1f (%.1f%% of the mean), %llu empty slots\n",
	       fs->mean, (unsigned long long)fs->min, (unsigned long long)fs->max, fs->sd,
	       fs->mean > 0 ? 100.0 * fs->sd / fs->mean : 0.0, (unsigned long long)fs->empty);
	printf("  conflict potential: %.1f%% of the next %llu pages (%g%% of the cache) would share a slot beyond its ways; random placement %.1f%%%s\n",
	       100.0 * fs->pot.fraction, (unsigned long long)fs->pot.requested, 100.0 * fs->fraction,
	       100.0 * fs->pot.random_fraction,
	       fs->pot.allocated < fs->pot.requested ? " (less free memory than that: all of it modelled)" : "");
	printf("  free blocks by order (kpageflags%s):", fs->fm.head_only ? ", first pages flagged" : "");
	for (unsigned z = 0; z < fs->fm.nzones; z++) {
		const struct zs_zone_free *zf = &fs->fm.zones[z];

		printf(" %s", zones[zf->zone].name);
		for (unsigned o = 0; o < zf->norders; o++)
			printf("%s%zu", o ? "," : " ", zf->n[o]);
		printf(";");
	}
	printf(" read in %.3f s\n", fs->seconds);
	if (!histogram)
		return;
	uint64_t top = 1;

	for (unsigned i = 0; i < fs->nbins; i++)
		top = fs->bins[i] > top ? fs->bins[i] : top;
	printf("  free pages per slot, %u bins of %llu slot%s (mean per slot in each bin):\n", fs->nbins,
	       (unsigned long long)fs->slots_per_bin, fs->slots_per_bin == 1 ? "" : "s");
	for (unsigned i = 0; i < fs->nbins; i++) {
		uint64_t lo = i * fs->slots_per_bin, hi = lo + fs->slots_per_bin - 1;
		int bar = (int)(40.0 * (double)fs->bins[i] / (double)top + 0.5);

		snprintf(a, sizeof(a), "%llu-%llu", (unsigned long long)lo, (unsigned long long)hi);
		printf("    %-17s %10.1f %.*s\n", a, (double)fs->bins[i] / (double)fs->slots_per_bin, bar,
		       "########################################");
	}
}

static void print_free_slots_json(const struct node_state *n, const struct zs_zone *zones,
				  bool histogram)
{
	const struct free_slots *fs = &n->fs;
	const struct zs_slotgeom *g = &fs->geom.g;

	printf(",\"free_slots\":");
	if (!fs->shown) {
		printf("null");
		return;
	}
	if (fs->error[0]) {
		printf("{\"error\":");
		zs_json_string(stdout, fs->error);
		putchar('}');
		return;
	}
	printf("{\"cache_size\":%llu,\"ways\":%llu,\"fully_associative\":%s,\"page_size\":%u,"
	       "\"slots\":%llu,\"source\":\"%s\",\"free_pages\":%llu,\"flagged\":\"%s\","
	       "\"per_slot\":{\"mean\":%.3f,\"min\":%llu,\"max\":%llu,\"sd\":%.3f,\"empty_slots\":%llu},"
	       "\"allocation_fraction\":%g,\"allocation_pages\":%llu,\"modelled_pages\":%llu,"
	       "\"conflict_potential\":%.6f,\"random_fraction\":%.6f,\"draws\":%u,"
	       "\"seconds\":%.3f,\"zones\":[",
	       (unsigned long long)g->cache_size, (unsigned long long)g->ways,
	       g->fully_associative ? "true" : "false", g->page_size,
	       (unsigned long long)g->nslots, fs->geom.source, (unsigned long long)fs->fm.free_pages,
	       fs->fm.head_only ? "first page" : "every page", fs->mean,
	       (unsigned long long)fs->min, (unsigned long long)fs->max, fs->sd,
	       (unsigned long long)fs->empty, fs->fraction, (unsigned long long)fs->pot.requested,
	       (unsigned long long)fs->pot.allocated, fs->pot.fraction, fs->pot.random_fraction,
	       fs->pot.draws, fs->seconds);
	for (unsigned z = 0; z < fs->fm.nzones; z++) {
		const struct zs_zone_free *zf = &fs->fm.zones[z];
		const struct zs_zone *zz = &zones[zf->zone];

		printf("%s{\"zone\":", z ? "," : "");
		zs_json_string(stdout, zz->name);
		printf(",\"free_pages\":%llu,\"orders\":[", (unsigned long long)zf->free_pages);
		for (unsigned o = 0; o < zf->norders; o++)
			printf("%s%zu", o ? "," : "", zf->n[o]);
		printf("],\"buddyinfo\":[");
		for (unsigned o = 0; o < zz->norders; o++)
			printf("%s%llu", o ? "," : "", (unsigned long long)zz->buddyinfo[o]);
		printf("]}");
	}
	putchar(']');
	if (histogram) {
		printf(",\"histogram\":{\"slots_per_bin\":%llu,\"free_pages\":[",
		       (unsigned long long)fs->slots_per_bin);
		for (unsigned i = 0; i < fs->nbins; i++)
			printf("%s%llu", i ? "," : "", (unsigned long long)fs->bins[i]);
		printf("]}");
	}
	putchar('}');
}

/* What the quarantine holds out of the free lists against its bound, and
 * when the node was last compacted because it was full
 * (that migrates the jobs' pages). */
static void print_quarantine_human(const struct zs_quarantine_state *q)
{
	char ago[64] = "none this boot";
	double mib = (double)sysconf(_SC_PAGESIZE) / (1 << 20);

	if (q->compacted_ago_s >= 0)
		snprintf(ago, sizeof(ago), "%.0f s ago", q->compacted_ago_s);
	printf("  quarantine: %lld pages held (%.1f MiB), at most %lld (%.1f MiB, quarantine_max_permille), %lld at the most so far; last compaction for a full quarantine: %s\n",
	       q->held_pages, (double)q->held_pages * mib, q->max_pages, (double)q->max_pages * mib,
	       q->peak_pages, ago);
}

static void print_human(const struct zs_sorter *s, const struct zs_memcache *mc, int nmc,
			const struct node_state *ns, int nn, const struct zs_zone *zones,
			bool histogram, const struct module_state *m)
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
	if (zs_sorter_nothing_to_sort(s))
		printf(" (%s; nocache=compact compacts such a node all the same)", zs_sorter_why(s));
	else if (zs_sorter_degraded(s))
		printf(" (degraded: %s)", zs_sorter_degraded(s));
	else if (k == ZS_SORTER_NONE || zs_sorter_why(s)[0])
		printf(" (%s)", zs_sorter_why(s));
	putchar('\n');
	if (k != ZS_SORTER_KERNEL)
		print_module_human(m);
	zs_sorter_targets(s, buf, sizeof(buf));
	printf("target nodes: %s\n", buf[0] ? buf : "none");
	for (int i = 0; i < nn; i++) {
		printf("node %d: %s memory, %s free, cache %s, %s", ns[i].node,
		       zs_format_size((uint64_t)ns[i].mem, a, sizeof(a)),
		       zs_format_size((uint64_t)ns[i].free, b, sizeof(b)),
		       ns[i].cache ? zs_format_size(ns[i].cache->size, c, sizeof(c)) : "none",
		       ns[i].target ? "target" : "not a target");
		if (zs_sorter_nothing_to_sort(s))
			printf(": nothing to sort\n");
		else
			printf(", sorter %s: %s (%s)\n", zs_sorter_kind_name(k),
			       ns[i].works ? "works" : "unusable", ns[i].detail);
		if (ns[i].have_quarantine)
			print_quarantine_human(&ns[i].quarantine);
		print_free_slots_human(&ns[i], zones, histogram);
	}
}

static void print_json(const struct zs_sorter *s, const struct zs_memcache *mc, int nmc,
		       const struct node_state *ns, int nn, const struct zs_zone *zones,
		       bool histogram, const struct module_state *m)
{
	char buf[256];

	printf("{\"version\":\"" PACKAGE_VERSION "\",\"memory_side_caches\":[");
	for (int i = 0; i < nmc; i++)
		printf("%s{\"node\":%d,\"size\":%llu,\"line_size\":%u,\"ways\":%d,\"depth\":%d,\"source\":\"%s\"}",
		       i ? "," : "", mc[i].node, (unsigned long long)mc[i].size, mc[i].line_size,
		       mc[i].ways, mc[i].depth, mc[i].source);
	printf("],\"sorter\":\"%s\",\"why\":", zs_sorter_kind_name(zs_sorter_backend(s)));
	zs_json_string(stdout, zs_sorter_why(s));
	printf(",\"degraded\":");
	if (zs_sorter_degraded(s))
		zs_json_string(stdout, zs_sorter_degraded(s));
	else
		printf("null");
	print_module_json(m);
	printf(",\"targets\":");
	zs_json_string(stdout, zs_sorter_targets(s, buf, sizeof(buf)));
	printf(",\"nodes\":[");
	for (int i = 0; i < nn; i++) {
		printf("%s{\"node\":%d,\"memory\":%lld,\"free\":%lld,\"cache_size\":%llu,\"target\":%s,\"works\":%s,\"detail\":",
		       i ? "," : "", ns[i].node, ns[i].mem, ns[i].free,
		       ns[i].cache ? (unsigned long long)ns[i].cache->size : 0ULL,
		       ns[i].target ? "true" : "false", ns[i].works ? "true" : "false");
		zs_json_string(stdout, ns[i].detail);
		if (ns[i].have_quarantine) {
			const struct zs_quarantine_state *q = &ns[i].quarantine;

			printf(",\"quarantine\":{\"held_pages\":%lld,\"max_pages\":%lld,\"peak_pages\":%lld",
			       q->held_pages, q->max_pages, q->peak_pages);
			printf(",\"compacted_ago_s\":");
			if (q->compacted_ago_s >= 0)
				printf("%.3f}", q->compacted_ago_s);
			else
				printf("null}");
		} else {
			printf(",\"quarantine\":null");
		}
		print_free_slots_json(&ns[i], zones, histogram);
		putchar('}');
	}
	printf("]}\n");
}

static void prom_numa_line(FILE *f, const char *name, const char *node, int numa, const char *extra,
			   double v)
{
	fprintf(f, "%s{node=", name);
	zs_prom_label(f, node);
	fprintf(f, ",numa_node=\"%d\"%s} %.15g\n", numa, extra, v);
}

/* The node's state for node_exporter's textfile collector: what the sorter
 * can do and how the free memory would collide, per NUMA node. */
static int write_prometheus(const char *dir, const struct zs_metrics_opts *mo, const struct zs_sorter *s,
			    const struct node_state *ns, int nn, char *err)
{
	char node[128], backend[64];
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	struct timespec now;
	int rc;

	if (!f)
		return zs_fail(err, "out of memory");
	zs_metrics_node(mo, node, sizeof(node));
	snprintf(backend, sizeof(backend), ",backend=\"%s\"", zs_sorter_kind_name(zs_sorter_backend(s)));
	zs_prom_family(f, "zonesort_sorter_usable", "gauge",
		       "1 when the sorter zonesort would use can sort this NUMA node now (zonesort status), else 0.");
	for (int i = 0; i < nn; i++)
		prom_numa_line(f, "zonesort_sorter_usable", node, ns[i].node, backend, ns[i].works);
	zs_prom_family(f, "zonesort_memory_side_cache_bytes", "gauge",
		       "Size of the memory-side cache in front of this NUMA node, in bytes.");
	for (int i = 0; i < nn; i++)
		if (ns[i].cache)
			prom_numa_line(f, "zonesort_memory_side_cache_bytes", node, ns[i].node, "",
				       (double)ns[i].cache->size);
	const char *const families[][2] = {
		{ "zonesort_free_buddy_bytes", "Free memory of this NUMA node in the buddy allocator's lists, in bytes (from /proc/kpageflags)." },
		{ "zonesort_free_conflict_potential_ratio", "Expected fraction (0-1) of the next allocation (zonesort_free_conflict_allocation_bytes) that would share a memory-side cache slot beyond its ways, handed out from today's free lists." },
		{ "zonesort_free_conflict_random_ratio", "The same fraction (0-1) for random placement of as many pages, for comparison." },
		{ "zonesort_free_conflict_allocation_bytes", "Size of the allocation the conflict potential models, in bytes (--fraction of the cache)." },
	};
	for (unsigned k = 0; k < sizeof(families) / sizeof(families[0]); k++) {
		zs_prom_family(f, families[k][0], "gauge", families[k][1]);
		for (int i = 0; i < nn; i++) {
			const struct free_slots *fs = &ns[i].fs;
			double page = (double)fs->geom.g.page_size;
			double v[] = { (double)fs->fm.free_pages * page, fs->pot.fraction,
				       fs->pot.random_fraction, (double)fs->pot.requested * page };

			if (fs->shown && !fs->error[0])
				prom_numa_line(f, families[k][0], node, ns[i].node, "", v[k]);
		}
	}
	const char *const quarantine_families[][2] = {
		{ "zonesort_quarantine_held_bytes", "Free memory this project's module holds out of this NUMA node's free lists because it would collide in the memory-side cache, in bytes (also in the node's KReclaimable)." },
		{ "zonesort_quarantine_max_bytes", "The most the module's quarantine ever holds on this NUMA node (quarantine_max_permille of the cache), in bytes." },
	};
	for (unsigned k = 0; k < 2; k++) {
		zs_prom_family(f, quarantine_families[k][0], "gauge", quarantine_families[k][1]);
		for (int i = 0; i < nn; i++) {
			const struct zs_quarantine_state *q = &ns[i].quarantine;
			long long pages = k ? q->max_pages : q->held_pages;

			if (ns[i].have_quarantine)
				prom_numa_line(f, quarantine_families[k][0], node, ns[i].node, "",
					       (double)pages * (double)sysconf(_SC_PAGESIZE));
		}
	}
	clock_gettime(CLOCK_REALTIME, &now);
	zs_prom_family(f, "zonesort_status_timestamp_seconds", "gauge",
		       "When zonesort status wrote these figures, in seconds since the epoch.");
	fprintf(f, "zonesort_status_timestamp_seconds{node=");
	zs_prom_label(f, node);
	fprintf(f, "} %.3f\n", (double)now.tv_sec + now.tv_nsec / 1e9);
	if (fclose(f)) {
		free(text);
		return zs_fail(err, "out of memory");
	}
	rc = zs_prom_publish(dir, "zonesort-status.prom", text, len, err);
	free(text);
	return rc;
}

/* The command line. */
struct status_args {
	bool json, histogram;
	const char *size_arg, *ways_arg, *prom_dir;
	double fraction;
	struct zs_policy policy;
};

/* What status finds; freed by status_free. */
struct status {
	struct zs_memcache *mc;
	int nmc;
	struct zs_sorter *s;
	struct node_state *ns;
	int nn;
	struct zs_node_geom *geoms;
	unsigned ngeoms;
	struct zs_zone *zones;
	unsigned nzones;
};

static void usage(void)
{
	printf("usage: zonesort status [--json] [--cache-size SIZE --ways N] [--fraction F] [--histogram] [--prometheus DIR] [key=value ...]\n"
	       "Shows the memory-side caches hwloc finds (or --cache-size/--ways, or\n"
	       "cache_size=/ways=, assume), the sorter that would be used, the target\n"
	       "nodes, and for each NUMA node its memory and whether the sorter can sort it\n"
	       "(without a cache: nothing to sort, unless nocache=compact).\n"
	       "For each node behind a cache (every node when a size is given) it reads the\n"
	       "free blocks of the buddy allocator (/proc/kpageflags, root only) and shows\n"
	       "how the free pages spread over the cache slots, and the conflict potential:\n"
	       "the expected fraction of the next allocation of F of the cache (default\n"
	       "50%%; 0.5 or 50%%) that would share a slot beyond its ways, handing out free\n"
	       "blocks as the buddy allocator does (smallest order first, blocks of one\n"
	       "order in random order), against random placement.\n"
	       "--histogram adds the free pages per slot in %d bins of adjacent slots.\n"
	       "--prometheus DIR also writes these figures per NUMA node to\n"
	       "DIR/zonesort-status.prom for node_exporter's textfile collector.\n",
	       HIST_BINS);
}

/* Fills a from the command line. Returns CLI_GO_ON, or the exit code (help
 * printed, or a usage error). */
static int parse_status(int argc, char **argv, struct status_args *a)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "cache-size", required_argument, NULL, 'c' },
		{ "ways", required_argument, NULL, 'w' },
		{ "fraction", required_argument, NULL, 'f' },
		{ "histogram", no_argument, NULL, 'H' },
		{ "prometheus", required_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char err[ZS_ERRLEN];
	uint64_t cache_size;
	unsigned ways;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "jc:w:f:HP:h", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			a->json = true;
			break;
		case 'c':
			a->size_arg = optarg;
			break;
		case 'w':
			a->ways_arg = optarg;
			break;
		case 'f':
			if (zs_parse_fraction("--fraction", optarg, 16.0, &a->fraction, err))
				return cli_usage_error("status", "%s", err);
			break;
		case 'H':
			a->histogram = true;
			break;
		case 'P':
			if (optarg[0] != '/')
				return cli_usage_error("status", "--prometheus %s: expected the absolute path of node_exporter's textfile directory", optarg);
			a->prom_dir = optarg;
			break;
		case 'h':
			usage();
			return ZS_EXIT_OK;
		default:
			return cli_usage_error("status", "see 'zonesort status --help'");
		}
	}
	if (cli_cache_options("status", a->size_arg, a->ways_arg, &cache_size, &ways))
		return ZS_EXIT_USAGE;
	if (cli_policy(&a->policy, NULL, argc - optind, argv + optind))
		return ZS_EXIT_USAGE;
	if (cache_size)
		a->policy.memcache.cache_size = cache_size;
	if (ways)
		a->policy.memcache.ways = ways;
	return CLI_GO_ON;
}

/* One NUMA node's row: its memory, the sorter's view of it, its
 * quarantine and, behind a cache, how its free memory spreads. */
static void node_state_read(const struct status_args *a, const struct status *st, int n,
			    long long mem, long long freeb, const char *zones_error,
			    struct node_state *ns)
{
	const struct zs_node_geom *g;

	*ns = (struct node_state){ .node = n, .mem = mem, .free = freeb,
				   .cache = zs_memcache_find(st->mc, st->nmc, n),
				   .target = zs_sorter_is_target(st->s, n) };
	probe_backend(&a->policy.sorter, zs_sorter_backend(st->s), ns);
	if (zs_sorter_nothing_to_sort(st->s))
		snprintf(ns->detail, sizeof(ns->detail), "%s", ZS_NOTHING_TO_SORT);
	ns->have_quarantine = !zs_sorter_quarantine(st->s, n, &ns->quarantine);
	if ((g = zs_node_geom_find(st->geoms, st->ngeoms, n))) {
		ns->fs.geom = *g;
		free_slots_compute(&ns->fs, n, st->zones, st->nzones, zones_error, a->fraction);
	}
}

/* Every NUMA node with memory (every possible one without libnuma). */
static int status_nodes(const struct status_args *a, struct status *st, char *err)
{
	int max = zs_nodeset_max();
	char zones_err[ZS_ERRLEN];
	bool have_zones;

	st->ns = calloc((size_t)max + 1, sizeof(*st->ns));
	if (!st->ns)
		return zs_fail(err, "out of memory");
	if (st->nmc && zs_node_geoms_from(st->mc, st->nmc,
					  a->size_arg ? "--cache-size" : "cache_size=",
					  a->ways_arg ? "--ways" : "ways=",
					  a->size_arg || a->ways_arg ? "option" : NULL,
					  &st->geoms, &st->ngeoms, err))
		return -1;
	have_zones = st->ngeoms && !zs_zones_read(NULL, NULL, &st->zones, &st->nzones, zones_err);
	for (int n = 0; n <= max; n++) {
		long long freeb = 0, mem = numa_available() < 0 ? 0 : numa_node_size64(n, &freeb);

		if (mem <= 0 && numa_available() >= 0)
			continue;
		node_state_read(a, st, n, mem, freeb, have_zones ? NULL : zones_err,
				&st->ns[st->nn++]);
	}
	return 0;
}

static void status_free(struct status *st)
{
	for (int i = 0; i < st->nn; i++)
		zs_freemem_free(&st->ns[i].fs.fm);
	free(st->ns);
	free(st->geoms);
	free(st->zones);
	free(st->mc);
	if (st->s)
		zs_sorter_close(st->s);
}

static int run_status(struct status_args *a)
{
	struct status st = { 0 };
	struct module_state module;
	char err[ZS_ERRLEN];
	int rc = ZS_EXIT_OK;

	/* status always asks hwloc, and refreshes the copy jobs use. */
	mkdir(a->policy.memcache.statedir, 0755);
	if (zs_memcache_discover_cached(&a->policy.memcache, true, &st.mc, &st.nmc, err) ||
	    zs_sorter_open(&a->policy.sorter, &a->policy.memcache, &a->policy.metrics, &st.s, err) ||
	    status_nodes(a, &st, err)) {
		fprintf(stderr, "zonesort status: %s\n", err);
		status_free(&st);
		return ZS_EXIT_FAIL;
	}
	module_state_read(&a->policy.sorter, st.s, &module);
	if (a->json)
		print_json(st.s, st.mc, st.nmc, st.ns, st.nn, st.zones, a->histogram, &module);
	else
		print_human(st.s, st.mc, st.nmc, st.ns, st.nn, st.zones, a->histogram, &module);
	if (a->prom_dir && write_prometheus(a->prom_dir, &a->policy.metrics, st.s, st.ns, st.nn,
					    err)) {
		fprintf(stderr, "zonesort status: %s\n", err);
		rc = ZS_EXIT_FAIL;
	}
	status_free(&st);
	return rc;
}

int cmd_status(int argc, char **argv)
{
	struct status_args a = { .fraction = 0.5 };
	int rc = parse_status(argc, argv, &a);

	return rc != CLI_GO_ON ? rc : run_status(&a);
}
