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
#   NP_VM_APPEND_4node  kernel arguments for 4node (default
#                     np.crash_kills=15; empty for 20-crash's 50 kills)
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

# What failed is repeated at the very end, so that the last lines of a long
# run (often all a CI report keeps) say which scenario failed and why.
failure_digest() {
	local t=$1 log=$2 name
	[[ -f $log ]] || { echo "  $t: no console log"; return; }
	if ! grep -q '^NP-RESULT [^ ]* FAIL' "$log"; then
		echo "  $t: no scenario failed; last console lines:"
		grep -v '^NP-' "$log" | tail -n 8 | sed 's/^/    /'
		return
	fi
	grep '^NP-RESULT [^ ]* FAIL' "$log" | while read -r _ name _; do
		grep "^NP-RESULT $name " "$log" | sed "s/^NP-RESULT /  $t /"
		grep -F "[$name] " "$log" | grep -v '^NP-' | tail -n 8 | sed 's/^/    /'
	done
}

rc=0
summary=()
failed=()
# 20-crash runs its 50 kills on 2node; on 4node (where its point is the
# other topology, not more kills) 15 keep CI under its time budget.
# NP_VM_APPEND_<topology> replaces these kernel arguments.
NP_VM_APPEND_4node=${NP_VM_APPEND_4node-np.crash_kills=15}
for t in ${NP_VM_TOPOLOGIES:-2node 4node}; do
	var=NP_VM_APPEND_$t
	targs=("${args[@]}")
	[[ -n ${!var:-} ]] && targs+=(--append "${!var}")
	targs+=("${extra[@]}") # after: an --append in NP_VM_ARGS wins
	if "$HERE/run.sh" --topology "$t" --scenarios "$HERE/scenarios" "${targs[@]}"; then
		summary+=("$t: OK")
	else
		summary+=("$t: FAILED")
		failed+=("$t")
		rc=1
	fi
done
if ((${#failed[@]})); then
	echo "== VM failures (whole console in build/vm/last-<topology>.log):"
	for t in "${failed[@]}"; do
		failure_digest "$t" "$HERE/../../build/vm/last-$t.log"
	done
fi
echo "== VM tests: ${summary[*]}"
exit "$rc"
