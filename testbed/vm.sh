# Helpers for the kmod tests: build zonesort.ko for a Debian kernel (the
# host's 6.1 and 6.12, or sid's 7.x inside the sid release root with sid's
# own compiler), pack a busybox initramfs with the module, the static
# guest programs (zstest, zsbound), the project's zonesort command and its
# libraries, and boot it in QEMU (TCG: /dev/kvm hangs guests on this
# machine) with memory-side caches described to the guest through ACPI
# HMAT. Source after tap.sh and env.sh.
#
# QEMU exits 0 even when the guest panics: results come only from markers
# the guest prints on its serial console (see vm-guest-lib.sh). Set
# ZS_QEMU_LOCK to a lock file to run one guest at a time on a shared host.

KM_WORK=${KM_WORK:-$ZS_BUILDDIR/kmod-test}

# km_root SERIES: the root file system holding that kernel series: "" (the
# host) for 6.1 and 6.12, the sid release root for 7; with
# ZS_DEBUG_KERNEL set, the debug kernel scripts/debug-kernel built for the
# series in $ZS_KERNELS. Fails, saying what is missing, when that root is
# not there; returns 3 when it could not be made because the Debian
# archive was unreachable (scripts/test-all).
km_root() {
	if [ -n "${ZS_DEBUG_KERNEL:-}" ]; then
		if ! "$ZS_SRCDIR/scripts/debug-kernel" --check "$1" > /dev/null 2>&1; then
			echo "no debug kernel for Linux $1 in ${ZS_KERNELS:-build/kernels}: build it with scripts/debug-kernel $1" >&2
			return 1
		fi
		printf '%s' "${ZS_KERNELS:-$ZS_SRCDIR/build/kernels}/debug-$1"
		return 0
	fi
	case $1 in
	7*)
		# While scripts/test-all is still making the root (ZS_ROOT_STATUS:
		# its .rc appears when release-root ends, its .log says why),
		# wait for it, at most an hour.
		if [ -n "${ZS_ROOT_STATUS:-}" ]; then
			local waited=0
			while [ ! -s "$ZS_ROOT_STATUS.rc" ] && [ "$waited" -lt 3600 ]; do
				sleep 2
				waited=$((waited + 2))
			done
			[ "$(cat "$ZS_ROOT_STATUS.rc" 2> /dev/null)" != 3 ] ||
				ZS_ROOT_UNREACHABLE_sid=$(tail -1 "$ZS_ROOT_STATUS.log")
		fi
		if ! "$ZS_SRCDIR/scripts/release-root" --check sid 2> /dev/null; then
			if [ -n "${ZS_ROOT_UNREACHABLE_sid:-}" ]; then
				echo "$ZS_ROOT_UNREACHABLE_sid" >&2
				return 3
			fi
			echo "the sid release root is missing or incomplete (ZS_ROOTS=${ZS_ROOTS:-build/roots}): make it with scripts/release-root sid" >&2
			return 1
		fi
		;;
	*) printf '' ;;
	esac
}

# km_kver SERIES [ROOT]: the newest kernel of a series ("6.1", "6.12", "7")
# that has both an image in ROOT/boot and a build tree.
km_kver() {
	local v best= root=${2:-}
	for v in "$root"/boot/vmlinuz-"$1".*; do
		[ -e "$v" ] || continue
		v=${v#"$root"/boot/vmlinuz-}
		[ -d "$root/lib/modules/$v/build" ] && best=$v
	done
	printf '%s' "$best"
}

# km_series_root SERIES: sets KM_SERIES_ROOT to the root holding that
# series and returns 0; otherwise reports the root missing and returns 3
# (NOT PREPARED: the Debian archive was unreachable) or 1 (a failure).
km_series_root() {
	local rc
	KM_SERIES_ROOT=$(km_root "$1" 2>&1)
	rc=$?
	[ "$rc" -eq 0 ] && return 0
	if [ "$rc" -eq 3 ]; then
		echo "# NOT PREPARED: Linux $1: $KM_SERIES_ROOT"
		return 3
	fi
	_tap_result 1 "Linux $1 to test on: $KM_SERIES_ROOT"
	return 1
}

# km_need_kernel SERIES: sets KM_ROOT and KM_KVER to the newest kernel of
# the series, or fails the test file naming what is missing.
km_need_kernel() {
	km_series_root "$1"
	case $? in
	0) KM_ROOT=$KM_SERIES_ROOT ;;
	3) exit 77 ;;
	*)
		done_testing
		exit 1
		;;
	esac
	KM_KVER=$(km_kver "$1" "$KM_ROOT")
	if [ -z "$KM_KVER" ]; then
		_tap_result 1 "a Debian $1 kernel image and headers in '${KM_ROOT:-/}' (scripts/debian-packages.kmod, scripts/release-packages.sid)"
		done_testing
		exit 1
	fi
}

# km_make ROOT KVER DIR ARGS...: runs the kernel's build system for the
# module sources in DIR; inside ROOT (chroot, in a private mount namespace,
# ROOT left untouched) when ROOT is not empty.
km_make() {
	local root=$1 kver=$2 dir=$3
	shift 3
	if [ -z "$root" ] || [ -f "$root/.zonesort-debug-kernel" ]; then
		# The host's kernels, and debug kernels (scripts/debug-kernel),
		# built with the host's compiler.
		make -C "${KM_KDIR:-$root/lib/modules/$kver/build}" M="$dir" "$@"
	else
		# KM_KDIR, a tree outside ROOT, is seen at /tmp/zs-kdir inside.
		unshare --mount --propagation private sh -c '
			root=$1 dir=$2 kver=$3 kdir=$4
			shift 4
			k=/lib/modules/$kver/build
			if [ -n "$kdir" ]; then
				mkdir -p "$root/tmp/zs-kdir" && mount --bind "$kdir" "$root/tmp/zs-kdir" || exit 1
				k=/tmp/zs-kdir
			fi
			mount --bind /proc "$root/proc" && mount --bind /dev "$root/dev" &&
				mount --bind "$dir" "$root/mnt" &&
				exec chroot "$root" make -C "$k" M=/mnt "$@"' \
			km_make "$root" "$dir" "$kver" "${KM_KDIR:-}" "$@"
	fi
}

# km_other_release ROOT KVER RELEASE: a copy of the build tree of KVER
# (in ROOT, "" for the host) that names itself RELEASE
# (include/generated/utsrelease.h), the same kernel otherwise: a module
# built against it is what a packaging tool links into a kernel it was
# not built for when the symbol checksums match (RHEL's weak-modules).
# Prints its path, for KM_KDIR.
km_other_release() {
	local root=$1 src dir=$KM_WORK/kdir-$3 l t
	src=$(readlink -f "$root/lib/modules/$2/build")
	# an absolute link inside ROOT resolves against the host: re-root it
	[ -z "$root" ] || [ -d "$src" ] || src=$root$(readlink "$root/lib/modules/$2/build")
	[ -d "$src" ] || return 1
	if [ ! -f "$dir/.done" ]; then
		rm -rf "$dir"
		mkdir -p "$KM_WORK"
		cp -a "$src" "$dir" || return 1
		# Relative links (Debian's scripts/) point into the original's
		# neighbours: the same targets, absolute (inside ROOT).
		for l in "$dir"/*; do
			[ -L "$l" ] || continue
			t=$(readlink -f "$src/$(basename "$l")")
			ln -sfn "${t#"$root"}" "$l"
		done
		# Debian's 7.x tree names itself as the output directory: the
		# copy, as km_make shows it.
		t=$dir
		[ -z "$root" ] || t=/tmp/zs-kdir
		sed -i "s|^KBUILD_OUTPUT=.*|KBUILD_OUTPUT=$t|" "$dir/Makefile"
		printf '#define UTS_RELEASE "%s"\n' "$3" > "$dir/include/generated/utsrelease.h"
		[ ! -f "$dir/include/config/kernel.release" ] || echo "$3" > "$dir/include/config/kernel.release"
		touch "$dir/.done"
	fi
	printf '%s' "$dir"
}

# km_build ROOT KVER [NAME [MAKE ARGS...]]: builds kmod/ with W=1 in
# $KM_WORK/NAME (default build-KVER; a copy, so the source tree stays
# clean); log in build.log there. A build of the same sources with the
# same arguments is reused. Prints the .ko path.
km_build() {
	local root=$1 kver=$2 dir=$KM_WORK/${3:-build-$2} stamp
	shift 3 2> /dev/null || shift $#
	stamp=$(cat "$ZS_SRCDIR"/kmod/Kbuild "$ZS_SRCDIR"/kmod/*.c "$ZS_SRCDIR"/kmod/*.h |
		sha256sum | cut -c1-16)-$(printf '%s ' "$root" "${KM_KDIR:-}" "$@" | sha256sum | cut -c1-16)
	if [ -f "$dir/zonesort.ko" ] && [ "$(cat "$dir/.stamp" 2> /dev/null)" = "$stamp" ]; then
		printf '%s' "$dir/zonesort.ko"
		return 0
	fi
	rm -rf "$dir"
	mkdir -p "$dir"
	cp "$ZS_SRCDIR"/kmod/Kbuild "$ZS_SRCDIR"/kmod/*.c "$ZS_SRCDIR"/kmod/*.h "$dir"/ || return 1
	if ! km_make "$root" "$kver" "$dir" W=1 "$@" modules > "$dir/build.log" 2>&1; then
		tail -20 "$dir/build.log" >&2
		return 1
	fi
	printf '%s' "$stamp" > "$dir/.stamp"
	printf '%s' "$dir/zonesort.ko"
}

# km_policysim: builds tests/kmod/policysim.c with the module's policy
# code (-Wall -Wextra -Werror) into $KM_WORK/policysim, and checks that
# the policy code builds as C89 with the kernel's declaration rules (TAP
# results); prints nothing, returns non-zero when a build failed.
km_policysim() {
	local f rc=0
	mkdir -p "$KM_WORK"
	ok "simulator builds with the module's policy code (-Wall -Wextra -Werror)" \
		gcc -std=gnu11 -O2 -Wall -Wextra -Werror -o "$KM_WORK/policysim" \
		"$ZS_SRCDIR/tests/kmod/policysim.c" "$ZS_SRCDIR/kmod/zonesort_policy.c" \
		"$ZS_SRCDIR/kmod/zonesort_quarantine_policy.c" || rc=1
	for f in zonesort_policy.c zonesort_quarantine_policy.c; do
		ok "$f builds as C89 with the kernel's declaration rules" \
			gcc -std=gnu89 -Wall -Wextra -Werror -Wdeclaration-after-statement -c -o /dev/null \
			"$ZS_SRCDIR/kmod/$f" || rc=1
	done
	return $rc
}

# km_guestbin NAME [LIBS]: builds a static guest program from
# tests/kmod/NAME.c; prints its path.
km_guestbin() {
	local out=$KM_WORK/$1 src=$ZS_SRCDIR/testbed/programs/$1.c
	mkdir -p "$KM_WORK"
	if [ ! -x "$out" ] || [ "$src" -nt "$out" ]; then
		gcc -std=gnu11 -O2 -Wall -Wextra -Werror -static -o "$out" "$src" ${2:-} >&2 || return 1
	fi
	printf '%s' "$out"
}

# km_copy_bin ROOT PATH [DEST]: copies an executable and the shared
# libraries ldd lists (and the loader) into ROOT at the same paths.
km_copy_bin() {
	local root=$1 bin=$2 dest=${3:-$2} lib
	mkdir -p "$root$(dirname "$dest")"
	cp -L "$bin" "$root$dest" || return 1
	for lib in $(ldd "$bin" 2>/dev/null | awk '/=> \// { print $3 } /^\t\/[^ ]+ \(/ { print $1 }'); do
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib" || return 1
	done
}

# km_kernel_mods ROOT KVER DIR MODULE...: the kernel's own modules (from
# ROOT, "" for the host) with what they depend on, uncompressed for
# busybox insmod, as DIR/modules/N.ko and DIR/modules/order listing them
# in load order (vm-guest-lib.sh's kernel_mods loads them). Modules built
# into KVER are left out.
km_kernel_mods() {
	local root=$1 kver=$2 dir=$3 path n=0
	shift 3
	mkdir -p "$dir/modules"
	: > "$dir/modules/order"
	for path in "$@"; do
		modprobe -d "${root:-/}" -S "$kver" --show-depends "$path" || return 1
	done > "$dir/modules/deps"
	for path in $(awk '$1 == "insmod" && !seen[$2]++ { print $2 }' "$dir/modules/deps"); do
		n=$((n + 1))
		case $path in
		*.xz) xz -dc "$path" ;;
		*.zst) zstd -qdc "$path" ;;
		*) cat "$path" ;;
		esac > "$dir/modules/$n.ko" || return 1
		echo "$n.ko" >> "$dir/modules/order"
	done
	rm "$dir/modules/deps"
}

# km_initramfs OUT KVER KO GUEST_SCRIPT [EXTRA_KO]: the initramfs. The
# module goes to /lib/modules/KVER/extra (modprobe finds it; also
# /zonesort.ko for insmod; EXTRA_KO, a test build, to /zonesort-hooks.ko),
# vm-guest-lib.sh to /guest-lib.sh, the guest script to /test.sh, which /init
# runs and whose exit status it prints in the final marker. Also:
# KM_GUEST_BINS, more guest programs as NAME[:GCC_FLAGS] (km_guestbin), to
# /bin; KM_KERNEL_MODS, kernel modules for km_kernel_mods (KM_ROOT's);
# KM_GUEST_FILES, more files as HOSTPATH:GUESTPATH.
km_initramfs() {
	local out=$1 kver=$2 ko=$3 script=$4 extra=${5:-} root zstest zsbound
	root=$(mktemp -d "$KM_WORK/root.XXXXXX") || return 1
	zstest=$(km_guestbin zstest) || return 1
	zsbound=$(km_guestbin zsbound -lm) || return 1
	mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,proc,sys,dev,tmp,run,var,etc,root} \
		"$root/lib/modules/$kver/extra"
	cp /bin/busybox "$root/bin/busybox" || return 1
	cp "$ko" "$root/lib/modules/$kver/extra/zonesort.ko"
	cp "$ko" "$root/zonesort.ko"
	[ -z "$extra" ] || cp "$extra" "$root/zonesort-hooks.ko" || return 1
	printf 'extra/zonesort.ko:\n' > "$root/lib/modules/$kver/modules.dep"
	cp "$zstest" "$root/bin/zstest"
	cp "$zsbound" "$root/bin/zsbound"
	local spec bin
	for spec in ${KM_GUEST_BINS:-}; do
		bin=$(km_guestbin "${spec%%:*}" "$(printf '%s' "$spec" | sed -n 's/^[^:]*://p')") || return 1
		cp "$bin" "$root/bin/" || return 1
	done
	for spec in ${KM_GUEST_FILES:-}; do
		cp "${spec%%:*}" "$root/${spec#*:}" || return 1
	done
	[ -z "${KM_KERNEL_MODS:-}" ] || km_kernel_mods "${KM_ROOT:-}" "$kver" "$root" $KM_KERNEL_MODS || return 1
	km_copy_bin "$root" "$ZS_ZONESORT" /usr/sbin/zonesort || return 1
	cp "$ZS_SRCDIR/testbed/vm-guest-lib.sh" "$root/guest-lib.sh"
	cp "$script" "$root/test.sh"
	cat > "$root/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /run
mount -t tmpfs tmpfs /tmp
ln -s /run /var/run
echo "ZSTEST_BOOT kernel=$(uname -r)"
sh /test.sh
echo "ZSTEST_END rc=$?"
poweroff -f
EOF
	chmod +x "$root/init"
	(cd "$root" && find . | cpio -o -H newc 2>/dev/null) | gzip -1 > "$out"
	local rc=$?
	rm -rf "$root"
	return $rc
}

# km_numa NODE...: QEMU options for a machine with HMAT, one NUMA node per
# argument MEM[:CACHE[:INDEXING]] (CACHE e.g. 256M, INDEXING direct,
# complex or none); all CPUs on node 0.
# The guest's RAM is allocated on the host before the guest boots
# (prealloc=on here, -mem-prealloc in km_boot): a guest page first touched
# while the guest runs is a page fault of QEMU's on the host, which a host
# that is itself a virtual machine returning freed memory to its
# hypervisor may be slow to serve, stopping the vCPU meanwhile. (The soft
# lockups seen in zeroing went on with it: testbed/node.sh.)
km_numa() {
	local i=0 spec mem cache assoc smp=$KM_SMP
	KM_NUMA_ARGS=(-machine pc,hmat=on)
	for spec in "$@"; do
		IFS=: read -r mem cache assoc <<< "$spec"
		KM_NUMA_ARGS+=(-object "memory-backend-ram,id=m$i,size=$mem,prealloc=on")
		if [ $i -eq 0 ]; then
			KM_NUMA_ARGS+=(-numa "node,nodeid=0,cpus=0-$((smp - 1)),memdev=m0")
		else
			KM_NUMA_ARGS+=(-numa "node,nodeid=$i,memdev=m$i,initiator=0")
		fi
		i=$((i + 1))
	done
	i=0
	for spec in "$@"; do
		IFS=: read -r mem cache assoc <<< "$spec"
		KM_NUMA_ARGS+=(
			-numa hmat-lb,initiator=0,target=$i,hierarchy=memory,data-type=access-latency,latency=$((100 + 50 * i))
			-numa hmat-lb,initiator=0,target=$i,hierarchy=memory,data-type=access-bandwidth,bandwidth=10G)
		[ -n "$cache" ] && KM_NUMA_ARGS+=(-numa "hmat-cache,node-id=$i,size=$cache,level=1,associativity=${assoc:-direct},policy=write-back,line=64")
		i=$((i + 1))
	done
}

# km_boot ROOT KVER INITRD LOG NODES [SMP] [TIMEOUT]: boots the guest.
# NODES: "none" (a machine without HMAT, 512 MiB; "none:2G" for another
# size), or km_numa's node specs separated by spaces ("1G:256M" is 1 GiB
# with a 256 MiB direct-mapped cache). Returns 0 when the guest reached
# its end marker. KM_QEMU_ARGS (an array) adds QEMU arguments, such as
# devices; KM_MEM_OPTS is appended to -m (",slots=2,maxmem=8G" for
# hotpluggable memory); the guest is run under ZS_QEMU_LOCK when that is
# set.
km_boot() {
	local root=$1 kver=$2 initrd=$3 log=$4 nodes=$5 mem=0 spec
	KM_SMP=${6:-2}
	local limit=${7:-600}
	local -a lock=()
	local try
	if [ "${nodes%%:*}" = none ]; then
		KM_NUMA_ARGS=(-machine pc -mem-prealloc)
		spec=${nodes#none}
		spec=${spec#:}
		case $spec in
		'') mem=512 ;;
		*G) mem=$((${spec%G} * 1024)) ;;
		*M) mem=${spec%M} ;;
		esac
	else
		# shellcheck disable=SC2086
		km_numa $nodes
		for spec in $nodes; do
			spec=${spec%%:*}
			case $spec in
			*G) mem=$((mem + ${spec%G} * 1024)) ;;
			*M) mem=$((mem + ${spec%M})) ;;
			esac
		done
	fi
	[ -n "${ZS_QEMU_LOCK:-}" ] && lock=(flock "$ZS_QEMU_LOCK")
	# A guest that died before /init ran (TCG now and then trips over
	# the kernel patching its own code while it boots) is booted once
	# more; its log is kept as LOG.early, and the test says so.
	for try in 1 2; do
		"${lock[@]}" timeout --kill-after=10 "$limit" qemu-system-x86_64 -accel tcg -cpu max \
			-smp "$KM_SMP" -m "${mem}M${KM_MEM_OPTS:-}" "${KM_NUMA_ARGS[@]}" ${KM_QEMU_ARGS[@]+"${KM_QEMU_ARGS[@]}"} \
			-nographic -no-reboot \
			-kernel "$root/boot/vmlinuz-$kver" -initrd "$initrd" \
			-append "console=ttyS0 panic=-1 quiet loglevel=4 ${KM_APPEND:-}" < /dev/null > "$log" 2>&1
		grep -q 'ZSTEST_BOOT kernel=' "$log" && break
		[ $try = 1 ] || break
		mv "$log" "$log.early"
		diag "the guest died before /init ran (log $log.early): booting it once more"
	done
	grep -q '^ZSTEST_END' <(tr -d '\r' < "$log")
}

# km_ere TEXT: TEXT as an extended regular expression matching itself.
km_ere() { printf '%s' "$1" | sed 's/[][\\.^$*+?(){}|/]/\\&/g'; }

# km_field LINE NAME: the value of NAME=value in a line of such words
# (the policy simulator's output).
km_field() { printf '%s\n' "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }

# km_get LOG KEY: the value of the last "ZSTEST ... KEY=value" marker.
km_get() {
	tr -d '\r' < "$1" | grep '^ZSTEST ' | grep -o "\(^\| \)$2=[^ ]*" | tail -1 | sed 's/^ *[^=]*=//'
}

# km_lines LOG TAG: lines the guest printed between "ZSTEST_BEGIN TAG" and
# "ZSTEST_DONE TAG" (command output captured for assertions).
km_lines() {
	tr -d '\r' < "$1" | awk -v t="$2" '$0 == "ZSTEST_BEGIN " t { on = 1; next }
		$0 == "ZSTEST_DONE " t { on = 0 } on'
}

# km_failed_steps LOG: the guest steps that failed, with their output.
km_failed_steps() {
	tr -d '\r' < "$1" | awk '/^ZSTEST_FAIL / { print; next }
		/^ZSTEST_STEP / { for (i = 3; i <= NF; i++) if ($i ~ /^rc=/ && $i != "rc=0") print $0 }'
}

# km_steps LOG: how many guest steps ran.
km_steps() {
	tr -d '\r' < "$1" | grep -c '^ZSTEST_STEP '
}

# km_guest_ok LOG MIN_STEPS: the guest reached its end with status 0, ran
# at least MIN_STEPS steps and none failed (assertions).
km_guest_ok() {
	local log=$1 min=$2
	is "$(km_failed_steps "$log")" "" "every guest step exited 0 ($(km_steps "$log") steps)"
	cmp_ok "$(km_steps "$log")" -ge "$min" "the guest ran all its steps (at least $min)"
}

# km_measurement LOG NAME WHAT: reports one measured allocation (guest
# measure NAME) and asserts that what its bound came from is sound: the
# free-list dump agrees with /proc/pagetypeinfo and /proc/kpageflags (a
# few changes between the reads allowed), zsbound counts the same
# collisions as zstest, the zone had the pages, a huge-page job got huge
# pages.
km_measurement() {
	local log=$1 v=$2 what=$3
	diag "$(printf '%-12s %-28s measured %s, bound %s, random %s, lists predict %s, huge %s' "$v" "$what:" \
		"$(km_get "$log" "${v}_conflict")" "$(km_get "$log" "${v}_bound")" "$(km_get "$log" "${v}_random")" \
		"$(km_get "$log" "${v}_predicted")" "$(km_get "$log" "${v}_huge")")"
	num_ok "$v: free-list dump agrees with /proc/pagetypeinfo ($(km_get "$log" "${v}_pti_diff") of $(km_get "$log" "${v}_pti_blocks") blocks differ, dump try $(km_get "$log" "${v}_dump_tries") of 5)" \
		"$(km_get "$log" "${v}_pti_diff") + 0 <= 0.01 * $(km_get "$log" "${v}_pti_blocks") + 8 && $(km_get "$log" "${v}_pti_blocks") + 0 > 0"
	num_ok "$v: every dumped free block is a buddy in /proc/kpageflags ($(km_get "$log" "${v}_buddy_missing") of $(km_get "$log" "${v}_blocks") not)" \
		"$(km_get "$log" "${v}_buddy_missing") + 0 <= 0.01 * $(km_get "$log" "${v}_blocks") + 8"
	num_ok "$v: zsbound's own count of the allocation's collisions equals zstest's" \
		"($(km_get "$log" "${v}_measured") - $(km_get "$log" "${v}_conflict"))^2 < 1e-10"
	is "$(km_get "$log" "${v}_short_pages")" 0 "$v: the zone had the pages the bound assumes"
	case $what in
	*huge*) num_ok "$v: huge-page job got huge pages ($(km_get "$log" "${v}_huge"))" \
		"$(km_get "$log" "${v}_huge") >= 0.95" ;;
	esac
}

# km_sorted_ok LOG NAME [POINTS]: a sorted allocation came within POINTS
# (default 1) percentage points of the independent bound.
km_sorted_ok() {
	local pts=${3:-1}
	num_ok "$2: sorted within $pts point(s) of the independent bound ($(km_get "$1" "$2_conflict") vs $(km_get "$1" "$2_bound"))" \
		"$(km_get "$1" "$2_conflict") <= $(km_get "$1" "$2_bound") + $pts / 100"
}

# km_sorted_tail_ok LOG NAME: the same for an allocation that must
# overfill slots (the whole cache), where a sort cannot reach the bound:
# - it orders blocks once, greedily, for every allocation size; the
#   cheapest choice for one size can pile blocks into few slot groups
#   instead (a third page in a slot adds one collision, a second two),
#   so up to the allocation's last whole block the sorted lists are held
#   to 2 points of the bound for that many pages;
# - the block the allocation ends in is wherever that order put it: its
#   first tail_pages pages can add up to twice as many collisions (each
#   page and the one it meets) as the block best for this one size.
# The allocation as measured is held to the sum of both.
km_sorted_tail_ok() {
	local tail whole
	tail=$(km_get "$1" "$2_tail_pages") whole=$(km_get "$1" "$2_whole_pages")
	diag "$(printf '%-12s up to the last whole block: %s pages, sorted %s, bound %s; tail %s pages' "$2" \
		"$whole" "$(km_get "$1" "$2_whole_predicted")" "$(km_get "$1" "$2_whole_bound")" "$tail")"
	num_ok "$2: up to its last whole block ($whole pages) the sorted lists give within 2 points of the independent bound ($(km_get "$1" "$2_whole_predicted") vs $(km_get "$1" "$2_whole_bound"))" \
		"$(km_get "$1" "$2_whole_predicted") <= $(km_get "$1" "$2_whole_bound") + 2 / 100"
	num_ok "$2: sorted within 2 points and a tail of $tail pages of the independent bound ($(km_get "$1" "$2_conflict") vs $(km_get "$1" "$2_bound"))" \
		"$(km_get "$1" "$2_conflict") <= $(km_get "$1" "$2_bound") + 2 / 100 + 2 * $tail / ($whole + $tail)"
}

# km_dmesg_bad LOG: kernel log lines (printed by the guest between
# ZSTEST_BEGIN/DONE dmesg_all) that show a warning, a bug, an oops, list
# corruption, a lockup or a stall.
km_dmesg_bad() {
	km_lines "$1" dmesg_all | grep -E 'WARNING:|BUG:|Oops|general protection|corruption|Bad page|soft lockup|hung_task|hung task|rcu.*stall|Call Trace'
}

# km_qmp SOCKET COMMAND...: sends QMP commands (JSON, one per argument)
# to QEMU's monitor on a unix socket after the capabilities handshake;
# prints each command's reply on a line (events skipped).
km_qmp() {
	perl -MIO::Socket::UNIX -e '
		my $s = IO::Socket::UNIX->new(Peer => shift @ARGV) or die "QMP socket: $!\n";
		sub reply { while (my $l = <$s>) { return $l unless $l =~ /"event"/ } die "QMP: no reply\n" }
		reply();
		print $s qq({"execute":"qmp_capabilities"}\n);
		reply();
		for my $c (@ARGV) { print $s "$c\n"; print reply() }' "$@"
}

# km_unplug_when LOG SOCKET DEVICE OUT: in the background while a guest
# runs: when the guest prints "ZSTEST_HOST unplug", sets the virtio-mem
# DEVICE's requested size to 0 over QMP and polls its plugged size every
# 0.2 s for 60 s at most; writes "host_unplug_s=S host_size=BYTES" to OUT.
km_unplug_when() {
	local log=$1 sock=$2 dev=$3 out=$4 t0 size=
	until { tr -d '\r' < "$log"; } 2> /dev/null | grep -q '^ZSTEST_HOST unplug'; do
		{ tr -d '\r' < "$log"; } 2> /dev/null | grep -q '^ZSTEST_END' && return
		sleep 0.5
	done
	t0=$(date +%s.%N)
	km_qmp "$sock" "{\"execute\":\"qom-set\",\"arguments\":{\"path\":\"$dev\",\"property\":\"requested-size\",\"value\":0}}" > "$out.qmp" 2>&1
	while awk -v t0="$t0" -v now="$(date +%s.%N)" 'BEGIN { exit !(now - t0 < 60) }'; do
		size=$(km_qmp "$sock" "{\"execute\":\"qom-get\",\"arguments\":{\"path\":\"$dev\",\"property\":\"size\"}}" 2>> "$out.qmp" |
			sed -n 's/.*"return": *\([0-9]*\).*/\1/p')
		[ "$size" = 0 ] && break
		sleep 0.2
	done
	echo "host_unplug_s=$(awk -v t0="$t0" -v now="$(date +%s.%N)" 'BEGIN { printf "%.2f", now - t0 }') host_size=${size:-unknown}" > "$out"
}

# km_host_requests LOG SOCKET OUT: in the background while a guest runs:
# each line "ZSTEST_HOST resize DEVICE BYTES" the guest prints is
# answered once by setting that virtio-mem device's requested size over
# QMP. Ends with the guest's end marker; OUT logs each request and QMP's
# replies.
km_host_requests() {
	local log=$1 sock=$2 out=$3 done=0 n line dev size
	: > "$out"
	while :; do
		n=$({ tr -d '\r' < "$log"; } 2> /dev/null | grep -c '^ZSTEST_HOST ')
		while [ "$done" -lt "$n" ]; do
			done=$((done + 1))
			line=$({ tr -d '\r' < "$log"; } 2> /dev/null | grep '^ZSTEST_HOST ' | sed -n "${done}p")
			set -- $line
			[ "$2" = resize ] || continue
			dev=$3 size=$4
			echo "request $done: $dev requested-size $size" >> "$out"
			km_qmp "$sock" "{\"execute\":\"qom-set\",\"arguments\":{\"path\":\"$dev\",\"property\":\"requested-size\",\"value\":$size}}" >> "$out" 2>&1
		done
		{ tr -d '\r' < "$log"; } 2> /dev/null | grep -q '^ZSTEST_END' && return
		sleep 0.3
	done
}

# km_torture ROOT KVER KO LOG SECONDS SEED [CYCLE]: boots the torture guest
# (testbed/guest-torture.sh) for SECONDS of torture with SEED, rmmod and
# insmod every CYCLE seconds (default 20): node 0 with 1 GiB of boot
# memory behind a 256 MiB direct-mapped cache, a 512 MiB DIMM for
# ZONE_MOVABLE, a 1 GiB DIMM for the kernel zone (1 GiB pages) and a
# 512 MiB virtio-mem device whose size the guest asks the host to change.
# KM_TORTURE_APPEND adds kernel command-line words (debug kernels:
# page_owner=on). Returns 0 when the guest reached its end marker.
km_torture() {
	local root=$1 kver=$2 ko=$3 log=$4 secs=$5 seed=$6 cycle=${7:-20} initrd sock watcher rc
	initrd=${log%.log}.cpio.gz
	sock=${log%.log}.qmp
	rm -f "$log" "$sock"
	KM_ROOT=$root KM_KERNEL_MODS="virtio_pci virtio_mem" km_initramfs "$initrd" "$kver" "$ko" \
		"$ZS_SRCDIR/testbed/guest-torture.sh" || return 1
	KM_MEM_OPTS=",slots=4,maxmem=8G"
	KM_QEMU_ARGS=(-object memory-backend-ram,id=dm,size=512M -device pc-dimm,id=dimmm,memdev=dm,node=0
		-object memory-backend-ram,id=dg,size=1G -device pc-dimm,id=dimmg,memdev=dg,node=0
		-object memory-backend-ram,id=vmm,size=512M
		-device virtio-mem-pci,id=vm0,memdev=vmm,node=0,requested-size=512M
		-qmp "unix:$sock,server=on,wait=off")
	km_host_requests "$log" "$sock" "${log%.log}.host" &
	watcher=$!
	KM_APPEND="memhp_default_state=offline ZS_TORTURE_S=$secs ZS_SEED=$seed ZS_CYCLE_S=$cycle ${KM_TORTURE_APPEND:-}" \
		km_boot "$root" "$kver" "$initrd" "$log" 1G:256M 2 $((secs * 3 + 900))
	rc=$?
	wait "$watcher"
	unset KM_MEM_OPTS KM_QEMU_ARGS
	return $rc
}

# km_torture_reports LOG: the kernel's reports in a torture guest's log,
# one line each: KASAN, lockdep, DEBUG_VM, list debugging, slab debugging,
# kmemleak (those naming the module), hung tasks, soft lockups, RCU
# stalls, warnings, oopses, bad pages.
km_torture_reports() {
	km_lines "$1" dmesg_all | grep -E 'BUG: KASAN|KASAN:|possible circular locking|possible recursive locking|inconsistent lock state|lock held when returning|bad unlock balance|sleeping function called from invalid|VM_BUG_ON|kernel BUG at|list_add corruption|list_del corruption|list_debug|BUG [a-z_-]+ \(|Poison overwritten|Redzone|blocked for more than|soft lockup|hard LOCKUP|rcu.*stall|WARNING:|Oops|general protection|Bad page|unable to handle'
	[ "$(km_get "$1" kmemleak_zonesort)" = "" ] || [ "$(km_get "$1" kmemleak_zonesort)" = 0 ] ||
		echo "kmemleak: $(km_get "$1" kmemleak_zonesort) unreferenced object(s) allocated by the module"
}

# km_torture_check SERIES LOG: the pass criteria of a torture run, as TAP
# results. Free memory (MemFree and the per-CPU lists' pages) after the
# final release and rmmod within 16 MiB of its value before that load
# (what the guest's shell and the kernel's own caches move meanwhile);
# Balloon, offline pages and (debug kernels) pages page_owner says the
# module allocated back to their values.
km_torture_check() {
	local s=$1 log=$2 g
	g() { km_get "$log" "$1"; }
	ok "$s: the torture guest reached its end marker (seed $(g seed), $(g torture_s) s)" \
		grep -q '^ZSTEST_END rc=0' <(tr -d '\r' < "$log") || {
		tr -d '\r' < "$log" | grep -E '^ZSTEST_FAIL|Kernel panic|BUG|Oops' | head -10 | sed 's/^/# /'
		tr -d '\r' < "$log" | tail -30 | sed 's/^/# /'
		return 1
	}
	is "$(km_failed_steps "$log")" "" "$s: every guest step exited 0"
	diag "$s: $(g cycles) rmmod/insmod cycles, $(g actions) worker actions (sorter $(g actions_sorter), hotplug $(g actions_hotplug), vmem $(g actions_vmem), huge $(g actions_huge), pressure $(g actions_pressure), ager $(g actions_ager), toggles $(g actions_toggles), compactor $(g actions_compactor), occupier $(g actions_occupier))"
	cmp_ok "$(g rmmods)" -ge 2 "$s: rmmod ran under load ($(g rmmods) times)"
	cmp_ok "$(g actions_occupier)" -ge 1 "$s: occupied bitmaps were written during the torture ($(g actions_occupier))"
	is "$(g end_occupied) $(g end_occupied_slots)" "ok_bytes=8192 16384" \
		"$s: after it, a bitmap of a quarter of the 65536 slots reached the next sort"
	cmp_ok "$(g rmmod_cs_max)" -le 1000 "$s: every rmmod returned within 10 s (longest $(g rmmod_cs_max) cs)"
	is "$(g rmmod_held_cs | tr , '\n' | grep -c .)" "$(g cycles)" "$s: each cycle's rmmod recorded with the pages it gave back"
	if [ -n "$(g max_permille_cap)" ]; then
		# The guest's cache: 256 MiB, 65536 pages (km_torture).
		local most
		most=$(g rmmod_held_cs | tr , '\n' | cut -d: -f1 | sort -n | tail -1)
		cmp_ok "${most:-0}" -le $(($(g max_permille_cap) * 65536 / 1000)) \
			"$s: no rmmod had more to give back than the ceiling of $(g max_permille_cap) per mille of the cache (most ${most:-0} pages)"
	fi
	# Whether the torture reached the holding code at all: the module's
	# count of pages taken (the sorter's samples right after its own
	# sorts miss pages that pressure, releases and isolation gave back
	# in between).
	diag "$s: sorts $(g sort_results); $(g sorts_holding) left pages held, at most $(g sort_held_max)"
	cmp_ok "$(g torture_taken_pages)" -gt 0 "$s: the quarantine took pages during the torture ($(g torture_taken_pages), the module's count over its loads)"
	cmp_ok "$(g end_held_pages)" -gt 0 "$s: the final sorts held pages ($(g end_held_pages))"
	is "$(g end_released_pages)/$(g end_released_blocks)" 0/0 "$s: ... and release left nothing held"
	num_ok "$s: free memory (MemFree and per-CPU lists) after release and rmmod within 16 MiB of before the load ($(g base_memfree_kb) -> $(g after_memfree_kb) kB)" \
		"$(g after_memfree_kb) - $(g base_memfree_kb) >= -16384 && $(g after_memfree_kb) - $(g base_memfree_kb) <= 16384"
	is "$(g after_memtotal_kb)" "$(g base_memtotal_kb)" "$s: ... with the same MemTotal"
	is "$(g after_offline_pages)" "$(g base_offline_pages)" "$s: no page left offline (kpageflags: balloon pages)"
	if [ -n "$(g base_balloon_kb)" ]; then
		is "$(g after_balloon_kb)" "$(g base_balloon_kb)" "$s: Balloon back to $(g base_balloon_kb) kB"
	fi
	num_ok "$s: KReclaimable back within 4 MiB ($(g base_kreclaimable_kb) -> $(g after_kreclaimable_kb) kB)" \
		"$(g after_kreclaimable_kb) - $(g base_kreclaimable_kb) <= 4096"
	if [ "$(g page_owner)" = 1 ]; then
		is "$(g page_owner_zonesort)" 0 "$s: page_owner: no page allocated by the module after release" ||
			km_lines "$log" page_owner_ours | head -60 | sed 's/^/#   /'
	fi
	is "$(km_torture_reports "$log")" "" "$s: no KASAN, lockdep, DEBUG_VM, list, slab or kmemleak report, hung task, soft lockup, stall, warning or oops"
}
