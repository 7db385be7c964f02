// SPDX-License-Identifier: GPL-2.0
/*
 * The cache geometry a sort uses: the module parameters cache_size and
 * ways (zonesort_main.c defines them and checks what is written), else
 * the node's level-1 memory-side cache in the firmware's ACPI HMAT. Calls
 * only the policy's geometry set-up (zonesort_policy.c).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/acpi.h>
#include <linux/math64.h>
#include <linux/mm.h>
#include <linux/nodemask.h>
#include <linux/printk.h>
#include <linux/slab.h>

#include "zonesort_geometry.h"
#include "zonesort_policy.h"

unsigned long zs_cache_size;
unsigned int zs_ways;

/* ------------------------------------------------------------------------
 * Memory-side caches described by the firmware (ACPI HMAT, structure type
 * 2), per node. The kernel's own copy (drivers/base/node.c) is not
 * reachable from a module, so we read the table: acpi_get_table() and
 * pxm_to_node() are exported.
 */
struct zs_fwcache {
	u64 size;
	bool direct;	/* direct-mapped; otherwise HMAT says "none" or "complex" */
};

static struct zs_fwcache *zs_fw;	/* nr_node_ids entries */

static void zs_read_hmat(void)
{
#ifdef CONFIG_ACPI
	struct acpi_table_header *tbl;
	size_t off;

	if (acpi_disabled || ACPI_FAILURE(acpi_get_table(ACPI_SIG_HMAT, 0, &tbl)))
		return;
	off = sizeof(struct acpi_table_hmat);
	while (off + sizeof(struct acpi_hmat_structure) <= tbl->length) {
		struct acpi_hmat_structure *h = (void *)tbl + off;

		if (h->length < sizeof(*h) || off + h->length > tbl->length)
			break;
		if (h->type == ACPI_HMAT_TYPE_CACHE && h->length >= sizeof(struct acpi_hmat_cache)) {
			struct acpi_hmat_cache *c = (void *)h;
			u32 attr = c->cache_attributes;
			unsigned int level = (attr & ACPI_HMAT_CACHE_LEVEL) >> 4;
			unsigned int assoc = (attr & ACPI_HMAT_CACHE_ASSOCIATIVITY) >> 8;
			int nid = pxm_to_node(c->memory_PD);

			if (level == 1 && nid >= 0 && nid < nr_node_ids) {
				zs_fw[nid].size = c->cache_size;
				zs_fw[nid].direct = assoc == ACPI_HMAT_CA_DIRECT_MAPPED;
				pr_info("node %d: firmware memory-side cache %llu bytes, %s\n", nid,
					c->cache_size,
					zs_fw[nid].direct ? "direct-mapped" :
					"not direct-mapped (sorts need ways=)");
			}
		}
		off += h->length;
	}
	acpi_put_table(tbl);
#endif
}

/*
 * The geometry a sort of node nid uses: 0, -ENODEV (no size, or an
 * indexing the firmware does not spell out and no ways= to go by) or
 * -EDOM (no whole number of page-sized slots), with dmesg saying why.
 */
int zs_geometry(int nid, u64 *size, struct zsp_geom *geom, bool quiet)
{
	u64 sz = READ_ONCE(zs_cache_size);
	unsigned int w = READ_ONCE(zs_ways);
	bool fw = zs_fw && zs_fw[nid].size;
	u32 rem;

	if (!sz && fw)
		sz = zs_fw[nid].size;
	if (!sz) {
		if (!quiet)
			pr_warn_ratelimited("node %d: no memory-side cache size: the firmware describes none; load the module with cache_size=<bytes> [ways=<n>] or write /sys/module/zonesort/parameters/cache_size\n",
					    nid);
		return -ENODEV;
	}
	if (!w) {
		if (fw && !zs_fw[nid].direct) {
			if (!quiet)
				pr_warn_ratelimited("node %d: the firmware's memory-side cache is not direct-mapped and gives no associativity: give ways=<n> (1 = direct-mapped)\n",
						    nid);
			return -ENODEV;
		}
		w = 1;
	}
	div_u64_rem(sz, w * PAGE_SIZE, &rem);
	if (rem || zsp_geom_init(geom, div_u64(sz, w * PAGE_SIZE), w)) {
		if (!quiet)
			pr_warn_ratelimited("node %d: cache_size %llu is not a multiple of ways (%u) x page size (%lu), or has too many slots to track\n",
					    nid, sz, w, PAGE_SIZE);
		return -EDOM;
	}
	*size = sz;
	return 0;
}

int zs_geometry_init(void)
{
	zs_fw = kcalloc(nr_node_ids, sizeof(*zs_fw), GFP_KERNEL);
	if (!zs_fw)
		return -ENOMEM;
	zs_read_hmat();
	return 0;
}

void zs_geometry_exit(void)
{
	kfree(zs_fw);
	zs_fw = NULL;
}
