/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What zonesort needs from the page allocator's internals, per kernel.
 *
 * Distribution kernels backport page-allocator changes (RHEL 9's 5.14
 * carries many of 6.x), so a version number says little about struct
 * layouts. Where the headers define a macro with the change, it is tested
 * here; where only a struct member or a function's arguments changed,
 * Kbuild compiles a probe against the kernel's headers (conftest-*.c,
 * with conftest-control.c as their positive control) and passes the
 * result as -DZS_HAVE_... . LINUX_VERSION_CODE is used only for the range
 * of kernels this code was written and tested against (zonesort_range.h).
 */
#ifndef ZONESORT_COMPAT_H
#define ZONESORT_COMPAT_H

#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/mmzone.h>
#include <linux/pageblock-flags.h>
#include "zonesort_range.h"

#ifndef CONFIG_SPARSEMEM
#error "zonesort reads pageblock flags through mem_section and needs CONFIG_SPARSEMEM"
#endif

/*
 * Number of free-list orders, from the array itself: MAX_ORDER was
 * exclusive until 6.3, inclusive from 6.4, renamed MAX_PAGE_ORDER in 6.8,
 * and distributions backport either.
 */
#define ZS_NR_ORDERS ARRAY_SIZE(((struct zone *)NULL)->free_area)

/*
 * Free-list and per-CPU list linkage: 6.0 named it page->buddy_list and
 * page->pcp_list, members of one union with page->lru, which older
 * kernels use directly. page->lru reaches the same list_head everywhere.
 */
#define ZS_LINK lru

/*
 * Pageblock migratetype bits. Kernels after 6.12 renamed the mask and
 * made isolation a bit of its own (the migratetype bits then keep the type
 * the block had before); before, isolation was the migratetype
 * MIGRATE_ISOLATE.
 */
#ifdef PAGEBLOCK_MIGRATETYPE_MASK
#define ZS_MT_MASK PAGEBLOCK_MIGRATETYPE_MASK
#define ZS_ISO_MASK PAGEBLOCK_ISO_MASK
#else
#define ZS_MT_MASK MIGRATETYPE_MASK
#define ZS_ISO_MASK 0
#endif

/*
 * Per-CPU lists: since 6.0 (and in backports) struct per_cpu_pages has a
 * spinlock other CPUs may take to look at the lists (the kernel's own
 * remote drain does); before, only the owning CPU with interrupts off
 * could, and zonesort does not count those pages (ZS_HAVE_PCP_LOCK from
 * conftest-pcp-lock.c). The order-0 list of migratetype mt is lists[mt];
 * the huge-page list follows the NR_LOWORDER_PCP_LISTS low-order lists,
 * one for all types (NR_PCP_THP 1) or a second one for movable pages
 * (NR_PCP_THP 2).
 */
#if defined(ZS_HAVE_PCP_LOCK) && defined(CONFIG_TRANSPARENT_HUGEPAGE) && defined(NR_PCP_THP)
#if NR_PCP_THP == 2
#define ZS_PCP_THP_INDEX(mt) (NR_LOWORDER_PCP_LISTS + ((mt) == MIGRATE_MOVABLE))
#elif NR_PCP_THP == 1
#define ZS_PCP_THP_INDEX(mt) NR_LOWORDER_PCP_LISTS
#endif
#endif

/* Order of a PMD-mapped transparent huge page, or 0 without them. */
#ifdef CONFIG_TRANSPARENT_HUGEPAGE
#define ZS_THP_ORDER HPAGE_PMD_ORDER
#else
#define ZS_THP_ORDER 0
#endif

#endif
