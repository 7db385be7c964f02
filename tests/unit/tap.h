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

/* A test that cannot run here (no root, an old build host's kernel):
 * Automake's TAP driver reports it as SKIP with the reason;
 * scripts/test-all, run as root on a current kernel, counts a SKIP as a
 * failure. */
#define skip(reason, ...)                                               \
	do {                                                            \
		printf("ok %d - ", ++tap_count);                        \
		printf(__VA_ARGS__);                                    \
		printf(" # SKIP %s\n", (reason));                       \
	} while (0)

/* The whole file cannot run here: a plan of no tests, with the reason. */
static inline int skip_all(const char *reason)
{
	printf("1..0 # SKIP %s\n", reason);
	return 0;
}

static inline int done_testing(void)
{
	printf("1..%d\n", tap_count);
	return tap_failures ? 1 : 0;
}

#endif
