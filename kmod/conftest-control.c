// SPDX-License-Identifier: GPL-2.0
/* Kbuild positive control: every kernel zonesort supports (5.14-7.2)
 * builds this with the probes' command and their headers, using members
 * all of those kernels have. Kbuild stops the build when it does not:
 * then no probe result could be trusted. */
/* exports: __free_pages alloc_pages|alloc_pages_noprof kmem_cache_free */
#include "conftest-prelude.h"

int zs_conftest(struct zone *zone, struct per_cpu_pages *pcp);
int zs_conftest(struct zone *zone, struct per_cpu_pages *pcp)
{
	return zone->free_area[0].nr_free != 0 && pcp->count != 0 &&
	       spin_is_locked(&zone->lock);
}
