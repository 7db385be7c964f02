// SPDX-License-Identifier: GPL-2.0-or-later
/* libFuzzer harness for every parser that reads text from users, sites or
 * the periodic helper. ZS_FUZZ_TARGET picks the parser; each checks a
 * property of its own beyond "no crash, no undefined behaviour". */
#include "config.h"
#include "errbuf.h"
#include "memcache.h"
#include "parse.h"
#include "policy.h"
#include "slots.h"
#include "sorter.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int target;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *t = getenv("ZS_FUZZ_TARGET");

	(void)argc;
	(void)argv;
	target = t ? atoi(t) : 0;
	return 0;
}

static void no_control(const char *err)
{
	for (const char *p = err; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			abort();
}

static int check_range(void *ctx, unsigned lo, unsigned hi, char *err)
{
	(void)ctx;
	(void)err;
	if (lo > hi || hi > 1023)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1), err[ZS_ERRLEN] = "";
	struct zs_policy p;

	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	zs_policy_defaults(&p);
	switch (target) {
	case 0: {	/* --zonesort values */
		struct zs_request r;

		if (zs_request_parse(&p.request, s, &r, err))
			no_control(err);
		else if (r.mode == ZS_MODE_PERIODIC && (r.period < p.request.min_period || r.period > ZS_MAX_PERIOD))
			abort();
		break;
	}
	case 1:		/* plugstack.conf words */
		if (zs_policy_set(&p, s, err))
			no_control(err);
		break;
	case 2: {	/* sizes: digits alone must come out exactly */
		uint64_t v;

		if (zs_parse_size("s", s, &v, err) == 0) {
			if (v > (uint64_t)INT64_MAX)
				abort();
			if (size && size <= 18 && strspn(s, "0123456789") == size &&
			    v != strtoull(s, NULL, 10))
				abort();
		} else {
			no_control(err);
		}
		break;
	}
	case 3: {	/* bandwidths */
		double b;

		if (!zs_parse_bandwidth("b", s, &b, err) && !(b >= 0 && b <= 1e18))
			abort();
		break;
	}
	case 4:		/* NUMA node lists */
		if (zs_parse_nodelist("nodes", s, 1023, check_range, NULL, err))
			no_control(err);
		break;
	case 5: {	/* the helper's report lines */
		struct zs_tally t;
		struct zs_sample sm;

		zs_tally_parse(s, &t);
		if (!zs_sample_parse(s, &sm) && !(sm.fraction >= 0 && sm.fraction <= 1))
			abort();
		break;
	}
	case 6: {	/* the per-boot cache layout copy */
		struct zs_memcache *mc;
		int n;

		if (!zs_memcache_parse_copy(s, "b", &mc, &n)) {
			for (int i = 0; i < n; i++)
				if (mc[i].node < 0 || mc[i].node > 1023)
					abort();
			free(mc);
		}
		break;
	}
	}
	free(s);
	return 0;
}
