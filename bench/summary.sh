#!/usr/bin/env bash
# bench/summary.sh LOG: the performance targets in one table, from the
# "figure" lines the benchmarks print (bench/figure.h: figure, name, value,
# unit, target, met or not met), in the order they ran. `make bench` runs
# it on its own log (build/bench.log). Asserts nothing.
set -uo pipefail
log=${1:?usage: bench/summary.sh LOG}
[ -r "$log" ] || { echo "bench/summary.sh: cannot read $log" >&2; exit 2; }
n=$(grep -c $'^figure\t' "$log")
echo "== performance targets ($n figures, $(date -u +%Y-%m-%d), load average $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs)"
echo "| figure | measured | target | |"
echo "|---|---|---|---|"
awk -F'\t' '$1 == "figure" { printf "| %s | %s %s | %s | %s |\n", $2, $3, $4, $5, $6 }' "$log"
met=$(awk -F'\t' '$1 == "figure" && $6 == "met"' "$log" | wc -l)
echo "$met of $n targets met"
