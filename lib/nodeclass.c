// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"
#include "nodeclass.h"
#include "errbuf.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A bracket's numbers: at most this many digits (Slurm's are 32-bit). */
#define MAX_DIGITS 9

static bool name_char(char c)
{
	return isalnum((unsigned char)c) || c == '.' || c == '_' || c == '-';
}

/* Checks the inside of one bracket, [open + 1, close): N or N-M (N <= M)
 * separated by single commas. */
static int check_bracket(const char *what, const char *sel, const char *open,
			 const char *close, char *err)
{
	const char *p = open + 1;
	int len = (int)(close - open + 1);

	for (;;) {
		size_t lo_len = strspn(p, "0123456789"), hi_len = 0;
		unsigned long lo, hi;

		if (!lo_len || lo_len > MAX_DIGITS)
			goto bad;
		lo = hi = strtoul(p, NULL, 10);
		p += lo_len;
		if (*p == '-') {
			hi_len = strspn(++p, "0123456789");
			if (!hi_len || hi_len > MAX_DIGITS)
				goto bad;
			hi = strtoul(p, NULL, 10);
			p += hi_len;
			if (hi < lo)
				return zs_fail(err, "%s: '%s': the range in %.*s is reversed; write the lower number first, e.g. knl[001-128]",
					       what, sel, len, open);
		}
		if (p == close)
			return 0;
		if (*p != ',')
			goto bad;
		p++;
	}
bad:
	return zs_fail(err, "%s: '%s': %.*s is not a Slurm host range; expected numbers and ranges of up to %d digits separated by single commas, e.g. knl[001-128] or knl[001-004,010]",
		       what, sel, len, open, MAX_DIGITS);
}

int zs_nodeclass_check(const char *what, const char *sel, char *err)
{
	bool glob = false, bracket = false;

	if (!*sel)
		return zs_fail(err, "%s: empty node selector; expected *, a glob of node names (xmax*) or a Slurm host list (knl[001-128])",
			       what);
	if (strlen(sel) > ZS_NODE_NAME_MAX)
		return zs_fail(err, "%s: node selector '%.40s...' is longer than %d characters", what, sel,
			       ZS_NODE_NAME_MAX);
	if (!strncmp(sel, "feature=", 8))
		return zs_fail(err, "%s: '%s': plugstack.conf selects nodes by name only (the plugin would have to ask slurmctld for node features in every prolog and step); expected *, a glob of node names (xmax*) or a Slurm host list (knl[001-128])",
			       what, sel);
	for (const char *p = sel; *p; p++) {
		if (*p == '*' || *p == '?') {
			glob = true;
		} else if (*p == '[') {
			const char *close = strchr(p, ']');

			if (!close)
				return zs_fail(err, "%s: '%s': '[' without ']'; expected a Slurm host list such as knl[001-128]",
					       what, sel);
			if (check_bracket(what, sel, p, close, err))
				return -1;
			bracket = true;
			p = close;
		} else if (!name_char(*p)) {
			return zs_fail(err, "%s: '%s' is not a node selector (character '%c'); expected *, a glob of node names (xmax*) or a Slurm host list of one name pattern (knl[001-128]); for more classes give more NODES:VALUE entries",
				       what, sel, *p);
		}
	}
	if (glob && bracket)
		return zs_fail(err, "%s: '%s' mixes a glob and a Slurm host list; expected one of them (xmax* or knl[001-128])",
			       what, sel);
	return 0;
}

/* True when the digits d[0, len) are one of the bracket's numbers as Slurm
 * writes it: the value in a range, zero-padded to the width of the range's
 * first bound (knl[001-128] names knl007 and knl128, not knl7). */
static bool bracket_has(const char *open, const char *close, const char *d, size_t len)
{
	char num[MAX_DIGITS + 2];
	unsigned long v;
	size_t digits;

	if (len >= sizeof(num))
		return false;
	memcpy(num, d, len);
	num[len] = '\0';
	v = strtoul(num, NULL, 10);
	digits = (size_t)snprintf(NULL, 0, "%lu", v);

	for (const char *p = open + 1; p < close;) {
		size_t width = strspn(p, "0123456789");
		unsigned long lo = strtoul(p, NULL, 10), hi = lo;

		p += width;
		if (*p == '-') {
			hi = strtoul(++p, NULL, 10);
			p += strspn(p, "0123456789");
		}
		if (v >= lo && v <= hi && len == (digits > width ? digits : width))
			return true;
		if (*p == ',')
			p++;
	}
	return false;
}

static bool match_from(const char *s, const char *n)
{
	for (; *s; s++, n++) {
		if (*s == '*') {
			for (const char *rest = n;; rest++) {
				if (match_from(s + 1, rest))
					return true;
				if (!*rest)
					return false;
			}
		}
		if (*s == '[') {
			const char *close = strchr(s, ']');
			size_t run = strspn(n, "0123456789");

			if (run > MAX_DIGITS)
				run = MAX_DIGITS;
			for (size_t len = 1; len <= run; len++)
				if (bracket_has(s, close, n, len) && match_from(close + 1, n + len))
					return true;
			return false;
		}
		if (!*n || (*s != '?' && *s != *n))
			return false;
	}
	return !*n;
}

bool zs_nodeclass_match(const char *sel, const char *node)
{
	return node && *node && match_from(sel, node);
}

const char *zs_node_name(char *buf, size_t len)
{
	const char *env = getenv("SLURMD_NODENAME");
	char host[ZS_NODE_NAME_MAX + 1] = "";

	if (env && *env) {
		snprintf(buf, len, "%s", env);
		return buf;
	}
	if (gethostname(host, sizeof(host) - 1))
		host[0] = '\0';
	host[strcspn(host, ".")] = '\0';
	snprintf(buf, len, "%s", host[0] ? host : "unknown");
	return buf;
}
