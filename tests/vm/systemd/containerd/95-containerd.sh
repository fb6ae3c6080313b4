#!/bin/bash
# containerd (issue 31, item 3; make check-containerd, not in make check):
# Debian's containerd 1.6.20 with runc 1.1.5 (runc's cgroupfs driver,
# SystemdCgroup false; see below for true), the native
# snapshotter, NRI v0.1 running numaplace-oci-hook invoke from
# /etc/nri/conf.json, numaplaced under the systemd driver. Driven through
# the CRI by cri.py (python3-grpcio, raw protobuf): a host-network pod
# whose annotations (pod_annotations numaplace.io/*) ask LSE for 2 CPUs, a
# Guaranteed 2-CPU container from a locally imported image. In the
# kernel's own files: the container's first action reads its
# Cpus_allowed_list (/proc/self/status) and it is exactly the exclusive
# set numaplaced placed, which is also its cgroup's cpuset.cpus.effective;
# the pause container is left alone; stop and remove release it.
# Not here: runc's systemd driver (containerd_with true, pod systemd
# /numaplace.slice /numaplace.slice/cri-containerd-ID.scope) puts the
# process in the scope cri-containerd-ID.scope itself, and numaplaced
# refuses to write a systemd unit's own cgroup ("the container must run in
# a cgroup below it"): measured 2026-11-29, the plugin fails open there.
. /sdtest/sdlib.sh
journal_on_fail containerd
journal_on_fail numaplaced
on_exit "systemctl stop containerd numaplaced"
t0=$(date +%s.%N)
el() { echo "$(date +%s.%N) $t0" | awk '{printf "%.1f", $1 - $2}'; }
command -v containerd >/dev/null || fail "no containerd in the image (run.sh --extra-pkgs 'containerd runc python3 python3-grpcio python3-protobuf')"
write_config '"cgroup_parent": "numaplace.slice", "reconcile_period_s": 2,
  "node_policy": {"cpu_policy": "static", "reserved_cpus": "0"},
  "verify": {"enabled": "off"},
  "oci_hook": {"timeout_ms": 60000, "policy": {"rules": [{"cgroup_parent": "np", "qos": ["LSE", "LS"]},
    {"cgroup_parent": "numaplace.slice", "qos": ["LSE", "LS"]}]}}'
start_numaplaced
mkdir -p /etc/containerd /etc/cni/net.d /var/lib/containerd /etc/nri /out
touch /etc/hosts /etc/resolv.conf # RunPodSandbox copies them
printf '{"version": "0.1", "plugins": [{"type": "%s", "conf": {"config": "%s"}}]}\n' \
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
containerd_with false
log "containerd and its CRI plugin up after $(el) s"

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

# pod DRIVER CGROUP_PARENT WANT_CGROUP (with ID for the container's id)
pod() {
	local out saw placed cid
	out=$(python3 /sdtest/scenarios/cri.py "$NPC" "$SOCK" "$2" "web-$1" 2>&1) ||
		fail "$1: cri.py: $(echo "$out" | tail -n 5)"
	echo "$out" | while read -r l; do log "$1: cri.py: $l"; done
	val() { echo "$out" | awk -v k="$1" '$1 == k {print $2}'; }
	saw=$(val saw) placed=$(val placed) cid=$(val container)
	[ -n "$placed" ] && [ "$placed" != none ] || fail "$1: numaplaced has no workload for container $cid"
	assert_eq "$saw" "$placed" "$1: the container's first action saw Cpus_allowed_list"
	assert_eq "$(cpulist_count "$placed")" 2 "$1: CPUs placed for a Guaranteed 2-CPU container"
	cpus_disjoint "$placed" 0 || fail "$1: placed $placed holds the reserved CPU 0"
	assert_eq "$(val effective)" "$placed" "$1: the container cgroup's cpuset.cpus.effective"
	assert_eq "$(echo "$out" | awk '$1 == "placed" {print $3}')" "${3/ID/$cid}" "$1: the cgroup admitted"
	assert_eq "$(val pause-placed)" 0 "$1: workloads of the pause container (conf pause: ignore)"
	assert_eq "$(val after)" 0 "$1: workloads of the container after StopContainer and RemoveContainer"
}
pod cgroupfs /np/pod1 /np/pod1/ID
log "total $(el) s"
