#!/usr/bin/env bash
# make install and make uninstall into a DESTDIR (issue 34, item 1), as a
# packager or an operator runs them:
#  1. the default PREFIX (/usr/local): exactly the files tools/install.sh
#     lists, nothing else, with their modes; the installed programs run and
#     say the build's version; the unit names the installed numaplaced and
#     configuration, passes systemd-analyze verify and keeps its exposure
#     (at most 4.0); the hooks.d files name the installed hook; the example
#     configuration is installed, and a second install keeps one that was
#     changed; man pages when the build has them (MAN=no otherwise, said).
#  2. PREFIX=/usr and SYSCONFDIR=/opt/np/etc: every path follows (the unit,
#     the hooks' --config).
#  3. make uninstall leaves no file behind (an edited configuration and
#     workload specs are kept, and said).
#  5. containerd's NRI plugin: the link /opt/nri/bin/numaplace to the hook,
#     /etc/nri/conf.json made when there is none, numaplace's plugin added
#     to one that is there (its other plugins, version and mode kept; once;
#     a malformed one left as it is, and said), and uninstall taking only
#     numaplace's plugin out.
#  4. bash completion: every command of numaplace and every long option
#     of each (read from the code: the command table of tools/numaplace.c
#     and the struct option arrays), of numaplaced and of the hook.
# Prints "install-host: N passed, N failed".
#
#   tests/host/install-host.sh [BUILD_DIR]
set -euo pipefail
build=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd -P)
tmp=$(mktemp -d /tmp/np-install-XXXXXX)
trap '[ -n "${NP_KEEP:-}" ] || rm -rf "$tmp"' EXIT
. "$root/tests/host/host-lib.sh"
cd "$root"
made=$(sed -n 's/^#define NP_VERSION "\(.*\)"$/\1/p' "$build/gen/np_version.h")
man=yes
compgen -G "$build/man/*.[158]" >/dev/null || {
	man=no
	echo "info no man pages in $build/man (scdoc missing?): installing with MAN=no"
}
mk() { make --no-print-directory -s BUILD="$build" MAN=$man "$@"; }
files() { (cd "$1" && find . \( -type f -o -type l \) -printf '%P %m %y\n' | sort); }

# ---- 1. the default PREFIX --------------------------------------------------------------
D=$tmp/a
unitdir=$(pkg-config --variable=systemdsystemunitdir systemd 2>/dev/null || echo /usr/local/lib/systemd/system)
mk install DESTDIR="$D" >"$tmp/install.out"
{
	echo "etc/numaplace/numaplace.json 644 f"
	echo "etc/nri/conf.json 644 f"
	echo "opt/nri/bin/numaplace 777 l"
	echo "usr/local/share/doc/numaplace/examples/nri/conf.json 644 f"
	echo "${unitdir#/}/numaplaced.service 644 f"
	echo "usr/local/bin/numaplace 755 f"
	echo "usr/local/bin/numaplace-oci-hook 755 f"
	echo "usr/local/sbin/numaplaced 755 f"
	for f in numaplace numaplace-oci-hook numaplaced; do
		[ $f = numaplace ] && echo "usr/local/share/bash-completion/completions/$f 644 f" ||
			echo "usr/local/share/bash-completion/completions/$f 777 l"
	done
	for f in numaplace-createRuntime.json numaplace-poststop.json; do
		echo "usr/local/share/containers/oci/hooks.d/$f 644 f"
		echo "usr/local/share/doc/numaplace/examples/oci/$f 644 f"
	done
	echo "usr/local/share/doc/numaplace/examples/oci/config-snippet.json 644 f"
	echo "usr/local/share/doc/numaplace/README.md 644 f"
	for f in docs/*.md; do echo "usr/local/share/doc/numaplace/$f 644 f"; done
	echo "usr/local/share/doc/numaplace/examples/numaplace.example.json 644 f"
	for f in dist/examples/*.json; do
		echo "usr/local/share/doc/numaplace/examples/workloads/${f##*/} 644 f"
	done
	if [ $man = yes ]; then
		for f in "$build"/man/*.[158]; do
			echo "usr/local/share/man/man${f##*.}/${f##*/} 644 f"
		done
	fi
} | sort >"$tmp/want"
files "$D" >"$tmp/got"
check "the installed tree is exactly the expected $(wc -l <"$tmp/want") files and links, modes included$(diff "$tmp/want" "$tmp/got" | sed -n 's/^[<>].*/ &/p' | tr '\n' ';')" \
	cmp -s "$tmp/want" "$tmp/got"
check "  workloads.d is made, 0755" test "$(stat -c %a "$D/etc/numaplace/workloads.d")" = 755
for p in usr/local/bin/numaplace usr/local/bin/numaplace-oci-hook usr/local/sbin/numaplaced; do
	check "  $p --version: ${p##*/} $made" test "$("$D/$p" --version)" = "${p##*/} $made"
done
unit=$D$unitdir/numaplaced.service
check "  the unit starts the installed numaplaced with the installed configuration" \
	grep -qx 'ExecStart=/usr/local/sbin/numaplaced --config /etc/numaplace/numaplace.json' "$unit"
check "  the unit's ExecStartPre and condition name them too" \
	test "$(grep -c '/usr/local/sbin/numaplaced\|/etc/numaplace/numaplace.json' "$unit")" = 3
check "  the unit is the shipped one but for the paths" \
	diff <(grep -v '^#' dist/numaplaced.service) <(grep -v '^#' "$unit")
if command -v systemd-analyze >/dev/null; then
	# its paths made the DESTDIR's, for verify to find the programs
	mkdir -p "$tmp/unit"
	sed "s|/usr/local/sbin/|$D/usr/local/sbin/|g" "$unit" >"$tmp/unit/numaplaced.service"
	out=$(systemd-analyze verify --man=no "$tmp/unit/numaplaced.service" 2>&1) && rc=0 || rc=$?
	check "  systemd-analyze verify: no complaint (exit $rc: $out)" test "$rc/$out" = 0/
fi
if systemd-analyze security --help 2>/dev/null | grep -- --offline >/dev/null; then
	fig=$(systemd-analyze security --offline=true "$unit" 2>&1 |
		sed -n 's/.*Overall exposure level for numaplaced.service: \([0-9.]*\).*/\1/p')
	check "  the installed unit's exposure $fig is at most 4.0" \
		awk -v f="$fig" 'BEGIN { exit !(f != "" && f + 0 <= 4.0) }'
fi
for f in numaplace-createRuntime numaplace-poststop; do
	h=$D/usr/local/share/containers/oci/hooks.d/$f.json
	check "  hooks.d $f: the installed hook, the stage, the numaplace.io/ condition" \
		test "$(jq -c '[.hook.path, .hook.args, .stages, (.when.annotations | keys)]' "$h")" = \
		"$(jq -c --arg s "${f#numaplace-}" '["/usr/local/bin/numaplace-oci-hook", ["numaplace-oci-hook", $s], [$s], ["^numaplace\\.io/"]]' <<<null)"
done
check "  the crun snippet names the installed hook" \
	test "$(jq -r '[.hooks[][].path] | unique | join(" ")' "$D/usr/local/share/doc/numaplace/examples/oci/config-snippet.json")" = /usr/local/bin/numaplace-oci-hook
check "  /opt/nri/bin/numaplace is a link to the installed hook" \
	test "$(readlink "$D/opt/nri/bin/numaplace")" = /usr/local/bin/numaplace-oci-hook
check "  /etc/nri/conf.json: version 0.1, numaplace's plugin by its path, pause ignored, annotated containers" \
	test "$(jq -c . "$D/etc/nri/conf.json")" = '{"version":"0.1","plugins":[{"type":"/opt/nri/bin/numaplace","conf":{"pause":"ignore","containers":"annotated"}}]}'
check "  the example is the same" cmp -s "$D/etc/nri/conf.json" "$D/usr/local/share/doc/numaplace/examples/nri/conf.json"
check "  the configuration is the example" cmp -s dist/numaplace.example.json "$D/etc/numaplace/numaplace.json"
check "  the installed configuration is valid for numaplaced (--check-config on a file topology)" \
	bash -c "jq '.topology = \"$root/tests/data/topology/vm-2node.json\" | .cpu_online_file = \"\"' '$D/etc/numaplace/numaplace.json' >'$tmp/c.json' && chmod 0644 '$tmp/c.json' && '$D/usr/local/sbin/numaplaced' --check-config -c '$tmp/c.json' >/dev/null"
[ $man = no ] && check "  MAN=no is said" grep -q 'MAN=no: no man pages installed' "$tmp/install.out"
echo '{"topology": "live"}' >"$D/etc/numaplace/numaplace.json"
echo '{"name": "w", "qos": "LS", "containers": [{"name": "m", "cpu": "1"}]}' >"$D/etc/numaplace/workloads.d/w.json"
mk install DESTDIR="$D" >"$tmp/install2.out"
check "a second install keeps a changed configuration, and says so" \
	test "$(cat "$D/etc/numaplace/numaplace.json")" = '{"topology": "live"}'
check "  said: $(grep 'numaplace.json is there: kept' "$tmp/install2.out")" grep -q "numaplace.json is there: kept" "$tmp/install2.out"

# ---- 2. PREFIX=/usr, SYSCONFDIR=/opt/np/etc -------------------------------------------------
E=$tmp/b
mk install DESTDIR="$E" PREFIX=/usr SYSCONFDIR=/opt/np/etc UNITDIR=/usr/lib/systemd/system >/dev/null
check "PREFIX=/usr: /usr/bin/numaplace, /usr/sbin/numaplaced, /usr/share/doc/numaplace" \
	test -x "$E/usr/bin/numaplace" -a -x "$E/usr/sbin/numaplaced" -a -f "$E/usr/share/doc/numaplace/README.md"
check "  hooks.d in /usr/share/containers/oci/hooks.d (where podman and CRI-O look)" \
	test -f "$E/usr/share/containers/oci/hooks.d/numaplace-createRuntime.json"
check "  the unit: /usr/sbin/numaplaced --config /opt/np/etc/numaplace/numaplace.json" \
	grep -qx 'ExecStart=/usr/sbin/numaplaced --config /opt/np/etc/numaplace/numaplace.json' "$E/usr/lib/systemd/system/numaplaced.service"
check "  ConditionPathExists names it too" \
	grep -qx 'ConditionPathExists=/opt/np/etc/numaplace/numaplace.json' "$E/usr/lib/systemd/system/numaplaced.service"
check "  the hook is given --config, the programs' built-in path being /etc's" \
	test "$(jq -c '.hook.args' "$E/usr/share/containers/oci/hooks.d/numaplace-poststop.json")" = \
	'["numaplace-oci-hook","poststop","--config","/opt/np/etc/numaplace/numaplace.json"]'
check "  the configuration in /opt/np/etc/numaplace" test -f "$E/opt/np/etc/numaplace/numaplace.json"
check "  NRI's conf gives the plugin that configuration" \
	test "$(jq -c '.plugins[0].conf.config' "$E/etc/nri/conf.json")" = '"/opt/np/etc/numaplace/numaplace.json"'
check "  nothing under /usr/local, under /etc only containerd's nri/conf.json" \
	test ! -e "$E/usr/local" -a "$(cd "$E/etc" && find . -type f)" = ./nri/conf.json
mk install DESTDIR="$tmp/c" INSTALL_CONFIG=no >/dev/null
check "INSTALL_CONFIG=no: no configuration, workloads.d still made" \
	test ! -e "$tmp/c/etc/numaplace/numaplace.json" -a -d "$tmp/c/etc/numaplace/workloads.d"

# ---- 3. uninstall ---------------------------------------------------------------------------
mk uninstall DESTDIR="$E" PREFIX=/usr SYSCONFDIR=/opt/np/etc UNITDIR=/usr/lib/systemd/system >/dev/null
check "uninstall leaves no file or link ($(files "$E" | head -3 | tr '\n' ' '))" test -z "$(files "$E")"
check "  nor the folders of its own (/opt/np/etc/numaplace, /usr/share/doc/numaplace)" \
	test ! -e "$E/opt/np/etc/numaplace" -a ! -e "$E/usr/share/doc/numaplace"
mk uninstall DESTDIR="$D" >"$tmp/un.out"
check "uninstall keeps a changed configuration and the workload specs, and says so" \
	test "$(files "$D")" = "$(printf 'etc/numaplace/numaplace.json 644 f\netc/numaplace/workloads.d/w.json 644 f')"
check "  said ($(tr '\n' ' ' <"$tmp/un.out"))" \
	test "$(grep -c 'differs from the example: kept\|holds workload specs: kept' "$tmp/un.out")" = 2

# ---- 5. containerd's conf.json, merged ------------------------------------------------------
F=$tmp/f
mkdir -p "$F/etc/nri"
echo '{"version": "0.1", "plugins": [{"type": "other", "conf": {"a": 1}}]}' >"$F/etc/nri/conf.json"
chmod 0640 "$F/etc/nri/conf.json"
mk install DESTDIR="$F" INSTALL_CONFIG=no >"$tmp/f.out"
check "NRI: an /etc/nri/conf.json there gets numaplace's plugin after its own" \
	test "$(jq -c '[.version, [.plugins[].type], .plugins[0].conf]' "$F/etc/nri/conf.json")" = '["0.1",["other","/opt/nri/bin/numaplace"],{"a":1}]'
check "  its mode kept (0640)" test "$(stat -c %a "$F/etc/nri/conf.json")" = 640
check "  said ($(grep conf.json "$tmp/f.out"))" grep -q "conf.json: numaplace's plugin added after the 1 there" "$tmp/f.out"
cp "$F/etc/nri/conf.json" "$tmp/f.conf"
mk install DESTDIR="$F" INSTALL_CONFIG=no >"$tmp/f2.out"
check "  installed again: unchanged, numaplace's plugin once, said" \
	bash -c "cmp -s '$tmp/f.conf' '$F/etc/nri/conf.json' && grep -q \"has numaplace's plugin already: kept\" '$tmp/f2.out'"
mk uninstall DESTDIR="$F" INSTALL_CONFIG=no >"$tmp/f3.out"
check "  uninstall takes numaplace's plugin out and keeps the other" \
	test "$(jq -c . "$F/etc/nri/conf.json")" = '{"version":"0.1","plugins":[{"type":"other","conf":{"a":1}}]}'
check "  and the link" test ! -e "$F/opt/nri/bin/numaplace" -a ! -L "$F/opt/nri/bin/numaplace"
G=$tmp/g
mkdir -p "$G/etc/nri"
printf '{"plugins": [' >"$G/etc/nri/conf.json"
mk install DESTDIR="$G" INSTALL_CONFIG=no >"$tmp/g.out" 2>&1
check "NRI: a malformed conf.json is left as it is, and said" \
	bash -c "[ \"\$(cat '$G/etc/nri/conf.json')\" = '{\"plugins\": [' ] && grep -q 'is not a JSON object with a \"plugins\" array: kept as it is' '$tmp/g.out'"
mk install DESTDIR="$tmp/h" INSTALL_CONFIG=no INSTALL_NRI=no >/dev/null
check "INSTALL_NRI=no: nothing in /opt or /etc/nri; the example names the hook itself" \
	test ! -e "$tmp/h/opt" -a ! -e "$tmp/h/etc/nri" -a \
	"$(jq -r '.plugins[0].type' "$tmp/h/usr/local/share/doc/numaplace/examples/nri/conf.json")" = /usr/local/bin/numaplace-oci-hook

# ---- 4. bash completion ------------------------------------------------------------------------
comp=dist/bash-completion/numaplace
complete_words() { # CMD WORD... : what completing after the words offers
	bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
		f=$(complete -p "$1" | sed "s/.*-F \([^ ]*\) .*/\1/"); "$f"; printf "%s\n" "${COMPREPLY[@]}"' _ "$comp" "$@" | sort
}
cmds=$(sed -n '/^} commands\[\] = {/,/^};/p; /commands\[\] = {/,/^};/p' tools/numaplace.c |
	grep -o '{"[a-z-]*", cmd_[a-z_]*' | sed 's/{"\([a-z-]*\)", \(cmd_[a-z_]*\)/\1 \2/' | sort -u)
check "the command table has commands ($(wc -l <<<"$cmds"))" test "$(wc -l <<<"$cmds")" -ge 10
got=$(complete_words numaplace "")
check "completion offers every command of tools/numaplace.c, and no other$(diff <(cut -d' ' -f1 <<<"$cmds" | sort) <(grep -v '^-' <<<"$got") | sed -n 's/^[<>].*/ &/p' | tr '\n' ';')" \
	test "$(cut -d' ' -f1 <<<"$cmds" | sort)" = "$(grep -v '^-' <<<"$got")"
longopts() { # FILE: the long options of its struct option arrays
	awk '/struct option [a-z_]*\[\] = \{/,/\};/' "$1" | grep -o '{"[a-z-]*"' | sed 's/{"/--/; s/"//'
}
nopt=0 missing=
while read -r c fn; do
	f=$(grep -l "^int $fn(" tools/*.c)
	got=$(complete_words numaplace "$c" --)
	for o in $(longopts "$f"); do
		nopt=$((nopt + 1))
		grep -qx -- "$o" <<<"$got" || missing+=" numaplace $c $o ($f);"
	done
done <<<"$cmds"
check "completion offers every long option of every command ($nopt)${missing:+, not:$missing}" \
	test -z "$missing"
got=$(complete_words numaplaced --) missing=
for o in $(longopts userspace/daemon/numaplaced.c); do
	grep -qx -- "$o" <<<"$got" || missing+=" $o"
done
check "  and numaplaced's ($(longopts userspace/daemon/numaplaced.c | tr '\n' ' '))${missing:+, not:$missing}" \
	test -z "$missing"
got=$(complete_words numaplace-oci-hook "")
check "  the hook's stages, and NRI's invoke" test "$(tr '\n' ' ' <<<"$got")" = "createRuntime invoke poststop prestart "
check "  'numaplace admit --wait ' offers enforced and durable" \
	test "$(complete_words numaplace admit --wait "" | tr '\n' ' ')" = "durable enforced "

echo "install-host: $pass passed, $fail failed"
[ -n "${NP_SUMMARY_FILE:-}" ] && echo "install $pass $fail" >>"$NP_SUMMARY_FILE"
[ "$fail" -eq 0 ]
