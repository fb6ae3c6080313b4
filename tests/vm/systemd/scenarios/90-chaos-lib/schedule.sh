# shellcheck shell=bash
# chaos_schedule SEED SECONDS NCPUS [CONTAINERS [KILLS]]: the whole event sequence of a chaos
# run, one "MS EVENT ARGS..." line per event in time order (MS: when, in
# milliseconds from the start), drawn from bash's RANDOM seeded with SEED
# and from nothing else, so that a seed gives the same sequence on every
# run (the guest's and the host's bash are both Debian 12's 5.2; the host
# prints it with tests/vm/systemd/chaos.sh --schedule). What each event does
# is in 90-chaos.sh, ev_*; how its outcome turns out may depend on timing,
# the sequence never does.
#
# Weights, out of 100 (a mean gap of 3.5 s between events: under TCG an
# event takes 1-3 s):
#   admit 18  resize 8  release 12  (socket; workloads s1..s6)
#   spec 10   (spec files f1 LSE, f2 LS, f3 BE: add, change the cpu,
#             remove; a file keeps its class, so that a change is a resize
#             in place)
#   unit 6    (socket; the services chaos-u1/u2 as workloads) restart-unit 4
#   reload 6  (systemctl daemon-reload)  confined 3 (restart chaos-host)
#   admin 5   (set-property on system.slice)   burst 3 (24 socket clients)
#   kill 4    (kill -9 numaplaced)  term 3 (SIGTERM)  hup 5 (changed config)
#   hotplug 4 (a CPU offline 5-20 s)  diskfull 3 (the state disk full 5-20 s)
#   status 6  (one `numaplace status`)
#   (the QoS classes, partition included, are drawn within admit, spec and
#   unit)
# With CONTAINERS (np.chaos_containers, CHAOS_CONTAINERS) 1 or 2, container
# events come on top, a stream of their own (chaos_ctr_schedule; the rest
# of the sequence is the same as without them). With KILLS 0
# (np.chaos_kills, CHAOS_KILLS) a kill or term drawn is a status instead,
# every draw as with kills: one numaplaced runs from start to end, so that
# its memory, descriptors and watches are one process's over the whole run.
chaos_schedule() {
	local seed=$1 ncpus=$3 kills=${5:-1} t=0 end=$(($2 * 1000)) r ev n q c
	local off_until=0 full_until=0 d cpu
	local -a out=()
	RANDOM=$seed
	local qos=(LSE LSE LSR LS BE partition)
	while :; do
		t=$((t + 1000 + RANDOM % 5000))
		((t < end)) || break
		r=$((RANDOM % 100))
		n=$((1 + RANDOM % 6)) q=${qos[RANDOM % 6]} c=$((1 + RANDOM % 2))
		if ((r < 18)); then ev="admit s$n $q $c"
		elif ((r < 26)); then ev="resize s$n $((1 + RANDOM % 3))"
		elif ((r < 38)); then ev="release s$n"
		elif ((r < 48)); then ev="spec f$((1 + n % 3)) $(((RANDOM % 3))) $c"
		elif ((r < 54)); then ev="unit u$((1 + n % 2)) $((RANDOM % 2)) ${q/partition/LS} $c"
		elif ((r < 58)); then ev="restart-unit u$((1 + n % 2))"
		elif ((r < 64)); then ev="reload"
		elif ((r < 67)); then ev="confined"
		elif ((r < 72)); then ev="admin $((RANDOM % 3))"
		elif ((r < 75)); then ev="burst"
		elif ((r < 79)); then ev=kill; ((kills)) || ev=status
		elif ((r < 82)); then ev=term; ((kills)) || ev=status
		elif ((r < 87)); then ev="hup $((RANDOM % 4))"
		elif ((r < 91)); then
			d=$((5000 + RANDOM % 15000)) cpu=$((1 + RANDOM % (ncpus - 1)))
			((t >= off_until)) || continue
			off_until=$((t + d + 1000))
			out+=("$t offline $cpu" "$((t + d)) online $cpu")
			continue
		elif ((r < 94)); then
			d=$((5000 + RANDOM % 15000))
			((t >= full_until)) || continue
			full_until=$((t + d + 1000))
			out+=("$t diskfull" "$((t + d)) diskfree")
			continue
		else ev="status"
		fi
		out+=("$t $ev")
	done
	((${4:-0} > 0)) && chaos_ctr_schedule "$seed" "$end" "${4:-0}" && out+=("${CTR_OUT[@]}")
	printf '%s\n' "${out[@]}" | sort -n -s -k1,1
}
# chaos_ctr_schedule SEED END_MS LEVEL: CTR_OUT, the container events, from
# RANDOM seeded anew from SEED (so that the events above do not change):
# three slots c1..c3, each started, then stopped, and so on, one slot
# event every 8-24 s (a start costs seconds under TCG: 90-chaos.sh):
#   ctr cN KIND QOS CPUS  start: KIND crun (cgroupfs driver, /np/cN-IDX),
#                         crun-sd (--systemd-cgroup,
#                         numaplace.slice:np:cN-IDX), and with LEVEL 2
#                         podman (--cgroup-parent numaplace.slice), in
#                         turn from a drawn one (every kind in any 2 or 3
#                         starts in a row); QOS
#                         LSE (2 in 3) or LS; CPUS 1 or 2 (as admit's):
#                         at most 6 CPUs asked by containers at once
#   ctr-stop cN HOW       HOW 0 or 1: the program ends (poststop releases);
#                         2: kill -9 of the runtime and of the container
#                         (no poststop: released once its cgroup is gone)
chaos_ctr_schedule() {
	local t=2000 n q c h nk=$(($3 > 1 ? 3 : 2)) k
	local -a up=(0 0 0 0) kinds=(crun crun-sd podman) qs=(LSE LSE LS)
	CTR_OUT=()
	RANDOM=$((($1 * 7 + 12345) % 1073741824))
	k=$((RANDOM % nk))
	while :; do
		t=$((t + 8000 + RANDOM % 16000))
		((t < $2)) || break
		n=$((1 + RANDOM % 3)) q=${qs[RANDOM % 3]} c=$((1 + RANDOM % 2)) h=$((RANDOM % 3))
		if ((up[n])); then
			CTR_OUT+=("$t ctr-stop c$n $h")
			up[n]=0
		else
			CTR_OUT+=("$t ctr c$n ${kinds[k % nk]} $q $c")
			k=$((k + 1)) up[n]=1
		fi
	done
}
