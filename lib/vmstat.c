/* The kernel's page allocation counters; see vmstat.h. */
#include <stdio.h>
#include <string.h>

#include "vmstat.h"

int zs_vm_pages(unsigned long long *allocated, unsigned long long *freed)
{
	char name[64];
	unsigned long long v;
	FILE *f = fopen("/proc/vmstat", "re");
	int found = 0;

	if (!f)
		return -1;
	*allocated = *freed = 0;
	while (fscanf(f, "%63s %llu", name, &v) == 2) {
		if (!strncmp(name, "pgalloc_", 8)) {
			*allocated += v;
			found |= 1;
		} else if (!strcmp(name, "pgfree")) {
			*freed = v;
			found |= 2;
		}
	}
	fclose(f);
	return found == 3 ? 0 : -1;
}
