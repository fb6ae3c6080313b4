#!/bin/bash
# e. kill -9 of numaplaced at 20 random points of admissions and releases
#    under systemd; Restart=on-failure brings it back (NRestarts counts
#    each). After each restart, in the kernel's files and in systemd:
#    - what numaplaced acknowledged holds: an acknowledged admission has
#      its cgroup with the CPUs it was given, an acknowledged release has
#      none;
#    - no CPU is in two exclusive workload cgroups, none holds CPU 0
#      (reserved);
#    - the host units' AllowedCPUs and their cgroups' effective sets never
#      include an exclusive CPU (after convergence).
#    Then the 2-hour chaos run's failure (docs/reliability.md): a clean
#    stop gives the host units every CPU, and numaplaced starts again on
#    a full state disk (a tmpfs over STATE_DIR, filled): the host units
#    are confined all the same, their record in RUNTIME_DIR.
# np-timeout: 1200
. /sdtest/sdlib.sh
journal_on_fail numaplaced
on_exit "rm -f $STATE/fill; for n in \$NAMES; do $NPC release \$n --socket $SOCK; done; systemctl stop numaplaced; rm -rf /run/systemd/system/numaplaced.service.d; systemctl daemon-reload; umount $STATE 2>/dev/null"
# quicker rounds: restart after 0.5 s (the unit says 2 s), the topology
# from a file (hwloc discovery takes seconds under TCG)
mkdir -p /run/systemd/system/numaplaced.service.d
printf '[Service]\nRestartSec=0.5\n' >/run/systemd/system/numaplaced.service.d/fast.conf
systemctl daemon-reload
$NPC topology --json >/etc/numaplace/topology.json || fail "numaplace topology --json"
# 20 kills on 2node; 10 on 4node, where each round takes twice as long
# under TCG (CI time)
KILLS=${NP_SD_CRASH_KILLS:-$([ "$NP_TOPO" = 4node ] && echo 10 || echo 20)}
ALL=0-$((NP_CPUS - 1))
write_config '"cgroup_parent": "numaplace.slice", "reconcile_period_s": 0.5,
  "topology": "/etc/numaplace/topology.json",
  "node_policy": {"cpu_policy": "static", "reserved_cpus": "0"},
  "verify": {"enabled": "off"}'
start_numaplaced
SCOPE=/sys/fs/cgroup/numaplace.slice/numaplace-workloads.scope
K=/run/np/50
mkdir -p $K
NAMES="k1 k2 k3"
for n in $NAMES; do
	printf '{"name":"%s","cgroup":"%s","qos":"LSE","containers":[{"name":"m","cpu":"2"}]}\n' $n $n >$K/$n.json
	echo absent >$K/$n.want
done

rnd() { echo $((RANDOM % $1)); }
check_all() { # ROUND
	local n w x union="" e s
	for n in $NAMES; do
		read -r w x <$K/$n.want
		case $w in
		cpus)
			[ -d $SCOPE/$n ] || fail "round $1: $n acknowledged ($x) but $SCOPE/$n is gone"
			assert_eq "$(cat $SCOPE/$n/cpuset.cpus)" "$x" "round $1: $n cpuset.cpus (acknowledged)"
			;;
		absent)
			[ ! -d $SCOPE/$n ] || fail "round $1: $n released/rejected but $SCOPE/$n holds $(cat $SCOPE/$n/cpuset.cpus)"
			;;
		esac
		[ -d $SCOPE/$n ] || continue
		e=$(cat $SCOPE/$n/cpuset.cpus)
		cpus_disjoint "$e" 0 || fail "round $1: $n holds the reserved CPU 0 ($e)"
		[ -z "$union" ] || cpus_disjoint "$e" "$union" || fail "round $1: $n ($e) overlaps another exclusive workload ($union)"
		union=${union:+$union,}$e
	done
	[ -n "$union" ] || return 0
	for s in system.slice init.scope; do
		try_for 10 prop_cpus_disjoint $s "$union" ||
			fail "round $1: $s AllowedCPUs $(prop_cpus $s) holds exclusive CPUs ($union)"
		cpus_disjoint "$(cat /sys/fs/cgroup/$s/cpuset.cpus.effective)" "$union" ||
			fail "round $1: $s effective $(cat /sys/fs/cgroup/$s/cpuset.cpus.effective) holds $union"
	done
}

nack=0 nunk=0
for round in $(seq 1 $KILLS); do
	restarts=$(prop numaplaced.service NRestarts)
	pid=$(prop numaplaced.service MainPID)
	# one or two requests in flight, the kill at a random moment
	pids=()
	for n in $(echo $NAMES | tr ' ' '\n' | shuf -n $((1 + $(rnd 2)))); do
		read -r w x <$K/$n.want
		if [ "$w" = cpus ]; then
			echo - >$K/$n.op
			$NPC release $n --socket $SOCK >$K/$n.out 2>&1 &
		else
			echo + >$K/$n.op
			$NPC admit -f $K/$n.json --socket $SOCK >$K/$n.out 2>&1 &
		fi
		pids+=($!)
	done
	sleep "0.$(rnd 10)$(rnd 10)"
	kill -9 "$pid" || fail "round $round: kill -9 $pid failed"
	log "round $round: killed $pid with ${#pids[@]} request(s) in flight"
	wait "${pids[@]}" 2>/dev/null
	for n in $NAMES; do
		[ -f $K/$n.op ] || continue
		op=$(cat $K/$n.op)
		rm -f $K/$n.op
		if [ $op = + ] && l=$(grep "^admitted $n: cpuset " $K/$n.out); then
			l=${l#*cpuset }
			echo "cpus ${l%% *}" >$K/$n.want
			nack=$((nack + 1))
		elif [ $op = + ] && grep -q "^rejected $n: " $K/$n.out; then
			echo absent >$K/$n.want
		elif [ $op = - ] && grep -q "^released $n\$" $K/$n.out; then
			echo absent >$K/$n.want
			nack=$((nack + 1))
		else
			nunk=$((nunk + 1))
			# no answer: the restarted daemon decides; read what it did
			echo unknown >$K/$n.want
		fi
	done
	try_for 30 prop_ge numaplaced.service NRestarts $((restarts + 1)) || {
		systemctl show -p NRestarts -p Result -p ExecMainStatus -p ExecMainCode -p MainPID -p ActiveState numaplaced.service
		journalctl -u numaplaced --no-pager | grep 'systemd\[1\]'
		fail "round $round: systemd did not restart numaplaced (NRestarts $restarts)"
	}
	try_for 60 "$NPC" status --socket "$SOCK" || fail "round $round: numaplaced does not answer after the restart"
	for n in $NAMES; do # unknown outcomes: take the kernel's word
		read -r w x <$K/$n.want
		[ "$w" = unknown ] || continue
		if [ -d $SCOPE/$n ]; then echo "cpus $(cat $SCOPE/$n/cpuset.cpus)" >$K/$n.want; else echo absent >$K/$n.want; fi
	done
	check_all $round
done
log "$KILLS kills: $nack acknowledged answers held, $nunk requests cut by the kill; NRestarts $(prop numaplaced.service NRestarts)"
[ "$nack" -gt 0 ] || fail "no request was acknowledged in $KILLS rounds"

# ---- a full state disk at start: the host units confined all the same ------
for n in $NAMES; do $NPC release $n --socket $SOCK >/dev/null 2>&1; done
out=$($NPC admit -f $K/k1.json --socket $SOCK 2>&1) || fail "admit k1: $out"
X=${out#*cpuset }
X=${X%% *}
try_for 10 prop_cpus_disjoint system.slice "$X" || fail "system.slice AllowedCPUs $(prop_cpus system.slice) holds k1's $X"
jq -e '.units["system.slice"]' $RUNDIR/host-units.json >/dev/null || fail "$RUNDIR/host-units.json does not list system.slice"
[ ! -e $STATE/host-units.json ] || fail "host-units.json in the state directory $STATE"
systemctl stop numaplaced
prop_cpus_disjoint system.slice "$X" && fail "system.slice AllowedCPUs $(prop_cpus system.slice) not given back at the clean stop"
# the record stays, without the units given back
rec_has() { jq -e --arg u "$1" '.units[$u]' $RUNDIR/host-units.json >/dev/null 2>&1; }
rec_has system.slice && fail "$RUNDIR/host-units.json still lists system.slice after the clean stop: $(cat $RUNDIR/host-units.json)"
cp -a $STATE /run/np/50-state
mount -t tmpfs -o size=256k,mode=0700 np-50-state $STATE || fail "mount a tmpfs on $STATE"
cp -a /run/np/50-state/. $STATE/
dd if=/dev/zero of=$STATE/fill bs=4k 2>/dev/null
systemctl start numaplaced || fail "start on a full state disk: $(journalctl -u numaplaced --no-pager -n 5)"
try_for 30 prop_cpus_disjoint system.slice "$X" ||
	fail "state disk full: system.slice AllowedCPUs $(prop_cpus system.slice) holds k1's $X ($(journalctl -u numaplaced --no-pager -n 5 | grep -i 'space' | tail -1))"
try_for 10 cpus_disjoint "$(cat /sys/fs/cgroup/system.slice/cpuset.cpus.effective)" "$X" ||
	fail "state disk full: system.slice effective $(cat /sys/fs/cgroup/system.slice/cpuset.cpus.effective) holds $X"
rec_has system.slice || fail "state disk full: $RUNDIR/host-units.json does not list system.slice: $(cat $RUNDIR/host-units.json 2>&1)"
log "state disk full ($(df -k $STATE | awk 'NR == 2 { print $4 }') KiB free): system.slice $(prop_cpus system.slice), k1 $X, the record in $RUNDIR"
rm -f $STATE/fill
pass
