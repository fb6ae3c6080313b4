# shellcheck shell=bash
# The events of 90-chaos (one ev_NAME per event of schedule.sh) and the
# driver's loop, run_chaos. Socket requests run in the background (their
# answers are collected as they come: 90-chaos.sh, sock_bg and collect);
# containers run in the background too (containers.sh: ev_ctr,
# ev_ctr-stop); everything else is done in place. Counters: C[NAME].
declare -A C

# the config, written in place (write_config stops numaplaced and empties
# the state: for the first start only)
conf_text() {
	printf '{\n  "spec_dir": "%s",\n  "state_dir": "%s",\n  "socket": "%s",\n  %s\n}\n' \
		"$SPECS" "$STATE" "$SOCK" '"cgroup_parent": "numaplace.slice", "reconcile_period_s": '$PERIOD',
  "topology": "/etc/numaplace/topology.json", "cpu_online_file": "/sys/devices/system/cpu/online",
  "host_isolation": "'$HOSTISO'",
  "node_policy": {"cpu_policy": "static", "reserved_cpus": "0"},
  "verify": {"enabled": "on"}'"$(ctr_conf)"
}
spec_json() { # NAME QOS CPUS [unit]
	local where='"cgroup": "'$1'"' q=$2 iso=""
	[ "$q" = LSR ] && [ "$LSR" != 1 ] && q=LSE # see 90-chaos.sh
	[ "${4:-}" = unit ] && where='"unit": "chaos-'$1'.service"'
	[ "$q" = partition ] && q=LSE iso=', "isolation": "partition"'
	printf '{"name": "%s", %s, "qos": "%s"%s, "containers": [{"name": "m", "cpu": "%s"}]}\n' \
		"$1" "$where" "$q" "$iso" "$3"
}
qos_sent() { if [ "$1" = LSR ] && [ "$LSR" != 1 ]; then echo LSE; else echo $1; fi; }
mainpid() { prop numaplaced.service MainPID; }

ev_admit() { # NAME QOS CPUS
	wait_idle $1
	spec_json $1 $2 $3 >$CH/spec-$1.json
	qos_sent $2 >$CH/out/$1.q
	sock_bg $1 "$(cat $M/$1)" "$NPC" admit -f $CH/spec-$1.json --socket "$SOCK"
}
ev_resize() { # NAME CPUS
	wait_idle $1
	sock_bg $1 "$(cat $M/$1)" "$NPC" resize $1 --cpus $2 --socket "$SOCK"
}
ev_release() { # NAME
	wait_idle $1
	sock_bg $1 "$(cat $M/$1)" "$NPC" release $1 --socket "$SOCK"
}
declare -A SPECQ=([f1]=LSE [f2]=LS [f3]=BE)
ev_spec() { # NAME OP(0,1 write; 2 remove) CPUS
	if [ $2 = 2 ]; then
		rm -f $SPECS/$1.json
		setm $1 "absent - cg -"
		return
	fi
	spec_json $1 ${SPECQ[$1]} $3 >$SPECS/.$1.tmp && mv -f $SPECS/.$1.tmp $SPECS/$1.json
	setm $1 "spec ${SPECQ[$1]} cg -"
}
ev_unit() { # NAME OP(0 admit, 1 release) QOS CPUS
	wait_idle $1
	if [ $2 = 1 ]; then
		sock_bg $1 "$(cat $M/$1)" "$NPC" release $1 --socket "$SOCK"
		return
	fi
	spec_json $1 $3 $4 unit >$CH/spec-$1.json
	qos_sent $3 >$CH/out/$1.q
	sock_bg $1 "$(cat $M/$1)" "$NPC" admit -f $CH/spec-$1.json --socket "$SOCK"
}
ev_restart-unit() { timeout 60 systemctl restart chaos-$1.service; }
ev_reload() { timeout 120 systemctl daemon-reload; C[reloads]=$((${C[reloads]:-0} + 1)); }
ev_confined() { timeout 60 systemctl restart chaos-host.service; }
ev_admin() { # 0: AllowedCPUs every CPU; 1: CPUWeight; 2: AllowedCPUs reset
	case $1 in
	0) timeout 60 systemctl set-property --runtime system.slice AllowedCPUs="$ALLCPUS" ;;
	1) timeout 60 systemctl set-property --runtime system.slice CPUWeight=$((50 + IDX % 100)) ;;
	2) timeout 60 systemctl set-property --runtime system.slice AllowedCPUs= ;;
	esac
	C[admin]=$((${C[admin]:-0} + 1))
}
ev_kill() {
	local p
	p=$(mainpid)
	[ "${p:-0}" -gt 0 ] && kill -9 $p && C[kills]=$((${C[kills]:-0} + 1))
}
ev_term() {
	local p
	p=$(mainpid)
	[ "${p:-0}" -gt 0 ] && kill -TERM $p && C[terms]=$((${C[terms]:-0} + 1))
}
ev_hup() { # 0..3: reconcile period 1 or 2 s, host_isolation exclusive or off
	local p
	PERIOD=$((1 + $1 % 2))
	HOSTISO=$( (($1 < 2)) && echo exclusive || echo off)
	conf_text >$CONF.tmp && mv -f $CONF.tmp $CONF
	echo $HOSTISO >$CH/hostiso
	p=$(mainpid)
	[ "${p:-0}" -gt 0 ] && kill -HUP $p && C[hups]=$((${C[hups]:-0} + 1))
}
ev_offline() {
	ctr_offline $1
	echo 0 >/sys/devices/system/cpu/cpu$1/online && C[offline]=$((${C[offline]:-0} + 1))
}
ev_online() { echo 1 >/sys/devices/system/cpu/cpu$1/online; }
ev_diskfull() {
	DISKFULL=1
	dd if=/dev/zero of=$STATE/chaos-fill bs=64k 2>/dev/null
	C[diskfull]=$((${C[diskfull]:-0} + 1))
}
ev_diskfree() { rm -f $STATE/chaos-fill; DISKFULL=0; }
ev_burst() {
	local i ok=0
	local -a p=()
	for i in $(seq 1 24); do
		timeout 60 "$NPC" status --socket "$SOCK" >/dev/null 2>&1 &
		p+=($!)
	done
	for i in "${p[@]}"; do wait $i && ok=$((ok + 1)); done
	C[bursts]=$((${C[bursts]:-0} + 1))
	C[burst_ok]=$((${C[burst_ok]:-0} + ok))
}
ev_status() { timeout 60 "$NPC" status --socket "$SOCK" >/dev/null 2>&1; }

# After each restart (a new MainPID that answers): every acknowledged
# exclusive workload with no request in flight has the CPUs of its answer
# (cpuset.cpus; a unit's while its cgroup is there); a container's task
# runs on its cgroup's effective set, within those CPUs (/proc/PID/status).
LASTPID=
DOWN_SINCE=
# numaplaced's pid from its cgroup (no systemctl each second)
cg_pid() { _P=; read -r _P 2>/dev/null </sys/fs/cgroup/system.slice/numaplaced.service/cgroup.procs; }
restart_check() {
	local p f n st q k c g
	cg_pid
	p=$_P
	[ "$p" = "$LASTPID" ] && [ "${p:-0}" -gt 0 ] && [ -z "$DOWN_SINCE" ] && return 0
	if ! answering; then
		[ -n "$DOWN_SINCE" ] || DOWN_SINCE=$SECONDS
		((SECONDS - DOWN_SINCE <= DOWN_S)) ||
			chaos_fail "numaplaced has not answered for $((SECONDS - DOWN_SINCE)) s ($(systemctl show -p ActiveState -p SubState -p Result -p ExecMainStatus numaplaced.service | tr '\n' ' '))"
		return 0
	fi
	DOWN_SINCE=
	cg_pid
	p=$_P
	[ "$p" = "$LASTPID" ] && return 0
	LASTPID=$p
	C[restarts]=$((${C[restarts]:-0} + 1))
	collect
	for f in $M/*; do
		n=${f##*/}
		read -r st q k c <$f
		[ "$st" = acked ] || continue
		wl_path $n $k
		g=$_P
		[ -d $g ] || { [ $k = unit ] && continue; chaos_fail "restart ${C[restarts]} (pid $p): $n acknowledged with $c, $g is gone"; }
		cpus_same "$(cat $g/cpuset.cpus)" "$c" ||
			chaos_fail "restart ${C[restarts]} (pid $p): $n acknowledged with $c, its cpuset.cpus is $(cat $g/cpuset.cpus)"
		if [ $k = ctr ]; then
			ctr_proc $n || ctr_proc $n ||
				chaos_fail "restart ${C[restarts]} (pid $p): container $n's task $_CPID has Cpus_allowed_list $_CP, its cgroup's cpuset.cpus.effective is $_CE"
			ctr_offline_ok "$_CP" "$c" $n ||
				chaos_fail "restart ${C[restarts]} (pid $p): container $n acknowledged with $c, its task $_CPID has Cpus_allowed_list $_CP"
		fi
		C[restart_held]=$((${C[restart_held]:-0} + 1))
	done
	resolve
}

# every 0.2 s: the answers; every second: restarts, unknown outcomes, leaks
HK_LAST=0
housekeep() {
	collect
	ctr_collect
	[ ! -e $CH/fail ] || chaos_fail "$(cat $CH/fail)"
	kill -0 $CHK 2>/dev/null || chaos_fail "the invariant checker ended"
	((SECONDS != HK_LAST)) || return 0
	HK_LAST=$SECONDS
	restart_check
	((${#UNK[@]} == 0)) || [ -n "$DOWN_SINCE" ] || resolve
	ctr_second
	leak_due
}
chaos_fail() {
	local u
	echo "CHAOS-FAIL seed=$SEED event=$IDX: $*"
	echo "CHAOS-REPRO make chaos CHAOS_TOPOLOGY=$NP_TOPO CHAOS_SEED=$SEED CHAOS_MINUTES=$MIN CHAOS_SLACK=$SLACK$( ((LSR)) || echo " CHAOS_LSR=0")$( ((KILLS)) || echo " CHAOS_KILLS=0") CHAOS_CONTAINERS=$CTRS"
	tail -n 40 $CH/log | sed 's/^/  log: /'
	for u in $HOSTU numaplaced.service; do
		echo "  $u: $(systemctl show -p AllowedCPUs -p EffectiveCPUs -p ActiveState -p SubState -p MainPID $u | tr '\n' ' ')"
	done
	for u in $M/*; do echo "  model ${u##*/}: $(cat $u)"; done
	journalctl -u numaplaced --no-pager -o short-monotonic -n 60 | grep -v '^ *[][{}]' | sed 's/^/  journal: /'
	fail "$*"
}

run_chaos() {
	local t0 ms ev args now total n=0 end
	ctr_setup
	chaos_schedule $SEED $((MIN * 60)) $NP_CPUS $CTRS $KILLS >$CH/schedule
	total=$(wc -l <$CH/schedule)
	echo "CHAOS-SCHEDULE $total events, sha256 $(sha256sum <$CH/schedule | cut -c1-16)"
	_ms
	t0=$_T
	end=$((MIN * 60000 + 10000)) # behind by more at the end: stop (a bounded time)
	IDX=0
	cg_pid
	LASTPID=$_P
	leak_sample
	while read -r -u 3 ms ev args; do
		IDX=$((IDX + 1))
		while :; do
			housekeep
			_ms
			now=$((_T - t0))
			((now < ms)) || break
			sleep 0.2
		done
		if ((now > end)); then
			echo "CHAOS-LATE stopped at event $IDX of $total: $((now / 1000)) s, the schedule's end was $((MIN * 60)) s"
			break
		fi
		echo "CHAOS-EV $IDX $ms $ev${args:+ $args}"
		echo "$IDX $ms $ev $args" >>$CH/log
		"ev_$ev" $args </dev/null || echo "CHAOS-EVRC $IDX $ev exit $?" >>$CH/log
		C[events]=$((${C[events]:-0} + 1))
	done 3<$CH/schedule
	ctr_end
	chaos_end $total
}
