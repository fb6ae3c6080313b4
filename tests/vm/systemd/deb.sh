#!/usr/bin/env bash
# tests/vm/systemd/deb.sh [BUILD_DIR]
#
# The Debian package of this tree for the systemd VM's package scenario
# (scenarios/95-deb.sh, on 4node): BUILD_DIR/deb/numaplace_VERSION_ARCH.deb
# with the version tools/version.sh gives now, built by tools/make-deb.sh
# (make deb: 72 s on 2 shared CPUs, 2026-11-29) when it is not there; make
# check's check-deb has built it before check-vm, so there it costs nothing.
# Prints its path. NP_SDVM_DEB=PATH: that package instead.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd -P)
build=${1:-build}
[[ $build == /* ]] || build=$root/$build
if [[ -n ${NP_SDVM_DEB:-} ]]; then
	[[ -f $NP_SDVM_DEB ]] || { echo "systemd/deb.sh: NP_SDVM_DEB=$NP_SDVM_DEB: no such file" >&2; exit 2; }
	echo "$NP_SDVM_DEB"
	exit 0
fi
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
echo "$deb"
