# shellcheck shell=bash
# The invariant checker of 90-chaos: chk_loop runs in the background and
# reads, every second, the kernel's files (cpuset.cpus and
# cpuset.cpus.effective of every workload and host cgroup,
# /proc/irq/default_smp_affinity, the unbound workqueue cpumask) and
# systemd's properties (AllowedCPUs, EffectiveCPUs, ActiveState; every
# third second), never
# numaplaced's answers. What the driver was told (the model: one file per
# workload in $M, "STATE QOS KIND CPUS", written by the driver) says what
# must hold:
#   acked  exclusive (LSE, LSR, partition) with the CPUs of its answer:
#          its cpuset.cpus is exactly those CPUs, its cgroup is there
#   shared an LS or BE workload acknowledged: its cgroup is there
#   spec   a spec file is there (admitted when it fits: not asserted)
#   absent released, rejected, never asked, spec file removed: no cgroup
#   busy   a request in flight; unknown: cut by a kill, not yet resolved
#          (neither asserts anything about the workload itself)
# and, over every workload present whatever its state: no CPU in two
# exclusive sets; no LSE or LSR CPU in an LS workload's effective set, in a
# host unit's (system.slice, init.scope, chaos-host.service: the kernel's
# effective set, systemd's AllowedCPUs and EffectiveCPUs), in a unit of
# numaplace.slice that is no workload and runs (its cgroup populated; a
# unit workload's service absent in the model: released while it runs,
# or never admitted; any other service or scope there but numaplace's
# scope: the same three), nor,
# under host_isolation "exclusive", in default_smp_affinity and the
# workqueue cpumask; no LSE CPU in a BE workload's set.
# A broken invariant opens a window; it may last one reconcile period after
# a change (plus the emulator's slack): a window longer than LIMIT_MS while
# numaplaced was up (ActiveState active, SubState running) is a failure,
# written to $CH/fail. Every window is logged ("CHAOS-WIN KEY MS UP_MS");
# the longest are in $CH/windows.

# _ex LIST: _E=" 0 1 5 " (bash only: a pipeline per check costs seconds
# under TCG)
_ex() {
	local r a b IFS=,
	_E=" "
	for r in $1; do
		[ -n "$r" ] || continue
		a=${r%-*} b=${r#*-}
		while ((a <= b)); do _E+="$a " a=$((a + 1)); done
	done
}
# _and "SET" "SET": _A = the CPUs in both (sets as _ex makes them)
_and() {
	local y
	_A=""
	for y in $2; do [[ $1 == *" $y "* ]] && _A+="$y "; done
	_A=${_A% }
}
# a hex mask (with commas) as a set
_mask() {
	local h=${1//,/} c=0 v
	_E=" "
	while [ -n "$h" ]; do
		v=$((16#${h: -1}))
		h=${h%?}
		((v & 1)) && _E+="$c "
		((v & 2)) && _E+="$((c + 1)) "
		((v & 4)) && _E+="$((c + 2)) "
		((v & 8)) && _E+="$((c + 3)) "
		c=$((c + 4))
	done
}
_rd() { _V=; read -r _V 2>/dev/null <"$1"; }
# _eff CGROUP-DIR: _V = its effective CPUs (a cgroup without the cpuset
# controller has its parent's: the nearest ancestor with the file)
_eff() {
	local d=$1
	while [ ! -e "$d/cpuset.cpus.effective" ] && [ "$d" != /sys/fs/cgroup ]; do d=${d%/*}; done
	_rd "$d/cpuset.cpus.effective"
}
# _ms: _T = now in ms (no fork)
_ms() { local t=${EPOCHREALTIME/./}; _T=$((10#$t / 1000)); }

# wl_path NAME KIND: _P = the workload's cgroup
wl_path() {
	if [ "$2" = unit ]; then _P=/sys/fs/cgroup/numaplace.slice/chaos-$1.service; else _P=$SCOPE/$1; fi
}

declare -A W_START W_UP W_WHY
CUR=()
viol() { CUR+=("$1"); W_WHY[$1]=$2; }

# systemd's view, one systemctl call: SD[UNIT.PROP]. systemctl show prints
# one block per unit, blocks apart by an empty line, and within a block
# the properties in its own order, not the -p order: systemd 252 prints a
# unit's AllowedCPUs and EffectiveCPUs BEFORE its Id (show-252.txt,
# recorded in this VM). A block is given to its Id once it is whole; a
# property given to the Id last seen went to the unit before it (so in
# CI on 2026-11-29, seed 485035235: unit workload chaos-u1.service's own
# AllowedCPUs=4 read as chaos-host.service's, a 33.2 s "window" that
# would have lasted as long as u1). chk_systemd FILE reads FILE instead
# (chk_selftest).
declare -A SD
chk_systemd() {
	local u="" l k
	local -A b=()
	SD=()
	while :; do
		IFS= read -r l || l=EOF
		case $l in
		"" | EOF)
			for k in "${!b[@]}"; do SD[$u.$k]=${b[$k]}; done
			b=() u=""
			[ "$l" = EOF ] && break
			;;
		Id=*) u=${l#Id=} ;;
		*=*) b[${l%%=*}]=${l#*=} ;;
		esac
	done < <(if [ -n "${1:-}" ]; then cat "$1"; else
		systemctl show -p Id -p ActiveState -p SubState -p AllowedCPUs -p EffectiveCPUs \
			numaplaced.service $HOSTU chaos-u1.service chaos-u2.service 2>/dev/null
	fi)
}
# chk_selftest: chk_systemd on show-252.txt (numaplaced stopped; host units
# without AllowedCPUs; chaos-u1 AllowedCPUs=4, chaos-u2 9-10) gives each
# unit its own properties; a reason on stdout when not
chk_selftest() {
	local f=${BASH_SOURCE[0]%/*}/show-252.txt k want got bad=""
	chk_systemd "$f"
	for k in numaplaced.service.SubState=dead chaos-host.service.AllowedCPUs= \
		chaos-host.service.EffectiveCPUs= init.scope.AllowedCPUs= system.slice.AllowedCPUs= \
		chaos-u1.service.AllowedCPUs=4 chaos-u1.service.EffectiveCPUs=4 \
		chaos-u2.service.AllowedCPUs=9-10 chaos-u2.service.ActiveState=active; do
		want=${k#*=} k=${k%%=*}
		got=${SD[$k]-unset}
		[ "$got" = "$want" ] || bad+=" $k='$got' (systemd: '$want')"
	done
	SD=()
	[ -z "$bad" ] || { echo "the checker misreads systemctl show ($f):$bad"; return 1; }
}

# stray UNIT CGROUP-DIR: a unit of numaplace.slice that is no workload
# (checked in chk_others, once XSET is whole), if it runs: its cgroup
# holds processes (cgroup.events "populated 1", its first line). An empty
# directory is no running unit: a stopped unit's, left behind (systemd
# 252 makes a stopped unit's cgroup again when a property is set on it),
# or one being removed; nothing runs there (the CI run of a70d37f took
# such an np-app.service, effective 0-15, for a running stray).
stray() {
	_rd "$2/cgroup.events"
	[ "$_V" = "populated 1" ] || return 0
	_eff "$2"
	_ex "$_V"
	ST_N+=("$1") ST_E+=("$_E") ST_W+=("$2: $_V")
}
# held_scope DIR: DIR holds a container workload's cgroup (crun's
# --systemd-cgroup and podman's scope, DIR/container; the slots' .cg
# files, podman's known once its cidfile is there) and no process of its
# own. numaplaced leaves such a scope what it had (a cgroup gets no CPU
# its parent lacks: units.c, holders_given_back); what runs is in the
# container's cgroup, checked as a workload. Processes in the scope
# itself (the runtime's, before it moves them) make it a stray again.
held_scope() {
	local f c
	for f in "$CH"/ctr/*.cg; do
		[ -f "$f" ] || continue
		read -r c 2>/dev/null <"$f" || continue
		[ "${c#"$1"/}" != "$c" ] || continue
		_rd "$1/cgroup.procs"
		[ -z "$_V" ] && return 0
		return 1
	done
	return 1
}
# the services and scopes of numaplace.slice the model does not name
# (globs: no fork)
chk_slice_units() {
	local p
	for p in /sys/fs/cgroup/numaplace.slice/*.service /sys/fs/cgroup/numaplace.slice/*.scope; do
		[ -d "$p" ] || continue
		case ${p##*/} in numaplace-workloads.scope | chaos-u[0-9].service) continue ;; esac
		held_scope "$p" && continue
		stray "${p##*/}" "$p"
	done
}

# chk_workloads: the per-workload checks; sets XSET (every LSE/LSR CPU
# present), LSESET
chk_workloads() {
	local f n st q k c p eff cfg i j
	local -a xn=() xe=()
	XSET=" " LSESET=" " XWHO=""
	for f in "$M"/*; do
		[ -f "$f" ] || continue
		n=${f##*/}
		read -r st q k c <"$f" || continue
		wl_path "$n" "$k"
		p=$_P
		if [ ! -d "$p" ]; then
			[ "$k" = cg ] && { [ "$st" = acked ] || [ "$st" = shared ]; } && viol "missing:$n" "acknowledged ($st $q $c), $p is gone"
			continue
		fi
		if [ "$k" = unit ] && [ "$st" = absent ]; then
			stray "chaos-$n.service" "$p" # running, and no workload
			continue
		fi
		[ "$st" = absent ] && viol "unacked:$n" "released, rejected or never admitted, yet $p is there"
		_eff "$p"; eff=$_V
		_rd "$p/cpuset.cpus"; cfg=$_V
		if [ "$st" = acked ]; then
			_ex "$cfg"; local a=$_E; _ex "$c"
			[ "$a" = "$_E" ] || viol "moved:$n" "acknowledged $c, cpuset.cpus is '$cfg'"
		fi
		_ex "$eff"
		case $q in
		LSE | LSR | partition)
			xn+=("$n") xe+=("$_E")
			XWHO+=" $n($st $q):$eff"
			XSET+="${_E# }"
			[ "$q" = LSR ] || LSESET+="${_E# }"
			;;
		LS) SH_N+=("$n") SH_E+=("$_E") SH_W+=("$p: $eff") ;;
		BE) BE_N+=("$n") BE_E+=("$_E") BE_W+=("$p: $eff") ;;
		esac
	done
	for ((i = 0; i < ${#xn[@]}; i++)); do
		for ((j = i + 1; j < ${#xn[@]}; j++)); do
			_and "${xe[i]}" "${xe[j]}"
			[ -z "$_A" ] || viol "overlap:${xn[i]}:${xn[j]}" "exclusive sets share CPU(s) $_A"
		done
	done
}

# the exclusive sets and whose (for a window's reason), with the units'
# AllowedCPUs
xwho() { echo "$XWHO; u1 AllowedCPUs=${SD[chaos-u1.service.AllowedCPUs]:-} u2 AllowedCPUs=${SD[chaos-u2.service.AllowedCPUs]:-}"; }

# chk_others: shared and BE workloads, host units, host isolation
chk_others() {
	local i u e a
	for ((i = 0; i < ${#SH_N[@]}; i++)); do
		_and "$XSET" "${SH_E[i]}"
		[ -z "$_A" ] || viol "shared:${SH_N[i]}" "LS workload's effective set (${SH_W[i]}) holds exclusive CPU(s) $_A;$(xwho)"
	done
	for ((i = 0; i < ${#BE_N[@]}; i++)); do
		_and "$LSESET" "${BE_E[i]}"
		[ -z "$_A" ] || viol "be:${BE_N[i]}" "BE workload's effective set (${BE_W[i]}) holds LSE CPU(s) $_A;$(xwho)"
	done
	[ "$XSET" = " " ] && return 0
	# units of numaplace.slice that are no workload: the shared pool, as
	# host units (systemd's view for the model's units, every third second)
	for ((i = 0; i < ${#ST_N[@]}; i++)); do
		u=${ST_N[i]}
		_and "$XSET" "${ST_E[i]}"
		[ -z "$_A" ] || viol "stray:$u:effective" "no workload, yet its effective set (${ST_W[i]}) holds exclusive CPU(s) $_A;$(xwho)"
		[ "${SD[$u.ActiveState]:-}" = active ] || continue
		a=${SD[$u.AllowedCPUs]:-}
		_ex "${a// /,}"; _and "$XSET" "$_E"
		[ -z "$_A" ] || viol "stray:$u:AllowedCPUs" "no workload, yet systemd's AllowedCPUs=$a holds exclusive CPU(s) $_A"
		e=${SD[$u.EffectiveCPUs]:-}
		_ex "${e// /,}"; _and "$XSET" "$_E"
		[ -z "$_A" ] || viol "stray:$u:EffectiveCPUs" "no workload, yet systemd's EffectiveCPUs=$e holds exclusive CPU(s) $_A"
	done
	for u in $HOSTU; do
		[ "${SD[$u.ActiveState]:-}" = active ] || continue
		# none set: its slice's (EffectiveCPUs and the kernel say what it has)
		a=${SD[$u.AllowedCPUs]:-}
		_ex "${a// /,}"; _and "$XSET" "$_E"
		[ -z "$_A" ] || viol "host:$u:AllowedCPUs" "systemd's AllowedCPUs=$a holds exclusive CPU(s) $_A"
		# (a unit without a cpuset of its own shows no EffectiveCPUs)
		e=${SD[$u.EffectiveCPUs]:-}
		_ex "${e// /,}"; _and "$XSET" "$_E"
		[ -z "$_A" ] || viol "host:$u:EffectiveCPUs" "systemd's EffectiveCPUs=$e holds exclusive CPU(s) $_A"
		_eff "/sys/fs/cgroup/${HOSTCG[$u]}"
		_ex "$_V"; _and "$XSET" "$_E"
		[ -z "$_A" ] || viol "host:$u:effective" "its cpuset.cpus.effective $_V holds exclusive CPU(s) $_A"
	done
	_rd "$CH/hostiso"
	[ "$_V" = exclusive ] || return 0
	_rd /proc/irq/default_smp_affinity; _mask "$_V"; _and "$XSET" "$_E"
	[ -z "$_A" ] || viol "irq:default" "default_smp_affinity $_V holds exclusive CPU(s) $_A"
	_rd /sys/devices/virtual/workqueue/cpumask; _mask "$_V"; _and "$XSET" "$_E"
	[ -z "$_A" ] || viol "irq:workqueue" "the workqueue cpumask $_V holds exclusive CPU(s) $_A"
}

# chk_windows NOW UP DT: open, extend and close the windows
chk_windows() {
	local now=$1 up=$2 dt=$3 k d full=0
	declare -A seen=()
	# the state disk full (ev_diskfull's file): a spec file's removal is
	# a release numaplaced cannot save, so it keeps the workload ("release
	# of NAME (spec file removed) not done: the state could not be saved;
	# it stays admitted") and releases it once it can. That time does not
	# count for an unacked:fN window (the 2-hour 2node run of 2026-11-30,
	# seed 620336550: f2's spec removed while the disk was free, numaplaced
	# restarting after a kill -9; the disk was full again before it got
	# there). Nothing else is excused by a full disk.
	[ -e "$STATE/chaos-fill" ] && full=1
	for k in "${CUR[@]}"; do
		seen[$k]=1
		if [ -z "${W_START[$k]:-}" ]; then
			W_START[$k]=$now W_UP[$k]=0
			echo "CHAOS-OPEN $k ${W_WHY[$k]}" | tee -a "$CH/log"
		elif ((up)) && { ((!full)) || [ "${k#unacked:f}" = "$k" ]; }; then
			W_UP[$k]=$((W_UP[$k] + dt))
		fi
		if ((W_UP[$k] > LIMIT_MS)); then
			d=$((now - W_START[$k]))
			echo "$k: ${W_WHY[$k]}; for $((d / 1000)).$((d % 1000 / 100)) s, $((W_UP[$k] / 1000)) s of them with numaplaced up (limit $((LIMIT_MS / 1000)) s)" >"$CH/fail"
			echo "CHAOS-WIN $k $d ${W_UP[$k]} open" >>"$CH/windows"
			return 1
		fi
	done
	for k in "${!W_START[@]}"; do
		[ -n "${seen[$k]:-}" ] && continue
		d=$((now - W_START[$k]))
		echo "CHAOS-WIN $k $d ${W_UP[$k]}" | tee -a "$CH/windows"
		unset "W_START[$k]" "W_UP[$k]"
	done
}

chk_loop() {
	local t0 now up prev d ticks=0
	_ms
	prev=$_T
	while [ ! -e "$CH/stop" ]; do
		_ms
		t0=$_T
		CUR=() SH_N=() SH_E=() SH_W=() BE_N=() BE_E=() BE_W=() ST_N=() ST_E=() ST_W=()
		# systemd's properties every 3 s (a systemctl per second takes a
		# good part of the emulated machine); the kernel's files each second
		((ticks % 3)) || chk_systemd
		up=0
		[ "${SD[numaplaced.service.ActiveState]:-}" = active ] &&
			[ "${SD[numaplaced.service.SubState]:-}" = running ] &&
			[ -S "$SOCK" ] && _rd /sys/fs/cgroup/system.slice/numaplaced.service/cgroup.procs &&
			[ -n "$_V" ] && up=1
		chk_workloads
		chk_slice_units
		chk_others
		_ms
		now=$_T
		chk_windows "$now" "$up" $((now - prev)) || return 1
		prev=$now
		ticks=$((ticks + 1))
		echo "$ticks $((now - t0))" >"$CH/ticks"
		_ms
		now=$_T
		if (((now - t0) < 1000)); then
			printf -v d '0.%03d' $((1000 - (now - t0)))
			sleep "$d"
		fi
	done
	return 0
}
