#!/bin/bash
# np-timeout: 1500
# containerd (issue 31; make check-containerd, and make check on 2node):
# Debian's containerd 1.6.20 with runc 1.1.5, both of runc's cgroup
# drivers, the native snapshotter, NRI v0.1 running numaplace-oci-hook
# invoke from /etc/nri/conf.json (conf containers "all": every container
# admitted on its resources, as the kubelet's static CPU manager would),
# numaplaced under the systemd driver. Driven through the CRI by cri.py
# (python3-grpcio, raw protobuf), one process for the whole scenario.
# Checked in the kernel's own files:
# - runc's systemd driver (SystemdCgroup = true; the container is the
#   scope cri-containerd-ID.scope itself): a Guaranteed 2-CPU container's
#   first action reads exactly its exclusive set in Cpus_allowed_list,
#   which is the scope's cpuset.cpus.effective and its AllowedCPUs= (set
#   through the bus); a second Guaranteed one shares no CPU with it; a
#   Burstable one runs on the shared pool, none of their CPUs; the pause
#   containers are left alone; hostile annotations (6 CPUs asked for a
#   100m container) refused: fail-open runs it on the shared pool,
#   fail-closed fails StartContainer with the reason; a daemon-reload and
#   a restart of containerd while they run move nothing; a container
#   killed without a stop is released within one period; stop and remove
#   release;
# - runc's cgroupfs driver: the same Guaranteed container placed, released
#   at stop and remove;
# - numaplaced down: fail-open starts the container unplaced, fail-closed
#   fails its start naming numaplaced.
. /sdtest/sdlib.sh
journal_on_fail containerd
journal_on_fail numaplaced
on_exit "systemctl stop containerd numaplaced"
t0=$(date +%s.%N)
el() { echo "$(date +%s.%N) $t0" | awk '{printf "%.1f", $1 - $2}'; }
command -v containerd >/dev/null || fail "no containerd in the image (run.sh --extra-pkgs 'containerd runc python3 python3-grpcio python3-protobuf')"
PERIOD=2
write_config '"cgroup_parent": "numaplace.slice", "reconcile_period_s": '$PERIOD',
  "node_policy": {"cpu_policy": "static", "reserved_cpus": "0"},
  "verify": {"enabled": "off"},
  "oci_hook": {"timeout_ms": 60000, "policy": {"rules": [
    {"cgroup_parent": "kubepods.slice", "qos": ["LSE", "LS", "BE"]},
    {"cgroup_parent": "kubepods", "qos": ["LSE", "LS", "BE"]}]}}'
start_numaplaced
mkdir -p /etc/containerd /etc/cni/net.d /var/lib/containerd /etc/nri /out
touch /etc/hosts /etc/resolv.conf # RunPodSandbox copies them
printf '{"version": "0.1", "plugins": [{"type": "%s", "conf": {"config": "%s", "containers": "all"}}]}\n' \
	"$NPHOOK" "$CONF" >/etc/nri/conf.json
# no overlay module and an initramfs root: native snapshots, no pivot_root
containerd_with() { # SYSTEMDCGROUP: containerd (re)started with runc's driver
	cat >/etc/containerd/config.toml <<TOML
version = 2
[plugins."io.containerd.grpc.v1.cri"]
  disable_apparmor = true
  sandbox_image = "registry.k8s.io/pause:3.6"
[plugins."io.containerd.grpc.v1.cri".containerd]
  snapshotter = "native"
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"
  pod_annotations = ["numaplace.io/*"]
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
  NoPivotRoot = true
  SystemdCgroup = $1
TOML
	systemctl restart containerd || fail "containerd did not start"
	for _ in $(seq 120); do ctr version >/dev/null 2>&1 && break; sleep 0.5; done
	for _ in $(seq 60); do ctr plugins ls | grep -q 'io.containerd.grpc.v1 *cri .*ok' && return 0; sleep 0.5; done
	fail "the CRI plugin is not ok: $(ctr plugins ls | grep cri)"
}
systemctl daemon-reload
containerd_with true
log "containerd (runc's systemd driver) and its CRI plugin up after $(el) s"

# One image as an OCI layout (busybox; Entrypoint: sleep), named as the
# pause image and as npbox:1, imported into the CRI's namespace.
I=/tmp/img
mkdir -p $I/rootfs/bin $I/rootfs/out $I/rootfs/proc $I/rootfs/dev $I/rootfs/sys $I/rootfs/etc $I/lay/blobs/sha256
cp /usr/bin/busybox $I/rootfs/bin/
blob() { # FILE: moved into the layout by its digest; "DIGEST SIZE"
	local d z
	d=$(sha256sum "$1" | cut -d' ' -f1) z=$(stat -c %s "$1")
	mv "$1" $I/lay/blobs/sha256/$d
	echo "$d $z"
}
tar -C $I/rootfs -cf $I/layer.tar .
read -r ld lz < <(blob $I/layer.tar)
printf '{"architecture":"amd64","os":"linux","config":{"Entrypoint":["/bin/busybox","sleep","1000000"]},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' $ld >$I/c.json
read -r cd cz < <(blob $I/c.json)
printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%d},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"sha256:%s","size":%d}]}' $cd $cz $ld $lz >$I/m.json
read -r md mz < <(blob $I/m.json)
printf '{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%d,"annotations":{"io.containerd.image.name":"registry.k8s.io/pause:3.6"}}]}' $md $mz >$I/lay/index.json
echo '{"imageLayoutVersion":"1.0.0"}' >$I/lay/oci-layout
tar -C $I/lay -cf $I/img.tar .
ctr -n k8s.io images import --snapshotter native $I/img.tar >/dev/null || fail "ctr images import"
ctr -n k8s.io images tag registry.k8s.io/pause:3.6 docker.io/library/npbox:1 >/dev/null || fail "ctr images tag"
log "images imported after $(el) s"

# ---- the CRI client, one process (coproc: no $(...) around its calls) ----
coproc CRI { exec python3 -u /sdtest/scenarios/cri.py 2>/run/np/cri.err; }
show_on_fail /run/np/cri.err
cri() { # JSON: the answer in ANS, the id in ID ("" when none)
	echo "$1" >&"${CRI[1]}" || fail "cri.py is gone: $(tail -n 5 /run/np/cri.err)"
	IFS= read -r -t 300 ANS <&"${CRI[0]}" || fail "cri.py: no answer to $1: $(tail -n 5 /run/np/cri.err)"
	# the answer's fields without jq (each jq costs a second under TCG)
	[[ $ANS =~ \"id\":\ \"([0-9a-f]+)\" ]] && ID=${BASH_REMATCH[1]} || ID=
	[[ $ANS =~ \"ok\":\ true ]] && OK=true || OK=false
	[[ $ANS =~ \"time\":\ ([0-9.]+) ]] && TOOK=${BASH_REMATCH[1]} || TOOK=
	echo "cri ${1:0:60}: ${ANS:0:100} ($(el) s)"
}
cri_ok() { # JSON WHAT: the command, which must succeed
	cri "$1"
	[ "$OK" = true ] || fail "$2: $(jq -r .error <<<"$ANS")"
}
IFS= read -r -t 120 ANS <&"${CRI[0]}" || fail "cri.py did not start: $(cat /run/np/cri.err)"
log "cri.py ready after $(el) s"

# numaplaced's status, read once per check (a call costs seconds under
# TCG); its container workloads by id
st() { STATUS=$("$NPC" status --json --socket "$SOCK") || fail "numaplace status failed"; }
wl() { jq -c --arg id "$1" '[.workloads[] | select(.container_id == $id)]' <<<"$STATUS"; }
wl_field() { wl "$1" | jq -r ".[0].$2 // \"none\""; }
nwl() { wl "$1" | jq length; }
gone() { st; [ "$(nwl "$1")" = 0 ]; }
eff() { cat "/sys/fs/cgroup$1/cpuset.cpus.effective" 2>/dev/null; }
# pod NAME PARENT [ANNOTATIONS-JSON]: a sandbox, its id in POD_<NAME>
pod() {
	cri_ok "{\"op\":\"pod\",\"name\":\"$1\",\"parent\":\"$2\",\"ann\":${3:-{\}}}" "RunPodSandbox $1"
	eval "POD_$1=$ID"
	SANDBOXES+=" $ID"
}
# start POD PERIOD QUOTA SHARES: a container of POD (created and started;
# its answer in ANS, its id in ID), whose first action writes its
# Cpus_allowed_list to /out/POD
start() { cri "{\"op\":\"run\",\"pod\":\"$1\",\"name\":\"main\",\"res\":[$2,$3,$4],\"out\":\"/out/$1\"}"; }
# placed POD CGROUP (ID: the container's id): started, the container's
# first action saw what numaplaced placed, which is its cgroup's effective
# cpuset; sets CID, SAW, PLACED, CG
placed() {
	[ "$OK" = true ] || fail "$1: StartContainer: $(jq -r .error <<<"$ANS")"
	CID=$ID
	try_for 60 grep -q Cpus_allowed_list "/out/$1" || fail "$1: /out/$1 not written by the container"
	SAW=$(awk '{print $2}' "/out/$1")
	st
	read -r PLACED CG < <(jq -r --arg id "$CID" '[.workloads[] | select(.container_id == $id)][0] // {} | "\(.cpuset // "none") \(.cgroup // "none")"' <<<"$STATUS")
	assert_eq "$CG" "${2/ID/$CID}" "$1: the cgroup admitted"
	assert_eq "$SAW" "$PLACED" "$1: the container's first action saw Cpus_allowed_list"
	assert_eq "$(eff "$CG")" "$PLACED" "$1: the container cgroup's cpuset.cpus.effective"
	log "$1: started in $TOOK s, placed on $PLACED in $CG ($(el) s)"
}
GUAR="100000 200000 2048" # the kubelet's 2 CPUs: quota/period 2, shares 2048
BURST="0 0 512"           # a request of 500m, no limit
guaranteed() { # POD CGROUP
	start "$1" $GUAR
	placed "$@"
	assert_eq "$(cpulist_count "$PLACED")" 2 "$1: CPUs placed for a Guaranteed 2-CPU container"
	cpus_disjoint "$PLACED" 0 || fail "$1: placed $PLACED holds the reserved CPU 0"
}
released() { # POD CID...: stopped and removed, with their pod; nothing left
	local sb c p=$1
	shift
	for c in "$@"; do
		cri_ok "{\"op\":\"stop\",\"id\":\"$c\"}" "StopContainer $p"
		cri_ok "{\"op\":\"rm\",\"id\":\"$c\"}" "RemoveContainer $p"
	done
	eval "sb=\$POD_$p"
	cri_ok "{\"op\":\"stoppod\",\"id\":\"$sb\"}" "StopPodSandbox $p"
	cri_ok "{\"op\":\"rmpod\",\"id\":\"$sb\"}" "RemovePodSandbox $p"
}
scope_cg() { echo "/kubepods.slice/kubepods-pod$1.slice/cri-containerd-ID.scope"; }
# when numaplaced logged "released NAME" (unix seconds)
released_at() { journalctl -u numaplaced -o short-unix --no-pager | awk -v w="released $1 " 'index($0, w) {print $1; exit}'; }
SANDBOXES=

# ---- runc's systemd driver ------------------------------------------------
# g1, g2: Guaranteed, 2 exclusive CPUs each, none shared
pod g1 /kubepods.slice/kubepods-podg1.slice
guaranteed g1 "$(scope_cg g1)"
G1=$CID G1CPUS=$PLACED G1CG=$CG
assert_eq "$(prop_cpus "cri-containerd-$G1.scope")" "$G1CPUS" "g1: the scope's AllowedCPUs (set through the bus)"
pod g2 /kubepods.slice/kubepods-podg2.slice
guaranteed g2 "$(scope_cg g2)"
G2=$CID G2CPUS=$PLACED G2CG=$CG
cpus_disjoint "$G1CPUS" "$G2CPUS" || fail "g1 ($G1CPUS) and g2 ($G2CPUS) share CPUs"
# b1: Burstable, on the shared pool: none of their CPUs
pod b1 /kubepods.slice/kubepods-podb1.slice
start b1 $BURST
placed b1 "$(scope_cg b1)"
B1=$CID B1CPUS=$PLACED B1CG=$CG
cpus_disjoint "$B1CPUS" "$G1CPUS,$G2CPUS" || fail "b1 ($B1CPUS) runs on exclusive CPUs ($G1CPUS, $G2CPUS)"
assert_eq "$(cpulist_count "$B1CPUS")" 4 "b1: the shared pool's CPUs (8 less 2 x 2 exclusive)"

# hostile: 6 CPUs asked for a 100m container (the pod's annotations)
pod h1 /kubepods.slice/kubepods-podh1.slice '{"numaplace.io/qos":"LSE","numaplace.io/cpus":"6"}'
start h1 100000 10000 102
placed h1 "$(scope_cg h1)"
H1=$CID
assert_eq "$PLACED" "$B1CPUS" "h1 (refused, fail-open): on the shared pool"
journalctl -u containerd --no-pager | grep -q "fail-open: .*cpu 6 is above the container's CPU limit of 100m" ||
	fail "h1: no fail-open reason in containerd's journal: $(journalctl -u containerd --no-pager | grep numaplace | tail -n 3)"
pod h2 /kubepods.slice/kubepods-podh2.slice '{"numaplace.io/qos":"LSE","numaplace.io/cpus":"6","numaplace.io/on-failure":"fail-closed"}'
start h2 100000 10000 102
[ "$OK" = false ] || fail "h2 (fail-closed) started: $ANS"
assert_match "$(jq -r .error <<<"$ANS")" "fail-closed: .*cpu 6 is above the container's CPU limit of 100m" "h2: StartContainer's error"
st
assert_eq "$(nwl "$ID")" 0 "h2: workloads of the refused container"
for sb in $SANDBOXES; do
	assert_eq "$(nwl "$sb")" 0 "workloads of the pause container $sb (conf pause: ignore)"
done
log "hostile annotations refused ($(el) s)"

# nothing moves at a daemon-reload
snap() { st; echo "$(wl_field "$G1" cpuset) $(eff "$G1CG") $(wl_field "$B1" cpuset) $(eff "$B1CG") $(jq -r .counters.writes <<<"$STATUS")"; }
before="$(snap) $(wl_field "$G2" cpuset) $(eff "$G2CG")"
systemctl daemon-reload
sleep $((PERIOD + 1))
assert_eq "$(snap) $(wl_field "$G2" cpuset) $(eff "$G2CG")" "$before" "after a daemon-reload: placements, effective cpusets, numaplaced's writes"
# g2 killed while containerd is down (no delete will come): released
# within one period of its scope going
systemctl stop containerd
pid=$(head -n 1 "/sys/fs/cgroup$G2CG/cgroup.procs")
[ -n "$pid" ] || fail "g2: no process in $G2CG"
name=$(wl_field "$G2" name)
k0=$(date +%s.%N)
kill -9 "$pid"
try_for 30 gone "$G2" || fail "g2: still a workload 30 s after its kill: $(wl "$G2")"
took=$(echo "$(released_at "$name") $k0" | awk '{printf "%.2f", $1 - $2}')
log "g2 killed, containerd down: released $took s after the kill (period $PERIOD s): $(journalctl -u numaplaced --no-pager | grep -o "released $name .*")"
awk -v t="$took" -v p="$PERIOD" 'BEGIN {exit !(t >= 0 && t <= p)}' || fail "g2: released $took s after its kill, not within one period ($PERIOD s)"
journalctl -u numaplaced --no-pager | grep -q "released $name (cgroup removed)" || fail "g2: not released as a removed cgroup"
st
B1CPUS=$(wl_field "$B1" cpuset)
cpus_same "$B1CPUS" "$(cpus_minus 0-7 "$G1CPUS" | tr ' ' ,)" || fail "b1: $B1CPUS after g2's release, not the shared pool"
# nothing moves at containerd's start
before=$(snap)
containerd_with true
cri_ok '{"op":"ping"}' "containerd after its restart"
sleep $((PERIOD + 1))
assert_eq "$(snap)" "$before" "after containerd's restart: placements, effective cpusets, numaplaced's writes"
log "daemon-reload and containerd restart: nothing moved ($before) ($(el) s)"
released g1 "$G1"
released b1 "$B1"
released h1 "$H1"
st
for c in "$G1" "$B1" "$H1"; do assert_eq "$(nwl "$c")" 0 "workloads of container $c after stop and remove"; done
[ -d "/sys/fs/cgroup$G1CG" ] && fail "g1: its scope $G1CG is still there"
log "systemd driver done ($(el) s)"

# ---- runc's cgroupfs driver -----------------------------------------------
containerd_with false
cri_ok '{"op":"ping"}' "containerd with the cgroupfs driver"
pod g3 /kubepods/podg3
guaranteed g3 /kubepods/podg3/ID
released g3 "$CID"
st
assert_eq "$(nwl "$CID")" 0 "g3: workloads after stop and remove"
log "cgroupfs driver done ($(el) s)"

# ---- numaplaced down --------------------------------------------------------
systemctl stop numaplaced
pod d1 /kubepods/podd1
start d1 $GUAR
[ "$OK" = true ] || fail "d1 (fail-open, numaplaced down) did not start: $(jq -r .error <<<"$ANS")"
try_for 60 grep -q Cpus_allowed_list /out/d1 || fail "d1: /out/d1 not written"
assert_eq "$(awk '{print $2}' /out/d1)" 0-7 "d1 (numaplaced down, fail-open): unplaced"
pod d2 /kubepods/podd2 '{"numaplace.io/on-failure":"fail-closed"}'
start d2 $GUAR
[ "$OK" = false ] || fail "d2 (fail-closed, numaplaced down) started"
assert_match "$(jq -r .error <<<"$ANS")" "fail-closed: .*numaplaced" "d2: StartContainer's error"
log "numaplaced down: fail-open started, fail-closed refused ($(el) s)"
# how long containerd took over each sandbox (RunPodSandbox, to its id)
journalctl -u containerd -o short-monotonic --no-pager | grep -E 'RunPodSandbox for|returns sandbox id' | sed -E 's/^\[ *([0-9.]+)\].*(RunPodSandbox for|returns sandbox id).*Name:([a-z0-9]+),.*/\1 \2 \3/' | head -n 20
log "total $(el) s"
