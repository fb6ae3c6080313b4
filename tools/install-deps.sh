#!/usr/bin/env bash
# Install every build and test dependency with apt-get. Idempotent; quiet
# when everything is present.
set -euo pipefail

pkgs=(
	build-essential pkg-config clang llvm libclang-rt-14-dev
	libjansson-dev libhwloc-dev hwloc libcmocka-dev
	libbpf-dev bpftool libcgroup-dev cgroup-tools libsystemd-dev
	libmicrohttpd-dev libyaml-dev prometheus python3-jsonschema
	qemu-system-x86 busybox-static cpio kmod valgrind python3
	redis-tools gnuplot-nox
	scdoc bash-completion dpkg-dev debhelper lintian
)

missing=()
for p in "${pkgs[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing+=("$p")
	fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
echo "installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
