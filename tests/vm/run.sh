#!/usr/bin/env bash
# run.sh --topology 2node|4node [--scenarios DIR] [--bin PATH]...
#        [--timeout SECONDS] [--keep-log FILE] [options]
#
# Boot Debian's 6.1 kernel under qemu (TCG, no KVM) with an emulated NUMA
# topology and a busybox initramfs, run the scenarios inside, and report.
# Exit status: 0 only if the guest printed NP-DONE with 0 failures and at
# least one scenario passed; 1 otherwise; 2 on a usage error.
#
# Options:
#   --topology T          2node (2 sockets x 2 cores x 2 threads, 8 CPUs,
#                         node0=0-3 node1=4-7) or 4node (2 sockets x 4 cores
#                         x 2 threads, 16 CPUs, 4 nodes of 4 CPUs)
#   --scenarios DIR       scenario scripts (default tests/vm/scenarios)
#   --bin PATH            binary to put in /bin (repeatable; libs via ldd)
#   --file SRC:DEST       extra file or directory for the initramfs
#   --module NAME         kernel module (with its dependencies) to include,
#                         from the Debian package unless --modules-from DIR
#   --only GLOB[,GLOB]    run only matching scenarios (np.only=)
#   --timeout SECONDS     hard limit for the whole VM run (default 600)
#   --scenario-timeout S  limit for each scenario inside (default 300)
#   --boot-timeout S      if the guest's init hasn't started S seconds after
#                         qemu did, kill it and boot again (default 120;
#                         env NP_VM_BOOT_TIMEOUT)
#   --boot-attempts N     boots to try before giving up (default 3; env
#                         NP_VM_BOOT_ATTEMPTS); all within --timeout
#   --tcg-threads single|multi  qemu -accel tcg,thread=... (default single:
#                         faster and never hung on a 2-core host, see
#                         README; env NP_VM_TCG_THREADS)
#   --keep-log FILE       also copy the console log to FILE
#   --append ARGS         extra kernel command line arguments
#   --kernel PATH         use this vmlinuz instead of the Debian 6.1 one
#   --quiet               don't stream the console, print only results
#   --shell               interactive: run the scenarios, then give a shell
#                         on the console (quit qemu with Ctrl-A x)
# The console log of the last run of each topology is kept in
# build/vm/last-<topology>.log.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
VMDIR=$ROOT/build/vm

usage() {
	sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//' >&2
	exit 2
}
die() { echo "run.sh: $*" >&2; exit 2; }

topo=
scen=$HERE/scenarios
hard_timeout=600
scen_timeout=300
boot_timeout=${NP_VM_BOOT_TIMEOUT:-120}
boot_attempts=${NP_VM_BOOT_ATTEMPTS:-3}
tcg_threads=${NP_VM_TCG_THREADS:-single}
keep_log=
append=
kernel=
only=
quiet=0
shell=0
mkargs=()
while (($#)); do
	case $1 in
	--topology) topo=${2:-}; shift 2 ;;
	--scenarios) scen=${2:-}; shift 2 ;;
	--bin | --file | --module | --modules-from) mkargs+=("$1" "${2:-}"); shift 2 ;;
	--only) only=${2:-}; shift 2 ;;
	--timeout) hard_timeout=${2:-}; shift 2 ;;
	--scenario-timeout) scen_timeout=${2:-}; shift 2 ;;
	--boot-timeout) boot_timeout=${2:-}; shift 2 ;;
	--boot-attempts) boot_attempts=${2:-}; shift 2 ;;
	--tcg-threads) tcg_threads=${2:-}; shift 2 ;;
	--keep-log) keep_log=${2:-}; shift 2 ;;
	--append) append=${2:-}; shift 2 ;;
	--kernel) kernel=${2:-}; shift 2 ;;
	--quiet) quiet=1; shift ;;
	--shell) shell=1; shift ;;
	-h | --help) usage ;;
	*) echo "run.sh: unknown argument: $1" >&2; usage ;;
	esac
done
[[ $hard_timeout =~ ^[0-9]+$ && $hard_timeout -gt 0 ]] || die "--timeout wants seconds"
[[ $scen_timeout =~ ^[0-9]+$ && $scen_timeout -gt 0 ]] || die "--scenario-timeout wants seconds"
[[ $boot_timeout =~ ^[0-9]+$ && $boot_timeout -gt 0 ]] || die "--boot-timeout wants seconds"
[[ $boot_attempts =~ ^[0-9]+$ && $boot_attempts -gt 0 ]] || die "--boot-attempts wants a count"
[[ $tcg_threads == single || $tcg_threads == multi ]] || die "--tcg-threads wants single or multi"
[[ -d $scen ]] || die "--scenarios $scen: not a directory"

# ---- topologies --------------------------------------------------------------
# shellcheck source=topology.sh
. "$HERE/topology.sh"
[[ -n $topo ]] || die "--topology is required (2node or 4node)"
np_vm_topology "$topo" || die "unknown topology '$topo' (2node or 4node)"

# ---- prepare -------------------------------------------------------------------
"$HERE/deps.sh"
if [[ -z $kernel ]]; then
	kernel=$("$HERE/fetch-kernel.sh")
fi
[[ -f $kernel ]] || die "kernel $kernel not found"

mkdir -p "$VMDIR"
run=$(mktemp -d "$VMDIR/run-$topo.XXXXXX")
qpid=
tpid=
# shellcheck disable=SC2317 # invoked via trap
cleanup() {
	[[ -n $qpid ]] && kill "$qpid" 2>/dev/null
	[[ -n $tpid ]] && kill "$tpid" 2>/dev/null
	rm -rf "$run"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --module without --modules-from: take the modules of the kernel's package.
if [[ " ${mkargs[*]} " == *" --module "* && " ${mkargs[*]} " != *" --modules-from "* ]]; then
	mods=$(dirname "$kernel")/modules
	[[ -d $mods ]] || die "--module: no $mods next to $kernel; pass --modules-from DIR"
	mkargs+=(--modules-from "$mods")
fi
"$HERE/mkinitramfs.sh" --out "$run/initrd.gz" --scenarios "$scen" "${mkargs[@]}" >/dev/null

cmdline="console=ttyS0 quiet panic=-1 np.topo=$topo np.nodes=$nnodes np.cpus=$ncpus"
cmdline+=" np.smt=$smt np.nodecpus=$nodecpus_param np.dist=$dist np.timeout=$scen_timeout"
[[ -n $only ]] && cmdline+=" np.only=$only"
((shell)) && cmdline+=" np.shell=1"
[[ -n $append ]] && cmdline+=" $append"

# shellcheck disable=SC2054 # the commas belong to qemu's option syntax
qemu=(qemu-system-x86_64
	-accel "tcg,thread=$tcg_threads" -cpu Skylake-Server
	-m 2048 -smp "$smp" "${numa[@]}"
	-kernel "$kernel" -initrd "$run/initrd.gz" -append "$cmdline"
	-no-reboot)

if ((shell)); then
	echo "run.sh: interactive $topo VM; quit with Ctrl-A x" >&2
	"${qemu[@]}" -nographic
	exit $?
fi

# ---- boot ------------------------------------------------------------------------
log=$run/console.log
echo "run.sh: booting $topo ($ncpus CPUs, $nnodes nodes, tcg thread=$tcg_threads, kernel $(basename "$(readlink -f "$kernel")")), timeout ${hard_timeout}s" >&2
start=$(date +%s.%N)
deadline=$(($(date +%s) + hard_timeout))
attempt=0
while :; do
	attempt=$((attempt + 1))
	: >"$log"
	remaining=$((deadline - $(date +%s)))
	if ((remaining <= 0)); then
		qrc=124
		break
	fi
	# No stdin, no display, console straight to a file: works without a TTY.
	timeout -k 10 "$remaining" "${qemu[@]}" \
		-display none -monitor none -serial "file:$log" \
		</dev/null >"$run/qemu.out" 2>&1 &
	qpid=$!
	if ((!quiet)); then
		tail -n +1 --pid="$qpid" -f "$log" | tr -d '\r' &
		tpid=$!
	fi
	# Boot watchdog: TCG with many vCPUs on few host cores occasionally
	# stalls during early boot; if the guest's init hasn't said NP-BOOT in
	# time, kill it and boot again.
	t0=$(date +%s)
	booted=0
	stalled=0
	while kill -0 "$qpid" 2>/dev/null; do
		if ((!booted)); then
			if grep -q '^NP-BOOT' "$log"; then
				booted=1
			elif (($(date +%s) - t0 >= boot_timeout)); then
				stalled=1
				kill "$qpid" 2>/dev/null || true
				break
			fi
		fi
		sleep 0.5
	done
	set +e
	wait "$qpid"
	qrc=$?
	set -e
	qpid=
	if [[ -n $tpid ]]; then
		wait "$tpid" 2>/dev/null || true
		tpid=
	fi
	((stalled)) || break
	tr -d '\r' <"$log" >"$VMDIR/stalled-$topo.$attempt.log"
	echo "run.sh: $topo: no NP-BOOT after ${boot_timeout}s (attempt $attempt/$boot_attempts," \
		"console in build/vm/stalled-$topo.$attempt.log)" >&2
	((attempt < boot_attempts)) || break
	echo "run.sh: $topo: booting again" >&2
done
wall=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN {printf "%.1f", e - s}')

tr -d '\r' <"$log" >"$VMDIR/last-$topo.log"
[[ -n $keep_log ]] && cp "$VMDIR/last-$topo.log" "$keep_log"
clog=$VMDIR/last-$topo.log

# qemu's own messages, minus TCG's list of CPU features it can't emulate.
if grep -v "TCG doesn't support requested feature" "$run/qemu.out" | grep -q .; then
	echo "run.sh: qemu said:" >&2
	grep -v "TCG doesn't support requested feature" "$run/qemu.out" | sed 's/^/  /' >&2
fi

# ---- report ------------------------------------------------------------------------
# Only lines that start with NP- count: scenario output is prefixed with
# "[name] " by init, so a scenario can't forge a result.
results=$(grep -E '^NP-RESULT [^ ]+ (PASS|FAIL|SKIP)' "$clog" || true)
done_line=$(grep -Eo '^NP-DONE [0-9]+ [0-9]+' "$clog" | tail -n1 || true)
boot=$(grep -Eo '^NP-BOOT uptime=[0-9.]+' "$clog" | head -n1 | cut -d= -f2 || true)

npass=$(grep -c '^NP-RESULT [^ ]* PASS' <<<"$results" || true)
nfail=$(grep -c '^NP-RESULT [^ ]* FAIL' <<<"$results" || true)
nskip=$(grep -c '^NP-RESULT [^ ]* SKIP' <<<"$results" || true)

echo "== $topo results"
[[ -n $results ]] && while read -r line; do echo "  ${line#NP-RESULT }"; done <<<"$results"

ok=1
why=
if ((stalled)); then
	ok=0
	why="guest did not boot within ${boot_timeout}s in $attempt attempt(s)"
elif ((qrc == 124 || qrc == 137)); then
	ok=0
	why="hard timeout after ${hard_timeout}s"
elif [[ -z $done_line ]]; then
	ok=0
	why="no NP-DONE on the console (qemu exit $qrc)"
else
	read -r _ dpass dfail <<<"$done_line"
	if ((dfail > 0 || nfail > 0)); then
		ok=0
		why="$dfail scenario(s) failed"
	elif ((dpass == 0 || npass == 0)); then
		ok=0
		why="no scenario passed"
	fi
fi

summary="$topo: pass=$npass fail=$nfail skip=$nskip, wall ${wall}s (guest boot ${boot:-?}s"
((attempt > 1)) && summary+=", $attempt boot attempts"
summary+="), log $clog"
if ((ok)); then
	echo "run.sh: OK $summary"
	exit 0
fi
if [[ -z $done_line ]] && ((quiet)); then
	echo "-- last console lines:" >&2
	tail -n 30 "$clog" >&2
fi
echo "run.sh: FAILED ($why) $summary" >&2
exit 1
