// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"
#include "errbuf.h"
#include "memcache.h"
#include "nodeset.h"
#include "tap.h"

int main(void)
{
	char err[ZS_ERRLEN], buf[64];
	struct bitmask *b;
	int max = zs_nodeset_max();

	b = zs_nodeset_parse("nodes", "0", err);
	ok(b && numa_bitmask_isbitset(b, 0), "node 0 parses");
	is_str(zs_nodeset_format(b, buf, sizeof(buf)), "0", "formats as 0");
	numa_bitmask_free(b);

	snprintf(buf, sizeof(buf), "%d", max + 1);
	ok(!zs_nodeset_parse("nodes", buf, err), "a node past the last is refused");
	err_has(err, buf, "names the node list");
	b = zs_nodeset_parse("nodes", "0,1000", err);
	ok(!b, "a node this host lacks is refused when the node set is made (sort time)");
	err_has(err, "NUMA node 1000 does not exist on this host", "with a clear message");
	static const char *const bad[] = { "", "-1", "0-", "a", "0,,0", ",0", "0,", "1-0", "0x0", "--" };
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		b = zs_nodeset_parse("nodes", bad[i], err);
		ok(!b, "'%s' refused", bad[i]);
		if (b)
			numa_bitmask_free(b);
	}

	b = zs_nodeset_targets("all", NULL, 0, err);
	ok(b && numa_bitmask_weight(b) >= 1 && numa_bitmask_isbitset(b, 0), "all includes node 0");
	numa_bitmask_free(b);

	/* Without a memory-side cache, auto means every node with memory (the
	 * sorter uses it only with nocache=compact). */
	b = zs_nodeset_targets("auto", NULL, 0, err);
	ok(b && numa_bitmask_isbitset(b, 0), "auto without caches = all nodes with memory");
	numa_bitmask_free(b);

	struct zs_memcache mc = { .node = 0, .size = 1ULL << 30, .ways = 1 };

	b = zs_nodeset_targets("auto", &mc, 1, err);
	ok(b && numa_bitmask_weight(b) == 1 && numa_bitmask_isbitset(b, 0), "auto = the nodes behind caches");
	numa_bitmask_free(b);
	return done_testing();
}
