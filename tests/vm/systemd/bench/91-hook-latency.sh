#!/bin/bash
# Benchmark (make bench-systemd; nothing asserted but that it ran): the
# latency of numaplace-oci-hook (dist/oci) as crun's createRuntime and poststop
# hooks, numaplaced under the systemd driver. N container starts (an LSE
# container of one CPU, cgroupfs driver, its program `true`); the hook is
# run by a wrapper that takes bash's clock ($EPOCHREALTIME, no fork) just
# before exec'ing the hook and after it returns, so the figure is the hook
# process from start to return (admission applied and checked in force).
# Also the whole `crun run` with and without the hooks.
# np-timeout: 1500
. /sdtest/sdlib.sh
journal_on_fail numaplaced
on_exit "systemctl stop numaplaced"
N=${NP_BENCH_HOOK_N:-200}
W=/run/np/91
mkdir -p $W
[ -x "$NPHOOK" ] || fail "no $NPHOOK in the image (run.sh --bin BUILD/numaplace-oci-hook)"
write_config '"cgroup_parent": "numaplace.slice", "reconcile_period_s": 10,
  "node_policy": {"cpu_policy": "static", "reserved_cpus": "0"},
  "verify": {"enabled": "off"},
  "oci_hook": {"policy": {"rules": [{"cgroup_parent": "np", "qos": ["LSE", "LS"]}]}}'
start_numaplaced

cat >$W/hook <<EOF
#!/bin/bash
# stdin is passed on to the hook untouched
t0=\$EPOCHREALTIME
$NPHOOK "\$1"
rc=\$?
t1=\$EPOCHREALTIME
echo "\$1 \$t0 \$t1 \$rc" >>$W/times
exit \$rc
EOF
chmod +x $W/hook
B=$W/b
mkdir -p $B/rootfs/bin $B/rootfs/proc $B/rootfs/dev $B/rootfs/sys
cp /usr/bin/busybox $B/rootfs/bin/
ln -s busybox $B/rootfs/bin/true
(cd $B && crun spec) || fail "crun spec"
jq --arg h $W/hook '.process.terminal = false | .process.args = ["/bin/true"] |
	.annotations = {"numaplace.io/qos": "LSE", "numaplace.io/cpus": "1", "numaplace.io/workload": "bench"} |
	.linux.cgroupsPath = "/np/bench" |
	.linux.resources.cpu = {"quota": 100000, "period": 100000, "shares": 1024} |
	.hooks = {"createRuntime": [{"path": $h, "args": ["hook", "createRuntime"]}],
	          "poststop": [{"path": $h, "args": ["hook", "poststop"]}]}' \
	$B/config.json >$W/with.json || fail jq
jq 'del(.hooks)' $W/with.json >$W/without.json

: >$W/times
: >$W/run-with
: >$W/run-without
tb=$SECONDS
for mode in with without; do
	cp $W/$mode.json $B/config.json
	for i in $(seq 1 "$N"); do
		t0=$EPOCHREALTIME
		crun run --no-pivot -b $B c$i >$W/out 2>&1 || fail "crun run ($mode hooks) #$i: $(cat $W/out)"
		t1=$EPOCHREALTIME
		echo "$t0 $t1" >>$W/run-$mode
	done
	log "$mode hooks: $N crun runs in $((SECONDS - tb)) s"
	tb=$SECONDS
done
# what starting the binary costs here (TCG): the same clock around
# `numaplace-oci-hook --help`
: >$W/exec
for i in $(seq 1 50); do
	t0=$EPOCHREALTIME
	$NPHOOK --help >/dev/null
	t1=$EPOCHREALTIME
	echo "$t0 $t1" >>$W/exec
done
bad=$(awk '$4 != 0' $W/times | wc -l)
[ "$bad" = 0 ] || fail "$bad hook runs failed: $(awk '$4 != 0' $W/times | head -n 3)"

# pct FILE: p50, p99, max of (col2 - col1) in ms
pct() {
	awk '{printf "%.3f\n", ($2 - $1) * 1000}' "$1" | sort -n | awk '
	{ v[NR] = $1 } END {
		i50 = int(NR * 0.50 + 0.5); i99 = int(NR * 0.99 + 0.5); if (i50 < 1) i50 = 1; if (i99 < 1) i99 = 1
		printf "p50 %.1f ms, p99 %.1f ms, max %.1f ms (n=%d)", v[i50], v[i99], v[NR], NR }'
}
awk '$1 == "createRuntime" {print $2, $3}' $W/times >$W/create
awk '$1 == "poststop" {print $2, $3}' $W/times >$W/poststop
log "numaplace-oci-hook createRuntime (admit, applied, checked in force): $(pct $W/create)"
log "numaplace-oci-hook poststop (release): $(pct $W/poststop)"
log "numaplace-oci-hook --help (exec and exit only): $(pct $W/exec)"
log "crun run with the hooks: $(pct $W/run-with)"
log "crun run without hooks: $(pct $W/run-without)"
left=$("$NPC" status --json --socket "$SOCK" | jq -r '[.workloads[].name] | join(",")')
assert_eq "$left" "" "workloads left after the bench"
pass
