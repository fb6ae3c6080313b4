#!/usr/bin/env bash
# tests/vm/check-vm.sh [BUILD_DIR]
#
# `make check-vm`: the busybox scenarios (run-all.sh) and the systemd ones
# (systemd/run-all.sh) on both topologies, in two lanes at once. Each VM is
# single-threaded TCG, so it keeps one host core busy; on a 2-core host two
# lanes halve the wall time. The runs are paired so the lanes take about
# as long (measured 2026-11-29, one at a time or under other load, seconds):
#   lane 1: systemd 2node (~1100), then the containerd scenario on 2node
#           (systemd/run-containerd.sh: 694-811 s wall at host load 15-18,
#           not yet timed in a CI run; its base image is made once, here)
#   lane 2: busybox 2node (~610), systemd 4node (~620, and the chaos
#           scenario's 3-minute form on its fixed seed 802 in the same
#           boot: +241 s, 905 s wall in all at host load 5-7;
#           NP_SDVM_CHAOS_MINUTES=0 leaves it out; then 95-deb, the
#           package installed, upgraded over running workloads, removed
#           and purged: 188 s in a fresh-clone CI of 2026-11-29; the
#           whole 4node boot 1,139 s there), busybox 4node (~190)
# Environment:
#   NP_VM_LANES=1   one after the other, as before (a 1-core host, or to
#                   time a scenario alone)
#   NP_VM_ARGS, NP_VM_APPEND_*, NP_SDVM_ARGS, NP_SDVM_4NODE_ONLY,
#   NP_SDVM_TIMEOUT are passed on to the two run-all.sh.
# Each lane's output goes to BUILD_DIR/vm/lane-N.out and is printed whole
# when the lane ends; the exit status is 1 when any run failed.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=${1:-build}
lanes=${NP_VM_LANES:-2}
[[ $lanes == 1 || $lanes == 2 ]] || { echo "check-vm.sh: NP_VM_LANES is 1 or 2, not '$lanes'" >&2; exit 2; }
vmdir=$HERE/../../build/vm
mkdir -p "$vmdir"

# What both lanes share is made once, before they start: the kernel and
# the systemd base archive (both also lock, should a lane get there first).
"$HERE/deps.sh"
"$HERE/fetch-kernel.sh" >/dev/null
"$HERE/systemd/mkroot.sh" >/dev/null
# the Debian package of systemd 4node's 95-deb (make check's check-deb made
# it already; alone, make deb: 72 s)
"$HERE/systemd/deb.sh" "$build" >/dev/null

lane1() {
	local rc=0
	NP_SDVM_TOPOLOGIES=2node "$HERE/systemd/run-all.sh" "$build" || rc=1
	"$HERE/systemd/run-containerd.sh" "$build" || rc=1
	return "$rc"
}
lane2() {
	local rc=0
	NP_VM_TOPOLOGIES=2node "$HERE/run-all.sh" "$build" || rc=1
	NP_SDVM_TOPOLOGIES=4node "$HERE/systemd/run-all.sh" "$build" || rc=1
	NP_VM_TOPOLOGIES=4node "$HERE/run-all.sh" "$build" || rc=1
	return "$rc"
}

start=$SECONDS
if [[ $lanes == 1 ]]; then
	rc=0
	lane1 || rc=1
	lane2 || rc=1
	echo "== check-vm: one lane, $((SECONDS - start)) s"
	exit "$rc"
fi

pids=()
for n in 1 2; do
	(
		t0=$SECONDS
		r=0
		"lane$n" >"$vmdir/lane-$n.out" 2>&1 || r=1
		echo "== lane $n: $((SECONDS - t0)) s, $([[ $r == 0 ]] && echo OK || echo FAILED)" >>"$vmdir/lane-$n.out"
		exit "$r"
	) &
	pids+=($!)
done
# shellcheck disable=SC2317 # invoked via trap
stop_lanes() {
	local p
	for p in "${pids[@]}"; do pkill -TERM -P "$p" 2>/dev/null || true; done
	kill "${pids[@]}" 2>/dev/null || true
}
trap 'stop_lanes; exit 130' INT TERM
rc=0
for n in 1 2; do
	wait "${pids[$((n - 1))]}" || rc=1
done
for n in 1 2; do
	echo "== check-vm lane $n ($([[ $n == 1 ]] && echo "systemd 2node, busybox 4node" || echo "busybox 2node, systemd 4node, containerd 2node")):"
	cat "$vmdir/lane-$n.out"
done
echo "== check-vm: two lanes, $((SECONDS - start)) s"
exit "$rc"
