/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Strict parsers for every value a user or an administrator can type:
 * integers, sizes, bandwidths, yes/no words and "key=value" words.
 * All of them reject trailing garbage, signs, blanks and overflow, and
 * name the bad text and what is accepted in err. */
#ifndef ZS_PARSE_H
#define ZS_PARSE_H

#include <stdbool.h>
#include <stdint.h>

/* Decimal digits only, value in [min, max]. what names the value in errors. */
int zs_parse_u64(const char *what, const char *s, uint64_t min, uint64_t max,
		 uint64_t *out, char *err);

/* yes|no|true|false|1|0|on|off. */
int zs_parse_bool(const char *what, const char *s, bool *out, char *err);

/* A byte count: digits with an optional unit. K, M, G, T and KiB, MiB, GiB,
 * TiB are binary (1024^n); KB, MB, GB, TB are decimal (1000^n); B or no unit
 * means bytes. Computed exactly in integers; a value above 2^63 - 1 is an
 * error. Fractions are allowed with a unit when they come to a whole number
 * of bytes ("1.5GiB"; "1.5B" is refused). */
int zs_parse_size(const char *what, const char *s, uint64_t *out, char *err);

/* A bandwidth in bytes per second: a number followed by GB/s, MB/s, GiB/s,
 * MiB/s or TB/s (decimal and binary as for sizes), spelt exactly so: "Gb/s"
 * would be gigabits. A bare number is GB/s. */
int zs_parse_bandwidth(const char *what, const char *s, double *bytes_per_s,
		       char *err);

/* A NUMA node list such as "0-3,6": nodes and ranges lo-hi (lo <= hi, at
 * most max) separated by single commas, nothing else. Calls add (if not
 * NULL) for every range; an error from add stops the parse. what names the
 * setting in errors ("nodes"). */
int zs_parse_nodelist(const char *what, const char *s, unsigned max,
		      int (*add)(void *ctx, unsigned lo, unsigned hi, char *err), void *ctx,
		      char *err);

/* Splits "key=value". key must be non-empty lower-case [a-z0-9_]; value may
 * be empty. Returns pointers into a copy the caller frees with free(*key). */
int zs_split_kv(const char *word, char **key, const char **value, char *err);

/* Formats a byte count with a binary unit, e.g. "16 GiB", "1.5 MiB". */
const char *zs_format_size(uint64_t bytes, char *buf, unsigned buflen);

#endif
