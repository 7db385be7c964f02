#!/bin/bash
# zonesort.ko builds without warnings against every installed Debian
# kernel series the project supports (6.1: Debian 12's linux-headers-amd64;
# 6.12: bookworm's linux-headers-6.12-amd64), is GPL, has the parameters
# the zonesort command passes, and kmod/dkms.conf matches the project.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/env.sh"
. "$(dirname "$0")/vm.sh"
need make gcc modinfo

for series in 6.1 6.12; do
	kver=$(km_kver "$series")
	if [ -z "$kver" ]; then
		_tap_result 1 "Debian $series kernel image and headers installed (scripts/debian-packages.kmod)"
		continue
	fi
	ko=$(km_build "$kver")
	ok "zonesort.ko builds for $kver" test -n "$ko" -a -f "$ko" || continue
	log=$KM_WORK/build-$kver/build.log
	warnings=$(grep -iE 'warning|error' "$log" | grep -v 'Skipping BTF generation')
	is "$warnings" "" "no compiler warnings for $kver"
	is "$(modinfo -F vermagic "$ko" | cut -d' ' -f1)" "$kver" "vermagic names $kver"
	is "$(modinfo -F license "$ko")" GPL "licence GPL"
	is "$(modinfo -F version "$ko")" "$(sed -n 's/^AC_INIT(\[zonesort\], \[\([^]]*\)\].*/\1/p' "$ZS_SRCDIR/configure.ac")" \
		"module version matches configure.ac"
	params=$(modinfo -F parm "$ko")
	like "$params" "^cache_size:" "parameter cache_size"
	like "$params" "ways:" "parameter ways"
	# Strict build: the kernel's extra warnings (W=1) on our code.
	dir=$KM_WORK/build-$kver
	make -C "/lib/modules/$kver/build" M="$dir" W=1 clean > /dev/null 2>&1
	make -C "/lib/modules/$kver/build" M="$dir" W=1 modules > "$dir/w1.log" 2>&1
	is "$(grep -E 'zonesort_[a-z_]*\.c:.*warning' "$dir/w1.log")" "" "no W=1 warnings in our sources for $kver"
done

# The module Makefile takes the kernel version from KVER (the host here
# runs a kernel without modules).
like "$(grep -E '^KVER \?=' "$ZS_SRCDIR/kmod/Makefile")" "KVER" "kmod/Makefile takes KVER"
d=$ZS_SRCDIR/kmod/dkms.conf
is "$(sed -n 's/^PACKAGE_NAME="\(.*\)"/\1/p' "$d")" zonesort "dkms.conf PACKAGE_NAME"
is "$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$d")" \
	"$(sed -n 's/^AC_INIT(\[zonesort\], \[\([^]]*\)\].*/\1/p' "$ZS_SRCDIR/configure.ac")" "dkms.conf version matches configure.ac"
is "$(sed -n 's/^AUTOINSTALL="\(.*\)"/\1/p' "$d")" yes "dkms.conf AUTOINSTALL"
is "$(sed -n 's/^BUILT_MODULE_NAME\[0\]="\(.*\)"/\1/p' "$d")" zonesort "dkms.conf builds zonesort.ko"

# DKMS builds it from kmod/ as shipped, in a private DKMS tree.
kver=$(km_kver 6.1)
if command -v dkms > /dev/null && [ -n "$kver" ]; then
	dk=$KM_WORK/dkms
	rm -rf "$dk"
	mkdir -p "$dk/src/zonesort-0.1.0" "$dk/tree"
	cp "$ZS_SRCDIR"/kmod/* "$dk/src/zonesort-0.1.0/"
	dkms --dkmstree "$dk/tree" --sourcetree "$dk/src" build -m zonesort -v 0.1.0 -k "$kver" \
		> "$dk/build.log" 2>&1
	ok "dkms build -m zonesort -v 0.1.0 -k $kver makes zonesort.ko (log $dk/build.log)" \
		test -f "$dk/tree/zonesort/0.1.0/$kver/x86_64/module/zonesort.ko"
else
	_tap_result 1 "dkms and a 6.1 kernel installed (scripts/debian-packages.kmod)"
fi
done_testing
