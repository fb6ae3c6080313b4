#!/usr/bin/env bash
# tests/vm/systemd/deb.sh [BUILD_DIR]
#
# The Debian packages of this tree for the systemd VM's package scenario
# (scenarios/95-deb.sh, on 4node), one path a line:
#  1. BUILD_DIR/deb/numaplace_VERSION_ARCH.deb with the version
#     tools/version.sh gives now, built by tools/make-deb.sh (make deb: 72 s
#     on 2 shared CPUs, 2026-11-29) when it is not there; make check's
#     check-deb has built it before check-vm, so there it costs nothing;
#  2. BUILD_DIR/deb-vm/numaplace_VERSION+up1_ARCH.deb, the same package with
#     a higher version, for the upgrade: the first unpacked (dpkg-deb -R),
#     Version: VERSION+up1 in its control (dpkg --compare-versions gt),
#     packed again (dpkg-deb -b): the same files and maintainer scripts,
#     without a second dpkg-buildpackage; remade when the first is newer.
# NP_SDVM_DEB=PATH: that package instead (and its +up1 copy).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd -P)
build=${1:-build}
[[ $build == /* ]] || build=$root/$build
if [[ -n ${NP_SDVM_DEB:-} ]]; then
	[[ -f $NP_SDVM_DEB ]] || { echo "systemd/deb.sh: NP_SDVM_DEB=$NP_SDVM_DEB: no such file" >&2; exit 2; }
	deb=$NP_SDVM_DEB
else
	deb=$build/deb/numaplace_$("$root/tools/version.sh")_$(dpkg --print-architecture).deb
	if [[ ! -f $deb ]]; then
		echo "systemd/deb.sh: no $deb: make deb" >&2
		mkdir -p "$build"
		"$root/tools/make-deb.sh" "$build" >"$build/deb-vm.log" 2>&1 || {
			tail -n 20 "$build/deb-vm.log" >&2
			echo "systemd/deb.sh: make deb failed (the whole output: $build/deb-vm.log)" >&2
			exit 1
		}
		[[ -f $deb ]] || { echo "systemd/deb.sh: make deb made no $deb" >&2; exit 1; }
	fi
fi
echo "$deb"

# 2. the higher version
ver=$(dpkg-deb -f "$deb" Version)
up=$ver+up1
dpkg --compare-versions "$up" gt "$ver" || { echo "systemd/deb.sh: $up is not above $ver" >&2; exit 1; }
out=$build/deb-vm/numaplace_${up}_$(dpkg-deb -f "$deb" Architecture).deb
if [[ ! -f $out || $deb -nt $out ]]; then
	mkdir -p "$build/deb-vm"
	tmp=$(mktemp -d "$build/deb-vm/up.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	dpkg-deb -R "$deb" "$tmp/pkg"
	sed -i "s/^Version: .*/Version: $up/" "$tmp/pkg/DEBIAN/control"
	[[ $(grep -c "^Version: $up\$" "$tmp/pkg/DEBIAN/control") == 1 ]] || {
		echo "systemd/deb.sh: no Version: $up in the control file of the copy" >&2
		exit 1
	}
	dpkg-deb --root-owner-group -b "$tmp/pkg" "$tmp/up.deb" >/dev/null
	[[ $(dpkg-deb -f "$tmp/up.deb" Version) == "$up" ]] || { echo "systemd/deb.sh: the copy's Version is not $up" >&2; exit 1; }
	mv "$tmp/up.deb" "$out"
fi
echo "$out"
