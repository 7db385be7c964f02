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

int zs_parse_size(const char *what, const char *s, uint64_t *out, char *err)
{
	static const struct unit units[] = {
		{ "", 1.0 }, { "B", 1.0 },
		{ "K", 1024.0 }, { "KiB", 1024.0 }, { "KB", 1e3 },
		{ "M", 1048576.0 }, { "MiB", 1048576.0 }, { "MB", 1e6 },
		{ "G", 1073741824.0 }, { "GiB", 1073741824.0 }, { "GB", 1e9 },
		{ "T", 1099511627776.0 }, { "TiB", 1099511627776.0 }, { "TB", 1e12 },
		{ NULL, 0 },
	};
	double v;

	if (!s || scale_with_unit(s, units, false, &v))
		return zs_fail(err, "%s: '%s' is not a size; expected a number with an optional unit (B, K/KiB, M/MiB, G/GiB, T/TiB binary; KB, MB, GB, TB decimal), e.g. 64M or 2GiB",
			       what, s ? s : "");
	if (v >= 18446744073709551615.0)
		return zs_fail(err, "%s: '%s' is too large", what, s);
	*out = (uint64_t)llround(v);
	return 0;
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
