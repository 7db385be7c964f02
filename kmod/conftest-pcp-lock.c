// SPDX-License-Identifier: GPL-2.0
/* Kbuild probe: per-CPU page lists have a spinlock other CPUs may take. */
#include "conftest-prelude.h"

int zs_conftest(struct per_cpu_pages *pcp);
int zs_conftest(struct per_cpu_pages *pcp)
{
	return spin_is_locked(&pcp->lock);
}
