# Helpers for the cache-node tests and benches: a QEMU guest (TCG) with a
# direct-mapped memory-side cache described by ACPI HMAT that runs the
# Debian programs (munged, slurmctld, slurmd, hwloc, kmod) of a root file
# system shared read-only over virtio-9p, the project as "make install"
# put it, and the module built for the guest's kernel where modprobe
# looks. The root is the host's own for its kernels (6.1, 6.12: Debian 12,
# Slurm 22.05), or a release root (scripts/release-root sid: Linux 7.x,
# Slurm 26.05) with the project built inside it against that release.
# Source after tap.sh, env.sh and testbed/vm.sh.
#
#   nd_prepare KVER [ROOT]
#                         stage the installed project and the module tree
#                         for KVER (of ROOT when given), pack the
#                         initramfs; sets ND_INITRD and ND_ROOT
#   nd_boot KVER LOG CACHE MEM SMP TIMEOUT SCRIPT [VAR=VALUE...]
#                         boots the guest, runs SCRIPT (a bash file on the
#                         host's file system) there with the variables in
#                         its environment; 0 when the guest reached its end
#                         marker. ND_APPEND adds kernel parameters. Holds flock $ZS_QEMU_LOCK while QEMU runs
#                         when that variable names a lock file. With
#                         ND_MONITOR=PATH, QEMU's monitor listens there
#                         (nd_monitor PATH stop|cont pauses and resumes).
#                         ND_QEMU_ARGS, an array, adds QEMU arguments.
#
# QEMU exits 0 even when the guest panics: results come only from markers
# on the serial console (km_get, km_lines, and ZSTEST_END rc=N).

ND_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ND_WORK=${ND_WORK:-$ZS_BUILDDIR/node-test}

# The kernel modules the guest needs before it can mount its root.
ND_BOOT_MODULES="virtio_pci 9pnet_virtio 9p overlay"

# nd_stage [ROOT]: installs the build into $ND_WORK/stage (DESTDIR), as a
# package would lay it out; the guest sees it over its /usr. With a ROOT,
# a copy of the source tree is configured, built and installed inside it
# (chroot in a mount namespace of its own, ROOT left untouched), so the
# plugin and the tools are that release's: its Slurm headers, hwloc and C
# library.
nd_stage() {
	local root=${1:-}
	rm -rf "$ND_WORK/stage"
	mkdir -p "$ND_WORK"
	if [ -z "$root" ]; then
		make -C "$ZS_BUILDDIR" -s install DESTDIR="$ND_WORK/stage" > "$ND_WORK/install.log" 2>&1
	else
		_nd_stage_in_root "$root" > "$ND_WORK/install.log" 2>&1
	fi || {
		tail -20 "$ND_WORK/install.log" >&2
		return 1
	}
}
_nd_stage_in_root() {
	local root=$1
	rm -rf "$ND_WORK/root-src" "$ND_WORK/root-build"
	mkdir -p "$ND_WORK/root-src" || return 1
	(cd "$ZS_SRCDIR" && git ls-files -co --exclude-standard -z |
		grep -zv '^\(test-results\|build[^/]*\)/' | tar --null -T - -cf -) |
		tar -xf - -C "$ND_WORK/root-src" || return 1
	unshare --mount --propagation private sh -c '
		root=$1 work=$2
		mount --bind /proc "$root/proc" && mount --bind /dev "$root/dev" &&
			mount -t tmpfs tmpfs "$root/tmp" && mount --bind "$work" "$root/mnt" &&
			exec chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
			LANG=C.UTF-8 sh -c "cd /mnt/root-src && scripts/build /mnt/root-build &&
				make -C /mnt/root-build -s install DESTDIR=/mnt/stage"' \
		nd_stage "$root" "$ND_WORK"
}

# nd_modtree KVER KO [ROOT]: $ND_WORK/mods-KVER/usr/lib/modules/KVER with
# KO in extra/ and module indexes made by depmod over ROOT's (the host's)
# tree for KVER, so "modprobe zonesort" in the guest finds it (the guest's
# /lib is /usr/lib).
nd_modtree() {
	local kver=$1 ko=$2 root=${3:-} top=$ND_WORK/mods-$1 dir
	dir=$top/usr/lib/modules/$kver
	rm -rf "$top"
	mkdir -p "$dir/extra" "$top/base/lib/modules"
	ln -s "$root/lib/modules/$kver/kernel" "$dir/kernel"
	cp "$root/lib/modules/$kver"/modules.{order,builtin,builtin.modinfo} "$dir"/ || return 1
	cp "$ko" "$dir/extra/zonesort.ko" || return 1
	ln -s "$dir" "$top/base/lib/modules/$kver"
	depmod -b "$top/base" "$kver" || return 1
	# Only what differs from the host's tree goes over it.
	rm -rf "$dir/kernel" "$top/base"
	grep -q '^extra/zonesort.ko:' "$dir/modules.dep"
}

# nd_initramfs KVER OUT [ROOT]: busybox, node-init, and the modules that
# mount the root (with their dependencies, uncompressed for busybox insmod),
# from ROOT's (the host's) tree for KVER.
nd_initramfs() {
	local kver=$1 out=$2 from=${3:-} root m path n=0
	root=$(mktemp -d "$ND_WORK/initramfs.XXXXXX") || return 1
	mkdir -p "$root"/{bin,proc,sys,dev,mnt,modules}
	cp /bin/busybox "$root/bin/busybox" || return 1
	cp "$ND_DIR/node-init" "$root/init" && chmod 755 "$root/init" || return 1
	: > "$root/modules/order"
	for m in $ND_BOOT_MODULES; do
		modprobe ${from:+-d "$from"} -S "$kver" --show-depends "$m" || return 1
	done | awk '$1 == "insmod" && !seen[$2]++ { print $2 }' > "$root/modules/paths" || return 1
	while read -r path; do
		n=$((n + 1))
		case $path in
		*.xz) xz -dc "$path" > "$root/modules/$n.ko" ;;
		*.zst) zstd -qdc "$path" > "$root/modules/$n.ko" ;;
		*) cp "$path" "$root/modules/$n.ko" ;;
		esac || return 1
		echo "$n.ko" >> "$root/modules/order"
	done < "$root/modules/paths"
	(cd "$root" && find . | cpio -o -H newc 2>/dev/null) | gzip -1 > "$out"
	local rc=$?
	rm -rf "$root"
	return $rc
}

# nd_prepare KVER [ROOT]: everything a boot of KVER (a kernel of ROOT, or
# of the host) needs; sets ND_INITRD, ND_KO and ND_ROOT. With ND_HOOKS=1
# the module is a test build (its debugfs free-list dump). Fails with a
# message naming what is missing.
nd_prepare() {
	local kver=$1
	ND_ROOT=${2:-}
	ND_KO=$(km_build "$ND_ROOT" "$kver" ${ND_HOOKS:+"hooks-$kver" ZS_TEST_HOOKS=y}) && [ -n "$ND_KO" ] || {
		echo "# module build for $kver failed (see $KM_WORK/*-$kver/build.log)" >&2
		return 1
	}
	nd_modtree "$kver" "$ND_KO" "$ND_ROOT" || { echo "# depmod for $kver failed" >&2; return 1; }
	nd_stage "$ND_ROOT" || { echo "# make install DESTDIR${ND_ROOT:+ inside $ND_ROOT} failed (see $ND_WORK/install.log)" >&2; return 1; }
	ND_INITRD=$ND_WORK/initrd-$kver.cpio.gz
	nd_initramfs "$kver" "$ND_INITRD" "$ND_ROOT" || { echo "# initramfs for $kver failed" >&2; return 1; }
}

# nd_setup SERIES: the host's newest kernel of SERIES ("6.1") staged for
# boots (nd_prepare); sets ND_KVER. Otherwise fails the test file, naming
# what is missing.
nd_setup() {
	ND_KVER=$(km_kver "$1")
	if [ -z "$ND_KVER" ]; then
		_tap_result 1 "a Debian $1 kernel with headers is installed (scripts/debian-packages.kmod)"
		done_testing
		exit 1
	fi
	ok "module, installed project and initramfs staged for $ND_KVER" nd_prepare "$ND_KVER" ||
		{ done_testing; exit 1; }
}

# nd_boot KVER LOG CACHE MEM SMP TIMEOUT SCRIPT [VAR=VALUE...]: the
# variables go to a file next to LOG that the guest sources (the kernel
# command line cannot carry spaces safely). The guest's root is ND_ROOT
# (nd_prepare), with the host's file system as a second share from which
# node-init binds this project's directories (ZS_HOSTFS).
nd_boot() {
	local kver=$1 log=$2 cache=$3 mem=$4 smp=$5 limit=$6 script=$7 kv
	shift 7
	local conf
	conf=$ND_WORK/$(basename "${log%.log}").conf
	{
		printf 'ZS_CACHE_BYTES=%q\n' "$(nd_bytes "$cache")"
		for kv in "$@"; do
			printf '%s=%q\n' "${kv%%=*}" "${kv#*=}"
		done
	} > "$conf"
	local share=security_model=none,readonly=on,multidevs=remap
	local -a KM_QEMU_ARGS=(-nic none -virtfs "local,path=${ND_ROOT:-/},mount_tag=hostroot,$share")
	[ -n "${ND_ROOT:-}" ] && KM_QEMU_ARGS+=(-virtfs "local,path=/,mount_tag=hostfs,$share")
	[ -n "${ND_MONITOR:-}" ] && KM_QEMU_ARGS+=(-monitor "unix:$ND_MONITOR,server=on,wait=off")
	# ND_QEMU_ARGS (an array): more QEMU arguments, a TCG plugin for one.
	[ -n "${ND_QEMU_ARGS+set}" ] && KM_QEMU_ARGS+=("${ND_QEMU_ARGS[@]}")
	# init_on_alloc=0: the module's per-CPU drain allocates one free buddy
	# block with alloc_contig_range(), which zeroes all of it when pages
	# are zeroed on allocation (Debian's default). In these TCG guests that
	# block (pfn 10240 on 6.1 in both runs whose registers were read)
	# zeroed at 0.6 to 7 s a page, which kept sorts on their CPU for
	# minutes (soft lockups of 26-190 s); zeroing 2 MiB takes well under a
	# millisecond on hardware. The node tests run kernels that do not zero
	# on allocation (ND_APPEND=init_on_alloc=1 restores Debian's default:
	# the last one given counts); the kmod tests keep Debian's default.
	local KM_APPEND="init_on_alloc=0 ${ND_APPEND:+$ND_APPEND }ZS_GUEST=$script ZS_GUEST_CONF=$conf ZS_STAGE=$ND_WORK/stage ZS_MODS=$ND_WORK/mods-$kver ZS_SRCDIR=$ZS_SRCDIR ZS_BUILDDIR=$ZS_BUILDDIR${ND_ROOT:+ ZS_HOSTFS=1}"
	local nodes="$mem:$cache"
	[ "$cache" = none ] && nodes="none:$mem"
	[ -n "${ZS_QEMU_LOCK:-}" ] && mkdir -p "$(dirname "$ZS_QEMU_LOCK")"
	km_boot "${ND_ROOT:-}" "$kver" "$ND_INITRD" "$log" "$nodes" "$smp" "$limit"
}

# nd_bytes SIZE: 256M, 1G or a byte count in bytes; 0 for "none".
nd_bytes() {
	case $1 in
	none) echo 0 ;;
	*[kK]) echo $(( ${1%?} << 10 )) ;;
	*M) echo $(( ${1%M} << 20 )) ;;
	*G) echo $(( ${1%G} << 30 )) ;;
	*) echo $(( $1 )) ;;
	esac
}

# nd_nodejob: builds the guest's job program; prints its path. Static when
# the guest runs another release's C library (ND_ROOT).
nd_nodejob() {
	local out=$ND_WORK/nodejob
	mkdir -p "$ND_WORK"
	gcc -std=gnu11 -O2 -Wall -Wextra ${ND_ROOT:+-static} -o "$out" "$ND_DIR/programs/nodejob.c" -lm >&2 || return 1
	printf '%s' "$out"
}

# nd_churnjob: builds the guest's churning job (programs/churnjob.c);
# prints its path. Static when the guest runs another release's C library.
nd_churnjob() {
	local out=$ND_WORK/churnjob
	mkdir -p "$ND_WORK"
	gcc -std=gnu11 -O2 -Wall -Wextra ${ND_ROOT:+-static} -o "$out" "$ND_DIR/programs/churnjob.c" -lm >&2 || return 1
	printf '%s' "$out"
}

# nd_monitor SOCKET COMMAND: one human-monitor command to a running QEMU.
# A paused guest's clocks stand still (TCG), so nothing inside notices.
nd_monitor() {
	python3 - "$1" "$2" <<'PY'
import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.settimeout(10)
s.connect(sys.argv[1])
s.recv(4096)
s.sendall((sys.argv[2] + "\n").encode())
time.sleep(0.5)
s.close()
PY
}
