// SPDX-License-Identifier: GPL-2.0
/* Kbuild probe: pages freed outside LRU reclaim are reported through
 * mm_account_reclaimed_pages() (6.4 on); before, through
 * current->reclaim_state->reclaimed_slab. */
#include "conftest-prelude.h"
#include <linux/swap.h>

void zs_conftest(unsigned long pages);
void zs_conftest(unsigned long pages)
{
	mm_account_reclaimed_pages(pages);
}
