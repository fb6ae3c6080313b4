#!/bin/bash
# b. An LSE workload admitted under systemd: every host unit's AllowedCPUs
#    (systemctl show) and its cgroup's cpuset.cpus.effective lose exactly
#    its CPUs; the workload's cgroup below the delegated scope holds them;
#    a busy service started with systemd-run never runs there (intrusion
#    counters of user tasks stay 0 over 10 s); release gives them back.
. /sdtest/sdlib.sh
journal_on_fail numaplaced
on_exit "systemctl stop np-busy.service numaplaced; kill \$W 2>/dev/null"

write_config '"cgroup_parent": "numaplace.slice", "reconcile_period_s": 1,
  "node_policy": {"cpu_policy": "static", "reserved_cpus": "0",
                  "cpu_policy_options": {"full-pcpus-only": true}},
  "verify": {"enabled": "on"}'
start_numaplaced
ALL=$(cat /sys/fs/cgroup/cpuset.cpus.effective)
SCOPE=/sys/fs/cgroup/numaplace.slice/numaplace-workloads.scope
HOST="system.slice init.scope"
before=()
for u in $HOST; do before+=("$(prop $u AllowedCPUs)"); done

cat >/tmp/web.json <<'JSON'
{"name": "web", "cgroup": "web", "qos": "LSE",
 "containers": [{"name": "main", "cpu": "2", "memory": "128Mi"}]}
JSON
run_ok $NPC admit -f /tmp/web.json
W_CPUS=$(cat $SCOPE/web/cpuset.cpus)
assert_eq "$(cpulist_count "$W_CPUS")" 2 "web's cpuset.cpus ($W_CPUS)"
cpus_same "$(cat $SCOPE/web/cpuset.cpus.effective)" "$W_CPUS" || fail "web effective $(cat $SCOPE/web/cpuset.cpus.effective), cpus $W_CPUS"
cpus_disjoint "$W_CPUS" 0 || fail "web got the reserved CPU 0: $W_CPUS"
# its placement file keeps its documented mode under the unit's UMask=0077
try_for 10 test -f /run/numaplace/workloads/web.json || fail "no /run/numaplace/workloads/web.json"
assert_eq "$(stat -c %a /run/numaplace/workloads/web.json)" 644 "web.json's mode"
assert_eq "$(stat -c %a /run/numaplace/workloads)" 755 "/run/numaplace/workloads's mode"
# a task in web runs on its CPUs
W=$(busy_in $SCOPE/web np-web)
try_for 5 cpus_is $W "$W_CPUS" || fail "web's task: Cpus_allowed_list $(pid_cpus $W), want $W_CPUS"

# Host units: the property and the kernel's effective set, both without
# web's CPUs and with every other CPU.
want=$(cpus_minus "$ALL" "$W_CPUS")
for u in $HOST; do
	a=$(prop_cpus $u)
	[ "$(cpulist_expand "$a")" = "$want" ] || fail "$u AllowedCPUs=$a, want $want"
	cg=$(prop $u ControlGroup)
	eff=$(cat /sys/fs/cgroup$cg/cpuset.cpus.effective)
	[ "$(cpulist_expand "$eff")" = "$want" ] || fail "$u $cg cpuset.cpus.effective=$eff, want $want"
	# a runtime property (gone at reboot), never a persistent drop-in
	[ ! -e /etc/systemd/system.control/$u.d/50-AllowedCPUs.conf ] || fail "$u: persistent drop-in written"
	log "$u AllowedCPUs=$a effective=$eff"
done
# PID 1 itself (init.scope) left web's CPUs
p1=$(pid_cpus 1)
cpus_disjoint "$p1" "$W_CPUS" || fail "PID 1 Cpus_allowed_list $p1 overlaps web's $W_CPUS"

# A busy service started now lands in system.slice and never runs on web's
# CPUs; BPF sees no user task of another cgroup there.
systemd-run --quiet --unit=np-busy /bin/bash -c 'while :; do :; done'
B=$(prop np-busy.service MainPID)
[ "$B" -gt 0 ] || fail "np-busy has no MainPID"
cpus_disjoint "$(pid_cpus $B)" "$W_CPUS" || fail "np-busy Cpus_allowed_list $(pid_cpus $B) overlaps $W_CPUS"
i0=$(vcount web intrude_cgroup)
for i in $(seq 1 50); do
	c=$(awk '{print $39}' /proc/$B/stat)
	for x in $(cpulist_expand "$W_CPUS"); do [ "$c" != "$x" ] || fail "np-busy ran on CPU $c (web's)"; done
	sleep 0.2
done
i1=$(vcount web intrude_cgroup)
assert_eq "$((i1 - i0))" 0 "intrusions on web by tasks of other cgroups over 10 s"
log "web CPUs $W_CPUS; host units $want; np-busy on $(pid_cpus $B); intrude_cgroup $i0 -> $i1"
# the busy loops slow the single-threaded emulation down: done with them
systemctl stop np-busy.service
kill $W

# Release: the host units get the CPUs back (the full range, explicitly).
run_ok $NPC release web
for u in $HOST; do
	try_for 10 prop_cpus_is $u "$ALL" ||
		fail "$u AllowedCPUs after release: $(prop $u AllowedCPUs), want $ALL"
	cg=$(prop $u ControlGroup)
	cpus_same "$(cat /sys/fs/cgroup$cg/cpuset.cpus.effective)" "$ALL" || fail "$u effective after release: $(cat /sys/fs/cgroup$cg/cpuset.cpus.effective)"
done
# A clean stop gives the host units what they had before numaplaced.
systemctl stop numaplaced
i=0
for u in $HOST; do
	assert_eq "$(prop $u AllowedCPUs)" "${before[$i]}" "$u AllowedCPUs after a clean stop"
	i=$((i + 1))
done
pass
