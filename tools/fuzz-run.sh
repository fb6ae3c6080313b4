#!/usr/bin/env bash
# fuzz-run.sh BUILD_DIR SECONDS NAME...: each libFuzzer harness
# (BUILD_DIR/fuzz-NAME) for SECONDS from its seeds (tests/fuzz/corpus/NAME,
# read only: new inputs go to BUILD_DIR/corpus/NAME). A crash leaves its
# input in BUILD_DIR/crash/NAME/ and fails the run; keep it in
# tests/fuzz/regress/NAME once fixed, so every test build replays it.
# FUZZ_JOBS=N (default 1) runs N harnesses at a time; FUZZ_NICE=N runs
# them at that nice level (the long run beside other work). FUZZ_SEED=N
# (N >= 1) starts each harness's random source at N, so a run takes the
# same inputs in the same order wherever it runs (a slower machine takes
# fewer of them); unset or 0, libFuzzer draws a seed (printed in the log).
# Prints one line per harness (runs, coverage, corpus, crashes) and
# "fuzz: N passed, N failed".
set -uo pipefail
build=$1
secs=$2
shift 2
jobs=${FUZZ_JOBS:-1}
nice_lvl=${FUZZ_NICE:-0}
seed=${FUZZ_SEED:-0}
case $jobs in '' | *[!0-9]* | 0) echo "fuzz-run: FUZZ_JOBS must be a whole number >= 1, not '$jobs'" >&2; exit 2 ;; esac
case $nice_lvl in '' | *[!0-9]*) echo "fuzz-run: FUZZ_NICE must be 0..19, not '$nice_lvl'" >&2; exit 2 ;; esac
case $seed in '' | *[!0-9]* | ??????????*) echo "fuzz-run: FUZZ_SEED must be a whole number below 1000000000, not '$seed'" >&2; exit 2 ;; esac

run_one() {
	local n=$1 work=$build/corpus/$1 crash=$build/crash/$1 log=$build/fuzz-$1.log
	mkdir -p "$work" "$crash"
	# With sched_autogroup (Debian's default) nice orders only the tasks
	# of one session: each harness runs in a session of its own, whose
	# autogroup gets the nice level too (set from inside, after setsid).
	setsid -w sh -c 'l=$1; shift
		[ "$l" -gt 0 ] && echo "$l" >/proc/self/autogroup 2>/dev/null
		exec nice -n "$l" "$@"' sh "$nice_lvl" \
		"$build/fuzz-$n" -seed="$seed" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
		-artifact_prefix="$crash/" -print_final_stats=1 \
		"$work" "tests/fuzz/corpus/$n" >"$log" 2>&1
	echo $? >"$build/fuzz-$n.rc"
}

running=0
for n in "$@"; do
	rm -f "$build/fuzz-$n.rc"
	run_one "$n" &
	running=$((running + 1))
	if [ "$running" -ge "$jobs" ]; then
		wait -n
		running=$((running - 1))
	fi
done
wait

pass=0
fail=0
for n in "$@"; do
	log=$build/fuzz-$n.log
	crash=$build/crash/$n
	rc=$(cat "$build/fuzz-$n.rc" 2>/dev/null || echo 99)
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1)
	ft=$(grep -o 'ft: [0-9]*' "$log" | tail -n 1)
	corp=$(grep -o 'corp: [0-9]*/[0-9]*[a-zA-Z]*' "$log" | tail -n 1)
	if [ "$rc" -eq 0 ]; then
		pass=$((pass + 1))
		echo "ok   fuzz $n: ${runs:-?} runs in ${secs} s, ${cov:-cov ?}, ${ft:-ft ?}, ${corp:-corp ?}, 0 crashes"
	else
		fail=$((fail + 1))
		grep -E 'ERROR|SUMMARY|#[0-9]+ 0x' "$log" | head -n 20
		used=$(sed -n 's/^INFO: Seed: *//p' "$log" | head -n 1)
		echo "FAIL fuzz $n (exit $rc, seed ${used:-?}): input kept in $crash/, log $log"
	fi
done
echo "fuzz: $pass passed, $fail failed"
[ -n "${NP_SUMMARY_FILE:-}" ] && echo "fuzz $pass $fail" >>"$NP_SUMMARY_FILE"
[ "$fail" -eq 0 ]
