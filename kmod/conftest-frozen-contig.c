// SPDX-License-Identifier: GPL-2.0
/* Kbuild probe: a module can allocate a given range as frozen pages
 * (reference count 0) and give it back: sid's 7.2, not Debian's 6.1 or
 * 6.12. The quarantine holds its blocks that way where it can: see
 * zonesort_quarantine.c. */
/* exports: alloc_contig_frozen_range|alloc_contig_frozen_range_noprof free_contig_frozen_range */
#include "conftest-prelude.h"

#ifndef CONFIG_CONTIG_ALLOC
#error "the quarantine takes free blocks with alloc_contig_frozen_range()"
#endif

int zs_conftest(unsigned long pfn);
int zs_conftest(unsigned long pfn)
{
	int err = alloc_contig_frozen_range(pfn, pfn + 1, ACR_FLAGS_NONE, __GFP_NOWARN);

	if (!err)
		free_contig_frozen_range(pfn, 1);
	return err;
}
