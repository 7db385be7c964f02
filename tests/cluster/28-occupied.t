#!/bin/bash
# occupied_slots=yes (the default): before each of its sorts, a step's
# periodic helper reads which cache slots the step's own pages occupy
# and writes them to the module's node0/occupied, so that the step's next
# allocations go to other slots (kmod/zonesort_abi.h; the module's side
# is tested in QEMU, testbed/guest-main.sh). Here the module's files are
# stand-ins of interface 3 beside the counting nodeid of
# testbed/sortcount.sh, and node0/occupied a plain file that keeps what
# the helper wrote. The job (testbed/programs/nodejob.c, written apart
# from the project) holds a buffer and writes its frames from its own
# pagemap: each of their slots (frame mod 16384, the stand-in 64 MiB
# cache) must be set in what the helper wrote. A step as large as the
# cache's eighth, and occupied_slots=no, get none; a write that fails or does not
# end is said and costs the sort nothing but its bound.
# needs: a quiet host (it times the helper's sorts, which wait for the node's memory to be quiet)
set -u
source "$(dirname "$0")/../../testbed/tap.sh"
source "$(dirname "$0")/../../testbed/env.sh"
source "$(dirname "$0")/../../testbed/cluster.sh"
source "$(dirname "$0")/../../testbed/sortcount.sh"
need srun gcc python3
need_file "$ZS_PLUGIN" "SPANK plugin"
need_file "$ZS_ZONESORT" "zonesort command"

sortcount_cluster zs-t28 min_period=1
nodejob=$work/nodejob
ok "the job program builds" gcc -std=gnu11 -O2 -Wall -Wextra -o "$nodejob" \
	"$ZS_SRCDIR/testbed/programs/nodejob.c" -lm || { done_testing; exit 1; }
SYSFS=$(_sortcount_path "$ZS_NODE" "$SC_SYSFS")
OCC=$SYSFS/node0/occupied

# The files of interface 3 as a sort that left nothing colliding leaves
# them (no compaction follows), and an empty node0/occupied.
stand_in() {
	mkdir -p "$SYSFS/quarantine" "$SYSFS/node0" &&
		echo 3 > "$SYSFS/interface_version" &&
		printf 'sorts=7\nlast_conflict_ppm_after=0\n' > "$SYSFS/stats" &&
		printf 'last_node=0\nlast_short_pages=0\n' > "$SYSFS/quarantine/stats" &&
		echo 1 > "$SYSFS/quarantine/enabled" &&
		echo 500 > "$SYSFS/quarantine/max_permille" &&
		: > "$OCC"
}
ok "stand-in module files written" stand_in

# hold TAG MIB [srun options]: a job with --zonesort=2 that maps MIB of
# fresh memory, writes its frames to $work/TAG/pfns.1 and holds it until
# $work/TAG/release.1; returns once the frames are written.
hold() {
	local tag=$1 mib=$2 d=$work/$1
	shift 2
	mkdir -p "$d" && touch "$d/go.1" "$d/keep-pfns"
	srun -w "$ZS_NODE" -J "occ-$tag" "$@" sh -c 'echo $SLURM_JOB_ID > '"$d"'/job; exec "$0" "$@"' \
		"$nodejob" hold "$d" $((mib << 20)) $((64 << 20)) 1 1 120 > "$d/out" 2> "$d/err" &
	echo $! > "$d/srun"
	for _ in $(seq 300); do
		[ -s "$d/res.1" ] && return 0
		kill -0 "$(cat "$d/srun")" 2>/dev/null || break
		sleep 0.1
	done
	sed 's/^/# /' "$d/err"
	return 1
}
# release TAG: ends the job and waits for it.
release() {
	touch "$work/$1/release.1"
	wait "$(cat "$work/$1/srun")"
	cluster_wait_job_gone "$(cat "$work/$1/job")" 30
}
# wait_sort: the helper's next sort (a count of the nodeid stand-in). A
# due sort waits for a quiet node up to 10 s on a busy host; the bitmap is
# written right before the sort's nodeid.
wait_sort() {
	local before
	before=$(sortcount_node "$ZS_NODE")
	for _ in $(seq 300); do
		[ "$(sortcount_node "$ZS_NODE")" -gt "$before" ] && return 0
		sleep 0.1
	done
	return 1
}
# covered TAG: the buffer's slots (frame mod 16384) missing from the
# bitmap in node0/occupied, and the bitmap's size and set bits.
covered() {
	python3 - "$work/$1/pfns.1" "$OCC" <<'EOF'
import struct, sys
pfns = open(sys.argv[1], "rb").read()
bits = open(sys.argv[2], "rb").read()
slots = {struct.unpack_from("<Q", pfns, i)[0] % 16384 for i in range(0, len(pfns), 8)}
missing = [s for s in slots if len(bits) <= s // 8 or not (bits[s // 8] >> (s % 8)) & 1]
print(len(missing), len(bits), sum(bin(b).count("1") for b in bits), len(slots))
EOF
}

# A step of 2 MiB (512 pages, and its libraries) under a 64 MiB cache.
ok "a job holds 2 MiB with --zonesort=2" hold small 2 --zonesort=2
: > "$OCC"
ok "... the helper sorted again while it held it" wait_sort
read -r missing size set slots <<< "$(covered small)"
is "$size" 2048 "the bitmap has a bit for each of the 16384 slots (2048 bytes)"
is "$missing" 0 "every slot of the job's buffer is set ($slots slots; the job's own pagemap)"
num_ok "... and about as many more as the job's other pages fill ($set set, $slots of the buffer)" \
	"$set >= $slots && $set <= $slots + 2048"
release small
summaries_like "$(cat "$work/small/job")" 'step 0' '[1-9][0-9]* sorts? \([1-9][0-9]* given the step.s slots\)' \
	"the step's summary counts the sorts given the step's slots"

# A step past an eighth of the cache (8 MiB here) gets none: the
# quarantine would fill towards its maximum to keep its next
# allocation out of the step's slots.
ok "a job holds 16 MiB with --zonesort=2" hold large 16 --zonesort=2
: > "$OCC"
ok "... the helper sorted again while it held it" wait_sort
is "$(stat -c %s "$OCC")" 0 "a step larger than an eighth of the cache gets no bitmap"
release large

# occupied_slots=no in the site's line: none written.
cluster_plugstack "$SC_POLICY min_period=1 occupied_slots=no"
ok "a job holds 2 MiB with occupied_slots=no" hold off 2 --zonesort=2
: > "$OCC"
ok "... the helper sorted again while it held it" wait_sort
is "$(stat -c %s "$OCC")" 0 "occupied_slots=no: no bitmap"
release off
summaries_like "$(cat "$work/off/job")" 'step 0' '[1-9][0-9]* sorts?, ' "... its sorts said without it"

# The kernel unkind: a write that fails (node0/occupied on /dev/full),
# and one that does not end (a FIFO nobody reads: the write is stopped at
# kernel_timeout=2). Either is said in the slurmd log, and the sort goes
# on without the slots.
cluster_plugstack "$SC_POLICY min_period=1 kernel_timeout=2"
# unkind TAG WHAT REGEX COMMAND...: a job with node0/occupied made by
# COMMAND; its sorts go on, and the slurmd log says REGEX.
unkind() {
	local tag=$1 what=$2 regex=$3
	shift 3
	rm -f "$OCC"
	ok "node0/occupied $what: $*" "$@"
	ok "a job holds 2 MiB, node0/occupied $what" hold "$tag" 2 --zonesort=2
	ok "... the helper sorted all the same" wait_sort
	release "$tag"
	like "$(grep "job $(cat "$work/$tag/job") step 0: periodic helper:" "$(cluster_slurmd_log "$ZS_NODE")")" \
		"occupied slots not given: .*/node0/occupied: $regex" "... and the slurmd log says which file and how"
	rm -f "$OCC"
}
unkind full failing "No space left on device" ln -s /dev/full "$OCC"
unkind stuck "a write that never ends" "did not end within 2 s \\(kernel_timeout\\): stopped" \
	mkfifo -m 600 "$OCC"

# A bad value is refused at submit time, naming it.
cluster_plugstack "$SC_POLICY occupied_slots=maybe"
out=$(srun -w "$ZS_NODE" --zonesort=on true 2>&1)
like "$out" "occupied_slots: 'maybe' is not a yes/no value; expected yes or no" \
	"occupied_slots=maybe is refused at submit time, naming the value and what is accepted"
done_testing
