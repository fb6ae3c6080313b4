#!/bin/sh
# 19-defrag: a fragmented node (enough free CPUs, but no NUMA node with
# room for a 4-CPU LSE workload under single-numa-node) admits it after
# `numaplace defrag --apply` moves one movable LSE workload to the other
# node; an unmovable workload is never moved (first with no plan at all,
# then beside the move). Checked on the kernel's files: the moved and the
# new workload's cpuset.cpus.effective and cpuset.mems.effective, and the
# Cpus_allowed_list of a task in the moved cgroup.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. /scenarios/lib.sh

[ -x /bin/numaplaced ] || skip "numaplaced is not in the initramfs"
[ -x /bin/numaplace ] || skip "numaplace is not in the initramfs"
[ "$NP_TOPO" = 2node ] || skip "written for the 2node topology"

# 2node: cpus 0-3 on node 0, 4-7 on node 1; cores {0,1} {2,3} {4,5} {6,7}.
# Reserved 0: node 0 has 3 CPUs to give (1-3), node 1 has 4, so a 4-CPU
# single-numa-node request fits node 1 only.
CGP=$CG/numaplace.slice
# its own directories, socket and names: other scenarios leave theirs
ETC=/tmp/np-defrag
SOCK=/run/np-defrag.sock
rm -rf $ETC
mkdir -p $ETC/specs $ETC/req
cat >$ETC/numaplace.json <<JSON
{"node_policy": {"cpu_policy": "static", "reserved_cpus": "0",
                 "topology_policy": "single-numa-node"},
 "reconcile_period_s": 0.5, "cgroup_parent": "numaplace.slice",
 "spec_dir": "$ETC/specs", "state_dir": "$ETC/state",
 "socket": "$SOCK", "verify": {"enabled": "off"},
 "defrag": {"auto": false, "max_moves": 2}}
JSON
spec() { # NAME CPUS MOVABLE
	printf '{"name":"%s","cgroup":"%s","qos":"LSE","movable":%s,"containers":[{"name":"main","cpu":"%s"}]}\n' \
		"$1" "$1" "$3" "$2" >"$ETC/req/$1.json"
}
np() { numaplace "$@" --socket $SOCK; }
admit() { # NAME CPUS MOVABLE: admitted
	spec "$1" "$2" "$3"
	run_ok numaplace admit -f "$ETC/req/$1.json" --socket $SOCK
}
eff() { cat "$CGP/$1/cpuset.cpus.effective" 2>/dev/null; }
# shellcheck disable=SC2317 # called through wait_for
is_eff() { [ "$(eff "$1")" = "$2" ]; }
mems() { cat "$CGP/$1/cpuset.mems.effective" 2>/dev/null; }

DPID=
SPID=
# shellcheck disable=SC2317 # called through on_exit
cleanup() {
	[ -n "$SPID" ] && kill "$SPID" 2>/dev/null
	[ -n "$DPID" ] && kill -TERM "$DPID" 2>/dev/null && wait "$DPID"
	sleep 0.2
	for c in dffill dfu dfk dfm dfbig; do
		[ -d "$CGP/$c" ] && rmdir "$CGP/$c" 2>/dev/null
	done
	return 0
}
on_exit cleanup
show_on_fail $ETC/log

numaplaced -c $ETC/numaplace.json 2>>$ETC/log &
DPID=$!
daemon_up $DPID $SOCK $ETC/log

# --- an unmovable workload blocks: no plan, nothing moves ------------------
admit dffill 2 false
admit dfu 1 false
admit dfk 2 false
wait_for 10 is_eff dffill 2-3
wait_for 10 is_eff dfu 1
wait_for 10 is_eff dfk 4-5
run_ok numaplace release dffill --socket $SOCK
spec dfbig 4 false
out=$(numaplace admit -f $ETC/req/dfbig.json --socket $SOCK) &&
	fail "dfbig admitted on a fragmented node: $out"
log "rejected as things are: $out"
out=$(np defrag --apply) && fail "defrag --apply with an unmovable blocker succeeded: $out"
log "$out"
assert_match "$out" 'No plan: no workload may move'
assert_match "$out" 'dfk stays where it is: its spec does not say "movable": true'
sleep 1
assert_eq "$(eff dfk)" 4-5 "dfk (unmovable) cpuset.cpus.effective"
assert_eq "$(eff dfu)" 1 "dfu (unmovable) cpuset.cpus.effective"
[ -d "$CGP/dfbig" ] && fail "dfbig has a cgroup although no plan was carried out"

# --- one move makes room ---------------------------------------------------
admit dffill 2 false
run_ok numaplace release dfk --socket $SOCK
admit dfm 2 true
wait_for 10 is_eff dfm 4-5
assert_eq "$(mems dfm)" 1 "dfm cpuset.mems.effective before the move"
run_ok numaplace release dffill --socket $SOCK
SPID=$(spawn_sleeper)
cg_move "$SPID" numaplace.slice/dfm
assert_eq "$(pid_cpus "$SPID")" 4-5 "task in dfm: Cpus_allowed_list before"
out=$(numaplace admit -f $ETC/req/dfbig.json --socket $SOCK) &&
	fail "dfbig admitted on a fragmented node: $out"
# the dry run for the last rejected admission; it changes nothing
out=$(np defrag --dry-run) || fail "defrag --dry-run: $out"
log "$out"
assert_match "$out" '1 move makes room'
assert_match "$out" 'move dfm \(LSE\) from CPUs 4-5 \(NUMA node 1\) to CPUs 2-3 \(NUMA node 0\)'
assert_match "$out" 'then dfbig is admitted on CPUs 4-7 \(NUMA node 1\)'
assert_match "$out" 'dfu stays where it is'
json=$(np defrag --dry-run --json | tr -d ' \n')
assert_match "$json" '"found":true'
assert_match "$json" '"moves":\[\{"workload":"dfm","class":"LSE","from":\{"cpus":"4-5","mems":"1"\},"to":\{"cpus":"2-3","mems":"0"\},"mems_change":true\}\]'
sleep 1
assert_eq "$(eff dfm)" 4-5 "dfm after the dry run"
# carried out: the move, then the admission
out=$(np defrag --apply) || fail "defrag --apply: $out"
log "$out"
assert_match "$out" 'admitted dfbig: cpuset 4-7'
wait_for 10 is_eff dfbig 4-7
wait_for 10 is_eff dfm 2-3
assert_eq "$(mems dfm)" 0 "dfm cpuset.mems.effective after the move"
assert_eq "$(mems dfbig)" 1 "dfbig cpuset.mems.effective"
assert_eq "$(pid_cpus "$SPID")" 2-3 "task in dfm: Cpus_allowed_list after"
assert_eq "$(eff dfu)" 1 "dfu (unmovable) cpuset.cpus.effective"
assert_file_contains $ETC/log 'defrag: moved dfm from CPUs 4-5 to 2-3 to make room for dfbig'
wait_for 5 grep -q "defrag: migrated dfm's pages" $ETC/log
# nothing is left to make room for
out=$(np defrag --dry-run 2>&1) && fail "defrag with nothing rejected: $out"
assert_match "$out" 'no rejected admission'
pass "one move admitted dfbig (dfm 4-5 -> 2-3, its task followed); unmovable dfk and dfu never moved"
