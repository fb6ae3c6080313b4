#!/usr/bin/env bash
# Install what the VM end-to-end harness needs on a Debian host.
# Idempotent; prints nothing when everything is already installed.
set -euo pipefail

PKGS=(qemu-system-x86 busybox-static cpio kmod gzip coreutils util-linux)

missing=()
for p in "${PKGS[@]}"; do
	st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	[[ $st == "install ok installed" ]] || missing+=("$p")
done
((${#missing[@]} == 0)) && exit 0

SUDO=()
if ((EUID != 0)); then
	command -v sudo >/dev/null || {
		echo "deps.sh: need root (or sudo) to install: ${missing[*]}" >&2
		exit 1
	}
	SUDO=(sudo)
fi

echo "deps.sh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt_install() {
	"${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" \
		</dev/null >/dev/null
}
if ! apt_install 2>/dev/null; then
	# Package lists may be absent or stale on a fresh machine.
	"${SUDO[@]}" apt-get update -qq </dev/null >/dev/null
	apt_install
fi
