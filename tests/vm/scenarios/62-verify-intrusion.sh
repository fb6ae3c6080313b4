#!/bin/sh
# 62-verify-intrusion: a task of another cgroup pinned onto a workload's
# exclusive CPU is an intrusion, attributed to its comm and cgroup:
#   A web (LSE, CPUs 2-3) and a task of intruder.slice (not managed, not a
#     shared cgroup) that pins itself to CPU 2: intrude_cgroup and intruder
#     ticks count, the top intruder is 'np-intruder' with intruder.slice's
#     cgroup id, and the daemon reports it; its intrusion kind is "user"
#     (a task: a cpuset is wrong), counted as user time on CPU 2 in the
#     per-CPU split (numaplace violations --per-cpu).
#   B with verify.on_intrusion = "partition" (applied by SIGHUP), a new
#     intrusion on web turns web into an isolated partition: its
#     cpuset.cpus.partition reads "isolated" and the intruder cannot pin
#     itself to CPU 2 any more.
#   C iso ("isolation": "partition", CPUs 4-5): the same attempt on CPU 4
#     fails (EINVAL from sched_setaffinity) and nothing intrudes.
#   D (run after A) mix, with an exclusive container and one on the shared
#     pool: the exclusive container's CPUs are mix's, an intruder pinned
#     there is counted and reported against mix.
# (B comes before C: once any partition exists, the managed parent is a
# partition root and no cgroup outside it can reach CPUs 2-7 at all.)
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. /scenarios/lib.sh

[ -x /bin/numaplaced ] || skip "numaplaced is not in the initramfs"
[ "$NP_TOPO" = 2node ] || skip "written for the 2node topology"
command -v taskset >/dev/null || skip "no taskset in this busybox"

CGP=$CG/numaplace.slice
ETC=/tmp/np-v62
SOCK=/run/np-v62.sock
INTR=$CG/intruder.slice
mkdir -p $ETC/specs
config() { # ON_INTRUSION
	cat >$ETC/numaplace.json <<JSON
{"node_policy": {"cpu_policy": "static", "reserved_cpus": "0-1",
                 "topology_policy": "restricted",
                 "cpu_policy_options": {"full-pcpus-only": true}},
 "reconcile_period_s": 1, "cgroup_parent": "numaplace.slice",
 "spec_dir": "$ETC/specs", "state_dir": "$ETC/state", "socket": "$SOCK",
 "verify": {"enabled": "on", "on_intrusion": "$1"}}
JSON
}
config report
eff() { cat "$CGP/$1/cpuset.cpus.effective" 2>/dev/null; }
part() { cat "$CGP/$1/cpuset.cpus.partition" 2>/dev/null; }
mkdir -p $INTR || fail "cannot create $INTR"
# pins left by an earlier daemon (the maps outlive it) would be reused:
# start from none, and remove ours at exit
rm -rf /sys/fs/bpf/numaplace
numaplaced -c $ETC/numaplace.json 2>$ETC/log &
DPID=$!
show_on_fail $ETC/log
I=
cleanup() {
	kill $I 2>/dev/null
	kill "$DPID" 2>/dev/null
	wait "$DPID" 2>/dev/null
	rm -rf /sys/fs/bpf/numaplace
	sleep 0.3
	for c in "$CGP"/*/; do
		[ -d "$c" ] || continue
		echo member >"$c/cpuset.cpus.partition" 2>/dev/null
		rmdir "$c"
	done
	echo member >"$CGP/cpuset.cpus.partition" 2>/dev/null
	rmdir "$CGP" $INTR 2>/dev/null
}
on_exit cleanup
daemon_up "$DPID" $SOCK $ETC/log

# --- A: an intrusion, attributed ---------------------------------------------
printf '{"name":"web","cgroup":"web","qos":"LSE","containers":[{"name":"m","cpu":"2"}]}\n' >$ETC/specs/web.json
try_for 10 sh -c "[ \"\$(cat $CGP/web/cpuset.cpus.effective 2>/dev/null)\" = 2-3 ]" ||
	fail "web was not placed on 2-3: $(eff web)"
sleep 1.5 # past the settle window
before=$(vcount web intrude_cgroup)
I=$(busy_in $INTR np-intruder 2)
try_for 3 cpus_is $I 2 || fail "the intruder could not pin itself to CPU 2: $(pid_cpus $I)"
try_for 5 grep -q "verify: intrusion on web's exclusive CPUs" $ETC/log ||
	{ cat $ETC/log; fail "no intrusion report within 5 s"; }
sleep 1
ic=$(vcount web intrude_cgroup)
it=$(vcount web intrude_ticks)
[ "$ic" -gt "$before" ] && [ "$it" -gt 0 ] ||
	fail "intrusion counters: switches $before -> $ic, ticks $it"
# np-intruder among the top intruders (tasks first, by switches; kernel
# threads last), with its cgroup id
top=$(numaplace violations --json web | sed -n 's/^ *"comm": "\(.*\)",$/\1/p' | tr '\n' ' ')
topid=$(numaplace violations --json web | awk '/"comm": "np-intruder"/ {f = 1} f && /"cgroup_id"/ {gsub(/[^0-9]/, ""); print; exit}')
want=$(stat -c %i $INTR)
assert_match "$top" "np-intruder" "the top intruders"
assert_eq "$topid" "$want" "np-intruder's cgroup id (the inode of $INTR)"
line=$(grep "verify: intrusion on web" $ETC/log | tail -n 1)
assert_match "$line" "'np-intruder' \(cgroup, cgroup id $want" "the report"
assert_match "$line" "user tasks: a cpuset is wrong" "the report's kind"
# the kind: "user" for np-intruder, user time on CPU 2 (its per-CPU line)
ik=$(numaplace violations --json web | awk '/"comm": "np-intruder"/ {f = 1} f && /"intrude_kind"/ {gsub(/[ ",]/, ""); sub(/^intrude_kind:/, ""); print; exit}')
assert_eq "$ik" "user" "np-intruder's intrusion kind"
pc=$(numaplace violations --per-cpu web)
ut=$(printf '%s\n' "$pc" | sed -n 's/^  CPU 2 .* user [0-9]* switch(es), \([0-9]*\) tick(s).*/\1/p')
[ "${ut:-0}" -gt 0 ] || fail "no user ticks on CPU 2 in numaplace violations --per-cpu web: $pc"
log "A: intrusion switches $ic, intruder ticks $it, kind $ik, user ticks on CPU 2: $ut; ${line#*warning: }"
kill $I
I=

# --- D: a workload with an exclusive and a shared container -------------------
# mix (Guaranteed): container a asks for 2 CPUs (exclusive, sub-cgroup a), b
# for 500m (the shared pool, sub-cgroup b). The CPUs of a are mix's alone: a
# task of intruder.slice pinned there is an intrusion on mix.
printf '{"name":"mix","cgroup":"mix","qos":"Guaranteed","containers":[{"name":"a","cgroup":"a","cpu":"2"},{"name":"b","cgroup":"b","cpu":"500m"}]}\n' >$ETC/specs/mix.json
# written by the daemon (a new cgroup's cpuset.cpus is empty, and its
# effective set is the parent's)
placed() { [ -n "$(cat "$CGP/$1/cpuset.cpus" 2>/dev/null)" ]; }
try_for 10 placed mix/a || fail "mix/a was not placed"
MA=$(eff mix/a)
c=${MA%%[-,]*}
try_for 10 sh -c "[ \"\$(cat $CGP/mix/b/cpuset.cpus.effective)\" != \"\$(cat $CGP/mix/a/cpuset.cpus.effective)\" ]" ||
	fail "mix/b should be on the shared pool, has $(eff mix/b) like mix/a"
sleep 1.5 # past the settle window
before=$(vcount mix intrude_cgroup)
I=$(busy_in $INTR np-intruder "$c")
try_for 3 cpus_is $I "$c" || fail "the intruder could not pin itself to CPU $c: $(pid_cpus $I)"
# (tasks of the root cgroup, like this script's, can show up first)
try_for 5 grep -q "verify: intrusion on mix's exclusive CPUs.*'np-intruder'" $ETC/log ||
	fail "no intrusion report for mix (exclusive container a on $MA, shared b on $(eff mix/b)) within 5 s"
mic=$(vcount mix intrude_cgroup)
mit=$(vcount mix intrude_ticks)
# a busy intruder may switch in once (inside the grace window) and then
# run on: its ticks count it
[ "$mic" -gt "$before" ] || [ "$mit" -gt 0 ] ||
	fail "intrusion on mix: switches $before -> $mic, intruder ticks $mit"
grep "verify: intrusion on mix's" $ETC/log | grep -q "'np-intruder' (cgroup, cgroup id $(stat -c %i $INTR)" ||
	fail "the report on mix does not name np-intruder of intruder.slice: $(grep "verify: intrusion on mix's" $ETC/log | tail -n 1)"
kill $I
I=
rm $ETC/specs/mix.json
try_for 10 test ! -d $CGP/mix || fail "mix was not released (its cgroup and container cgroups removed): $(ls -d $CGP/mix/*/)"
log "D: mix's exclusive container a on $MA (shared b on the pool): intrusion on CPU $c counted ($mic switches, $mit ticks) and reported"

# --- B: on_intrusion = partition -----------------------------------------------
config partition
kill -HUP $DPID
try_for 5 grep -q "configuration reloaded" $ETC/log || fail "SIGHUP did not reload"
I=$(busy_in $INTR np-intruder 2)
try_for 6 sh -c "[ \"\$(cat $CGP/web/cpuset.cpus.partition 2>/dev/null)\" = isolated ]" ||
	{ cat $ETC/log; fail "web did not become a partition after the intrusion: $(part web)"; }
grep -q "verify: web becomes an isolated cpuset partition" $ETC/log ||
	fail "no log line for the partition action"
kill $I
I=
if sh -c "echo \$\$ > $INTR/cgroup.procs; taskset -p -c 2 \$\$" >/dev/null 2>&1; then
	fail "after the action, a task of intruder.slice could still pin itself to CPU 2"
fi
log "B: after an intrusion web is $(part web) on $(eff web); taskset -c 2 from intruder.slice fails"
# --- C: a partition cannot be intruded ---------------------------------------
printf '{"name":"iso","cgroup":"iso","qos":"LSE","isolation":"partition","containers":[{"name":"m","cpu":"2"}]}\n' >$ETC/specs/iso.json
try_for 10 sh -c "[ \"\$(cat $CGP/iso/cpuset.cpus.partition 2>/dev/null)\" = isolated ]" ||
	{ cat $ETC/log; fail "iso did not become an isolated partition: $(part iso)"; }
ISO=$(eff iso)
c=${ISO%%-*}
sleep 1.5
before="$(vcount iso intrude_cgroup)/$(vcount iso intrude_workload)/$(vcount iso intrude_ticks)"
if sh -c "echo \$\$ > $INTR/cgroup.procs; taskset -p -c $c \$\$" >/dev/null 2>&1; then
	fail "a task of intruder.slice could pin itself to CPU $c of the partition $ISO"
fi
I=$(busy_in $INTR np-intruder)
sleep 2
kill $I
I=
after="$(vcount iso intrude_cgroup)/$(vcount iso intrude_workload)/$(vcount iso intrude_ticks)"
assert_eq "$after" "0/0/0" "non-kernel intrusions (cgroup/workload switches, ticks) on the partition iso ($ISO)"
log "C: iso is an isolated partition on $ISO; taskset -c $c from intruder.slice failed; intrusions (cgroup/workload/ticks) $before before the attempt, $after after, kernel threads $(vcount iso intrude_kthread)"

pass "intrusion attributed to np-intruder/intruder.slice ($ic switches, $it ticks); on a partly exclusive workload too; on_intrusion=partition isolates web; a partition refuses intruders"
