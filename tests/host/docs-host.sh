#!/usr/bin/env bash
# The front door and the documents (issue 34, item 6):
#  1. every relative link of README.md, CONTRIBUTING.md and docs/*.md
#     resolves: the file or folder exists, and an anchor (#...) is a heading
#     of the target (GitHub's slugs: lower case, punctuation dropped, spaces
#     to "-", "-1" for a second same heading); no link into build/;
#  2. docs/README.md's table gives every section of the old README a home
#     (its links are checked by 1: each lands on the page or heading named);
#  3. README is a front door: at most 300 lines, "What numaplace buys" after
#     what numaplace is and before "Install"; each page of docs/ (the
#     outcome benchmark's aside) says first what it is for;
#  4. README's examples run as written: the "$ " commands of "Try it without
#     a node" (run at the top of the tree), each printing the lines shown
#     under it; every path the README names under the installed
#     documentation, /etc/numaplace or hooks.d exists after make install
#     (PREFIX=/usr/local and PREFIX=/usr).
# Prints "docs-host: N passed, N failed".
#
#   tests/host/docs-host.sh [BUILD_DIR]
set -euo pipefail
build=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd -P)
tmp=$(mktemp -d /tmp/np-docs-XXXXXX)
trap '[ -n "${NP_KEEP:-}" ] || rm -rf "$tmp"' EXIT
. "$root/tests/host/host-lib.sh"
cd "$root"
pages=(README.md CONTRIBUTING.md docs/*.md)

# ---- 1. links ------------------------------------------------------------------------------
# slugs FILE: the anchors of its headings, one a line
slugs() {
	awk '/^```/ { f = !f; next }
		!f && /^#+ / { h = $0; sub(/^#+ /, "", h); h = tolower(h)
			gsub(/[^a-z0-9 _-]/, "", h); gsub(/ /, "-", h)
			if (seen[h]++) h = h "-" (seen[h] - 1); print h }' "$1"
}
# links FILE: its link targets outside code blocks and code spans, "LINE TARGET"
links() {
	awk '/^```/ { f = !f; next }
		!f { l = $0; gsub(/`[^`]*`/, "", l)
			while (match(l, /\]\([^) ]+\)/)) {
				print NR, substr(l, RSTART + 2, RLENGTH - 3)
				l = substr(l, RSTART + RLENGTH) } }' "$1"
}
n=0 broken=
for p in "${pages[@]}"; do
	while read -r line target; do
		case $target in http://* | https://* | mailto:*) continue ;; esac
		n=$((n + 1))
		path=${target%%#*} anchor=
		[[ $target == *#* ]] && anchor=${target#*#}
		if [ -z "$path" ]; then
			file=$p
		else
			file=$(realpath -m "$(dirname "$p")/$path")
			file=${file#"$root"/}
		fi
		if [[ $file == build/* || $file == /* ]]; then
			broken+=" $p:$line: $target (outside the tree or into build/);"
		elif [ ! -e "$file" ]; then
			broken+=" $p:$line: $target (no $file);"
		elif [ -n "$anchor" ]; then
			if [[ $file != *.md ]]; then
				broken+=" $p:$line: $target (an anchor into a file that is not markdown);"
			elif ! slugs "$file" | grep -qxF -- "$anchor"; then
				broken+=" $p:$line: $target (no heading #$anchor in $file);"
			fi
		fi
	done < <(links "$p")
done
check "the $n relative links of ${#pages[@]} pages resolve${broken:+:$broken}" test "$n" -gt 50 -a -z "$broken"

# ---- 2. the old README's sections -------------------------------------------------------------
rows=$(awk '/^## Where the old README/ { on = 1; next } on && /^## / { exit } on && /^\| / && !/^\| section/ && !/^\|---/' docs/README.md)
nr=$(grep -c . <<<"$rows" || true)
bad_rows=$(grep -v '](' <<<"$rows" || true)
check "docs/README.md: $nr sections of the old README, each with a link to its home${bad_rows:+ (not: $bad_rows)}" \
	test "$nr" -ge 40 -a -z "$bad_rows"

# ---- 3. the front door ---------------------------------------------------------------------------
lines=$(wc -l <README.md)
check "README has $lines lines, at most 300" test "$lines" -le 300
heads=$(grep -n '^## ' README.md)
buys=$(grep -m1 '^[0-9]*:## What numaplace buys$' <<<"$heads" | cut -d: -f1)
inst=$(grep -m1 '^[0-9]*:## Install$' <<<"$heads" | cut -d: -f1)
first=$(head -n1 <<<"$heads" | cut -d: -f1)
check "README: 'What numaplace buys' is its first section, before 'Install' (lines ${buys:-none}, ${inst:-none})" \
	test -n "$buys" -a -n "$inst" -a "${buys:-0}" = "$first" -a "${buys:-0}" -lt "${inst:-0}"
missing=
for p in docs/*.md; do
	[ "$p" = docs/outcome.md ] && continue
	awk 'NR > 1 && NF { print; exit }' "$p" | grep -q '^What this \(page\|folder\) is for:' || missing+=" $p"
done
check "each page of docs/ starts with what it is for${missing:+ (not:$missing)}" test -z "$missing"

# ---- 4. README's examples ---------------------------------------------------------------------------
# the "$ " lines of the section's code blocks, each with the lines shown under it
awk '/^## Try it without a node$/ { on = 1; next } on && /^## / { exit }
	on && /^```/ { f = !f; next } on && f' README.md >"$tmp/tour"
check "README's tour has commands ($(grep -c '^\$ ' "$tmp/tour"))" test "$(grep -c '^\$ ' "$tmp/tour")" -ge 4
i=0
while IFS= read -r l; do
	if [[ $l == '$ '* ]]; then
		i=$((i + 1))
		printf '%s\n' "${l#\$ }" >"$tmp/cmd.$i"
		: >"$tmp/want.$i"
	else
		printf '%s\n' "$l" >>"$tmp/want.$i"
	fi
done <"$tmp/tour"
for ((k = 1; k <= i; k++)); do
	cmd=$(cat "$tmp/cmd.$k")
	out=$(bash -o pipefail -c "$cmd" 2>&1) && rc=0 || rc=$?
	miss=
	while IFS= read -r w; do
		[ -n "$w" ] && ! grep -qxF -- "$w" <<<"$out" && miss+=" '$w'"
	done <"$tmp/want.$k"
	check "README: \$ $cmd: exit $rc${miss:+, without$miss}" test "$rc" = 0 -a -z "$miss"
done
make --no-print-directory -s BUILD="$build" MAN=no install DESTDIR="$tmp/local" >/dev/null
make --no-print-directory -s BUILD="$build" MAN=no install DESTDIR="$tmp/usr" PREFIX=/usr >/dev/null
paths=$(awk '/^```/ { f = !f; next } { print }' README.md |
	grep -oE '(/usr/local/share|/usr/share)/(doc/numaplace|containers/oci/hooks.d)/[A-Za-z0-9._/*-]*|/etc/numaplace/[A-Za-z0-9._/-]*' |
	sed 's/[.]$//' | sort -u)
missing=
for p in $paths; do
	# a spec the tour itself copies there
	[[ $p == /etc/numaplace/workloads.d/?* ]] && continue
	d=$tmp/usr
	[[ $p == /usr/local/* ]] && d=$tmp/local
	# a glob (numaplace_*_amd64.deb is not installed: build/deb is checked by check-deb)
	compgen -G "$d$p" >/dev/null || missing+=" $p"
done
check "every installed path README names exists after make install ($(wc -w <<<"$paths") paths)${missing:+; not:$missing}" \
	test "$(wc -w <<<"$paths")" -ge 3 -a -z "$missing"

echo "docs-host: $pass passed, $fail failed"
[ -n "${NP_SUMMARY_FILE:-}" ] && echo "docs $pass $fail" >>"$NP_SUMMARY_FILE"
[ "$fail" -eq 0 ]
