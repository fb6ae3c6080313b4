#!/usr/bin/env bash
# The version numaplace reports (issue 34, item 2), one string everywhere:
#  1. tools/version.sh: in this clone, VERSION's content, the commit count
#     and the commit (or the tag at HEAD); in a tree that is not a clone (a
#     tarball), VERSION as it is; a VERSION with a character a C string,
#     JSON or a Debian version cannot hold is refused, naming the file.
#  2. numaplace --version, numaplaced --version and numaplace-oci-hook
#     --version print the version the build made (BUILD/gen/np_version.h).
#  3. numaplaced's state file says which numaplaced wrote it
#     ("numaplace_version"), and /metrics' numaplace_build_info carries it.
# Prints "version-host: N passed, N failed".
#
#   tests/host/version-host.sh [BUILD_DIR]
set -euo pipefail
build=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd -P)
tmp=$(mktemp -d /tmp/np-version-XXXXXX)
dpid=
trap '[ -n "$dpid" ] && kill "$dpid" 2>/dev/null; [ -n "${NP_KEEP:-}" ] || rm -rf "$tmp"' EXIT
. "$root/tests/host/host-lib.sh"

# ---- 1. tools/version.sh ---------------------------------------------------------------
base=$(tr -d ' \t\n' <"$root/VERSION")
v=$("$root/tools/version.sh")
echo "info version: $v (VERSION: $base)"
if git -C "$root" describe --tags --exact-match --match 'v[0-9]*' HEAD >/dev/null 2>&1; then
	check "at a tag: the tag's version ($v)" \
		test "$v" = "$(git -C "$root" describe --tags --exact-match --match 'v[0-9]*' HEAD | sed 's/^v//')"
elif git -C "$root" rev-parse --git-dir >/dev/null 2>&1; then
	want="$base.$(git -C "$root" rev-list --count HEAD).g$(git -C "$root" rev-parse --short=7 HEAD)"
	check "in a clone: VERSION, commit count and commit ($v, want $want[.dirty])" \
		test "${v%.dirty}" = "$want"
fi
mkdir -p "$tmp/tree/tools"
cp "$root/tools/version.sh" "$tmp/tree/tools/"
echo "1.2.3" >"$tmp/tree/VERSION"
check "not a clone (a tarball): VERSION as it is" test "$("$tmp/tree/tools/version.sh")" = 1.2.3
check "  and the header defines NP_VERSION \"1.2.3\"" \
	grep -qx '#define NP_VERSION "1.2.3"' <("$tmp/tree/tools/version.sh" --header)
# a tree unpacked inside another clone is not that clone's commit
git init -q "$tmp/outer" && mkdir -p "$tmp/outer/x" && cp -a "$tmp/tree/." "$tmp/outer/x/"
check "a tree inside another clone: its own VERSION" test "$("$tmp/outer/x/tools/version.sh")" = 1.2.3
printf '1.2"3\n' >"$tmp/tree/VERSION"
out=$("$tmp/tree/tools/version.sh" 2>&1) && rc=0 || rc=$?
check "a VERSION with a quote is refused, naming the file (exit $rc: $out)" \
	grep -q "version \"1.2\"3\" (from $tmp/tree/VERSION or git) is not" <<<"$out"
check "  exit 1" test "$rc" = 1

# ---- 2. the programs ---------------------------------------------------------------------
made=$(sed -n 's/^#define NP_VERSION "\(.*\)"$/\1/p' "$build/gen/np_version.h")
check "the build's header has a version ($made)" test -n "$made"
for p in numaplace numaplaced numaplace-oci-hook; do
	out=$("$build/$p" --version 2>&1) && rc=0 || rc=$?
	check "$p --version: '$out', exit $rc" test "$out/$rc" = "$p $made/0"
done

# ---- 3. the state file and the metric -----------------------------------------------------
setup "$tmp"
port=$((20000 + $$ % 20000))
jq --arg l "127.0.0.1:$port" '.metrics.listen = $l' "$tmp/np.json" >"$tmp/np2.json"
printf '{"name":"web","qos":"LS","containers":[{"name":"m","cpu":"1"}]}' >"$tmp/specs/web.json"
"$build/numaplaced" -c "$tmp/np2.json" 2>"$tmp/log" &
dpid=$!
for _ in $(seq 100); do [ -S "$tmp/np.sock" ] && break; sleep 0.1; done
check "numaplaced up" test -S "$tmp/np.sock"
scrape=
for _ in $(seq 50); do
	scrape=$(curl -s "http://127.0.0.1:$port/metrics" 2>/dev/null || true)
	[ -n "$scrape" ] && break
	sleep 0.1
done
check "numaplace_build_info carries the version" \
	grep -qF "numaplace_build_info{version=\"$made\"," <<<"$scrape"
kill "$dpid" && wait "$dpid" 2>/dev/null || true
dpid=
check "the state file says which numaplaced wrote it" \
	test "$(jq -r .numaplace_version "$tmp/state/state.json")" = "$made"
echo "version-host: $pass passed, $fail failed"
[ -n "${NP_SUMMARY_FILE:-}" ] && echo "version $pass $fail" >>"$NP_SUMMARY_FILE"
[ "$fail" -eq 0 ]
