#!/usr/bin/env bash
# run-all.sh [BUILD_DIR]
#
# Run tests/vm/scenarios on every topology (what `make check-vm` calls).
# BUILD_DIR/numaplace and BUILD_DIR/numaplaced go into the initramfs when
# they exist.  Environment:
#   NP_VM_TOPOLOGIES  topologies to run (default "2node 4node")
#   NP_VM_ARGS        extra run.sh arguments, word-split (e.g. "--only 00-*")
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=${1:-build}

args=()
for b in numaplace numaplaced np-memtouch; do
	[[ -x $build/$b ]] && args+=(--bin "$build/$b")
done
read -r -a extra <<<"${NP_VM_ARGS:-}"
args+=("${extra[@]}")

rc=0
summary=()
for t in ${NP_VM_TOPOLOGIES:-2node 4node}; do
	if "$HERE/run.sh" --topology "$t" --scenarios "$HERE/scenarios" "${args[@]}"; then
		summary+=("$t: OK")
	else
		summary+=("$t: FAILED")
		rc=1
	fi
done
echo "== VM tests: ${summary[*]}"
exit "$rc"
