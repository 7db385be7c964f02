// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"
#include "parse.h"
#include "errbuf.h"

#include <ctype.h>
#include <stdbool.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int zs_parse_u64(const char *what, const char *s, uint64_t min, uint64_t max,
		 uint64_t *out, char *err)
{
	uint64_t v = 0;
	const char *p;

	if (!s || !*s)
		return zs_fail(err, "%s: empty value; expected an integer from %llu to %llu",
			       what, (unsigned long long)min, (unsigned long long)max);
	for (p = s; *p; p++) {
		if (!isdigit((unsigned char)*p))
			return zs_fail(err, "%s: '%s' is not a whole number; expected an integer from %llu to %llu",
				       what, s, (unsigned long long)min, (unsigned long long)max);
		if (v > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
			return zs_fail(err, "%s: '%s' is too large; expected an integer from %llu to %llu",
				       what, s, (unsigned long long)min, (unsigned long long)max);
		v = v * 10 + (uint64_t)(*p - '0');
	}
	if (v < min || v > max)
		return zs_fail(err, "%s: %s is out of range; expected an integer from %llu to %llu",
			       what, s, (unsigned long long)min, (unsigned long long)max);
	*out = v;
	return 0;
}

int zs_parse_bool(const char *what, const char *s, bool *out, char *err)
{
	static const char *const yes[] = { "yes", "true", "1", "on" };
	static const char *const no[] = { "no", "false", "0", "off" };

	for (unsigned i = 0; s && i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (!strcmp(s, yes[i])) {
			*out = true;
			return 0;
		}
		if (!strcmp(s, no[i])) {
			*out = false;
			return 0;
		}
	}
	return zs_fail(err, "%s: '%s' is not a yes/no value; expected yes or no", what,
		       s ? s : "");
}

/* A non-negative decimal number with an optional fraction, as strtod would
 * read it but without signs, exponents, hex, inf or nan. */
static int parse_plain_number(const char *s, double *out, const char **rest)
{
	const char *p = s;
	bool digits = false;

	while (isdigit((unsigned char)*p)) {
		p++;
		digits = true;
	}
	if (*p == '.') {
		p++;
		while (isdigit((unsigned char)*p)) {
			p++;
			digits = true;
		}
	}
	if (!digits)
		return -1;
	char buf[64];
	size_t n = (size_t)(p - s);

	if (n >= sizeof(buf))
		return -1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	*out = strtod(buf, NULL);
	*rest = p;
	return 0;
}

struct unit {
	const char *name;
	double factor;
};

/* Sizes take units in any case ("64m"); bandwidths only as written, since
 * "Gb/s" would be gigabits. */
static int scale_with_unit(const char *s, const struct unit *units, bool exact_case, double *out)
{
	const char *rest;
	double v;

	if (parse_plain_number(s, &v, &rest))
		return -1;
	for (const struct unit *u = units; u->name; u++) {
		bool same = exact_case ? !strcmp(rest, u->name) : !strcasecmp(rest, u->name);

		if (same && (u->factor != 1.0 || *rest || !strchr(s, '.'))) {
			*out = v * u->factor;
			return 0;
		}
	}
	return -1;
}

/* Sizes are computed in integers: a double cannot hold every byte count
 * (2^53 + 1) and turns an overflow into 2^63 silently. They stop at
 * 2^63 - 1, the range of the signed 64-bit sizes the kernel and modprobe
 * parameters take. */
#define SIZE_MAX_BYTES ((uint64_t)INT64_MAX)
int zs_parse_size(const char *what, const char *s, uint64_t *out, char *err)
{
	static const struct {
		const char *name;
		uint64_t factor;
	} units[] = {
		{ "", 1 }, { "B", 1 },
		{ "K", 1ULL << 10 }, { "KiB", 1ULL << 10 }, { "KB", 1000ULL },
		{ "M", 1ULL << 20 }, { "MiB", 1ULL << 20 }, { "MB", 1000000ULL },
		{ "G", 1ULL << 30 }, { "GiB", 1ULL << 30 }, { "GB", 1000000000ULL },
		{ "T", 1ULL << 40 }, { "TiB", 1ULL << 40 }, { "TB", 1000000000000ULL },
	};
	const char *p = s, *unit;
	unsigned __int128 whole = 0, frac = 0, scale = 1, v;
	unsigned nfrac = 0;
	bool digits = false;
	uint64_t factor = 0;

	if (!s)
		s = p = "";
	for (; isdigit((unsigned char)*p); p++, digits = true) {
		whole = whole * 10 + (unsigned)(*p - '0');
		if (whole > SIZE_MAX_BYTES)
			return zs_fail(err, "%s: '%s' is too large; sizes go up to %llu bytes", what, s,
				       (unsigned long long)SIZE_MAX_BYTES);
	}
	if (*p == '.') {
		for (p++; isdigit((unsigned char)*p); p++, digits = true) {
			if (++nfrac > 18)
				goto bad;
			frac = frac * 10 + (unsigned)(*p - '0');
			scale *= 10;
		}
	}
	unit = p;
	for (size_t i = 0; digits && i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcasecmp(unit, units[i].name)) {
			factor = units[i].factor;
			break;
		}
	/* A fraction needs a unit: "1.5" bytes is a typo, not a size. */
	if (!factor || (scale > 1 && !*unit))
		goto bad;
	if (whole > SIZE_MAX_BYTES / factor + 1)
		return zs_fail(err, "%s: '%s' is too large; sizes go up to %llu bytes", what, s,
			       (unsigned long long)SIZE_MAX_BYTES);
	v = (whole * scale + frac) * factor;
	if (v % scale)
		return zs_fail(err, "%s: '%s' is not a whole number of bytes", what, s);
	v /= scale;
	if (v > SIZE_MAX_BYTES)
		return zs_fail(err, "%s: '%s' is too large; sizes go up to %llu bytes", what, s,
			       (unsigned long long)SIZE_MAX_BYTES);
	*out = (uint64_t)v;
	return 0;
bad:
	return zs_fail(err, "%s: '%s' is not a size; expected a number with an optional unit (B, K/KiB, M/MiB, G/GiB, T/TiB binary; KB, MB, GB, TB decimal), e.g. 64M or 2GiB",
		       what, s);
}

int zs_parse_bandwidth(const char *what, const char *s, double *bytes_per_s, char *err)
{
	static const struct unit units[] = {
		{ "", 1e9 }, { "GB/s", 1e9 }, { "MB/s", 1e6 }, { "TB/s", 1e12 },
		{ "GiB/s", 1073741824.0 }, { "MiB/s", 1048576.0 }, { "TiB/s", 1099511627776.0 },
		{ NULL, 0 },
	};
	double v;

	if (!s || scale_with_unit(s, units, true, &v) || !isfinite(v) || v > 1e18)
		return zs_fail(err, "%s: '%s' is not a bandwidth; expected a number with a unit GB/s, MB/s, TB/s, GiB/s, MiB/s or TiB/s (a bare number means GB/s), e.g. 300GB/s",
			       what, s ? s : "");
	*bytes_per_s = v;
	return 0;
}

int zs_split_kv(const char *word, char **key, const char **value, char *err)
{
	const char *eq = strchr(word, '=');

	if (!eq)
		return zs_fail(err, "'%s' is not of the form key=value", word);
	if (eq == word)
		return zs_fail(err, "'%s' has an empty key; expected key=value", word);
	for (const char *p = word; p < eq; p++)
		if (!islower((unsigned char)*p) && !isdigit((unsigned char)*p) && *p != '_')
			return zs_fail(err, "'%s': key '%.*s' has characters other than a-z, 0-9 and _",
				       word, (int)(eq - word), word);
	char *copy = strdup(word);

	if (!copy)
		return zs_fail(err, "out of memory");
	copy[eq - word] = '\0';
	*key = copy;
	*value = copy + (eq - word) + 1;
	return 0;
}

const char *zs_format_size(uint64_t bytes, char *buf, unsigned buflen)
{
	static const char *const names[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	double v = (double)bytes;
	unsigned i = 0;

	while (v >= 1024.0 && i + 1 < sizeof(names) / sizeof(names[0])) {
		v /= 1024.0;
		i++;
	}
	if (v == floor(v))
		snprintf(buf, buflen, "%.0f %s", v, names[i]);
	else
		snprintf(buf, buflen, "%.3g %s", v, names[i]);
	return buf;
}

int zs_parse_nodelist(const char *what, const char *s, unsigned max,
		      int (*add)(void *ctx, unsigned lo, unsigned hi, char *err), void *ctx,
		      char *err)
{
	const char *p = s ? s : "";

	if (!*p)
		return zs_fail(err, "%s: empty NUMA node list; expected e.g. 0-3,6", what);
	for (;;) {
		uint64_t lo = 0, hi;
		const char *start = p;

		if (!isdigit((unsigned char)*p))
			goto bad;
		for (; isdigit((unsigned char)*p); p++)
			if ((lo = lo * 10 + (uint64_t)(*p - '0')) > max)
				return zs_fail(err, "%s=%s: NUMA node %.*s is beyond the highest possible node %u",
					       what, s, (int)strspn(start, "0123456789"), start, max);
		hi = lo;
		if (*p == '-') {
			const char *second = ++p;

			if (!isdigit((unsigned char)*p))
				goto bad;
			for (hi = 0; isdigit((unsigned char)*p); p++)
				if ((hi = hi * 10 + (uint64_t)(*p - '0')) > max)
					return zs_fail(err, "%s=%s: NUMA node %.*s is beyond the highest possible node %u",
						       what, s, (int)strspn(second, "0123456789"), second, max);
			if (hi < lo)
				return zs_fail(err, "%s=%s: the range %.*s is reversed; write the lower node first, e.g. 0-3,6",
					       what, s, (int)(p - start), start);
		}
		if (add && add(ctx, (unsigned)lo, (unsigned)hi, err))
			return -1;
		if (!*p)
			return 0;
		if (*p != ',')
			goto bad;
		p++;
	}
bad:
	return zs_fail(err, "%s=%s: not a NUMA node list; expected auto, all or nodes and ranges separated by single commas, such as 0-3,6",
		       what, s ? s : "");
}
