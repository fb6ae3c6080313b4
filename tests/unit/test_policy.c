// SPDX-License-Identifier: Apache-2.0
/*
 * The node policy (userspace/engine/policy.c): every option checked, with
 * the key named (conflicting CPU policy options, reserved CPUs that do not
 * exist, align-by-socket on a machine with fewer NUMA nodes than sockets,
 * an unknown key), and reserved CPUs given by count taken as the kubelet
 * takes them. (Moved from test_admit.c.)
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "numaplace/admit.h"
#include "topo_gen.h"
#include "fixtures.h"

#define GiB (1ULL << 30)

static void policy_error(const struct np_topology *t, const char *policy_json,
			 const char *needle)
{
	struct np_node_policy p;
	struct np_node_state st;
	json_error_t jerr;
	json_t *j = json_loads(policy_json, 0, &jerr);
	char err[256] = "";
	int r;
	assert_non_null(j);
	r = np_policy_from_json(&p, j, "policy", err, sizeof(err));
	if (r == 0)
		r = np_state_init(&st, t, &p, err, sizeof(err));
	assert_int_equal(r, -EINVAL);
	if (!strstr(err, needle))
		fail_msg("error \"%s\" lacks \"%s\"", err, needle);
	json_decref(j);
}

static void test_policy_validation(void **state)
{
	struct np_topology *t = np_test_topology(2, 1, 4, 2, true, GiB);
	(void)state;
	policy_error(t, "{\"cpu_policy\":\"static\"}", "reserved_cpus");
	policy_error(t, "{\"cpu_policy\":\"dynamic\"}", "cpu_policy");
	policy_error(t, "{\"cpu_policy\":\"static\",\"reserved_cpus\":\"0,99\"}",
		     "CPUs 99 do not exist");
	policy_error(t, "{\"cpu_policy\":\"static\",\"reserved_cpus\":1,"
			"\"cpu_policy_options\":{\"full-pcpus-only\":true,"
			"\"distribute-cpus-across-cores\":true}}",
		     "full-pcpus-only and distribute-cpus-across-cores");
	policy_error(t, "{\"cpu_policy\":\"static\",\"reserved_cpus\":1,"
			"\"cpu_policy_options\":{\"distribute-cpus-across-numa\":"
			"\"true\",\"distribute-cpus-across-cores\":\"1\"}}",
		     "distribute-cpus-across-numa and distribute-cpus-across-cores");
	policy_error(t, "{\"cpu_policy\":\"static\",\"reserved_cpus\":1,"
			"\"cpu_policy_options\":{\"prefer-align-cpus-by-uncorecache\":"
			"true,\"distribute-cpus-across-numa\":true}}",
		     "prefer-align-cpus-by-uncorecache and distribute-cpus-across-numa");
	policy_error(t, "{\"cpu_policy\":\"static\",\"reserved_cpus\":1,"
			"\"topology_policy\":\"single-numa-node\","
			"\"cpu_policy_options\":{\"align-by-socket\":true}}",
		     "align-by-socket is not compatible");
	policy_error(t, "{\"cpu_policy\":\"static\",\"reserved_cpus\":1,"
			"\"cpu_policy_options\":{\"full-pcpus-only\":\"maybe\"}}",
		     "full-pcpus-only: expected true or false");
	policy_error(t, "{\"cpu_policy\":\"static\",\"reserved_cpus\":1,"
			"\"cpu_policy_options\":{\"turbo\":true}}",
		     "turbo: unknown CPU policy option");
	policy_error(t, "{\"cpu_policy\":\"none\",\"cpu_policy_options\":"
			"{\"full-pcpus-only\":true}}",
		     "options need cpu_policy \"static\"");
	policy_error(t, "{\"cpu_policy\":\"static\",\"reserved_cpus\":1,"
			"\"topology_policy\":\"strict\"}",
		     "topology_policy");
	policy_error(t, "{\"cpu_policy\":\"static\",\"reserved_cpus\":1,"
			"\"colour\":\"blue\"}",
		     "policy.colour: unknown field");
	np_topology_free(t);
	/* align-by-socket needs sockets <= NUMA nodes */
	t = np_test_topology(2, -2, 4, 2, true, GiB);
	policy_error(t, "{\"cpu_policy\":\"static\",\"reserved_cpus\":1,"
			"\"cpu_policy_options\":{\"align-by-socket\":true}}",
		     "needs at least as many NUMA nodes as sockets");
	np_topology_free(t);
}

/* Reserved CPUs by count come from the same topology-aware take: the
 * kubelet's fixtures give {0,6} for 2 CPUs on its dual-socket HT machine. */
static void test_reserved_count(void **state)
{
	struct np_topology *t = np_test_topology(2, 1, 3, 2, true, GiB);
	struct np_node_state st;
	char buf[64];
	(void)state;
	np_test_state_init(&st, t, "{\"cpu_policy\":\"static\",\"reserved_cpus\":2}");
	np_cpuset_format(&st.reserved, buf, sizeof(buf));
	assert_string_equal(buf, "0,6");
	np_state_free(&st);
	np_test_state_init(&st, t, "{\"cpu_policy\":\"static\",\"reserved_cpus\":1}");
	np_cpuset_format(&st.reserved, buf, sizeof(buf));
	assert_string_equal(buf, "0");
	np_state_free(&st);
	np_topology_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_policy_validation),
		cmocka_unit_test(test_reserved_count),
	};
	return cmocka_run_group_tests_name("policy", tests, NULL, NULL);
}
