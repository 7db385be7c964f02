/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Error text buffers: every library call that can fail explains why in one. */
#ifndef ZS_ERRBUF_H
#define ZS_ERRBUF_H

#include <stddef.h>

#define ZS_ERRLEN 512

/* Formats into err (ZS_ERRLEN bytes) and returns -1, so callers can write
 * "return zs_fail(err, ...)". A NULL err is allowed. Control characters in
 * the result (a user's value quoted in the message) are written as \xNN:
 * these messages end up in slurmd's log and on terminals. */
int zs_fail(char *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Copies s into out (len bytes, always terminated) with every control
 * character and DEL written as \xNN, so text that came from a user cannot
 * forge or break log lines. Escaping twice changes nothing. Returns out. */
char *zs_escape(const char *s, char *out, size_t len);

#endif
