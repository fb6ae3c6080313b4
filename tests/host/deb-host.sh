#!/usr/bin/env bash
# The Debian package (issue 34, item 4), built by make deb (tools/make-deb.sh)
# when dpkg-buildpackage and debhelper are here (skipped otherwise, said):
#  1. numaplace_VERSION_ARCH.deb with the version numaplace reports, lintian
#     without an error or a warning (tags left are overridden in
#     debian/numaplace.lintian-overrides, each with its reason);
#  2. what it installs: exactly the expected files under /usr, /lib/systemd
#     and /etc (no configuration: numaplaced waits for the operator's), the
#     unit naming /usr/sbin/numaplaced, the hooks /usr/bin/numaplace-oci-hook;
#     the programs run and say the version; the man pages render;
#  3. its maintainer scripts, run with their paths moved below a scratch
#     root and deb-systemd-helper, deb-systemd-invoke and systemctl
#     recorded: a first install enables the unit and starts it (a start
#     its ConditionPathExists= skips until the configuration exists, which
#     postinst says), an upgrade restarts it once and stops nothing, remove
#     stops it and keeps the state and configuration, purge removes them.
# Prints "deb-host: N passed, N failed".
#
#   tests/host/deb-host.sh [BUILD_DIR]
set -euo pipefail
build=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd -P)
tmp=$(mktemp -d /tmp/np-deb-XXXXXX)
trap '[ -n "${NP_KEEP:-}" ] || rm -rf "$tmp"' EXIT
. "$root/tests/host/host-lib.sh"
cd "$root"
if ! command -v dpkg-buildpackage >/dev/null || ! command -v dh >/dev/null; then
	echo "skip deb-host: dpkg-buildpackage or debhelper is not installed (make deps installs them)"
	echo "deb-host: 0 passed, 0 failed"
	exit 0
fi

# ---- 1. the package ------------------------------------------------------------------------
version=$(tools/version.sh)
arch=$(dpkg-architecture -qDEB_HOST_ARCH)
t0=$SECONDS
tools/make-deb.sh "$build" >"$tmp/make-deb.out" 2>&1 && rc=0 || rc=$?
check "make deb: exit 0 in $((SECONDS - t0)) s ($(tail -n 3 "$tmp/make-deb.out" | tr '\n' ' '))" test "$rc" = 0
deb=$build/deb/numaplace_${version}_$arch.deb
check "  $deb" test -f "$deb" -a "$(tail -n 1 "$tmp/make-deb.out")" = "$(realpath -m "$deb")"
[ -f "$deb" ] || { echo "deb-host: $pass passed, $fail failed"; exit 1; }
check "  its Version is numaplace's ($version)" test "$(dpkg-deb -f "$deb" Version)" = "$version"
check "  Package numaplace, Section admin, Architecture $arch" \
	test "$(dpkg-deb -f "$deb" Package Section Architecture | tr '\n' ' ')" = "Package: numaplace Section: admin Architecture: $arch "
check "  it depends on the libraries it links (libjansson, libhwloc, libbpf, libsystemd)" \
	bash -c "dpkg-deb -f '$deb' Depends | grep -q 'libjansson4.*' && dpkg-deb -f '$deb' Depends | grep -q libhwloc && dpkg-deb -f '$deb' Depends | grep -q libbpf && dpkg-deb -f '$deb' Depends | grep -q libsystemd0"
if command -v lintian >/dev/null; then
	tags=$(grep -E '^[EW]: ' "$build/deb/lintian.log" || true)
	check "  lintian: no error, no warning${tags:+ ($tags)}" test -z "$tags"
	check "  lintian's overridden tags are the justified ones ($(grep -c '^O: ' "$build/deb/lintian.log") O:)" \
		test "$(grep '^O: ' "$build/deb/lintian.log" | sed 's/^O: numaplace: \([^ ]*\).*/\1/' | sort -u)" = \
		"$(grep -v '^#' debian/numaplace.lintian-overrides | sed -n 's/^numaplace: \([^ ]*\).*/\1/p' | sort -u)"
fi

# ---- 2. what it installs ---------------------------------------------------------------------------
dpkg-deb -x "$deb" "$tmp/root"
(cd "$tmp/root" && find . \( -type f -o -type l \) -printf '%P\n' | sort) >"$tmp/got"
{
	echo lib/systemd/system/numaplaced.service
	echo usr/bin/numaplace
	echo usr/bin/numaplace-oci-hook
	echo usr/sbin/numaplaced
	for f in numaplace numaplace-oci-hook numaplaced; do echo "usr/share/bash-completion/completions/$f"; done
	for f in numaplace-createRuntime.json numaplace-poststop.json; do
		echo "usr/share/containers/oci/hooks.d/$f"
		echo "usr/share/doc/numaplace/examples/oci/$f"
	done
	echo usr/share/doc/numaplace/examples/oci/config-snippet.json
	echo usr/share/doc/numaplace/examples/nri/conf.json
	echo usr/share/doc/numaplace/examples/numaplace.example.json
	for f in dist/examples/*.json; do echo "usr/share/doc/numaplace/examples/workloads/${f##*/}"; done
	echo usr/share/doc/numaplace/README.md.gz
	for f in docs/*.md; do
		# dh_compress leaves files under 4 KiB as they are
		if [ "$(stat -c %s "$f")" -lt 4096 ]; then echo "usr/share/doc/numaplace/$f"; else echo "usr/share/doc/numaplace/$f.gz"; fi
	done
	echo usr/share/doc/numaplace/changelog.gz
	echo usr/share/doc/numaplace/copyright
	echo usr/share/lintian/overrides/numaplace
	for f in man/*.scd; do
		p=${f#man/}; p=${p%.scd}
		echo "usr/share/man/man${p##*.}/$p.gz"
	done
} | sort >"$tmp/want"
check "the package holds exactly the $(wc -l <"$tmp/want") expected files$(diff "$tmp/want" "$tmp/got" | sed -n 's/^[<>].*/ &/p' | tr '\n' ';')" \
	cmp -s "$tmp/want" "$tmp/got"
check "  and the directory /etc/numaplace/workloads.d, no configuration" \
	test -d "$tmp/root/etc/numaplace/workloads.d" -a ! -e "$tmp/root/etc/numaplace/numaplace.json"
check "  the unit runs /usr/sbin/numaplaced --config /etc/numaplace/numaplace.json" \
	grep -qx 'ExecStart=/usr/sbin/numaplaced --config /etc/numaplace/numaplace.json' "$tmp/root/lib/systemd/system/numaplaced.service"
check "  and starts only once the configuration exists" \
	grep -qx 'ConditionPathExists=/etc/numaplace/numaplace.json' "$tmp/root/lib/systemd/system/numaplaced.service"
check "  the hooks.d files run /usr/bin/numaplace-oci-hook" \
	test "$(jq -r .hook.path "$tmp"/root/usr/share/containers/oci/hooks.d/*.json | sort -u)" = /usr/bin/numaplace-oci-hook
check "  containerd's NRI conf.json as an example, its plugin /usr/bin/numaplace-oci-hook (nothing in /opt or /etc/nri)" \
	test "$(jq -c '[.version, [.plugins[].type]]' "$tmp/root/usr/share/doc/numaplace/examples/nri/conf.json")" = '["0.1",["/usr/bin/numaplace-oci-hook"]]' \
	-a ! -e "$tmp/root/opt" -a ! -e "$tmp/root/etc/nri"
for p in usr/bin/numaplace usr/bin/numaplace-oci-hook usr/sbin/numaplaced; do
	check "  $p --version: ${p##*/} $version" test "$("$tmp/root/$p" --version)" = "${p##*/} $version"
done
out=$(for f in "$tmp"/root/usr/share/man/man*/*.gz; do zcat "$f" | groff -ww -man -Tutf8 -z 2>&1; done)
check "  its man pages render without a warning${out:+ ($out)}" test -z "$out"

# ---- 3. the maintainer scripts ----------------------------------------------------------------------------
dpkg-deb -e "$deb" "$tmp/ctl"
check "the scripts name the state, configuration, run and BPF folders, and the unit" \
	bash -c "grep -q 'rm -rf /var/lib/numaplace /etc/numaplace /run/numaplace' '$tmp/ctl/postrm' && grep -q /sys/fs/bpf/numaplace '$tmp/ctl/postrm' && grep -q \"deb-systemd-invoke \\\$_dh_action 'numaplaced.service'\" '$tmp/ctl/postinst'"
R=$tmp/sys
mkdir -p "$tmp/bin"
for c in deb-systemd-helper deb-systemd-invoke systemctl; do
	printf '#!/bin/sh\necho "%s $*" >>"%s/calls"\n' "$c" "$tmp" >"$tmp/bin/$c"
	chmod +x "$tmp/bin/$c"
done
for s in postinst prerm postrm; do # their absolute paths, below $R
	sed -e "s#/var/lib/numaplace#$R/var/lib/numaplace#g; s#/etc/numaplace#$R/etc/numaplace#g" \
		-e "s#/run/numaplace#$R/run/numaplace#g; s#/sys/fs/bpf/numaplace#$R/sys/fs/bpf/numaplace#g" \
		-e "s#/run/systemd/system#$R/run/systemd/system#g; s#/usr/bin/deb-systemd-helper#$tmp/bin/deb-systemd-helper#g" \
		"$tmp/ctl/$s" >"$tmp/$s"
	chmod +x "$tmp/$s"
done
run() { : >"$tmp/calls"; PATH=$tmp/bin:$PATH "$tmp/$1" "${@:2}" >"$tmp/out" 2>&1; }
calls() { grep -c -- "$1" "$tmp/calls" || true; }
mkdir -p "$R/run/systemd/system" "$R/etc/numaplace/workloads.d"
run postinst configure
check "first install: the unit enabled, started once (deb-systemd-invoke start)" \
	test "$(calls 'deb-systemd-helper enable numaplaced.service')/$(calls 'deb-systemd-invoke start numaplaced.service')" = 1/1
check "  and postinst says it waits for /etc/numaplace/numaplace.json" \
	grep -q "numaplaced is enabled and starts once $R/etc/numaplace/numaplace.json exists" "$tmp/out"
echo '{}' >"$R/etc/numaplace/numaplace.json"
echo '{"name": "w", "qos": "LS", "containers": [{"name": "m"}]}' >"$R/etc/numaplace/workloads.d/w.json"
mkdir -p "$R/var/lib/numaplace" "$R/run/numaplace" "$R/sys/fs/bpf/numaplace/v2"
echo '{}' >"$R/var/lib/numaplace/state.json"
echo '{}' >"$R/var/lib/numaplace/host-units.json" # an older release's place
echo '{}' >"$R/run/numaplace/host-units.json"
echo '{}' >"$R/run/numaplace/hostiso.json"
run prerm upgrade 0.5
check "upgrade: prerm stops nothing" test "$(calls stop)" = 0
run postinst configure 0.5
check "  postinst restarts it once, starts nothing else" \
	test "$(calls 'deb-systemd-invoke restart numaplaced.service')/$(calls 'deb-systemd-invoke start')" = 1/0
check "  and says nothing when the configuration exists" test ! -s "$tmp/out"
run prerm remove
check "remove: prerm stops it (its clean stop gives the host back)" \
	test "$(calls 'deb-systemd-invoke stop numaplaced.service')" = 1
run postrm remove
check "  postrm keeps the state, the configuration and the specs" \
	test -f "$R/var/lib/numaplace/state.json" -a -f "$R/etc/numaplace/numaplace.json" -a -f "$R/etc/numaplace/workloads.d/w.json"
check "  and the records of host changes (/run/numaplace: what a stop did not give back)" \
	test -f "$R/run/numaplace/host-units.json" -a -f "$R/run/numaplace/hostiso.json"
run postrm purge
check "purge: /var/lib/numaplace, /etc/numaplace, /run/numaplace and the BPF pins are gone" \
	test ! -e "$R/var/lib/numaplace" -a ! -e "$R/etc/numaplace" -a ! -e "$R/run/numaplace" -a ! -e "$R/sys/fs/bpf/numaplace"
check "  and the unit's enablement purged (deb-systemd-helper purge)" \
	test "$(calls 'deb-systemd-helper purge numaplaced.service')" = 1

echo "deb-host: $pass passed, $fail failed"
[ -n "${NP_SUMMARY_FILE:-}" ] && echo "deb $pass $fail" >>"$NP_SUMMARY_FILE"
[ "$fail" -eq 0 ]
