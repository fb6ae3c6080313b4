#!/usr/bin/env bash
# Feed every vector file through the CLI planner exactly as a user would
# (`numaplace plan --check < FILE`): each result must match its "expect".
set -euo pipefail
bin=${1:?usage: check-plan-vectors.sh path/to/numaplace}
rc=0
for f in tests/data/vectors/*.json tests/data/plan/*.json; do
	[ -e "$f" ] || continue
	printf '%-40s ' "$f"
	out=$("$bin" plan --check <"$f") || rc=1
	echo "$out"
	if [ -n "${NP_SUMMARY_FILE:-}" ]; then
		echo "$out" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/vectors \1 \2/p' >>"$NP_SUMMARY_FILE"
	fi
done
exit $rc
