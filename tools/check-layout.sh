#!/usr/bin/env bash
# The shape of the code, checked (docs/architecture.md, CONTRIBUTING.md):
#   - no function over 120 lines (a function: from a '{' in column 0 to the
#     next '}' in column 0) under userspace/ or tools/; a file over 1,500
#     lines is a warning, not a failure: files split by concern, not size;
#   - folders include and call only folders below them in the layer order
#     (the Makefile's LAYERS, highest first); engine/ includes nothing but
#     its own headers and the public API, and does no file I/O or syscalls;
#   - only the enforcer backends (userspace/enforce/) call the cgroup write
#     primitives, and only userspace/cgroup/ writes cpuset.*/cgroup.* files;
#   - tests follow modules: every .c file is in one module of the table of
#     tests/README.md, every module has tests/unit/test_<module>.c (or an
#     exception naming the script that tests it, and why), and every
#     tests/unit/test_*.c is named after a module (test_<module>_<aspect>.c
#     for a second one).
# With a build directory, the call arrows are also read from the objects
# (nm), and the module rule (tools/callgraph.py circles): files call each
# other in a circle only when they are one module, one prefix behind one
# *_internal.h. Lists every offence; prints "layout: N passed, N failed".
#
#   tools/check-layout.sh [BUILD_DIR]
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:-}
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok   $*"; }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }

read -r -a layers <<<"$(sed -n 's/^LAYERS := //p' Makefile)"
rank() { # position in the layer order, highest first; -1 if none
	local i
	for i in "${!layers[@]}"; do [ "${layers[$i]}" = "$1" ] && { echo "$i"; return; }; done
	echo -1
}
srcs=$(git ls-files -co --exclude-standard 'userspace/*.[ch]' 'tools/*.[ch]' 2>/dev/null ||
	find userspace tools -name '*.[ch]')

# 1. sizes
out=$(for f in $srcs; do
	n=$(wc -l <"$f")
	[ "$n" -gt 1500 ] && echo "$f: $n lines"
done)
[ -n "$out" ] && echo "warn files over 1,500 lines (split by concern if there is one):"$'\n'"$out"
out=$(for f in $srcs; do
	awk -v f="$f" '
		/^\{/ { start = NR; name = prev }
		/^\}/ && start { n = NR - start + 1
			if (n > 120) printf "%s:%d: %d lines: %s\n", f, start, n, name
			start = 0 }
		/\(/ { prev = $0 }' "$f"
done)
[ -z "$out" ] && ok "no function over 120 lines" || bad "functions over 120 lines:"$'\n'"$out"

# 2. include arrows between folders
out=$(for f in $srcs; do
	case $f in userspace/*/*) ;; *) continue ;; esac
	from=${f#userspace/}; from=${from%%/*}
	rf=$(rank "$from")
	grep -o '^#include "[a-z_]*/[a-z_/]*\.h"' "$f" | sed 's/#include "//; s/".*//' |
		while read -r inc; do
			to=${inc%%/*}
			[ "$to" = numaplace ] && continue
			[ "$to" = "$from" ] && continue
			rt=$(rank "$to")
			if [ "$from" = engine ] || [ "$rt" -le "$rf" ]; then
				echo "$f includes $inc ($from may not depend on $to)"
			fi
		done
done)
[ -z "$out" ] && ok "folder includes follow the layers (${layers[*]})" ||
	bad "includes against the layers:"$'\n'"$out"

# verification (observe/) has its own configuration type
out=$(grep -n '#include "numaplace/config.h"' include/numaplace/verify.h include/numaplace/verify_config.h)
[ -z "$out" ] && ok "numaplace/verify.h does not include the daemon's configuration" ||
	bad "verification depends on the daemon's configuration:"$'\n'"$out"

# 3. the engine is pure
out=$(grep -nE '\b(open|openat|fopen|read|write|pread|close|fclose|socket|syscall|mkdir|mkdirat|unlink|unlinkat|rename|opendir|fstat|stat|ioctl|json_load_file|json_dump_file|getenv|np_log)\(' \
	userspace/engine/*.c | grep -v '^\S*:\s*\*\|//')
[ -z "$out" ] && ok "engine/ does no I/O" || bad "I/O in engine/:"$'\n'"$out"

# 4. one cgroup writer
writers='np_cgroup_(write_cpus|write_mems|set_partition|plan_apply|prepare|open|move_pid)\('
out=$(grep -nE "$writers" $srcs | grep -vE '^userspace/(cgroup|enforce)/')
[ -z "$out" ] && ok "only userspace/enforce/ calls the cgroup write primitives" ||
	bad "cgroup writes outside the enforcer:"$'\n'"$out"
out=$(for f in $srcs; do
	case $f in userspace/cgroup/* | userspace/enforce/*) continue ;; esac
	grep -q 'O_WRONLY\|O_RDWR\|"w"' "$f" &&
		grep -nE '"(cpuset|cgroup)\.[a-z_.]+"' "$f"
done)
[ -z "$out" ] && ok "cpuset.*/cgroup.* files are written only in cgroup/ and enforce/" ||
	bad "files that may write cgroup files outside the enforcer:"$'\n'"$out"

# 5. tests follow modules: the table of tests/README.md maps every .c file
# of userspace/ and tools/ to one module, and each module to its test,
# tests/unit/test_<module>.c, or to an exception naming its script.
map=tests/README.md
declare -A mod_pats=() mod_test=()
while IFS='|' read -r _ m files test _; do
	m=${m//[\` ]/}
	mod_pats[$m]=$(sed -n 's/^[^`]*`\([^`]*\)`.*/\1/p' <<<"$files")
	mod_test[$m]=$test
done < <(grep -E '^\| `[a-z_]+` \|' "$map")
out=$(for f in $(grep '\.c$' <<<"$srcs"); do
	hits=()
	for m in "${!mod_pats[@]}"; do
		for p in ${mod_pats[$m]}; do
			case $p in tools/* | include/*) ;; *) p=userspace/$p ;; esac
			# shellcheck disable=SC2053 # a glob, on purpose
			[[ $f == $p ]] && { hits+=("$m"); break; }
		done
	done
	[ ${#hits[@]} -eq 0 ] && echo "$f is in no module of $map"
	[ ${#hits[@]} -gt 1 ] && echo "$f is in ${#hits[@]} modules of $map: ${hits[*]}"
done
for m in "${!mod_pats[@]}"; do
	t=${mod_test[$m]}
	if [[ $t == *exception:* ]]; then
		script=$(sed -n 's/^[^`]*`\([^`]*\)`.*/\1/p' <<<"$t")
		[ -f "$script" ] || echo "module $m: its exception names no script that exists (\"$script\")"
		[[ $t == *\(*\)* ]] || echo "module $m: its exception gives no reason (in parentheses)"
	elif [ ! -f "tests/unit/test_$m.c" ]; then
		echo "module $m has no tests/unit/test_$m.c (nor an exception in $map)"
	fi
done
for t in tests/unit/test_*.c; do
	n=${t#tests/unit/test_}
	n=${n%.c}
	ok=
	for m in "${!mod_pats[@]}"; do
		[[ $n == "$m" || $n == "$m"_* ]] && { ok=1; break; }
	done
	[ -n "$ok" ] || echo "$t is named after no module of $map"
done)
nmod=${#mod_pats[@]} nexc=0
for m in "${!mod_test[@]}"; do [[ ${mod_test[$m]} == *exception:* ]] && nexc=$((nexc + 1)); done
[ -z "$out" ] && ok "tests follow modules: $nmod modules in $map, $((nmod - nexc)) with test_<module>.c, $nexc exceptions" ||
	bad "modules and their tests ($map):"$'\n'"$out"

# 6. call arrows from the objects
if [ -n "$build" ] && [ -d "$build/userspace" ]; then
	out=$(for l in "${layers[@]}"; do
		find "$build/userspace/$l" -name '*.o' 2>/dev/null | sort | while read -r o; do
			src=${o#"$build"/}
			[ -e "${src%.o}.c" ] || continue # left by a file moved
			nm "$o" | awk -v l="$l" '$2 ~ /^[TDBR]$/ { print l, $3 }'
		done
	done >"$build/layout-defs.txt"
	for l in "${layers[@]}"; do
		rl=$(rank "$l")
		find "$build/userspace/$l" -name '*.o' 2>/dev/null | sort | while read -r o; do
			src=${o#"$build"/}
			[ -e "${src%.o}.c" ] || continue
			nm -u "$o" | awk '{ print $2 }' | while read -r sym; do
				def=$(awk -v s="$sym" '$2 == s { print $1; exit }' "$build/layout-defs.txt")
				[ -z "$def" ] || [ "$def" = "$l" ] && continue
				[ "$(rank "$def")" -le "$rl" ] && echo "$o calls $sym ($def)"
			done
		done
	done)
	[ -z "$out" ] && ok "calls between folders follow the layers" ||
		bad "calls against the layers:"$'\n'"$out"
	# 7. the module rule
	if out=$(python3 tools/callgraph.py circles --build "$build"); then
		ok "no call circle between files but within a module ($(tail -1 <<<"$out"))"
	else
		bad "call circles between files that are not one module:"$'\n'"$(grep -v '^ok ' <<<"$out")"
	fi
fi
echo "layout: $pass passed, $fail failed"
[ -n "${NP_SUMMARY_FILE:-}" ] && echo "layout $pass $fail" >>"$NP_SUMMARY_FILE"
[ "$fail" -eq 0 ]
