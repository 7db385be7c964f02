/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The headers of every Kbuild probe (conftest-*.c), in an order that
 * builds on every supported kernel (some, like shrinker.h, need types
 * others declare). conftest-control.c builds with these alone: when it
 * does, a probe that fails lacks its feature, not a header or a flag.
 */
#ifndef ZONESORT_CONFTEST_PRELUDE_H
#define ZONESORT_CONFTEST_PRELUDE_H

#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/migrate.h>
#include <linux/mmzone.h>
#include <linux/shrinker.h>
#include <linux/spinlock.h>

#endif
