# QEMU's own TCG cache model (contrib/plugins/cache.c of the qemu source
# package the installed qemu-system-x86 was built from), compiled against
# the plugin API header of that same source, kept in a cache directory
# outside the source tree. The model is QEMU's: nothing of it is copied
# into this project. Source after env.sh.
#
#   qcp_build     prints the path of the built plugin (libcache.so),
#                 fetching and building it on first use; fails naming
#                 what is missing
#
# ZS_QEMU_PLUGIN_CACHE: where the source and the plugin are kept (default
# /var/cache/zonesort-qemu-plugin). The deb-src lines are made from the
# machine's own apt sources (deb822 or one-line), in a list of their own,
# so apt's configuration is left as it is.

QCP_DIR=${ZS_QEMU_PLUGIN_CACHE:-/var/cache/zonesort-qemu-plugin}

# _qcp_srclist FILE: a deb-src line for every "deb" source of the machine.
_qcp_srclist() {
	{
		cat /etc/apt/sources.list 2>/dev/null | sed -n 's/^deb \(.*\)/deb-src \1/p'
		for f in /etc/apt/sources.list.d/*.sources; do
			[ -e "$f" ] || continue
			awk 'BEGIN { RS = ""; FS = "\n" }
				{ t = u = s = c = ""
				  for (i = 1; i <= NF; i++) {
					split($i, kv, ": ")
					if (kv[1] == "Types") t = kv[2]; else if (kv[1] == "URIs") u = kv[2]
					else if (kv[1] == "Suites") s = kv[2]; else if (kv[1] == "Components") c = kv[2]
				  }
				  if (t ~ /(^| )deb( |$)/) { n = split(s, suites, " "); for (j = 1; j <= n; j++) print "deb-src " u " " suites[j] " " c } }' "$f"
		done
	} | sort -u > "$1"
	[ -s "$1" ]
}

qcp_build() {
	local ver src out=$QCP_DIR/libcache.so top
	ver=$(dpkg-query -W -f='${source:Version}' qemu-system-x86 2>/dev/null) ||
		{ echo "qemu-cache-plugin: qemu-system-x86 is not installed" >&2; return 1; }
	[ -s "$out" ] && [ "$(cat "$QCP_DIR/version" 2>/dev/null)" = "$ver" ] && { printf '%s' "$out"; return 0; }
	pkg-config --exists glib-2.0 ||
		{ echo "qemu-cache-plugin: GLib's headers are missing (libglib2.0-dev, scripts/debian-packages.bench)" >&2; return 1; }
	mkdir -p "$QCP_DIR/lists/partial" || return 1
	_qcp_srclist "$QCP_DIR/sources.list" ||
		{ echo "qemu-cache-plugin: no deb source in /etc/apt to make deb-src lines from" >&2; return 1; }
	local -a apt=(apt-get -q -o Dir::Etc::sourcelist="$QCP_DIR/sources.list" -o Dir::Etc::sourceparts=-
		-o Dir::State::Lists="$QCP_DIR/lists")
	src=$(ls "$QCP_DIR"/qemu_*.orig.tar.xz 2>/dev/null | head -1)
	if [ -z "$src" ] || ! [ -e "$QCP_DIR/qemu_${ver#*:}.dsc" ]; then
		(cd "$QCP_DIR" && "${apt[@]}" update > "$QCP_DIR/apt.log" 2>&1 &&
			"${apt[@]}" source --download-only "qemu=$ver" >> "$QCP_DIR/apt.log" 2>&1) ||
			{ echo "qemu-cache-plugin: apt-get source qemu=$ver failed (see $QCP_DIR/apt.log)" >&2; return 1; }
		src=$(ls "$QCP_DIR"/qemu_*.orig.tar.xz | head -1)
	fi
	rm -rf "$QCP_DIR/src" && mkdir -p "$QCP_DIR/src" || return 1
	tar -xJf "$src" -C "$QCP_DIR/src" --wildcards '*/contrib/plugins/cache.c' '*/include/qemu/qemu-plugin.h' ||
		{ echo "qemu-cache-plugin: $src has no contrib/plugins/cache.c" >&2; return 1; }
	# Debian's patches to that source, where one touches the plugin or its API.
	tar -xJf "$QCP_DIR/qemu_${ver#*:}.debian.tar.xz" -C "$QCP_DIR/src" debian/patches 2> /dev/null
	top=$(ls -d "$QCP_DIR"/src/qemu-*/)
	if [ -d "$QCP_DIR/src/debian/patches" ] &&
		grep -l -E '^\+\+\+ [^ ]*(contrib/plugins/cache\.c|include/qemu/qemu-plugin\.h)' "$QCP_DIR"/src/debian/patches/* 2> /dev/null | grep -q .; then
		echo "qemu-cache-plugin: Debian patches the plugin or its API; apply them before building" >&2
		return 1
	fi
	gcc -std=gnu11 -O2 -fPIC -shared $(pkg-config --cflags glib-2.0) -I "$top/include/qemu" \
		-o "$out.new" "$top/contrib/plugins/cache.c" > "$QCP_DIR/build.log" 2>&1 ||
		{ echo "qemu-cache-plugin: build failed (see $QCP_DIR/build.log)" >&2; return 1; }
	mv "$out.new" "$out" && printf '%s' "$ver" > "$QCP_DIR/version" && printf '%s' "$out"
}
