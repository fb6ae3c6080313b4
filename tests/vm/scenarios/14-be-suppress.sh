#!/bin/sh
# 14-be-suppress: BE suppression (config be_suppress, Koordinator's koordlet
# CPU suppress) on a real kernel: /proc/stat and the workloads' cpu.stat are
# the kernel's. A busy LS workload shrinks the BE pool; when it idles the
# pool grows back within a few periods (one CPU a period); a BE task never
# runs on the LSE workload's CPUs (its Cpus_allowed_list and the CPU it last
# ran on, /proc/PID/stat field 39, are sampled throughout).
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. /scenarios/lib.sh

[ -x /bin/numaplaced ] || skip "numaplaced is not in the initramfs"
[ "$NP_TOPO" = 2node ] || skip "written for the 2node topology"

# 2node: cpus 0-3 on node 0, 4-7 on node 1; cores {0,1} {2,3} {4,5} {6,7}.
# Reserved 0-1, LSE lse on 2-3: the BE pool is 4-7 (one bucket, node 1).
CGP=$CG/numaplace.slice
ETC=/tmp/np-sup
PERIOD=2
mkdir -p $ETC/specs
cat >$ETC/numaplace.json <<JSON
{"node_policy": {"cpu_policy": "static", "reserved_cpus": "0-1",
                 "topology_policy": "restricted",
                 "cpu_policy_options": {"full-pcpus-only": true}},
 "reconcile_period_s": $PERIOD,
 "cgroup_parent": "numaplace.slice",
 "spec_dir": "$ETC/specs", "state_dir": "$ETC/state",
 "socket": "/run/np-sup.sock", "bpf_pin_path": "/sys/fs/bpf/np-sup",
 "verify": {"enabled": "off"}, "metrics": {"listen": ""},
 "be_suppress": {"cpuSuppressPolicy": "cpuset",
                 "cpuSuppressThresholdPercent": 65}}
JSON
spec() { # NAME QOS [CPUS]
	if [ -n "${3:-}" ]; then
		printf '{"name":"%s","cgroup":"%s","qos":"%s","containers":[{"name":"main","cpu":"%s"}]}\n' \
			"$1" "$1" "$2" "$3" >"$ETC/specs/$1.json.tmp"
	else
		printf '{"name":"%s","cgroup":"%s","qos":"%s","containers":[{"name":"main"}]}\n' \
			"$1" "$1" "$2" >"$ETC/specs/$1.json.tmp"
	fi
	mv "$ETC/specs/$1.json.tmp" "$ETC/specs/$1.json"
}
eff() { cat "$CGP/$1/cpuset.cpus.effective" 2>/dev/null; }
is_eff() { [ "$(eff "$1")" = "$2" ]; }

numaplaced --check-config -c $ETC/numaplace.json >/dev/null ||
	fail "--check-config refused the configuration"
numaplaced -c $ETC/numaplace.json 2>$ETC/log &
DPID=$!
BUSY=
on_exit "kill $DPID \$BUSY \$BE \$WATCH 2>/dev/null"
show_on_fail $ETC/log
daemon_up $DPID /run/np-sup.sock $ETC/log

spec lse LSE 2
wait_for 20 is_eff lse 2-3
spec web LS 1
spec batch BE
wait_for 20 is_eff web 0-1,4-7
wait_for 20 is_eff batch 4-7
log "LSE lse on 2-3, LS web on 0-1,4-7, BE batch on its whole pool 4-7"

# a BE task, busy, and a watcher of where it may run and where it ran
BE=$(busy_in "$CGP/batch" betask)
# (it starts in the scenario's cgroup and moves itself into batch)
wait_for 10 cpus_is "$BE" 4-7
: >$ETC/watch
sh -c "while :; do
	c=\$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/$BE/status)
	p=\$(awk '{print \$39}' /proc/$BE/stat)
	echo \"\$c \$p\" >>$ETC/watch
	sleep 0.2
done" >/dev/null 2>&1 &
WATCH=$!

# --- busy LS: six busy loops in web (its pool has 6 CPUs) ------------------
for _ in 1 2 3 4 5 6; do BUSY="$BUSY $(busy_in "$CGP/web" lsbusy)"; done
# budget = 8 x 650m - web ~6000m - system < 0: BE held at the floor, 2 CPUs,
# one SMT pair of its one bucket: 4-5
try_for $((PERIOD * 10)) is_eff batch 4-5 ||
	fail "busy LS: batch is on $(eff batch), not 4-5 (log: $(grep 'BE suppress' $ETC/log | tail -2))"
log "busy LS: the BE pool shrank to $(eff batch): $(grep 'BE suppress (cpuset): node' $ETC/log | tail -1)"
try_for 10 cpus_is "$BE" 4-5 || fail "the BE task may still run on $(pid_cpus "$BE")"

# --- idle: the pool grows back one CPU a period --------------------------
kill $BUSY 2>/dev/null
BUSY=
t0=$(date +%s)
# the period in progress at the kill may still measure the busy loops; the
# next three take it to 3, then 4 CPUs: 4-7 within 3 periods after that
# one (by the clock: try_for's 0.1 s sleeps stretch under TCG)
poll_secs $((PERIOD * 4)) is_eff batch 4-7 ||
	fail "idle: batch is on $(eff batch), not 4-7 after 4 periods (log: $(grep 'BE suppress' $ETC/log | tail -3))"
t1=$(date +%s)
log "idle: the BE pool grew back to 4-7 in $((t1 - t0)) s (period ${PERIOD} s)"
# one CPU a period at most from the floor back to 4: the sizes the samples
# gave after the last one at 2 CPUs (the sample of the period in progress at
# the kill may itself give 3, partly busy, so the limit may first show on
# the step to 4), and at least one step held back by the limit
steps=$(grep 'BE suppress (cpuset): node' $ETC/log |
	sed -n 's/.* -> \([0-9]*\) CPUs.*/\1/p' | awk '$1 == 2 { s = "" } { s = s " " $1 } END { print s }')
prev=
for n in $steps; do
	[ -z "$prev" ] || [ "$n" -le $((prev + 1)) ] ||
		fail "the BE pool grew by more than one CPU in a period: $steps"
	prev=$n
done
grep 'BE suppress (cpuset): node' $ETC/log |
	awk '/ -> 2 CPUs/ { s = "" } { s = s $0 "\n" } END { printf "%s", s }' |
	grep -q '(growth limited)' ||
	fail "no growth-limited step after the busy phase (sizes:$steps)"
log "growth one CPU a period at most (sizes:$steps): $(grep '(growth limited)' $ETC/log | tail -1)"

# --- the BE task never ran on an LSE CPU --------------------------------
kill $WATCH 2>/dev/null
WATCH=
n=$(wc -l <$ETC/watch)
[ "$n" -gt 10 ] || fail "only $n samples of the BE task"
bad=
while read -r allowed ran; do
	for c in $(cpulist_expand "$allowed") $ran; do
		case $c in 2 | 3) bad="$bad [$allowed ran on $ran]" ;; esac
	done
done <$ETC/watch
[ -z "$bad" ] || fail "the BE task could run or ran on an LSE CPU:$bad"
log "$n samples of the BE task: allowed and last CPU always inside 4-7"
pass
