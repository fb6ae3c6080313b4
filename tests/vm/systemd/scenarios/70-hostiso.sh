#!/bin/bash
# f. isolation "partition" + host isolation under systemd (host_isolation
#    left at its default, "partition"): the workload's cgroup is an
#    isolated partition below the delegated scope made a root partition
#    (its AllowedCPUs set over the bus; cgroup_parent "-.slice": below
#    numaplace.slice such a workload is refused, naming the way out); the
#    host units keep only the reserved CPU (AllowedCPUs and their
#    cpuset.cpus.effective); its CPUs lose every movable IRQ line,
#    default_smp_affinity, the unbound workqueue cpumask and kthreadd; over
#    5 s of serial traffic no numbered IRQ line except the ones reported as
#    not movable interrupts them. A daemon-reload and a set-property of the
#    scope leave the chain as it is. Release: the chain goes back to member,
#    the host units get every CPU again, every affinity is as it was and
#    hostiso.json (in the runtime directory, never the state one) is gone.
. /sdtest/sdlib.sh
journal_on_fail numaplaced
WQ=/sys/devices/virtual/workqueue/cpumask
DEF=/proc/irq/default_smp_affinity
[ -w $WQ ] || skip "no workqueue cpumask"
irqs() { ls /proc/irq | grep -E '^[0-9]+$' | sort -n; }
snapshot() {
	for i in $(irqs); do echo "$i $(cat /proc/irq/$i/smp_affinity_list)"; done
	echo "default $(cat $DEF)"
	echo "wq $(cat $WQ)"
	echo "kthreadd $(pid_cpus 2)"
}
# "IRQ COUNT": interrupts of each numbered line on the CPUs of list $1
counts_on() {
	local cols=""
	for c in $(cpulist_expand "$1"); do cols="$cols + \$$((c + 2))"; done
	awk "NR > 1 && \$1 ~ /^[0-9]+:\$/ { sub(\":\", \"\", \$1); print \$1, 0 $cols }" /proc/interrupts
}
traffic() { for i in $(seq 1 40); do echo "np serial traffic $i ........................................" >/dev/ttyS0; done; sleep 1; }
snapshot >/run/np/70-before
on_exit "systemctl stop numaplaced"

# Below numaplace.slice the scope cannot be a partition root (Linux 6.1,
# this VM's kernel, lets no partition take all of its parent's CPUs): a
# partition workload is refused, naming the way out, and nothing changes.
write_config '"cgroup_parent": "numaplace.slice", "reconcile_period_s": 1,
  "node_policy": {"cpu_policy": "static", "reserved_cpus": "0"}'
start_numaplaced
printf '{"name":"web","cgroup":"web","qos":"LSE","isolation":"partition","containers":[{"name":"m","cpu":"2"}]}\n' >/tmp/web.json
out=$($NPC admit -f /tmp/web.json 2>&1) && fail "a partition workload was admitted below numaplace.slice: $out"
assert_match "$out" 'cgroup_parent.*-\.slice' "the refusal of isolation partition below numaplace.slice"
log "below numaplace.slice: $out"
assert_eq "$(cat /sys/fs/cgroup/numaplace.slice/cpuset.cpus.partition) $(prop_cpus numaplace.slice)" "member " "numaplace.slice after the refusal"

write_config '"cgroup_parent": "-.slice", "reconcile_period_s": 1,
  "node_policy": {"cpu_policy": "static", "reserved_cpus": "0"}'
start_numaplaced
SC=/sys/fs/cgroup/numaplace-workloads.scope
printf '{"name":"web","cgroup":"web","qos":"LSE","isolation":"partition","containers":[{"name":"m","cpu":"2"}]}\n' >/tmp/web.json
run_ok $NPC admit -f /tmp/web.json
W=$(cat $SC/web/cpuset.cpus)
part() { cat "$1/cpuset.cpus.partition"; }
try_for 20 sh -c "[ \"\$(cat $SC/web/cpuset.cpus.partition)\" = isolated ]" ||
	fail "web is not an isolated partition: $(part $SC/web); scope $(part $SC)"
assert_eq "$(part $SC)" root "the scope's cpuset.cpus.partition"
cpus_same "$(cat $SC/web/cpuset.cpus.effective)" "$W" || fail "web's effective CPUs $(cat $SC/web/cpuset.cpus.effective), want $W"
for u in system.slice init.scope; do
	try_for 20 prop_cpus_is $u 0 || fail "$u AllowedCPUs=$(prop_cpus $u) beside a partition, want the reserved CPU 0"
	cpus_same "$(cg_file $u/cpuset.cpus.effective)" 0 || fail "$u cpuset.cpus.effective $(cg_file $u/cpuset.cpus.effective)"
done
rest=$(cpus_minus "$(cat /sys/devices/system/cpu/online)" 0 | tr ' ' ',')
prop_cpus_is numaplace-workloads.scope "$rest" || fail "the scope's AllowedCPUs=$(prop_cpus numaplace-workloads.scope), want $rest"
# systemd has no property for the partition mode: a reload and a
# set-property of the scope leave the chain as it is
systemctl daemon-reload
systemctl set-property --runtime numaplace-workloads.scope CPUWeight=100
sleep 2
assert_eq "$(part $SC) $(part $SC/web)" "root isolated" "scope and web after daemon-reload and set-property"
log "partition chain: scope $(prop_cpus numaplace-workloads.scope) root, web $W isolated; system.slice $(prop_cpus system.slice)"
try_for 20 sh -c "journalctl -u numaplaced --no-pager | grep -q 'host isolation: .* moved off CPUs'" || fail "no host isolation report"
rep=$(journalctl -u numaplaced --no-pager | grep -m1 'host isolation: .* moved off CPUs' | sed 's/.*numaplaced: info: //')
log "$rep"
[ -f $RUNDIR/hostiso.json ] || fail "no $RUNDIR/hostiso.json"
[ ! -e $STATE/hostiso.json ] || fail "hostiso.json in the state directory $STATE"
unmovable=$(echo "$rep" | sed -n 's/.*not movable: //p' | tr ',' '\n' | sed -n 's/^ *irq \([0-9]*\) .*/\1/p' | tr '\n' ' ')
moved=0
for i in $(irqs); do
	a=$(cat /proc/irq/$i/smp_affinity_list)
	if ! cpus_disjoint "$a" "$W"; then
		assert_word_in "$i" "$unmovable" "IRQ $i still on $a, not reported as not movable"
		continue
	fi
	moved=$((moved + 1))
done
[ $moved -gt 0 ] || fail "no IRQ moved off $W"
mask_off() { local m=$((0x$(echo "$1" | tr -d ,))) c; for c in $(cpulist_expand "$W"); do [ $(((m >> c) & 1)) = 0 ] || return 1; done; }
mask_off "$(cat $DEF)" || fail "default_smp_affinity $(cat $DEF) holds $W"
mask_off "$(cat $WQ)" || fail "workqueue cpumask $(cat $WQ) holds $W"
cpus_disjoint "$(pid_cpus 2)" "$W" || fail "kthreadd on $(pid_cpus 2), holds $W"

traffic settle
counts_on "$W" >/run/np/70-c1
traffic after
counts_on "$W" >/run/np/70-c2
while read -r i n1; do
	case " $unmovable " in *" $i "*) continue ;; esac
	n2=$(awk -v i="$i" '$1 == i { print $2 }' /run/np/70-c2)
	[ -z "$n2" ] || [ "$n2" = "$n1" ] || fail "IRQ $i: $n1 -> $n2 interrupts on $W after isolation"
done </run/np/70-c1
log "web $W: $moved IRQ lines moved, default $(cat $DEF), workqueue $(cat $WQ), kthreadd $(pid_cpus 2)"

run_ok $NPC release web
try_for 20 test ! -e $RUNDIR/hostiso.json || fail "hostiso.json still there after release"
try_for 20 sh -c "[ \"\$(cat $SC/cpuset.cpus.partition)\" = member ]" || fail "the scope is $(part $SC) after the release"
eff_all() { cpus_same "$(cg_file "$1"/cpuset.cpus.effective)" "$(cat /sys/devices/system/cpu/online)"; }
for u in system.slice init.scope; do
	try_for 20 eff_all $u || fail "$u cpuset.cpus.effective $(cg_file $u/cpuset.cpus.effective) after the release"
done
snapshot >/run/np/70-after
diff /run/np/70-before /run/np/70-after >/dev/null || fail "not restored: $(diff /run/np/70-before /run/np/70-after | grep '^[<>]' | head -n 4 | tr '\n' ';')"
pass "web $W isolated below the root-partition scope; host units on CPU 0 meanwhile; $moved IRQ lines moved; all restored; below numaplace.slice refused with the way out"
