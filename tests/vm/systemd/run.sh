#!/usr/bin/env bash
# tests/vm/systemd/run.sh --topology 2node|4node [--bin PATH]... [options]
#
# Boot Debian's kernel under qemu (TCG) with systemd 252 as PID 1 (cgroup
# v2, dbus, journald) and run tests/vm/systemd/scenarios inside, each as a
# transient unit of the test unit sdtest.service.  The root is the cached
# Debian base of mkroot.sh plus a small archive made here with the
# project's files: each --bin into /usr/local/sbin (with the libraries ldd
# lists), dist/numaplaced.service installed (not enabled), the scenarios
# under /sdtest, dist/oci (the OCI hook's install files) in /sdtest/oci.
# Exit 0 only if the guest printed NP-DONE with no failure and at least one
# PASS; 1 otherwise; 2 on a usage error.
#
# Options:
#   --topology T          2node or 4node (tests/vm/topology.sh)
#   --scenarios DIR       default tests/vm/systemd/scenarios
#   --bin PATH            a program for /usr/local/sbin (repeatable)
#   --only GLOB[,GLOB]    run only matching scenarios
#   --timeout SECONDS     hard limit for the whole VM run (default 900)
#   --scenario-timeout S  limit for each scenario (default 300; a scenario's
#                         "# np-timeout: S" line gives it more, never less)
#   --append ARGS         extra kernel command line arguments (np.KEY=VALUE
#                         becomes NP_KEY in the scenarios' environment;
#                         "loglevel=7" keeps soft lockups' backtraces in the
#                         console log, which "quiet" hides)
#   --boot-timeout S      no NP-BOOT S seconds after qemu started: boot
#                         again (default 150)
#   --boot-attempts N     default 3
#   --silence-timeout S   after NP-BOOT, a test channel silent for S seconds
#                         is a hung guest: qemu is stopped and the run fails
#                         saying so (default 0: off; a long, quiet scenario
#                         would trip it). For runs whose scenario prints
#                         regularly: multi-threaded TCG can hang a guest
#                         whole (tests/vm/README.md "Timings and TCG
#                         threading"), and the hard --timeout is long.
#   --quiet               print only the results
#   --tcg-threads single|multi  qemu -accel tcg,thread=... (default single;
#                         multi gives each vCPU a host thread: see
#                         tests/vm/README.md "Timings and TCG threading")
#   --mem MB              guest memory (default 2048), split over the nodes
#   --disk MB             a blank raw virtio-blk disk of MB (/dev/vda in
#                         the guest once virtio_blk is loaded)
#   --hostfwd HP:GP       user-mode network (restrict=on: the guest reaches
#                         nothing) with host 127.0.0.1:HP forwarded to guest
#                         port GP (repeatable); a virtio-net device
#   --ctl PATH            a third serial port (ttyS2 in the guest) as a unix
#                         socket server at PATH on the host, for a host
#                         program that talks with a scenario
#   --module NAME         a kernel module of the guest kernel's package, with
#                         its dependencies, into /usr/lib/modules (repeatable;
#                         the guest loads it with modprobe)
#   --file SRC:DEST       a file or directory for the guest (repeatable)
#   --extra-pkgs LIST     Debian packages added to the base root (mkroot.sh
#                         EXTRA_PKGS: a base of its own, cached by the list)
#   --extra-skip LIST     packages left out of that closure (EXTRA_SKIP)
#   --pin V:HOSTCPUS      run vCPU V's thread on these host CPUs only
#                         (repeatable; with --tcg-threads multi)
#   --pin-rest HOSTCPUS   every other qemu thread (the other vCPUs, the
#                         main loop, I/O workers) on these host CPUs
#   --log-name NAME       keep the logs as build/vm/NAME.log and
#                         NAME.console.log (default last-sd-<topology>)
# Logs: build/vm/last-sd-<topology>.log (the test channel, ttyS1) and
# build/vm/last-sd-<topology>.console.log (kernel and systemd, ttyS0).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
VMHERE=$(cd "$HERE/.." && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
VMDIR=$ROOT/build/vm

usage() {
	sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//' >&2
	exit 2
}
die() { echo "systemd/run.sh: $*" >&2; exit 2; }

topo= scen=$HERE/scenarios hard_timeout=900 scen_timeout=300
boot_timeout=${NP_VM_BOOT_TIMEOUT:-150} boot_attempts=${NP_VM_BOOT_ATTEMPTS:-3}
silence_timeout=0 only= quiet=0 tcg_threads=single mem=2048 disk_mb=0 ctl= log_name=
extra_pkgs= extra_skip= append=
bins=() hostfwd=() modules=() files=() pins=() pin_rest=
while (($#)); do
	case $1 in
	--topology) topo=${2:-}; shift 2 ;;
	--scenarios) scen=${2:-}; shift 2 ;;
	--bin) bins+=("${2:-}"); shift 2 ;;
	--only) only=${2:-}; shift 2 ;;
	--append) append=${2:-}; shift 2 ;;
	--timeout) hard_timeout=${2:-}; shift 2 ;;
	--scenario-timeout) scen_timeout=${2:-}; shift 2 ;;
	--boot-timeout) boot_timeout=${2:-}; shift 2 ;;
	--boot-attempts) boot_attempts=${2:-}; shift 2 ;;
	--silence-timeout) silence_timeout=${2:-}; shift 2 ;;
	--quiet) quiet=1; shift ;;
	--tcg-threads) tcg_threads=${2:-}; shift 2 ;;
	--mem) mem=${2:-}; shift 2 ;;
	--disk) disk_mb=${2:-}; shift 2 ;;
	--hostfwd) hostfwd+=("${2:-}"); shift 2 ;;
	--ctl) ctl=${2:-}; shift 2 ;;
	--module) modules+=("${2:-}"); shift 2 ;;
	--file) files+=("${2:-}"); shift 2 ;;
	--extra-pkgs) extra_pkgs=${2:-}; shift 2 ;;
	--extra-skip) extra_skip=${2:-}; shift 2 ;;
	--log-name) log_name=${2:-}; shift 2 ;;
	--pin) pins+=("${2:-}"); shift 2 ;;
	--pin-rest) pin_rest=${2:-}; shift 2 ;;
	-h | --help) usage ;;
	*) echo "systemd/run.sh: unknown argument: $1" >&2; usage ;;
	esac
done
for n in "$hard_timeout" "$scen_timeout" "$boot_timeout" "$boot_attempts"; do
	[[ $n =~ ^[0-9]+$ && $n -gt 0 ]] || die "timeouts and counts are positive integers"
done
[[ -d $scen ]] || die "--scenarios $scen: not a directory"
[[ $silence_timeout =~ ^[0-9]+$ ]] || die "--silence-timeout wants seconds (0: off)"
[[ $tcg_threads == single || $tcg_threads == multi ]] || die "--tcg-threads wants single or multi"
[[ $mem =~ ^[0-9]+$ && $mem -ge 256 ]] || die "--mem wants MB, at least 256"
[[ $disk_mb =~ ^[0-9]+$ ]] || die "--disk wants MB"
for f in "${hostfwd[@]}"; do
	[[ $f =~ ^[0-9]+:[0-9]+$ ]] || die "--hostfwd wants HOSTPORT:GUESTPORT, not '$f'"
done
for f in "${files[@]}"; do
	[[ $f == *:/* && -e ${f%%:*} ]] || die "--file wants SRC:/DEST with SRC existing, not '$f'"
done
[[ -z $log_name || $log_name =~ ^[A-Za-z0-9._-]+$ ]] || die "--log-name: letters, digits, . _ - only"
for f in "${pins[@]}"; do
	[[ $f =~ ^[0-9]+:[0-9,-]+$ ]] || die "--pin wants VCPU:HOSTCPUS, not '$f'"
done
[[ -z $pin_rest || $pin_rest =~ ^[0-9,-]+$ ]] || die "--pin-rest wants a host CPU list"
if ((${#pins[@]})) && [[ $tcg_threads != multi ]]; then
	die "--pin needs --tcg-threads multi (one thread per vCPU)"
fi
[[ -n $topo ]] || die "--topology is required (2node or 4node)"
# shellcheck source=../topology.sh
. "$VMHERE/topology.sh"
np_vm_topology "$topo" "$mem" || die "unknown topology '$topo' (2node, 4node or 2node-2cpu)"

"$VMHERE/deps.sh"
kernel=$("$VMHERE/fetch-kernel.sh")
[[ -f $kernel ]] || die "kernel $kernel not found"
base=$(EXTRA_PKGS=$extra_pkgs EXTRA_SKIP=$extra_skip "$HERE/mkroot.sh")

mkdir -p "$VMDIR"
run=$(mktemp -d "$VMDIR/sdrun-$topo.XXXXXX")
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

# ---- the project's archive ------------------------------------------------------
st=$run/overlay
mkdir -p "$st"/usr/local/sbin "$st"/etc/systemd/system/multi-user.target.wants \
	"$st"/sdtest/scenarios "$st"/etc/numaplace
# The base has bin, lib, lib64 -> usr/...: files go to their usr/ path.
# A library goes where the loader looks for it: its directory resolved (the
# base's lib -> usr/lib), its name kept (the soname ldd printed, e.g.
# libmicrohttpd.so.12, not the file the link points to).
libpath() {
	local d
	d=$(readlink -f "$(dirname "$1")")
	case $d in /bin | /bin/* | /sbin | /sbin/* | /lib | /lib/* | /lib64 | /lib64/*) d=/usr$d ;; esac
	echo "$d/$(basename "$1")"
}
copy_libs() {
	local out lib dst
	out=$(ldd "$1" 2>&1) || return 0
	! grep -q 'not found' <<<"$out" || die "$1: unresolved libraries: $out"
	while read -r lib; do
		dst=$st$(libpath "$lib")
		[[ -e $dst ]] && continue
		mkdir -p "$(dirname "$dst")"
		cp -L "$lib" "$dst"
	done < <(awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}' <<<"$out")
}
for b in "${bins[@]}"; do
	[[ -f $b && -x $b ]] || die "--bin $b: not an executable file"
	install -m 0755 "$b" "$st/usr/local/sbin/$(basename "$b")"
	copy_libs "$b"
done
install -m 0644 "$ROOT/dist/numaplaced.service" "$st/etc/systemd/system/"
install -m 0644 "$ROOT/dist/numaplace.example.json" "$st/etc/numaplace/example.json"
install -m 0644 "$HERE/sdtest.service" "$st/etc/systemd/system/"
ln -s ../sdtest.service "$st/etc/systemd/system/multi-user.target.wants/sdtest.service"
install -m 0755 "$HERE/runner.sh" "$st/sdtest/"
install -m 0644 "$VMHERE/lib.sh" "$HERE/sdlib.sh" "$HERE/ocilib.sh" "$st/sdtest/"
cp -a "$scen"/. "$st/sdtest/scenarios/"
# the OCI hook's install files (hooks.d JSON, crun snippet) for 80-containers
if [[ -d $ROOT/dist/oci ]]; then cp -a "$ROOT/dist/oci" "$st/sdtest/oci"; fi
for f in "${files[@]}"; do
	mkdir -p "$st$(dirname "${f#*:}")"
	cp -a "${f%%:*}" "$st${f#*:}"
done
# Kernel modules: each with what modules.dep says it needs, and depmod's
# files, so that the guest's modprobe finds them.
if ((${#modules[@]})); then
	moddir=$(dirname "$kernel")/modules
	[[ -f $moddir/modules.dep ]] || die "--module: no $moddir/modules.dep (fetch-kernel.sh makes it)"
	krel=$(awk '{print $3}' "$(dirname "$kernel")/package")
	# shellcheck source=../modules.sh
	. "$VMHERE/modules.sh"
	np_vm_copy_modules "$moddir" "$st/usr/lib/modules/$krel" "${modules[@]}" || die "--module: see above"
	depmod -b "$st/usr" "$krel"
fi
# The kernel makes no missing parents: directories come too (the base's
# bin, lib, ... are links, hence the usr/ paths above).
(cd "$st" && find . -mindepth 1 -printf '%P\n' | LC_ALL=C sort |
	cpio --quiet -o -H newc -R 0:0) | gzip -1 >"$run/overlay.cpio.gz"
# Concatenated archives: the kernel unpacks one after the other.
cat "$base" "$run/overlay.cpio.gz" >"$run/initrd.gz"

cmdline="console=ttyS0 quiet panic=-1 systemd.unified_cgroup_hierarchy=1 systemd.show_status=0"
cmdline+=" np.topo=$topo np.nodes=$nnodes np.cpus=$ncpus np.smt=$smt"
cmdline+=" np.nodecpus=$nodecpus_param np.dist=$dist np.timeout=$scen_timeout"
[[ -n $only ]] && cmdline+=" np.only=$only"
[[ -n $append ]] && cmdline+=" $append"

# pin_threads: qemu's threads where --pin and --pin-rest say (all of them
# first, then each named vCPU thread, "CPU N/TCG"); threads made later
# (I/O workers) inherit the main thread's set
pin_threads() {
	local q= i t f
	for ((i = 0; i < 200; i++)); do
		q=$(pgrep -P "$qpid" | head -n 1) || true # not forked yet: pgrep fails
		[[ -n $q ]] && break
		sleep 0.05
	done
	[[ -n $q ]] || { echo "systemd/run.sh: --pin: no qemu process under $qpid" >&2; return 1; }
	for ((i = 0; i < 200; i++)); do
		grep -q "^CPU $((ncpus - 1))/TCG" /proc/"$q"/task/*/comm 2>/dev/null && break
		sleep 0.05
	done
	if [[ -n $pin_rest ]]; then taskset -a -p -c "$pin_rest" "$q" >/dev/null; fi
	for f in "${pins[@]}"; do
		for t in /proc/"$q"/task/*; do
			if [[ $(cat "$t/comm" 2>/dev/null) == "CPU ${f%%:*}/TCG" ]]; then
				taskset -p -c "${f#*:}" "${t##*/}" >/dev/null
			fi
		done
	done
	return 0
}

# ---- boot -----------------------------------------------------------------------------
res=$run/results.log
con=$run/console.log
# shellcheck disable=SC2054 # qemu's option syntax
qemu=(qemu-system-x86_64 -accel "tcg,thread=$tcg_threads" -cpu Skylake-Server
	-m "$mem" -smp "$smp" "${numa[@]}"
	-kernel "$kernel" -initrd "$run/initrd.gz" -append "$cmdline" -no-reboot
	-display none -monitor none -serial "file:$con" -serial "file:$res")
[[ -n $ctl ]] && qemu+=(-serial "unix:$ctl,server=on,wait=off")
# threads named after what they run ("CPU 1/TCG"), for --pin
((${#pins[@]})) && qemu+=(-name "sdvm-$topo,debug-threads=on")
if ((disk_mb)); then
	truncate -s "${disk_mb}M" "$run/disk.img"
	# cache=unsafe: the guest's flushes reach qemu's block layer (the guest
	# sees an fsync'd virtio disk) without waiting for the host's disk
	qemu+=(-drive "file=$run/disk.img,if=none,id=d0,format=raw,cache=unsafe"
		-device virtio-blk-pci,drive=d0)
fi
if ((${#hostfwd[@]})); then
	net=user,id=n0,restrict=on
	for f in "${hostfwd[@]}"; do net+=",hostfwd=tcp:127.0.0.1:${f%%:*}-:${f#*:}"; done
	qemu+=(-netdev "$net" -device virtio-net-pci,netdev=n0)
fi
echo "systemd/run.sh: booting $topo with systemd as PID 1 ($ncpus CPUs, $nnodes nodes, tcg thread=$tcg_threads), timeout ${hard_timeout}s" >&2
start=$(date +%s.%N)
deadline=$(($(date +%s) + hard_timeout))
attempt=0 stalled=0 silent=0 qrc=0
while :; do
	attempt=$((attempt + 1))
	: >"$res"
	: >"$con"
	remaining=$((deadline - $(date +%s)))
	((remaining > 0)) || { qrc=124; break; }
	timeout -k 10 "$remaining" "${qemu[@]}" </dev/null >"$run/qemu.out" 2>&1 &
	qpid=$!
	if ((${#pins[@]})) || [[ -n $pin_rest ]]; then pin_threads; fi
	if ((!quiet)); then
		tail -n +1 --pid="$qpid" -f "$res" | tr -d '\r' &
		tpid=$!
	fi
	t0=$(date +%s) booted=0 stalled=0 size=-1 heard=$t0
	while kill -0 "$qpid" 2>/dev/null; do
		if ((!booted)); then
			if grep -q '^NP-BOOT' "$res"; then
				booted=1
			elif (($(date +%s) - t0 >= boot_timeout)); then
				stalled=1
				kill "$qpid" 2>/dev/null || true
				break
			fi
		elif ((silence_timeout > 0)); then
			now=$(date +%s) s=$(stat -c %s "$res")
			((s != size)) && size=$s heard=$now
			if ((now - heard >= silence_timeout)); then
				silent=1
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
	[[ -n $tpid ]] && { wait "$tpid" 2>/dev/null || true; tpid=; }
	((stalled)) || break
	tr -d '\r' <"$con" >"$VMDIR/stalled-sd-$topo.$attempt.log"
	echo "systemd/run.sh: $topo: no NP-BOOT after ${boot_timeout}s (attempt $attempt/$boot_attempts," \
		"console in build/vm/stalled-sd-$topo.$attempt.log)" >&2
	((attempt < boot_attempts)) || break
done
wall=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN {printf "%.1f", e - s}')
log_name=${log_name:-last-sd-$topo}
clog=$VMDIR/$log_name.log
tr -d '\r' <"$res" >"$clog"
tr -d '\r' <"$con" >"$VMDIR/$log_name.console.log"

# ---- report ---------------------------------------------------------------------------
results=$(grep -E '^NP-RESULT [^ ]+ (PASS|FAIL|SKIP)' "$clog" || true)
done_line=$(grep -Eo '^NP-DONE [0-9]+ [0-9]+' "$clog" | tail -n1 || true)
boot=$(grep -Eo '^NP-BOOT uptime=[0-9.]+' "$clog" | head -n1 | cut -d= -f2 || true)
npass=$(grep -c '^NP-RESULT [^ ]* PASS' <<<"$results" || true)
nfail=$(grep -c '^NP-RESULT [^ ]* FAIL' <<<"$results" || true)
nskip=$(grep -c '^NP-RESULT [^ ]* SKIP' <<<"$results" || true)
echo "== systemd $topo results"
[[ -n $results ]] && while read -r line; do echo "  ${line#NP-RESULT }"; done <<<"$results"
ok=1 why=
if ((stalled)); then
	ok=0 why="guest did not boot within ${boot_timeout}s in $attempt attempt(s)"
elif ((silent)); then
	ok=0 why="the test channel was silent for ${silence_timeout}s: the guest hung (see the console log)"
elif ((qrc == 124 || qrc == 137)); then
	ok=0 why="hard timeout after ${hard_timeout}s"
elif [[ -z $done_line ]]; then
	ok=0 why="no NP-DONE on the test channel (qemu exit $qrc)"
else
	read -r _ dpass dfail <<<"$done_line"
	if ((dfail > 0 || nfail > 0)); then
		ok=0 why="$dfail scenario(s) failed"
	elif ((dpass == 0 || npass == 0)); then
		ok=0 why="no scenario passed"
	fi
fi
summary="systemd $topo: pass=$npass fail=$nfail skip=$nskip, wall ${wall}s (test start at guest uptime ${boot:-?}s), log $clog"
if ((ok)); then
	echo "systemd/run.sh: OK $summary"
	exit 0
fi
if [[ -z $done_line ]]; then
	echo "-- last lines of the test channel:" >&2
	tail -n 20 "$clog" >&2
	echo "-- last console lines:" >&2
	tail -n 20 "$VMDIR/$log_name.console.log" >&2
fi
echo "systemd/run.sh: FAILED ($why) $summary" >&2
exit 1
