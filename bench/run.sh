#!/usr/bin/env bash
# bench/run.sh BUILD BENCH...: `make bench`. Runs each benchmark program,
# then bench/drift_latency.sh and bench/hook_latency.sh (the OCI hook, then
# containerd's NRI plugin), everything shown
# and kept in BUILD/bench.log, then the targets' table (bench/summary.sh).
set -uo pipefail
build=${1:?usage: bench/run.sh BUILD BENCH...}
shift
here=$(dirname "$0")
log=$build/bench.log
{
	for b in "$@"; do
		echo "== $b"
		"$b" || exit 1
	done
	echo "== bench/drift_latency.sh"
	"$here/drift_latency.sh" "$build" || exit 1
	echo "== bench/hook_latency.sh"
	"$here/hook_latency.sh" "$build" || exit 1
	echo "== NP_HOOKBENCH_HOOK=nri bench/hook_latency.sh"
	NP_HOOKBENCH_HOOK=nri "$here/hook_latency.sh" "$build" || exit 1
} 2>&1 | tee "$log"
rc=$?
((rc == 0)) || { echo "bench/run.sh: a benchmark failed (exit $rc); log in $log"; exit "$rc"; }
"$here/summary.sh" "$log"
