#!/usr/bin/env bash
# Feed every vector file through the CLI planner exactly as a user would
# (`numaplace plan --check < FILE`): each result must match its "expect".
set -euo pipefail
bin=${1:?usage: check-plan-vectors.sh path/to/numaplace}
rc=0
for f in tests/data/vectors/*.json tests/data/plan/*.json; do
	[ -e "$f" ] || continue
	printf '%-40s ' "$f"
	if ! "$bin" plan --check <"$f"; then
		rc=1
	fi
done
exit $rc
