// SPDX-License-Identifier: GPL-2.0
/* Kbuild probe: balloon pages a module enqueues are movable, and their
 * migration asks the module (<linux/balloon.h>, sid's 7.2; before it was
 * <linux/balloon_compaction.h> with another protocol). The quarantine
 * holds its blocks that way where modules cannot mark pages movable:
 * see zonesort_hold.c. */
/* exports: balloon_page_list_enqueue balloon_page_list_dequeue alloc_contig_range|alloc_contig_range_noprof free_contig_range split_page */
#include "conftest-prelude.h"
#include <linux/balloon.h>

#ifndef CONFIG_BALLOON_MIGRATION
#error "balloon pages are not movable in this kernel"
#endif

size_t zs_conftest(struct balloon_dev_info *b, struct list_head *pages);
size_t zs_conftest(struct balloon_dev_info *b, struct list_head *pages)
{
	balloon_devinfo_init(b);
	return balloon_page_list_enqueue(b, pages) + balloon_page_list_dequeue(b, pages, 1);
}
