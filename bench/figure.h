/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One line per figure of the performance targets (docs/performance.md,
 * issue 14's table), for bench/summary.sh to gather into one table:
 *   figure<TAB>NAME<TAB>VALUE<TAB>UNIT<TAB>< TARGET UNIT<TAB>met|not met
 * and, for a figure held to a floor (bench_ratio),
 *   ...<TAB><= R x floor<TAB>met|not met<TAB>FLOOR NAME<TAB>FLOOR<TAB>RATIO
 * or, held to at most a margin above its floor (bench_above),
 *   ...<TAB><= floor + D DUNIT<TAB>met|not met<TAB>FLOOR NAME<TAB>FLOOR
 *   <TAB>+DIFF DUNIT
 * (DUNIT: the unit, or "point(s)" for a figure in %). summary.sh tells the
 * two apart by the target ("x floor" or "floor +").
 * The shell benchmarks print the same lines with printf.
 */
#ifndef NP_BENCH_FIGURE_H
#define NP_BENCH_FIGURE_H

#include <stdio.h>
#include <string.h>

static inline void bench_figure(const char *name, double value,
				const char *unit, double target)
{
	printf("figure\t%s\t%.4g\t%s\t< %g %s\t%s\n", name, value, unit, target,
	       unit, value < target ? "met" : "not met");
	fflush(stdout);
}

/*
 * A figure held to a floor measured in the same run (issue 32: a target
 * is a ratio to what this machine can do at all): the same line, then the
 * floor's name, its value (in unit) and the ratio; met when value <=
 * target x floor.
 */
static inline void bench_ratio(const char *name, double value,
			       const char *unit, const char *floor_name,
			       double floor, double target)
{
	double ratio = floor > 0 ? value / floor : 0;

	printf("figure\t%s\t%.4g\t%s\t<= %g x floor\t%s\t%s\t%.4g\t%.2f\n",
	       name, value, unit, target,
	       floor > 0 && ratio <= target ? "met" : "not met", floor_name,
	       floor, ratio);
	fflush(stdout);
}

/*
 * A figure held to a floor of the same run by a difference, not a ratio
 * (issue 32: a BPF program's own cost is its figure minus an empty
 * program's, held to <= 10 ns; end to end <= 1 percentage point above
 * the empty program's): met when value <= floor + target. A figure in %
 * differs from its floor in percentage points.
 */
static inline void bench_above(const char *name, double value,
			       const char *unit, const char *floor_name,
			       double floor, double target)
{
	const char *du = strcmp(unit, "%") ? unit : "points",
		   *tu = strcmp(unit, "%") ? unit : target == 1 ? "point" : du;

	printf("figure\t%s\t%.4g\t%s\t<= floor + %g %s\t%s\t%s\t%.4g\t%+.3g "
	       "%s\n",
	       name, value, unit, target, tu,
	       value - floor <= target ? "met" : "not met", floor_name, floor,
	       value - floor, du);
	fflush(stdout);
}

#endif
