# Helpers for the kmod tests: build zonesort.ko for an installed Debian
# kernel, pack a busybox initramfs with the module, the static test program
# (zstest), the project's zonesort command and its libraries, and boot it
# in QEMU (TCG: /dev/kvm hangs guests on this machine) with a memory-side
# cache described to the guest through ACPI HMAT. Source after tap.sh and
# env.sh.
#
# QEMU exits 0 even when the guest panics: results come only from markers
# the guest prints on its serial console ("ZSTEST key=value", "ZSTEST_END").

KM_WORK=${KM_WORK:-$ZS_BUILDDIR/kmod-test}

# km_kver SERIES: the newest installed kernel of a series ("6.1", "6.12")
# that has both an image in /boot and a build tree.
km_kver() {
	local v best=
	for v in /boot/vmlinuz-"$1".*; do
		[ -e "$v" ] || continue
		v=${v#/boot/vmlinuz-}
		[ -d "/lib/modules/$v/build" ] && best=$v
	done
	printf '%s' "$best"
}

# km_build KVER: builds kmod/ for KVER in $KM_WORK/build-KVER (a copy, so
# the source tree stays clean); log in build.log there. Prints the .ko path.
km_build() {
	local kver=$1 dir=$KM_WORK/build-$1
	rm -rf "$dir"
	mkdir -p "$dir"
	cp "$ZS_SRCDIR"/kmod/Kbuild "$ZS_SRCDIR"/kmod/Makefile "$ZS_SRCDIR"/kmod/*.c \
		"$ZS_SRCDIR"/kmod/*.h "$dir"/ || return 1
	if ! make -C "$dir" KVER="$kver" > "$dir/build.log" 2>&1; then
		tail -20 "$dir/build.log" >&2
		return 1
	fi
	printf '%s' "$dir/zonesort.ko"
}

# km_zstest: builds the static guest program; prints its path.
km_zstest() {
	local out=$KM_WORK/zstest
	mkdir -p "$KM_WORK"
	if [ ! -x "$out" ] || [ "$ZS_SRCDIR/tests/kmod/zstest.c" -nt "$out" ]; then
		gcc -std=gnu11 -O2 -Wall -Wextra -static -o "$out" "$ZS_SRCDIR/tests/kmod/zstest.c" >&2 ||
			return 1
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

# km_initramfs OUT KVER KO GUEST_SCRIPT: the initramfs. The module goes to
# /lib/modules/KVER/extra (modprobe finds it; also /zonesort.ko for
# insmod), the guest script to /test.sh, which /init runs and whose exit
# status it prints in the final marker.
km_initramfs() {
	local out=$1 kver=$2 ko=$3 script=$4 root zstest
	root=$(mktemp -d "$KM_WORK/root.XXXXXX") || return 1
	zstest=$(km_zstest) || return 1
	mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,proc,sys,dev,tmp,run,var,etc,root} \
		"$root/lib/modules/$kver/extra"
	cp /bin/busybox "$root/bin/busybox" || return 1
	cp "$ko" "$root/lib/modules/$kver/extra/zonesort.ko"
	cp "$ko" "$root/zonesort.ko"
	printf 'extra/zonesort.ko:\n' > "$root/lib/modules/$kver/modules.dep"
	cp "$zstest" "$root/bin/zstest"
	km_copy_bin "$root" "$ZS_ZONESORT" /usr/sbin/zonesort || return 1
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

# km_boot KVER INITRD LOG [CACHE] [MEM] [SMP] [TIMEOUT]: boots the guest;
# CACHE is the HMAT memory-side cache size for node 0 (e.g. 256M), or
# "none" for a machine without HMAT. Returns 0 when the guest reached its
# end marker. KM_QEMU_ARGS (an array) adds QEMU arguments, e.g. devices.
km_boot() {
	local kver=$1 initrd=$2 log=$3 cache=${4:-256M} mem=${5:-1G} smp=${6:-2} limit=${7:-600}
	local -a numa=()
	if [ "$cache" != none ]; then
		numa=(-machine pc,hmat=on
			-object "memory-backend-ram,id=m0,size=$mem"
			-numa "node,nodeid=0,cpus=0-$((smp - 1)),memdev=m0"
			-numa hmat-lb,initiator=0,target=0,hierarchy=memory,data-type=access-latency,latency=100
			-numa hmat-lb,initiator=0,target=0,hierarchy=memory,data-type=access-bandwidth,bandwidth=10G
			-numa "hmat-cache,node-id=0,size=$cache,level=1,associativity=direct,policy=write-back,line=64")
	else
		numa=(-machine pc)
	fi
	timeout --kill-after=10 "$limit" qemu-system-x86_64 -accel tcg -cpu max -smp "$smp" -m "$mem" \
		"${numa[@]}" ${KM_QEMU_ARGS[@]+"${KM_QEMU_ARGS[@]}"} -nographic -no-reboot -kernel "/boot/vmlinuz-$kver" -initrd "$initrd" \
		-append "console=ttyS0 panic=-1 quiet loglevel=4 ${KM_APPEND:-}" < /dev/null > "$log" 2>&1
	grep -q '^ZSTEST_END' "$log"
}

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

# km_dmesg_bad LOG: kernel log lines (printed by the guest between
# ZSTEST_BEGIN/DONE dmesg_all) that show a warning, a bug, an oops, list
# corruption, a lockup or a stall.
km_dmesg_bad() {
	km_lines "$1" dmesg_all | grep -E 'WARNING:|BUG:|Oops|general protection|corruption|Bad page|soft lockup|hung_task|hung task|rcu.*stall|Call Trace'
}
