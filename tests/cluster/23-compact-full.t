#!/bin/bash
# A full quarantine that leaves a sort colliding makes the sorter give the
# node's held blocks back, compact the node and sort again (lib/sorter.c),
# at most once per compact_interval. Compaction migrates the running
# jobs' pages, so the site sees each one: the slurmd log names it, and the
# summary lines of the prolog and of the step count it, the periodic
# helper's own included. The module's files are stand-ins written as the
# module writes them (this machine has no memory-side cache and no
# module; the real module is tested in QEMU, tests/kmod/51-quarantine-vm.t):
# its estimate after the sort (stats) and its quarantine's figures
# (quarantine/stats and node0/quarantine_*), beside the counting nodeid
# of testbed/sortcount.sh, and a node directory whose node0/compact
# receives the compaction.
# needs: a quiet host (it times the helper's sorts, which wait for the node's memory to be quiet)
set -u
source "$(dirname "$0")/../../testbed/tap.sh"
source "$(dirname "$0")/../../testbed/env.sh"
source "$(dirname "$0")/../../testbed/cluster.sh"
source "$(dirname "$0")/../../testbed/sortcount.sh"
need srun
need_file "$ZS_PLUGIN" "SPANK plugin"
need_file "$ZS_ZONESORT" "zonesort command"

sortcount_cluster zs-t23 min_period=1
NODES=$SC_RUN/nodes
cluster_plugstack "$SC_POLICY min_period=1 node_sysfs=$NODES compact_interval=10"

# full_on NODE: the files of interface 2 (kmod/zonesort_abi.h) as a sort
# that found its quarantine full and left 5.2% colliding leaves them, and
# node0/compact emptied. node0/quarantine_release is a FIFO read as the
# module would: a release empties the quarantine, so the stand-in reads
# not short of room from then on, until full_on again; each release is
# recorded in $work/released.NODE.
full_on() {
	local sysfs nodes fd
	sysfs=$(_sortcount_path "$1" "$SC_SYSFS")
	nodes=$(_sortcount_path "$1" "$NODES")
	mkdir -p "$nodes/node0" "$sysfs/quarantine" "$sysfs/node0" &&
		echo 3 > "$sysfs/interface_version" &&
		printf 'sorts=7\nlast_conflict_ppm_after=52000\n' > "$sysfs/stats" &&
		printf 'last_node=0\nlast_short_pages=40\n' > "$sysfs/quarantine/stats" &&
		echo 1 > "$sysfs/quarantine/enabled" &&
		echo 500 > "$sysfs/quarantine/max_permille" &&
		echo 16384 > "$sysfs/node0/quarantine_held_pages" &&
		echo 900 > "$sysfs/node0/quarantine_held_blocks" &&
		echo 65536 > "$sysfs/node0/quarantine_max_pages" &&
		echo 16384 > "$sysfs/node0/quarantine_peak_pages" &&
		: > "$work/released.$1" &&
		: > "$nodes/node0/compact" || return 1
	[ -p "$sysfs/node0/quarantine_release" ] && return 0
	mkfifo -m 600 "$sysfs/node0/quarantine_release" || return 1
	exec {fd}<>"$sysfs/node0/quarantine_release"
	while IFS= read -r line; do
		echo "$line" >> "$work/released.$1"
		printf 'last_node=0\nlast_short_pages=0\n' > "$sysfs/quarantine/stats"
	done <&"$fd" &
	SC_PIDS="$SC_PIDS $!"
	exec {fd}<&-
}
# compacted NODE: what the sorter wrote to node0/compact.
compacted() { cat "$(_sortcount_path "$1" "$NODES")/node0/compact" 2>/dev/null; }

for node in "${SC_NODES[@]}"; do
	ok "$node: stand-in module files written" full_on "$node"
done

# The prolog's sort compacts; the step's sorts right after do not (the
# stand-in still reads full, but compact_interval has not passed).
out=$(srun -N "$ZS_NODES" --zonesort=on sh -c 'echo $SLURM_JOB_ID' 2>&1)
job=$(head -1 <<< "$out")
like "$job" '^[0-9]+$' "srun --zonesort=on ran (job $job)"
cluster_wait_job_gone "$job" 30
for node in "${SC_NODES[@]}"; do
	is "$(compacted "$node")" "1" "$node: the node was compacted"
	is "$(cat "$work/released.$node")" 1 \
		"$node: node 0's held blocks were given back (node0/quarantine_release) before the sort again"
	like "$(grep "zonesort: job $job: node 0 sorted:" "$(cluster_slurmd_log "$node")")" \
		'quarantine full, 5\.2% colliding: given back, node compacted, sorted again' \
		"$node: the slurmd log names the compaction and why"
done
summaries_like "$job" prolog '1 sort \(1 compacted the node for its quarantine\), 0 skipped' \
	"the prolog's summary counts the compaction"
summaries_like "$job" 'step 0' 'zonesort=on, [0-9]+ sorts?, ' "the step's sort, right after, did not compact"

# The periodic helper: the prolog compacts at once; once compact_interval
# has passed, the quarantine is full again and the helper's next sort
# (every 2 s) compacts again. Both reach the summaries.
all_compacted() { local n; for n in "${SC_NODES[@]}"; do [ "$(compacted "$n")" = 1 ] || return 1; done; }
# The last sort and compaction of the job before are forgotten.
sortcount_reset
for node in "${SC_NODES[@]}"; do
	rm -f "$(_sortcount_path "$node" "$SC_STATE")/node0.compacted"
	full_on "$node"
done
srun -N "$ZS_NODES" --zonesort=2 sh -c 'echo $SLURM_JOB_ID > '"$work"'/job; sleep 32' > /dev/null 2>&1 &
srun_pid=$!
ok "the prolog compacted every node" wait_for 10 all_compacted
sleep 10.5
for node in "${SC_NODES[@]}"; do
	ok "$node: the stand-in quarantine is full again, compact_interval later" full_on "$node"
done
ok "the periodic helper compacted every node again within 8 s" wait_for 8 all_compacted
ok "the step is still running" kill -0 "$srun_pid"
wait "$srun_pid"
is "$?" 0 "srun --zonesort=2 ended well"
job=$(cat "$work/job")
cluster_wait_job_gone "$job" 30
summaries_like "$job" prolog '1 sort \(1 compacted the node for its quarantine\), 0 skipped' \
	"the prolog's summary counts its compaction"
summaries_like "$job" 'step 0' 'zonesort=every 2 s, [0-9]+ sorts \(1 compacted the node for its quarantine\)' \
	"the step's summary counts the helper's compaction"
# A sort the helper could not keep out of an allocation (the step's task
# grows resident for 16 s, past the helper's 10 s hold) does not compact:
# compaction would migrate the pages the allocation has and hand the rest
# of it the blocks compaction made. The first sort with memory quiet, after
# the allocation, compacts. The stand-in reads "not colliding" until the
# allocation has begun, so the prolog's and the step's own sorts do not
# compact.
cat > "$work/grow.py" <<'PY'
import mmap, sys, time
seconds, out = float(sys.argv[1]), sys.argv[2]
held, start = [], time.time()
open(out + ".start", "w").write("%.3f\n" % start)
# 8 MiB/s in 1 MiB pieces: the task's resident memory grows by 4 MiB each
# half second, 16 times what the helper counts as quiet.
while time.time() - start < seconds:
    m = mmap.mmap(-1, 1 << 20)
    m.write(b"\x01" * (1 << 20))
    held.append(m)
    time.sleep(max(0, len(held) / 8 - (time.time() - start)))
open(out + ".end", "w").write("%.3f\n" % time.time())
PY
not_colliding() {
	printf 'sorts=7\nlast_conflict_ppm_after=0\n' > "$(_sortcount_path "$1" "$SC_SYSFS")/stats"
}
sortcount_reset
for node in "${SC_NODES[@]}"; do
	rm -f "$(_sortcount_path "$node" "$SC_STATE")/node0.compacted"
	ok "$node: stand-in written, quarantine full but not colliding" eval 'full_on "$node" && not_colliding "$node"'
done
srun -N "$ZS_NODES" --zonesort=2 sh -c 'echo $SLURM_JOB_ID > '"$work"'/job3; nice -n -10 python3 '"$work"'/grow.py 16 '"$work"'/grow && sleep 8' \
	> "$work/out3" 2>&1 &
srun_pid=$!
ok "the step's allocation began" wait_for 30 test -s "$work/grow.start"
for node in "${SC_NODES[@]}"; do
	ok "$node: the stand-in now reads full and colliding" full_on "$node"
done
ok "the allocation ended" wait_for 40 test -s "$work/grow.end"
s=$(cat "$work/grow.start") e=$(cat "$work/grow.end")
for node in "${SC_NODES[@]}"; do
	is "$(compacted "$node")" "" "$node: not compacted during the allocation"
	n=$(sortcount_times "$node" | awk -v a="$s" -v b="$e" '$1 > a + 1 && $1 < b' | grep -c .)
	cmp_ok "$n" -ge 1 "$node: ... though the helper sorted during it, its hold run out ($n sorts)"
done
ok "the first quiet sort after it compacted every node (within 6 s)" wait_for 6 all_compacted
wait "$srun_pid"
is "$?" 0 "srun --zonesort=2 with the allocation ended well"
job=$(cat "$work/job3")
cluster_wait_job_gone "$job" 30
summaries_like "$job" 'step 0' 'zonesort=every 2 s, [0-9]+ sorts \(1 compacted the node for its quarantine\)' \
	"the step's summary counts the one compaction, after the allocation"
done_testing
