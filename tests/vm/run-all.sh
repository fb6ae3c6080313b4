#!/usr/bin/env bash
# run-all.sh [BUILD_DIR]
#
# Run tests/vm/scenarios on every topology (what `make check-vm` calls).
# BUILD_DIR/numaplace, BUILD_DIR/numaplaced and BUILD_DIR/np-memtouch go
# into the initramfs when they exist (run.sh copies the libraries ldd
# lists: libbpf, libelf, libz, ...).  Environment:
#   NP_VM_TOPOLOGIES  topologies to run (default "2node 4node")
#   NP_VM_ARGS        extra run.sh arguments, word-split (e.g. "--only 00-*")
#   NP_VM_TIMEOUT     run.sh --timeout for each topology (default 1200 s)
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=${1:-build}

# The whole run of one topology (20-crash and 66-verify-clean take 2-3 min
# each under TCG on a loaded host); NP_VM_ARGS="--timeout S" overrides.
args=(--timeout "${NP_VM_TIMEOUT:-1200}")
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
