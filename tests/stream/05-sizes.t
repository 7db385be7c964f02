#!/bin/bash
# Array sizes: --size is the footprint of the three arrays together, with
# units; the smallest accepted is one cache line per array and thread; a
# size larger than the memory available is refused before anything is
# allocated; the default follows the CPU caches (this machine has no
# memory-side cache) or an assumed memory-side cache (--memcache-size).
set -u
source "$(dirname "$0")/../../testbed/tap.sh"
source "$(dirname "$0")/../../testbed/env.sh"
need jq taskset
source "$(dirname "$0")/probe.sh"
jv() { printf '%s' "$out" | jq -r "$1"; }

run "$S" --json --size 96M --repeats 1
threads=$(jv .threads)
min=$((192 * threads))

# The footprint, rounded down to whole cache lines per array.
for s in 64M:67108864 1GB:1000000000 96MiB:100663296 1.5G:1610612736 5000000:5000000 4096K:4194304; do
	run "$S" --json --size "${s%:*}" --repeats 2
	is "$rc" 0 "--size ${s%:*}: exit 0"
	bytes=${s#*:}
	is "$(jv .size_bytes)" "$((bytes / 192 * 192))" "--size ${s%:*} is $bytes bytes in total, in whole cache lines per array"
	is "$(jv .size_rule)" "--size" "--size ${s%:*}: size_rule says --size"
done

# Tiny sizes: the minimum is accepted and validated, one byte less is not.
run "$S" --json --size "$min"
is "$rc" 0 "--size $min (one cache line per array for each of $threads threads): exit 0"
is "$(jv .array_elements)" "$((8 * threads))" "8 elements per array and thread"
is "$(jv .validation)" passed "the tiny run validates"
num_ok "the tiny run reports a bandwidth" "$(jv .kernels.triad.best_gbs) > 0"
run "$S" --json --size "$((min - 1))"
is "$rc" 2 "--size $((min - 1)): exit 2"
like "$err" "^stream-triad: --size: '$((min - 1))' is below the minimum of $min bytes for $threads threads? \\(one 64-byte cache line per array and thread\\)" \
	"the refusal names the value and the minimum"
run taskset -c 0 "$S" --json --size 192
is "$rc:$(jv .threads):$(jv .array_elements)" "0:1:8" "one thread: 192 bytes (8 elements per array) is the minimum"
run taskset -c 0 "$S" --json --size 191
is "$rc" 2 "one thread: 191 bytes is refused"

# Larger than the memory available: refused at once, nothing allocated.
avail_kb=$(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo)
for s in "$((avail_kb * 1024 * 2))" 1TiB 16T; do
	start=$(date +%s.%N)
	run "$S" --json --size "$s"
	took=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
	is "$rc" 2 "--size $s (more than MemAvailable): exit 2"
	like "$err" "^stream-triad: --size: '$s' does not fit: the arrays need [0-9.]+ [KMGTP]iB but (MemAvailable|the cgroup's memory limit) is [0-9.]+ [KMGTP]iB; give a smaller size" \
		"--size $s: the message names the value and the memory available"
	num_ok "--size $s is refused before allocating ($took s)" "$took < 3"
done

# Memory that MemAvailable promises but the process cannot map (here an
# address-space limit): a failure to measure, exit 3.
run bash -c "ulimit -v 300000 && exec '$S' --json --size 512M"
is "$rc" 3 "arrays that cannot be allocated: exit 3"
like "$err" '^stream-triad: cannot measure: cannot allocate [0-9.]+ MiB for the arrays: Cannot allocate memory$' \
	"the message says what could not be allocated and why"
is "$out" "" "nothing on stdout when nothing was measured"

# The default with no memory-side cache: twelve times the data caches of
# the CPUs used (each array four times, STREAM's rule), at least 256 MiB;
# more than half of MemAvailable is cut to that half (less 8 MiB). The
# caches of CPU 0 are read by tests/stream/caches.py (sysfs, or lstopo
# where sysfs lists none).
read -r caches source < <(taskset -c 0 python3 "$(dirname "$0")/caches.py")
like "$caches" '^[1-9][0-9]*$' "the data and unified caches of CPU 0 are known ($source: $caches bytes)"
want=$((12 * caches))
[ "$want" -lt $((256 << 20)) ] && want=$((256 << 20))
half=$(($(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo) * 1024 / 2))
run taskset -c 0 "$S" --json --repeats 1
is "$rc" 0 "default size: exit 0"
if [ "$want" -le $((half - (512 << 20))) ]; then
	is "$(jv .size_rule)" caches "without a memory-side cache the default follows the CPU caches"
	num_ok "default footprint $(jv .size_bytes) is 12 x caches ($want, whole lines)" \
		"$(jv .size_bytes) <= $want && $(jv .size_bytes) > $want - 192 * 2"
else
	# Memory moves while the probe runs: within 512 MiB of the half.
	is "$(jv .size_rule)" "half of the available memory" \
		"without a memory-side cache the default follows the CPU caches, cut to half of MemAvailable (12 x caches is $want)"
	num_ok "default footprint $(jv .size_bytes) is about half of MemAvailable ($half)" \
		"$(jv .size_bytes) <= $half + (512 << 20) && $(jv .size_bytes) > $half - (512 << 20)"
fi

# A memory-side cache does not exist on this machine: --memcache-size
# stands in for one (the administrator's override). The default is then
# a quarter of it, at most 32 GiB.
run "$S" --json --memcache-size 256M
is "$rc" 0 "--memcache-size 256M: exit 0"
is "$(jv .size_rule)" "memory-side cache" "the default follows the memory-side cache"
num_ok "a quarter of a 256 MiB memory-side cache ($(jv .size_bytes))" \
	"$(jv .size_bytes) <= 67108864 && $(jv .size_bytes) > 67108864 - 192"
# The cap of 32 GiB (a quarter of a 512 GiB cache would be 128 GiB) lies
# beyond this machine's memory, where half of MemAvailable cuts any
# default first: it is not observable here.

# The time budget of the default repetitions: one thread, all four kernels
# over 1 GiB (a repetition of about 3.3 triad passes). Without -r at most
# 20 and at least 3 run; fewer than 20 only once the timed part, with one
# more average repetition, passed 2 s; and when 20 triad passes at their
# best alone would take more than 2.5 s, fewer run.
run taskset -c 0 "$S" --json --size 1G --kernels all
reps=$(jv .repeats) pass=$(jv '.size_bytes / (.kernels.triad.best_gbs * 1e9)') took=$(jv .elapsed_s)
num_ok "one thread, four kernels over 1 GiB: $reps repetitions, 3 to 20 (a triad pass $pass s at best, $took s in all)" \
	"$reps >= 3 && $reps <= 20"
num_ok "... fewer than 20 only after the budget was reached" "$reps == 20 || $took * (1 + 1 / $reps) > 2"
num_ok "... and fewer when 20 best passes exceed 2.5 s" "20 * $pass <= 2.5 || $reps < 20"
run "$S" --json --memcache-size 256M --size 64M
is "$(jv .size_bytes):$(jv .size_rule)" "$((67108864 / 192 * 192)):--size" "--size wins over the memory-side cache"
done_testing
