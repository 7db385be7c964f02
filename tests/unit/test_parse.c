// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"
#include "errbuf.h"
#include "parse.h"
#include "tap.h"

#include <stdlib.h>

static void integers(void)
{
	char err[ZS_ERRLEN];
	uint64_t v = 7;

	ok(!zs_parse_u64("n", "30", 1, 100, &v, err) && v == 30, "30 parses");
	ok(!zs_parse_u64("n", "030", 1, 100, &v, err) && v == 30, "leading zeros are decimal");
	ok(!zs_parse_u64("n", "18446744073709551615", 0, UINT64_MAX, &v, err) && v == UINT64_MAX,
	   "UINT64_MAX parses");
	ok(zs_parse_u64("n", "18446744073709551616", 0, UINT64_MAX, &v, err), "UINT64_MAX+1 overflows");
	err_has(err, "too large", "overflow says too large");
	ok(zs_parse_u64("n", "99999999999999999999", 0, 100, &v, err), "20 digits refused");
	static const char *const bad[] = { "", "-5", "+5", " 5", "5 ", "1e3", "0x10", "abc", "5s", "1.0" };
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ok(zs_parse_u64("--x", bad[i], 0, 100, &v, err), "'%s' refused", bad[i]);
		err_has(err, "--x", "error for '%s' names the option", bad[i]);
	}
	v = 30;
	ok(zs_parse_u64("n", "0", 1, 100, &v, err), "below min refused");
	err_has(err, "from 1 to 100", "range is stated");
	ok(zs_parse_u64("n", "101", 1, 100, &v, err), "above max refused");
	ok(v == 30, "a failed parse leaves the output alone");
}

static void booleans(void)
{
	char err[ZS_ERRLEN];
	bool b = false;

	ok(!zs_parse_bool("k", "yes", &b, err) && b, "yes");
	ok(!zs_parse_bool("k", "no", &b, err) && !b, "no");
	ok(!zs_parse_bool("k", "1", &b, err) && b, "1");
	ok(zs_parse_bool("k", "maybe", &b, err), "maybe refused");
	err_has(err, "'maybe'", "names the value");
	ok(zs_parse_bool("k", "YES", &b, err), "case matters (YES refused)");
}

static void sizes(void)
{
	char err[ZS_ERRLEN];
	uint64_t v;

	ok(!zs_parse_size("s", "64M", &v, err) && v == 64ULL << 20, "64M is binary");
	ok(!zs_parse_size("s", "2GiB", &v, err) && v == 2ULL << 30, "2GiB");
	ok(!zs_parse_size("s", "2GB", &v, err) && v == 2000000000ULL, "2GB is decimal");
	ok(!zs_parse_size("s", "1.5GiB", &v, err) && v == 3ULL << 29, "1.5GiB");
	ok(!zs_parse_size("s", "4096", &v, err) && v == 4096, "bare bytes");
	ok(!zs_parse_size("s", "16k", &v, err) && v == 16384, "unit case-insensitive");
	static const char *const bad[] = { "", "M", "-1G", "1.5", "12X", "1 G", "1e9", "1GiBs" };
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ok(zs_parse_size("--size", bad[i], &v, err), "size '%s' refused", bad[i]);
		err_has(err, "--size", "size error names the option");
	}
	err_has(err, "GiB", "size error lists the units");
	ok(zs_parse_size("s", "99999999999T", &v, err), "overflowing size refused");
}

static void bandwidths(void)
{
	char err[ZS_ERRLEN];
	double b;

	ok(!zs_parse_bandwidth("m", "300GB/s", &b, err) && b == 300e9, "300GB/s");
	ok(!zs_parse_bandwidth("m", "300", &b, err) && b == 300e9, "bare number is GB/s");
	ok(!zs_parse_bandwidth("m", "1.5MB/s", &b, err) && b == 1.5e6, "MB/s");
	ok(!zs_parse_bandwidth("m", "2GiB/s", &b, err) && b == 2.0 * (1ULL << 30), "GiB/s");
	ok(zs_parse_bandwidth("-m", "300GB", &b, err), "GB without /s refused");
	err_has(err, "'300GB'", "names the value");
	ok(zs_parse_bandwidth("-m", "fast", &b, err), "words refused");
	ok(zs_parse_bandwidth("-m", "300Gb/s", &b, err), "Gb/s (gigabits) refused");
	ok(zs_parse_bandwidth("-m", "300gb/s", &b, err), "units are case-sensitive");
	ok(zs_parse_bandwidth("-m", "-3GB/s", &b, err), "negative refused");
}

static void key_values(void)
{
	char err[ZS_ERRLEN], *key = NULL;
	const char *val;

	ok(!zs_split_kv("min_period=5", &key, &val, err), "splits");
	is_str(key, "min_period", "key");
	is_str(val, "5", "value");
	free(key);
	ok(!zs_split_kv("nodes=", &key, &val, err) && !*val, "empty value allowed by the splitter");
	free(key);
	ok(zs_split_kv("novalue", &key, &val, err), "no '=' refused");
	err_has(err, "novalue", "names the word");
	ok(zs_split_kv("=5", &key, &val, err), "empty key refused");
	ok(zs_split_kv("Min=5", &key, &val, err), "upper case key refused");
}

static void formatting(void)
{
	char buf[32];

	is_str(zs_format_size(16ULL << 30, buf, sizeof(buf)), "16 GiB", "16 GiB");
	is_str(zs_format_size(1536, buf, sizeof(buf)), "1.5 KiB", "1.5 KiB");
	is_str(zs_format_size(100, buf, sizeof(buf)), "100 B", "bytes");
}

int main(void)
{
	integers();
	booleans();
	sizes();
	bandwidths();
	key_values();
	formatting();
	return done_testing();
}
