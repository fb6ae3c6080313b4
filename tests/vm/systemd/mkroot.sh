#!/usr/bin/env bash
# mkroot.sh [--out FILE] [--cache DIR]
#
# The base root of the systemd test VM: Debian 12's systemd 252 as PID 1,
# dbus, journald, util-linux, jq, busybox applets, and the libraries
# numaplaced links (jansson, hwloc, libbpf, libelf), crun and podman (for
# the OCI hook scenario; /etc/containers/{containers,storage}.conf made
# here: no pivot_root, vfs storage, no network plugins), assembled from
# Debian packages (apt-get download + dpkg-deb, no maintainer scripts) into a
# merged-/usr tree and packed as a gzip'd newc cpio.  The recipe is the one
# verified in shared/reference/systemd_vm.md, section 1.  dpkg, perl-base
# and init-system-helpers are in, with dpkg's database of what was
# unpacked, for the Debian package scenario (95-deb: dpkg -i, -r, -P with
# the package's maintainer scripts); 6.8 MB of the archive (41.5 -> 48.4).
#
# Cached: the archive's name carries a hash of this script, so it is built
# once and rebuilt only when the script (its package list) changes.  The
# .debs are kept in DIR/debs.  Prints the archive's path.  Run as root
# (mknod).  Environment: NP_SDVM_REBUILD=1 builds again; EXTRA_PKGS and
# EXTRA_SKIP add packages to install / to leave out of the closure (they
# are part of the cache key).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../../.." && pwd)
cache=$REPO/build/vm/sd-cache
out=
while (($#)); do
	case $1 in
	--out) out=$2; shift 2 ;;
	--cache) cache=$2; shift 2 ;;
	*) echo "mkroot.sh: unknown argument: $1" >&2; exit 2 ;;
	esac
done
((EUID == 0)) || { echo "mkroot.sh: needs root (mknod, file ownership)" >&2; exit 1; }

EXTRA_PKGS=${EXTRA_PKGS:-}
EXTRA_SKIP=${EXTRA_SKIP:-}
key=$( (cat "${BASH_SOURCE[0]}"; echo "$EXTRA_PKGS/$EXTRA_SKIP") | sha256sum | cut -c1-12)
out=${out:-$cache/base-$key.cpio.gz}
# One builder at a time (make check-vm runs two VM lanes at once): the
# second waits, then finds the first one's archive.
mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9
if [[ -s $out && ${NP_SDVM_REBUILD:-0} != 1 ]]; then
	echo "$out"
	exit 0
fi

PKGS="systemd libsystemd0 dbus dbus-daemon util-linux mount coreutils bash procps
      grep sed findutils jq busybox-static libjansson4 libhwloc15 libbpf1 libelf1
      crun podman
      dpkg tar perl-base init-system-helpers libc-bin libmicrohttpd12 libyaml-0-2
      $EXTRA_PKGS"
# podman's closure without the network plugins, iptables and gnupg (41 MB
# gz instead of 71 MB; podman runs with --network none): systemd_vm.md 5.
SKIP=" debconf cdebconf adduser perl usrmerge usr-is-merged install-info libpam-modules libpam-modules-bin libpam-runtime
 passwd base-files debianutils libelogind0
 containernetworking-plugins iptables gnupg dirmngr gpg-agent gpgsm pinentry-curses
 sysvinit-utils $EXTRA_SKIP "
DEBS=$cache/debs
mkdir -p "$cache"
ROOT=$(mktemp -d "$cache/root.XXXXXX")
trap 'rm -rf "$ROOT"' EXIT

# The dependency closure: first member of each `a | b`, virtual packages
# by their first provider; many packages per apt-cache call.
deps_of() {
	apt-cache depends --no-recommends --no-suggests --no-conflicts --no-breaks \
		--no-replaces --no-enhances "$@" | awk '
	/^ [ |](Pre)?Depends: / { skip = inalt; inalt = ($0 ~ /^ \|/); wp = 0
	  if (skip) next; if ($2 ~ /^</) wp = 1; else print $2; next }
	/^    [^ ]/ { if (wp) { print $1; wp = 0 } }'
}
if ! apt-cache show systemd >/dev/null 2>&1; then
	apt-get update -qq </dev/null >/dev/null
fi
declare -A seen
read -r -a queue <<<"$(echo $PKGS)"
while ((${#queue[@]})); do
	new=()
	for p in "${queue[@]}"; do
		p=${p%:any}
		[[ -n ${seen[$p]:-} || $SKIP == *" $p "* ]] && continue
		seen[$p]=1
		new+=("$p")
	done
	((${#new[@]})) || break
	mapfile -t queue < <(deps_of "${new[@]}" | sort -u)
done
pkgs=$(printf '%s\n' "${!seen[@]}" | sort)
mkdir -p "$DEBS"
chmod 0777 "$DEBS" # apt's _apt user downloads into it
need=$(for p in $pkgs; do compgen -G "$DEBS/${p}_*.deb" >/dev/null || echo "$p"; done)
if [[ -n $need ]]; then
	# shellcheck disable=SC2086 # a list of package names
	(cd "$DEBS" && apt-get download -qq $need </dev/null >/dev/null) || {
		apt-get update -qq </dev/null >/dev/null
		(cd "$DEBS" && apt-get download -qq $need </dev/null >/dev/null)
	}
fi

mkdir -p "$ROOT"/usr/{bin,sbin,lib,lib64}
for d in bin sbin lib lib64; do ln -s "usr/$d" "$ROOT/$d"; done
# dpkg's database says what is there: each package "install ok installed"
# with its control fields and its file list (no maintainer script ran, as
# none does here), so that dpkg -i of the project's package in the guest
# (scenario 95-deb) finds its dependencies and knows whose files are whose.
mkdir -p "$ROOT"/var/lib/dpkg/{info,updates,triggers,alternatives}
: >"$ROOT/var/lib/dpkg/available"
echo 1 >"$ROOT/var/lib/dpkg/info/format" # multiarch: pkg:arch.list for Multi-Arch: same
for p in $pkgs; do
	deb=$(ls "$DEBS/${p}"_*.deb | sort -V | tail -n1)
	# --keep-directory-symlink: bin -> usr/bin must stay a link.
	dpkg-deb --fsys-tarfile "$deb" | tar -xv --keep-directory-symlink -C "$ROOT" |
		sed 's|^\./$|/.|; s|^\./|/|; s|/$||' >"$ROOT/var/lib/dpkg/info/$p.list"
	ma=$(dpkg-deb -f "$deb" Multi-Arch)
	[[ $ma == same ]] && mv "$ROOT/var/lib/dpkg/info/$p.list" "$ROOT/var/lib/dpkg/info/$p:$(dpkg-deb -f "$deb" Architecture).list"
	dpkg-deb -f "$deb" | sed '1a Status: install ok installed' >>"$ROOT/var/lib/dpkg/status"
	echo >>"$ROOT/var/lib/dpkg/status"
done
rm -rf "$ROOT"/usr/share/{doc,man,info,locale,lintian,bash-completion,zsh,bug} \
	"$ROOT"/usr/lib/x86_64-linux-gnu/gconv
find "$ROOT" -name '*.a' -delete

cd "$ROOT"
ln -sf bash usr/bin/sh # /bin/sh normally comes from dash
for a in $(usr/bin/busybox --list); do
	case $a in init | linuxrc | poweroff | reboot | halt | shutdown | sh) continue ;; esac
	[[ -e usr/bin/$a || -e usr/sbin/$a ]] || ln -s busybox "usr/bin/$a"
done
ln -s usr/lib/systemd/systemd init
mkdir -p dev proc sys run tmp root var/tmp etc/systemd/system/multi-user.target.wants \
	usr/local/sbin sdtest etc/numaplace
chmod 1777 tmp var/tmp
mknod -m 600 dev/console c 5 1
mknod -m 666 dev/null c 1 3
echo 0123456789abcdef0123456789abcdef >etc/machine-id
echo sdvm >etc/hostname
printf 'NAME="Debian GNU/Linux"\nID=debian\nVERSION_ID="12"\n' >usr/lib/os-release
ln -s ../usr/lib/os-release etc/os-release # base-files is skipped
printf '%s\n' root:x:0:0:root:/root:/bin/bash \
	messagebus:x:100:101::/nonexistent:/usr/sbin/nologin \
	systemd-network:x:998:998::/:/usr/sbin/nologin \
	nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin >etc/passwd
printf '%s\n' root:x:0: tty:x:5: disk:x:6: kmem:x:15: utmp:x:43: messagebus:x:101: \
	systemd-journal:x:999: systemd-network:x:998: nogroup:x:65534: >etc/group
echo 'root::0:0:99999:7:::' >etc/shadow
chmod 600 etc/shadow
# Units that have nothing to do in this VM (or wait for what it lacks).
for u in getty.target serial-getty@.service getty-static.service systemd-logind.service \
	systemd-user-sessions.service systemd-firstboot.service systemd-modules-load.service \
	systemd-sysusers.service systemd-machine-id-commit.service systemd-update-utmp.service \
	systemd-update-utmp-runlevel.service systemd-random-seed.service systemd-binfmt.service \
	proc-sys-fs-binfmt_misc.automount systemd-pcrphase.service \
	systemd-pcrphase-sysinit.service systemd-repart.service systemd-journal-flush.service \
	systemd-networkd.service systemd-networkd.socket systemd-network-generator.service \
	systemd-ask-password-wall.path systemd-ask-password-console.path \
	systemd-hwdb-update.service systemd-journal-catalog-update.service ldconfig.service \
	systemd-tmpfiles-clean.timer sys-kernel-config.mount sys-fs-fuse-connections.mount \
	cryptsetup.target veritysetup.target integritysetup.target remote-fs.target; do
	ln -sf /dev/null "etc/systemd/system/$u"
done
ln -sf /usr/lib/systemd/system/multi-user.target etc/systemd/system/default.target
# podman: crun without pivot_root (the root is the initramfs), vfs storage
# (no overlay module), hooks from /etc/containers/oci/hooks.d too, events
# to a file (no journald dependency).
mkdir -p etc/containers/oci/hooks.d
printf '%s\n' '[engine]' 'cgroup_manager = "systemd"' 'events_logger = "file"' \
	'runtime = "crun"' 'no_pivot_root = true' \
	'hooks_dir = ["/etc/containers/oci/hooks.d", "/usr/share/containers/oci/hooks.d"]' \
	>etc/containers/containers.conf
printf '%s\n' '[storage]' 'driver = "vfs"' 'runroot = "/run/containers/storage"' \
	'graphroot = "/var/lib/containers/storage"' >etc/containers/storage.conf
# The project's files come in a second archive appended at each run
# (run.sh); this one is only Debian's.
find . -mindepth 1 | LC_ALL=C sort | cpio --quiet -o -H newc -R 0:0 | gzip -1 >"$out.tmp"
mv "$out.tmp" "$out"
echo "$out"
