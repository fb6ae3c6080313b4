/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One line per figure of the performance targets (docs/performance.md,
 * issue 14's table), for bench/summary.sh to gather into one table:
 *   figure<TAB>NAME<TAB>VALUE<TAB>UNIT<TAB>< TARGET UNIT<TAB>met|not met
 * and, for a figure held to a floor (bench_ratio),
 *   ...<TAB><= R x floor<TAB>met|not met<TAB>FLOOR NAME<TAB>FLOOR<TAB>RATIO
 * The shell benchmarks print the same lines with printf.
 */
#ifndef NP_BENCH_FIGURE_H
#define NP_BENCH_FIGURE_H

#include <stdio.h>

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

#endif
