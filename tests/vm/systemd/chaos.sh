#!/usr/bin/env bash
# tests/vm/systemd/chaos.sh [--topology T]... [--minutes M] [--seed S]
#                           [--slack S] [--no-lsr] [--no-kills]
#                           [--containers N] [--build DIR]
# tests/vm/systemd/chaos.sh --schedule SEED MINUTES NCPUS [CONTAINERS [KILLS]]
#
# `make chaos`: the chaos scenario (scenarios/90-chaos.sh, issue 33) alone
# in the systemd VM, on each topology given (default 2node then 4node), for
# M minutes (default 30) from seed S (default: drawn here and printed).
# Results in BUILD/chaos/TOPO-seed-S/: log (the test channel), events (the
# sequence run: "N MS EVENT ARGS"), summary (figures: CHAOS-SUMMARY,
# CHAOS-SLOPE, CHAOS-TOPWIN), and on a failure failure (the broken
# invariant, CHAOS-FAIL, and the lines before it) and repro (the command
# that replays the seed). The sequence run is compared with the seed's
# schedule drawn here (the same generator, schedule.sh): a replay runs the
# same events in the same order, whatever their outcomes.
# --no-lsr sends LSR draws as LSE (as before the LSR/BE overlap chaos found
# was fixed; by default they go as LSR). --no-kills draws a status where a
# kill -9 or SIGTERM of numaplaced would be (every other event the same):
# one numaplaced for the whole run, its leak slopes over all of it.
# --containers 1 adds container
# events (crun, both cgroup drivers), 2 podman's too, 0 none (the
# default; scenarios/90-chaos-lib/containers.sh). Before booting, the invariant
# checker's reading of systemctl show is tested on systemd 252's recorded
# output (check.sh, chk_selftest; the guest does it again).
# --schedule prints that schedule and exits.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
# shellcheck source=scenarios/90-chaos-lib/schedule.sh
. "$HERE/scenarios/90-chaos-lib/schedule.sh"
# shellcheck source=scenarios/90-chaos-lib/check.sh
. "$HERE/scenarios/90-chaos-lib/check.sh"
die() { echo "chaos.sh: $*" >&2; exit 2; }

if [[ ${1:-} == --schedule ]]; then
	(($# >= 4 && $# <= 6)) || die "--schedule SEED MINUTES NCPUS [CONTAINERS [KILLS]]"
	chaos_schedule "$2" $(($3 * 60)) "$4" "${5:-0}" "${6:-1}"
	exit 0
fi
topos=() minutes=30 seed= slack= nolsr= kills=1 ctrs=0 build=build
while (($#)); do
	case $1 in
	--topology) topos+=("${2:-}"); shift 2 ;;
	--minutes) minutes=${2:-}; shift 2 ;;
	--seed) seed=${2:-}; shift 2 ;;
	--slack) slack=${2:-}; shift 2 ;;
	--no-lsr) nolsr=1; shift ;;
	--no-kills) kills=0; shift ;;
	--containers) ctrs=${2:-}; shift 2 ;;
	--build) build=${2:-}; shift 2 ;;
	*) die "unknown argument: $1" ;;
	esac
done
((${#topos[@]})) || topos=(2node 4node)
[[ $minutes =~ ^[0-9]+$ && $minutes -gt 0 ]] || die "--minutes wants a positive integer"
[[ -z $seed || $seed =~ ^[0-9]+$ ]] || die "--seed wants a non-negative integer"
[[ -z $slack || $slack =~ ^[0-9]+$ ]] || die "--slack wants seconds"
[[ $ctrs =~ ^[012]$ ]] || die "--containers wants 0, 1 (crun) or 2 (crun and podman)"
seed=${seed:-$((RANDOM * 32768 + RANDOM))}
r=$(chk_selftest) || die "$r"
bins=()
for b in numaplace numaplaced numaplace-oci-hook; do
	[[ -x $build/$b ]] || die "$build/$b missing (make first)"
	bins+=(--bin "$build/$b")
done

rc=0
for t in "${topos[@]}"; do
	case $t in 2node) ncpus=8 ;; 4node) ncpus=16 ;; *) die "topology 2node or 4node, not '$t'" ;; esac
	out=$ROOT/build/chaos/$t-seed-$seed
	rm -rf "$out"
	mkdir -p "$out"
	echo "chaos.sh: $t, $minutes min, seed $seed -> ${out#"$ROOT"/}"
	append="np.chaos_minutes=$minutes np.chaos_seed=$seed${slack:+ np.chaos_slack=$slack}${nolsr:+ np.chaos_lsr=0} np.chaos_kills=$kills np.chaos_containers=$ctrs"
	r=0
	"$HERE/run.sh" --topology "$t" --only 90-chaos --append "$append" "${bins[@]}" --quiet \
		--scenario-timeout $((minutes * 60 + 900)) --timeout $((minutes * 60 + 1500)) \
		--silence-timeout 600 --log-name "chaos-$t" || r=1
	log=$ROOT/build/vm/chaos-$t.log
	cp "$log" "$out/log"
	cp "$ROOT/build/vm/chaos-$t.console.log" "$out/console.log"
	sed -n 's/^\[90-chaos\] CHAOS-EV //p' "$log" >"$out/events"
	grep -E '^\[90-chaos\] CHAOS-(SEED|SCHEDULE|SUMMARY|SLOPE|TOPWIN|LATE|CONTAINERS)' "$log" |
		sed 's/^\[90-chaos\] //' >"$out/summary" || true
	# the sequence run against the seed's schedule (what a replay runs)
	chaos_schedule "$seed" $((minutes * 60)) "$ncpus" "$ctrs" "$kills" | awk '{print NR, $0}' >"$out/schedule"
	n=$(wc -l <"$out/events")
	if head -n "$n" "$out/schedule" | cmp -s - "$out/events"; then
		echo "sequence: the $n events run are the seed's schedule's first $n" | tee -a "$out/summary"
	else
		echo "sequence: the events run differ from the seed's schedule (see events, schedule)" | tee -a "$out/summary"
		r=1
	fi
	if ((r)); then
		rc=1
		grep -A 60 '^\[90-chaos\] CHAOS-FAIL' "$log" >"$out/failure" ||
			grep '^NP-RESULT 90-chaos' "$log" >"$out/failure" || tail -n 40 "$log" >"$out/failure"
		echo "make chaos CHAOS_TOPOLOGY=$t CHAOS_SEED=$seed CHAOS_MINUTES=$minutes${slack:+ CHAOS_SLACK=$slack}${nolsr:+ CHAOS_LSR=0}$( ((kills)) || echo " CHAOS_KILLS=0") CHAOS_CONTAINERS=$ctrs" >"$out/repro"
		echo "chaos.sh: $t FAILED; reproducer in ${out#"$ROOT"/}: $(cat "$out/repro")"
		head -n 20 "$out/failure" | sed 's/^/  /'
	fi
	sed 's/^/  /' "$out/summary"
done
exit "$rc"
