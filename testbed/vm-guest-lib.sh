# Helpers for the scripts the kmod tests run inside a QEMU guest (busybox
# sh), sourced from /guest-lib.sh. Everything the host asserts on is a
# line on the serial console:
#   ZSTEST key=value ...                  values
#   ZSTEST_STEP name rc=N                 a step and its exit status (the
#                                         host fails the test on any N != 0)
#   ZSTEST_FAIL name: text                the tail of a failed step's output
#   ZSTEST_BEGIN tag / ZSTEST_DONE tag    a command's output
# Every step runs under timeout(1), its output goes to a file (never a
# pipe a child could hold open), and background helpers are started under
# timeout too, so no step can hang the guest.

Z=/sys/kernel/zone_sort_free_pages
P=/sys/module/zonesort/parameters
OUT=/tmp/out
mkdir -p $OUT

M() { echo "ZSTEST $*"; }

# _run NAME SECS CMD...: runs CMD for at most SECS seconds, output in
# $OUT/NAME, status in $_rc.
_run() {
	_n=$1
	_s=$2
	shift 2
	timeout "$_s" "$@" > "$OUT/$_n" 2>&1 < /dev/null
	_rc=$?
}

# _mark NAME RC: the step's marker, and its output's tail when it failed.
_mark() {
	echo "ZSTEST_STEP $1 rc=$2 t=$(cut -d' ' -f1 /proc/uptime)"
	[ "$2" = 0 ] || tail -5 "$OUT/$1" 2> /dev/null | sed "s|^|ZSTEST_FAIL $1: |"
	[ "$2" = 0 ]
}

# step NAME SECS CMD...: a step that must succeed; returns its status.
step() {
	_run "$@"
	_mark "$1" $_rc
	return $_rc
}

# refuse NAME SECS CMD...: a step that must fail (exit status 1-123: not
# a time-out and not a signal); its marker says rc=0 when it did.
refuse() {
	_run "$@"
	if [ $_rc -ge 1 ] && [ $_rc -le 123 ]; then
		_mark "$1" 0
	else
		_mark "$1" "refused-expected-got-$_rc"
	fi
}

# out NAME: a step's output. kv NAME KEY: KEY=value in it (last one).
out() { cat "$OUT/$1"; }
kv() { tr ' ' '\n' < "$OUT/$1" | sed -n "s/^$2=//p" | tail -1; }

# cap TAG NAME: prints a step's output between BEGIN/DONE markers.
cap() {
	echo "ZSTEST_BEGIN $1"
	cat "$OUT/$2"
	echo "ZSTEST_DONE $1"
}

# stat KEY: a value of the module's stats file.
stat() { sed -n "s/^$1=//p" $Z/stats; }

# bg NAME SECS CMD...: starts CMD in the background under timeout, output
# in $OUT/NAME; the pid is in $BG.
bg() {
	_n=$1
	_s=$2
	shift 2
	timeout "$_s" "$@" > "$OUT/$_n" 2>&1 < /dev/null &
	BG=$!
}

# ready NAME FILE PID SECS: waits until FILE exists while PID lives, at
# most SECS seconds; prints the step marker (rc=1: the helper died, 2:
# time out).
ready() {
	_i=0
	_rc=2
	while [ $_i -lt $(($4 * 5)) ]; do
		if [ -s "$2" ]; then
			_rc=0
			break
		fi
		if ! kill -0 "$3" 2> /dev/null; then
			_rc=1
			break
		fi
		sleep 0.2
		_i=$((_i + 1))
	done
	_mark "$1" $_rc
}

# measure NAME ARGS...: an allocation measured by zstest with its
# free-list dump, and zsbound's independent bound for it (slot = pfn mod
# $SLOTS, direct-mapped); values as NAME_key=value.
measure() {
	_m=$1
	shift
	mkdir -p /tmp/d/$_m
	step $_m 180 zstest measure "$@" --cpu 0 --dump /tmp/d/$_m || return
	_mode=base
	case " $* " in *" --thp "*) _mode=thp ;; esac
	step ${_m}_bound 180 zsbound /tmp/d/$_m $SLOTS 1 $(($1 / 4096)) 0 $_mode || return
	M $(sed "s/\([a-z_]*\)=/${_m}_\1=/g" $OUT/$_m)
	M $(sed "s/\([a-z_]*\)=/${_m}_\1=/g" $OUT/${_m}_bound)
	rm -rf /tmp/d/$_m
}

# now_cs: centiseconds since boot (the guest's own clock).
now_cs() { awk '{ printf "%d", $1 * 100 }' /proc/uptime; }

# mi KEY [FILE]: a meminfo value in kB (per-node files have "Node 0 KEY:").
mi() { awk -v k="$1:" '{ for (i = 1; i < NF; i++) if ($i == k) print $(i + 1) }' "${2:-/proc/meminfo}"; }

# dmesg_mark, then dmesg_since TAG: the kernel log lines since the mark,
# between markers.
dmesg_mark() { dmesg | wc -l > /tmp/dmesg.mark; }
dmesg_since() {
	echo "ZSTEST_BEGIN $1"
	dmesg | tail -n +$(($(cat /tmp/dmesg.mark) + 1))
	echo "ZSTEST_DONE $1"
}

# online_blocks NAME ZONE FILE: the memory blocks listed in FILE online
# in ZONE (online_kernel or online_movable), as a step.
MEM=/sys/devices/system/memory
online_blocks() {
	step $1 120 sh -c "for b in \$(cat $3); do echo $2 > $MEM/memory\$b/state || exit 1; done"
}

# vmem_online NAME MIB: waits (20 s at most) until a virtio-mem device has
# added its memory blocks (MIB of them; it adds them one at a time), lists
# them in /tmp/vmem_blocks and onlines them movable (step NAME). Needs
# /tmp/blocks.boot (the blocks before the device) and BLOCK (bytes).
vmem_online() {
	_i=0
	while [ $_i -lt 200 ]; do
		ls -d $MEM/memory* | sed 's/.*memory//' | sort -n > /tmp/blocks.now
		[ $(grep -cvxF -f /tmp/blocks.boot /tmp/blocks.now) -ge $(($2 * 1048576 / BLOCK)) ] && break
		sleep 0.1
		_i=$((_i + 1))
	done
	grep -vxF -f /tmp/blocks.boot /tmp/blocks.now | sort -n > /tmp/vmem_blocks
	online_blocks $1 online_movable /tmp/vmem_blocks
}

# unload NAME: rmmod zonesort, timed on the guest's clock (NAME_rc,
# NAME_cs; the time also appended to /tmp/rmmod_cs). A watcher names
# where a slow unload spends its time: past ZS_UNLOAD_SAMPLE_S seconds
# (8 by default, under the tests' 10 s bound) it copies the rmmod task's
# kernel stack to the console three times, a second apart
# (ZSTEST_UNLOAD_STACK lines), then every CPU's stack with the kernel
# log's tail (ZSTEST_UNLOAD_CPUS lines); past 60 s it raises the console
# log level and copies the blocked tasks' and every CPU's stacks, with
# the kernel log's tail, to the console: an unload that never ends names
# where it waits.
unload() {
	bg unload_watch 120 sh -c '
		sleep ${ZS_UNLOAD_SAMPLE_S:-8}
		_p=$(cat /tmp/rmmod.pid)
		for _k in 1 2 3; do
			sed "s/^/ZSTEST_UNLOAD_STACK $_k /" /proc/$_p/stack > /dev/console 2> /dev/null
			sleep 1
		done
		echo 1 > /proc/sys/kernel/sysrq; echo l > /proc/sysrq-trigger; sleep 1
		dmesg | tail -50 | sed "s/^/ZSTEST_UNLOAD_CPUS /" > /dev/console
		sleep $((56 - ${ZS_UNLOAD_SAMPLE_S:-8}))
		echo 7 > /proc/sys/kernel/printk; echo 1 > /proc/sys/kernel/sysrq
		echo w > /proc/sysrq-trigger; echo l > /proc/sysrq-trigger; dmesg | tail -60 > /dev/console'
	_w=$BG
	_t0=$(now_cs)
	timeout 300 sh -c 'echo $$ > /tmp/rmmod.pid && exec rmmod zonesort' > $OUT/$1 2>&1
	_rc=$?
	_cs=$(($(now_cs) - _t0))
	stop $_w
	echo "$_cs" >> /tmp/rmmod_cs
	M $1_rc=$_rc $1_cs=$_cs
	[ $_rc = 0 ]
}

# movers off|on: kernel threads that move free blocks on their own
# (kcompactd's proactive compaction, kswapd's compaction after a watermark
# boost, and from 6.7 on the vmstat worker's per-CPU list decay) can change
# the lists between a dump and the allocation measured against it. "off"
# stops them for the sort measurements; "on" restores what was set.
movers() {
	_vm=/proc/sys/vm
	if [ "$1" = off ]; then
		_movers_saved="$(cat $_vm/compaction_proactiveness) $(cat $_vm/watermark_boost_factor) $(cat $_vm/stat_interval)"
		set -- off 0 0 60
	else
		set -- on $_movers_saved
	fi
	step movers_$1 10 sh -c "echo $2 > $_vm/compaction_proactiveness && echo $3 > $_vm/watermark_boost_factor && echo $4 > $_vm/stat_interval"
}

# stop PID: ends a background helper and reaps it.
stop() {
	kill "$1" 2> /dev/null
	wait "$1" 2> /dev/null
	return 0
}

# hotplug SECS: for SECS seconds, takes memory blocks offline and back
# online, highest first, compacting memory after each pass; an offline
# attempt that does not finish in 5 s is given up (killed). Prints
# "offlined=N onlined=N online_failed=N". Run as `sh /guest-lib.sh hotplug
# SECS`.
hotplug() {
	_end=$(($(date +%s) + $1))
	_off=0
	_on=0
	_failed=0
	while [ "$(date +%s)" -lt "$_end" ]; do
		for _b in $(ls -d /sys/devices/system/memory/memory* | sort -r); do
			[ "$(date +%s)" -lt "$_end" ] || break
			if timeout 5 sh -c "echo offline > $_b/state" 2> /dev/null; then
				_off=$((_off + 1))
				if timeout 30 sh -c "echo online > $_b/state"; then
					_on=$((_on + 1))
				else
					_failed=$((_failed + 1))
				fi
			fi
		done
		echo 1 > /proc/sys/vm/compact_memory
	done
	echo "offlined=$_off onlined=$_on online_failed=$_failed"
}

case "${1:-}" in
hotplug)
	shift
	hotplug "$@"
	;;
esac

# allcpu_probes: kprobes on the kernel's all-CPU operations (the names it
# has of drain_all_pages, lru_add_drain_all, __lru_add_drain_all,
# lru_cache_disable, synchronize_rcu_expedited), their names in
# /tmp/probes; allcpu_hits NAME: calls of one so far; allcpu_calls: of all.
allcpu_probes() {
	T=/sys/kernel/tracing
	mount -t debugfs debugfs /sys/kernel/debug 2> /dev/null
	mount -t tracefs tracefs $T 2> /dev/null || T=/sys/kernel/debug/tracing
	for _f in drain_all_pages lru_add_drain_all __lru_add_drain_all lru_cache_disable synchronize_rcu_expedited; do
		echo "p:zsac_$_f $_f" >> $T/kprobe_events 2> /dev/null && echo 1 > $T/events/kprobes/zsac_$_f/enable && echo $_f
	done > /tmp/probes
}
allcpu_hits() { awk -v p="zsac_$1" '$1 == p { print $2 }' $T/kprobe_profile; }
allcpu_calls() { awk '$1 ~ /^zsac_/ { s += $2 } END { print s + 0 }' $T/kprobe_profile; }
