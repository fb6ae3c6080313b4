# shellcheck shell=bash
# Leaks and the end of 90-chaos. Every LEAK_EVERY seconds, from the kernel
# and systemd: numaplaced's RSS (VmRSS), open descriptors (/proc/PID/fd),
# inotify watches (the "inotify wd:" lines of /proc/PID/fdinfo), the
# entries of its pinned BPF maps (`numaplace violations --json --all`
# reads them from bpffs, not from numaplaced), systemd's units and the
# cgroups (directories of /sys/fs/cgroup). After warm-up (the first fifth
# of the run, and each process's first 30 s: a restart starts a new
# process), least-squares slopes per minute: within each process for what
# a restart resets (RSS, descriptors, watches), over the whole run for
# what outlives it (map entries, units, cgroups).

LEAK_NEXT=0
leak_due() { ((SECONDS < LEAK_NEXT)) || leak_sample; }
bpf_entries() {
	"$NPC" violations --json --all 2>/dev/null |
		jq '.workloads | length' 2>/dev/null || echo -1
}
leak_sample() {
	local p rss fds ino bpf units cgs
	LEAK_NEXT=$((SECONDS + LEAK_EVERY))
	p=$(mainpid)
	[ "${p:-0}" -gt 0 ] || return 0
	rss=$(sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\).*/\1/p' /proc/$p/status 2>/dev/null)
	fds=$(ls /proc/$p/fd 2>/dev/null | wc -l)
	ino=$(cat /proc/$p/fdinfo/* 2>/dev/null | grep -c '^inotify wd:')
	bpf=$(ls /sys/fs/bpf/numaplace/v2 2>/dev/null | wc -l)/$(bpf_entries)
	units=$(systemctl list-units --all --plain --no-legend 2>/dev/null | wc -l)
	cgs=$(find /sys/fs/cgroup -mindepth 1 -type d 2>/dev/null | wc -l)
	[ -n "$rss" ] || return 0
	# and how many workload cgroups there are (descriptors and watches
	# follow them: a slope is a leak only at a like number)
	echo "CHAOS-LEAK $SECONDS $p $rss $fds $ino ${bpf#*/} $units $cgs maps=${bpf%/*} workloads=$(find $SCOPE -mindepth 1 -maxdepth 1 -type d ! -name '.*' | wc -l)"
	echo "$SECONDS $p $rss $fds $ino ${bpf#*/} $units $cgs" >>$CH/leaks
}
# slopes: "NAME SLOPE/min N" for each column after warm-up
leak_report() {
	awk -v warm=$((MIN * 60 / 5)) '
	{ t[NR] = $1; pid[NR] = $2; for (c = 3; c <= 8; c++) v[NR, c] = $c
	  if (!(($2) in first)) first[$2] = $1 }
	END {
	  split("rss_kB fds inotify bpf_entries units cgroups", name, " ")
	  for (c = 3; c <= 8; c++) {
	    per = (c <= 5)  # reset by a restart: within each process
	    delete sx; delete sv; delete n
	    for (i = 1; i <= NR; i++) {
	      if (t[i] < warm || t[i] - first[pid[i]] < 30) continue
	      g = per ? pid[i] : "all"; sx[g] += t[i]; sv[g] += v[i, c]; n[g]++
	    }
	    num = 0; den = 0; m = 0
	    for (i = 1; i <= NR; i++) {
	      if (t[i] < warm || t[i] - first[pid[i]] < 30) continue
	      g = per ? pid[i] : "all"
	      if (n[g] < 2) continue
	      dx = t[i] - sx[g] / n[g]; num += dx * (v[i, c] - sv[g] / n[g]); den += dx * dx; m++
	    }
	    printf "%s %s %d\n", name[c - 2], (den > 0 ? sprintf("%.3f", num / den * 60) : "n/a"), m
	  }
	}' $CH/leaks
}

# the end: every request answered, CPUs online, disk free, every workload
# released (the checker still running), then the figures, a clean stop of
# numaplaced and what it must have given back
chaos_end() {
	local n w lw lu lk f left
	for n in "${!BUSY[@]}"; do wait_idle $n; done
	for f in /sys/devices/system/cpu/cpu[0-9]*/online; do echo 1 >$f; done
	rm -f $STATE/chaos-fill
	try_for 120 answering || fail "numaplaced does not answer at the end"
	resolve
	leak_sample
	for n in s1 s2 s3 s4 s5 s6 u1 u2; do
		getm $n
		[ "$MST" = absent ] && continue
		"$NPC" release $n --socket "$SOCK" >$CH/out/$n.end 2>&1 || true
		grep -q "^released $n\$" $CH/out/$n.end && setm $n "absent - $MK -"
	done
	for f in f1 f2 f3; do rm -f $SPECS/$f.json; setm $f "absent - cg -"; done
	try_for 120 sh -c "[ -z \"\$(find $SCOPE -mindepth 1 -maxdepth 1 -type d ! -name '.*')\" ]" ||
		chaos_fail "workload cgroups left after every release: $(find $SCOPE -mindepth 1 -maxdepth 1 -type d | tr '\n' ' ')"
	sleep 3
	touch $CH/stop
	wait $CHK
	[ ! -e $CH/fail ] || chaos_fail "$(cat $CH/fail)"
	read -r w lw lu lk <<<"$(awk '{n++; if ($3 > m) m = $3; if ($4 >= u) {u = $4; k = $2}} END {print n + 0, m + 0, u + 0, k}' $CH/windows)"
	echo "CHAOS-SUMMARY seed=$SEED topo=$NP_TOPO minutes=$MIN events=${C[events]:-0}/$1" \
		"answers: acked=$NACK refused=$NREJ unreachable=$NUNREACH cut=$NCUT" \
		"kills=${C[kills]:-0} terms=${C[terms]:-0} restarts=${C[restarts]:-0} held=${C[restart_held]:-0}" \
		"reloads=${C[reloads]:-0} hups=${C[hups]:-0} admin=${C[admin]:-0} hotplugs=${C[offline]:-0}" \
		"diskfull=${C[diskfull]:-0} bursts=${C[bursts]:-0}/$((${C[burst_ok]:-0}))ok" \
		"windows=$w longest=${lw}ms longest_up=${lu}ms($lk) checks=$(cut -d' ' -f1 $CH/ticks)"
	sort -k3,3nr $CH/windows | head -n 5 | sed 's/^/CHAOS-TOPWIN /'
	leak_report | sed 's/^/CHAOS-SLOPE /'
	systemctl stop numaplaced
	irq_snapshot >$CH/irq-after
	host_snapshot >$CH/host-after
	cmp -s $CH/host-before $CH/host-after ||
		fail "host units not given back: before: $(tr '\n' ';' <$CH/host-before) after: $(tr '\n' ';' <$CH/host-after)"
	cmp -s $CH/irq-before $CH/irq-after ||
		fail "IRQs not given back: $(diff -u $CH/irq-before $CH/irq-after | grep '^[-+][^-+]' | head -n 8 | tr '\n' ';')"
	left=$(find /sys/fs/cgroup/numaplace.slice -mindepth 1 -type d ! -name 'chaos-u*' 2>/dev/null | grep -v "$SCOPE\$\|$SCOPE/\.np" | tr '\n' ' ')
	[ -z "$left" ] || fail "cgroups left below numaplace.slice: $left"
	pass "seed $SEED: ${C[events]:-0} events, ${C[kills]:-0} kills, ${C[terms]:-0} SIGTERMs, ${C[reloads]:-0} reloads, ${C[hups]:-0} hups, ${C[offline]:-0} hotplugs, ${C[diskfull]:-0} full disks; $w windows, longest ${lw} ms (${lu} ms with numaplaced up)"
}
