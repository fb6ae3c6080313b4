#!/usr/bin/env bash
# fuzz-replay.sh BUILD_DIR NAME...: every seed (tests/fuzz/corpus/NAME) and
# every kept crash input (tests/fuzz/regress/NAME) once through the harness
# built with replay.c as main (BUILD_DIR/fuzz-replay-NAME). Prints
# "fuzz replay: N passed, N failed" (one per harness).
set -uo pipefail
build=$1
shift
pass=0
fail=0
for n in "$@"; do
	if out=$("$build/fuzz-replay-$n" "tests/fuzz/corpus/$n" "tests/fuzz/regress/$n" 2>&1); then
		pass=$((pass + 1))
		echo "ok   fuzz replay $n: ${out##*: }"
	else
		fail=$((fail + 1))
		printf '%s\n' "$out" | tail -n 30
		echo "FAIL fuzz replay $n"
	fi
done
echo "fuzz replay: $pass passed, $fail failed"
[ -n "${NP_SUMMARY_FILE:-}" ] && echo "fuzz-replay $pass $fail" >>"$NP_SUMMARY_FILE"
[ "$fail" -eq 0 ]
