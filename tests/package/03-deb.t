#!/bin/bash
# The Debian packages, end to end: built with "dpkg-buildpackage -us -uc -b"
# as an unprivileged user (Rules-Requires-Root: no; as sbuild does) from a
# clean copy of the tree (the make dist tarball, unpacked in /tmp),
# checked with lintian, installed on this machine with dpkg -i (a throwaway
# CI machine), tested with the real-cluster suites (tests/cluster/*.t and
# tests/nhc/1*-cluster-*.t of that copy, by default those that depend on
# where files are installed) pointed at the installed files and with the
# pilot walkthrough, then purged, checking that nothing is left behind.
#
# Each suite file run against the installed packages gives one result
# here, with its own counts as a diagnostic; a failure in it fails this
# test. Takes about 5 minutes (13 with ZS_PKG_SUITES=all).
# needs: a quiet host (tests/cluster/03-periodic.t among them times the helper's sorts, which wait for the node's memory to be quiet)
set -u
source "$(dirname "$0")/../../testbed/tap.sh"
source "$(dirname "$0")/../../testbed/env.sh"
source "$(dirname "$0")/dist.sh"
need dpkg-buildpackage dh dh_dkms dkms lintian fakeroot dpkg-deb make tar gcc modinfo useradd runuser
need_file "$ZS_SRCDIR/configure" "configure script (scripts/build runs autoreconf)"
case ${ZS_PKG_SUITES:-paths} in
paths | all) ;;
*)
	_tap_result 1 "ZS_PKG_SUITES='$ZS_PKG_SUITES': want paths (the default) or all"
	done_testing
	exit 1
	;;
esac
# The DKMS package ships kmod/Makefile; .gitignore's "Makefile" pattern
# keeps it out of git unless it is excepted (!kmod/Makefile).
need_file "$ZS_SRCDIR/kmod/Makefile" "kmod/Makefile, the DKMS package's module Makefile (tracked in git)"

VERSION=$(sed -n "s/^PACKAGE_VERSION='\(.*\)'$/\1/p" "$ZS_SRCDIR/configure")
PKGS=(zonesort zonesort-nhc zonesort-dkms)
MULTIARCH=$(gcc -print-multiarch)
PLUGINDIR=/usr/lib/$MULTIARCH/slurm-wlm
work=$(mktemp -d /tmp/zs-pkg03.XXXXXX)
chmod 755 "$work"
installed=0

# dpkg_retry ARGS...: dpkg, retried while another dpkg or apt holds its lock.
dpkg_retry() {
	local i out rc
	for i in $(seq 30); do
		out=$(dpkg "$@" 2>&1)
		rc=$?
		printf '%s\n' "$out" >> "$work/dpkg.log"
		[ "$rc" -eq 0 ] && return 0
		grep -q 'lock' <<< "$out" || { printf '%s\n' "$out" | tail -15 >&2; return "$rc"; }
		sleep 2
	done
	return 1
}

is_installed() {
	[ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null)" = installed ]
}

cleanup() {
	if [ "$installed" = 1 ]; then
		dpkg_retry --purge "${PKGS[@]}" > /dev/null 2>&1
	fi
	if [ "$tap_failed" -gt 0 ]; then
		echo "# logs kept in $work"
	else
		rm -rf "$work"
	fi
}
trap cleanup EXIT

# A leftover installation (an earlier run that was killed) would hide what
# this run installs: remove it first.
for p in "${PKGS[@]}"; do
	if dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null | grep -qv not-installed; then
		diag "removing a leftover $p installation first"
		dpkg_retry --purge "$p" > /dev/null 2>&1
	fi
done

# --- build ---------------------------------------------------------------
pkg_user_ready
mkdir "$work/src"
make_dist "$work"
chown "$PKG_USER" "$work/src"
as_pkg_user "$work/src" tar xzf "$TARBALL"
src=$work/src/zonesort-$VERSION
start=$SECONDS
DEB_BUILD_OPTIONS="${DEB_BUILD_OPTIONS:+$DEB_BUILD_OPTIONS }parallel=$(nproc)" \
	as_pkg_user "$src" dpkg-buildpackage -us -uc -b > "$work/dpkg-buildpackage.log" 2>&1
rc=$?
is "$rc" 0 "dpkg-buildpackage -us -uc -b as $PKG_USER builds from the unpacked dist tarball ($((SECONDS - start)) s)" ||
	{ diag "$(tail -25 "$work/dpkg-buildpackage.log")"; done_testing; exit 1; }
unit_tests_ran "$work/dpkg-buildpackage.log"
is "$(find "$work/src" -maxdepth 1 -name '*.deb' ! -user "$PKG_USER")" "" "the .deb files are $PKG_USER's (built without root)"

arch=$(dpkg --print-architecture)
declare -A DEB=(
	[zonesort]=$work/src/zonesort_${VERSION}-1_$arch.deb
	[zonesort-nhc]=$work/src/zonesort-nhc_${VERSION}-1_all.deb
	[zonesort-dkms]=$work/src/zonesort-dkms_${VERSION}-1_all.deb
)
for p in "${PKGS[@]}"; do
	ok "$p .deb built" test -s "${DEB[$p]}" || { done_testing; exit 1; }
done

# contains PACKAGE PATH...: the .deb holds every PATH.
contains() {
	local p=$1 f list missing=
	shift
	list=$(dpkg-deb -c "${DEB[$p]}" | awk '{ print $6 }' | sed 's|^\./|/|; s|/$||')
	for f in "$@"; do
		grep -qxF -- "$f" <<< "$list" || missing="$missing $f"
	done
	is "$missing" "" "$p contains $*"
}
contains zonesort "$PLUGINDIR/zonesort.so" /usr/sbin/zonesort /usr/bin/stream-triad \
	/usr/share/man/man8/zonesort.8.gz /usr/share/man/man8/spank-zonesort.8.gz \
	/usr/share/man/man1/stream-triad.1.gz /etc/slurm/plugstack.conf.d/zonesort.conf \
	/usr/share/doc/zonesort/examples/zonesort.conf /usr/share/doc/zonesort/copyright
contains zonesort-nhc /etc/nhc/scripts/stream_triad.nhc /etc/nhc/scripts/stream_triad_probe.nhc \
	/etc/nhc/scripts/stream_triad_state.nhc /etc/nhc/scripts/stream_triad_slurm.nhc /usr/sbin/zonesort-health-check \
	/usr/sbin/zonesort-bw-history /etc/zonesort/health-check.conf \
	/usr/share/man/man8/zonesort-health-check.8.gz /usr/share/man/man8/zonesort-bw-history.8.gz \
	/usr/share/doc/zonesort-nhc/examples/nhc.conf.zonesort /var/lib/zonesort
contains zonesort-dkms /usr/src/zonesort-$VERSION/dkms.conf /usr/src/zonesort-$VERSION/Kbuild \
	/usr/src/zonesort-$VERSION/Makefile /usr/src/zonesort-$VERSION/zonesort_main.c \
	/usr/src/zonesort-$VERSION/zonesort_policy.c /usr/src/zonesort-$VERSION/zonesort_policy.h

conffiles() { dpkg-deb -I "${DEB[$1]}" conffiles 2>/dev/null | sort | tr '\n' ' '; }
etc_files() {
	dpkg-deb -c "${DEB[$1]}" | awk '$1 !~ /^d/ { print $6 }' | sed 's|^\./|/|' | grep '^/etc/' | sort | tr '\n' ' '
}
for p in "${PKGS[@]}"; do
	is "$(conffiles "$p")" "$(etc_files "$p")" "$p: every file it puts in /etc is a conffile"
done
like "$(conffiles zonesort)" '/etc/slurm/plugstack\.conf\.d/zonesort\.conf' "zonesort: the plugstack.conf.d snippet is a conffile"
like "$(conffiles zonesort-nhc)" '/etc/nhc/scripts/stream_triad\.nhc .*/etc/zonesort/health-check\.conf' \
	"zonesort-nhc: the NHC check and the runner's options are conffiles"

# The plugin is tied to the Slurm major release of this machine's Slurm.
slurm_major=$(dpkg-query -W -f='${Version}' slurm-wlm-basic-plugins 2>/dev/null | cut -d. -f1-2)
slurm_next=$(printf '%s.%02d' "${slurm_major%.*}" $((10#${slurm_major#*.} + 1)))
depends=$(dpkg-deb -f "${DEB[zonesort]}" Depends)
like "$depends" "slurm-wlm-basic-plugins \(>= ${slurm_major//./\\.}\), slurm-wlm-basic-plugins \(<< ${slurm_next//./\\.}~\)" \
	"zonesort depends on Slurm $slurm_major (the release it was built for), not on another major release"
like "$(dpkg-deb -f "${DEB[zonesort]}" Depends)" 'libhwloc15.*libnuma1|libnuma1.*libhwloc15' "zonesort depends on the hwloc and libnuma libraries"
like "$(dpkg-deb -f "${DEB[zonesort-nhc]}" Depends)" "zonesort \(>= $VERSION" "zonesort-nhc depends on zonesort"
like "$(dpkg-deb -f "${DEB[zonesort-dkms]}" Depends)" 'dkms' "zonesort-dkms depends on dkms"
like "$(dpkg-deb -f "${DEB[zonesort-nhc]}" Depends)" 'slurm-client \| slurm-smd-client' \
	"zonesort-nhc takes Debian's Slurm client or SchedMD's (slurm-smd-client)"
# SchedMD's Debian packages cannot be had here (they are built from Slurm's
# source, not in Debian's archive): a dpkg-query that reports slurm-smd-dev
# installed stands in for them, and the rules must pick their plugin
# directory and runtime package.
mkdir -p "$work/smd-bin"
printf '#!/bin/sh\ncase "$*" in *slurm-smd-dev*) printf ii;; *) exec /usr/bin/dpkg-query "$@";; esac\n' > "$work/smd-bin/dpkg-query"
chmod 755 "$work/smd-bin/dpkg-query"
vars() { (cd "$ZS_SRCDIR" && PATH="$1:$PATH" make -s -f debian/rules --eval 'zs-print: ; @echo $(SLURM_PLUGINDIR) $(SLURM_RUNTIME)' zs-print); }
is "$(vars "$work/smd-bin")" "/usr/lib/$MULTIARCH/slurm slurm-smd" \
	"with SchedMD's slurm-smd-dev: their plugin directory and slurm-smd"
is "$(vars /nonexistent)" "/usr/lib/$MULTIARCH/slurm-wlm slurm-wlm-basic-plugins" \
	"with Debian's libslurm-dev: slurm-wlm and slurm-wlm-basic-plugins"
snippet=$(dpkg-deb --fsys-tarfile "${DEB[zonesort]}" | tar xO ./etc/slurm/plugstack.conf.d/zonesort.conf)
is "$(grep -v '^[[:space:]]*#' <<< "$snippet" | grep -c '[^[:space:]]')" 0 "the plugstack.conf.d snippet has no active line"
like "$snippet" "^#required $PLUGINDIR/zonesort\.so|
#required $PLUGINDIR/zonesort\.so" "its commented line names the installed plugin"

# --- lintian -----------------------------------------------------------------
# Accepted, with the reason:
declare -A ACCEPTED=(
	[bogus-mail-host]="the maintainer address is a placeholder until the project has one; a site that rebuilds sets its own (dch)"
	[bogus-mail-host-in-debian-changelog]="same placeholder in debian/changelog"
	[initial-upload-closes-no-bugs]="these packages are built by sites, not uploaded to Debian (no ITP bug)"
	[spare-manual-page]="spank-zonesort(8) documents the plugin, which is not a command (as Slurm's spank(8))"
)
lintian -I --pedantic "$work/src/zonesort_${VERSION}-1_${arch}.changes" > "$work/lintian.log" 2>&1
# Lines are "E: PACKAGE[ TYPE]: TAG [details]".
unexpected=$(grep -E '^[EWIPX]: ' "$work/lintian.log" | while read -r line; do
	tag=$(sed -E 's/^[EWIPX]: [^:]+: ([^ ]+).*/\1/' <<< "$line")
	[ -n "${ACCEPTED[$tag]+set}" ] || echo "$line"
done)
is "$unexpected" "" "lintian --pedantic: nothing but the accepted tags"
for tag in "${!ACCEPTED[@]}"; do
	grep -q " $tag" "$work/lintian.log" && diag "lintian $tag accepted: ${ACCEPTED[$tag]}"
done

# --- install -------------------------------------------------------------
start=$SECONDS
if dpkg_retry -i "${DEB[zonesort]}" "${DEB[zonesort-nhc]}" "${DEB[zonesort-dkms]}"; then
	installed=1
	ok "dpkg -i installs the three packages ($((SECONDS - start)) s, DKMS builds included)" true
else
	installed=1
	ok "dpkg -i installs the three packages" false
	diag "$(tail -20 "$work/dpkg.log")"
	done_testing
	exit 1
fi
for p in "${PKGS[@]}"; do
	ok "$p is installed" is_installed "$p"
done
dpkg -L "${PKGS[@]}" 2>/dev/null | sort -u > "$work/files"

# The plugin sits beside Debian's own Slurm plugins (Slurm's PluginDir).
auth=$(dpkg -L slurm-wlm-basic-plugins | grep -m1 '/auth_munge\.so$')
is "$(dirname "$auth")" "$PLUGINDIR" "Debian's Slurm keeps its plugins in $PLUGINDIR"
ok "the plugin is installed in Slurm's PluginDir" test -f "$PLUGINDIR/zonesort.so"
ok "installed zonesort runs (zonesort --help)" sh -c '/usr/sbin/zonesort --help > /dev/null'
ok "installed stream-triad runs (stream-triad --help)" sh -c '/usr/bin/stream-triad --help > /dev/null'
like "$(/usr/sbin/zonesort-health-check -h 2>&1)" '/etc/zonesort/health-check\.conf' \
	"installed runner defaults to /etc/zonesort/health-check.conf"
like "$(grep '^ZS_HC_CHECK_FILE=' /usr/sbin/zonesort-health-check)" '=/etc/nhc/scripts/stream_triad\.nhc$' \
	"installed runner loads the check from /etc/nhc/scripts"
like "$(grep '^STREAM_TRIAD_PROBE=' /etc/nhc/scripts/stream_triad.nhc)" '/usr/bin/stream-triad' \
	"installed check runs the installed probe by default"
if [ -f /etc/nhc/scripts/zonesort_potential.nhc ]; then
	like "$(grep '^ZONESORT_POTENTIAL_ZONESORT=' /etc/nhc/scripts/zonesort_potential.nhc)" '/usr/sbin/zonesort' \
		"installed conflict-potential check runs the installed zonesort by default"
fi
for page in zonesort spank-zonesort stream-triad zonesort-health-check; do
	like "$(man -w "$page" 2>&1)" "^/usr/share/man/man[18]/$page\.[18]" "man $page finds the installed page"
done
like "$(man -w zonesort-bw-history 2>&1)" "^/usr/share/man/man8/zonesort-health-check\.8" \
	"man zonesort-bw-history finds the health check's page (a link)"

# DKMS built and installed the module for every kernel with headers here.
kernels=$(for d in /lib/modules/*/build; do [ -d "$d" ] && basename "$(dirname "$d")"; done)
if [ -z "$kernels" ]; then
	ok "kernel headers present for DKMS (install linux-headers-amd64)" false
fi
for k in $kernels; do
	like "$(dkms status -m zonesort -v "$VERSION" -k "$k" 2>/dev/null)" "zonesort/$VERSION, ${k//+/\\+}, [^:]*: installed" \
		"dkms built and installed zonesort $VERSION for $k"
	ko=$(ls /lib/modules/"$k"/updates/dkms/zonesort.ko* 2>/dev/null | head -1)
	is "$(modinfo -F license "$ko" 2>/dev/null)" "GPL" "the module DKMS built for $k is there (${ko:-none}) and GPL"
done

# --- the real-cluster suites against the installed files --------------------
# suite_file T: runs one suite file against the installed packages; one
# result here, its counts as a diagnostic.
suite_file() {
	local t=$1 name rc p f out start=$SECONDS
	name=${t#"$src"/}
	out=$(cd "$src" && timeout --kill-after=10 900 env \
		ZS_SRCDIR="$src" ZS_BUILDDIR=/nonexistent/build-tree \
		ZS_PLUGIN="$PLUGINDIR/zonesort.so" ZS_ZONESORT=/usr/sbin/zonesort \
		ZS_STREAM_TRIAD=/usr/bin/stream-triad ZS_NHC_DIR=/usr/sbin \
		bash "$t" 2>&1 < /dev/null)
	rc=$?
	printf '### %s\n%s\n' "$name" "$out" >> "$work/suites.log"
	p=$(grep -cE '^ok ' <<< "$out")
	f=$(grep -cE '^not ok ' <<< "$out")
	[ "$rc" -ne 0 ] && [ "$f" -eq 0 ] && f=1
	[ $((p + f)) -eq 0 ] && f=1
	[ "$f" -eq 0 ]
	_tap_result $? "installed packages: $name ($p passed, $f failed)"
	diag "$name: $p passed, $f failed, exit $rc ($((SECONDS - start)) s)"
	[ "$f" -eq 0 ] || diag "$(grep -E -A3 '^not ok ' <<< "$out" | head -20)"
}
# By default the files whose outcome depends on where things are
# installed: the plugin binary, options and plugstack.conf, the helper
# zonesort run by slurmstepd (once, periodic, its pids, unprivileged
# users' jobs); the rest test the same code paths as the build-tree suites
# (ZS_PKG_SUITES=paths, the default). ZS_PKG_SUITES=all runs every cluster
# and NHC cluster test against the packages. Last, in both, the pilot a
# site runs from the documentation (tests/package/pilot-walkthrough.sh):
# the shipped configuration files, the installed runner as Epilog with its
# drain and reboot, Debian's node_exporter and Prometheus.
case ${ZS_PKG_SUITES:-paths} in
all)
	suites=("$src"/tests/cluster/*.t "$src"/tests/nhc/1*-cluster-*.t)
	;;
paths)
	suites=()
	for t in cluster/00-plugin-binary cluster/01-options cluster/03-periodic cluster/05-unprivileged \
		cluster/07-bad-plugstack cluster/20-helper-pids; do
		suites+=("$src/tests/$t.t")
	done
	;;
esac
suites+=("$src/tests/package/pilot-walkthrough.sh")
for t in "${suites[@]}"; do
	ok "suite file ${t#"$src"/} is in the dist tarball" test -f "$t" && suite_file "$t"
done

# --- purge ---------------------------------------------------------------
start=$SECONDS
dpkg_retry --purge "${PKGS[@]}" > /dev/null
is "$?" 0 "dpkg --purge removes the three packages ($((SECONDS - start)) s)"
installed=0
for p in "${PKGS[@]}"; do
	fails "$p is no longer installed" is_installed "$p"
done
left=$(while read -r f; do [ -e "$f" ] && [ ! -d "$f" ] && echo "$f"; done < "$work/files")
is "$left" "" "no file of the packages is left"
left=$(ls -d /usr/src/zonesort-"$VERSION" /etc/zonesort /var/lib/zonesort /etc/nhc/scripts/stream_triad.nhc \
	/var/lib/dkms/zonesort /lib/modules/*/updates/dkms/zonesort.ko* 2>/dev/null)
is "$left" "" "no directory, DKMS tree or built module is left"
is "$(dkms status -m zonesort 2>/dev/null)" "" "dkms knows no zonesort module any more"
done_testing
