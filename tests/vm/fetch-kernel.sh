#!/usr/bin/env bash
# fetch-kernel.sh [OUTDIR]
#
# Download Debian's newest linux-image-6.1.*-amd64 package with
# `apt-get download` and extract it with `dpkg-deb -x` into OUTDIR
# (default: build/vm/kernel under the repository root).  Cached: when
# OUTDIR already holds an extracted kernel nothing is downloaded.
# Prints the absolute path of the vmlinuz on stdout (progress on stderr).
#
# Environment:
#   NP_VM_KERNEL_PKG   force a package name (e.g. linux-image-6.1.0-56-amd64)
#   NP_VM_KERNEL_REFRESH=1  ignore the cache and fetch again
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
OUT=${1:-$ROOT/build/vm/kernel}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

say() { echo "fetch-kernel: $*" >&2; }

cached_vmlinuz() {
	[[ -f $OUT/package && -L $OUT/vmlinuz && -s $OUT/vmlinuz ]] || return 1
	if [[ -n ${NP_VM_KERNEL_PKG:-} ]]; then
		[[ $(head -n1 "$OUT/package") == "$NP_VM_KERNEL_PKG "* ]] || return 1
	fi
	echo "$OUT/vmlinuz"
}

# Serialise concurrent runs (e.g. two topologies started in parallel).
exec 9>"$OUT/.lock"
flock 9

if [[ ${NP_VM_KERNEL_REFRESH:-0} != 1 ]] && cached_vmlinuz; then
	exit 0
fi

pick_pkg() {
	# Newest ABI first; at equal ABI prefer the -unsigned variant (same
	# vmlinuz bits minus the signature, and no signed-template deps).
	apt-cache search --names-only '^linux-image-6\.1\.0-[0-9]+-amd64' 2>/dev/null |
		awk '{print $1}' |
		grep -E '^linux-image-6\.1\.0-[0-9]+-amd64(-unsigned)?$' |
		sed -E 's/^(linux-image-6\.1\.0-([0-9]+)-amd64)(-unsigned)?$/\2 \3 &/' |
		sort -k1,1nr -k2,2r | awk 'NR==1{print $NF}'
}

pkg=${NP_VM_KERNEL_PKG:-}
if [[ -z $pkg ]]; then
	pkg=$(pick_pkg || true)
	if [[ -z $pkg ]]; then
		say "no linux-image-6.1 package known to apt; running apt-get update"
		if ((EUID == 0)); then apt-get update -qq </dev/null >/dev/null; else sudo apt-get update -qq </dev/null >/dev/null; fi
		pkg=$(pick_pkg || true)
	fi
	[[ -n $pkg ]] || { say "cannot find a linux-image-6.1.*-amd64 package"; exit 1; }
fi
ver=$(apt-cache policy "$pkg" | awk '/Candidate:/{print $2}')
say "downloading $pkg $ver"

tmp=$(mktemp -d "$OUT/.fetch.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# apt-get download runs its fetcher as _apt when root; let it write here.
chmod 0777 "$tmp"
(cd "$tmp" && apt-get download -qq "$pkg" </dev/null >/dev/null 2>"$tmp/apt.err") || {
	cat "$tmp/apt.err" >&2
	exit 1
}
deb=$(find "$tmp" -maxdepth 1 -name '*.deb' | head -n1)
[[ -n $deb ]] || { say "apt-get download produced no .deb"; exit 1; }

say "extracting $(basename "$deb")"
dpkg-deb -x "$deb" "$tmp/root"
vmlinuz=$(find "$tmp/root/boot" -maxdepth 1 -name 'vmlinuz-*' | head -n1)
[[ -n $vmlinuz ]] || { say "no /boot/vmlinuz-* in $deb"; exit 1; }
krel=${vmlinuz##*/vmlinuz-}

# The package ships no modules.dep (made at install time); make it here so
# mkinitramfs.sh --module can resolve dependencies.
if [[ -d $tmp/root/lib/modules/$krel ]] && command -v depmod >/dev/null; then
	depmod -b "$tmp/root" "$krel"
fi

rm -rf "$OUT/root"
mv "$tmp/root" "$OUT/root"
ln -sfn "root/boot/vmlinuz-$krel" "$OUT/vmlinuz"
[[ -d $OUT/root/lib/modules/$krel ]] && ln -sfn "root/lib/modules/$krel" "$OUT/modules"
printf '%s %s %s\n' "$pkg" "$ver" "$krel" >"$OUT/package"
say "cached $pkg $ver (kernel $krel) in $OUT"
echo "$OUT/vmlinuz"
