/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The kernel module's files (kmod/zonesort_abi.h): every access of the
 * sorter library to /sys/kernel/zone_sort_free_pages goes through here.
 * The directory is the site's sysfs= (tests point it at one of their own).
 * Intel's zonesort_module has only nodeid and sort_interval; this
 * project's module of the interface version this library was built with
 * has the rest; one of another version is refused.
 */
#ifndef ZS_KMOD_H
#define ZS_KMOD_H

#include <stdbool.h>
#include <stddef.h>

#include "errbuf.h"
#include "kwrite.h"

enum zs_kmod_kind {
	ZS_KMOD_ABSENT,		/* no nodeid file */
	ZS_KMOD_INTEL,		/* nodeid, no interface_version: sorts, nothing more */
	ZS_KMOD_OURS,		/* this project's, our interface version */
	ZS_KMOD_MISMATCH,	/* this project's, another interface version */
};

struct zs_kmod {
	char dir[4096];
	enum zs_kmod_kind kind;
	int version;		/* its interface version, 0 when it has none */
	bool quarantine;	/* it has a quarantine directory */
};

/* Finds out what dir holds. For ZS_KMOD_MISMATCH, why says both versions
 * and what to do. */
void zs_kmod_probe(const char *dir, struct zs_kmod *k, char why[ZS_ERRLEN]);

/* Sorts node now, the write bounded by timeout_s seconds (kwrite.h): 0,
 * or -1 with w saying how it ended (its errno, or stopped at the bound). */
int zs_kmod_sort(const struct zs_kmod *k, int node, unsigned timeout_s, struct zs_kwrite *w);

/* Gives node's next sort the slots a running step occupies (bits: bytes
 * of the bitmap of ZS_FILE_OCCUPIED, occupied.h), the write bounded by
 * timeout_s seconds: 0; 1 when the module has no such file (Intel's, or
 * an older build of ours), nothing written; -1 with w saying how it
 * ended. */
int zs_kmod_occupied(const struct zs_kmod *k, int node, const void *bits, size_t bytes,
		     unsigned timeout_s, struct zs_kwrite *w);

/* A key of the stats file: 0, or -1 when absent. */
int zs_kmod_stat(const struct zs_kmod *k, const char *key, long long *v);

/* What a node's quarantine holds, pages; -1 for a figure the module lacks. */
struct zs_kmod_quarantine {
	long long held, blocks, max, peak;
};

/* 0 and node's figures, or -1 when the module keeps no quarantine for it. */
int zs_kmod_quarantine(const struct zs_kmod *k, int node, struct zs_kmod_quarantine *q);

/* The quarantine's max_permille now: 0, or -1 when the module has none. */
int zs_kmod_quarantine_permille(const struct zs_kmod *k, long long *v);

/* A key of the quarantine's stats file: 0, or -1 when absent. */
int zs_kmod_quarantine_stat(const struct zs_kmod *k, const char *key, long long *v);

/* The site's settings, written before each sort: on or off, and the per
 * mille of the cache a node holds at most (-1: leave the module's). 0, or
 * -1 with why naming the file. */
int zs_kmod_quarantine_set(const struct zs_kmod *k, bool on, int max_permille, char why[ZS_ERRLEN]);

/* Gives back what node holds (node < 0: every node's), the write bounded
 * by timeout_s seconds (kwrite.h). 0, or -1 with why naming the file, and
 * *timed_out (when not NULL) true when the give-back did not end in time. */
int zs_kmod_quarantine_release(const struct zs_kmod *k, int node, unsigned timeout_s,
			       char why[ZS_ERRLEN], bool *timed_out);

#endif
