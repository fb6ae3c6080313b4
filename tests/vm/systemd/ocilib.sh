# shellcheck shell=bash
# /sdtest/ocilib.sh: OCI bundles for Debian's crun and podman in the systemd
# VM, with numaplace-oci-hook as their createRuntime and poststop hooks
# (80-containers, and 90-chaos's container events). On top of sdlib.sh.
#
#   . /sdtest/ocilib.sh

# oci_hooks: OCI_HOOKS = the "hooks" of dist/oci/config-snippet.json (the
# file users merge into a bundle), the hook's path made the image's
OCI_SNIP=/sdtest/oci/config-snippet.json
oci_hooks() {
	[ -f $OCI_SNIP ] || fail "no dist/oci/config-snippet.json in the image: $(ls /sdtest/oci 2>&1 | tr '\n' ' ')"
	OCI_HOOKS=$(jq -c --arg p "$NPHOOK" '.hooks | map_values(map(.path = $p))' $OCI_SNIP) || fail "jq on $OCI_SNIP"
}
# oci_hooksd: dist/oci's hooks.d files (a JSON with hook.path and stages)
# in /etc/containers/oci/hooks.d (podman reads it, mkroot.sh), their path
# made the image's hook; fails when there is none
oci_hooksd() {
	local f n=0
	for f in /sdtest/oci/*.json; do
		[ -f "$f" ] || continue
		jq -e '.hook.path and .stages' "$f" >/dev/null 2>&1 || continue
		jq --arg p "$NPHOOK" '.hook.path = $p' "$f" >/etc/containers/oci/hooks.d/50-numaplace-"$(basename "$f")"
		n=$((n + 1))
	done
	((n > 0)) || fail "no podman hooks.d file (a JSON with hook.path and stages) in dist/oci: $(ls /sdtest/oci 2>&1 | tr '\n' ' ')"
}
# oci_rootfs DIR: static busybox as the root (sh grep sleep cat true)
oci_rootfs() {
	local a
	mkdir -p "$1/bin" "$1/proc" "$1/dev" "$1/sys" "$1/tmp"
	cp /usr/bin/busybox "$1/bin/"
	for a in sh grep sleep cat true; do ln -sf busybox "$1/bin/$a"; done
}
# oci_bundle DIR CG ANN RES PROG: DIR/config.json (crun spec's, made once)
# with the hooks of oci_hooks, annotations ANN (a JSON object) and
# run.oci.hooks.stderr (crun drops the hooks' stderr without it: their
# messages would not be in crun's output; it opens /dev/stderr anew, so
# crun's output goes to a file opened for appending, or the hook's words
# overwrite crun's), cgroupsPath CG, RES (a JSON object) merged into
# linux.resources, and the program /bin/sh -c PROG; the root DIR/rootfs.
oci_bundle() {
	local b=$1
	[ -n "${OCI_HOOKS:-}" ] || oci_hooks
	[ -f "$b/config.json" ] || (cd "$b" && crun spec) || fail "crun spec in $b"
	jq --arg cg "$2" --argjson ann "$3" --argjson res "${4:-"{}"}" --argjson hooks "$OCI_HOOKS" \
		--arg prog "$5" '
		.process.terminal = false | .process.args = ["/bin/sh", "-c", $prog] |
		.annotations = ($ann + {"run.oci.hooks.stderr": "/dev/stderr"}) | .hooks = $hooks | .linux.cgroupsPath = $cg |
		.linux.resources = ((.linux.resources // {}) * $res)' \
		"$b/config.json" >"$b/c.json" && mv "$b/c.json" "$b/config.json" || fail "jq on $b/config.json"
}
# linux.resources of a Guaranteed container of N CPUs, as the kubelet
# writes them (quota/period = N, shares = N * 1024)
guar() { echo '{"cpu": {"quota": '$(($1 * 100000))', "period": 100000, "shares": '$(($1 * 1024))'}}'; }
# the annotations of a workload NAME of CPUS CPUs, class QOS
oci_ann() { # NAME QOS CPUS [MORE-ANNOTATIONS]
	echo '{"numaplace.io/qos": "'$2'", "numaplace.io/cpus": "'$3'", "numaplace.io/workload": "'$1'"'${4:+, $4}'}'
}
lse() { oci_ann "$1" LSE "$2" "${3:-}"; } # NAME CPUS [MORE-ANNOTATIONS]
