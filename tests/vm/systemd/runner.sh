#!/bin/bash
# /sdtest/runner.sh: runs in the systemd VM as sdtest.service (so PID 1 is
# systemd and the scenarios are inside a unit, as a node's tools are).
# Same protocol as tests/vm/init: every /sdtest/scenarios/*.sh in name
# order, each a transient unit under a time limit, output prefixed with
# "[name] ", and the lines the host trusts:
#   NP-BOOT uptime=S ...     NP-START name
#   NP-RESULT name PASS|FAIL|SKIP detail (Ns)
#   NP-DONE npass nfail
# Kernel parameters np.KEY=VALUE become NP_KEY (as in tests/vm/init).
export HOME=/root
umask 022
for w in $(cat /proc/cmdline); do
	case $w in
	np.*=*)
		k=${w%%=*}
		k=$(echo "${k#np.}" | tr 'a-z.-' 'A-Z__')
		export "NP_$k=${w#*=}"
		;;
	esac
done
up() { cut -d' ' -f1 /proc/uptime; }
echo "NP-BOOT uptime=$(up)s kernel=$(uname -r) topo=${NP_TOPO:-?} cpus=$(nproc) init=$(cat /proc/1/comm)"

selected() {
	[ -n "${NP_ONLY:-}" ] || return 0
	local g
	for g in ${NP_ONLY//,/ }; do
		# shellcheck disable=SC2053 # a glob
		[[ $1 == $g ]] && return 0
	done
	return 1
}

npass=0 nfail=0 nskip=0
mkdir -p /run/np
for f in /sdtest/scenarios/*.sh; do
	[ -f "$f" ] || continue
	name=$(basename "$f" .sh)
	selected "$name" || continue
	det=/run/np/$name.detail
	: >"$det"
	echo "NP-START $name"
	t0=$SECONDS
	# a scenario may ask for more time: a line "# np-timeout: SECONDS"
	# (run.sh --scenario-timeout, NP_TIMEOUT, may give it more still)
	T=$(sed -n 's/^# np-timeout: *\([0-9][0-9]*\)$/\1/p' "$f" | head -n 1)
	T=${T:-0}
	((T >= ${NP_TIMEOUT:-300})) || T=${NP_TIMEOUT:-300}
	# Each scenario is a unit of its own (system.slice, as a node's
	# services are): at its end or at RuntimeMaxSec systemd stops all it
	# started (SIGTERM first, so its EXIT trap runs).
	env | grep '^NP_' >/run/np/env
	printf 'NP_SCENARIO=%s\nNP_DETAIL_FILE=%s\nSYSTEMD_PAGER=cat\nSYSTEMD_COLORS=0\n' \
		"$name" "$det" >>/run/np/env
	systemd-run --quiet --wait --pipe --collect --unit="sdtest-$name" \
		-p RuntimeMaxSec="$T" -p TimeoutStopSec=10 -p EnvironmentFile=/run/np/env \
		-p WorkingDirectory=/tmp /bin/bash "$f" </dev/null 2>&1 |
		while IFS= read -r l || [ -n "$l" ]; do echo "[$name] $l"; done
	rc=${PIPESTATUS[0]}
	((rc != 0 && rc != 77 && SECONDS - t0 >= T)) && rc=124
	el=$((SECONDS - t0))
	detail=$(grep -v '^[[:space:]]*$' "$det" 2>/dev/null | tr '\n' ';' | sed 's/;$//; s/;/; /g')
	case $rc in
	0) status=PASS; npass=$((npass + 1)) ;;
	77) status=SKIP; nskip=$((nskip + 1)) ;;
	124 | 137) status=FAIL; nfail=$((nfail + 1)); detail="timeout after ${T}s${detail:+; $detail}" ;;
	*) status=FAIL; nfail=$((nfail + 1)); detail="exit $rc${detail:+; $detail}" ;;
	esac
	echo "NP-RESULT $name $status ${detail:-ok} (${el}s)"
done
echo "NP-SUMMARY pass=$npass fail=$nfail skip=$nskip uptime=$(up)s"
echo "NP-DONE $npass $nfail"
sync
exit 0
