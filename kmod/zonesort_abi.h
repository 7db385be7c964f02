/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * zonesort.ko's interface to user space: every sysfs file and module
 * parameter, what it holds or accepts, and its bounds. The module and the
 * sorter library (lib/kmod.c, the one place user space touches the
 * module) both include this header, as a kernel uapi header is shared.
 *
 * One value per file. Counters are in the two documented statistics
 * files (ZS_FILE_STATS, ZS_QUARANTINE_STATS), key=value per line.
 * ZS_ABI_VERSION changes when a file changes meaning, moves or goes;
 * a new file does not change it.
 */
#ifndef ZONESORT_ABI_H
#define ZONESORT_ABI_H

#define ZS_ABI_VERSION 3

/* The directory. Its first two files are those of Intel's zonesort_module. */
#define ZS_SYSFS_DIR "/sys/kernel/zone_sort_free_pages"
/* write a NUMA node id: sort that node now (see ZS_ERR_* below); read:
 * the last id written, -1 before any */
#define ZS_FILE_NODEID "nodeid"
/* seconds between sorts of every node, 0 = off; reads "N sec", accepts
 * "N" or "N sec" */
#define ZS_FILE_SORT_INTERVAL "sort_interval"
#define ZS_MAX_SORT_INTERVAL 86400
/* read: ZS_ABI_VERSION */
#define ZS_FILE_ABI_VERSION "interface_version"
/* read: the sorts' statistics, key=value lines */
#define ZS_FILE_STATS "stats"

/* Per NUMA node with memory when the module loaded: a directory. */
#define ZS_NODE_DIR_FMT "node%d"
/* read (root only): share of the pages, in parts per million, that would
 * share a cache slot with another page of a fresh allocation of half (all)
 * of the cache from the free lists as they are now */
#define ZS_FILE_CONFLICTS_HALF "conflicts_half_ppm"
#define ZS_FILE_CONFLICTS_FULL "conflicts_full_ppm"
/* write (root only), binary: the cache slots a running job already
 * occupies, which the node's next sort treats as holding a page each, so
 * that the job's next allocation goes to the slots it does not use yet. A
 * bitmap of the node's tracked slots: slot = (pfn mod colors) >> shift,
 * colors = cache size / ways / page size, shift the least for which
 * colors >> shift <= ZS_OCCUPIED_MAX_SLOTS (0 for every cache of up to
 * 2^22 colors: 16 GiB of 4 KiB pages, direct-mapped); slot i is bit i % 8
 * of byte i / 8, bits past the last slot clear; DIV_ROUND_UP(slots, 8)
 * bytes in all, from offset 0 on (a write at offset 0 starts a new one).
 * EINVAL: more bytes than that, a write that does not go on where the
 * last ended, or bits past the last slot; ENODEV, EDOM: the node's
 * geometry (as for ZS_FILE_NODEID). The next sort of the node that comes
 * within ZS_OCCUPIED_TTL_S seconds of the write at offset 0 takes it
 * whole, then it is forgotten; the conflicts estimates never count it.
 * Not in this file: the statistic last_occupied_slots (ZS_FILE_STATS). */
#define ZS_FILE_OCCUPIED "occupied"
#define ZS_OCCUPIED_MAX_SLOTS (1ULL << 22)
#define ZS_OCCUPIED_TTL_S 10

/* The quarantine, where the kernel lets the module have one. */
#define ZS_QUARANTINE_DIR "quarantine"
/* read: its statistics, key=value lines */
#define ZS_QUARANTINE_STATS "stats"
/* write "1": give back everything held, now */
#define ZS_QUARANTINE_RELEASE "release"
/* read and write, the same values as the parameters of the same meaning
 * below: 1 or 0 (quarantine), per mille (quarantine_max_permille) */
#define ZS_QUARANTINE_ENABLED "enabled"
#define ZS_QUARANTINE_MAX_PERMILLE "max_permille"
/* in each node's directory, read: pages and blocks held, the node's
 * maximum, the most pages held at once since the module loaded or the
 * node's last release; write "1" to ZS_FILE_Q_NODE_RELEASE: give back
 * the node's */
#define ZS_FILE_Q_HELD "quarantine_held_pages"
#define ZS_FILE_Q_BLOCKS "quarantine_held_blocks"
#define ZS_FILE_Q_MAX "quarantine_max_pages"
#define ZS_FILE_Q_PEAK "quarantine_peak_pages"
#define ZS_FILE_Q_NODE_RELEASE "quarantine_release"

/* Module parameters: modprobe arguments, and files of this directory. */
#define ZS_PARAM_DIR "/sys/module/zonesort/parameters"
/* bytes, a multiple of ways x page size; 0 = the firmware's (ACPI HMAT) */
#define ZS_PARAM_CACHE_SIZE "cache_size"
#define ZS_MAX_CACHE_SIZE (1ULL << 46)
/* associativity, 1 = direct-mapped; 0 = the firmware's */
#define ZS_PARAM_WAYS "ways"
#define ZS_MAX_WAYS 64
/* Y or N: the quarantine takes blocks from the next sort on */
#define ZS_PARAM_QUARANTINE "quarantine"
/* per mille of a node's cache's pages: the most the node ever holds */
#define ZS_PARAM_Q_MAX_PERMILLE "quarantine_max_permille"
#define ZS_MAX_PERMILLE 1000
#define ZS_DEFAULT_Q_MAX_PERMILLE 500
/* pile or spread: the order of pages beyond the cache's capacity, from the
 * next sort on */
#define ZS_PARAM_OVERFLOW "overflow"

/*
 * A write to ZS_FILE_NODEID fails with: EINVAL not a node id, or the node
 * is offline; EBUSY another sort runs, or sort_interval is set; ENODEV no
 * cache geometry (none from the firmware, no cache_size); EDOM cache_size
 * is no whole number of slots; ENOMEM no memory for the sort's tables;
 * EINTR the writer was killed.
 */

#endif
