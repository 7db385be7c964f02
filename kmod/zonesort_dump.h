/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Test builds only: debugfs zonesort/freelists (zonesort_dump.c), and
 * the module's debugfs directory other test files go into.
 */
#ifndef ZONESORT_DUMP_H
#define ZONESORT_DUMP_H

#ifdef ZS_TEST_HOOKS
/* debugfs zonesort/freelists: each list is copied in one lock hold,
 * interrupts off, into memory sized by the free blocks. */
void zs_dump_init(void);
void zs_dump_exit(void);
/* The module's debugfs directory, or NULL. */
struct dentry *zs_debugfs_dir(void);
#else
static inline void zs_dump_init(void)
{
}

static inline void zs_dump_exit(void)
{
}
#endif

#endif
