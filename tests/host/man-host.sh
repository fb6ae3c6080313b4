#!/usr/bin/env bash
# The man pages (man/*.scd, issue 34 item 3) cannot drift from the code:
#  1. each page was built (scdoc refuses a malformed page at make), has its
#     NAME, SYNOPSIS, DESCRIPTION and SEE ALSO, and renders without a
#     warning (groff -ww, man --warnings -l);
#  2. every key the configuration parser accepts, in every object, has its
#     definition (a line that starts with it in bold) in its section of
#     numaplace.json(5), and every key the spec parser accepts in
#     numaplace-workload(5). The keys are read from the
#     code by running the parsers (np-probe-keys: each string literal of the
#     parsers' sources tried as a key of each object), not from a list;
#  3. every command of numaplace (tools/numaplace.c's table) has its section
#     in numaplace(1), and every long option of its struct option array has
#     its definition there (--help once, in OPTIONS); numaplaced's options in numaplaced(8), the hook's in
#     numaplace-oci-hook(1); every op of the control socket (requests.c's
#     table) and every signal numaplaced handles in numaplaced(8); each page
#     of a program has its exit codes 0, 1 and 2.
# Prints "man-host: N passed, N failed".
#
#   tests/host/man-host.sh [BUILD_DIR]
set -euo pipefail
build=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd -P)
. "$root/tests/host/host-lib.sh"
cd "$root"
probe=$build/np-probe-keys
pages=(numaplace.1 numaplaced.8 numaplace.json.5 numaplace-workload.5 numaplace-oci-hook.1)

# ---- 1. built and rendered ----------------------------------------------------------------
if ! command -v scdoc >/dev/null; then
	bad "scdoc is not installed: the man pages cannot be built (apt-get install scdoc, or make deps)"
fi
for p in "${pages[@]}"; do
	f=$build/man/$p
	if [ ! -f "$f" ]; then
		bad "$f was not built (make builds it from man/$p.scd with scdoc)"
		continue
	fi
	for h in NAME SYNOPSIS DESCRIPTION "SEE ALSO"; do
		grep -qx "# $h" "man/$p.scd" || bad "man/$p.scd has no $h section"
	done
	out=$(groff -ww -man -Tutf8 -z "$f" 2>&1)
	check "$p: groff -ww renders it without a warning${out:+ ($out)}" test -z "$out"
	out=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$f" 2>&1 >/dev/null)
	check "$p: man --warnings -l renders it without a warning${out:+ ($out)}" test -z "$out"
done

# section FILE TITLE: the lines of a top-level section (# TITLE), its
# subsections included
section() { awk -v t="# $2" '$0 == t { on = 1; next } on && /^# / { exit } on' "man/$1.scd"; }
# defined FILE TITLE KEY: the section has a definition of KEY, a line
# (indented or not) that starts with it in bold, alone or after its
# object's dotted name ("*policy.rules*"); hugepages-<size>: the family's
# name, "*hugepages-*_SIZE_"
defined() {
	local re="${3//./\\.}\\*"
	case $3 in hugepages-*) re='hugepages-\*_SIZE_' ;; esac
	grep -qE -- "^[[:space:]]*\\*([A-Za-z_]+\\.)*$re" <<<"$(section "$1" "$2")"
}
# an option's definition: "*-x*, *--opt*" or "*--opt*" at the start of a line
# (grep reads its whole input: an early exit would fail the pipe under
# pipefail)
optdef() { grep -E -- "^(\\*-[A-Za-z]\\*, )?\\*$1\\*" >/dev/null; }

# ---- 2. the keys of the configuration and of a spec -------------------------------------------
keys_of() { # KIND PATH TEMPLATE CANDIDATES: the accepted keys; the template checked
	local r
	r=$(echo np-no-such-key | "$probe" "$1" "$2" "$3")
	[ -z "$r" ] || { bad "np-probe-keys: the template of $2 accepts any key: it does not reach the object's check"; return; }
	"$probe" "$1" "$2" "$3" <"$4"
}
cands() { grep -ohE '"[A-Za-z_][A-Za-z0-9_-]*"' "$@" | tr -d '"' | sort -u; }
cands userspace/daemon/config*.c userspace/engine/policy.c userspace/engine/oci_policy.c \
	userspace/engine/be_suppress_json.c >"$build/man-config-candidates"
cands userspace/engine/admit_spec*.c >"$build/man-spec-candidates"
# PATH (the parser's name of the object) | SECTION of the page | TEMPLATE
while IFS='|' read -r path title tmpl; do
	[ -n "$path" ] || continue
	keys=$(keys_of config "$path" "$tmpl" "$build/man-config-candidates")
	n=$(wc -w <<<"$keys") missing=
	for k in $keys; do defined numaplace.json.5 "$title" "$k" || missing+=" $k"; done
	check "numaplace.json(5), $title: the $n keys of $path${missing:+; not defined:$missing}" \
		test "$n" -gt 0 -a -z "$missing"
done <<'EOF'
config|KEYS|{"@": 1}
config.node_policy|NODE POLICY|{"node_policy": {"@": 1}}
config.verify|VERIFY|{"verify": {"@": 1}}
config.oci_hook|OCI HOOK|{"oci_hook": {"@": 1}}
config.oci_hook.policy|OCI HOOK|{"oci_hook": {"policy": {"@": 1}}}
config.oci_hook.policy.default|OCI HOOK|{"oci_hook": {"policy": {"default": {"@": 1}}}}
config.oci_hook.policy.rules[0]|OCI HOOK|{"oci_hook": {"policy": {"rules": [{"namespace": "n", "@": 1}]}}}
config.metrics|METRICS|{"metrics": {"@": 1}}
config.export|EXPORT|{"export": {"@": 1}}
config.defrag|DEFRAG|{"defrag": {"@": 1}}
config.be_suppress|BE SUPPRESSION|{"be_suppress": {"@": 1}}
EOF
B='"name": "w", "qos": "LS"' C='"containers": [{"name": "m", "cpu": "1"}]'
CT='"container": {"id": "c1", "cgroup": "/np/c1"'
while IFS='|' read -r path title tmpl; do
	[ -n "$path" ] || continue
	keys=$(keys_of spec "$path" "$tmpl" "$build/man-spec-candidates")
	n=$(wc -w <<<"$keys") missing=
	for k in $keys; do defined numaplace-workload.5 "$title" "$k" || missing+=" $k"; done
	check "numaplace-workload(5), $title: the $n keys of $path${missing:+; not defined:$missing}" \
		test "$n" -gt 0 -a -z "$missing"
done <<EOF
spec|KEYS|{$B, $C, "@": 1}
spec.containers[0]|CONTAINERS|{$B, "containers": [{"name": "m", "cpu": "1", "@": 1}]}
spec.init_containers[0]|CONTAINERS|{$B, "init_containers": [{"name": "i", "cpu": "1", "@": 1}], $C}
spec.resourceSpec|RESOURCESPEC|{"name": "w", "qos": "LSE", "resourceSpec": {"@": 1}, $C}
spec.container|CONTAINER|{$B, $CT, "@": 1}, $C}
spec.container.limits|CONTAINER|{$B, $CT, "limits": {"@": 1}}, $C}
spec.container.requests|CONTAINER|{$B, $CT, "requests": {"@": 1}}, $C}
spec.hint|KEYS|{$B, "hint": {"mask": [0], "preferred": true, "@": 1}, $C}
spec.resources|KEYS|{$B, "resources": {"cpu": "2", "@": 1}, $C}
EOF

# ---- 3. commands, options, socket ops, signals, exit codes ---------------------------------------
longopts() { awk '/struct option [a-z_]*\[\] = \{/,/\};/' "$1" | grep -o '{"[a-z-]*"' | sed 's/{"/--/; s/"//'; }
# subsection FILE TITLE: the lines of "## TITLE" up to the next heading
subsection() { awk -v t="## $2" '$0 == t { on = 1; next } on && /^#/ { exit } on' "man/$1.scd"; }
cmds=$(grep -o '{"[a-z-]*", cmd_[a-z_]*' tools/numaplace.c | sed 's/{"\([a-z-]*\)", \(cmd_[a-z_]*\)/\1 \2/')
check "the command table of tools/numaplace.c was read ($(wc -l <<<"$cmds") commands)" \
	test "$(wc -l <<<"$cmds")" -ge 10
missing=
while read -r c fn; do
	f=$(grep -l "^int $fn(" tools/*.c)
	sub=$(subsection numaplace.1 "numaplace $c")
	if [ -z "$sub" ]; then
		missing+=" $c (no section '## numaplace $c')"
		continue
	fi
	for o in $(longopts "$f"); do
		if [ "$o" = --help ]; then # one definition for all, in OPTIONS
			section numaplace.1 OPTIONS | optdef --help || missing+=" --help"
		else
			optdef "$o" <<<"$sub" || missing+=" $c $o"
		fi
	done
done <<<"$cmds"
check "numaplace(1): every command has its section, with every long option${missing:+; not:$missing}" \
	test -z "$missing"
missing=
for o in $(longopts userspace/daemon/numaplaced.c); do
	section numaplaced.8 OPTIONS | optdef "$o" || missing+=" $o"
done
check "numaplaced(8): every option of numaplaced.c in OPTIONS${missing:+; not:$missing}" test -z "$missing"
missing=
for o in $(longopts tools/cmd_oci_hook.c) --version; do
	section numaplace-oci-hook.1 OPTIONS | optdef "$o" || missing+=" $o"
done
check "numaplace-oci-hook(1): every option of cmd_oci_hook.c and --version in OPTIONS${missing:+; not:$missing}" \
	test -z "$missing"
ops=$(sed -n '/^} ops\[\] = {/,/^};/p' userspace/daemon/serve/requests.c | grep -o '{"[a-z]*", [a-z_]*op_' | sed 's/{"//; s/".*//')
missing=
for op in $ops; do
	grep -qF -- "\"op\": \"$op\"" <<<"$(section numaplaced.8 "CONTROL SOCKET")" || missing+=" $op"
done
check "numaplaced(8): every op of requests.c ($(wc -w <<<"$ops")) in CONTROL SOCKET${missing:+; not:$missing}" \
	test "$(wc -w <<<"$ops")" -ge 8 -a -z "$missing"
sigs=$(grep -o 'sigaddset(&mask, SIG[A-Z]*)' userspace/daemon/daemon.c | sed 's/.*, //; s/)//')
missing=
for s in $sigs; do grep -qF -- "*$s*" <<<"$(section numaplaced.8 SIGNALS)" || missing+=" $s"; done
check "numaplaced(8): every signal the daemon handles ($(echo $sigs)) in SIGNALS${missing:+; not:$missing}" \
	test -n "$sigs" -a -z "$missing"
for p in numaplace.1 numaplaced.8 numaplace-oci-hook.1; do
	check "$p: EXIT STATUS names 0, 1 and 2" \
		test "$(section $p "EXIT STATUS" | grep -cx '\*[012]\*')" = 3
done

echo "man-host: $pass passed, $fail failed"
[ -n "${NP_SUMMARY_FILE:-}" ] && echo "man $pass $fail" >>"$NP_SUMMARY_FILE"
[ "$fail" -eq 0 ]
