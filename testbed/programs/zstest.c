// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * zstest: the guest side of the kmod tests, linked statically so that it
 * runs in a busybox initramfs. Every subcommand exits non-zero when it
 * could not do what it was asked (2 usage, 3 a system call failed).
 *
 *   zstest age MIB ROUNDS KEEP_PERMILLE READYFILE
 *       Ages the free lists: ROUNDS times, fault in MIB MiB page by page,
 *       then free the pages one at a time in random order, keeping
 *       KEEP_PERMILLE of them (holes that stop buddies merging). Then
 *       writes "aged rounds=R mib=M kept_pages=K" to READYFILE and keeps
 *       the kept pages until it is killed.
 *   zstest measure BYTES SLOTS WAYS [--sort FILE] [--dump DIR] [--conflicts FILE] [--thp] [--cpu N]
 *       Faults in BYTES of fresh anonymous memory, reads each page's frame
 *       number from /proc/self/pagemap (root only) and prints
 *       "conflict=F pages=N slots_used=N huge=F cpu=N": F the fraction of
 *       the pages whose cache slot (pfn mod SLOTS) holds more than WAYS
 *       pages of this allocation, i.e. that evict each other in the cache;
 *       huge the fraction in 2 MiB pages. --thp: MADV_HUGEPAGE (a job
 *       with transparent huge pages), else MADV_NOHUGEPAGE. --sort: first
 *       write "0" to FILE (sort node 0) in this process, so that no other
 *       process frees pages between the sort and the allocation. --dump:
 *       right before the allocation, copy the module's free-list dump,
 *       /proc/pagetypeinfo and /proc/kpageflags into memory touched
 *       beforehand (so that copying them takes no page from the lists),
 *       and write them to DIR afterwards, with the pfns the allocation got;
 *       the dump is taken again (at most 5 times, dump_tries=N printed)
 *       while /proc/pagetypeinfo changes right after it.
 *       --conflicts: then read FILE too (the module's node0/
 *       conflicts_half_ppm) and print its estimate (est_half_ppm).
 *       --cpu: run on that CPU (its per-CPU lists serve the allocation).
 *       --occupied FILE FIRST COUNT: right before the sort, write the
 *       bitmap of slots FIRST .. FIRST+COUNT-1 (mod SLOTS) to FILE, as
 *       "zstest occupied" does. --range FIRST COUNT: also print
 *       "in_range=N", the allocated pages whose slot lies in FIRST ..
 *       FIRST+COUNT-1 (mod SLOTS).
 *   zstest occupied PATH SLOTS FIRST COUNT [BYTES]
 *       Writes a bitmap of SLOTS slots (slot i: bit i % 8 of byte i / 8)
 *       with slots FIRST .. FIRST+COUNT-1 (mod SLOTS) set to PATH (the
 *       module's nodeN/occupied), from offset 0 on, in as many write(2)s
 *       as it takes; BYTES: write that many bytes instead of the bitmap's
 *       (fewer: a bitmap left unfinished; more: zeros past its end).
 *       Prints "ok bytes=N" or "ERRNO at=OFFSET".
 *   zstest pwrite PATH OFFSET COUNT
 *       One pwrite(2) of COUNT zero bytes at OFFSET; prints "ok" or the
 *       errno name.
 *   zstest pressed MARGIN_PAGES SORTFILE PARAMFILE VALUE
 *       Faults in memory until an allocation of the kernel on node 0 has
 *       fewer than MARGIN_PAGES pages left above the min watermarks (from
 *       /proc/zoneinfo), then writes "0" to SORTFILE and VALUE to
 *       PARAMFILE, frees the memory and prints "pages=N headroom=H
 *       sort=R param=R oom_kills=N" (the OOM killer's runs meanwhile).
 *   zstest burst BYTES
 *       Faults in BYTES and frees them with one madvise(2) on this CPU, so
 *       that its per-CPU list fills up to its high mark.
 *   zstest hog SECONDS MIB SEED
 *       Allocates and frees memory of random sizes and lifetimes (up to
 *       MIB MiB at a time, huge pages allowed) for SECONDS.
 *   zstest write PATH TEXT
 *       Writes TEXT to PATH with one write(2) and prints "ok" or the errno
 *       name; exits 0 either way unless PATH cannot be opened.
 *   zstest writes PATH TEXT COUNT
 *       COUNT such writes; prints "ok=N EBUSY=N other=N".
 *   zstest read PATH
 *       Reads PATH with one read(2) and prints its text or the errno name
 *       ("ENODEV"); exits 0 either way unless PATH cannot be opened.
 *   zstest readloop PATH SECONDS
 *       Reads PATH over and over for SECONDS; prints "reads=N errors=N".
 *   zstest flags PFN COUNT
 *       The /proc/kpageflags words of pages PFN..PFN+COUNT-1, one line
 *       "FLAGS(hex) PAGES FIRST-PFN(hex)" per distinct word, most pages
 *       first: what keeps a range from going offline.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static size_t page_size;

static uint64_t rng_state = 88172645463325252ULL;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static void shuffle(size_t *v, size_t n)
{
	for (size_t i = n; i > 1; i--) {
		size_t j = rnd() % i, t = v[i - 1];

		v[i - 1] = v[j];
		v[j] = t;
	}
}

static void die(const char *what)
{
	fprintf(stderr, "zstest: %s: %s\n", what, strerror(errno));
	exit(3);
}

/* An anonymous mapping aligned to 2 MiB (so that huge pages can back all
 * of it), with or without transparent huge pages. */
static char *map(size_t bytes, int huge)
{
	const size_t align = 2UL << 20;
	char *p = mmap(NULL, bytes + align, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *q;

	if (p == MAP_FAILED)
		die("mmap");
	q = (char *)(((uintptr_t)p + align - 1) & ~(uintptr_t)(align - 1));
	if (madvise(q, bytes, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE))
		die("madvise");
	return q;
}

static void touch(char *p, size_t bytes)
{
	for (size_t off = 0; off < bytes; off += page_size)
		p[off] = (char)off | 1;
}

/* Writes text to path through a temporary file and a rename, so that a
 * reader polling for path never sees it half written. */
static void write_ready(const char *path, const char *text)
{
	char tmp[4096];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) || rename(tmp, path))
		die(path);
}

static void hold_forever(void)
{
	for (;;)
		pause();
}

static int cmd_age(size_t mib, unsigned rounds, unsigned keep_permille, const char *ready)
{
	size_t npages = mib * 1024 * 1024 / page_size, kept = 0;
	size_t *order = malloc(npages * sizeof(*order));
	char text[256];

	if (!order)
		die("malloc");
	for (unsigned r = 0; r < rounds; r++) {
		char *p = map(npages * page_size, 0);

		touch(p, npages * page_size);
		for (size_t i = 0; i < npages; i++)
			order[i] = i;
		shuffle(order, npages);
		for (size_t i = 0; i < npages; i++) {
			if (rnd() % 1000 < keep_permille) {
				kept++;
				continue;
			}
			if (madvise(p + order[i] * page_size, page_size, MADV_DONTNEED))
				die("madvise(MADV_DONTNEED)");
		}
	}
	free(order);
	snprintf(text, sizeof(text), "aged rounds=%u mib=%zu kept_pages=%zu\n", rounds, mib, kept);
	write_ready(ready, text);
	hold_forever();
	return 0;
}

/* Reads all of an open file into buf (cap bytes); returns the length. */
static size_t slurp(int fd, const char *what, char *buf, size_t cap)
{
	size_t len = 0;
	ssize_t r;

	while ((r = read(fd, buf + len, cap - len)) > 0) {
		len += (size_t)r;
		if (len == cap) {
			fprintf(stderr, "zstest: %s is larger than %zu bytes\n", what, cap);
			exit(3);
		}
	}
	if (r < 0)
		die(what);
	return len;
}

/* The whole of a seq_file again, from its start. */
static size_t reread(int fd, const char *what, char *buf, size_t cap)
{
	if (lseek(fd, 0, SEEK_SET) != 0)
		die(what);
	return slurp(fd, what, buf, cap);
}

static void spill(const char *dir, const char *name, const void *buf, size_t len)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, buf, len) != (ssize_t)len || close(fd))
		die(path);
}

/* The highest pfn of node 0 plus one, from /proc/zoneinfo. */
static uint64_t end_pfn(void)
{
	FILE *f = fopen("/proc/zoneinfo", "r");
	char line[512];
	uint64_t start = 0, spanned = 0, end = 0;

	if (!f)
		die("/proc/zoneinfo");
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, " spanned %lu", &spanned) == 1)
			continue;
		if (sscanf(line, " start_pfn: %lu", &start) == 1 && start + spanned > end)
			end = start + spanned;
	}
	fclose(f);
	return end;
}

struct measure_opts {
	const char *sortfile, *dumpdir, *conflicts, *occupied;
	uint64_t occ_first, occ_count, range_first, range_count;
	int thp, cpu, range;
};

/* Slot s lies in FIRST .. FIRST+COUNT-1, mod slots. */
static int in_slots(uint64_t s, uint64_t first, uint64_t count, uint64_t slots)
{
	return (s + slots - first % slots) % slots < count;
}

/* Writes the bitmap of slots first .. first+count-1 (mod slots) to path,
 * bytes of it (more: zeros after it), looping over short writes. 0, or
 * the errno of the failing write with *at its offset. */
static int write_occupied(const char *path, uint64_t slots, uint64_t first, uint64_t count,
			  size_t bytes, size_t *at)
{
	size_t size = (slots + 7) / 8, total = bytes > size ? bytes : size;
	unsigned char *bits = calloc(total, 1);
	int fd = open(path, O_WRONLY), e = 0;

	*at = 0;
	if (!bits || fd < 0)
		die(path);
	for (uint64_t s = 0; s < slots; s++)
		if (in_slots(s, first, count, slots))
			bits[s / 8] |= (unsigned char)(1u << (s % 8));
	while (*at < bytes) {
		ssize_t n = write(fd, bits + *at, bytes - *at);

		if (n <= 0) {
			e = n < 0 ? errno : EIO;
			break;
		}
		*at += (size_t)n;
	}
	close(fd);
	free(bits);
	return e;
}

static int cmd_measure(size_t bytes, uint64_t slots, unsigned ways, const struct measure_opts *o)
{
	enum { DUMP_CAP = 16 << 20, PTI_CAP = 1 << 20, EST_CAP = 1 << 16, DUMP_TRIES = 5 };
	size_t npages = bytes / page_size, conflicted = 0, distinct = 0, huge = 0;
	uint32_t *count = malloc(slots * sizeof(*count));
	uint64_t *pm = malloc(npages * sizeof(*pm)), kpf_len = 0;
	char *dump = NULL, *pti = NULL, *pti_again = NULL, *kpf = NULL, est[EST_CAP], *half;
	size_t dump_len = 0, pti_len = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY), cpu = -1, dump_fd = -1, pti_fd = -1, kpf_fd = -1;
	int est_fd = -1, dump_tries = 0;
	long est_ppm = -1;
	char *p;

	if (!count || !pm || fd < 0)
		die("measure set-up");
	/* Every page this process writes later is faulted in now, before
	 * the sort and the dump. */
	touch((char *)count, slots * sizeof(*count));
	memset(count, 0, slots * sizeof(*count));
	touch((char *)pm, npages * sizeof(*pm));
	if (o->cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(o->cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set))
			die("sched_setaffinity");
	}
	if (o->dumpdir) {
		kpf_len = end_pfn() * 8;
		dump = malloc(DUMP_CAP);
		pti = malloc(PTI_CAP);
		pti_again = malloc(PTI_CAP);
		kpf = malloc(kpf_len);
		if (!dump || !pti || !pti_again || !kpf)
			die("malloc");
		/* not memset(0): the compiler may turn malloc + memset(0)
		 * into calloc, which leaves fresh pages untouched */
		touch(dump, DUMP_CAP);
		touch(pti, PTI_CAP);
		touch(pti_again, PTI_CAP);
		touch(kpf, kpf_len);
	}
	p = map(npages * page_size, o->thp);
	if (o->occupied) {
		size_t at;
		int e = write_occupied(o->occupied, slots, o->occ_first, o->occ_count,
				       (slots + 7) / 8, &at);

		if (e) {
			fprintf(stderr, "zstest: %s: %s at byte %zu\n", o->occupied, strerror(e), at);
			return 3;
		}
	}
	if (o->sortfile) {
		int sfd = open(o->sortfile, O_WRONLY);

		if (sfd < 0 || write(sfd, "0", 1) != 1)
			die(o->sortfile);
		close(sfd);
	}
	/* The files stay open until the allocation is measured: closing
	 * them frees the kernel's buffers for them, pages that would join
	 * the free lists after the dump and before the allocation. */
	if (o->dumpdir) {
		ssize_t got;
		size_t again_len;

		pti_fd = open("/proc/pagetypeinfo", O_RDONLY);
		kpf_fd = open("/proc/kpageflags", O_RDONLY);
		if (pti_fd < 0 || kpf_fd < 0)
			die("open of pagetypeinfo or kpageflags");
		/* The dump is the lists at its open(), pagetypeinfo is read
		 * right after it: an allocation or free in between (by
		 * kcompactd, khugepaged, a timer) makes the two disagree for
		 * reasons that are not the dump's. Such work comes in bursts,
		 * so pagetypeinfo is read a second time: while it changed
		 * between the two reads, the dump is taken again, at most
		 * DUMP_TRIES times. (The dump's own open allocates, so a
		 * read before it is no measure of quiet.) */
		reread(pti_fd, "pagetypeinfo", pti, PTI_CAP); /* its buffer, now */
		for (dump_tries = 1;; dump_tries++) {
			dump_fd = open("/sys/kernel/debug/zonesort/freelists", O_RDONLY);
			if (dump_fd < 0)
				die("open of the free-list dump");
			pti_len = reread(pti_fd, "pagetypeinfo", pti, PTI_CAP);
			again_len = reread(pti_fd, "pagetypeinfo", pti_again, PTI_CAP);
			if ((again_len == pti_len && !memcmp(pti_again, pti, pti_len)) ||
			    dump_tries == DUMP_TRIES)
				break;
			close(dump_fd);
		}
		dump_len = slurp(dump_fd, "freelists", dump, DUMP_CAP);
		if ((got = pread(kpf_fd, kpf, kpf_len, 0)) <= 0)
			die("/proc/kpageflags");
		kpf_len = (uint64_t)got;
	}
	/* The module's estimate for the lists as they are now, node 0. */
	if (o->conflicts) {
		size_t n;

		est_fd = open(o->conflicts, O_RDONLY);
		if (est_fd < 0)
			die(o->conflicts);
		n = slurp(est_fd, o->conflicts, est, EST_CAP - 1);
		est[n] = 0;
		est_ppm = strtol(est, &half, 10);
		if (half == est || (*half && *half != '\n'))
			die("the conflicts file holds no number");
	}
	cpu = sched_getcpu();
	touch(p, npages * page_size);
	if (pread(fd, pm, npages * sizeof(*pm), (off_t)((uintptr_t)p / page_size * sizeof(*pm))) !=
	    (ssize_t)(npages * sizeof(*pm)))
		die("pagemap read");
	for (size_t i = 0; i < npages; i++) {
		uint64_t pfn = pm[i] & ((1ULL << 55) - 1);

		if (!(pm[i] >> 63) || !pfn) {
			fprintf(stderr, "zstest: page %zu not present or no PFN (not root?)\n", i);
			return 3;
		}
		pm[i] = pfn;
		count[pfn % slots]++;
	}
	for (size_t i = 0; i + 512 <= npages; i += 512) {
		size_t k = 1;

		while (k < 512 && pm[i + k] == pm[i] + k)
			k++;
		if (k == 512 && pm[i] % 512 == 0)
			huge += 512;
	}
	for (uint64_t s = 0; s < slots; s++) {
		if (count[s])
			distinct++;
		if (count[s] > ways)
			conflicted += count[s];
	}
	size_t in_range = 0;

	for (size_t i = 0; o->range && i < npages; i++)
		in_range += (size_t)in_slots(pm[i] % slots, o->range_first, o->range_count, slots);
	if (est_fd >= 0)
		close(est_fd);
	if (o->dumpdir) {
		close(dump_fd);
		close(pti_fd);
		close(kpf_fd);
		spill(o->dumpdir, "freelists", dump, dump_len);
		spill(o->dumpdir, "pagetypeinfo", pti, pti_len);
		spill(o->dumpdir, "kpageflags", kpf, kpf_len);
		spill(o->dumpdir, "pfns", pm, npages * sizeof(*pm));
	}
	printf("conflict=%.6f pages=%zu slots_used=%zu huge=%.4f cpu=%d",
	       (double)conflicted / npages, npages, distinct, (double)huge / npages, cpu);
	if (est_ppm >= 0)
		printf(" est_half_ppm=%ld", est_ppm);
	if (dump_tries)
		printf(" dump_tries=%d", dump_tries);
	if (o->range)
		printf(" in_range=%zu", in_range);
	printf("\n");
	return 0;
}

/*
 * Pages an allocation of the kernel on node 0 (GFP_KERNEL: the highest
 * zone below ZONE_MOVABLE, falling back to lower ones) can still take
 * before it hits a min watermark: the sum over those zones of free - min
 * - the zone's reserve against allocations of that class ("protection").
 */
static long headroom(void)
{
	FILE *f = fopen("/proc/zoneinfo", "r");
	char line[512], name[32];
	long freep[8], minp[8], prot[8][8], present[8];
	int nz = -1, node = -1, top = 0;
	long h = 0;

	if (!f)
		die("/proc/zoneinfo");
	while (fgets(line, sizeof(line), f)) {
		int n;
		long v[8];

		if (sscanf(line, "Node %d, zone %31s", &n, name) == 2) {
			if (n != 0 || !strcmp(name, "Movable") || !strcmp(name, "Device") || nz == 7) {
				node = -1;
				continue;
			}
			node = 0;
			nz++;
			freep[nz] = minp[nz] = present[nz] = 0;
			memset(prot[nz], 0, sizeof(prot[nz]));
			continue;
		}
		if (node != 0)
			continue;
		if (sscanf(line, " pages free %ld", &v[0]) == 1)
			freep[nz] = v[0];
		else if (sscanf(line, " min %ld", &v[0]) == 1)
			minp[nz] = v[0];
		else if (sscanf(line, " present %ld", &v[0]) == 1)
			present[nz] = v[0];
		else if (sscanf(line, " protection: (%ld, %ld, %ld, %ld, %ld", &v[0], &v[1], &v[2], &v[3],
				&v[4]) == 5)
			memcpy(prot[nz], v, 5 * sizeof(long));
	}
	fclose(f);
	for (int z = 0; z <= nz; z++)
		if (present[z])
			top = z;
	for (int z = 0; z <= top; z++) {
		long room = freep[z] - minp[z] - prot[z][top];

		if (room > 0)
			h += room;
	}
	return h;
}

/* Frees BYTES of this process's memory in one go, on this CPU: its
 * per-CPU list fills up to its high mark. */
static int cmd_burst(size_t bytes)
{
	char *p = map(bytes, 0);

	touch(p, bytes);
	if (madvise(p, bytes, MADV_DONTNEED))
		die("madvise(MADV_DONTNEED)");
	return 0;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int cmd_hog(double seconds, size_t mib, uint64_t seed)
{
	enum { SLOTS = 8 };
	char *p[SLOTS] = { 0 };
	size_t len[SLOTS] = { 0 };
	double end = now() + seconds;
	unsigned long cycles = 0;

	rng_state ^= seed * 0x9E3779B97F4A7C15ULL;
	while (now() < end) {
		unsigned s = rnd() % SLOTS;

		if (p[s]) {
			/* Free part of it at random first, then the rest. */
			for (size_t off = 0; off < len[s]; off += page_size)
				if (rnd() % 4 == 0)
					madvise(p[s] + off, page_size, MADV_DONTNEED);
			munmap(p[s], len[s]);
			p[s] = NULL;
		}
		len[s] = (1 + rnd() % (mib * 1024 * 1024 / SLOTS / page_size)) * page_size;
		p[s] = mmap(NULL, len[s], PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p[s] == MAP_FAILED)
			die("mmap");
		madvise(p[s], len[s], rnd() % 2 ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
		touch(p[s], len[s]);
		cycles++;
	}
	printf("hog cycles=%lu\n", cycles);
	return 0;
}

static const char *errname(int e)
{
	switch (e) {
	case EINVAL: return "EINVAL";
	case EBUSY: return "EBUSY";
	case ENODEV: return "ENODEV";
	case EDOM: return "EDOM";
	case EINTR: return "EINTR";
	case ENOMEM: return "ENOMEM";
	case EPERM: return "EPERM";
	case EACCES: return "EACCES";
	case ERANGE: return "ERANGE";
	}
	return strerror(e);
}

/* One write of text to path: 0, or the errno; -1 when path cannot be
 * opened. */
static int write_once(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY), e = 0;

	if (fd < 0)
		return -1;
	if (write(fd, text, strlen(text)) < 0)
		e = errno;
	close(fd);
	return e;
}

/* oom_kill of /proc/vmstat through fd (kept open, so that reading it
 * again needs no new buffer). */
static long oom_kills(int fd)
{
	static char buf[1 << 15];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	char *p;

	if (n <= 0)
		die("/proc/vmstat");
	buf[n] = 0;
	p = strstr(buf, "\noom_kill ");
	return p ? strtol(p + 10, NULL, 10) : -1;
}

/*
 * Takes memory until an allocation of the kernel on node 0 has fewer than
 * margin pages left above the min watermarks, then, in this one process
 * (a fork would itself need memory), writes "0" to sortfile and value to
 * paramfile, and gives the memory back. Prints the pages taken, the
 * headroom left, each write's result and how many times the OOM killer
 * ran meanwhile.
 */
static int cmd_pressed(long margin, const char *sortfile, const char *paramfile, const char *value)
{
	size_t chunk = 16 * page_size, pages = 0;
	int vm = open("/proc/vmstat", O_RDONLY), sort_e, param_e;
	long h, before, after;
	char *maps[4096];
	size_t lens[4096], nmaps = 0;

	if (vm < 0)
		die("/proc/vmstat");
	before = oom_kills(vm);
	while ((h = headroom()) > margin && nmaps < 4096) {
		size_t step = h - margin > 4096 ? (size_t)(h - margin - 2048) * page_size : chunk;
		char *p = mmap(NULL, step, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			die("mmap");
		madvise(p, step, MADV_NOHUGEPAGE);
		touch(p, step);
		maps[nmaps] = p;
		lens[nmaps++] = step;
		pages += step / page_size;
	}
	sort_e = write_once(sortfile, "0");
	param_e = write_once(paramfile, value);
	after = oom_kills(vm);
	while (nmaps--)
		munmap(maps[nmaps], lens[nmaps]);
	if (sort_e < 0 || param_e < 0)
		die("open of the sort or parameter file");
	printf("pages=%zu headroom=%ld sort=%s param=%s oom_kills=%ld\n", pages, h,
	       sort_e ? errname(sort_e) : "ok", param_e ? errname(param_e) : "ok", after - before);
	return 0;
}

static int cmd_occupied(const char *path, uint64_t slots, uint64_t first, uint64_t count,
			long bytes)
{
	size_t at, n = bytes < 0 ? (slots + 7) / 8 : (size_t)bytes;
	int e;

	if (!slots) {
		fprintf(stderr, "zstest: occupied: SLOTS must be at least 1\n");
		return 2;
	}
	e = write_occupied(path, slots, first, count, n, &at);
	if (e)
		printf("%s at=%zu\n", errname(e), at);
	else
		printf("ok bytes=%zu\n", at);
	return 0;
}

static int cmd_pwrite(const char *path, uint64_t off, size_t count)
{
	char *zeros = calloc(count ? count : 1, 1);
	int fd = open(path, O_WRONLY);

	if (!zeros || fd < 0) {
		printf("open failed: %s\n", errname(errno));
		return 1;
	}
	printf("%s\n", pwrite(fd, zeros, count, (off_t)off) < 0 ? errname(errno) : "ok");
	close(fd);
	free(zeros);
	return 0;
}

static int cmd_write(const char *path, const char *text)
{
	int e = write_once(path, text);

	if (e < 0) {
		printf("open failed: %s\n", errname(errno));
		return 1;
	}
	printf("%s\n", e ? errname(e) : "ok");
	return 0;
}

static int cmd_read(const char *path)
{
	char buf[4096];
	ssize_t n;
	int fd = open(path, O_RDONLY);

	if (fd < 0) {
		printf("open failed: %s\n", errname(errno));
		return 1;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	if (n < 0)
		printf("%s\n", errname(errno));
	else
		printf("%.*s", (int)n, buf);
	close(fd);
	return 0;
}

static int cmd_writes(const char *path, const char *text, unsigned long count)
{
	unsigned long ok = 0, busy = 0, other = 0;

	for (unsigned long i = 0; i < count; i++) {
		int e = write_once(path, text);

		if (e < 0)
			die(path);
		if (!e)
			ok++;
		else if (e == EBUSY)
			busy++;
		else
			other++;
	}
	printf("ok=%lu EBUSY=%lu other=%lu\n", ok, busy, other);
	return 0;
}

static int cmd_readloop(const char *path, double seconds)
{
	static char buf[1 << 16];
	double end = now() + seconds;
	unsigned long reads = 0, errors = 0;

	while (now() < end) {
		int fd = open(path, O_RDONLY);

		if (fd < 0 || read(fd, buf, sizeof(buf)) < 0)
			errors++;
		else
			reads++;
		if (fd >= 0)
			close(fd);
	}
	printf("reads=%lu errors=%lu\n", reads, errors);
	return 0;
}

/* Pages /proc/kpageflags marks with flag bit `bit` (23: KPF_OFFLINE,
 * balloon pages and memory a virtio-mem device has unplugged). */
static int cmd_kpageflags(unsigned bit)
{
	static uint64_t buf[1 << 16];
	unsigned long long n = 0;
	ssize_t r;
	int fd = open("/proc/kpageflags", O_RDONLY);

	if (fd < 0)
		die("/proc/kpageflags");
	while ((r = read(fd, buf, sizeof(buf))) > 0)
		for (size_t i = 0; i < (size_t)r / sizeof(*buf); i++)
			n += (buf[i] >> bit) & 1;
	if (r < 0)
		die("read /proc/kpageflags");
	close(fd);
	printf("%llu\n", n);
	return 0;
}

struct flagcount {
	uint64_t flags;
	unsigned long long pages, first;
};

static int flagcount_cmp(const void *a, const void *b)
{
	const struct flagcount *x = a, *y = b;

	return x->pages < y->pages ? 1 : x->pages > y->pages ? -1 : 0;
}

static int cmd_flags(unsigned long long pfn, unsigned long long count)
{
	static struct flagcount seen[256];
	size_t nseen = 0;
	int fd = open("/proc/kpageflags", O_RDONLY);

	if (fd < 0)
		die("/proc/kpageflags");
	for (unsigned long long i = 0; i < count; i++) {
		uint64_t w;
		size_t k;

		if (pread(fd, &w, sizeof(w), (off_t)((pfn + i) * sizeof(w))) != sizeof(w))
			die("read /proc/kpageflags");
		for (k = 0; k < nseen && seen[k].flags != w; k++)
			;
		if (k == nseen) {
			if (nseen == sizeof(seen) / sizeof(*seen))
				continue;	/* more kinds than lines worth printing */
			seen[nseen++] = (struct flagcount){ .flags = w, .first = pfn + i };
		}
		seen[k].pages++;
	}
	close(fd);
	qsort(seen, nseen, sizeof(*seen), flagcount_cmp);
	for (size_t k = 0; k < nseen; k++)
		printf("%llx %llu %llx\n", (unsigned long long)seen[k].flags, seen[k].pages, seen[k].first);
	return 0;
}

static unsigned long long num(const char *s)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 0);

	if (!*s || *end) {
		fprintf(stderr, "zstest: '%s' is not a number\n", s);
		exit(2);
	}
	return v;
}

static int usage(void)
{
	fprintf(stderr,
		"usage: zstest age MIB ROUNDS KEEP_PERMILLE READYFILE\n"
		"       zstest measure BYTES SLOTS WAYS [--sort FILE] [--dump DIR] [--conflicts FILE] [--thp] [--cpu N]\n"
		"                      [--occupied FILE FIRST COUNT] [--range FIRST COUNT]\n"
		"       zstest occupied PATH SLOTS FIRST COUNT [BYTES] | pwrite PATH OFFSET COUNT\n"
		"       zstest pressed MARGIN_PAGES SORTFILE PARAMFILE VALUE | burst BYTES | hog SECONDS MIB SEED\n"
		"       zstest write PATH TEXT | read PATH | writes PATH TEXT COUNT | readloop PATH SECONDS\n"
		"       zstest kpageflags BIT   (pages with that /proc/kpageflags bit)\n"
		"       zstest flags PFN COUNT  (the kpageflags words of a range, counted)\n");
	return 2;
}

int main(int argc, char **argv)
{
	page_size = (size_t)sysconf(_SC_PAGESIZE);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 6 && !strcmp(argv[1], "age"))
		return cmd_age(num(argv[2]), (unsigned)num(argv[3]), (unsigned)num(argv[4]), argv[5]);
	if (argc >= 5 && !strcmp(argv[1], "measure")) {
		struct measure_opts o = { .cpu = -1 };

		for (int i = 5; i < argc; i++) {
			if (!strcmp(argv[i], "--sort") && i + 1 < argc)
				o.sortfile = argv[++i];
			else if (!strcmp(argv[i], "--dump") && i + 1 < argc)
				o.dumpdir = argv[++i];
			else if (!strcmp(argv[i], "--conflicts") && i + 1 < argc)
				o.conflicts = argv[++i];
			else if (!strcmp(argv[i], "--cpu") && i + 1 < argc)
				o.cpu = (int)num(argv[++i]);
			else if (!strcmp(argv[i], "--thp"))
				o.thp = 1;
			else if (!strcmp(argv[i], "--occupied") && i + 3 < argc) {
				o.occupied = argv[++i];
				o.occ_first = num(argv[++i]);
				o.occ_count = num(argv[++i]);
			} else if (!strcmp(argv[i], "--range") && i + 2 < argc) {
				o.range = 1;
				o.range_first = num(argv[++i]);
				o.range_count = num(argv[++i]);
			}
			else
				return usage();
		}
		return cmd_measure(num(argv[2]), num(argv[3]), (unsigned)num(argv[4]), &o);
	}
	if (argc == 6 && !strcmp(argv[1], "pressed"))
		return cmd_pressed((long)num(argv[2]), argv[3], argv[4], argv[5]);
	if (argc == 3 && !strcmp(argv[1], "burst"))
		return cmd_burst(num(argv[2]));
	if (argc == 5 && !strcmp(argv[1], "hog"))
		return cmd_hog((double)num(argv[2]), num(argv[3]), num(argv[4]));
	if (argc == 4 && !strcmp(argv[1], "write"))
		return cmd_write(argv[2], argv[3]);
	if ((argc == 6 || argc == 7) && !strcmp(argv[1], "occupied"))
		return cmd_occupied(argv[2], num(argv[3]), num(argv[4]), num(argv[5]),
				    argc == 7 ? (long)num(argv[6]) : -1);
	if (argc == 5 && !strcmp(argv[1], "pwrite"))
		return cmd_pwrite(argv[2], num(argv[3]), num(argv[4]));
	if (argc == 3 && !strcmp(argv[1], "read"))
		return cmd_read(argv[2]);
	if (argc == 5 && !strcmp(argv[1], "writes"))
		return cmd_writes(argv[2], argv[3], num(argv[4]));
	if (argc == 4 && !strcmp(argv[1], "readloop"))
		return cmd_readloop(argv[2], (double)num(argv[3]));
	if (argc == 4 && !strcmp(argv[1], "flags"))
		return cmd_flags(num(argv[2]), num(argv[3]));
	if (argc == 3 && !strcmp(argv[1], "kpageflags"))
		return cmd_kpageflags((unsigned)num(argv[2]));
	return usage();
}
