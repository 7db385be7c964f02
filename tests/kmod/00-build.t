#!/bin/bash
# zonesort.ko builds without warnings (W=1) against every kernel series the
# project tests: Debian 12's 6.1 and bookworm's 6.12 on the host, sid's
# 7.x inside the sid release root with sid's own compiler (the test fails
# naming what is missing when that root is not there). It is GPL, has the
# parameters the zonesort command passes, finds the per-CPU list lock by
# compiling a probe rather than by version (and a probe that cannot build
# is reported missing, as is one whose functions the kernel does not
# export), builds the quarantine with the way of holding
# pages each kernel offers and the shrinker registration it has (probed,
# not taken from the version), stops loudly when the probe command itself
# is broken (the positive control), refuses kernels outside the tested
# range, and the dkms.conf configure makes matches the project, keeps
# weak-modules away and limits DKMS to that range.
. "$(dirname "$0")/../../testbed/tap.sh"
. "$(dirname "$0")/../../testbed/env.sh"
. "$(dirname "$0")/../../testbed/vm.sh"
need make gcc modinfo unshare

version=$(sed -n 's/^AC_INIT(\[zonesort\], \[\([^]]*\)\].*/\1/p' "$ZS_SRCDIR/configure.ac")
for series in 6.1 6.12 7; do
	km_series_root "$series" || continue
	root=$KM_SERIES_ROOT
	kver=$(km_kver "$series" "$root")
	if [ -z "$kver" ]; then
		_tap_result 1 "Linux $series image and headers installed in '${root:-/}' (scripts/debian-packages.kmod, scripts/release-packages.sid)"
		continue
	fi
	ko=$(km_build "$root" "$kver")
	ok "zonesort.ko builds for $kver${root:+ in $root}" test -n "$ko" -a -f "$ko" || continue
	dir=$(dirname "$ko")
	is "$(grep -E 'warning|error' "$dir/build.log" | grep -v 'Skipping BTF generation')" "" \
		"no compiler warnings for $kver with W=1"
	is "$(modinfo -F vermagic "$ko" | cut -d' ' -f1)" "$kver" "vermagic names $kver"
	is "$(modinfo -F license "$ko")" GPL "licence GPL"
	is "$(modinfo -F version "$ko")" "$version" "module version matches configure.ac"
	params=$(modinfo -F parm "$ko")
	like "$params" "^cache_size:" "parameter cache_size"
	like "$params" "ways:" "parameter ways"
	# The quarantine holds its blocks as pages marked movable with the
	# module's operations up to 6.x (Debian's 6.1 and 6.12) and as balloon
	# pages on 7.x, where those operations are gone; it is built on both.
	case $series in
	6.*) hold=ZS_HOLD_MOVABLE ;;
	*) hold=ZS_HOLD_BALLOON ;;
	esac
	like "$(cat "$dir/.zonesort_main.o.cmd")" "-DZS_HAVE_QUARANTINE" "the probes find what the quarantine needs in $kver"
	like "$(cat "$dir/.zonesort_quarantine.o.cmd")" "-D$hold " "... holding blocks the $kver way ($hold)"
	# register_shrinker() takes a name from 6.0 (and in RHEL 9.3's
	# 5.14); 6.7 replaced it by shrinker_alloc().
	case $series in
	6.1) like "$(cat "$dir/.zonesort_quarantine.o.cmd")" "-DZS_HAVE_SHRINKER_NAME" \
		"the probe finds register_shrinker() with a name in $kver" ;;
	*) unlike "$(cat "$dir/.zonesort_quarantine.o.cmd")" "-DZS_HAVE_SHRINKER_NAME" \
		"the probe finds no register_shrinker() in $kver (shrinker_alloc() instead)" ;;
	esac
	like "$params" "quarantine:" "parameter quarantine"
	like "$params" "quarantine_max_permille:" "parameter quarantine_max_permille"
	unlike "$params" "quarantine_permille:" "no quarantine_permille: the maximum is the one bound"
	unlike "$params" "test_" "no test hooks in the module as shipped"
	like "$(cat "$dir/.zonesort_main.o.cmd")" "-DZS_HAVE_PCP_LOCK" \
		"the probe finds the per-CPU list lock of $kver"
done

# The probe mechanism tells a missing member from a present one.
kver=$(km_kver 6.1)
if [ -n "$kver" ]; then
	ko=$(km_build "" "$kver" "selfcheck-$kver" ZS_CONFTEST_SELFCHECK=y)
	ok "build with the probe self-check" test -n "$ko"
	unlike "$(cat "$KM_WORK/selfcheck-$kver/.zonesort_main.o.cmd")" "ZS_CONFTEST_SELFCHECK_BUILT" \
		"a probe for a member no kernel has is reported missing"
	# Positive control: a probe command that cannot compile anything
	# (a forced header that is missing, a flag the compiler refuses)
	# must stop the build with the compiler's complaint, not build a
	# module whose every probe "failed".
	for broken in "-include zonesort-no-such-header.h:zonesort-no-such-header.h" \
		"-fzonesort-no-such-flag:zonesort-no-such-flag"; do
		flags=${broken%%:*}
		ko=$(km_build "" "$kver" "control-$kver" "ZS_CONFTEST_CFLAGS=$flags" 2> /dev/null)
		is "$ko" "" "probes given $flags: no module is built"
		like "$(cat "$KM_WORK/control-$kver/build.log")" \
			"conftest-control\.c, which every supported kernel .* builds.*${broken##*:}" \
			"... the build stops naming the positive control and the compiler's complaint"
	done
	# A probe that compiles is not enough: the kernel must export what
	# the feature calls (a backport can declare without exporting, and
	# modpost would stop the build). With a Module.symvers that lacks
	# __SetPageMovable the movable-page hold is reported missing, and
	# with none at all the build stops naming the file.
	grep -vE '[[:space:]]__SetPageMovable[[:space:]]' "/lib/modules/$kver/build/Module.symvers" > "$KM_WORK/symvers-no-movable"
	ko=$(km_build "" "$kver" "symvers-$kver" "ZS_SYMVERS=$KM_WORK/symvers-no-movable")
	ok "build against a Module.symvers without __SetPageMovable" test -n "$ko"
	unlike "$(cat "$KM_WORK/symvers-$kver/.zonesort_main.o.cmd")" "ZS_HOLD_MOVABLE|ZS_HAVE_QUARANTINE" \
		"... the movable-page hold is reported missing though its probe compiles (no quarantine)"
	ko=$(km_build "" "$kver" "nosymvers-$kver" "ZS_SYMVERS=$KM_WORK/no-such-Module.symvers" 2> /dev/null)
	is "$ko" "" "without Module.symvers no module is built"
	like "$(cat "$KM_WORK/nosymvers-$kver/build.log")" "no-such-Module.symvers does not list what every supported kernel exports" \
		"... the build stops naming the file"
	ko=$(km_build "" "$kver" "hooks-$kver" ZS_TEST_HOOKS=y)
	ok "the test build with hooks builds warning-free too" test -n "$ko"
	is "$(grep -E 'warning|error' "$KM_WORK/hooks-$kver/build.log" | grep -v 'Skipping BTF generation')" "" \
		"... (W=1)"
fi

# Kernels outside the tested range are refused at build time.
fake=$KM_WORK/fake-version
mkdir -p "$fake/linux"
for v in "4 18 0:refused" "5 10 0:refused" "5 14 0:built" "6 1 0:built" "7 2 13:built" "7 3 0:refused" "8 0 0:refused"; do
	set -- ${v%%:*}
	printf '#define KERNEL_VERSION(a, b, c) (((a) << 16) + ((b) << 8) + ((c) > 255 ? 255 : (c)))\n#define LINUX_VERSION_CODE KERNEL_VERSION(%s, %s, %s)\n' \
		"$1" "$2" "$3" > "$fake/linux/version.h"
	if gcc -fsyntax-only -I "$fake" -x c "$ZS_SRCDIR/kmod/zonesort_range.h" 2> "$fake/err"; then
		got=built
	else
		got=refused
	fi
	is "$got" "${v##*:}" "Linux $1.$2.$3: $got by the tested-range check$(grep -o '#error.*' "$fake/err" | head -1 | sed 's/^/: /')"
done

# The module Makefile takes the kernel version from KVER (the host here
# runs a kernel without modules).
like "$(grep -E '^KVER \?=' "$ZS_SRCDIR/kmod/Makefile")" "KVER" "kmod/Makefile takes KVER"
# dkms.conf is made by configure from dkms.conf.in: its version is the
# package's, never one written into the template.
d=$ZS_BUILDDIR/kmod/dkms.conf
need_file "$d" "kmod/dkms.conf made by configure (scripts/build)"
is "$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$ZS_SRCDIR/kmod/dkms.conf.in")" "@PACKAGE_VERSION@" \
	"dkms.conf.in takes its version from configure"
is "$(sed -n 's/^PACKAGE_NAME="\(.*\)"/\1/p' "$d")" zonesort "dkms.conf PACKAGE_NAME"
is "$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$d")" "$version" "dkms.conf version matches configure.ac"
# weak-modules (RHEL family) would link a build into other kernels whose
# symbol checksums match; they do not cover the layouts the module reads.
is "$(sed -n 's/^NO_WEAK_MODULES="\(.*\)"/\1/p' "$d")" yes "dkms.conf NO_WEAK_MODULES"
is "$(sed -n 's/^AUTOINSTALL="\(.*\)"/\1/p' "$d")" yes "dkms.conf AUTOINSTALL"
is "$(sed -n 's/^BUILT_MODULE_NAME\[0\]="\(.*\)"/\1/p' "$d")" zonesort "dkms.conf builds zonesort.ko"
# DKMS matches BUILD_EXCLUSIVE_KERNEL against the kernel release as an
# extended regular expression.
excl=$(sed -n 's/^BUILD_EXCLUSIVE_KERNEL="\(.*\)"/\1/p' "$d")
ok "dkms.conf has BUILD_EXCLUSIVE_KERNEL" test -n "$excl"
for k in 5.14.0-427.13.1.el9_4.x86_64 6.12.0-55.9.1.el10_0.x86_64 6.1.0-56-amd64 6.12.117+deb12-amd64 7.0.1-amd64 7.2.13+deb14-amd64; do
	ok "DKMS builds for $k" bash -c '[[ $1 =~ $2 ]]' _ "$k" "$excl"
done
for k in 4.18.0-553.el8_10.x86_64 5.10.0-30-amd64 5.4.0-150-generic 7.3.0-amd64 7.10.2-amd64 8.0.0; do
	fails "DKMS skips $k" bash -c '[[ $1 =~ $2 ]]' _ "$k" "$excl"
done

# DKMS builds it from kmod/ as shipped, in a private DKMS tree.
kver=$(km_kver 6.1)
if command -v dkms > /dev/null && [ -n "$kver" ]; then
	dk=$KM_WORK/dkms
	rm -rf "$dk"
	mkdir -p "$dk/src/zonesort-$version" "$dk/tree"
	cp "$ZS_SRCDIR"/kmod/* "$d" "$dk/src/zonesort-$version/"
	dkms --dkmstree "$dk/tree" --sourcetree "$dk/src" build -m zonesort -v "$version" -k "$kver" \
		> "$dk/build.log" 2>&1
	ok "dkms build -m zonesort -v $version -k $kver makes zonesort.ko (log $dk/build.log)" \
		test -f "$dk/tree/zonesort/$version/$kver/x86_64/module/zonesort.ko"
else
	_tap_result 1 "dkms and a 6.1 kernel installed (scripts/debian-packages.kmod)"
fi
done_testing
