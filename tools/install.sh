#!/usr/bin/env bash
# make install / make uninstall (issue 34, item 1). The Makefile passes the
# directories in the environment (its header lists their defaults):
#   DESTDIR BINDIR SBINDIR MANDIR DOCDIR SYSCONFDIR UNITDIR HOOKSDIR
#   BASHCOMPDIR NRIDIR NRICONF, and INSTALL_CONFIG (yes: the example
#   configuration becomes SYSCONFDIR/numaplace/numaplace.json when there
#   is none; the Debian package says no), MAN (yes: the man pages of
#   BUILD_DIR/man are required; no: installed without them) and
#   INSTALL_NRI (yes: containerd's NRI plugin link and conf.json entry;
#   the Debian package says no, /opt being no package's).
# What goes where:
#   BINDIR      numaplace, numaplace-oci-hook      SBINDIR   numaplaced
#   UNITDIR     numaplaced.service (its paths: SBINDIR and SYSCONFDIR)
#   HOOKSDIR    the hooks.d files of podman and CRI-O (the hook's path:
#               BINDIR; --config when SYSCONFDIR is not /etc)
#   SYSCONFDIR/numaplace/numaplace.json  the example, never over a file
#               that is there; SYSCONFDIR/numaplace/workloads.d (0755)
#   MANDIR      man1, man5, man8     BASHCOMPDIR  numaplace (+ 2 links)
#   DOCDIR      README.md, docs/, examples/ (the configuration, the
#               workload specs, the OCI and NRI files with their paths)
#   NRIDIR      numaplace, a link to BINDIR/numaplace-oci-hook (containerd's
#               NRI v0.1 plugin: /opt/nri/bin, where containerd looks)
#   NRICONF     /etc/nri/conf.json (containerd's fixed path): numaplace's
#               plugin added to the one there (with jq; never rewritten
#               otherwise), or the file made when there is none
# Uninstall removes exactly these, the configuration only while it is the
# example unchanged (else it says it is kept), and the folders of its own
# that are left empty; never the state (/var/lib/numaplace). From
# NRICONF only numaplace's plugin goes (the file if it is all that is left
# of it as installed).
#
#   tools/install.sh install|uninstall BUILD_DIR
set -euo pipefail
usage() { sed -n '2,/^set -euo/{/^#/s/^# \{0,1\}//p}' "$0" >&2; exit 2; }
[[ $# -eq 2 ]] || usage
action=$1 build=$2
case $action in install | uninstall) ;; *) usage ;; esac
root=$(cd "$(dirname "$0")/.." && pwd -P)
INSTALL_NRI=${INSTALL_NRI:-yes}
for v in BINDIR SBINDIR MANDIR DOCDIR SYSCONFDIR UNITDIR HOOKSDIR BASHCOMPDIR \
	$([[ $INSTALL_NRI == yes ]] && echo NRIDIR NRICONF); do
	[[ -n ${!v:-} ]] || { echo "install.sh: $v is not set (run it through make $action)" >&2; exit 2; }
	[[ ${!v} == /* ]] || { echo "install.sh: $v=${!v}: expected an absolute path" >&2; exit 2; }
done
D=${DESTDIR:-}
INSTALL_CONFIG=${INSTALL_CONFIG:-yes}
MAN=${MAN:-yes}
cfg=$SYSCONFDIR/numaplace/numaplace.json
hook=$BINDIR/numaplace-oci-hook
# the NRI plugin as conf.json names it: the link in NRIDIR, else the hook
nri_type=$hook
[[ $INSTALL_NRI == yes ]] && nri_type=$NRIDIR/numaplace

# The shipped files name the default paths; installed, they name these.
subst() { # FILE: the file with the installed paths
	local s=(-e "s|/usr/local/sbin/numaplaced|$SBINDIR/numaplaced|g"
		-e "s|/usr/local/bin/numaplace-oci-hook|$hook|g"
		-e "s|\"/opt/nri/bin/numaplace\"|\"$nri_type\"|g"
		-e "s|/etc/numaplace/|$SYSCONFDIR/numaplace/|g")
	# the programs' built-in configuration is /etc/numaplace/numaplace.json
	[[ $SYSCONFDIR == /etc ]] || s+=(-e "s|\"numaplace-oci-hook\", \"\\([A-Za-z]*\\)\"\\]|\"numaplace-oci-hook\", \"\\1\", \"--config\", \"$cfg\"]|"
		-e "s|\"conf\": { \"pause\"|\"conf\": { \"config\": \"$cfg\", \"pause\"|")
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
	echo "0644 -$root/dist/nri/conf.json $DOCDIR/examples/nri/conf.json"
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

# containerd's NRI v0.1 plugin: the link, and numaplace's entry in
# conf.json, added to what is there, never over it.
nri_is_ours='any(.plugins[]?; (.type | type == "string") and (.type | test("(^|/)numaplace(-oci-hook)?$")))'
nri_install() {
	local conf=$D$NRICONF ours n
	install -d -m 0755 "$D$NRIDIR"
	ln -sfn "$hook" "$D$NRIDIR/numaplace"
	ours=$(subst "$root/dist/nri/conf.json")
	if [[ ! -e $conf ]]; then
		install -d -m 0755 "$(dirname "$conf")"
		printf '%s\n' "$ours" >"$conf.tmp"
		chmod 0644 "$conf.tmp"
		mv -f "$conf.tmp" "$conf"
		echo "install: $conf: numaplace as containerd's NRI plugin ($NRIDIR/numaplace;" \
			"containerd 1.6 reads it at every pod and container start, see docs/containers.md)"
		return 0
	fi
	if ! command -v jq >/dev/null; then
		echo "install: $conf is there and jq is not: kept as it is; add the plugin of" \
			"$DOCDIR/examples/nri/conf.json to its \"plugins\""
		return 0
	fi
	if ! jq -e '(type == "object") and ((.plugins // []) | type == "array")' "$conf" >/dev/null 2>&1; then
		echo "install: $conf is not a JSON object with a \"plugins\" array: kept as it is" \
			"(containerd fails every pod start on it); numaplace's plugin is in $DOCDIR/examples/nri/conf.json" >&2
		return 0
	fi
	if jq -e "$nri_is_ours" "$conf" >/dev/null; then
		echo "install: $conf has numaplace's plugin already: kept"
		return 0
	fi
	n=$(jq '.plugins // [] | length' "$conf")
	jq --argjson ours "$ours" '.version //= $ours.version | .plugins = ((.plugins // []) + $ours.plugins)' \
		"$conf" >"$conf.tmp"
	chmod --reference="$conf" "$conf.tmp"
	mv -f "$conf.tmp" "$conf"
	echo "install: $conf: numaplace's plugin added after the $n there"
}
nri_uninstall() {
	local conf=$D$NRICONF d
	if [[ -L $D$NRIDIR/numaplace && $(readlink "$D$NRIDIR/numaplace") == "$hook" ]]; then
		rm -f "$D$NRIDIR/numaplace"
	fi
	if [[ -f $conf ]]; then
		if [[ $(cat "$conf") == "$(subst "$root/dist/nri/conf.json")" ]]; then
			rm -f "$conf"
		elif command -v jq >/dev/null && jq -e --arg t "$nri_type" 'any(.plugins[]?; .type == $t)' "$conf" >/dev/null 2>&1; then
			jq --arg t "$nri_type" '.plugins |= map(select(.type != $t))' "$conf" >"$conf.tmp"
			chmod --reference="$conf" "$conf.tmp"
			mv -f "$conf.tmp" "$conf"
			echo "uninstall: $conf: numaplace's plugin removed, the others kept"
		fi
	fi
	for d in "$NRIDIR" "$(dirname "$NRIDIR")" "$(dirname "$NRICONF")"; do
		if [[ -d $D$d ]]; then rmdir --ignore-fail-on-non-empty "$D$d"; fi
	done
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
	[[ $INSTALL_NRI == yes ]] && nri_install
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
[[ $INSTALL_NRI == yes ]] && nri_uninstall
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
	"$DOCDIR/examples/oci" "$DOCDIR/examples/nri" "$DOCDIR/examples/workloads" "$DOCDIR/examples" \
	"$DOCDIR/docs" "$DOCDIR"; do
	if [[ -d $D$d ]]; then rmdir --ignore-fail-on-non-empty "$D$d"; fi
done
echo "uninstall: done; the state (/var/lib/numaplace) is not touched"
