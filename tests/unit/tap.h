/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A minimal TAP producer for the C unit tests. */
#ifndef ZS_TAP_H
#define ZS_TAP_H

#include <stdio.h>
#include <string.h>

static int tap_count, tap_failures;

#define ok(cond, ...)                                                   \
	do {                                                            \
		int ok_ = !!(cond);                                     \
		printf("%sok %d - ", ok_ ? "" : "not ", ++tap_count);   \
		printf(__VA_ARGS__);                                    \
		putchar('\n');                                          \
		if (!ok_) {                                             \
			tap_failures++;                                 \
			printf("#   failed at %s:%d: %s\n", __FILE__,     \
			       __LINE__, #cond);                        \
		}                                                       \
	} while (0)

#define is_str(got, want, ...)                                          \
	do {                                                            \
		const char *g_ = (got), *w_ = (want);                   \
		ok(g_ && !strcmp(g_, w_), __VA_ARGS__);                 \
		if (!g_ || strcmp(g_, w_))                              \
			printf("#   got '%s', want '%s'\n",              \
			       g_ ? g_ : "(null)", w_);                 \
	} while (0)

/* The error text must mention this fragment. */
#define err_has(err, fragment, ...)                                     \
	do {                                                            \
		ok(strstr((err), (fragment)) != NULL, __VA_ARGS__);     \
		if (!strstr((err), (fragment)))                         \
			printf("#   error '%s' lacks '%s'\n", (err),     \
			       (fragment));                             \
	} while (0)

static inline int done_testing(void)
{
	printf("1..%d\n", tap_count);
	return tap_failures ? 1 : 0;
}

#endif
