#!/usr/bin/env bash
# Run cmocka test programs from the repository root; print one summary
# line ("N passed, N failed") for the whole run and fail if any failed.
set -uo pipefail
pass=0
fail=0
failed=()
for t in "$@"; do
	out=$("$t" 2>&1)
	rc=$?
	printf '%s\n' "$out"
	# cmocka prints "[  PASSED  ] N test(s)." and "[  FAILED  ] N test(s)..."
	p=$(printf '%s\n' "$out" | sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' | tail -1)
	f=$(printf '%s\n' "$out" | sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' | tail -1)
	pass=$((pass + ${p:-0}))
	fail=$((fail + ${f:-0}))
	if [ $rc -ne 0 ]; then
		failed+=("$t")
		[ -z "$f" ] && fail=$((fail + 1))
	fi
done
echo
echo "unit tests: $pass passed, $fail failed"
[ -n "${NP_SUMMARY_FILE:-}" ] && echo "unit $pass $fail" >>"$NP_SUMMARY_FILE"
if [ ${#failed[@]} -ne 0 ]; then
	echo "failing programs: ${failed[*]}"
	exit 1
fi
