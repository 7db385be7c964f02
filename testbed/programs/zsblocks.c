// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * zsblocks: free pages per memory block, from a free-list dump (debugfs
 * zonesort/freelists, format in kmod/zonesort_dump.c). Guest side, linked
 * statically. Two dumps taken around a sort with the quarantine on tell
 * which memory blocks the sort took free pages out of: the blocks that
 * memory offline and unplug tests must offline to show anything.
 *
 *   zsblocks DUMP BLOCK_BYTES
 *
 * Prints one line per memory block with free pages on a free list of any
 * node: "block=N free=PAGES" (N as in /sys/devices/system/memory/memoryN),
 * then "lists=N longest=N blocks=N": free lists, the entries of the
 * longest one, free blocks in all. Per-CPU lists are left out (pages there
 * come and go with every allocation). Exits 2 on a usage error, 3 when
 * the dump cannot be read or is malformed.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXBLOCKS (1 << 20)

static uint64_t free_pages[MAXBLOCKS];

static void bad(const char *what, const char *path)
{
	fprintf(stderr, "zsblocks: %s: %s\n", path, what);
	exit(3);
}

/* Adds one "F ..." line's blocks to free_pages; returns its entries. */
static size_t add_list(char *line, uint64_t pages_per_block, const char *path)
{
	int node, mt, order, off = 0;
	size_t count, i;
	char zone[16], *p, *end;

	if (sscanf(line, "F %d %15s %d %d %zu%n", &node, zone, &mt, &order, &count, &off) != 5 ||
	    order < 0 || order > 20)
		bad("malformed free-list line", path);
	p = line + off;
	for (i = 0; i < count; i++) {
		uint64_t pfn = strtoull(p, &end, 16);

		if (end == p)
			bad("fewer pfns than the count says", path);
		p = end;
		if (pfn / pages_per_block >= MAXBLOCKS)
			bad("pfn beyond the blocks this program counts", path);
		free_pages[pfn / pages_per_block] += 1ULL << order;
	}
	return count;
}

int main(int argc, char **argv)
{
	size_t cap = 0, lists = 0, longest = 0, blocks = 0, b;
	uint64_t block_bytes, pages_per_block;
	char *line = NULL;
	FILE *f;

	if (argc != 3) {
		fprintf(stderr, "usage: zsblocks DUMP BLOCK_BYTES\n");
		return 2;
	}
	block_bytes = strtoull(argv[2], NULL, 0);
	pages_per_block = block_bytes / 4096;
	if (!pages_per_block) {
		fprintf(stderr, "zsblocks: BLOCK_BYTES '%s' is not a memory block size in bytes\n", argv[2]);
		return 2;
	}
	f = fopen(argv[1], "r");
	if (!f)
		bad("cannot open", argv[1]);
	while (getline(&line, &cap, f) > 0) {
		size_t n;

		if (line[0] != 'F')
			continue;
		if (strstr(line, " truncated"))
			bad("a list was truncated", argv[1]);
		n = add_list(line, pages_per_block, argv[1]);
		lists++;
		blocks += n;
		if (n > longest)
			longest = n;
	}
	free(line);
	fclose(f);
	if (!lists)
		bad("no free list in it", argv[1]);
	for (b = 0; b < MAXBLOCKS; b++)
		if (free_pages[b])
			printf("block=%zu free=%llu\n", b, (unsigned long long)free_pages[b]);
	printf("lists=%zu longest=%zu blocks=%zu\n", lists, longest, blocks);
	return 0;
}
