/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One line per figure of the performance targets (docs/performance.md,
 * issue 14's table), for bench/summary.sh to gather into one table:
 *   figure<TAB>NAME<TAB>VALUE<TAB>UNIT<TAB>< TARGET UNIT<TAB>met|not met
 * The shell benchmarks print the same line with printf.
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

#endif
