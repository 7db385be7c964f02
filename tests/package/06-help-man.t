#!/bin/bash
# Every option that the --help of an installed command lists is in its
# manual page, and every option its manual page lists is in the --help of
# a command the page documents. The commands are what "make install"
# puts in bin/ and sbin/ (zonesort's subcommands each have a --help); a
# command's page is the installed page whose NAME section names it.
# Options in --help: those of the usage lines and those that start an
# indented line; in a page: every \-x and \-\-long of its request lines
# (.B, .BI, .BR, .TP, .IP, ...).
set -u
source "$(dirname "$0")/../../testbed/tap.sh"
source "$(dirname "$0")/../../testbed/env.sh"
need make awk

work=$(mktemp -d /tmp/zs-help-man.XXXXXX)
trap 'rm -rf "$work"' EXIT
ok "make install into a staging directory" make -s -C "$ZS_BUILDDIR" install DESTDIR="$work/root" \
	> "$work/install.log" 2>&1
mapfile -t cmds < <(find "$work/root" \( -path '*/bin/*' -o -path '*/sbin/*' \) -type f -perm -u+x | sort)
cmp_ok "${#cmds[@]}" -ge 4 "installed commands found ($(printf '%s ' "${cmds[@]##*/}"))"

# help_opts: options listed by a --help text on stdin.
help_opts() {
	awk '/^[Uu]sage:/ { print; next } /^[ \t]+-/ { print $1; if ($1 ~ /,$/) print $2 }' |
		grep -oE '(^|[][ |,])--?[A-Za-z][A-Za-z0-9-]*' | sed 's/^[][ |,]//' | sort -u
}
# page_opts PAGE: options on the request lines of a manual page.
page_opts() {
	grep -E '^\.[A-Z]' "$1" | sed 's/\\-/-/g' | grep -oE '(^|[^A-Za-z0-9-])--?[A-Za-z][A-Za-z0-9-]*' |
		sed 's/^[^-]*//' | sort -u
}
# page_of CMD: the installed page CMD.N, else one whose NAME section names CMD.
page_of() {
	local p
	p=$(find "$work/root" -path "*/man/man*/$1.[1-8]" -type f | head -1)
	[ -n "$p" ] && { echo "$p"; return 0; }
	for p in $(find "$work/root" -path '*/man/man*/*' -type f | sort); do
		sed -n '/^\.SH NAME/,/^\.SH/p' "$p" | sed 's/\\-/-/g' | grep -qw -- "$1" && { echo "$p"; return 0; }
	done
	return 1
}

declare -A page_help=( )
for c in "${cmds[@]}"; do
	name=${c##*/}
	page=$(page_of "$name")
	ok "$name has a manual page naming it${page:+ (${page##*/})}" test -n "$page"
	[ -n "$page" ] || continue
	{ "$c" --help 2>&1
	  # zonesort: each command's own --help.
	  "$c" --help 2>&1 | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { on = 0 }' |
		while read -r sub; do "$c" "$sub" --help 2>&1; done
	} > "$work/$name.help"
	help_opts < "$work/$name.help" > "$work/$name.opts"
	cmp_ok "$(wc -l < "$work/$name.opts")" -ge 1 "$name --help lists options"
	missing=$(comm -23 "$work/$name.opts" <(page_opts "$page") | tr '\n' ' ')
	is "$missing" "" "$name: every option of --help is in ${page##*/}"
	page_help[$page]+="$name "
done
# The slurm.conf and systemd examples name the commands where this build
# installs them: an Epilog that does not exist drains every node.
for ex in slurm.conf.epilog slurm.conf.healthcheck zonesort-status.service; do
	f=$(find "$work/root" -path "*/examples/$ex" -type f | head -1)
	ok "the example $ex is installed" test -n "$f"
	[ -n "$f" ] || continue
	paths=$(grep -oE '^(Epilog|HealthCheckProgram|ExecStart)=/[^ ]+' "$f" | sed 's/^[^=]*=//')
	cmp_ok "$(printf '%s\n' $paths | grep -c .)" -ge 1 "$ex names a command"
	for p in $paths; do
		ok "$ex: $p is where make install put it" test -x "$work/root$p"
	done
done
# Every plugstack.conf key is in spank-zonesort(8), and the README counts them.
keys=$("$ZS_ZONESORT" sort colour=blue 2>&1 | sed -n 's/.*known keys: //p' | tr -d ' ' | tr ',' '\n')
nkeys=$(printf '%s\n' $keys | grep -c .)
cmp_ok "$nkeys" -ge 20 "zonesort names the plugstack.conf keys ($nkeys)"
spank_page=$(find "$work/root" -path '*/man8/spank-zonesort.8' | head -1)
missing=$(for k in $keys; do grep -E '^\.[A-Z]+ ' "$spank_page" | grep -qE "(^\.[A-Z]+ |[ \"])$k=" || echo "$k"; done | tr '\n' ' ')
is "$missing" "" "spank-zonesort(8) describes every key"
like "$(tr '\n' ' ' < "$ZS_SRCDIR/README.md")" "Every key \\($nkeys in all" "README.md counts $nkeys keys"

for page in "${!page_help[@]}"; do
	cat $(for n in ${page_help[$page]}; do echo "$work/$n.opts"; done) | sort -u > "$work/union"
	extra=$(comm -13 "$work/union" <(page_opts "$page") | tr '\n' ' ')
	is "$extra" "" "${page##*/}: every option it lists is in the --help of ${page_help[$page]% }"
done
done_testing
