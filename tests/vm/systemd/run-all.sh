#!/usr/bin/env bash
# tests/vm/systemd/run-all.sh [BUILD_DIR]
#
# The systemd VM scenarios on every topology (part of `make check-vm`),
# with BUILD_DIR/numaplaced, BUILD_DIR/numaplace and
# BUILD_DIR/numaplace-oci-hook.  Environment:
#   NP_SDVM_TOPOLOGIES  default "2node 4node"
#   NP_SDVM_ARGS        extra run.sh arguments (e.g. "--only 20-*")
#   NP_SDVM_4NODE_ONLY  scenarios run on 4node (default: those whose
#                       checks depend on the topology; 30-nofight and
#                       50-crash, about the bus and crash safety, and
#                       80-containers, about the runtimes' hooks, run on
#                       2node only, to keep CI under an hour; 95-deb, the
#                       Debian package, on 4node only: on 2node it has no
#                       package and skips); "*" for all
#   NP_SDVM_CHAOS_MINUTES  the chaos scenario's length on 4node (default
#                       3, its CI form, in the same boot; 0: not run). On
#                       2node it is skipped (make chaos runs it on either)
#   NP_SDVM_CHAOS_SEED  its seed (default 802, fixed so that CI cannot fail
#                       on a draw: its first 32 events hold every event
#                       kind, LSE, LSR, LS, BE and partition admissions;
#                       tests/vm/systemd/chaos.sh --schedule 802 3 16).
#                       Printed as CHAOS-SEED, with CHAOS-REPRO on a
#                       failure, in build/vm/last-sd-4node.log
#   NP_SDVM_CHAOS_CONTAINERS  its container events (default 0: none; 1
#                       crun with both cgroup drivers, 2 podman too: a
#                       start costs tens of seconds under TCG, see
#                       docs/reliability.md)
#   NP_SDVM_CHAOS_SLACK  seconds a window may last beyond the reconcile
#                       period there (default 30: the two lanes share the
#                       host; make chaos's default is 8)
#   NP_SDVM_DEB         the Debian package for 95-deb on 4node (default:
#                       BUILD_DIR/deb's for this version, made by make deb
#                       when missing: deb.sh, which also gives its copy
#                       with a higher version for the upgrade)
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=${1:-build}
args=(--timeout "${NP_SDVM_TIMEOUT:-2400}" --quiet)
for b in numaplace numaplaced numaplace-oci-hook; do
	[[ -x $build/$b ]] || { echo "systemd/run-all.sh: $build/$b missing (make first)" >&2; exit 2; }
	args+=(--bin "$build/$b")
done
read -r -a extra <<<"${NP_SDVM_ARGS:-}"
args+=("${extra[@]}")
rc=0
summary=()
for t in ${NP_SDVM_TOPOLOGIES:-2node 4node}; do
	only=()
	app=()
	if [[ $t == 4node ]]; then
		only=(--only "${NP_SDVM_4NODE_ONLY:-10-*,20-*,40-*,60-*,70-*,90-*,95-*}")
		ap=
		((${NP_SDVM_CHAOS_MINUTES:-3} > 0)) &&
			ap="np.chaos_minutes=${NP_SDVM_CHAOS_MINUTES:-3} np.chaos_seed=${NP_SDVM_CHAOS_SEED:-802} np.chaos_slack=${NP_SDVM_CHAOS_SLACK:-30} np.chaos_containers=${NP_SDVM_CHAOS_CONTAINERS:-0} "
		# the package for 95-deb (one --append: run.sh keeps the last)
		# and its higher version for the upgrade (deb.sh: one path a line)
		debs=$("$HERE/deb.sh" "$build") || { summary+=("systemd $t: FAILED (no package)"); rc=1; continue; }
		app=(--file "${debs%%$'\n'*}:/sdtest/numaplace.deb" --file "${debs#*$'\n'}:/sdtest/numaplace-up.deb"
			--append "${ap}np.deb=/sdtest/numaplace.deb np.deb_up=/sdtest/numaplace-up.deb")
	fi
	if "$HERE/run.sh" --topology "$t" "${args[@]}" "${only[@]}" "${app[@]}"; then
		summary+=("systemd $t: OK")
	else
		summary+=("systemd $t: FAILED")
		rc=1
		log=$HERE/../../../build/vm/last-sd-$t.log
		grep '^NP-RESULT [^ ]* FAIL' "$log" 2>/dev/null | while read -r _ name _; do
			grep "^NP-RESULT $name " "$log" | sed "s/^NP-RESULT /  $t /"
			grep -F "[$name] " "$log" | grep -v '^NP-' | grep -v '\] \[ *[0-9]' | tail -n 8 | sed 's/^/    /'
		done
	fi
done
echo "== systemd VM tests: ${summary[*]}"
exit "$rc"
