#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
# Independent computation of what "zonesort conflicts" reports, for the
# tests: reads /proc/PID/maps and /proc/PID/pagemap itself, takes the
# distinct frames of present pages that lie in a zone of /proc/zoneinfo,
# slot = frame mod (cache size / (ways * page size)), and prints JSON with
# the same keys. Needs root.
#   slots-of.py CACHE_BYTES WAYS PID...
import json, math, os, struct, sys

cache, ways = int(sys.argv[1]), int(sys.argv[2])
pids = [int(p) for p in sys.argv[3:]]
page = os.sysconf("SC_PAGE_SIZE")
nslots = cache // (ways * page)

spans = []
cur = None
for line in open("/proc/zoneinfo"):
    w = line.split()
    if line.startswith("Node"):
        cur = {}
        spans.append(cur)
    elif w[:1] == ["spanned"]:
        cur["spanned"] = int(w[1])
    elif w[:1] == ["start_pfn:"]:
        cur["start"] = int(w[1])
spans = [(z["start"], z["start"] + z["spanned"]) for z in spans if z.get("spanned")]

frames = set()
present = 0
for pid in pids:
    with open(f"/proc/{pid}/pagemap", "rb") as pm:
        for line in open(f"/proc/{pid}/maps"):
            lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
            pm.seek(lo // page * 8)
            data = pm.read((hi - lo) // page * 8)
            for (e,) in struct.iter_unpack("<Q", data):
                if e >> 63 & 1:
                    present += 1
                    pfn = e & ((1 << 55) - 1)
                    if pfn:
                        frames.add(pfn)

counts = {}
uncached = 0
for f in frames:
    if not any(a <= f < b for a, b in spans):
        uncached += 1
        continue
    s = f % nslots
    counts[s] = counts.get(s, 0) + 1
n = sum(counts.values())
conflicting = sum(c for c in counts.values() if c > ways)
excess = sum(c - ways for c in counts.values() if c > ways)

# P[Binomial(n - 1, 1/S) >= W], from the binomial terms directly.
def random_fraction(n, s, w):
    if n < 2 or n - 1 < w:
        return 0.0
    if s == 1:
        return 1.0
    N, p = n - 1, 1.0 / s
    cdf = sum(math.exp(math.lgamma(N + 1) - math.lgamma(k + 1) - math.lgamma(N - k + 1)
                       + k * math.log(p) + (N - k) * math.log1p(-p)) for k in range(w))
    return max(0.0, 1.0 - cdf)

worst = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:10]
print(json.dumps({
    "present_entries": present,
    "pages": n,
    "uncached_pages": uncached,
    "conflicting_pages": conflicting,
    "excess_pages": excess,
    "used_slots": len(counts),
    "overfull_slots": sum(1 for c in counts.values() if c > ways),
    "max_in_slot": max(counts.values()) if counts else 0,
    "random_fraction": random_fraction(n, nslots, ways),
    "worst_slots": [{"slot": s, "pages": c} for s, c in worst],
}, sort_keys=True))
