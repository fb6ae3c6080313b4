#!/usr/bin/env bash
# bench/outcome/node.sh: the outcome benchmark's part that runs on the node
# itself (the systemd VM's guest, or a real node with `run.sh --host`).
#
# Every round runs each configuration once, in the order of
# OUTCOME_CONFIGS rotated by one per round (so no configuration always
# follows the same one), each for the same measurement window:
#   idle       the probes alone: no noise, no controller
#   none       probes + noise, no controller
#   cpusets    numaplaced, the probe an LSE workload, host_isolation "off"
#              and shared_cgroups []: only workloads get cpusets, host
#              services run anywhere (what the kubelet's static policy gives)
#   isolated   numaplaced, host slices confined to the shared pool and
#              host_isolation "exclusive" (IRQs, unbound workqueues and
#              kernel threads moved off the probe's CPUs)
#   partition  isolated, and the probe an isolated cpuset partition
# The probe is redis-server (GETs from a client off its CPUs and off the
# noise) and, one after the other, cyclictest SCHED_OTHER and SCHED_FIFO,
# all in the probe's cgroup: the workload cgroup numaplaced made, or
# without a controller the service's own. The noise (identical in every
# configuration but idle): stress-ng CPU hogs in system.slice, in
# user.slice and as a BE workload; block writes with O_DSYNC (each write
# flushed) to a disk; a 2 kHz timer task; console output.
#
# Around each window the kernel's own accounting is read (/proc/schedstat,
# the probe cgroup's cpu.stat, per-CPU kernel threads' schedstat,
# /proc/interrupts, the probe's run_delay and numa_maps) beside numaplace's
# BPF run times (numaplace violations --json); each slot is one JSON line
# "NP-OUTCOME {...}" on stdout and in OUT/slots.jsonl, raw (the host's
# bench/outcome/analyze.py makes the figures).
#
# Environment (defaults in brackets):
#   OUTCOME_LAYOUT      a name for the records [host]
#   OUTCOME_ROUNDS      rounds [5]
#   OUTCOME_FIRST_ROUND the round to start at [1] (run.sh's resume after a
#                       hung VM: rounds and slots keep their numbers)
#   OUTCOME_CONFIGS     [idle none cpusets isolated partition]
#   OUTCOME_PROBE_CPUS  the probe's exclusive CPUs [2]
#   OUTCOME_RESERVED    numaplace's reserved CPUs [0]
#   OUTCOME_REQUESTS    redis GETs per slot [1000]
#   OUTCOME_CT_SECONDS  each cyclictest run [2]
#   OUTCOME_WINDOW      the measurement window, seconds [15]
#   OUTCOME_CLIENT      local (redis-benchmark here, on OUTCOME_CLIENT_CPUS,
#                       default the last CPU) or remote (a host program
#                       answers "CLIENT slot n" on OUTCOME_CTL_TTY
#                       [/dev/ttyS2] with "DONE slot rc")
#   OUTCOME_IO_TARGET   block device or file for the write noise [a file
#                       in /var/tmp]
#   OUTCOME_HOGS_SYSTEM / _USER / _BE  CPU hogs [CPUs-2 / 1 / 1, at least 1]
#   OUTCOME_NOISE       which noise runs, a list of: cpu (the hogs), timer,
#                       io, console [cpu timer io console]; fewer parts
#                       tell which one a latency comes from
#   OUTCOME_KEYS        keys loaded into redis [20000] (100-byte values)
#   NUMAPLACED NUMAPLACE  the programs [numaplaced, numaplace in PATH]
#   OUTCOME_OUT         where slots.jsonl and raw files go [/var/tmp/np-outcome]
#   OUTCOME_HANG_AT_SLOT  a test of run.sh's resume: the first boot goes
#                       silent for good before this slot (as a hung guest)
# Exit: 0 done, 1 a slot could not be set up (the reason on stderr), 2 a
# precondition is missing (not root, no cgroup v2, numaplaced running, ...).
set -uo pipefail

LAYOUT=${OUTCOME_LAYOUT:-host}
ROUNDS=${OUTCOME_ROUNDS:-5}
FIRST_ROUND=${OUTCOME_FIRST_ROUND:-1}
CONFIGS=${OUTCOME_CONFIGS:-idle none cpusets isolated partition}
PROBE_CPUS=${OUTCOME_PROBE_CPUS:-2}
RESERVED=${OUTCOME_RESERVED:-0}
REQUESTS=${OUTCOME_REQUESTS:-1000}
CT_SECONDS=${OUTCOME_CT_SECONDS:-2}
WINDOW=${OUTCOME_WINDOW:-15}
CLIENT=${OUTCOME_CLIENT:-local}
CTL_TTY=${OUTCOME_CTL_TTY:-/dev/ttyS2}
KEYS=${OUTCOME_KEYS:-20000}
NPD=${NUMAPLACED:-$(command -v numaplaced || echo numaplaced)}
NPC=${NUMAPLACE:-$(command -v numaplace || echo numaplace)}
OUT=${OUTCOME_OUT:-/var/tmp/np-outcome}
W=/run/np-outcome
PIN=/sys/fs/bpf/np-outcome
CG=/sys/fs/cgroup
SCOPE=$CG/numaplace-workloads.scope
PORT=6379
UNITS="np-outcome-probe np-outcome-sys np-outcome-user np-outcome-be np-outcome-io np-outcome-timer np-outcome-console"

say() { echo "outcome: [$(cut -d' ' -f1 /proc/uptime)] $*" >&2; }
die() { say "$*"; exit 2; }

# ---- CPU lists ------------------------------------------------------------------
expand() { # "0-2,5" -> "0 1 2 5"
	local x a b out=()
	for x in ${1//,/ }; do
		if [[ $x == *-* ]]; then
			a=${x%-*} b=${x#*-}
			while ((a <= b)); do out+=("$a"); a=$((a + 1)); done
		elif [[ -n $x ]]; then
			out+=("$x")
		fi
	done
	echo "${out[*]}"
}
join() { local IFS=,; echo "$*"; } # "1 2 3" -> "1,2,3"
minus() { # A B: the CPUs of list A not in list B, comma-separated
	local x keep=()
	for x in $(expand "$1"); do [[ " $(expand "$2") " == *" $x "* ]] || keep+=("$x"); done
	join "${keep[@]}"
}

# ---- preconditions -------------------------------------------------------------
preflight() {
	((EUID == 0)) || die "needs root (it starts units, writes cgroups, loads BPF)"
	[[ $(stat -f -c %T $CG 2>/dev/null) == cgroup2fs ]] ||
		die "$CG is not cgroup v2 (boot with systemd.unified_cgroup_hierarchy=1)"
	grep -qw cpuset $CG/cgroup.controllers || die "no cpuset controller in $CG/cgroup.controllers"
	[[ $(cat /proc/1/comm) == systemd ]] || die "PID 1 is $(cat /proc/1/comm), not systemd"
	local c
	for c in redis-server redis-cli cyclictest stress-ng jq systemd-run taskset dd "$NPD" "$NPC"; do
		command -v "$c" >/dev/null || die "$c not found (Debian: redis-server rt-tests stress-ng jq)"
	done
	[[ $CLIENT == local ]] && { command -v redis-benchmark >/dev/null || die "redis-benchmark not found (redis-tools)"; }
	[[ $CLIENT == local || $CLIENT == remote ]] || die "OUTCOME_CLIENT is local or remote, not '$CLIENT'"
	pgrep -x numaplaced >/dev/null && die "numaplaced is running: the benchmark needs a node of its own (stop it first)"
	[[ -e $SCOPE ]] && die "$SCOPE exists: a numaplace is or was running here"
	for c in $UNITS; do
		systemctl is-active --quiet "$c.service" && die "$c.service is running (a benchmark already running?)"
	done
	for c in ROUNDS FIRST_ROUND PROBE_CPUS REQUESTS CT_SECONDS WINDOW KEYS; do
		[[ ${!c} =~ ^[0-9]+$ && ${!c} -gt 0 ]] || die "OUTCOME_$c wants a positive integer, not '${!c}'"
	done
	((FIRST_ROUND <= ROUNDS)) || die "OUTCOME_FIRST_ROUND ($FIRST_ROUND) is past OUTCOME_ROUNDS ($ROUNDS)"
	for c in $CONFIGS; do
		case $c in idle | none | cpusets | isolated | partition) ;; *) die "unknown configuration '$c'" ;; esac
	done
	[[ -r /proc/schedstat ]] || say "no /proc/schedstat (CONFIG_SCHEDSTATS off): the kernel's foreign time will be null"
}

# ---- the node ---------------------------------------------------------------
node_facts() {
	ONLINE=$(cat /sys/devices/system/cpu/online)
	NCPU=$(expand "$ONLINE" | wc -w)
	if [[ $CLIENT == local ]]; then
		CLIENT_CPUS=${OUTCOME_CLIENT_CPUS:-$(expand "$ONLINE" | awk '{print $NF}')}
		NODE_CPUS=$(minus "$ONLINE" "$CLIENT_CPUS")
	else
		CLIENT_CPUS=
		NODE_CPUS=$(join $(expand "$ONLINE"))
	fi
	local n=$(expand "$NODE_CPUS" | wc -w)
	HOGS_SYSTEM=${OUTCOME_HOGS_SYSTEM:-$((n > 3 ? n - 2 : 1))}
	HOGS_USER=${OUTCOME_HOGS_USER:-1}
	HOGS_BE=${OUTCOME_HOGS_BE:-1}
	local v
	for v in HOGS_SYSTEM HOGS_USER HOGS_BE; do
		[[ ${!v} =~ ^[0-9]+$ ]] || die "OUTCOME_$v wants a count, not '${!v}'"
	done
	NOISE=${OUTCOME_NOISE:-cpu timer io console}
	for v in $NOISE; do
		[[ $v == cpu || $v == timer || $v == io || $v == console ]] ||
			die "OUTCOME_NOISE: '$v' is not a noise (cpu, timer, io, console)"
	done
	IO_TARGET=${OUTCOME_IO_TARGET:-/var/tmp/np-outcome.io}
	if [[ -b $IO_TARGET ]]; then
		IO_BLOCKS=$(($(blockdev --getsize64 "$IO_TARGET") / 4096))
	else
		IO_BLOCKS=16384 # a 64 MiB file
	fi
	((IO_BLOCKS > 256)) || die "OUTCOME_IO_TARGET $IO_TARGET is too small"
}

# ---- numaplaced -------------------------------------------------------------
config_json() { # CONFIG
	local hostiso=exclusive shared=
	case $1 in
	cpusets) hostiso=off shared='"shared_cgroups": [],' ;;
	esac
	cat <<JSON
{
  "spec_dir": "$W/specs", "state_dir": "$W/state",
  "socket": "$W/run/numaplace.sock", "run_dir": "$W/run",
  "runtime_dir": "$W/run",
  "bpf_pin_path": "$PIN", "cgroup_parent": "-.slice",
  "reconcile_period_s": 1, $shared
  "host_isolation": "$hostiso",
  "node_policy": {"cpu_policy": "static", "reserved_cpus": "$RESERVED"},
  "verify": {"enabled": "on"},
  "metrics": {"listen": ""}
}
JSON
}

# start_numaplaced CONFIG: the probe (LSE) and the BE workload as spec
# files, numaplaced as a transient unit; sets PCG, P and BECG once the
# probe's CPUs are in force (and host isolation applied where asked).
start_numaplaced() {
	local c=$1 part=
	rm -rf "$W/specs" "$W/state" "$W/run"
	mkdir -p "$W/specs" "$W/state" "$W/run"
	config_json "$c" >"$W/numaplace.json"
	[[ $c == partition ]] && part=', "isolation": "partition"'
	printf '{"name": "probe", "cgroup": "probe", "qos": "LSE"%s,\n "containers": [{"name": "main", "cpu": "%s", "memory": "256Mi"}]}\n' \
		"$part" "$PROBE_CPUS" >"$W/specs/probe.json"
	((HOGS_BE > 0)) &&
		printf '{"name": "be", "cgroup": "be", "qos": "BE", "containers": [{"name": "main"}]}\n' >"$W/specs/be.json"
	"$NPD" --check-config --config "$W/numaplace.json" >"$W/check-config.txt" 2>&1 ||
		{ say "numaplaced --check-config: $(tail -n 3 "$W/check-config.txt")"; return 1; }
	systemd-run --quiet --unit=np-outcome-numaplaced -p Type=notify -p WatchdogSec=60 \
		-p TimeoutStopSec=30 "$NPD" --config "$W/numaplace.json" ||
		{ say "numaplaced did not start: $(journalctl -u np-outcome-numaplaced --no-pager -n 5)"; return 1; }
	PCG=$SCOPE/probe BECG=
	((HOGS_BE > 0)) && BECG=$SCOPE/be
	local until=$((SECONDS + 120))
	while ((SECONDS < until)); do
		if [[ -f $W/run/workloads/probe.json && -f $PCG/cpuset.cpus.effective ]]; then
			P=$(sed -n 's/^ *"cpuset": *"\([0-9,-]*\)".*/\1/p' "$W/run/workloads/probe.json" | head -n 1)
			if [[ $(expand "$(cat "$PCG/cpuset.cpus.effective")") == "$(expand "$P")" ]] && placed_as "$c"; then
				return 0
			fi
		fi
		sleep 0.1
	done
	say "$c: the probe's CPUs not in force after 120 s: $(journalctl -u np-outcome-numaplaced --no-pager -n 8)"
	return 1
}

# slice_cpus [SLICE]: a host slice's effective CPUs (every online CPU
# while no unit asked for a cpuset: the controller is then not enabled)
slice_cpus() {
	cat "$CG/${1:-system.slice}/cpuset.cpus.effective" 2>/dev/null || echo "$ONLINE"
}

# placed_as CONFIG: what the configuration asks for is in force, read in
# the kernel's files: host isolation's record, the host slices' effective
# CPUs off the probe's, the partition.
placed_as() {
	local sl x
	[[ $1 == cpusets ]] && return 0
	[[ -f $W/run/hostiso.json ]] || return 1
	for sl in system.slice user.slice init.scope; do
		for x in $(expand "$(slice_cpus $sl)"); do
			[[ ",$P," == *",$x,"* ]] && return 1
		done
	done
	[[ $1 == isolated || $(cat "$PCG/cpuset.cpus.partition" 2>/dev/null) == isolated ]]
}

stop_numaplaced() {
	systemctl stop np-outcome-numaplaced.service 2>/dev/null
	systemctl reset-failed np-outcome-numaplaced.service 2>/dev/null
	systemctl stop numaplace-workloads.scope 2>/dev/null
	# a clean stop gives back what it changed: the host slices get every
	# CPU again, IRQs and kernel threads their affinity
	local eff until=$((SECONDS + 30))
	while :; do
		eff=$(slice_cpus)
		[[ $(expand "$eff") == "$(expand "$ONLINE")" && ! -e $SCOPE ]] && break
		((SECONDS > until)) && break
		sleep 0.1
	done
	[[ $(expand "$eff") == "$(expand "$ONLINE")" ]] ||
		{ say "after numaplaced stopped, system.slice has CPUs $eff, not $ONLINE"; return 1; }
	rm -rf "$PIN"
}

# ---- probe and noise ------------------------------------------------------------
# The helpers units run, as files: systemd expands $NAME in a command
# line, so no shell text goes through systemd-run.
#   join.sh CGROUP CMD...  moves itself into CGROUP ("-": stays), execs CMD
#   io.sh                  O_DSYNC writes of 16 blocks at random places
#   console.sh             50 lines a second on the console
write_helpers() {
	cat >"$W/join.sh" <<'SH'
#!/bin/bash
cg=$1
shift
if [[ $cg != - ]]; then echo $$ >"$cg/cgroup.procs" || exit 1; fi
exec "$@"
SH
	cat >"$W/io.sh" <<SH
#!/bin/bash
trap 'exit 0' INT TERM
while :; do
	dd if=/dev/zero of=$IO_TARGET bs=4k count=16 seek=\$((RANDOM * 7 % ($IO_BLOCKS - 16))) oflag=dsync conv=notrunc status=none
done
SH
	cat >"$W/console.sh" <<'SH'
#!/bin/bash
trap 'exit 0' INT TERM
while :; do
	echo "np-outcome console noise $SECONDS .................................................." >/dev/console
	sleep 0.02
done
SH
	# the probe's process: redis-server as its child, and cyclictest
	# when the driver asks (a line "ct POLICY FILE" in probe.cmd, answered
	# by a line in probe.ack), so that every probe process starts inside
	# the probe's cgroup, on its CPUs
	cat >"$W/probe.sh" <<SH
#!/bin/bash
redis-server --port $PORT --bind 0.0.0.0 --protected-mode no --save '' --appendonly no \\
	--io-threads 1 --logfile $W/redis.log &
echo \$! >$W/redis.pid
trap 'kill \$(cat $W/redis.pid) 2>/dev/null; wait; exit 0' INT TERM
exec 8<>$W/probe.cmd 9<>$W/probe.ack
while read -r cmd pol file <&8; do
	[[ \$cmd == ct ]] || continue
	args=(--policy other)
	[[ \$pol == fifo ]] && args=(--policy fifo -p 95)
	cyclictest -m -q -D $CT_SECONDS -i 1000 -t 1 "\${args[@]}" -h 100000 --json="\$file" >/dev/null 2>&1
	echo "ct \$? \$file" >&9
done
SH
	chmod 0755 "$W/join.sh" "$W/io.sh" "$W/console.sh" "$W/probe.sh"
}

# unit NAME SLICE CGROUP CMD...: a transient service whose process first
# moves itself into CGROUP (when not empty), then execs CMD.
unit() {
	local name=$1 slice=$2 cg=${3:--}
	shift 3
	local props=(-p KillSignal=SIGINT -p TimeoutStopSec=60 -p WorkingDirectory=/var/tmp --slice="$slice")
	[[ -n $CLIENT_CPUS ]] && props+=(-p AllowedCPUs="$NODE_CPUS")
	systemd-run --quiet --unit="$name" "${props[@]}" "$W/join.sh" "$cg" "$@"
}

start_probe() {
	local cg=$1 i
	rm -f "$W/probe.cmd" "$W/probe.ack" "$W/redis.pid" "$W/redis.log"
	mkfifo "$W/probe.cmd" "$W/probe.ack"
	unit np-outcome-probe system.slice "$cg" "$W/probe.sh"
	exec 5<>"$W/probe.cmd" 6<>"$W/probe.ack"
	local until=$((SECONDS + 60))
	until redis-cli -p $PORT ping >/dev/null 2>&1 || ((SECONDS > until)); do sleep 0.1; done
	RPID=$(cat "$W/redis.pid" 2>/dev/null)
	[[ -n $RPID && -d /proc/$RPID ]] || { say "redis-server did not start: $(tail -n 3 "$W/redis.log")"; return 1; }
	# the working set: the keys redis-benchmark -r asks for (key:%012d)
	awk -v n="$KEYS" 'BEGIN { v = sprintf("%0100d", 7);
		for (i = 0; i < n; i++) printf "*3\r\n$3\r\nSET\r\n$16\r\nkey:%012d\r\n$100\r\n%s\r\n", i, v }' |
		redis-cli -p $PORT --pipe >"$W/populate.txt" 2>&1 ||
		{ say "loading redis: $(tail -n 2 "$W/populate.txt")"; return 1; }
}

start_noise() {
	local sys=$1 be=$2
	local sn=(stress-ng --cpu-method int64 --metrics-brief --timeout 3600)
	# started together: one after the other, the later ones would start
	# on a node the first ones already load
	if [[ " $NOISE " == *" cpu "* ]]; then
		unit np-outcome-sys system.slice "" "${sn[@]}" --cpu "$HOGS_SYSTEM" --yaml "$W/noise-sys.yaml" &
		unit np-outcome-user user.slice "" "${sn[@]}" --cpu "$HOGS_USER" --yaml "$W/noise-user.yaml" &
		((HOGS_BE > 0)) && unit np-outcome-be system.slice "$be" "${sn[@]}" --cpu "$HOGS_BE" --yaml "$W/noise-be.yaml" &
	fi
	[[ " $NOISE " == *" timer "* ]] && unit np-outcome-timer system.slice "" stress-ng --timer 1 --timer-freq 2000 --timeout 3600 &
	[[ " $NOISE " == *" io "* ]] && unit np-outcome-io system.slice "" "$W/io.sh" &
	[[ " $NOISE " == *" console "* ]] && unit np-outcome-console system.slice "" "$W/console.sh" &
	wait
}

stop_units() {
	local u units=()
	for u in $UNITS; do units+=("$u.service"); done
	systemctl stop "${units[@]}" 2>/dev/null
	systemctl reset-failed "${units[@]}" 2>/dev/null
}

# noise_json: each CPU hog unit's bogo ops and run time (stress-ng's
# YAML, written when SIGINT stopped it)
noise_json() {
	local f n out=
	local one
	for n in sys user be; do
		f=$W/noise-$n.yaml
		[[ -s $f ]] || continue
		# a hog that did not stop in time (SIGKILL) wrote no metrics
		one=$(awk -v n="$n" '$1 == "bogo-ops:" { o = $2 } $1 == "wall-clock-time:" { t = $2 }
			END { if (o != "" && t != "") printf "\"%s\": {\"ops\": %s, \"wall_s\": %s}", n, o, t }' "$f")
		[[ -n $one ]] && out+="${out:+, }$one"
	done
	echo "{$out}"
}

# ---- the kernel's accounting --------------------------------------------------
# snapshot: one JSON object of what the kernel says now about the probe's
# CPUs P (all the probe may use, when no controller confines it) and the
# probe's cgroup PCG.
snapshot() {
	local pl t sched= usage= irq bpf=null rd f scan= tid pin= lse= kind k name allowed
	pl=$(join $(expand "$P"))
	# which threads outside the probe may run on P: allowed there only
	# ("pinned": per-CPU kernel threads, anything pinned) or there and
	# elsewhere ("loose"). Not when P is every CPU (no controller). This
	# scan is slow; their run times are read below with the rest.
	if [[ $pl != "$(join $(expand "$ONLINE"))" ]]; then
		scan=$(cat /proc/[0-9]*/task/[0-9]*/status 2>/dev/null |
			awk -v P="$pl" -v T=",$(tr '\n' ',' <"$PCG/cgroup.threads" 2>/dev/null)" '
			BEGIN { n = split(P, a, ","); for (i = 1; i <= n; i++) w[a[i]] = 1 }
			function where(list,   n, r, i, ab, x, y, j, all, any) {
				n = split(list, r, ","); all = 1; any = 0
				for (i = 1; i <= n; i++) {
					if (split(r[i], ab, "-") == 2) { x = ab[1]; y = ab[2] } else { x = y = r[i] }
					for (j = x + 0; j <= y + 0; j++) { if (j in w) any = 1; else all = 0 }
				}
				return any ? (all ? 1 : 2) : 0
			}
			$1 == "Name:" { name = $2 } $1 == "Pid:" { pid = $2 } $1 == "PPid:" { pp = $2 }
			$1 == "Cpus_allowed_list:" && index(T, "," pid ",") == 0 {
				k = where($2)
				# kernel threads are children of kthreadd (pid 2)
				if (k) print pid, (k == 1 ? "pinned" : "loose"), ((pp == 2 || pid == 2) ? 1 : 0), $2, name }')
	fi
	# numaplace's BPF run times first, then at once (shell builtins, no
	# process started in between) the kernel's: the two are compared over
	# the same interval
	if [[ -n ${BPF:-} ]]; then
		bpf=$("$NPC" violations --pin-path "$PIN" --json probe 2>/dev/null)
	fi
	t=$(date +%s%N)
	if [[ -r /proc/schedstat ]]; then
		while read -r -a f; do
			[[ ${f[0]} == cpu* && ",$pl," == *",${f[0]#cpu},"* ]] && sched+="${sched:+, }\"${f[0]#cpu}\": ${f[7]}"
		done </proc/schedstat
		sched="{$sched}"
	else
		sched=null
	fi
	while read -r -a f; do
		[[ ${f[0]} == usage_usec ]] && usage=${f[1]}
	done <"$PCG/cpu.stat"
	while read -r tid kind k allowed name; do
		[[ -n $tid ]] || continue
		read -r -a f 2>/dev/null <"/proc/$tid/schedstat" || continue
		if [[ $kind == pinned ]]; then
			pin+="${pin:+, }\"$tid\": [\"$name\", \"$allowed\", ${f[0]}, $k]"
		else
			lse+="${lse:+, }\"$tid\": [\"$name\", \"$allowed\", ${f[0]}, $k]"
		fi
	done <<<"$scan"
	[[ $bpf != null ]] && { bpf=$(jq -c '.workloads[0].cpus // null' <<<"$bpf" 2>/dev/null); [[ -n $bpf ]] || bpf=null; }
	irq=$(awk -v P="$pl" 'NR == 1 { for (i = 1; i <= NF; i++) col[i] = substr($i, 4); next }
		$1 ~ /^[0-9]+:$/ { n = 0; for (i = 2; i <= NF; i++) { if ($i !~ /^[0-9]+$/) break; if (index("," P ",", "," col[i - 1] ",")) n += $i }
			name = $NF; sub(":", "", $1); printf "%s\"%s\": [%.0f, \"%s\"]", s, $1, n, name; s = ", " }' /proc/interrupts)
	rd=$(cat /proc/"$RPID"/task/*/schedstat 2>/dev/null | awk '{ e += $1; d += $2 } END { printf "[%.0f, %.0f]", e, d }')
	if [[ -n $scan || $pl != "$(join $(expand "$ONLINE"))" ]]; then pin="{$pin}" lse="{$lse}"; else pin=null lse=null; fi
	printf '{"t_ns": %s, "rq_cpu_ns": %s, "probe_usage_us": %s, "pinned": %s, "loose": %s, "irqs": {%s}, "bpf": %s, "redis_exec_delay_ns": %s}' \
		"$t" "$sched" "${usage:-null}" "$pin" "$lse" "$irq" "$bpf" "$rd"
}

# numa_json: the probe's anonymous pages per node (numa_maps: mappings
# that are not files), and the node of the CPU it last ran on
numa_json() {
	local cpu node
	cpu=$(awk '{ print $39 }' /proc/"$RPID"/stat 2>/dev/null)
	node=$(basename "$(ls -d /sys/devices/system/cpu/cpu"$cpu"/node* 2>/dev/null | head -n 1)" | tr -dc 0-9)
	awk -v cpu="$cpu" -v node="${node:-0}" '!/file=/ { for (i = 1; i <= NF; i++) if ($i ~ /^N[0-9]+=/) { split(substr($i, 2), x, "="); p[x[1]] += x[2] } }
		END { printf "{\"last_cpu\": %s, \"last_cpu_node\": %s, \"anon_pages\": {", cpu + 0, node; for (n in p) { printf "%s\"%s\": %.0f", s, n, p[n]; s = ", " } printf "}}" }' \
		/proc/"$RPID"/numa_maps 2>/dev/null || echo null
}

# irqs_managed LIST: the lines of LIST the kernel does not let anyone move
# (writing their own affinity back fails: managed, or the timer)
irqs_managed() {
	local i out=()
	for i in $1; do
		[[ -w /proc/irq/$i/smp_affinity_list ]] || continue
		cat /proc/irq/"$i"/smp_affinity_list >/proc/irq/"$i"/smp_affinity_list 2>/dev/null || out+=("$i")
	done
	echo "[$(join "${out[@]}")]"
}

# ---- the probes ------------------------------------------------------------------
# client_warm SLOT: a few requests along the client's path before the
# window (an IRQ moved by host isolation still fires once where it was:
# x86 moves it at its next interrupt)
client_warm() {
	local k=$1 line i
	if [[ $CLIENT == remote ]]; then
		echo "WARM $k" >&7
		while read -r -t 300 line <&7; do
			[[ ${line%$'\r'} == "WARMED $k" ]] && return 0
		done
		say "no answer from the host's client to WARM $k"
		return 1
	fi
	for i in 1 2 3 4 5 6 7 8; do taskset -c "$CLIENT_CPUS" redis-cli -p $PORT ping >/dev/null; done
}

redis_phase() { # SLOT
	local k=$1 line rc
	if [[ $CLIENT == remote ]]; then
		echo "CLIENT $k $REQUESTS" >&7
		while read -r -t 1200 line <&7; do
			line=${line%$'\r'}
			[[ $line == "DONE $k "* ]] && { rc=${line##* }; return "$rc"; }
		done
		say "no answer from the host's client for slot $k"
		return 1
	fi
	nice -n "$((-DRIVER_NICE))" taskset -c "$CLIENT_CPUS" redis-benchmark -p $PORT -n "$REQUESTS" -c 1 -t get -r "$KEYS" \
		--precision 3 >"$OUT/raw/$k.redis.txt" 2>&1
}

# cyclictest_phase POLICY FILE: the probe's process runs cyclictest
cyclictest_phase() {
	local ack
	rm -f "$2"
	echo "ct $1 $2" >&5
	read -r -t $((CT_SECONDS + 120)) ack <&6 || { say "no cyclictest answer from the probe"; return 1; }
	[[ $ack == "ct 0 $2" ]] || say "cyclictest $1: $ack"
}

# ct_json FILE: cyclictest's result, reduced
ct_json() {
	jq -c '{max: ([.thread[].max] | max), min: ([.thread[].min] | min), avg: ([.thread[].avg] | add / length),
		hist: ([.thread[].histogram] | add), cycles: ([.thread[].cycles] | add)}' "$1" 2>/dev/null || echo null
}

# ---- one slot ------------------------------------------------------------------
slot() { # SLOT CONFIG ROUND
	local k=$1 c=$2 r=$3 t0 t1 tr to left phases a0 a1 ct_other ct_fifo redis_rc numa noise managed over=0 setup_s
	t0=$(date +%s%N)
	PCG= BECG= P=$NODE_CPUS BPF=
	case $c in
	cpusets | isolated | partition)
		start_numaplaced "$c" || return 1
		BPF=1
		;;
	esac
	if [[ -z $PCG ]]; then
		# no controller: the probe's cgroup is its service's own
		PCG=$CG/system.slice/np-outcome-probe.service
		start_probe "" || return 1
	else
		start_probe "$PCG" || return 1
	fi
	say "slot $k: probe on $P ($PCG)"
	[[ $c != idle ]] && start_noise "$c" "$BECG"
	client_warm "$k" || return 1
	sleep 1
	setup_s=$(( ($(date +%s%N) - t0) / 1000000 ))
	a0=$(snapshot)
	# the host's client samples the emulator's threads at the window's ends
	[[ $CLIENT == remote ]] && echo "HOST $k 0" >&7
	t0=$(date +%s%N)
	redis_phase "$k"
	redis_rc=$?
	tr=$(date +%s%N)
	cyclictest_phase other "$W/ct-other.json"
	to=$(date +%s%N)
	cyclictest_phase fifo "$W/ct-fifo.json"
	t1=$(date +%s%N)
	phases="[$(((tr - t0) / 1000000)), $(((to - tr) / 1000000)), $(((t1 - to) / 1000000))]"
	left=$((WINDOW * 1000 - (t1 - t0) / 1000000))
	if ((left > 0)); then sleep "$((left / 1000)).$(printf %03d $((left % 1000)))"; else over=$((-left)); fi
	[[ $CLIENT == remote ]] && echo "HOST $k 1" >&7
	a1=$(snapshot)
	say "slot $k: window done (phases ${phases} ms, over ${over} ms)"
	numa=$(numa_json)
	managed=$(irqs_managed "$(jq -r '.irqs | to_entries[] | select(.value[0] > 0) | .key' <<<"$a1" | tr '\n' ' ')")
	stop_units
	exec 5>&- 6>&-
	ct_other=$(ct_json "$W/ct-other.json")
	ct_fifo=$(ct_json "$W/ct-fifo.json")
	noise=$(noise_json)
	rm -f "$W"/noise-*.yaml
	if [[ -n $BPF ]]; then
		journalctl -u np-outcome-numaplaced --no-pager -o short-monotonic >"$OUT/raw/$k.numaplaced.log" 2>&1
		stop_numaplaced || return 1
	fi
	local rec
	rec=$(jq -cn --arg layout "$LAYOUT" --arg config "$c" --argjson round "$r" --argjson slot "$k" \
		--arg cpus "$P" --arg node_cpus "$NODE_CPUS" --argjson window "$WINDOW" --argjson overrun_ms "$over" --argjson phases_ms "$phases" \
		--argjson setup_ms "$setup_s" --argjson redis_rc "$redis_rc" --argjson requests "$REQUESTS" \
		--argjson a0 "$a0" --argjson a1 "$a1" --argjson numa "$numa" --argjson noise "$noise" \
		--argjson ct_other "$ct_other" --argjson ct_fifo "$ct_fifo" --argjson managed "$managed" \
		--arg client "$CLIENT" \
		'{layout: $layout, config: $config, round: $round, slot: $slot, probe_cpus: $cpus,
		  node_cpus: $node_cpus, window_s: $window, overrun_ms: $overrun_ms, phases_ms: $phases_ms, setup_ms: $setup_ms,
		  client: $client, redis_rc: $redis_rc, requests: $requests, a0: $a0, a1: $a1, numa: $numa,
		  noise: $noise, cyclictest: {other: $ct_other, fifo: $ct_fifo}, irqs_managed: $managed}' 2>"$W/jq.err") || {
		local part
		say "slot $k: could not make its record ($(head -c 300 "$W/jq.err"))"
		for part in phases a0 a1 numa noise managed ct_other ct_fifo; do
			jq -e . >/dev/null 2>&1 <<<"${!part}" || say "  $part is not JSON: ${!part:0:600}"
		done
		return 1
	}
	[[ $CLIENT == local ]] && rec=$(jq -c --rawfile r "$OUT/raw/$k.redis.txt" '. + {redis_out: $r}' <<<"$rec")
	echo "$rec" >>"$OUT/slots.jsonl"
	echo "NP-OUTCOME $rec"
}

slot_failed() { # SLOT CONFIG: what the units said, then nothing left running
	local u
	say "slot $1 ($2) failed; the units' last lines:"
	for u in np-outcome-numaplaced $UNITS; do
		journalctl -u "$u" --no-pager -n 6 -o cat 2>/dev/null | sed "s/^/  $u: /" >&2
	done
	stop_units
	stop_numaplaced
}

cleanup() {
	stop_units
	systemctl stop np-outcome-numaplaced.service 2>/dev/null
	systemctl reset-failed np-outcome-numaplaced.service 2>/dev/null
	systemctl stop numaplace-workloads.scope 2>/dev/null
	rm -rf "$PIN" "$W"
	[[ -f $IO_TARGET && $IO_TARGET == /var/tmp/np-outcome.io ]] && rm -f "$IO_TARGET"
}

main() {
	preflight
	# the driver at nice -10, so that the noise does not stretch its own
	# steps; the probes and the client it starts run at nice 0
	renice -n -10 -p $$ >/dev/null
	DRIVER_NICE=$(($(awk '{ print $19 }' /proc/$$/stat)))
	node_facts
	mkdir -p "$W" "$OUT/raw"
	write_helpers
	: >"$OUT/slots.jsonl"
	trap cleanup EXIT
	trap 'exit 130' INT TERM
	# host slices the configurations confine exist before numaplaced
	# starts (a node without logins has no user.slice yet)
	systemctl start user.slice
	if [[ ! -b $IO_TARGET ]]; then
		dd if=/dev/zero of="$IO_TARGET" bs=4k count="$IO_BLOCKS" status=none || die "cannot write $IO_TARGET"
	fi
	if [[ $CLIENT == remote ]]; then
		stty -F "$CTL_TTY" raw -echo 115200 2>/dev/null
		exec 7<>"$CTL_TTY" || die "cannot open $CTL_TTY"
	fi
	local cfgs r k i c
	read -r -a cfgs <<<"$CONFIGS"
	k=$(((FIRST_ROUND - 1) * ${#cfgs[@]}))
	say "layout $LAYOUT: $ROUNDS round(s) of ${cfgs[*]}; CPUs $ONLINE (node $NODE_CPUS${CLIENT_CPUS:+, client $CLIENT_CPUS}); hogs $HOGS_SYSTEM system, $HOGS_USER user, $HOGS_BE BE; noise $NOISE; window ${WINDOW}s"
	echo "NP-OUTCOME-START $(jq -cn --arg l "$LAYOUT" --arg on "$ONLINE" --arg nc "$NODE_CPUS" --arg cc "$CLIENT_CPUS" \
		--arg kernel "$(uname -r)" --argjson rounds "$ROUNDS" --arg configs "$CONFIGS" \
		--argjson hs "$HOGS_SYSTEM" --argjson hu "$HOGS_USER" --argjson hb "$HOGS_BE" --arg io "$IO_TARGET" --arg noise "$NOISE" \
		--arg nodes "$(for n in /sys/devices/system/node/node[0-9]*; do echo "${n##*node}:$(cat "$n"/cpulist)"; done | tr '\n' ' ')" \
		'{layout: $l, online: $on, node_cpus: $nc, client_cpus: $cc, kernel: $kernel, rounds: $rounds,
		  configs: $configs, hogs: {system: $hs, user: $hu, be: $hb}, io_target: $io, noise: $noise, nodes: $nodes}')"
	for ((r = FIRST_ROUND; r <= ROUNDS; r++)); do
		for ((i = 0; i < ${#cfgs[@]}; i++)); do
			c=${cfgs[(i + r - 1) % ${#cfgs[@]}]}
			k=$((k + 1))
			if [[ $k == "${OUTCOME_HANG_AT_SLOT:-}" && $FIRST_ROUND == 1 ]]; then
				sleep infinity
			fi
			say "round $r/$ROUNDS: $c (slot $k)"
			slot "$k" "$c" "$r" || { slot_failed "$k" "$c"; exit 1; }
		done
	done
	say "done: $k slots in $OUT/slots.jsonl"
}

main "$@"
