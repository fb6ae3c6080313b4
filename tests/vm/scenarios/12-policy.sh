#!/bin/sh
# 12-policy: the same request on the same fragmented node is rejected under
# restricted (no single NUMA node has the CPUs) and admitted across both
# nodes under best-effort. Asserts on cpuset.cpus.effective.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. /scenarios/lib.sh

[ -x /bin/numaplaced ] || skip "numaplaced is not in the initramfs"
[ "$NP_TOPO" = 2node ] || skip "written for the 2node topology"

CGP=$CG/numaplace.slice
eff() { cat "$CGP/$1/cpuset.cpus.effective" 2>/dev/null; }
is_eff() { [ "$(eff "$1")" = "$2" ]; }
spec() { # NAME QOS CPUS
	printf '{"name":"%s","qos":"%s","containers":[{"name":"m","cpu":"%s"}]}\n' \
		"$1" "$2" "$3" >"$ETC/specs/$1.json.tmp"
	mv "$ETC/specs/$1.json.tmp" "$ETC/specs/$1.json"
}

run_policy() { # POLICY -> leaves c's fate in $ETC/log
	ETC=/tmp/np-$1
	rm -rf "$ETC"
	mkdir -p "$ETC/specs"
	cat >"$ETC/numaplace.json" <<JSON
{"node_policy": {"cpu_policy": "static", "reserved_cpus": "0-1",
                 "topology_policy": "$1"},
 "reconcile_period_s": 0.3, "cgroup_parent": "numaplace.slice",
 "spec_dir": "$ETC/specs", "state_dir": "$ETC/state",
 "socket": "/run/np-$1.sock"}
JSON
	numaplaced -c "$ETC/numaplace.json" 2>"$ETC/log" &
	DPID=$!
	show_on_fail "$ETC/log"
	wait_for 10 test -S "/run/np-$1.sock"
	# fragment the node: a on node 0 (2-3), b on node 1 (4-5), free a
	spec a LSE 2
	wait_for 10 is_eff a 2-3
	spec b LSE 2
	wait_for 10 is_eff b 4-5
	rm "$ETC/specs/a.json"
	wait_for 10 sh -c "[ ! -d $CGP/a ]"
	# free: 2-3 on node 0, 6-7 on node 1; ask for 4
	spec c Guaranteed 4
	sleep 1.5
	kill "$DPID"
	wait "$DPID" 2>/dev/null
}

run_policy restricted
[ -d "$CGP/c" ] && fail "restricted admitted c across NUMA nodes"
grep -q "rejected c: topology affinity error: policy restricted" "$ETC/log" ||
	fail "no restricted rejection of c: $(cat "$ETC/log")"
log "restricted: $(grep 'rejected c' "$ETC/log" | tail -1)"
for c in "$CGP"/*/; do [ -d "$c" ] && rmdir "$c"; done

run_policy best-effort
assert_eq "$(eff c)" 2-3,6-7 "c under best-effort"
assert_eq "$(cat "$CGP/c/cpuset.mems.effective")" 0-1 "c's mems under best-effort"
log "best-effort: c admitted on $(eff c), mems $(cat "$CGP/c/cpuset.mems.effective")"
for c in "$CGP"/*/; do [ -d "$c" ] && rmdir "$c"; done
rmdir "$CGP"
pass "restricted rejects, best-effort admits across nodes"
