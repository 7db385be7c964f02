// SPDX-License-Identifier: GPL-2.0-or-later
/* Memory-side cache discovery through the per-boot copy jobs use. This
 * machine has no memory-side cache, so a copy written by the test stands in
 * for one; hwloc's own reading of real caches is tested in the QEMU suite. */
#include "config.h"
#include "errbuf.h"
#include "memcache.h"
#include "policy.h"
#include "tap.h"

#include <stdlib.h>
#include <unistd.h>

static void write_file(const char *path, const char *boot, const char *body)
{
	FILE *f = fopen(path, "w");

	fprintf(f, "boot %s\n%s", boot, body);
	fclose(f);
}

int main(void)
{
	char dir[] = "/tmp/zs-mc-XXXXXX", path[256], boot[64] = "", err[ZS_ERRLEN];
	struct zs_memcache *mc;
	struct zs_policy p;
	int n;
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");

	ok(f && fgets(boot, sizeof(boot), f), "boot id readable");
	if (f)
		fclose(f);
	boot[strcspn(boot, "\n")] = '\0';
	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/memcache", dir);
	zs_policy_defaults(&p);

	ok(!zs_memcache_discover_cached(&p, path, false, &mc, &n, err), "first discovery asks hwloc");
	ok(access(path, F_OK) == 0, "and writes the copy");
	int hw = n;

	free(mc);
	write_file(path, boot, "0 17179869184 64 1 1\n");
	ok(!zs_memcache_discover_cached(&p, path, false, &mc, &n, err) && n == 1, "a copy of this boot is used");
	ok(n == 1 && mc[0].node == 0 && mc[0].size == 17179869184ULL && mc[0].ways == 1 && mc[0].line_size == 64,
	   "with its node, size, ways and line size");
	free(mc);

	p.ways = 4;
	ok(!zs_memcache_discover_cached(&p, path, false, &mc, &n, err) && n == 1 && mc[0].ways == 4,
	   "ways= overrides the copy");
	is_str(n == 1 ? mc[0].source : "", "policy", "and says it came from policy");
	free(mc);
	p.ways = 0;

	write_file(path, "00000000-0000-0000-0000-000000000000", "0 17179869184 64 1 1\n");
	ok(!zs_memcache_discover_cached(&p, path, false, &mc, &n, err) && n == hw, "a copy from another boot is ignored");
	free(mc);
	write_file(path, boot, "garbage here\n");
	ok(!zs_memcache_discover_cached(&p, path, false, &mc, &n, err) && n == hw, "a garbled copy is ignored");
	free(mc);
	write_file(path, boot, "0 17179869184 64 1 1\n");
	ok(!zs_memcache_discover_cached(&p, path, true, &mc, &n, err) && n == hw, "refresh asks hwloc again");
	free(mc);

	p.cache_size = 1ULL << 30;
	ok(!zs_memcache_discover_cached(&p, path, false, &mc, &n, err) && n >= 1 && mc[0].size == 1ULL << 30,
	   "cache_size= assumes a cache on every node");
	free(mc);
	unlink(path);
	rmdir(dir);
	return done_testing();
}
