// SPDX-License-Identifier: GPL-2.0-or-later
/* Memory-side cache discovery through the per-boot copy jobs use. This
 * machine has no memory-side cache, so stand-ins are used, each a fake
 * because the hardware is not here: a copy written by the test; an hwloc
 * XML topology (HWLOC_XMLFILE) of a two-socket node whose second socket's
 * memory sits behind a 96 GiB cache (Optane Memory Mode near memory, not a
 * power of two) and is outside the process's allowed nodes (a job's
 * cpuset); and a copy of the kernel's sysfs for an Intel Flat Memory Mode
 * node, whose memory_side_cache/index1/address_mode reads 0x1
 * (extended-linear, Linux 6.15+). hwloc's own reading of real caches is
 * tested in the QEMU suite. */
#include "config.h"
#include "errbuf.h"
#include "memcache.h"
#include "tap.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void write_copy(const char *path, const char *boot, const char *body)
{
	char text[512];

	snprintf(text, sizeof(text), "boot %s v2\n%s", boot, body);
	write_file(path, text);
}

#define NODE_XML(os, mask, mem) \
	"<object type=\"NUMANode\" os_index=\"" os "\" cpuset=\"" mask "\" complete_cpuset=\"" mask \
	"\" nodeset=\"" mask "\" complete_nodeset=\"" mask "\" local_memory=\"" mem "\"/>"

/* Node 0: 4 GiB plain; node 1: 192 GiB behind a 96 GiB direct-mapped
 * cache, not in the allowed nodeset. */
static const char fake_xml[] =
	"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">\n"
	"<topology version=\"2.0\"><object type=\"Machine\" os_index=\"0\" cpuset=\"0x3\" "
	"complete_cpuset=\"0x3\" allowed_cpuset=\"0x1\" nodeset=\"0x3\" complete_nodeset=\"0x3\" "
	"allowed_nodeset=\"0x1\">"
	"<object type=\"Package\" os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"0x1\" nodeset=\"0x1\" complete_nodeset=\"0x1\">"
	NODE_XML("0", "0x1", "4294967296")
	"<object type=\"PU\" os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"0x1\" nodeset=\"0x1\" complete_nodeset=\"0x1\"/></object>"
	"<object type=\"Package\" os_index=\"1\" cpuset=\"0x2\" complete_cpuset=\"0x2\" nodeset=\"0x2\" complete_nodeset=\"0x2\">"
	"<object type=\"MemCache\" cpuset=\"0x2\" complete_cpuset=\"0x2\" nodeset=\"0x2\" complete_nodeset=\"0x2\" "
	"cache_size=\"103079215104\" depth=\"1\" cache_linesize=\"64\" cache_associativity=\"1\" cache_type=\"0\">"
	NODE_XML("1", "0x2", "206158430208")
	"</object><object type=\"PU\" os_index=\"1\" cpuset=\"0x2\" complete_cpuset=\"0x2\" nodeset=\"0x2\" complete_nodeset=\"0x2\"/></object>"
	"</object></topology>\n";

int main(void)
{
	char dir[] = "/tmp/zs-mc-XXXXXX", path[256], boot[64] = "", err[ZS_ERRLEN], f[512];
	struct zs_memcache *mc;
	struct zs_memcache_opts o = { 0 };
	unsigned loads;
	int n;
	FILE *bf = fopen("/proc/sys/kernel/random/boot_id", "r");

	ok(bf && fgets(boot, sizeof(boot), bf), "boot id readable");
	if (bf)
		fclose(bf);
	boot[strcspn(boot, "\n")] = '\0';
	if (!mkdtemp(dir))
		return 1;
	chmod(dir, 0755);
	snprintf(path, sizeof(path), "%s/" ZS_MEMCACHE_COPY, dir);
	snprintf(o.statedir, sizeof(o.statedir), "%s", dir);

	ok(!zs_memcache_discover_cached(&o, false, &mc, &n, err), "first discovery asks hwloc");
	ok(access(path, F_OK) == 0, "and writes the copy");
	int hw = n;

	free(mc);
	write_copy(path, boot, "0 17179869184 64 1 1 0 0\n");
	loads = zs_memcache_topology_loads();
	ok(!zs_memcache_discover_cached(&o, false, &mc, &n, err) && n == 1, "a copy of this boot is used");
	ok(n == 1 && mc[0].node == 0 && mc[0].size == 17179869184ULL && mc[0].ways == 1 && mc[0].line_size == 64,
	   "with its node, size, ways and line size");
	ok(zs_memcache_topology_loads() == loads, "without loading the topology");
	free(mc);

	o.ways = 4;
	ok(!zs_memcache_discover_cached(&o, false, &mc, &n, err) && n == 1 && mc[0].ways == 4,
	   "ways= overrides the copy");
	is_str(n == 1 ? mc[0].source : "", "policy", "and says it came from policy");
	free(mc);
	o.ways = 0;

	/* cache_size= used to bypass the copy and load the topology twice. */
	o.cache_size = 1ULL << 30;
	loads = zs_memcache_topology_loads();
	ok(!zs_memcache_discover_cached(&o, false, &mc, &n, err) && n == 1 && mc[0].size == 1ULL << 30 &&
	   mc[0].line_size == 64, "cache_size= overrides the copy's size and keeps the rest");
	ok(zs_memcache_topology_loads() == loads, "cache_size= with a copy: no topology load (%u)",
	   zs_memcache_topology_loads() - loads);
	free(mc);
	unlink(path);
	loads = zs_memcache_topology_loads();
	ok(!zs_memcache_discover_cached(&o, false, &mc, &n, err) && n >= 1 && mc[0].size == 1ULL << 30,
	   "cache_size= assumes a cache on every node");
	ok(zs_memcache_topology_loads() - loads == 1, "cache_size= without a copy: one topology load (%u)",
	   zs_memcache_topology_loads() - loads);
	free(mc);
	o.cache_size = 0;

	write_copy(path, "00000000-0000-0000-0000-000000000000", "0 17179869184 64 1 1 0 0\n");
	ok(!zs_memcache_discover_cached(&o, false, &mc, &n, err) && n == hw, "a copy from another boot is ignored");
	free(mc);
	snprintf(f, sizeof(f), "boot %s\n0 17179869184 64 1 1\n", boot);
	write_file(path, f);
	ok(!zs_memcache_discover_cached(&o, false, &mc, &n, err) && n == hw, "a copy of the old format is ignored");
	free(mc);
	write_copy(path, boot, "garbage here\n");
	ok(!zs_memcache_discover_cached(&o, false, &mc, &n, err) && n == hw, "a garbled copy is ignored");
	free(mc);
	write_copy(path, boot, "0 17179869184 64 1 1 0 0\n");
	ok(!zs_memcache_discover_cached(&o, true, &mc, &n, err) && n == hw, "refresh asks hwloc again");
	free(mc);

	/* The fake two-socket node, seen from a job confined to socket 0. */
	snprintf(f, sizeof(f), "%s/topo.xml", dir);
	write_file(f, fake_xml);
	setenv("HWLOC_XMLFILE", f, 1);
	ok(!zs_memcache_discover(&o, &mc, &n, err), "discovery on the fake topology");
	ok(n == 1 && mc[0].node == 1, "the cache of a node outside the job's allowed nodes is found (%d caches)", n);
	ok(n == 1 && mc[0].size == 96ULL << 30 && mc[0].ways == 1, "96 GiB direct-mapped, as hwloc says");
	ok(n == 1 && !mc[0].extended_linear, "without address_mode it is an ordinary memory-side cache");
	free(mc);

	/* The same node as Flat Memory Mode: the kernel's sysfs says
	 * extended-linear, and its memory starts at 130 GiB (block 65 of
	 * 2 GiB), not at a multiple of the cache size. */
	static const char *const dirs[] = { "sys", "sys/devices", "sys/devices/system",
		"sys/devices/system/memory", "sys/devices/system/node", "sys/devices/system/node/node1",
		"sys/devices/system/node/node1/memory_side_cache",
		"sys/devices/system/node/node1/memory_side_cache/index1",
		"sys/devices/system/node/node1/memory65", "sys/devices/system/node/node1/memory66",
		"sys/devices/system/node/node1/memory160" };
	for (unsigned i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(f, sizeof(f), "%s/%s", dir, dirs[i]);
		mkdir(f, 0755);
	}
	static const char *const files[][2] = {
		{ "sys/devices/system/memory/block_size_bytes", "80000000\n" },
		{ "sys/devices/system/node/node1/memory_side_cache/index1/size", "103079215104\n" },
		{ "sys/devices/system/node/node1/memory_side_cache/index1/line_size", "64\n" },
		{ "sys/devices/system/node/node1/memory_side_cache/index1/indexing", "0\n" },
		{ "sys/devices/system/node/node1/memory_side_cache/index1/write_policy", "0\n" },
		{ "sys/devices/system/node/node1/memory_side_cache/index1/address_mode", "0x1\n" },
	};
	for (unsigned i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(f, sizeof(f), "%s/%s", dir, files[i][0]);
		write_file(f, files[i][1]);
	}
	snprintf(o.node_sysfs, sizeof(o.node_sysfs), "%s/sys/devices/system/node", dir);
	ok(!zs_memcache_discover(&o, &mc, &n, err) && n == 1, "discovery with the Flat Memory Mode sysfs");
	ok(n == 1 && mc[0].extended_linear, "the cache is extended-linear");
	ok(n == 1 && mc[0].base_pfn == 65ULL * (2ULL << 30) / 4096,
	   "its slots count from the node's first frame, %llu (130 GiB)", n == 1 ? (unsigned long long)mc[0].base_pfn : 0ULL);
	free(mc);
	unsetenv("HWLOC_XMLFILE");

	snprintf(f, sizeof(f), "rm -rf %s", dir);
	if (system(f))
		printf("# cleanup failed\n");
	return done_testing();
}
