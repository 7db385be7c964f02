#!/bin/bash
# configure stops with a message that names the package to install, for
# Debian and for RHEL, when a build dependency is missing or too old
# (hwloc before 2.1, Slurm before the tested 22.05). hwloc is hidden
# for real (pkg-config looks in an empty directory); numa.h, libnuma,
# slurm/spank.h and OpenMP are present on this machine, so their absence
# is simulated with autoconf's cache variables, which make configure
# believe its check failed.
set -u
source "$(dirname "$0")/../../testbed/tap.sh"
source "$(dirname "$0")/../../testbed/env.sh"
need_file "$ZS_SRCDIR/configure" "configure script (scripts/build runs autoreconf)"

work=$(mktemp -d /tmp/zs-pkg01.XXXXXX)
trap 'rm -rf "$work"' EXIT

# The compiler and C library checks every run repeats are answered from
# a cache file of one full run, and no case writes the Makefiles
# (--no-create): each checks what configure decided, nothing it made.
# The cache keeps none of what a case varies: pkg-config's, hwloc's,
# libnuma's, Slurm's and OpenMP's results, the project's own zs_cv_
# results and the recorded environment (ac_cv_env_*) are removed.
seed=$work/seed.cache
d=$(mktemp -d "$work/seed.XXXXXX")
(cd "$d" && "$ZS_SRCDIR/configure" -q --cache-file="$seed" > /dev/null 2>&1)
is "$?" 0 "a full configure run, whose generic checks the cases below reuse" || { done_testing; exit 1; }
sed -i -E '/pkg_cv_|zs_cv_|ac_cv_env_|hwloc|numa|slurm|openmp/Id' "$seed"

# try [VAR=VALUE | --OPTION]...: runs configure in a fresh directory
# (TRY_DIR) with the variables in its environment and the options on its
# command line; sets RC and OUT (its stdout and stderr).
try() {
	local a envs=() opts=()
	for a in "$@"; do
		case $a in
		--*) opts+=("$a") ;;
		*) envs+=("$a") ;;
		esac
	done
	TRY_DIR=$(mktemp -d "$work/c.XXXXXX")
	cp "$seed" "$TRY_DIR/config.cache"
	OUT=$(cd "$TRY_DIR" && env ${envs[@]+"${envs[@]}"} "$ZS_SRCDIR/configure" -q \
		--no-create --cache-file=config.cache ${opts[@]+"${opts[@]}"} 2>&1)
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
like "$(grep -m1 '^zs_cv_slurm_version_number=' "$TRY_DIR/config.log")" \
	"=$(printf '%d' "$(sed -n 's/^#define SLURM_VERSION_NUMBER //p' /usr/include/slurm/slurm_version.h)")\$" \
	"... and reads this machine's Slurm release from slurm/slurm_version.h"

# hwloc 2.0 has no HWLOC_OBJ_MEMCACHE: a pkg-config file of this
# machine's hwloc with its version set to 2.0.4 stands in for one.
pc=$(pkg-config --variable=pcfiledir hwloc)/hwloc.pc
mkdir -p "$work/pc20"
sed 's/^Version:.*/Version: 2.0.4/' "$pc" > "$work/pc20/hwloc.pc"
try PKG_CONFIG_LIBDIR="$work/pc20"
cmp_ok "$RC" -ne 0 "hwloc 2.0: configure fails"
like "$(grep -E '^configure: error:' <<< "$OUT" | tail -1)" "hwloc 2\.1 or later.*HWLOC_OBJ_MEMCACHE" \
	"... the error asks for hwloc 2.1 and says why"
sed -i 's/^Version:.*/Version: 2.1.0/' "$work/pc20/hwloc.pc"
try PKG_CONFIG_LIBDIR="$work/pc20"
is "$RC" 0 "the same pkg-config file saying 2.1.0: configure succeeds (the floor itself)"

# Slurm below the tested floor (Debian 12's 22.05): this machine's Slurm
# headers under a prefix of their own, with the release number of EPEL
# 8's 20.11.8 (0x140b08) written into slurm_version.h.
old=$work/slurm-20.11
mkdir -p "$old/include"
cp -r /usr/include/slurm "$old/include/"
sed -i 's/^#define SLURM_VERSION_NUMBER .*/#define SLURM_VERSION_NUMBER 0x140b08/' "$old/include/slurm/slurm_version.h"
try --with-slurm="$old" --with-slurm-plugindir="$work"
cmp_ok "$RC" -ne 0 "Slurm 20.11 headers: configure fails"
last=$(grep -E '^configure: error:' <<< "$OUT" | tail -1)
like "$last" "Slurm 20\.11 found .*under ${old//./\\.}" "... naming the release it found and where"
like "$last" "tested with Slurm 22\.05 and later" "... and the tested floor"
sed -i 's/^#define SLURM_VERSION_NUMBER .*/#define SLURM_VERSION_NUMBER 0x160500/' "$old/include/slurm/slurm_version.h"
try --with-slurm="$old" --with-slurm-plugindir="$work"
is "$RC" 0 "Slurm 22.05.0 headers under --with-slurm: configure succeeds (the floor itself)"

# --without-slurm is refused with a reason, not silently accepted.
d=$(mktemp -d "$work/c.XXXXXX")
out=$(cd "$d" && "$ZS_SRCDIR/configure" -q --without-slurm 2>&1)
rc=$?
cmp_ok "$rc" -ne 0 "--without-slurm: configure fails"
like "$out" 'configure: error: .*SPANK plugin needs Slurm' "--without-slurm: the error says why"
done_testing
