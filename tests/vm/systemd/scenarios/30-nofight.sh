#!/bin/bash
# c. No fight with PID 1. system.slice has AllowedCPUs of its own (as
#    tuned or an admin sets it); an LSE workload is placed. Then ten
#    daemon-reloads, a restart of a confined service and a set-property of
#    an unrelated property: sampled all along, the host units never hold
#    the exclusive CPUs; afterwards placement is unchanged, numaplace
#    repaired no drift, and over the next 10 s it makes no change and no
#    bus call.
. /sdtest/sdlib.sh
journal_on_fail numaplaced
on_exit "kill \$SAMPLER 2>/dev/null; systemctl stop np-svc.service numaplaced; systemctl set-property --runtime system.slice AllowedCPUs=0-$((NP_CPUS - 1)) CPUWeight=100"

ALL=0-$((NP_CPUS - 1))
systemctl set-property --runtime system.slice AllowedCPUs=$ALL
make_service np-svc system.slice 'while :; do sleep 0.5; done'
write_config '"cgroup_parent": "numaplace.slice", "reconcile_period_s": 1,
  "node_policy": {"cpu_policy": "static", "reserved_cpus": "0"}'
start_numaplaced
cat >/tmp/web.json <<'JSON'
{"name": "web", "cgroup": "web", "qos": "LSE",
 "containers": [{"name": "main", "cpu": "2"}]}
JSON
run_ok $NPC admit -f /tmp/web.json
SCOPE=/sys/fs/cgroup/numaplace.slice/numaplace-workloads.scope
W=$(cat $SCOPE/web/cpuset.cpus)
[ -n "$W" ] || fail "web has no cpuset.cpus"
sleep 2 # settled
want=$(prop_cpus system.slice)
cpus_disjoint "$want" "$W" || fail "system.slice AllowedCPUs=$want holds web's $W"
svc_cg=$(prop np-svc.service ControlGroup)

# Sample the kernel's view every 0.5 s in the background: any moment where
# a host cgroup's effective set holds an exclusive CPU is a fight.
SAMPLES=/run/np/30-samples
: >$SAMPLES
(
	while :; do
		for f in /sys/fs/cgroup/system.slice /sys/fs/cgroup/init.scope /sys/fs/cgroup$svc_cg; do
			e=$(cat $f/cpuset.cpus.effective 2>/dev/null) || continue
			cpus_disjoint "$e" "$W" || echo "$(cut -d' ' -f1 /proc/uptime) $f $e" >>$SAMPLES
		done
		sleep 0.5
	done
) &
SAMPLER=$!

w0=$(counter writes) c0=$(counter bus_changes) d0=$(counter drift_repaired)
for i in $(seq 1 10); do systemctl daemon-reload; done
systemctl restart np-svc.service
svc_cg=$(prop np-svc.service ControlGroup)
systemctl set-property --runtime system.slice CPUWeight=90
assert_eq "$(prop system.slice CPUWeight)" 90 "the unrelated property took"
sleep 3
# placement unchanged, read in the kernel's files and in systemd
assert_eq "$(cat $SCOPE/web/cpuset.cpus)" "$W" "web's cpuset.cpus after the reloads"
assert_eq "$(prop_cpus system.slice)" "$want" "system.slice AllowedCPUs after the reloads"
pid=$(prop np-svc.service MainPID)
cpus_disjoint "$(pid_cpus $pid)" "$W" || fail "restarted np-svc Cpus_allowed_list $(pid_cpus $pid) holds $W"
w1=$(counter writes) c1=$(counter bus_changes) d1=$(counter drift_repaired)
assert_eq "$((d1 - d0))" 0 "drift repaired during the reloads"
assert_eq "$((c1 - c0))" 0 "bus changes during the reloads"
assert_eq "$((w1 - w0))" 0 "writes during the reloads"
# and the next 10 s: nothing at all, not even a bus read
r1=$(counter bus_reads) cy1=$(counter cycles)
sleep 10
w2=$(counter writes) c2=$(counter bus_changes) r2=$(counter bus_reads) cy2=$(counter cycles)
[ "$((cy2 - cy1))" -ge 5 ] || fail "only $((cy2 - cy1)) reconcile cycles in 10 s"
assert_eq "$((w2 - w1))" 0 "writes in the 10 s after"
assert_eq "$((c2 - c1))" 0 "bus changes in the 10 s after"
assert_eq "$((r2 - r1))" 0 "bus reads in the 10 s after ($((cy2 - cy1)) cycles)"
kill $SAMPLER
[ ! -s $SAMPLES ] || fail "a host cgroup held web's CPUs $W: $(head -n 3 $SAMPLES | tr '\n' ';')"
log "web $W; system.slice $want; reloads: writes $w0->$w2 bus_changes $c0->$c2 bus_reads $r1->$r2 over $((cy2 - cy1)) cycles; $(wc -l <$SAMPLES) bad samples"
pass
