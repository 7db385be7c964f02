// SPDX-License-Identifier: GPL-2.0-or-later
/* Free memory of a NUMA node from /proc/kpageflags; see kpageflags.h for
 * where the ranges come from and how block orders are worked out. */
#include "config.h"
#include "kpageflags.h"
#include "child.h"
#include "errbuf.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Orders when buddyinfo has no line for a zone (MAX_PAGE_ORDER 10). */
#define DEFAULT_ORDERS 11
/* kpageflags entries per pread: 4 MiB. */
#define CHUNK_ENTRIES (512u * 1024u)

static FILE *open_proc(const char *path, const char *dflt, char *err)
{
	FILE *f = fopen(path ? path : dflt, "re");

	if (!f)
		zs_fail(err, "cannot read %s: %s", path ? path : dflt, strerror(errno));
	return f;
}

/* The zones of zoneinfo that span pages, in the order listed. */
static int read_zoneinfo(const char *zoneinfo, struct zs_zone **out, unsigned *n, char *err)
{
	struct zs_zone *z = NULL, cur;
	unsigned count = 0;
	bool have = false;
	char line[512];
	FILE *f = open_proc(zoneinfo, "/proc/zoneinfo", err);

	if (!f)
		return -1;
	/* One more pass of the loop at EOF stores the last zone. */
	for (;;) {
		bool eof = !fgets(line, sizeof(line), f);
		int node;
		char name[16];
		unsigned long long v;

		if (eof || sscanf(line, "Node %d, zone %15s", &node, name) == 2) {
			if (have && cur.spanned) {
				struct zs_zone *grown = realloc(z, (count + 1) * sizeof(*z));

				if (!grown) {
					free(z);
					fclose(f);
					return zs_fail(err, "out of memory");
				}
				z = grown;
				z[count++] = cur;
			}
			if (eof)
				break;
			memset(&cur, 0, sizeof(cur));
			cur.node = node;
			snprintf(cur.name, sizeof(cur.name), "%s", name);
			have = true;
			continue;
		}
		if (!have)
			continue;
		if (sscanf(line, " pages free %llu", &v) == 1)
			cur.free = v;
		else if (sscanf(line, " spanned %llu", &v) == 1)
			cur.spanned = v;
		else if (sscanf(line, " present %llu", &v) == 1)
			cur.present = v;
		else if (sscanf(line, " managed %llu", &v) == 1)
			cur.managed = v;
		else if (sscanf(line, " start_pfn: %llu", &v) == 1)
			cur.start_pfn = v;
	}
	fclose(f);
	*out = z;
	*n = count;
	return 0;
}

/* Fills in the free-list counts of the zones that buddyinfo lists. */
static int read_buddyinfo(const char *buddyinfo, struct zs_zone *z, unsigned count, char *err)
{
	char line[512];
	FILE *f = open_proc(buddyinfo, "/proc/buddyinfo", err);

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		int node, used = 0;
		char name[16];

		if (sscanf(line, "Node %d, zone %15s%n", &node, name, &used) != 2)
			continue;
		for (unsigned i = 0; i < count; i++) {
			char *p = line + used, *end;

			if (z[i].node != node || strcmp(z[i].name, name))
				continue;
			z[i].norders = 0;
			while (z[i].norders < ZS_MAX_ORDERS) {
				unsigned long long v = strtoull(p, &end, 10);

				if (end == p)
					break;
				z[i].buddyinfo[z[i].norders++] = v;
				p = end;
			}
		}
	}
	fclose(f);
	return 0;
}

int zs_zones_read(const char *zoneinfo, const char *buddyinfo, struct zs_zone **out,
		  unsigned *n, char *err)
{
	struct zs_zone *z;
	unsigned count;

	if (read_zoneinfo(zoneinfo, &z, &count, err))
		return -1;
	if (!count) {
		free(z);
		return zs_fail(err, "%s lists no zone with memory", zoneinfo ? zoneinfo : "/proc/zoneinfo");
	}
	if (read_buddyinfo(buddyinfo, z, count, err)) {
		free(z);
		return -1;
	}
	*out = z;
	*n = count;
	return 0;
}

int zs_pfn_node(const struct zs_zone *zones, unsigned nzones, uint64_t pfn)
{
	for (unsigned i = 0; i < nzones; i++)
		if (pfn >= zones[i].start_pfn && pfn - zones[i].start_pfn < zones[i].spanned)
			return zones[i].node;
	return -1;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int zs_node_memory_blocks(int node, const char *node_sysfs, uint64_t **ids, size_t *n,
			  uint64_t *block_pages, char *err)
{
	char path[4096];
	DIR *d;
	struct dirent *e;
	FILE *f;
	unsigned long long bs = 0;
	long pg = sysconf(_SC_PAGESIZE);

	*ids = NULL;
	*n = 0;
	snprintf(path, sizeof(path), "%s/../memory/block_size_bytes", node_sysfs);
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (fscanf(f, "%llx", &bs) != 1 || !bs || bs % (unsigned long long)pg) {
		fclose(f);
		return 0;
	}
	fclose(f);
	*block_pages = bs / (unsigned long long)pg;
	snprintf(path, sizeof(path), "%s/node%d", node_sysfs, node);
	d = opendir(path);
	if (!d)
		return 0;
	size_t cap = 0;

	while ((e = readdir(d))) {
		char *end;
		unsigned long long id;

		if (strncmp(e->d_name, "memory", 6) || !e->d_name[6])
			continue;
		id = strtoull(e->d_name + 6, &end, 10);
		if (*end)
			continue;
		if (*n == cap) {
			uint64_t *grown = realloc(*ids, (cap = cap ? cap * 2 : 256) * sizeof(**ids));

			if (!grown) {
				closedir(d);
				free(*ids);
				*ids = NULL;
				return zs_fail(err, "out of memory");
			}
			*ids = grown;
		}
		(*ids)[(*n)++] = id;
	}
	closedir(d);
	qsort(*ids, *n, sizeof(**ids), cmp_u64);
	return 0;
}

static int add_range(struct zs_pfnrange **r, unsigned *n, unsigned *cap, uint64_t start,
		     uint64_t end, unsigned zone, char *err)
{
	if (start >= end)
		return 0;
	if (*n && (*r)[*n - 1].end == start && (*r)[*n - 1].zone == zone) {
		(*r)[*n - 1].end = end;
		return 0;
	}
	if (*n == *cap) {
		struct zs_pfnrange *grown = realloc(*r, (*cap = *cap ? *cap * 2 : 16) * sizeof(**r));

		if (!grown)
			return zs_fail(err, "out of memory");
		*r = grown;
	}
	(*r)[(*n)++] = (struct zs_pfnrange){ start, end, zone };
	return 0;
}

int zs_node_pfn_ranges(int node, const struct zs_zone *zones, unsigned nzones,
		       const char *node_sysfs, struct zs_pfnrange **out, unsigned *n, char *err)
{
	uint64_t *ids, block_pages = 0;
	size_t nids;
	struct zs_pfnrange *r = NULL;
	unsigned count = 0, cap = 0;

	if (zs_node_memory_blocks(node, node_sysfs ? node_sysfs : "/sys/devices/system/node", &ids, &nids,
			&block_pages, err))
		return -1;
	for (unsigned z = 0; z < nzones; z++) {
		uint64_t zs = zones[z].start_pfn, ze = zs + zones[z].spanned;

		if (zones[z].node != node)
			continue;
		if (!nids) {
			if (add_range(&r, &count, &cap, zs, ze, z, err))
				goto fail;
			continue;
		}
		for (size_t i = 0; i < nids; i++) {
			uint64_t bs = ids[i] * block_pages, be = bs + block_pages;

			if (be <= zs || bs >= ze)
				continue;
			if (add_range(&r, &count, &cap, bs > zs ? bs : zs, be < ze ? be : ze, z, err))
				goto fail;
		}
	}
	free(ids);
	if (!count) {
		free(r);
		return zs_fail(err, "node %d has no memory in /proc/zoneinfo", node);
	}
	/* Zones come in zoneinfo order, which is pfn order on every node. */
	*out = r;
	*n = count;
	return 0;
fail:
	free(ids);
	free(r);
	return -1;
}

void zs_freemem_free(struct zs_freemem *fm)
{
	for (unsigned z = 0; z < fm->nzones; z++)
		for (unsigned o = 0; o < ZS_MAX_ORDERS; o++)
			free(fm->zones[z].pfn[o]);
	free(fm->zones);
	memset(fm, 0, sizeof(*fm));
}

static int add_block(struct zs_zone_free *zf, uint64_t pfn, unsigned order, char *err)
{
	if (zf->n[order] == zf->cap[order]) {
		size_t cap = zf->cap[order] ? zf->cap[order] * 2 : 1024;
		uint64_t *grown = realloc(zf->pfn[order], cap * sizeof(uint64_t));

		if (!grown)
			return zs_fail(err, "out of memory");
		zf->pfn[order] = grown;
		zf->cap[order] = cap;
	}
	zf->pfn[order][zf->n[order]++] = pfn;
	zf->free_pages += 1ULL << order;
	return 0;
}

/* The largest order o <= max with pfn aligned to 2^o and pfn + 2^o <= end. */
static unsigned fit_order(uint64_t pfn, uint64_t end, unsigned max)
{
	unsigned o = pfn ? (unsigned)__builtin_ctzll(pfn) : max;

	if (o > max)
		o = max;
	while (o && pfn + (1ULL << o) > end)
		o--;
	return o;
}

/* A run of free pages [start, end) (full mode: every page flagged), or a
 * flagged page and the unflagged pages after it (head mode). */
static int flush_run(struct zs_zone_free *zf, uint64_t start, uint64_t end, bool head_only,
		     char *err)
{
	unsigned max = zf->norders - 1;

	while (start < end) {
		unsigned o = fit_order(start, end, max);

		if (add_block(zf, start, o, err))
			return -1;
		if (head_only)
			break;
		start += 1ULL << o;
	}
	return 0;
}

static int scan_pass(int fd, const char *path, const struct zs_pfnrange *r, unsigned nr,
		     struct zs_freemem *fm, const unsigned *zone_slot, bool head_only,
		     uint64_t *buf, char *err)
{
	fm->pages_scanned = fm->flagged_pages = 0;
	for (unsigned i = 0; i < nr; i++) {
		struct zs_zone_free *zf = &fm->zones[zone_slot[r[i].zone]];
		bool in_run = false;
		uint64_t run_start = 0, pfn;

		for (pfn = r[i].start; pfn < r[i].end;) {
			uint64_t want = r[i].end - pfn;
			ssize_t got;

			if (want > CHUNK_ENTRIES)
				want = CHUNK_ENTRIES;
			got = pread(fd, buf, want * 8, (off_t)(pfn * 8));
			if (got < 0)
				return zs_fail(err, "%s: read at pfn %llu: %s", path,
					       (unsigned long long)pfn, strerror(errno));
			if (got < 8)
				/* Past the kernel's highest pfn. */
				break;
			uint64_t cnt = (uint64_t)got / 8;

			for (uint64_t k = 0; k < cnt; k++) {
				uint64_t flags = buf[k];
				bool buddy = flags >> ZS_KPF_BUDDY & 1;

				fm->pages_scanned++;
				fm->flagged_pages += buddy;
				if (head_only) {
					if (buddy || flags) {
						if (in_run && flush_run(zf, run_start, pfn + k, true, err))
							return -1;
						in_run = buddy;
						run_start = pfn + k;
					}
				} else if (buddy != in_run) {
					if (in_run && flush_run(zf, run_start, pfn + k, false, err))
						return -1;
					in_run = buddy;
					run_start = pfn + k;
				}
			}
			pfn += cnt;
			if (pfn < r[i].end && cnt < want) {
				/* A short read: the kernel stops at its highest pfn. */
				break;
			}
		}
		/* pfn is the range's end, or where a short read stopped. */
		if (in_run && flush_run(zf, run_start, pfn < r[i].end ? pfn : r[i].end, head_only, err))
			return -1;
	}
	return 0;
}

static void reset_blocks(struct zs_freemem *fm)
{
	for (unsigned z = 0; z < fm->nzones; z++) {
		memset(fm->zones[z].n, 0, sizeof(fm->zones[z].n));
		fm->zones[z].free_pages = 0;
	}
}

int zs_freemem_scan(int node, const struct zs_zone *zones, unsigned nzones,
		    const char *kpageflags, const char *node_sysfs, struct zs_freemem *fm,
		    char *err)
{
	const char *path = kpageflags ? kpageflags : "/proc/kpageflags";
	struct zs_pfnrange *r;
	unsigned nr, *zone_slot;
	uint64_t *buf;
	double t0 = zs_now();
	int fd, rc = -1;

	memset(fm, 0, sizeof(*fm));
	fm->node = node;
	if (zs_node_pfn_ranges(node, zones, nzones, node_sysfs, &r, &nr, err))
		return -1;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		zs_fail(err, "cannot open %s: %s%s", path, strerror(errno),
			errno == EACCES || errno == EPERM ? " (root is needed to read page flags)" : "");
		free(r);
		return -1;
	}
	zone_slot = calloc(nzones, sizeof(*zone_slot));
	fm->zones = calloc(nzones, sizeof(*fm->zones));
	buf = malloc(CHUNK_ENTRIES * 8);
	if (!zone_slot || !fm->zones || !buf) {
		zs_fail(err, "out of memory");
		goto out;
	}
	for (unsigned z = 0; z < nzones; z++) {
		if (zones[z].node != node)
			continue;
		zone_slot[z] = fm->nzones;
		fm->zones[fm->nzones].zone = z;
		fm->zones[fm->nzones].norders = zones[z].norders ? zones[z].norders : DEFAULT_ORDERS;
		fm->nzones++;
	}
	if (scan_pass(fd, path, r, nr, fm, zone_slot, false, buf, err))
		goto out;

	/* Full mode found one block per run of flagged pages; if the kernel
	 * flags only first pages, the flagged count matches buddyinfo's blocks
	 * rather than its pages. */
	uint64_t bi_pages = 0, bi_blocks = 0;

	for (unsigned z = 0; z < fm->nzones; z++) {
		const struct zs_zone *zz = &zones[fm->zones[z].zone];

		for (unsigned o = 0; o < zz->norders; o++) {
			bi_blocks += zz->buddyinfo[o];
			bi_pages += zz->buddyinfo[o] << o;
		}
	}
	if (bi_pages > bi_blocks) {
		uint64_t f = fm->flagged_pages;
		uint64_t to_blocks = f > bi_blocks ? f - bi_blocks : bi_blocks - f;
		uint64_t to_pages = f > bi_pages ? f - bi_pages : bi_pages - f;

		if (to_blocks < to_pages) {
			fm->head_only = true;
			reset_blocks(fm);
			if (scan_pass(fd, path, r, nr, fm, zone_slot, true, buf, err))
				goto out;
		}
	}
	for (unsigned z = 0; z < fm->nzones; z++)
		fm->free_pages += fm->zones[z].free_pages;
	fm->seconds = zs_now() - t0;
	rc = 0;
out:
	if (rc)
		zs_freemem_free(fm);
	close(fd);
	free(buf);
	free(zone_slot);
	free(r);
	return rc;
}

void zs_freemem_slot_counts(const struct zs_freemem *fm, const struct zs_slotgeom *g,
			    uint32_t *counts)
{
	for (unsigned z = 0; z < fm->nzones; z++) {
		const struct zs_zone_free *zf = &fm->zones[z];

		for (unsigned o = 0; o < zf->norders; o++) {
			uint64_t bsize = 1ULL << o;

			for (size_t b = 0; b < zf->n[o]; b++) {
				uint64_t pfn = zf->pfn[o][b];

				/* A block covering whole rounds of the slots adds
				 * the same to every slot. */
				if (bsize >= g->nslots && !(bsize % g->nslots)) {
					uint64_t each = bsize / g->nslots;

					for (uint64_t s = 0; s < g->nslots; s++)
						counts[s] += (uint32_t)each;
					continue;
				}
				for (uint64_t i = 0; i < bsize; i++)
					counts[zs_slot_of(g, pfn + i)]++;
			}
		}
	}
}

int zs_freemem_potential(const struct zs_freemem *fm, const struct zs_slotgeom *g,
			 uint64_t npages, struct zs_potential *out, char *err)
{
	struct zs_freeblock_list lists[ZS_MAX_ORDERS * 8];
	struct zs_zone_blocks zb[8];
	unsigned nz = 0;

	/* Highest zone first: zoneinfo lists a node's zones lowest first. */
	for (unsigned i = fm->nzones; i-- > 0 && nz < 8;) {
		const struct zs_zone_free *zf = &fm->zones[i];

		for (unsigned o = 0; o < zf->norders; o++)
			lists[nz * ZS_MAX_ORDERS + o] = (struct zs_freeblock_list){ zf->pfn[o], zf->n[o] };
		zb[nz] = (struct zs_zone_blocks){ &lists[nz * ZS_MAX_ORDERS], zf->norders };
		nz++;
	}
	return zs_potential_compute(g, zb, nz, npages, 16, 0x5a6f6e65736f7274ULL, out, err);
}
