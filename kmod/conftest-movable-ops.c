// SPDX-License-Identifier: GPL-2.0
/* Kbuild probe: a module can mark pages it allocated as movable with its
 * own operations (__SetPageMovable: Debian's 6.1 and 6.12, not sid's 7.2)
 * and allocate a given range. The quarantine needs both: see
 * zonesort_quarantine.c. */
/* exports: __SetPageMovable __ClearPageMovable alloc_contig_range|alloc_contig_range_noprof free_contig_range */
#include "conftest-prelude.h"

#ifndef CONFIG_CONTIG_ALLOC
#error "the quarantine takes free blocks with alloc_contig_range()"
#endif

extern const struct movable_operations zs_conftest_ops;
void zs_conftest(struct page *page);
void zs_conftest(struct page *page)
{
	__SetPageMovable(page, &zs_conftest_ops);
	__ClearPageMovable(page);
}
