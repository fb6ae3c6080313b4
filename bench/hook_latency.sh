#!/usr/bin/env bash
# bench/hook_latency.sh [BUILD_DIR] [N]: the OCI hook's own latency on
# this machine, hook start to return (the process started, the state and
# config.json read, numaplaced asked, its answer in force), N (200)
# container starts and stops: the hook's createRuntime and poststop run as
# a runtime runs them, against numaplaced on a fake cgroup tree. The hook
# is NP_HOOKBENCH_HOOK=lean (the default: BUILD_DIR/numaplace-oci-hook, as
# dist/oci/ installs it), cli (`BUILD_DIR/numaplace oci-hook`) or both
# (each start and stop once with each, in alternating order, so that both
# see the same machine: N of each). Each time is taken by this shell ($EPOCHREALTIME) just before it forks the
# hook and just after the hook has exited: fork, exec, the dynamic linker
# and the hook's work. The container is a sleeper moved into a cgroup v2
# group (needs a cgroup2 mount and root; skipped otherwise), whose path
# the fake tree mirrors. Every other start is LSE (2 CPUs, written and
# checked in force), the others LS. Prints p50/p99/max of each stage and
# the load average; asserts nothing (see docs/performance.md; target
# p99 < 5 ms).
set -uo pipefail
build=${1:-build}
n=${2:-200}
lean=("$build/numaplace-oci-hook")
cli=("$build/numaplace" oci-hook)
case ${NP_HOOKBENCH_HOOK:-lean} in
lean | cli) hooks=("${NP_HOOKBENCH_HOOK:-lean}") ;;
both) hooks=(lean cli) ;;
*) echo "hook latency: NP_HOOKBENCH_HOOK is lean, cli or both" >&2; exit 2 ;;
esac
cg2=$(awk '$9 == "cgroup2" {print $5; exit}' /proc/self/mountinfo)
if [ -z "$cg2" ] || [ "$(id -u)" != 0 ]; then
	echo "hook latency: skipped (needs root and a cgroup2 mount)"
	exit 0
fi
# the fake tree in memory, as cgroupfs is (/dev/shm); the state on the
# disk numaplaced would use (/var/tmp; NP_HOOKBENCH_STATE=DIR elsewhere)
base=/tmp
[ -d /dev/shm ] && [ -w /dev/shm ] && base=/dev/shm
tmp=$(mktemp -d "$base/np-hookbench-XXXXXX")
sdir=$(mktemp -d "${NP_HOOKBENCH_STATE:-/var/tmp}/np-hookbench-state-XXXXXX")
grp=$cg2/np-hookbench-$$
dpid= spid=
cleanup() {
	[ -n "$spid" ] && kill "$spid" 2>/dev/null
	[ -n "$dpid" ] && kill "$dpid" 2>/dev/null
	wait 2>/dev/null
	rmdir "$grp" 2>/dev/null
	rm -rf "$tmp" "$sdir"
}
trap cleanup EXIT
. "$(dirname "$0")/../tests/host-lib.sh"
setup "$tmp"
sed -i "s|\"state_dir\": \"[^\"]*\"|\"state_dir\": \"$sdir\"|" "$tmp/np.json"
mkdir "$grp" || exit 1
sleep 3600 &
spid=$!
echo "$spid" >"$grp/cgroup.procs" || exit 1
rel=/np-hookbench-$$
mkdir -p "$tmp/cg$rel"
for f in cgroup.controllers cgroup.subtree_control cgroup.procs cpuset.cpus \
	cpuset.mems cpuset.cpus.effective cpuset.mems.effective; do
	: >"$tmp/cg$rel/$f"
done
mkdir -p "$tmp/bundle"
printf '{"ociVersion":"1.0.2","linux":{"cgroupsPath":"%s"}}' "$rel" >"$tmp/bundle/config.json"
# the hook reads its socket and cgroup root from numaplaced's config
"$build/numaplaced" -c "$tmp/np.json" 2>"$tmp/log" &
dpid=$!
for _ in $(seq 100); do [ -S "$tmp/np.sock" ] && break; sleep 0.1; done
[ -S "$tmp/np.sock" ] || { echo "hook latency: numaplaced did not start"; cat "$tmp/log"; exit 1; }

for k in "${hooks[@]}"; do : >"$tmp/create-$k.us"; : >"$tmp/stop-$k.us"; done
fails=0
for i in $(seq "$n"); do
	if [ $((i % 2)) = 0 ]; then q=LSE; else q=LS; fi
	order=("${hooks[@]}")
	[ $((i % 2)) = 0 ] && [ ${#hooks[@]} = 2 ] && order=("${hooks[1]}" "${hooks[0]}")
	for k in "${order[@]}"; do
		declare -n hook=$k
		id=bench$i$k
		st=$(printf '{"ociVersion":"1.0.2","id":"%s","pid":%d,"bundle":"%s","status":"created","annotations":{"numaplace.io/qos":"%s","numaplace.io/cpus":"2"}}' \
			"$id" "$spid" "$tmp/bundle" "$q")
		t0=${EPOCHREALTIME/[.,]/}
		"${hook[@]}" createRuntime -c "$tmp/np.json" <<<"$st" >/dev/null 2>>"$tmp/hook.err" || fails=$((fails + 1))
		t1=${EPOCHREALTIME/[.,]/}
		printf '{"ociVersion":"1.0.2","id":"%s","pid":null,"bundle":"%s","status":"stopped"}' "$id" "$tmp/bundle" >"$tmp/stop.json"
		"${hook[@]}" poststop -c "$tmp/np.json" <"$tmp/stop.json" >/dev/null 2>>"$tmp/hook.err" || fails=$((fails + 1))
		t2=${EPOCHREALTIME/[.,]/}
		echo $((t1 - t0)) >>"$tmp/create-$k.us"
		echo $((t2 - t1)) >>"$tmp/stop-$k.us"
		unset -n hook
	done
done
placed=$(grep -c 'admitted bench' "$tmp/log")
fo=$(grep -c 'fail-open' "$tmp/hook.err")
stats() {
	sort -n "$1" | awk '{ v[NR] = $1 } END {
		p50 = v[int((NR + 1) * 0.50)]; p99 = v[int(NR * 0.99) > 0 ? int(NR * 0.99) : 1];
		printf "p50 %.2f ms, p99 %.2f ms, max %.2f ms (n=%d)", p50 / 1e3, p99 / 1e3, v[NR] / 1e3, NR }'
}
p99ms() {
	sort -n "$1" | awk '{ v[NR] = $1 } END { i = int(NR * 0.99); if (i < 1) i = 1; printf "%.4g", v[i] / 1e3 }'
}
for k in "${hooks[@]}"; do
	declare -n hook=$k
	# the line bench/summary.sh gathers (bench/figure.h's format)
	p=$(p99ms "$tmp/create-$k.us")
	printf 'figure\tOCI hook createRuntime (%s), start to return, p99\t%s\tms\t< 5 ms\t%s\n' \
		"${hook[*]#"$build/"}" "$p" "$(awk -v p="$p" 'BEGIN { print (p < 5 ? "met" : "not met") }')"
	echo "hook latency, ${hook[*]#"$build/"} createRuntime (admit, written, in force): $(stats "$tmp/create-$k.us")"
	echo "hook latency, ${hook[*]#"$build/"} poststop (release): $(stats "$tmp/stop-$k.us")"
	unset -n hook
done
echo "hook latency: $placed admitted by numaplaced, $fo fail-open, $fails hook failures; target p99 < 5 ms; load average $(cut -d' ' -f1-3 /proc/loadavg)"
[ "$fo" = 0 ] || head -n 3 "$tmp/hook.err"
