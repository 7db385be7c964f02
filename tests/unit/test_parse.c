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

	/* Exact integers: no trip through a double. */
	ok(!zs_parse_size("s", "9007199254740993", &v, err) && v == 9007199254740993ULL,
	   "2^53 + 1 stays exact (got %llu)", (unsigned long long)v);
	ok(!zs_parse_size("s", "9223372036854775807", &v, err) && v == INT64_MAX, "2^63 - 1 parses");
	ok(zs_parse_size("s", "9223372036854775808", &v, err), "2^63 is too large");
	ok(zs_parse_size("s", "18446744073709551616", &v, err), "2^64 is too large");
	err_has(err, "too large", "and says so");
	v = 7;
	ok(zs_parse_size("cache_size", "10000000TB", &v, err) && v == 7, "10000000TB overflows and is refused");
	err_has(err, "'10000000TB' is too large", "naming the value");
	ok(zs_parse_size("s", "16777216T", &v, err), "2^64 bytes in T refused");
	ok(!zs_parse_size("s", "16777215.999999999999T", &v, err) || 1, "long fractions do not crash");
	ok(!zs_parse_size("s", "0.5K", &v, err) && v == 512, "0.5K is 512");
	ok(!zs_parse_size("s", "1.25KB", &v, err) && v == 1250, "1.25KB is 1250");
	ok(zs_parse_size("s", "1.5B", &v, err), "1.5B is not a whole number of bytes");
	err_has(err, "whole number of bytes", "and says so");
	ok(zs_parse_size("s", "1.0001K", &v, err), "1.0001K is not whole bytes");
	ok(!zs_parse_size("s", "96GiB", &v, err) && v == 96ULL << 30, "96GiB");
}

static void nodelists(void)
{
	char err[ZS_ERRLEN];

	ok(!zs_parse_nodelist("nodes", "0-3,6", 1023, NULL, NULL, err), "0-3,6");
	ok(!zs_parse_nodelist("nodes", "1023", 1023, NULL, NULL, err), "1023");
	static const char *const bad[] = { "", ",", "--", "3-1", "0,,1", ",0", "0,", "0-", "-0",
					   "0--1", "1-2-3", " 0", "0 ", "a", "0x1", "1024", "0-1024",
					   "99999999999999999999999" };
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ok(zs_parse_nodelist("nodes", bad[i], 1023, NULL, NULL, err), "nodes '%s' refused", bad[i]);
		err_has(err, "nodes", "the error names the setting");
	}
	zs_parse_nodelist("nodes", "3-1", 1023, NULL, NULL, err);
	err_has(err, "reversed", "3-1 is called reversed");
}

static void escaping(void)
{
	char err[ZS_ERRLEN], buf[64];

	zs_fail(err, "bad '%s'", "x\n[2038-01-01] forged\r\x1b[31m");
	ok(!strpbrk(err, "\n\r\x1b"), "no control character survives in a message");
	err_has(err, "x\\x0a[2038", "a newline is written as \\x0a");
	is_str(zs_escape("a\tb", buf, sizeof(buf)), "a\\x09b", "escape a tab");
	is_str(zs_escape(zs_escape("a\tb", buf, sizeof(buf)), err, sizeof(err)), "a\\x09b", "escaping twice changes nothing");
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
	nodelists();
	escaping();
	return done_testing();
}
