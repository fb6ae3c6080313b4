/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fixtures the unit tests share (they were copied from test to test):
 * CPU lists, a node state from a policy in JSON, workload requests, a
 * seeded random source, and assert_contains. Each fails the test on an
 * input that is not valid, naming it.
 */
#ifndef NP_TEST_FIXTURES_H
#define NP_TEST_FIXTURES_H

#include <stdint.h>
#include <string.h>

#include "numaplace/admit.h"
#include "numaplace/cpuset.h"

/* fail unless the string hay contains needle */
#define assert_contains(hay, needle)                                           \
	do {                                                                   \
		if (!strstr((hay), (needle)))                                  \
			fail_msg("\"%s\" does not contain \"%s\"", (hay),      \
				 (needle));                                    \
	} while (0)

/* The CPU list parsed ("0-3,8"). */
np_cpuset np_test_cpus(const char *list);
/* Fail unless got is the CPU list want, showing both. */
void np_test_assert_cpus(const np_cpuset *got, const char *want);

/* st made on t with the node policy in JSON (np_policy_from_json,
 * np_state_init). */
void np_test_state_init(struct np_node_state *st, const struct np_topology *t,
			const char *policy_json);
/* A workload request of one container "main" of cpus_milli, cgroup
 * named as the workload: static storage, overwritten by the next call (up
 * to NP_MAX_CONTAINERS containers may be added by the caller; nobody
 * frees it, np_admit copies what it keeps). */
struct np_workload_req *np_test_workload(const char *name, enum np_qos q,
					 int cpus_milli);
/* Admit the workload spec in JSON; fail unless it is admitted. */
void np_test_admit_json(struct np_node_state *st, const char *spec);
/* A workload spec in JSON parsed (np_workload_req_from_json at "spec"). */
int np_test_spec(const char *json, struct np_workload_req *w, char *err,
		 size_t errlen);

/* A new directory /tmp/np-NAME-XXXXXX into buf (len >= 64), and its
 * removal with all it holds; each fails the test on an error. */
void np_test_tmpdir(char *buf, size_t len, const char *name);
void np_test_rmtree(const char *dir);
/* Write text to ROOT/REL, its directories made as needed (a fake /proc
 * or /sys below a temporary directory). */
void np_test_put(const char *root, const char *rel, const char *text);
/* The content of ROOT/REL (static buffer of 4 KiB, overwritten by the
 * next call); fails the test when it cannot be read. */
const char *np_test_get(const char *root, const char *rel);

/* A seeded random source (splitmix64). The seed: the environment
 * variable env when set (a failing run is repeated with it), else dflt. */
uint64_t np_test_seed(const char *env, uint64_t dflt);
void np_test_rng_set(uint64_t seed);
uint64_t np_test_rnd(void);
/* 0..n-1 */
int np_test_rndn(int n);

#endif
