#!/usr/bin/env bash
# make install / make uninstall (issue 34, item 1). The Makefile passes the
# directories in the environment (its header lists their defaults):
#   DESTDIR BINDIR SBINDIR MANDIR DOCDIR SYSCONFDIR UNITDIR HOOKSDIR
#   BASHCOMPDIR, and INSTALL_CONFIG (yes: the example configuration
#   becomes SYSCONFDIR/numaplace/numaplace.json when there is none; the
#   Debian package says no) and MAN (yes: the man pages of BUILD_DIR/man
#   are required; no: installed without them).
# What goes where:
#   BINDIR      numaplace, numaplace-oci-hook      SBINDIR   numaplaced
#   UNITDIR     numaplaced.service (its paths: SBINDIR and SYSCONFDIR)
#   HOOKSDIR    the hooks.d files of podman and CRI-O (the hook's path:
#               BINDIR; --config when SYSCONFDIR is not /etc)
#   SYSCONFDIR/numaplace/numaplace.json  the example, never over a file
#               that is there; SYSCONFDIR/numaplace/workloads.d (0755)
#   MANDIR      man1, man5, man8     BASHCOMPDIR  numaplace (+ 2 links)
#   DOCDIR      README.md, docs/, examples/ (the configuration, the
#               workload specs, the OCI files with their paths)
# Uninstall removes exactly these, the configuration only while it is the
# example unchanged (else it says it is kept), and the folders of its own
# that are left empty; never the state (/var/lib/numaplace).
#
#   tools/install.sh install|uninstall BUILD_DIR
set -euo pipefail
usage() { sed -n '2,/^set -euo/{/^#/s/^# \{0,1\}//p}' "$0" >&2; exit 2; }
[[ $# -eq 2 ]] || usage
action=$1 build=$2
case $action in install | uninstall) ;; *) usage ;; esac
root=$(cd "$(dirname "$0")/.." && pwd -P)
for v in BINDIR SBINDIR MANDIR DOCDIR SYSCONFDIR UNITDIR HOOKSDIR BASHCOMPDIR; do
	[[ -n ${!v:-} ]] || { echo "install.sh: $v is not set (run it through make $action)" >&2; exit 2; }
	[[ ${!v} == /* ]] || { echo "install.sh: $v=${!v}: expected an absolute path" >&2; exit 2; }
done
D=${DESTDIR:-}
INSTALL_CONFIG=${INSTALL_CONFIG:-yes}
MAN=${MAN:-yes}
cfg=$SYSCONFDIR/numaplace/numaplace.json
hook=$BINDIR/numaplace-oci-hook

# The shipped files name the default paths; installed, they name these.
subst() { # FILE: the file with the installed paths
	local s=(-e "s|/usr/local/sbin/numaplaced|$SBINDIR/numaplaced|g"
		-e "s|/usr/local/bin/numaplace-oci-hook|$hook|g"
		-e "s|/etc/numaplace/|$SYSCONFDIR/numaplace/|g")
	# the programs' built-in configuration is /etc/numaplace/numaplace.json
	[[ $SYSCONFDIR == /etc ]] || s+=(-e "s|\"numaplace-oci-hook\", \"\\([A-Za-z]*\\)\"\\]|\"numaplace-oci-hook\", \"\\1\", \"--config\", \"$cfg\"]|")
	sed "${s[@]}" "$1"
}
# what is installed, as "MODE SOURCE DEST" (SOURCE - : made by subst)
manifest() {
	echo "0755 $build/numaplace $BINDIR/numaplace"
	echo "0755 $build/numaplace-oci-hook $BINDIR/numaplace-oci-hook"
	echo "0755 $build/numaplaced $SBINDIR/numaplaced"
	echo "0644 -$root/dist/numaplaced.service $UNITDIR/numaplaced.service"
	local f
	for f in numaplace-createRuntime.json numaplace-poststop.json; do
		echo "0644 -$root/dist/oci/$f $HOOKSDIR/$f"
		echo "0644 -$root/dist/oci/$f $DOCDIR/examples/oci/$f"
	done
	echo "0644 -$root/dist/oci/config-snippet.json $DOCDIR/examples/oci/config-snippet.json"
	echo "0644 $root/dist/numaplace.example.json $DOCDIR/examples/numaplace.example.json"
	for f in "$root"/dist/examples/*.json; do
		echo "0644 $f $DOCDIR/examples/workloads/$(basename "$f")"
	done
	echo "0644 $root/dist/bash-completion/numaplace $BASHCOMPDIR/numaplace"
	echo "0644 $root/README.md $DOCDIR/README.md"
	for f in "$root"/docs/*.md; do
		[[ -f $f ]] && echo "0644 $f $DOCDIR/docs/$(basename "$f")"
	done
	for f in "$build"/man/*.[158]; do
		[[ -f $f ]] && echo "0644 $f $MANDIR/man${f##*.}/$(basename "$f")"
	done
	return 0
}

if [[ $action == install ]]; then
	for b in numaplace numaplace-oci-hook numaplaced; do
		[[ -x $build/$b ]] || { echo "install.sh: $build/$b is missing: run make first" >&2; exit 1; }
	done
	if [[ $MAN == yes ]] && ! compgen -G "$build/man/*.[158]" >/dev/null; then
		echo "install.sh: no man pages in $build/man: make builds them with scdoc" \
			"(apt-get install scdoc), or make install MAN=no installs without them" >&2
		exit 1
	fi
	while read -r mode src dst; do
		if [[ $src == -* ]]; then
			install -d -m 0755 "$D$(dirname "$dst")"
			subst "${src#-}" >"$D$dst.tmp"
			chmod "$mode" "$D$dst.tmp"
			mv -f "$D$dst.tmp" "$D$dst"
		else
			install -D -m "$mode" "$src" "$D$dst"
		fi
	done < <(manifest)
	ln -sf numaplace "$D$BASHCOMPDIR/numaplaced"
	ln -sf numaplace "$D$BASHCOMPDIR/numaplace-oci-hook"
	install -d -m 0755 "$D$SYSCONFDIR/numaplace/workloads.d"
	if [[ $INSTALL_CONFIG == yes ]]; then
		if [[ -e $D$cfg ]]; then
			echo "install: $D$cfg is there: kept (the example is $DOCDIR/examples/numaplace.example.json)"
		else
			install -m 0644 "$root/dist/numaplace.example.json" "$D$cfg"
			echo "install: $D$cfg: the example configuration; set node_policy.reserved_cpus" \
				"for this machine, then: numaplaced --check-config -c $cfg"
		fi
	fi
	[[ $MAN == yes ]] || echo "install: MAN=no: no man pages installed"
	echo "install: done (numaplace $("$build/numaplace" --version | cut -d' ' -f2));" \
		"the unit: systemctl daemon-reload && systemctl enable --now numaplaced (see numaplaced(8))"
	exit 0
fi

# uninstall
while read -r _ _ dst; do
	rm -f "$D$dst"
done < <(manifest)
for f in "$D$MANDIR"/man[158]/numaplace*.[158] "$D$MANDIR"/man8/numaplaced.8; do
	rm -f "$f" # pages of an install whose build had them
done
rm -f "$D$BASHCOMPDIR/numaplaced" "$D$BASHCOMPDIR/numaplace-oci-hook"
if [[ -f $D$cfg ]]; then
	if cmp -s "$D$cfg" "$root/dist/numaplace.example.json"; then
		rm -f "$D$cfg"
	else
		echo "uninstall: $D$cfg differs from the example: kept"
	fi
fi
w=$D$SYSCONFDIR/numaplace/workloads.d
if [[ -d $w && -n $(ls -A "$w") ]]; then
	echo "uninstall: $w holds workload specs: kept"
fi
for d in "$SYSCONFDIR/numaplace/workloads.d" "$SYSCONFDIR/numaplace" \
	"$DOCDIR/examples/oci" "$DOCDIR/examples/workloads" "$DOCDIR/examples" \
	"$DOCDIR/docs" "$DOCDIR"; do
	if [[ -d $D$d ]]; then rmdir --ignore-fail-on-non-empty "$D$d"; fi
done
echo "uninstall: done; the state (/var/lib/numaplace) is not touched"
