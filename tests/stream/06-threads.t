#!/bin/bash
# Threads: one per allowed core, each bound to one CPU (seen from outside
# in /proc while the probe runs); taskset and OMP_NUM_THREADS are honoured;
# more threads than cores run with a warning; OMP_PROC_BIND/OMP_PLACES hand
# placement to the OpenMP runtime.
set -u
source "$(dirname "$0")/../../testbed/tap.sh"
source "$(dirname "$0")/../../testbed/env.sh"
need jq taskset lscpu
source "$(dirname "$0")/probe.sh"
jv() { printf '%s' "$out" | jq -c "$1"; }

# expand "0-2,5" to "0 1 2 5"
expand() { tr ',' '\n' <<<"$1" | awk -F- '{ for (i = $1; i <= ($2 == "" ? $1 : $2); i++) print i }' | sort -n | tr '\n' ' '; }
allowed=$(expand "$(awk '/^Cpus_allowed_list:/ { print $2 }' /proc/self/status)")
# The first allowed CPU of each core, as lscpu sees the cores.
firsts=$(lscpu -p=CPU,CORE,SOCKET | grep -v '^#' | awk -F, -v allowed=" $allowed" \
	'index(allowed, " " $1 " ") && !seen[$3 "/" $2]++ { print $1 }' | sort -n | tr '\n' ' ')
ncores=$(wc -w <<<"$firsts")
json_list() { printf '[%s]' "$(tr -s ' ' ',' <<<"$1" | sed 's/^,//; s/,$//')"; }
diag "allowed CPUs: $allowed; one per core: $firsts"

run "$S" --json --size 96M --repeats 2
is "$rc" 0 "default: exit 0"
is "$(jv .threads)" "$ncores" "one thread per allowed core ($ncores)"
is "$(jv .cpus)" "$(json_list "$firsts")" "threads on the first CPU of each core"
is "$(jv .pinned)" true "stream-triad binds the threads itself"

# Bound threads, as the kernel sees them while the probe runs.
"$S" --json --size 256M --repeats 2000 > "$tmp/long.json" 2>&1 &
bg=$!
threads_up() { [ "$(ls /proc/$bg/task 2>/dev/null | wc -l)" -ge "$ncores" ]; }
wait_for 20 threads_up
sleep 0.5
binds=$(for t in /proc/$bg/task/*; do awk '/^Cpus_allowed_list:/ { print $2 }' "$t/status"; done | sort -n | tr '\n' ' ')
kill "$bg"; wait "$bg" 2>/dev/null; bg=
is "$binds" "$firsts" "each OpenMP thread is bound to its own CPU (/proc/PID/task/*/status)"

run taskset -c 0 "$S" --json --size 96M --repeats 2
is "$rc" 0 "taskset -c 0: exit 0"
is "$(jv .threads)" 1 "taskset -c 0: one thread"
is "$(jv .cpus)" "[0]" "taskset -c 0: cpus is [0]"
last=$(awk '{ print $NF }' <<<"$allowed")
if [ "$last" != 0 ]; then
	run taskset -c "$last" "$S" --json --size 96M --repeats 2
	is "$(jv .threads):$(jv .cpus)" "1:[$last]" "taskset -c $last: one thread on CPU $last"
	run taskset -c "0,$last" "$S" --json --size 96M --repeats 2
	is "$(jv .cpus)" "[0,$last]" "taskset -c 0,$last: both CPUs"
fi

run env OMP_NUM_THREADS=1 "$S" --json --size 96M --repeats 2
is "$(jv .threads):$(jv '.cpus | length')" "1:1" "OMP_NUM_THREADS=1: one thread on one CPU"

# More threads than cores: accepted, with a warning.
run env OMP_NUM_THREADS=8 "$S" --json --size 96M --repeats 2
is "$rc" 0 "OMP_NUM_THREADS=8 on $ncores cores: exit 0"
is "$(jv .threads)" 8 "OMP_NUM_THREADS=8: 8 threads"
is "$(jv .cpus)" "$(json_list "$firsts")" "OMP_NUM_THREADS=8: round robin over the cores"
is "$(jv .validation)" '"passed"' "OMP_NUM_THREADS=8: validation passed"
if [ "$ncores" -lt 8 ]; then
	like "$err" "^stream-triad: warning: 8 threads for $ncores allowed cores? \\(OMP_NUM_THREADS\\): threads share cores" \
		"OMP_NUM_THREADS=8: a warning says threads share cores"
fi
run env OMP_NUM_THREADS=8 taskset -c 0 "$S" --json --size 96M --repeats 2
is "$rc:$(jv .threads):$(jv .cpus)" "0:8:[0]" "OMP_NUM_THREADS=8 under taskset -c 0: 8 threads on CPU 0"

# The OpenMP runtime places the threads when asked to.
run env OMP_PROC_BIND=close OMP_PLACES=cores "$S" --json --size 96M --repeats 2
is "$rc" 0 "OMP_PROC_BIND=close OMP_PLACES=cores: exit 0"
is "$(jv .pinned)" false "OMP_PROC_BIND set: the runtime places the threads"
is "$(jv .threads)" "$ncores" "OMP_PROC_BIND set: still one thread per core"
is "$(jv '.cpus | length')" "$ncores" "OMP_PROC_BIND=close OMP_PLACES=cores: on $ncores CPUs"
run env OMP_PLACES="{$last}" "$S" --json --size 96M --repeats 2
is "$(jv .threads):$(jv .cpus)" "1:[$last]" "OMP_PLACES={$last}: one thread on CPU $last"
run env OMP_PROC_BIND=false "$S" --json --size 96M --repeats 2
is "$(jv .pinned):$(jv .cpus)" "false:$(json_list "$allowed")" "OMP_PROC_BIND=false: threads unbound, on every allowed CPU"
done_testing
