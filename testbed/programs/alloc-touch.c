// SPDX-License-Identifier: GPL-2.0-or-later
/* Test helper: maps MIB mebibytes of anonymous memory, touches every page,
 * prints "ready" and waits for a signal. "thp" asks for transparent huge
 * pages (madvise), "fork" also forks a child that shares the pages
 * copy-on-write (two processes, one set of frames), "for=N" exits 0 after
 * N seconds instead of waiting. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	size_t len, align = 2UL << 20;
	char *p;
	int thp = 0, do_fork = 0;
	unsigned seconds = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: alloc-touch MIB [thp] [fork] [for=SECONDS]\n");
		return 2;
	}
	len = strtoull(argv[1], NULL, 10) << 20;
	for (int i = 2; i < argc; i++) {
		thp |= !strcmp(argv[i], "thp");
		do_fork |= !strcmp(argv[i], "fork");
		if (!strncmp(argv[i], "for=", 4))
			seconds = (unsigned)atoi(argv[i] + 4);
	}
	/* 2 MiB aligned, so that huge pages can back it. */
	p = mmap(NULL, len + align, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	p = (char *)(((unsigned long)p + align - 1) & ~(align - 1));
	if (thp && madvise(p, len, MADV_HUGEPAGE))
		perror("madvise");
	for (size_t i = 0; i < len; i += 4096)
		p[i] = (char)(i >> 12 | 1);
	if (do_fork && fork() == 0) {
		pause();
		_exit(0);
	}
	printf("ready\n");
	fflush(stdout);
	if (seconds) {
		sleep(seconds);
		return 0;
	}
	for (;;)
		pause();
}
