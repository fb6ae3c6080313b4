#!/usr/bin/env bash
# mkinitramfs.sh --out FILE [--bin PATH]... [--scenarios DIR]
#                [--file SRC:DEST]... [--modules-from DIR --module NAME]...
#
# Build a gzip'd newc cpio initramfs for the numaplace VM tests:
#   /bin/busybox (busybox-static) + one symlink per applet
#   /init                 tests/vm/init
#   /bin/<name>           each --bin PATH (also $NP_VM_BINS, space separated),
#                         with every shared library `ldd` reports copied to
#                         the same path, plus the dynamic loader
#   /scenarios/           contents of --scenarios DIR, plus tests/vm/lib.sh
#                         installed as /scenarios/lib.sh
#   DEST                  each --file SRC:DEST (file or directory, copied;
#                         executables among them get their libraries too)
#   /lib/modules/<krel>/  each --module NAME (with dependencies) taken from
#                         --modules-from DIR (an extracted /lib/modules/<krel>)
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)

usage() {
	sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//' >&2
	exit 2
}

out=$ROOT/build/vm/initrd.gz
bins=()
files=()
modules=()
moddir=
scen=
read -r -a env_bins <<<"${NP_VM_BINS:-}"
bins+=("${env_bins[@]}")

while (($#)); do
	case $1 in
	--out) out=$2; shift 2 ;;
	--bin) bins+=("$2"); shift 2 ;;
	--scenarios) scen=$2; shift 2 ;;
	--file) files+=("$2"); shift 2 ;;
	--module) modules+=("$2"); shift 2 ;;
	--modules-from) moddir=$2; shift 2 ;;
	-h | --help) usage ;;
	*) echo "mkinitramfs: unknown argument: $1" >&2; usage ;;
	esac
done

die() { echo "mkinitramfs: $*" >&2; exit 1; }

BUSYBOX=/bin/busybox
[[ -x $BUSYBOX ]] || die "$BUSYBOX missing (apt-get install busybox-static)"
if ldd "$BUSYBOX" >/dev/null 2>&1; then
	die "$BUSYBOX is dynamically linked; install busybox-static"
fi

mkdir -p "$(dirname "$out")"
stage=$(mktemp -d "$(dirname "$out")/.initramfs.XXXXXX")
trap 'rm -rf "$stage"' EXIT

mkdir -p "$stage"/{bin,sbin,usr/bin,usr/sbin,etc,proc,sys,dev,tmp,run,root,scenarios,lib64,lib/x86_64-linux-gnu}
cp "$BUSYBOX" "$stage/bin/busybox"
# Applet symlinks (bin/sh -> /bin/busybox, ...): quickest from inside the
# tree itself; without root, one ln per applet.
if ! { ((EUID == 0)) && chroot "$stage" /bin/busybox --install -s 2>/dev/null; }; then
	while read -r applet; do
		[[ -n $applet && $applet != bin/busybox ]] || continue
		[[ -e $stage/$applet || -L $stage/$applet ]] && continue
		mkdir -p "$stage/$(dirname "$applet")"
		ln -s /bin/busybox "$stage/$applet"
	done < <("$BUSYBOX" --list-full)
fi
[[ -L $stage/bin/sh && -L $stage/sbin/poweroff && -L $stage/usr/bin/timeout ]] ||
	die "busybox applet links missing"

install -m 0755 "$HERE/init" "$stage/init"
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' >"$stage/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$stage/etc/group"
echo numaplace-vm >"$stage/etc/hostname"

# Copy the shared libraries of an ELF executable (as reported by ldd, at
# the same paths) and its dynamic loader.
copy_libs() {
	local exe=$1 out lib
	if ! out=$(ldd "$exe" 2>&1); then
		# "not a dynamic executable": static binary or a script.
		return 0
	fi
	if grep -q 'not found' <<<"$out"; then
		die "$exe: unresolved libraries:"$'\n'"$(grep 'not found' <<<"$out")"
	fi
	while read -r lib; do
		[[ -e $stage$lib ]] && continue
		mkdir -p "$stage$(dirname "$lib")"
		cp -L "$lib" "$stage$lib"
	done < <(awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}' <<<"$out")
}

for b in "${bins[@]}"; do
	[[ -n $b ]] || continue
	[[ -f $b && -x $b ]] || die "--bin $b: not an executable file"
	install -m 0755 "$b" "$stage/bin/$(basename "$b")"
	copy_libs "$b"
done

for spec in "${files[@]}"; do
	src=${spec%%:*}
	dest=${spec#*:}
	[[ $spec == *:* && -n $src && $dest == /* ]] || die "--file $spec: want SRC:/ABS/DEST"
	[[ -e $src ]] || die "--file $spec: $src does not exist"
	mkdir -p "$stage$(dirname "$dest")"
	cp -a "$src" "$stage$dest"
	while read -r f; do
		copy_libs "$f"
	done < <(find "$stage$dest" -type f -perm -u+x)
done

if [[ -n $scen ]]; then
	[[ -d $scen ]] || die "--scenarios $scen: not a directory"
	cp -a "$scen"/. "$stage/scenarios/"
	if [[ -e $stage/scenarios/lib.sh ]] && ! cmp -s "$stage/scenarios/lib.sh" "$HERE/lib.sh"; then
		echo "mkinitramfs: warning: $scen/lib.sh replaced by tests/vm/lib.sh" >&2
	fi
fi
install -m 0644 "$HERE/lib.sh" "$stage/scenarios/lib.sh"

if ((${#modules[@]})); then
	[[ -n $moddir && -d $moddir ]] || die "--module needs --modules-from DIR"
	command -v depmod >/dev/null || die "depmod missing (apt-get install kmod)"
	moddir=$(cd "$moddir" && pwd -P)
	krel=$(basename "$moddir")
	if [[ ! -f $moddir/modules.dep ]]; then
		# Debian's packages don't ship modules.dep; make it in place.
		[[ $moddir == */lib/modules/$krel ]] || die "$moddir: no modules.dep"
		depmod -b "${moddir%/lib/modules/"$krel"}" "$krel"
	fi
	# shellcheck source=modules.sh
	. "$HERE/modules.sh"
	np_vm_copy_modules "$moddir" "$stage/lib/modules/$krel" "${modules[@]}" || die "--module: see above"
	depmod -b "$stage" "$krel"
fi

# Reproducible-ish archive: sorted names, root ownership.
(cd "$stage" && find . -mindepth 1 | LC_ALL=C sort |
	cpio --quiet -o -H newc -R 0:0) | gzip -1 >"$out.tmp"
mv "$out.tmp" "$out"
echo "$out"
