#!/usr/bin/env bash
# fuzz-run.sh BUILD_DIR SECONDS NAME...: each libFuzzer harness
# (BUILD_DIR/fuzz-NAME) for SECONDS from its seeds (tests/fuzz/corpus/NAME,
# read only: new inputs go to BUILD_DIR/corpus/NAME). A crash leaves its
# input in BUILD_DIR/crash/NAME/ and fails the run; keep it in
# tests/fuzz/regress/NAME once fixed, so every test build replays it.
# Prints one line per harness (runs, coverage, corpus) and
# "fuzz: N passed, N failed".
set -uo pipefail
build=$1
secs=$2
shift 2
pass=0
fail=0
for n in "$@"; do
	work=$build/corpus/$n
	crash=$build/crash/$n
	mkdir -p "$work" "$crash"
	log=$build/fuzz-$n.log
	"$build/fuzz-$n" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
		-artifact_prefix="$crash/" -print_final_stats=1 \
		"$work" "tests/fuzz/corpus/$n" >"$log" 2>&1
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1)
	corp=$(grep -o 'corp: [0-9]*/[0-9]*[a-zA-Z]*' "$log" | tail -n 1)
	if [ $rc -eq 0 ]; then
		pass=$((pass + 1))
		echo "ok   fuzz $n: ${runs:-?} runs in ${secs} s, ${cov:-cov ?}, ${corp:-corp ?}"
	else
		fail=$((fail + 1))
		grep -E 'ERROR|SUMMARY|#[0-9]+ 0x' "$log" | head -n 20
		echo "FAIL fuzz $n (exit $rc): input kept in $crash/, log $log"
	fi
done
echo "fuzz: $pass passed, $fail failed"
[ -n "${NP_SUMMARY_FILE:-}" ] && echo "fuzz $pass $fail" >>"$NP_SUMMARY_FILE"
[ "$fail" -eq 0 ]
