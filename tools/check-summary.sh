#!/usr/bin/env bash
# The closing line of `make check`: everything that ran, added up.
set -euo pipefail
sum=${1:?usage: check-summary.sh SUMMARY_FILE [VM_LOG...]}
shift
pass=0
fail=0
while read -r _ p f; do
	pass=$((pass + p))
	fail=$((fail + f))
done <"$sum"
for log in "$@"; do
	[ -f "$log" ] || continue
	p=$(grep -c '^NP-RESULT [^ ]* PASS' "$log" || true)
	f=$(grep -c '^NP-RESULT [^ ]* FAIL' "$log" || true)
	pass=$((pass + p))
	fail=$((fail + f))
done
echo
echo "check: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
