// SPDX-License-Identifier: GPL-2.0
/* Kbuild probe that never builds (a member no kernel has): the tests
 * check that the probe mechanism reports it missing. */
#include "conftest-prelude.h"

int zs_conftest(struct per_cpu_pages *pcp);
int zs_conftest(struct per_cpu_pages *pcp)
{
	return pcp->zonesort_no_such_member;
}
