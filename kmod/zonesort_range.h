/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernels zonesort was written and tested against. Later kernels have
 * changed the page allocator's internals more than once (between 6.12
 * and 7.2 pageblock isolation became a flag bit of its own); a kernel
 * beyond this range must be checked and the range raised, not built
 * blindly. kmod/dkms.conf's BUILD_EXCLUSIVE_KERNEL says the same to DKMS.
 */
#ifndef ZONESORT_RANGE_H
#define ZONESORT_RANGE_H

#include <linux/version.h>

#if LINUX_VERSION_CODE < KERNEL_VERSION(5, 14, 0)
#error "zonesort needs Linux 5.14 or later"
#endif
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 3, 0)
#error "zonesort is tested up to Linux 7.2: check the page allocator changes since, then raise this bound"
#endif

#endif
