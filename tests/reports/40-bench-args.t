#!/bin/bash
# The long-run scripts refuse a bad argument before they boot or install
# anything: bench/kmod-torture's series, minutes, seed and environment
# settings, bench/churn-effect's --buffer, scripts/install-deps' package
# names. Each message names the
# bad value and what is accepted; the exit status is 2.
. "$(dirname "$0")/../../testbed/tap.sh"
. "$(dirname "$0")/../../testbed/env.sh"
torture=$ZS_SRCDIR/bench/kmod-torture

# refused WHAT WANT CMD...: CMD exits 2 and its message matches WANT.
refused() {
	local what=$1 want=$2 out rc
	shift 2
	out=$("$@" 2>&1 < /dev/null)
	rc=$?
	is "$rc" 2 "$what: exit status 2"
	like "$out" "$want" "... and the message names it: $(head -1 <<< "$out")"
}
refused "kmod-torture series 5.4" "expected a kernel series 6.1, 6.12 or 7, got '5.4'" "$torture" 5.4
refused "kmod-torture minutes 1h" "MINUTES and SEED are whole numbers, got '1h' '5'" "$torture" 7 1h 5
refused "kmod-torture seed -3" "got '60' '-3'" "$torture" 7 60 -3
for v in 0 56 x; do
	refused "ZS_UNLOAD_SAMPLE_S=$v" "ZS_UNLOAD_SAMPLE_S is a whole number of seconds from 1 to 55, got '$v'" \
		env ZS_UNLOAD_SAMPLE_S=$v "$torture" 7
done
for v in 0 1001 0125 12.5 ''; do
	refused "ZS_TORTURE_MAX_PERMILLE='$v'" "ZS_TORTURE_MAX_PERMILLE is a whole number of per mille from 1 to 1000, got '$v'" \
		env ZS_TORTURE_MAX_PERMILLE=$v "$torture" 7
done

churn=$ZS_SRCDIR/bench/churn-effect
rm -f "$ZS_BUILDDIR/bench-args-churn.jsonl"
for v in 0 0.0 02 .5 1e3 x; do
	refused "churn-effect --buffer '$v'" "churn-effect: --buffer '$v': want a multiple of the cache above 0, e.g. 0.5 or 2" \
		"$churn" --buffer "$v" --out /dev/null
done
refused "churn-effect --buffer 10 --mem 768M" "churn-effect: --buffer '10': want 3 pages or more and at most 3/4 of --mem 768M" \
	"$churn" --buffer 10 --mem 768M --cache 64M --out "$ZS_BUILDDIR/bench-args-churn.jsonl"
refused "churn-effect --buffer 0.00001" "churn-effect: --buffer '0.00001': want 3 pages or more" \
	"$churn" --buffer 0.00001 --out "$ZS_BUILDDIR/bench-args-churn.jsonl"
ok "... and a refused --buffer wrote no data" [ ! -e "$ZS_BUILDDIR/bench-args-churn.jsonl" ]
if [ "$(id -u)" = 0 ] && command -v apt-get > /dev/null; then
	refused "install-deps --packages without names" "--packages needs at least one package name" \
		"$ZS_SRCDIR/scripts/install-deps" --packages
	refused "install-deps --packages 'bison;x'" "'bison;x' is not a Debian package name" \
		"$ZS_SRCDIR/scripts/install-deps" --packages bison 'bison;x'
	refused "install-deps --bogus" "unknown argument '--bogus'; expected --main, --packages P... or nothing" \
		"$ZS_SRCDIR/scripts/install-deps" --bogus
else
	_tap_result 1 "install-deps' arguments: needs root and apt-get (run the suite as root on Debian)"
fi
done_testing
