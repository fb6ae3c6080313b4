#!/usr/bin/env bash
# tests/vm/systemd/run-containerd.sh [BUILD_DIR]
#
# The containerd scenarios (containerd/95-containerd.sh, issue 31) in one systemd VM
# boot on the 2-node topology: `make check-containerd`, and lane 2 of
# `make check-vm`. Its base root has containerd, runc and python3-grpcio
# added (mkroot.sh EXTRA_PKGS: 101 MB against 41 MB, made once and cached,
# about 50 s). Log: build/vm/sd-containerd.log. Environment:
#   NP_CTRD_TIMEOUT  the VM's hard limit in seconds (default 1800)
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=${1:-build}
PKGS="containerd runc python3 python3-grpcio python3-protobuf"
args=()
for b in numaplaced numaplace numaplace-oci-hook; do
	[[ -x $build/$b ]] || { echo "run-containerd.sh: $build/$b missing (make first)" >&2; exit 2; }
	args+=(--bin "$build/$b")
done
exec "$HERE/run.sh" --topology 2node --scenarios "$HERE/containerd" --extra-pkgs "$PKGS" \
	"${args[@]}" --log-name sd-containerd --timeout "${NP_CTRD_TIMEOUT:-1800}" --quiet
