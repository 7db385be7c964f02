// SPDX-License-Identifier: GPL-2.0
/* Kbuild probe: register_shrinker() takes a name (printf format): Linux
 * 6.0 to 6.6, and RHEL 9's 5.14 from 9.3 on. Linux 5.14 as released takes
 * the shrinker alone; 6.7 and later have shrinker_alloc() instead
 * (SHRINKER_ALLOCATED), which zonesort_quarantine.c tests first. */
/* exports: register_shrinker unregister_shrinker */
#include "conftest-prelude.h"

int zs_conftest(struct shrinker *s);
int zs_conftest(struct shrinker *s)
{
	return register_shrinker(s, "%s", "zonesort-conftest");
}
