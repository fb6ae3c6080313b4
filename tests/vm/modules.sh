# shellcheck shell=bash
# tests/vm/modules.sh: kernel modules for the VMs' root, shared by
# mkinitramfs.sh (busybox VM) and systemd/run.sh.
#
# np_vm_copy_modules MODDIR DST NAME...
#   MODDIR is an extracted /lib/modules/KREL with its modules.dep; each
#   module NAME ("virtio_blk" or "virtio-blk") goes to the same relative
#   path below DST with every module modules.dep says it needs, and
#   modules.order, modules.builtin and modules.builtin.modinfo come along
#   (for depmod, which the caller runs on DST's root). Returns 1, saying
#   which, for a module modules.dep does not list.
np_vm_copy_modules() {
	local moddir=$1 dst=$2 m re line rel
	shift 2
	mkdir -p "$dst"
	cp "$moddir"/modules.{order,builtin,builtin.modinfo} "$dst/" 2>/dev/null || true
	for m in "$@"; do
		# modules.dep: "kernel/x/y.ko[.xz]: dep1 dep2"
		re=${m//_/-}
		re=${re//-/[-_]}
		line=$(grep -E "(^|/)$re\.ko(\.[a-z]+)?:" "$moddir/modules.dep" | head -n1) || {
			echo "module $m not in $moddir/modules.dep" >&2
			return 1
		}
		for rel in ${line/:/}; do
			mkdir -p "$dst/$(dirname "$rel")"
			cp "$moddir/$rel" "$dst/$rel"
		done
	done
}
