#!/bin/bash
# The RPM spec, with Debian's rpm and rpmlint, built as an unprivileged
# user (as mock, koji and copr do, and as the README tells a site):
# "rpmbuild -ta --nodeps" makes the source RPM from the make dist tarball
# and runs the spec's %build, %install, %check and %files against this
# machine's Debian libraries and headers, which shows that the file lists
# are complete, the subpackages hold what they should and %check passes
# without root. The dependencies are checked as EL sites name them:
# SchedMD's and EPEL's slurm or OpenHPC's slurm-ohpc, hwloc 2.1, LBNL NHC
# (lbnl-nhc, nhc-ohpc); a Slurm under its own prefix (slurm_prefix).
#
# What this cannot check without a RHEL machine: the real binary build
# (slurm-devel, hwloc-devel and numactl-devel are RPMs, absent here, hence
# --nodeps), RHEL's own macros and build root policies (brp-compress,
# debuginfo, %{_sharedstatedir}, hardening specs), the dependencies RHEL's
# rpm generates, installing with dnf, and DKMS on RHEL's kernels.
set -u
source "$(dirname "$0")/../../testbed/tap.sh"
source "$(dirname "$0")/../../testbed/env.sh"
need rpmbuild rpm rpmspec rpmlint make tar useradd runuser
need_file "$ZS_SRCDIR/configure" "configure script (scripts/build runs autoreconf)"
# The DKMS package ships kmod/Makefile; .gitignore's "Makefile" pattern
# keeps it out of git unless it is excepted (!kmod/Makefile).
need_file "$ZS_SRCDIR/kmod/Makefile" "kmod/Makefile, the DKMS package's module Makefile (tracked in git)"

source "$(dirname "$0")/dist.sh"
work=$(mktemp -d /tmp/zs-pkg04.XXXXXX)
chmod 755 "$work"
trap '[ "$tap_failed" -gt 0 ] && echo "# logs kept in $work" || rm -rf "$work"' EXIT

pkg_user_ready
make_dist "$work"
tarball=$TARBALL
mkdir "$work/rpm"
chown "$PKG_USER" "$work/rpm"
rpmbuild=(as_pkg_user "$work/rpm" rpmbuild --define "_topdir $work/rpm")

# --- source RPM ------------------------------------------------------------
"${rpmbuild[@]}" -ts "$tarball" > "$work/srpm.log" 2>&1
is "$?" 0 "rpmbuild -ts as $PKG_USER builds the source RPM from the dist tarball" || diag "$(tail -15 "$work/srpm.log")"
srpm=$(ls "$work"/rpm/SRPMS/zonesort-"$VERSION"-1*.src.rpm 2>/dev/null | head -1)
ok "the source RPM is zonesort-$VERSION-1.src.rpm" test -n "$srpm"
is "$(grep -i 'warning' "$work/srpm.log")" "" "rpmbuild -ts gives no warning"
is "$(rpm -qpl "$srpm" 2>/dev/null | sort | tr '\n' ' ')" "zonesort-$VERSION.tar.gz zonesort.spec " \
	"the source RPM holds the tarball and the spec"
# has_dep WHAT LIST DEP: DEP is one of the lines of LIST (exactly).
has_dep() {
	grep -qxF -- "$3" <<< "$2"
	_tap_result $? "$1: $3" || diag "$1 are:" "$2"
}
breq=$(rpm -qpR "$srpm" 2>/dev/null | grep -v '^rpmlib(')
for dep in '(slurm-devel or slurm-devel-ohpc)' 'hwloc-devel >= 2.1' numactl-devel gcc make pkgconfig; do
	has_dep BuildRequires "$breq" "$dep"
done

# --- binary RPMs, --nodeps, with this machine's Slurm headers ------------------
slurm_hex=$(sed -n 's/^#define SLURM_VERSION_NUMBER 0x\([0-9a-fA-F]*\).*/\1/p' /usr/include/slurm/slurm_version.h)
slurm_major=$(printf '%d.%02d' $((0x$slurm_hex >> 16)) $(((0x$slurm_hex >> 8) & 255)))
# Without --define, the Slurm release comes from the headers the build
# compiles against: the requirement follows the Slurm it was built for.
tar xzf "$tarball" -C "$work" "zonesort-$VERSION/zonesort.spec"
spec=$work/zonesort-$VERSION/zonesort.spec
# slurm_dep RELEASE: the main package's requirement for that release, from
# SchedMD's or EPEL's RPMs (slurm) or OpenHPC's (slurm-ohpc).
slurm_dep() {
	printf '((slurm >= %s with slurm < %s.999) or (slurm-ohpc >= %s with slurm-ohpc < %s.999))' "$1" "$1" "$1" "$1"
}
has_dep "without --define the spec requires the Slurm of /usr/include/slurm ($slurm_major)" \
	"$(rpmspec -q --requires "$spec" 2>/dev/null)" "$(slurm_dep "$slurm_major")"

# A Slurm under a prefix of its own (SchedMD's slurm.spec built with
# _prefix /opt/slurm): this machine's Slurm headers copied there, with
# 23.11.4's release number, stand in for one.
prefix=$work/opt-slurm
mkdir -p "$prefix/include"
cp -r /usr/include/slurm "$prefix/include/"
sed -i 's/^#define SLURM_VERSION_NUMBER .*/#define SLURM_VERSION_NUMBER 0x170b04/' "$prefix/include/slurm/slurm_version.h"
has_dep "with slurm_prefix the release comes from its headers (23.11)" \
	"$(rpmspec -q --requires --define "slurm_prefix $prefix" "$spec" 2>/dev/null)" "$(slurm_dep 23.11)"
parsed=$(rpmspec -P --define "slurm_prefix $prefix" "$spec" 2>/dev/null)
like "$parsed" "--with-slurm-plugindir=${prefix//./\\.}/lib(64)?/slurm --with-slurm=${prefix//./\\.}( |$)" \
	"... configure is given its headers (--with-slurm) and its plugin directory"
unlike "$(rpmspec -q --buildrequires --define "slurm_prefix $prefix" "$spec" 2>/dev/null)" 'slurm-devel' \
	"... and no slurm-devel RPM is required to build"
like "$(rpmspec -q --buildrequires --define "slurm_prefix $prefix" "$spec" 2>/dev/null)" "^${prefix//./\\.}/include/slurm/spank\.h\$" \
	"... but its spank.h is, as a file"
start=$SECONDS
"${rpmbuild[@]}" --define "slurm_version $slurm_major" -ta --nodeps "$tarball" > "$work/rpm.log" 2>&1
rc=$?
is "$rc" 0 "rpmbuild -ta --nodeps as $PKG_USER --define 'slurm_version $slurm_major' builds the binary RPMs ($((SECONDS - start)) s)" ||
	{ diag "$(tail -25 "$work/rpm.log")"; done_testing; exit 1; }
unit_tests_ran "$work/rpm.log"
is "$(grep -E 'Installed \(but unpackaged\) file|File listed twice|File not found' "$work/rpm.log")" "" \
	"%files lists every installed file once"
diag "binary RPMs built here use Debian's headers and libraries and Debian's rpm macros;" \
	"the real binary build needs a RHEL machine with slurm-devel (EPEL or the site's Slurm RPMs):" \
	"  rpmbuild -ta zonesort-$VERSION.tar.gz"

main=$(ls "$work"/rpm/RPMS/*/zonesort-"$VERSION"-1*.rpm 2>/dev/null | grep -v -e '-nhc-' -e '-dkms-' | head -1)
nhc=$(ls "$work"/rpm/RPMS/noarch/zonesort-nhc-"$VERSION"-1*.noarch.rpm 2>/dev/null | head -1)
dkms=$(ls "$work"/rpm/RPMS/noarch/zonesort-dkms-"$VERSION"-1*.noarch.rpm 2>/dev/null | head -1)
ok "three binary RPMs: zonesort, zonesort-nhc (noarch), zonesort-dkms (noarch)" test -n "$main" -a -n "$nhc" -a -n "$dkms"

# holds RPM PATH...: the package lists every PATH; a manual page may be
# compressed (RHEL's and sid's rpm compress them, bookworm's not).
holds() {
	local r=$1 f list missing=
	shift
	list=$(rpm -qpl "$r" 2>/dev/null)
	for f in "$@"; do
		case $f in
		/usr/share/man/*) grep -qxE -- "$f(\.gz|\.bz2|\.xz|\.zst)?" <<< "$list" ;;
		*) grep -qxF -- "$f" <<< "$list" ;;
		esac || missing="$missing $f"
	done
	is "$missing" "" "$(basename "$r"): holds $*"
}
libdir=$(rpm --eval '%{_libdir}')
holds "$main" "$libdir/slurm/zonesort.so" /usr/sbin/zonesort /usr/bin/stream-triad \
	/etc/slurm/plugstack.conf.d/zonesort.conf /usr/share/man/man8/zonesort.8 \
	/usr/share/man/man8/spank-zonesort.8 /usr/share/man/man1/stream-triad.1
holds "$nhc" /etc/nhc/scripts/stream_triad.nhc /etc/nhc/scripts/stream_triad_probe.nhc \
	/etc/nhc/scripts/stream_triad_state.nhc /etc/nhc/scripts/stream_triad_slurm.nhc /usr/sbin/zonesort-health-check \
	/usr/sbin/zonesort-bw-history /etc/zonesort/health-check.conf /var/lib/zonesort \
	/usr/share/man/man8/zonesort-health-check.8
holds "$dkms" /usr/src/zonesort-"$VERSION"/dkms.conf /usr/src/zonesort-"$VERSION"/Kbuild \
	/usr/src/zonesort-"$VERSION"/Makefile /usr/src/zonesort-"$VERSION"/zonesort_main.c \
	/usr/src/zonesort-"$VERSION"/zonesort_policy.c /usr/src/zonesort-"$VERSION"/zonesort_policy.h

# fileflags RPM PATH: rpm's flags of one file (config, noreplace, ...).
fileflags() {
	rpm -qp --qf '[%{FILEFLAGS:fflags} %{FILENAMES}\n]' "$1" 2>/dev/null | awk -v f="$2" '$2 == f { print $1 }'
}
is "$(fileflags "$main" /etc/slurm/plugstack.conf.d/zonesort.conf)" cn "plugstack.conf.d snippet: %config(noreplace)"
is "$(fileflags "$nhc" /etc/zonesort/health-check.conf)" cn "runner options: %config(noreplace)"
for f in $(rpm -qpl "$nhc" 2>/dev/null | grep '^/etc/nhc/scripts/.*\.nhc$'); do
	is "$(fileflags "$nhc" "$f")" c "$(basename "$f"): %config (code: replaced on update, a changed copy kept as .rpmsave)"
done
notconfig=$(for r in "$main" "$nhc" "$dkms"; do
	rpm -qp --qf '[%{FILEFLAGS:fflags} %{FILEMODE:perms} %{FILENAMES}\n]' "$r" 2>/dev/null |
		awk '$3 ~ /^\/etc\// && $2 !~ /^d/ && $1 !~ /c/ { print $3 }'
done)
is "$notconfig" "" "every file the RPMs put in /etc is marked %config"
snippet=$(rpm2cpio "$main" | (cd "$work" && cpio -i --quiet --to-stdout ./etc/slurm/plugstack.conf.d/zonesort.conf))
is "$(grep -v '^[[:space:]]*#' <<< "$snippet" | grep -c '[^[:space:]]')" 0 "the plugstack.conf.d snippet has no active line"
like "$snippet" "#required $libdir/slurm/zonesort\.so" "its commented line names the plugin in $libdir/slurm"

has_dep "zonesort requires (the same major release)" "$(rpm -qpR "$main" 2>/dev/null)" "$(slurm_dep "$slurm_major")"
nhc_reqs=$(rpm -qpR "$nhc" 2>/dev/null)
has_dep "zonesort-nhc requires" "$nhc_reqs" "zonesort = $VERSION-1"
has_dep "zonesort-nhc requires (scontrol, squeue)" "$nhc_reqs" "(slurm or slurm-ohpc)"
unlike "$nhc_reqs" '(^|[ (])(lbnl-nhc|nhc-ohpc|nhc)([ )]|$)' "zonesort-nhc does not require NHC"
has_dep "zonesort-nhc suggests LBNL NHC, by its RPM name or OpenHPC's" "$(rpm -qp --suggests "$nhc" 2>/dev/null)" \
	"(lbnl-nhc or nhc-ohpc)"
like "$(rpm -qpR "$dkms" 2>/dev/null | tr '\n' ' ')" '(^| )dkms ' "zonesort-dkms requires dkms"
like "$(rpm -qpR "$dkms" 2>/dev/null | tr '\n' ' ')" '(^| )kernel-devel ' "zonesort-dkms requires kernel-devel (DKMS builds nothing without it)"
scripts=$(rpm -qp --scripts "$dkms" 2>/dev/null)
like "$scripts" "dkms add -m zonesort -v $VERSION" "zonesort-dkms %post: dkms add"
like "$scripts" "dkms build -m zonesort -v $VERSION" "zonesort-dkms %post: dkms build"
like "$scripts" "dkms install -m zonesort -v $VERSION" "zonesort-dkms %post: dkms install"
like "$(grep -A1 '^preuninstall scriptlet' <<< "$scripts" | tail -1)" "^dkms remove -m zonesort -v $VERSION --all" \
	"zonesort-dkms %preun: dkms remove"

# Without --define slurm_version the spec reads the release from the
# slurm-devel RPM, which a RHEL build has and this machine has not.
rpm -q slurm-devel > /dev/null 2>&1 ||
	diag "no slurm-devel RPM here: slurm_version was given with --define; on RHEL the spec reads it from slurm-devel"

# --- rpmlint -----------------------------------------------------------------
# Accepted, with the reason:
declare -A ACCEPTED=(
	[no-signature]="local builds are not signed; a site signs its own repository"
	[no-packager-tag]="Packager is set by the build host (Fedora/EPEL's rpmlint configuration does not ask for it)"
	[no-group-tag]="Group is obsolete on RHEL 8 and later (not asked for by Fedora/EPEL's rpmlint configuration)"
	[no-buildroot-tag]="BuildRoot is obsolete since rpm 4.6"
	[no-url-tag]="the project has no public home page yet"
	[invalid-url]="Source0 is the local make dist tarball (no public download location yet)"
	[invalid-license]="Debian's rpmlint has no SPDX list; GPL-2.0-or-later and GPL-2.0-only are the SPDX identifiers Fedora and EPEL use"
	[manpage-not-compressed]="Debian's rpm has no brp-compress; RHEL's rpm compresses manual pages"
	[no-manual-page-for-binary]="follows from the uncompressed pages above: the pages are there (see the file lists)"
	[no-dependency-on]="rpmlint reads the -nhc suffix as a language code (locales-nhc)"
	[devel-file-in-non-devel-package]="DKMS needs the module's .c and .h files in /usr/src"
	[devel-dependency]="zonesort-dkms requires kernel-devel: DKMS builds the module against it, as every DKMS package of EPEL does"
	[no-documentation]="zonesort-dkms has its licence only; the documentation is in zonesort"
	[unstripped-binary-or-object]="Debian's rpm has no find-debuginfo; RHEL's strips the binaries into -debuginfo packages"
	[requires-on-release]="Fedora's guidelines ask a subpackage to require its main package's exact version-release"
	[conffile-without-noreplace-flag]="stream_triad.nhc is code NHC sources: an update must replace it"
)
# Newer rpmlint (sid's) checks spelling against an English dictionary;
# these words are Slurm's, the kernel's and the project's own names.
JARGON=" srun sbatch salloc plugstack sysfs sys devel hw bw "
rpmlint "$work/build/zonesort.spec" "$srpm" "$main" "$nhc" "$dkms" > "$work/rpmlint.log" 2>&1
unexpected=$(grep -E ': [EW]: ' "$work/rpmlint.log" | while read -r where sev tag rest; do
	[ -n "${ACCEPTED[$tag]+set}" ] && continue
	if [ "$tag" = spelling-error ]; then
		word=$(sed -n "s/^('\\([^']*\\)'.*/\\1/p" <<< "$rest")
		[[ -n $word && $JARGON == *" $word "* ]] && continue
	fi
	echo "$where $sev $tag $rest"
done)
is "$unexpected" "" "rpmlint on the spec, the source RPM and the binary RPMs: nothing but the accepted findings"
for tag in "${!ACCEPTED[@]}"; do
	grep -q " $tag" "$work/rpmlint.log" && diag "rpmlint $tag accepted: ${ACCEPTED[$tag]}"
done
done_testing
