/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Free memory of a NUMA node as the buddy allocator holds it, read from
 * /proc/kpageflags (root only), with the zones from /proc/zoneinfo and the
 * free-list counts from /proc/buddyinfo.
 *
 * Which pfns: the spans of the node's zones (/proc/zoneinfo start_pfn and
 * spanned), cut to the node's memory blocks (/sys/devices/system/node/nodeN/
 * memoryM, block_size_bytes) when the kernel lists them. Neither hwloc nor
 * libnuma tell physical address ranges, so the kernel's files are the
 * source. kpageflags is read in large preads over these ranges only.
 *
 * How free blocks and their orders are found: current kernels (this one,
 * 6.x) set KPF_BUDDY on every page of a free buddy block, not only on its
 * first page. Free blocks are aligned to their size and two free buddies of
 * the same order are always merged, so each maximal run of KPF_BUDDY pages
 * splits into free blocks exactly one way: from the run's start, the largest
 * block aligned at that pfn that fits in the run and is at most the zone's
 * highest order (the number of /proc/buddyinfo columns minus one), then the
 * same from the block's end. (A merge that the kernel refused, across
 * isolated page blocks, shows up as one larger block here.) Older kernels
 * flag only a block's first page; the scan tells the two apart by comparing
 * the flagged pages with /proc/buddyinfo (flagged pages near the number of
 * free pages, or near the number of free blocks), and for those kernels
 * takes a block's order as the largest aligned block of the flagged page and
 * the pages without any flag that follow it. Pages on the per-CPU lists are
 * free but not in the buddy lists, and are not counted (nor does buddyinfo).
 */
#ifndef ZS_KPAGEFLAGS_H
#define ZS_KPAGEFLAGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "slots.h"

#define ZS_MAX_ORDERS 16
#define ZS_KPF_BUDDY 10

struct zs_zone {
	int node;
	char name[16];
	uint64_t start_pfn, spanned, present, managed, free;
	unsigned norders;		/* buddyinfo columns; 0 when it has no line */
	uint64_t buddyinfo[ZS_MAX_ORDERS];
};

/* Reads the zones of every node from zoneinfo and their free-list counts
 * from buddyinfo (paths for tests; NULL = the /proc files). Zones with an
 * empty span are left out. */
int zs_zones_read(const char *zoneinfo, const char *buddyinfo, struct zs_zone **out,
		  unsigned *n, char *err);

/* The node of a pfn by zone spans, or -1. */
int zs_pfn_node(const struct zs_zone *zones, unsigned nzones, uint64_t pfn);

struct zs_pfnrange {
	uint64_t start, end;		/* [start, end) */
	unsigned zone;			/* index into the zones array */
};

/* The memory block ids of the node in node_sysfs (sorted), and the pages
 * per block; none (n = 0) when sysfs lists none. Returns 0, or -1 with err
 * set when out of memory. */
int zs_node_memory_blocks(int node, const char *node_sysfs, uint64_t **ids, size_t *n,
			  uint64_t *block_pages, char *err);

/* The node's pfn ranges, in pfn order. node_sysfs is the directory with
 * nodeN/ (NULL = /sys/devices/system/node); when it lists no memory blocks
 * for the node, the zone spans are used whole. */
int zs_node_pfn_ranges(int node, const struct zs_zone *zones, unsigned nzones,
		       const char *node_sysfs, struct zs_pfnrange **out, unsigned *n, char *err);

struct zs_zone_free {
	unsigned zone;				/* index into the zones array */
	unsigned norders;
	uint64_t *pfn[ZS_MAX_ORDERS];		/* first pfn of each free block */
	size_t n[ZS_MAX_ORDERS], cap[ZS_MAX_ORDERS];
	uint64_t free_pages;
};

struct zs_freemem {
	int node;
	unsigned nzones;
	struct zs_zone_free *zones;		/* the node's zones, zoneinfo order */
	bool head_only;				/* the kernel flags first pages only */
	uint64_t pages_scanned, flagged_pages, free_pages;
	double seconds;				/* time spent reading and decoding */
};

/* Scans the node's free memory. kpageflags NULL = /proc/kpageflags. */
int zs_freemem_scan(int node, const struct zs_zone *zones, unsigned nzones,
		    const char *kpageflags, const char *node_sysfs, struct zs_freemem *out,
		    char *err);
void zs_freemem_free(struct zs_freemem *fm);

/* Adds every free page of fm to counts (g->nslots entries). */
void zs_freemem_slot_counts(const struct zs_freemem *fm, const struct zs_slotgeom *g,
			    uint32_t *counts);

/* The conflict potential of the next allocation of npages (slots.h). */
int zs_freemem_potential(const struct zs_freemem *fm, const struct zs_slotgeom *g,
			 uint64_t npages, struct zs_potential *out, char *err);

#endif
