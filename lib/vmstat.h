/* The kernel's page allocation counters (/proc/vmstat). */
#ifndef ZS_VMSTAT_H
#define ZS_VMSTAT_H

/* Pages the machine has allocated (the pgalloc_* counters, every zone) and
 * freed (pgfree) since boot. Machine-wide: the kernel keeps no per-node
 * free counter. Every page freed counts, the per-CPU lists' too, whether or
 * not it was allocated again since. 0, or -1 when unreadable. */
int zs_vm_pages(unsigned long long *allocated, unsigned long long *freed);

#endif
