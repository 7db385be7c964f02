#!/usr/bin/python3
# Where the pages of a churn job's main buffer came from (guest side of
# bench/churn-effect --diagnose): reads what testbed/guest-churn.sh saved
# in DIR while testbed/programs/churnjob paused twice, and prints one line
# of key=value:
#
#   DIR/fl0   the module's free-list dump (debugfs zonesort/freelists) right
#             after the job's sorts, before its churn
#   DIR/fl1   the same right before the main buffer, after the churn
#   DIR/freed, DIR/kept, DIR/pfns   frames (raw 64-bit words) the churn
#             freed and kept, and the buffer's in touch order
#
# Each buffer page gets an origin, by what it was in fl0 and to the churn:
#   recycled  the churn had it and freed it
#   sorted    free in fl0's free lists, never the churn's
#   pcp0      in a per-CPU list in fl0, never the churn's
#   other     none of those: freed after fl0 by someone else (a process
#             that exited, the quarantine giving blocks back)
# and a place in fl1: pcp (a per-CPU list), head0 (the order-0 list),
# block (a block of order 1 or more), none (not free in fl1: freed after
# it). For each, pages and conflicting pages (slot = pfn mod SLOTS shared
# with another buffer page). "seq" is a page's position in fl0's hand-out
# order (per-CPU lists, then the movable lists of the zone from order 0
# up, each block in address order); lap = seq // SLOTS. For conflicting
# pages both from fl0's sequence, lap_same_offset is the share whose slot
# mates sit at the same offset within another lap (|seq - seq'| a multiple
# of SLOTS within 1/64 of it): a sorted order that repeats itself lap after
# lap puts a churn's freed pieces on each other's slots.
import collections
import struct
import sys


def lists(path):
    out = []
    with open(path) as f:
        for line in f:
            w = line.split()
            if not w or w[0] not in ("F", "P"):
                continue
            if w[0] == "F":
                node, zone, mt, order, count = int(w[1]), w[2], int(w[3]), int(w[4]), int(w[5])
                cpu, pfns = None, w[6:6 + count]
            else:
                node, zone, cpu, mt, order, count = int(w[1]), w[2], int(w[3]), int(w[4]), int(w[5]), int(w[6])
                pfns = w[7:7 + count]
            out.append((w[0], node, zone, cpu, mt, order, [int(p, 16) for p in pfns]))
    return out


def frames(path):
    with open(path, "rb") as f:
        data = f.read()
    return list(struct.unpack("<%dQ" % (len(data) // 8), data))


def where(ls):
    """pfn -> place ('pcp', 'head0', 'block') for every free page."""
    place = {}
    for kind, node, zone, cpu, mt, order, pfns in ls:
        for p in pfns:
            if kind == "P":
                place[p] = "pcp"
            else:
                for i in range(1 << order):
                    place[p + i] = "head0" if order == 0 else "block"
    return place


def sequence(ls):
    """pfn -> position in the hand-out order of node 0's movable lists."""
    zones = [l[2] for l in ls if l[0] == "F" and l[1] == 0 and l[4] == 1 and l[6]
             and l[2] not in ("Movable", "Device")]
    if not zones:
        return {}
    zone = zones[-1]
    seq, pos = {}, 0
    for kind, node, z, cpu, mt, order, pfns in ls:
        if kind == "P" and node == 0 and z == zone and mt == 1 and order == 0:
            for p in pfns:
                seq.setdefault(p, pos)
                pos += 1
    for o in range(64):
        for kind, node, z, cpu, mt, order, pfns in ls:
            if kind == "F" and node == 0 and z == zone and mt == 1 and order == o:
                for p in pfns:
                    for i in range(1 << o):
                        seq.setdefault(p + i, pos)
                        pos += 1
    return seq


def main():
    d, slots = sys.argv[1], int(sys.argv[2])
    fl0, fl1 = lists(d + "/fl0"), lists(d + "/fl1")
    freed, buf = set(frames(d + "/freed")), frames(d + "/pfns")
    kept = set(frames(d + "/kept"))
    place0, place1, seq0 = where(fl0), where(fl1), sequence(fl0)
    per_slot = collections.defaultdict(list)
    for p in buf:
        per_slot[p % slots].append(p)
    counts = collections.Counter()
    for p in buf:
        if p in freed:
            origin = "recycled"
        elif p in kept:
            origin = "kept"
        elif place0.get(p) == "pcp":
            origin = "pcp0"
        elif p in place0:
            origin = "sorted"
        else:
            origin = "other"
        at = place1.get(p, "none")
        conf = len(per_slot[p % slots]) > 1
        for key in ("origin_" + origin, "at_" + at, "origin_%s_at_%s" % (origin, at)):
            counts[key] += 1
            if conf:
                counts[key + "_conflicting"] += 1
    # Lap structure of the conflicts among pages of fl0's sequence.
    same = pairs = 0
    tol = max(1, slots // 64)
    for mates in per_slot.values():
        if len(mates) < 2:
            continue
        for p in mates:
            if p not in seq0:
                continue
            others = [q for q in mates if q != p and q in seq0]
            if not others:
                continue
            pairs += 1
            if any(abs(seq0[p] - seq0[q]) % slots <= tol or
                   slots - abs(seq0[p] - seq0[q]) % slots <= tol for q in others):
                same += 1
    laps = collections.Counter(seq0[p] // slots for p in buf if p in seq0)
    # The churn's freed pages: how many were free again, and where, in fl1.
    freed_at = collections.Counter(place1.get(p, "none") for p in freed)
    out = ["buffer=%d" % len(buf)]
    out += ["%s=%d" % kv for kv in sorted(counts.items())]
    out += ["lap_pairs=%d" % pairs, "lap_same_offset=%d" % same,
            "buffer_laps=%s" % ",".join("%d:%d" % kv for kv in sorted(laps.items())),
            "freed_pages=%d" % len(freed)]
    out += ["freed_in_fl1_%s=%d" % kv for kv in sorted(freed_at.items())]
    print(" ".join(out))


main()
