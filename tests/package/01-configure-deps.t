#!/bin/bash
# configure stops with a message that names the package to install, for
# Debian and for RHEL, when a build dependency is missing. hwloc is hidden
# for real (pkg-config looks in an empty directory); numa.h, libnuma,
# slurm/spank.h and OpenMP are present on this machine, so their absence
# is simulated with autoconf's cache variables, which make configure
# believe its check failed.
set -u
source "$(dirname "$0")/../lib/tap.sh"
source "$(dirname "$0")/../lib/env.sh"
need_file "$ZS_SRCDIR/configure" "configure script (scripts/build runs autoreconf)"

work=$(mktemp -d /tmp/zs-pkg01.XXXXXX)
trap 'rm -rf "$work"' EXIT

# try DESCRIPTION ENV... : runs configure in a fresh directory with ENV;
# sets RC and OUT (its stdout and stderr).
try() {
	local d
	d=$(mktemp -d "$work/c.XXXXXX")
	OUT=$(cd "$d" && env "$@" "$ZS_SRCDIR/configure" -q 2>&1)
	RC=$?
}

# expect WHAT DEBIAN RHEL ENV...: configure must fail and name both packages.
expect() {
	local what=$1 deb=$2 rhel=$3; shift 3
	try "$@"
	cmp_ok "$RC" -ne 0 "$what missing: configure fails"
	local last
	last=$(printf '%s\n' "$OUT" | grep -E '^configure: error:' | tail -1)
	like "$last" "^configure: error: .*$what" "$what missing: the error names what is missing"
	like "$last" "$deb" "$what missing: the error names the Debian package $deb"
	like "$last" "$rhel" "$what missing: the error names the RHEL package $rhel"
}

expect hwloc 'libhwloc-dev' 'hwloc-devel' PKG_CONFIG_LIBDIR=/nonexistent
expect numa.h 'libnuma-dev' 'numactl-devel' ac_cv_header_numa_h=no
expect libnuma 'libnuma-dev' 'numactl-devel' ac_cv_lib_numa_numa_available=no
expect spank.h 'libslurm-dev' 'slurm-devel' ac_cv_header_slurm_spank_h=no
expect OpenMP 'libgomp1' 'libgomp' ac_cv_prog_c_openmp=unsupported

try
is "$RC" 0 "configure succeeds with every dependency present (control)"

# --without-slurm is refused with a reason, not silently accepted.
d=$(mktemp -d "$work/c.XXXXXX")
out=$(cd "$d" && "$ZS_SRCDIR/configure" -q --without-slurm 2>&1)
rc=$?
cmp_ok "$rc" -ne 0 "--without-slurm: configure fails"
like "$out" 'configure: error: .*SPANK plugin needs Slurm' "--without-slurm: the error says why"
done_testing
