#!/usr/bin/env bash
# bench/outcome/run.sh [--layouts "L ..."] [--rounds N] [--smoke] [--build DIR]
# bench/outcome/run.sh --host [--rounds N] [--probe-cpus N] [--reserved LIST]
#                      [--client-cpus LIST] [--io-target PATH] [--build DIR]
#
# What numaplace does to a latency-critical service on a node full of
# noise: redis (GETs from a client off its CPUs) and cyclictest, under five
# configurations interleaved round by round (bench/outcome/node.sh says
# which). Results in build/outcome/: outcome.json (per layout and
# configuration, each figure's median over the rounds with min and max),
# outcome.md (the table and the targets), the pictures (latency CDF,
# foreign time: PNG and SVG), and raw/ (every slot's record and output).
#
# In the systemd VM (the default), one boot per layout:
#   oversubscribed  2node: 8 vCPUs on the host's cores (multi-threaded
#                   TCG), the probe 2 exclusive CPUs: comparative figures
#   uncontended     2node-2cpu: 2 vCPUs, one per node, no more vCPU threads
#                   than a 2-core host has; the probe 1 exclusive CPU
#   4node           the 4-node topology (16 vCPUs), the probe 2 CPUs
# The redis client runs on the host (user-mode network), outside the VM.
# --host runs node.sh on this machine instead (root, cgroup v2, systemd as
# PID 1, numaplaced not running: a node you can disturb), with the client
# on its last CPU (--client-cpus); see README "What numaplace buys".
#
# Options:
#   --layouts "L ..."  VM layouts [uncontended: 16 minutes from a fresh
#                      clone on 2 cores; "uncontended oversubscribed" adds
#                      the comparative layout, about an hour more there]
#   --rounds N         rounds [5]
#   --smoke            one round, short windows: checks the pipeline only
#   --resume N         boot a hung guest again at the round it did not
#                      complete, up to N times per layout [3]
#   --host-rt on|off   the uncontended layout's emulator above the rest of
#                      this host: qemu's vCPU threads SCHED_RR 1, its other
#                      threads (main loop: timers, network; I/O) and the
#                      redis client SCHED_RR 2, so that the host's other
#                      work does not delay what the guest measures (the
#                      kernel's RT throttling leaves it 5 % of each CPU)
#                      [on; off with --smoke; other layouts: never]
#   --check            exit 1 unless what the kernel's files show holds (see
#                      analyze.py: IRQs, BPF against the kernel, pages);
#                      never a latency
#   --build DIR        where numaplaced and numaplace are [build]
#   --out DIR          results [build/outcome]
# Environment: OUTCOME_* (node.sh's), passed through to the node;
#   OUTCOME_SILENCE  seconds of a silent test channel that mean a hung
#                    guest [300]
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
layouts="uncontended" rounds=5 smoke=0 host=0 build=$ROOT/build out= check= resume=3 host_rt=
probe_cpus= reserved= client_cpus= io_target=

usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
die() { echo "outcome: $*" >&2; exit 2; }
while (($#)); do
	case $1 in
	--layouts) layouts=${2:-}; shift 2 ;;
	--rounds) rounds=${2:-}; shift 2 ;;
	--smoke) smoke=1; shift ;;
	--resume) resume=${2:-}; shift 2 ;;
	--check) check=--check; shift ;;
	--host-rt) host_rt=${2:-}; shift 2 ;;
	--host) host=1; shift ;;
	--build) build=${2:-}; shift 2 ;;
	--out) out=${2:-}; shift 2 ;;
	--probe-cpus) probe_cpus=${2:-}; shift 2 ;;
	--reserved) reserved=${2:-}; shift 2 ;;
	--client-cpus) client_cpus=${2:-}; shift 2 ;;
	--io-target) io_target=${2:-}; shift 2 ;;
	-h | --help) usage ;;
	*) echo "outcome: unknown argument: $1" >&2; usage ;;
	esac
done
[[ $rounds =~ ^[0-9]+$ && $rounds -gt 0 ]] || die "--rounds wants a positive integer"
[[ $resume =~ ^[0-9]+$ ]] || die "--resume wants a count (0: never boot again)"
((smoke)) && rounds=1
[[ -z $host_rt || $host_rt == on || $host_rt == off ]] || die "--host-rt wants on or off"
host_rt=${host_rt:-$( ((smoke)) && echo off || echo on)}
if [[ $host_rt == on && " $layouts " == *" uncontended "* ]]; then
	rt=$(cat /proc/sys/kernel/sched_rt_runtime_us 2>/dev/null || echo -1)
	# a vCPU thread that runs the noise takes all of its core: without
	# the kernel's RT throttling nothing else would run there
	[[ $rt =~ ^[0-9]+$ ]] || die "--host-rt on: kernel.sched_rt_runtime_us is '$rt' (RT throttling off or unknown); set it (e.g. 950000) or give --host-rt off"
	command -v chrt >/dev/null || die "--host-rt on: chrt not found (util-linux)"
fi
build=$(cd "$build" && pwd) || die "--build: no such directory"
out=${out:-$ROOT/build/outcome}
for b in numaplaced numaplace; do
	[[ -x $build/$b ]] || die "$build/$b missing (make first)"
done
command -v python3 >/dev/null || die "python3 not found (the analysis)"
mkdir -p "$out"
out=$(cd "$out" && pwd)

# the short form: every configuration once, short phases
if ((smoke)); then
	export OUTCOME_REQUESTS=${OUTCOME_REQUESTS:-200} OUTCOME_CT_SECONDS=${OUTCOME_CT_SECONDS:-1}
	export OUTCOME_WINDOW=${OUTCOME_WINDOW:-5} OUTCOME_KEYS=${OUTCOME_KEYS:-2000}
fi
export OUTCOME_ROUNDS=$rounds

if ((host)); then
	[[ -z $probe_cpus ]] || export OUTCOME_PROBE_CPUS=$probe_cpus
	[[ -z $reserved ]] || export OUTCOME_RESERVED=$reserved
	[[ -z $client_cpus ]] || export OUTCOME_CLIENT_CPUS=$client_cpus
	[[ -z $io_target ]] || export OUTCOME_IO_TARGET=$io_target
	rm -rf "$out/host"
	mkdir -p "$out/host"
	OUTCOME_LAYOUT=host OUTCOME_CLIENT=local OUTCOME_OUT="$out/host" \
		NUMAPLACED=$build/numaplaced NUMAPLACE=$build/numaplace "$HERE/node.sh"
	exec python3 "$HERE/analyze.py" $check "$out" host
fi

# ---- the VM layouts ----------------------------------------------------------------
# vm_boot LAYOUT FIRST_ROUND NAME: one boot of the layout from FIRST_ROUND
# on (lenv, vmargs, topo, pcpus, d set by the loop below); its slots are
# appended to $d/slots.jsonl, run.sh's output kept in $d/vm-NAME.out
vm_boot() {
	local layout=$1 first=$2 name=$3 sock=$d/ctl.sock cpid t0 rc log
	rm -rf "$d/scen"
	mkdir -p "$d/scen"
	# the scenario: the guest's network, then node.sh with this layout's
	# settings (the OUTCOME_* of this shell go along)
	{
		echo '#!/bin/bash'
		echo '# np-timeout: 3000'
		env "${lenv[@]}" OUTCOME_FIRST_ROUND="$first" | grep '^OUTCOME_' | sed 's/^/export /; s/=\(.*\)$/="\1"/'
		cat <<SCEN
export OUTCOME_LAYOUT=$layout OUTCOME_CLIENT=remote OUTCOME_CTL_TTY=/dev/ttyS2
export OUTCOME_PROBE_CPUS=\${OUTCOME_PROBE_CPUS:-$pcpus} OUTCOME_IO_TARGET=/dev/vda
export OUTCOME_OUT=/var/tmp/np-outcome NUMAPLACED=/usr/local/sbin/numaplaced NUMAPLACE=/usr/local/sbin/numaplace
modprobe virtio_pci && modprobe virtio_blk && modprobe virtio_net || exit 1
for i in \$(seq 50); do [ -b /dev/vda ] && [ -e /sys/class/net/eth0 ] && break; sleep 0.1; done
ip link set lo up && ip link set eth0 up && ip addr add 10.0.2.15/24 dev eth0 || exit 1
/sdtest/outcome/node.sh
rc=\$?
echo "# node.sh exit \$rc"
exit \$rc
SCEN
	} >"$d/scen/50-outcome.sh"
	rm -f "$sock"
	echo "outcome: $layout ($topo), rounds $first-$rounds; log build/vm/$name.log" >&2
	local rtw= crt=()
	if [[ $host_rt == on && $layout == uncontended ]]; then
		crt=(chrt -r 2)
		host_rt_watch "$sock" &
		rtw=$!
	fi
	OUTCOME_KEYS=${OUTCOME_KEYS:-20000} "${crt[@]}" python3 "$HERE/client.py" "$sock" "$port" "$d/raw" &
	cpid=$!
	t0=$(date +%s)
	set +e
	"$sdrun" --topology "$topo" --tcg-threads multi --scenarios "$d/scen" \
		--bin "$build/numaplaced" --bin "$build/numaplace" \
		--file "$HERE/node.sh:/sdtest/outcome/node.sh" \
		--disk 256 --hostfwd "$port:6379" --ctl "$sock" \
		--module virtio_pci --module virtio_blk --module virtio_net \
		--extra-pkgs "redis-server rt-tests stress-ng" --extra-skip "python3 lsb-base" \
		--append "loglevel=7" \
		--log-name "$name" --timeout 3600 --scenario-timeout 3000 --silence-timeout "${OUTCOME_SILENCE:-300}" --quiet "${vmargs[@]}" \
		>"$d/vm-$name.out" 2>&1
	rc=$?
	set -e
	cat "$d/vm-$name.out" >&2
	kill "$cpid" $rtw 2>/dev/null || true
	wait "$cpid" $rtw 2>/dev/null || true
	echo "outcome: $layout: VM run ${rc:+exit $rc, }$(($(date +%s) - t0)) s" >&2
	log=$ROOT/build/vm/$name.log
	((first > 1)) || sed -n 's/^\[50-outcome\] NP-OUTCOME-START //p' "$log" >"$d/start.json"
	sed -n 's/^\[50-outcome\] NP-OUTCOME //p' "$log" >>"$d/slots.jsonl"
	return "$rc"
}

# host_rt_watch SOCKET: while the qemu whose control port is SOCKET runs,
# its vCPU threads at SCHED_RR 1 and every other thread of it at 2 (threads
# it makes later are looked at each second; I/O workers inherit the main
# thread's policy)
host_rt_watch() {
	local q= t p n
	while :; do
		if [[ -z $q ]]; then
			for p in $(pgrep -x qemu-system-x86 || true); do
				grep -qF "unix:$1," "/proc/$p/cmdline" 2>/dev/null && q=$p
			done
		elif [[ ! -d /proc/$q ]]; then
			return 0
		else
			for t in /proc/"$q"/task/*; do
				n=$(cat "$t/comm" 2>/dev/null) || continue
				p=2
				[[ $n == "CPU "*"/TCG" ]] && p=1
				chrt -r -p "$p" "${t##*/}" >/dev/null 2>&1 || true # a thread gone meanwhile
			done
		fi
		sleep 1
	done
}

# next_round SLOTS FIRST NCONFIGS: the first round from FIRST on that
# SLOTS does not hold whole (NCONFIGS slots)
next_round() {
	local r=$2 n
	while :; do
		n=$(grep -c "\"round\":$r," "$1" || true)
		((n >= $3)) || break
		r=$((r + 1))
	done
	echo "$r"
}

sdrun=$ROOT/tests/vm/systemd/run.sh
port=$((16379 + $$ % 1000))
failed=() done_layouts=()
for layout in $layouts; do
	# per layout: topology, the probe's CPUs, and what cannot be there
	lenv=() vmargs=()
	case $layout in
	oversubscribed)
		topo=2node pcpus=2
		# idle is measured where it can be compared (uncontended); 500
		# GETs: under noise each takes about 20 ms of this layout's time
		lenv=(OUTCOME_CONFIGS="${OUTCOME_CONFIGS:-none cpusets isolated partition}"
			OUTCOME_REQUESTS="${OUTCOME_REQUESTS:-500}")
		;;
	uncontended)
		topo=2node-2cpu pcpus=1
		# one CPU reserved, one the probe's: a BE pool (all less
		# exclusive less reserved) would be empty, so the BE hog joins
		# the system ones; and Linux 6.1 lets no partition take all of
		# its parent's CPUs (the delegated scope would hold CPU 1 only)
		lenv=(OUTCOME_HOGS_BE=0 OUTCOME_HOGS_SYSTEM=2
			OUTCOME_CONFIGS="${OUTCOME_CONFIGS:-idle none cpusets isolated}")
		# each vCPU thread on a host core of its own: the probe's vCPU
		# has a core as an exclusive CPU has (qemu's other threads and
		# the client go where the host scheduler finds room)
		vmargs=(--pin 0:0 --pin 1:1)
		;;
	4node) topo=4node pcpus=2 ;;
	*) die "unknown layout '$layout' (oversubscribed, uncontended, 4node)" ;;
	esac
	cfgs=${OUTCOME_CONFIGS:-idle none cpusets isolated partition}
	for v in "${lenv[@]}"; do [[ $v == OUTCOME_CONFIGS=* ]] && cfgs=${v#OUTCOME_CONFIGS=}; done
	ncfg=$(wc -w <<<"$cfgs")
	d=$out/$layout
	rm -rf "$d"
	mkdir -p "$d/raw" "$d/scen"
	: >"$d/slots.jsonl"
	# a guest that hangs (multi-threaded TCG loses an IPI now and then:
	# tests/vm/README.md "Timings and TCG threading") is booted again at
	# the first round it did not complete, up to --resume times; the
	# slots of that partial round are measured again, so every round
	# holds each configuration once
	first=1 boots=0 hung=0 lrc=0
	while :; do
		boots=$((boots + 1))
		name=outcome-$layout
		if ((boots > 1)); then name+=-$boots; fi
		vm_boot "$layout" "$first" "$name" && lrc=0 || lrc=$?
		((lrc == 0)) && break
		grep -q 'was silent for' "$d/vm-$name.out" || break
		hung=$((hung + 1))
		next=$(next_round "$d/slots.jsonl" "$first" "$ncfg")
		((next > rounds)) && { lrc=0; break; }
		# drop the partial round's slots: measured again next boot
		awk -v r="$next" 'match($0, /"round":[0-9]+/) { if (substr($0, RSTART + 8, RLENGTH - 8) + 0 >= r) next } 1' \
			"$d/slots.jsonl" >"$d/slots.tmp" && mv "$d/slots.tmp" "$d/slots.jsonl"
		((boots <= resume)) || break
		echo "outcome: $layout: the guest hung; booting again at round $next (resume $boots/$resume)" >&2
		first=$next
	done
	lrt=off
	[[ $host_rt == on && $layout == uncontended ]] && lrt=on
	echo "{\"boots\": $boots, \"hung\": $hung, \"host_rt\": \"$lrt\"}" >"$d/boots.json"
	if ((lrc != 0)); then
		# a guest that hung for good (or a scenario that failed) after
		# some slots: what they measured is analysed, and the run fails
		failed+=("$layout")
		echo "outcome: $layout: the VM run failed after $(wc -l <"$d/slots.jsonl") slot(s) (see build/vm/$name.log)" >&2
		[[ -s $d/slots.jsonl ]] || continue
	fi
	done_layouts+=("$layout")
done
((${#done_layouts[@]})) || die "no layout measured anything"
arc=0
python3 "$HERE/analyze.py" $check "$out" "${done_layouts[@]}" || arc=$?
if ((${#failed[@]})); then
	echo "outcome: FAILED: the VM run of ${failed[*]} did not finish; the figures above are of the slots it completed" >&2
	exit 1
fi
exit "$arc"
