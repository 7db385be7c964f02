// SPDX-License-Identifier: GPL-2.0
/* Kbuild probe: a binary sysfs file's write callback takes a const struct
 * bin_attribute: Linux 6.16 and later (6.13 to 6.15 have write_new for
 * it beside the old write, which still takes it without const). */
/* exports: sysfs_create_bin_file sysfs_remove_bin_file */
#include "conftest-prelude.h"
#include <linux/sysfs.h>

_Static_assert(__builtin_types_compatible_p(typeof(((struct bin_attribute *)0)->write),
					    ssize_t (*)(struct file *, struct kobject *,
							const struct bin_attribute *, char *, loff_t,
							size_t)),
	       "write takes a const struct bin_attribute");
