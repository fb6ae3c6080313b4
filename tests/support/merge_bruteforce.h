/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Reference Topology Manager merge for tests and benchmarks: the kubelet's
 * literal enumeration of the cross product of all hint lists (exponential
 * on purpose). np_merge() must return exactly what this returns.
 */
#ifndef NUMAPLACE_TESTS_MERGE_BRUTEFORCE_H
#define NUMAPLACE_TESTS_MERGE_BRUTEFORCE_H

#include "numaplace/merge.h"

/* Same contract, validation and errors as np_merge(). */
int np_merge_bruteforce(const struct np_merge_input *in,
			struct np_merge_result *out);

/*
 * Test hook exported by userspace/merge.c (not part of the public API):
 * np_merge() with the internal strategy forced.
 */
#define NP_MERGE_PATH_AUTO 0
#define NP_MERGE_PATH_TRANSFORM 1 /* subset-lattice transform (<= 20 nodes) */
#define NP_MERGE_PATH_SEARCH 2	  /* pruned search over reachable masks */
int np_merge_path(const struct np_merge_input *in, struct np_merge_result *out,
		  int path);

#endif
