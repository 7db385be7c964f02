#!/bin/bash
# A periodic sort waits for a quiet moment: while a task of the step
# faults in memory (the node allocating more than 1/512 of its memory, or
# the step's tasks growing by more than 256 KiB resident, in either of the
# last two half seconds) or memory is freed in bulk (the node freeing as
# much), the helper holds its due sort back,
# since a sort in the middle of an allocation hands the rest of it pages
# that collide with the first part, and pages freed after a sort land in
# front of its lists; it sorts again once memory is quiet, and an
# allocation that never ends holds it back at most max(period, 10 s).
# needs: a quiet host (it times the helper's sorts, which wait for the node's memory to be quiet)
set -u
source "$(dirname "$0")/../../testbed/tap.sh"
source "$(dirname "$0")/../../testbed/env.sh"
source "$(dirname "$0")/../../testbed/cluster.sh"
source "$(dirname "$0")/../../testbed/sortcount.sh"
need srun python3
need_file "$ZS_PLUGIN" "SPANK plugin"
need_file "$ZS_ZONESORT" "zonesort command"

sortcount_cluster zs-t22 min_period=1

# Allocation rate: three times the helper's threshold for the node,
# computed here from MemTotal (1/512 of it per 0.5 s), in 4 MiB chunks held
# to the end. The slow rate is a tenth of that threshold (at least 8 MiB/s,
# 16 times the 256 KiB per half second the step may grow), in 1 MiB chunks.
total_kb=$(awk '/^MemTotal:/ { print $2 }' /proc/meminfo)
rate_mib=$((total_kb / 1024 / 512 * 2 * 3))
[ "$rate_mib" -ge 8 ] || rate_mib=8
slow_mib=$((total_kb / 1024 / 512 * 2 / 10))
[ "$slow_mib" -ge 8 ] || slow_mib=8
diag "allocating at $rate_mib MiB/s, slowly at $slow_mib MiB/s (MemTotal $((total_kb / 1024)) MiB)"
# alloc.py MODE RATE SECONDS OUT: "alloc" takes RATE MiB/s for SECONDS s
# and holds it to the end; "free" takes RATE*SECONDS MiB at once, marks
# the start, then frees it at RATE MiB/s. OUT.start and OUT.end bracket
# the paced part.
cat > "$work/alloc.py" <<'PY'
import mmap, sys, time
mode, rate, seconds, out = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
chunk_mib = 4 if mode == "alloc" and rate >= 32 else 1
chunk = chunk_mib << 20

def take():
    # An anonymous mapping, written so its pages are really taken from the
    # free lists; close() unmaps it, a free at once.
    m = mmap.mmap(-1, chunk)
    m.write(b"\x01" * chunk)
    return m

held = []
if mode == "free":
    held = [take() for _ in range(int(rate * seconds / chunk_mib))]
start = time.time()
open(out + ".start", "w").write("%.3f\n" % start)
done = 0
while time.time() - start < seconds and (mode == "alloc" or held):
    if mode == "alloc":
        held.append(take())
    else:
        held.pop().close()
    done += 1
    ahead = done * chunk_mib / rate - (time.time() - start)
    if ahead > 0:
        time.sleep(ahead)
open(out + ".end", "w").write("%.3f\n" % time.time())
PY

plus() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a + b }'; }
# sorts_between A B: sorts recorded strictly between times A and B.
sorts_between() { awk -v a="$1" -v b="$2" '$1 > a && $1 < b' "$work/times" | grep -c .; }

# alloc_step BEFORE SECONDS AFTER TAG [MODE RATE]: a step with a 1-second
# period whose task sleeps BEFORE s, allocates (or frees) for SECONDS s,
# sleeps AFTER s; sets s and e to the allocation's start and end and
# records the node's sorts.
alloc_step() {
	sortcount_reset
	srun --zonesort=1 -n1 sh -c "sleep $1; nice -n -10 python3 $work/alloc.py ${5:-alloc} ${6:-$rate_mib} $2 $work/$4; sleep $3" \
		> "$work/out-$4" 2>&1
	is "$?" 0 "the step with a $2-second allocation ran"
	sortcount_times "$ZS_NODE" > "$work/times"
	s=$(cat "$work/$4.start" 2> /dev/null) e=$(cat "$work/$4.end" 2> /dev/null)
	ok "the allocation ran (from $s to $e)" test -n "$s" -a -n "$e"
	diag "sorts at: $(tr '\n' ' ' < "$work/times")"
}

alloc_step 3 4 3 a
cmp_ok "$(sorts_between 0 "$s")" -ge 1 "the helper sorted before the allocation"
# Unheld, a 1-second period sorts about 3 times in there; a stall of the
# allocating task on a loaded machine may let one through.
n=$(sorts_between "$(plus "$s" 0.6)" "$e")
cmp_ok "$n" -le 1 "at most one sort began during the allocation, after its first 0.6 s ($n)"
# The task's exit frees what it took, a moment after its end: the helper
# waits for that too.
cmp_ok "$(sorts_between "$e" "$(plus "$e" 2.1)")" -ge 1 "a sort followed within 2.1 s of its end"

# An allocation too slow to move free memory past the node's threshold is
# seen in the step's resident memory.
alloc_step 3 4 3 slow alloc "$slow_mib"
n=$(sorts_between "$(plus "$s" 0.6)" "$e")
cmp_ok "$n" -le 1 "at most one sort began during a slow allocation ($slow_mib MiB/s), after its first 0.6 s ($n)"
cmp_ok "$(sorts_between "$e" "$(plus "$e" 2.1)")" -ge 1 "a sort followed within 2.1 s of its end"

# Memory freed in bulk (the task takes it first, then frees it over 4 s)
# holds the sort back as an allocation does.
alloc_step 3 4 3 free free "$rate_mib"
n=$(sorts_between "$(plus "$s" 0.6)" "$e")
cmp_ok "$n" -le 1 "at most one sort began while memory was freed in bulk, after its first 0.6 s ($n)"
cmp_ok "$(sorts_between "$e" "$(plus "$e" 2.1)")" -ge 1 "a sort followed within 2.1 s of its end"

# An allocation longer than the bound: the due sort is held back at most
# 10 s.
alloc_step 2 14 0 b
n=$(sorts_between "$(plus "$s" 0.6)" "$e")
cmp_ok "$n" -ge 1 "an allocation that goes on is still sorted during it ($n sorts)"
# Gaps between sorts from the start of the allocation to its end: held
# back (a long gap) and bounded (none much past 10 s plus the period).
gaps=$( (echo "$s"; awk -v a="$s" -v b="$e" '$1 > a && $1 < b' "$work/times"; echo "$e") |
	awk 'NR > 1 { printf "%.2f ", $1 - p } { p = $1 }')
diag "seconds between sorts during the allocation: $gaps"
longest=$(tr ' ' '\n' <<< "$gaps" | sort -g | tail -1)
num_ok "... held back for a long stretch (longest gap ${longest:-none} s >= 4)" "${longest:-0} >= 4"
num_ok "... but never much past 10 s (longest gap ${longest:-none} s <= 12.5)" "${longest:-99} <= 12.5"
done_testing
