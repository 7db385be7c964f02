# A stand-in for the kernel zonesort interface that counts sorts: the
# plugin is pointed (sysfs=) at a directory whose nodeid is a FIFO, and a
# reader appends every write to a file. There is no memory-side cache on
# this machine, so this is the only way to see what the plugin asks for;
# the real compaction backend and the real module are tested elsewhere.
#
#   sortcount_start DIR      creates DIR/sysfs/nodeid, starts the reader
#   sortcount                number of sorts recorded so far
#   sortcount_reset          forget the recorded sorts and the plugin's
#                            last-sort times (statedir DIR/state)
#   sortcount_stop
#   sortcount_cluster PREFIX [PLUGSTACK-ARGS...]
#                            all of it for a cluster test: a work directory
#                            $work (mode 755), the counting interface, a
#                            cluster loading the plugin with $SC_POLICY and
#                            these arguments, and a trap that undoes it

sortcount_start() {
	SC_DIR=$1
	mkdir -p "$SC_DIR/sysfs" "$SC_DIR/state"
	rm -f "$SC_DIR/sysfs/nodeid"
	mkfifo -m 600 "$SC_DIR/sysfs/nodeid"
	: > "$SC_DIR/writes"
	# Opened read-write, the FIFO always has a reader and never sees EOF.
	exec {SC_FD}<>"$SC_DIR/sysfs/nodeid"
	cat <&"$SC_FD" >> "$SC_DIR/writes" &
	SC_PID=$!
	SC_POLICY="sorter=kernel sysfs=$SC_DIR/sysfs statedir=$SC_DIR/state nodes=0 helper=$ZS_ZONESORT"
}

sortcount_cluster() {
	local prefix=$1; shift
	work=$(mktemp -d "/tmp/$prefix.XXXXXX")
	chmod 755 "$work"
	sortcount_start "$work"
	trap 'cluster_stop; sortcount_stop; rm -rf "$work"' EXIT
	ZS_PLUGSTACK_ARGS="$SC_POLICY $*" cluster_start_or_bail
}

sortcount() {
	sleep 0.05
	grep -c . "$SC_DIR/writes"
}

sortcount_reset() {
	rm -f "$SC_DIR"/state/node*.last
	: > "$SC_DIR/writes"
}

sortcount_stop() {
	kill "$SC_PID" 2>/dev/null
	exec {SC_FD}<&-
}

# summary JOBID WHERE: the plugin's summary line for "prolog", "step 0",
# "batch step" ... of a job, from slurmd's log (waits for it briefly).
summary() {
	local line i
	for i in $(seq 50); do
		line=$(grep -E "zonesort: job $1 $2 on " "$ZS_CLUSTER/log/slurmd.log" | tail -1)
		[ -n "$line" ] && break
		sleep 0.1
	done
	printf '%s' "$line"
}

# next_jobid: submits and cancels a held job and prints its id; two calls
# around an action show whether the action created a job.
next_jobid() {
	local id
	id=$(sbatch --parsable --hold -o /dev/null --wrap true 2>/dev/null) || return 1
	scancel "$id" 2>/dev/null
	echo "${id%%;*}"
}
