// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"
#include "errbuf.h"

#include <stdarg.h>
#include <stdio.h>

char *zs_escape(const char *s, char *out, size_t len)
{
	size_t used = 0;

	if (!len)
		return out;
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		char esc[5];
		size_t n;

		if (c < 0x20 || c == 0x7f)
			n = (size_t)snprintf(esc, sizeof(esc), "\\x%02x", c);
		else {
			esc[0] = (char)c;
			n = 1;
		}
		if (used + n >= len)
			break;
		for (size_t i = 0; i < n; i++)
			out[used++] = esc[i];
	}
	out[used] = '\0';
	return out;
}

int zs_fail(char *err, const char *fmt, ...)
{
	if (err) {
		char raw[ZS_ERRLEN];
		va_list ap;

		va_start(ap, fmt);
		vsnprintf(raw, sizeof(raw), fmt, ap);
		va_end(ap);
		zs_escape(raw, err, ZS_ERRLEN);
	}
	return -1;
}
