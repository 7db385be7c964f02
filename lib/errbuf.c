// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"
#include "errbuf.h"

#include <stdarg.h>
#include <stdio.h>

int zs_fail(char *err, const char *fmt, ...)
{
	if (err) {
		va_list ap;

		va_start(ap, fmt);
		vsnprintf(err, ZS_ERRLEN, fmt, ap);
		va_end(ap);
	}
	return -1;
}
