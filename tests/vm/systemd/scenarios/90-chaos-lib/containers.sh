# shellcheck shell=bash
# The container events of 90-chaos (np.chaos_containers: 0 none, 1 crun
# with both cgroup drivers, 2 crun and podman; schedule.sh,
# chaos_ctr_schedule). Three slots c1..c3, each a model file in $M like
# the other workloads ("STATE QOS ctr CPUS"), so that the invariant
# checker (check.sh) holds them to what it holds every workload to: an
# acknowledged LSE container's cgroup has exactly its CPUs in cpuset.cpus,
# no CPU of its effective set is in another exclusive set, in an LS or BE
# workload's, in a host unit's, nor (host_isolation "exclusive") in the
# IRQ and workqueue masks; an LS container's effective set holds no
# exclusive CPU. A container's cgroup is the runtime's, named in
# $CH/ctr/cN.cg: /np/ID (crun, cgroupfs driver), numaplace.slice/np-ID.scope/
# container (crun --systemd-cgroup), numaplace.slice/libpod-CID.scope/
# container (podman); the checker's wl_path is given that kind (below).
# numaplace-oci-hook is crun's createRuntime and poststop hook
# (dist/oci/config-snippet.json) and podman's (dist/oci's hooks.d files),
# fail-closed: a start numaplaced refuses or does not answer does not run.
# Checked here, from the kernel's files:
#   - at a start, the program's first action prints its Cpus_allowed_list
#     (/proc/self/status): an LSE container's is the CPUs numaplaced gave
#     it (numaplace status; the cgroup's cpuset.cpus when it does not
#     answer), but for a CPU taken offline meanwhile; its cgroup is where
#     .cg says (or the checker would skip it);
#   - each second, its task's Cpus_allowed_list (/proc/PID/status) is its
#     cgroup's cpuset.cpus.effective (a difference may last LIMIT_MS);
#     after each restart of numaplaced at once, and an acknowledged one's
#     within its CPUs;
#   - a stop (the program ends: poststop) or a kill -9 of the runtime and
#     the container (no poststop; crun's cgroupfs cgroup then removed as a
#     runtime's garbage collection does, crun --systemd-cgroup's scope and
#     podman's go by themselves): once the cgroup is gone the workload is
#     released within LIMIT_MS of numaplaced up and the state disk not full
#     (numaplace status: once the cgroup is gone nothing in the kernel
#     names the workload);
#   - at the end (ctr_end, before chaos_end): every container stopped, no
#     crun or podman container, no cgroup below /np, no np-*.scope or
#     libpod-*.scope unit, no container workload in numaplace status.
# Start times (the runtime's start to the program's first line) are
# summed per kind: CHAOS-CONTAINERS at the end.

CTRS=${NP_CHAOS_CONTAINERS:-0}
[[ $CTRS =~ ^[012]$ ]] || fail "np.chaos_containers: 0, 1 (crun) or 2 (crun and podman), not '$CTRS'"
CTR_PROG='grep Cpus_allowed_list /proc/self/status; while [ ! -e /stop ]; do sleep 1; done'

# the checker's wl_path (check.sh) with the kind ctr: its cgroup as .cg
# names it (read, not forked: the checker runs it each second)
declare -F wl_path >/dev/null || fail "containers.sh: no wl_path (check.sh first)"
_f=$(declare -f wl_path)
eval "_wl_path_chk${_f#wl_path}"
unset _f
wl_path() {
	if [ "$2" = ctr ]; then
		_P=/nonexistent
		read -r _P 2>/dev/null <"$CH/ctr/$1.cg"
	else
		_wl_path_chk "$@"
	fi
}

# the config's oci_hook member (90-chaos.sh conf, events.sh conf_text):
# both parents may ask for LSE and LS, and host isolation applies to their
# CPUs (what the checker holds every exclusive CPU to); the runtimes give a
# hook 10 s (dist/oci), the hook waits 8 at most
ctr_conf() {
	printf '%s' ',
  "oci_hook": {"on_failure": "fail-closed", "timeout_ms": 8000, "policy": {"rules": [
    {"cgroup_parent": "np", "qos": ["LSE", "LS"], "host_isolation": true},
    {"cgroup_parent": "numaplace.slice", "qos": ["LSE", "LS"], "host_isolation": true}]}}'
}

declare -A CST CPID CID CKIND CQ CC CT0 CGONE CUP CLAST CMIS CSUM CN CMAX COFF
CREL_MAX=0 CREL_MAXUP=0 CREL_N=0 CPROC=0 DISKFULL=0

ctr_setup() {
	local n
	((CTRS)) || return 0
	command -v crun >/dev/null || fail "np.chaos_containers=$CTRS: crun is not in the image"
	((CTRS < 2)) || command -v podman >/dev/null || fail "np.chaos_containers=2: podman is not in the image"
	mkdir -p $CH/ctr
	on_exit "for c in \$(crun list -q 2>/dev/null); do crun kill \$c KILL; crun delete -f \$c; done; podman rm -f -a -t 0 >/dev/null 2>&1; rm -f /etc/containers/oci/hooks.d/50-numaplace-*"
	oci_hooks
	((CTRS < 2)) || oci_hooksd
	for n in c1 c2 c3; do
		oci_rootfs $CH/ctr/$n/rootfs
		echo /nonexistent >$CH/ctr/$n.cg
		setm $n "absent - ctr -"
	done
	echo "CHAOS-CONTAINERS-ON level=$CTRS: crun (cgroupfs, systemd)$( ((CTRS < 2)) || echo ", podman")"
}

ev_ctr() { # SLOT KIND QOS CPUS
	local n=$1 b=$CH/ctr/$1 id=$1-$IDX
	if [ -n "${CST[$n]:-}" ]; then
		C[ctr_busy]=$((${C[ctr_busy]:-0} + 1))
		ctr_log "$n ${CST[$n]}: not started"
		return 0
	fi
	CID[$n]=$id CKIND[$n]=$2 CQ[$n]=$3 CC[$n]=$4
	rm -f $b/rootfs/stop $b.cid
	: >$b.out
	# no class until placed: its cgroup is its parent's CPUs until the hook
	# has its answer (the program has not started)
	setm $n "busy - ctr -"
	_ex "$(cat /sys/devices/system/cpu/offline)"
	COFF[$n]=$_E
	case $2 in
	crun)
		echo /sys/fs/cgroup/np/$id >$b.cg
		oci_bundle $b /np/$id "$(oci_ann $id $3 $4)" "$(guar $4)" "$CTR_PROG"
		;;
	crun-sd)
		echo /sys/fs/cgroup/numaplace.slice/np-$id.scope/container >$b.cg
		oci_bundle $b numaplace.slice:np:$id "$(oci_ann $id $3 $4)" "$(guar $4)" "$CTR_PROG"
		;;
	podman) echo /nonexistent >$b.cg ;; # known once the cidfile is there
	esac
	_ms
	CT0[$n]=$_T
	case $2 in
	crun) crun run --no-pivot -b $b $id >>$b.out 2>&1 </dev/null & ;;
	crun-sd) crun --systemd-cgroup run --no-pivot -b $b $id >>$b.out 2>&1 </dev/null & ;;
	podman)
		podman run --rm --name $id --network none --cgroup-parent numaplace.slice \
			--cpus $4 --cpu-shares $(($4 * 1024)) --annotation numaplace.io/qos=$3 \
			--annotation numaplace.io/cpus=$4 --annotation numaplace.io/workload=$id \
			--cidfile $b.cid --rootfs $b/rootfs /bin/sh -c "$CTR_PROG" >>$b.out 2>&1 </dev/null &
		;;
	esac
	CPID[$n]=$! CST[$n]=starting
	C[ctr_$2]=$((${C[ctr_$2]:-0} + 1))
	ctr_log "$n $id $2 $3 $4: launched"
}
ev_ctr-stop() { # SLOT HOW (0, 1: the program ends; 2: kill -9)
	local n=$1 p
	if [ "${CST[$n]:-}" != running ]; then
		C[ctr_busy]=$((${C[ctr_busy]:-0} + 1))
		ctr_log "$n ${CST[$n]:-absent}: not stopped"
		return 0
	fi
	setm $n "busy ${CQ[$n]} ctr -"
	if (($2 < 2)); then
		touch $CH/ctr/$n/rootfs/stop
		_ms
		CT0[$n]=$_T CST[$n]=stopping
		C[ctr_stops]=$((${C[ctr_stops]:-0} + 1))
		ctr_log "$n ${CID[$n]}: told to end"
		return 0
	fi
	_wl_cg $n
	_ms
	CT0[$n]=$_T
	kill -9 ${CPID[$n]} 2>/dev/null
	while read -r p; do kill -9 $p 2>/dev/null; done 2>/dev/null <$_P/cgroup.procs
	CST[$n]=killed
	C[ctr_kills]=$((${C[ctr_kills]:-0} + 1))
	ctr_log "$n ${CID[$n]}: kill -9 of the runtime (${CPID[$n]}) and the container"
}
_wl_cg() { wl_path $1 ctr; }
# on the test channel and in the log, with the scenario's second
ctr_log() {
	echo "CHAOS-CTR ${SECONDS}s $*"
	echo "CHAOS-CTR ${SECONDS}s $*" >>$CH/log
}

# ctr_started SLOT: the program's first line came (or the runtime ended
# without it, or took 240 s)
ctr_started() {
	local n=$1 b=$CH/ctr/$1 k v pr='' s dt id=${CID[$1]} cid
	if [ ${CKIND[$n]} = podman ] && [ -s $b.cid ]; then
		read -r cid <$b.cid
		echo /sys/fs/cgroup/numaplace.slice/libpod-$cid.scope/container >$b.cg
	fi
	while read -r k v; do [ "$k" = Cpus_allowed_list: ] && pr=$v && break; done <$b.out
	_ms
	dt=$((_T - CT0[$n]))
	if [ -z "$pr" ]; then
		if kill -0 ${CPID[$n]} 2>/dev/null; then
			((dt < 240000)) || chaos_fail "container $id (${CKIND[$n]}) printed nothing in 240 s: $(tr '\n' ' ' <$b.out | cut -c1-300)"
			return 0
		fi
		wait ${CPID[$n]}
		ctr_log "$n $id ${CKIND[$n]} ${CQ[$n]} ${CC[$n]}: not started (exit $?, $((dt / 1000)) s): $(tr '\n' ' ' <$b.out | cut -c1-200); the hook's log: $(tail -n 1 /run/numaplace/oci-hook.log 2>/dev/null | cut -c1-200)"
		C[ctr_refused]=$((${C[ctr_refused]:-0} + 1))
		ctr_gc $n
		# its cgroup must go and no workload stay: ctr_stopped
		CST[$n]=gone CT0[$n]=$_T
		return 0
	fi
	# the start's time: to the program's line (the output's last write),
	# not to when the driver saw it
	dt=$(($(date -r $b.out +%s%3N) - CT0[$n]))
	_wl_cg $n
	[ -d $_P ] || chaos_fail "container $id (${CKIND[$n]}) started, but its cgroup $_P is not there: $(ls -d ${_P%/*}* 2>&1 | head -n 3 | tr '\n' ' ')"
	CSUM[${CKIND[$n]}]=$((${CSUM[${CKIND[$n]}]:-0} + dt))
	CN[${CKIND[$n]}]=$((${CN[${CKIND[$n]}]:-0} + 1))
	((dt <= ${CMAX[${CKIND[$n]}]:-0})) || CMAX[${CKIND[$n]}]=$dt
	CST[$n]=running
	if [ ${CQ[$n]} = LS ]; then
		setm $n "shared LS ctr -"
		ctr_log "$n $id ${CKIND[$n]} LS ${CC[$n]}: started in $dt ms on $pr"
		return 0
	fi
	s=$(timeout 30 "$NPC" status --json --socket "$SOCK" 2>/dev/null |
		jq -r --arg n "$id" '.workloads[] | select(.name == $n) | .containers[0].cpuset')
	# numaplaced not answering: the kernel's word (as from_kernel)
	[ -n "$s" ] || s=$(cat $_P/cpuset.cpus)
	ctr_offline_ok "$pr" "$s" $n ||
		chaos_fail "container $id (${CKIND[$n]}, LSE ${CC[$n]}) printed Cpus_allowed_list $pr at its first instruction; it was given $s"
	setm $n "acked LSE ctr $s"
	ctr_log "$n $id ${CKIND[$n]} LSE ${CC[$n]}: started in $dt ms on $pr, given $s"
}
# ctr_offline_ok PRINTED GIVEN SLOT: the same but for CPUs offline now,
# at the start or taken offline since
ctr_offline_ok() {
	local y on
	_ex "$(cat /sys/devices/system/cpu/online)"
	on=$_E
	_ex "$1"
	local a=$_E
	_ex "$2"
	for y in $_E; do [[ $on != *" $y "* || ${COFF[$3]} == *" $y "* || $a == *" $y "* ]] || return 1; done
	_ex "$2"
	for y in $a; do [[ $_E == *" $y "* ]] || return 1; done
	return 0
}
# ev_offline: the CPU goes into every starting container's COFF
ctr_offline() {
	local n
	for n in "${!CST[@]}"; do [ "${CST[$n]}" = starting ] && COFF[$n]+="$1 "; done
	return 0
}
ctr_pid() { local p; _wl_cg $1; read -r p 2>/dev/null <$_P/cgroup.procs; echo $p; }
# ctr_gc SLOT: what a runtime's garbage collection does after a start
# that failed or a kill: crun's state, its cgroupfs cgroup once empty
ctr_gc() {
	local n=$1 p
	case ${CKIND[$n]} in
	crun | crun-sd)
		rm -rf /run/crun/${CID[$n]}
		_wl_cg $n
		[ ${CKIND[$n]} = crun ] && [ -d $_P ] && read -r p 2>/dev/null <$_P/cgroup.procs
		[ ${CKIND[$n]} = crun ] && [ -d $_P ] && [ -z "$p" ] && rmdir $_P 2>/dev/null
		;;
	podman) ;;
	esac
	return 0
}
# ctr_stopped SLOT: the runtime ended and the cgroup went: the release's
# clock starts
ctr_stopped() {
	local n=$1 rc
	if [ "${CST[$n]}" != gone ]; then
		if kill -0 ${CPID[$n]} 2>/dev/null; then
			_ms
			((_T - CT0[$n] < 120000)) || chaos_fail "container ${CID[$n]} (${CKIND[$n]}): the runtime still runs 120 s after the program was told to end"
			return 0
		fi
		wait ${CPID[$n]}
		rc=$?
		[ ${CST[$n]} = stopping ] && ((rc)) &&
			ctr_log "$n ${CID[$n]}: the runtime exited $rc at a stop: $(tr '\n' ' ' <$CH/ctr/$n.out | cut -c1-200)"
		[ ${CST[$n]} = killed ] && ctr_gc $n
		CST[$n]=gone
		_ms
		CT0[$n]=$_T
	fi
	[ ${CKIND[$n]} = crun ] && [ -z "${CGONE[$n]:-}" ] && ctr_gc $n
	_wl_cg $n
	if [ -d $_P ]; then
		_ms
		((_T - CT0[$n] < 120000)) || chaos_fail "container ${CID[$n]} (${CKIND[$n]}): its cgroup $_P is there 120 s after the runtime ended (procs: $(tr '\n' ' ' <$_P/cgroup.procs))"
		return 0
	fi
	[ -n "${CGONE[$n]:-}" ] && return 0
	_ms
	CGONE[$n]=$_T CUP[$n]=0 CLAST[$n]=$_T
	ctr_log "$n ${CID[$n]}: cgroup gone $(((_T - CT0[$n]) / 1000)) s after the runtime ended"
}
ctr_collect() {
	local n
	((CTRS)) || return 0
	for n in "${!CST[@]}"; do
		case ${CST[$n]} in
		starting) ctr_started $n ;;
		stopping | killed | gone) ctr_stopped $n ;;
		running) kill -0 ${CPID[$n]} 2>/dev/null ||
			chaos_fail "container ${CID[$n]} (${CKIND[$n]}) ended by itself: $(tr '\n' ' ' <$CH/ctr/$n.out | cut -c1-300)" ;;
		esac
	done
}
# ctr_proc SLOT: its task's Cpus_allowed_list (_CP) is its cgroup's
# cpuset.cpus.effective (_CE)
ctr_proc() {
	local p k v a
	_wl_cg $1
	read -r p 2>/dev/null <$_P/cgroup.procs || return 0
	_CP='' _CE=''
	while read -r k v; do [ "$k" = Cpus_allowed_list: ] && _CP=$v && break; done 2>/dev/null </proc/$p/status
	_rd $_P/cpuset.cpus.effective
	_CE=$_V _CPID=$p
	[ -n "$_CP" ] && [ -n "$_CE" ] || return 0 # gone meanwhile
	CPROC=$((CPROC + 1))
	_ex "$_CP"; a=$_E; _ex "$_CE"
	[ "$a" = "$_E" ]
}
# each second: the tasks of the running containers; the releases waited for
ctr_second() {
	local n j up='' rel
	((CTRS)) || return 0
	for n in "${!CST[@]}"; do
		[ ${CST[$n]} = running ] || continue
		_ms
		if ctr_proc $n; then
			unset "CMIS[$n]"
		elif [ -z "${CMIS[$n]:-}" ]; then
			CMIS[$n]=$_T
			ctr_log "$n ${CID[$n]}: task $_CPID Cpus_allowed_list $_CP, cgroup effective $_CE"
		elif ((_T - CMIS[$n] > LIMIT_MS)); then
			chaos_fail "container ${CID[$n]} (${CKIND[$n]}): its task $_CPID has Cpus_allowed_list $_CP, its cgroup's cpuset.cpus.effective is $_CE, for $(((_T - CMIS[$n]) / 1000)) s"
		fi
	done
	for n in "${!CGONE[@]}"; do
		if [ -z "$up" ]; then
			j=$(timeout 30 "$NPC" status --json --socket "$SOCK" 2>/dev/null) && [ -n "$j" ] && up=1 || up=0
			_ms
		fi
		if ((up)); then
			rel=$(jq -r --arg n "${CID[$n]}" 'any(.workloads[]; .name == $n)' <<<"$j")
			if [ "$rel" = false ]; then
				ctr_released $n $_T
				continue
			fi
			((DISKFULL)) || CUP[$n]=$((CUP[$n] + _T - CLAST[$n]))
		fi
		CLAST[$n]=$_T
		((CUP[$n] <= LIMIT_MS)) ||
			chaos_fail "container ${CID[$n]} (${CKIND[$n]}, ${CST[$n]}): still a workload $(((_T - CGONE[$n]) / 1000)) s after its cgroup went, $((CUP[$n] / 1000)) s of them with numaplaced answering and the disk not full (limit $((LIMIT_MS / 1000)) s)"
	done
}
ctr_released() { # SLOT NOW
	local n=$1 d=$(($2 - CGONE[$1]))
	ctr_log "$n ${CID[$n]} ${CKIND[$n]}: released $d ms after its cgroup went (${CUP[$n]} ms counted)"
	((d <= CREL_MAX)) || CREL_MAX=$d
	((CUP[$n] <= CREL_MAXUP)) || CREL_MAXUP=${CUP[$n]}
	CREL_N=$((CREL_N + 1))
	setm $n "absent - ctr -"
	unset "CST[$n]" "CGONE[$n]" "CUP[$n]" "CLAST[$n]" "CMIS[$n]"
}

# the end: every container stopped (the program ends: poststop), released,
# nothing left of any
ctr_end() {
	local n t left k avg=
	((CTRS)) || return 0
	t=$SECONDS
	for n in "${!CST[@]}"; do
		while [ "${CST[$n]:-}" = starting ]; do
			((SECONDS - t < 300)) || chaos_fail "container ${CID[$n]} still starting at the end"
			housekeep
			sleep 0.2
		done
		[ "${CST[$n]:-}" = running ] && ev_ctr-stop $n 0
	done
	while ((${#CST[@]})); do
		((SECONDS - t < 300)) || chaos_fail "containers not stopped and released 300 s after the end: ${!CST[*]} (${CST[*]})"
		housekeep
		sleep 0.2
	done
	left=$(crun list -q 2>/dev/null | tr '\n' ' ')
	[ -z "$left" ] || fail "crun containers left at the end: $left"
	if ((CTRS > 1)); then
		left=$(podman ps -aq 2>/dev/null | tr '\n' ' ')
		[ -z "$left" ] || fail "podman containers left at the end: $left"
	fi
	left=$(find /sys/fs/cgroup/np -mindepth 1 -type d 2>/dev/null | tr '\n' ' ')
	[ -z "$left" ] || fail "cgroups left below /np at the end: $left"
	left=$(systemctl list-units --all --plain --no-legend 'np-*.scope' 'libpod-*.scope' 2>/dev/null | tr '\n' ' ')
	[ -z "$left" ] || fail "container units left at the end: $left"
	try_for 120 answering || fail "numaplaced does not answer at the end (containers)"
	left=$("$NPC" status --json --socket "$SOCK" | jq -r '[.workloads[].name | select(test("^c[1-3]-"))] | join(" ")')
	[ -z "$left" ] || fail "container workloads left at the end: $left"
	rmdir /sys/fs/cgroup/np 2>/dev/null
	rm -f /etc/containers/oci/hooks.d/50-numaplace-*
	for k in crun crun-sd podman; do
		[ -n "${CN[$k]:-}" ] && avg+=" $k=${CN[$k]}x$((CSUM[$k] / CN[$k]))ms(max${CMAX[$k]}ms)"
	done
	echo "CHAOS-CONTAINERS starts: crun=${C[ctr_crun]:-0} crun-sd=${C[ctr_crun-sd]:-0} podman=${C[ctr_podman]:-0}" \
		"refused=${C[ctr_refused]:-0} busy=${C[ctr_busy]:-0} stops=${C[ctr_stops]:-0} kills=${C[ctr_kills]:-0}" \
		"released=$CREL_N longest_release=${CREL_MAX}ms(${CREL_MAXUP}ms up) task_checks=$CPROC started:${avg:- none}"
}
