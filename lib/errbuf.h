/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Error text buffers: every library call that can fail explains why in one. */
#ifndef ZS_ERRBUF_H
#define ZS_ERRBUF_H

#include <stddef.h>

#define ZS_ERRLEN 512

/* Formats into err (ZS_ERRLEN bytes) and returns -1, so callers can write
 * "return zs_fail(err, ...)". A NULL err is allowed. */
int zs_fail(char *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
