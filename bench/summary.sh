#!/usr/bin/env bash
# bench/summary.sh LOG: the performance targets in one table, from the
# "figure" lines the benchmarks print (bench/figure.h: figure, name, value,
# unit, target, met or not met; and for a target held to a floor measured
# in the same run, the floor's name, its value and the ratio, or the
# difference for a target "<= floor + D"), in the order they ran. `make
# bench` runs it on its own log (build/bench.log). Asserts nothing.
set -uo pipefail
log=${1:?usage: bench/summary.sh LOG}
[ -r "$log" ] || { echo "bench/summary.sh: cannot read $log" >&2; exit 2; }
n=$(grep -c $'^figure\t' "$log")
echo "== performance targets ($n figures, $(date -u +%Y-%m-%d), load average $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs)"
# a figure held to a floor of the same run has three more fields: the
# floor's name, its value, and the ratio (bench_ratio, "<= R x floor") or
# the difference with its unit (bench_above, "<= floor + D UNIT")
echo "| figure | measured | floor | ratio, or difference to the floor | target | |"
echo "|---|---|---|---|---|---|"
awk -F'\t' '$1 == "figure" {
	floor = NF >= 9 ? sprintf("%s %s (%s)", $8, $4, $7) : "-"
	ratio = NF < 9 ? "-" : $5 ~ /floor \+/ ? $9 : $9 " x"
	printf "| %s | %s %s | %s | %s | %s | %s |\n", $2, $3, $4, floor, ratio, $5, $6 }' "$log"
met=$(awk -F'\t' '$1 == "figure" && $6 == "met"' "$log" | wc -l)
echo "$met of $n targets met"
