// SPDX-License-Identifier: Apache-2.0
/*
 * Admission: pool arithmetic, Koordinator classes, DistributeEvenly,
 * state validation, release, beyond-8-node admission, and property tests
 * on random topologies. (The node policy's checks: test_policy.c.)
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
#include "numaplace/hints.h"
#include "topo_gen.h"
#include "fixtures.h"

#define GiB (1ULL << 30)

static void test_pools(void **state)
{
	struct np_topology *t = np_test_topology(2, 1, 2, 2, true, GiB);
	struct np_node_state st;
	struct np_decision d;
	struct np_pools p;
	char err[256], buf[64];
	(void)state;
	/* cpus 0-7: core c = {c, c+4}; node 0 = cores 0,1 */
	np_test_state_init(&st, t, "{\"cpu_policy\":\"static\",\"reserved_cpus\":\"0,4\"}");
	assert_int_equal(np_admit(&st, np_test_workload("lse", NP_QOS_LSE, 2000), &d, err,
				  sizeof(err)),
			 0);
	assert_true(d.admitted);
	assert_int_equal(np_admit(&st, np_test_workload("lsr", NP_QOS_LSR, 2000), &d, err,
				  sizeof(err)),
			 0);
	assert_true(d.admitted);
	np_state_pools(&st, &p);
	np_cpuset_format(&p.exclusive, buf, sizeof(buf));
	assert_string_equal(buf, "1-2,5-6");
	/* shared: all - exclusive (reserved included without strict) */
	np_cpuset_format(&p.shared, buf, sizeof(buf));
	assert_string_equal(buf, "0,3-4,7");
	/* BE: all - LSE - reserved: LSR CPUs stay available to BE */
	np_cpuset_format(&p.be, buf, sizeof(buf));
	assert_string_equal(buf, "2-3,6-7");
	np_cpuset_format(&p.allocatable, buf, sizeof(buf));
	assert_string_equal(buf, "3,7");
	/* exclusive never overlaps reserved */
	assert_false(np_cpuset_intersects(&p.exclusive, &p.reserved));
	/* release returns the CPUs */
	assert_int_equal(np_release(&st, "lse"), 0);
	assert_int_equal(np_release(&st, "lse"), -ENOENT);
	np_state_pools(&st, &p);
	np_cpuset_format(&p.allocatable, buf, sizeof(buf));
	assert_string_equal(buf, "1,3,5,7");
	/* duplicate names are refused */
	assert_int_equal(np_admit(&st, np_test_workload("lsr", NP_QOS_LSR, 1000), &d, err,
				  sizeof(err)),
			 -EEXIST);
	/* LSE with fractional CPUs is invalid input, not a rejection */
	assert_int_equal(np_admit(&st, np_test_workload("frac", NP_QOS_LSE, 1500), &d, err,
				  sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "containers[0].cpu"));
	/* LSE with no CPU is invalid too (it would run on the shared pool,
	 * reserved CPUs included, under an exclusive class) */
	assert_int_equal(np_admit(&st, np_test_workload("zero", NP_QOS_LSE, 0), &d, err,
				  sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "LSE needs whole CPUs, at least 1, got 0m"));
	np_state_free(&st);
	np_topology_free(t);
}

/* A rejection leaves the state exactly as it was. */
static void test_reject_changes_nothing(void **state)
{
	struct np_topology *t = np_test_topology(2, 1, 2, 2, true, GiB);
	struct np_node_state st;
	struct np_decision d;
	struct np_workload_alloc *before = malloc(4 * sizeof(*before));
	struct np_workload_alloc *ptrs[4];
	int n;
	char err[256];
	(void)state;
	np_test_state_init(&st, t, "{\"cpu_policy\":\"static\",\"reserved_cpus\":\"0,4\","
		     "\"topology_policy\":\"single-numa-node\"}");
	assert_int_equal(np_admit(&st, np_test_workload("a", NP_QOS_LSE, 2000), &d, err,
				  sizeof(err)),
			 0);
	if (!d.admitted)
		fail_msg("rejected: %s", d.reason);
	n = st.nworkloads;
	assert_true(n <= 4);
	memcpy(ptrs, st.w, sizeof(*st.w) * (size_t)n);
	for (int i = 0; i < n; i++)
		before[i] = *st.w[i];
	/* 5 CPUs: no single node has them */
	assert_int_equal(np_admit(&st, np_test_workload("b", NP_QOS_GUARANTEED, 5000), &d,
				  err, sizeof(err)),
			 0);
	assert_false(d.admitted);
	assert_non_null(strstr(d.reason, "single-numa-node"));
	assert_int_equal(st.nworkloads, n);
	assert_memory_equal(ptrs, st.w, sizeof(*st.w) * (size_t)n);
	for (int i = 0; i < n; i++)
		assert_memory_equal(&before[i], st.w[i], sizeof(before[i]));
	free(before);
	np_state_free(&st);
	np_topology_free(t);
}

static int cpus_on_node(const struct np_topology *t, const np_cpuset *s,
			int node)
{
	return np_cpuset_count_and(s, &t->numa[t->numa_index[node]].u.cpus);
}

/* DistributeEvenly splits over the hint's nodes (Koordinator declares the
 * strategy and then treats it as LeastAllocated). */
static void test_distribute_evenly(void **state)
{
	struct np_topology *t = np_test_topology(1, 4, 2, 2, true, 16 * GiB);
	struct np_node_state st;
	struct np_decision d;
	struct np_workload_req *w;
	char err[256];
	(void)state;
	/* 4 nodes x 2 cores x 2 threads; 6 CPUs need 2 nodes */
	np_test_state_init(&st, t, "{\"cpu_policy\":\"static\",\"reserved_cpus\":\"0\","
		     "\"topology_policy\":\"best-effort\","
		     "\"numa_allocate_strategy\":\"DistributeEvenly\"}");
	w = np_test_workload("even", NP_QOS_LSE, 6000);
	w->has_bind = true;
	w->bind = NP_BIND_SPREAD_BY_PCPUS;
	assert_int_equal(np_admit(&st, w, &d, err, sizeof(err)), 0);
	assert_true(d.admitted);
	assert_int_equal(np_cpuset_count(d.alloc->c[0].cpus), 6);
	assert_int_equal(np_nodemask_count(d.alloc->c[0].hint.mask), 2);
	NP_NODEMASK_FOREACH(n, d.alloc->c[0].hint.mask)
	assert_int_equal(cpus_on_node(t, d.alloc->c[0].cpus, n), 3);
	np_state_free(&st);
	np_topology_free(t);
}

/* State loading refuses overlapping or reserved exclusive sets. */
static void test_state_validation(void **state)
{
	struct np_topology *t = np_test_topology(2, 1, 2, 2, true, GiB);
	struct np_node_state st;
	json_error_t jerr;
	json_t *j;
	char err[256];
	(void)state;
	np_test_state_init(&st, t, "{\"cpu_policy\":\"static\",\"reserved_cpus\":\"0,4\"}");
	j = json_loads(
		"{\"workloads\":[{\"spec\":{\"name\":\"a\",\"qos\":\"LSE\","
		"\"containers\":[{\"name\":\"m\",\"cpu\":\"2\"}]},\"class\":"
		"\"LSE\",\"containers\":[{\"name\":\"m\",\"exclusive\":true,"
		"\"cpus\":\"1,5\",\"mems\":\"0\"}]},{\"spec\":{\"name\":\"b\","
		"\"qos\":\"LSE\",\"containers\":[{\"name\":\"m\",\"cpu\":\"2\"}]},"
		"\"class\":\"LSE\",\"containers\":[{\"name\":\"m\",\"exclusive\":"
		"true,\"cpus\":\"5-6\",\"mems\":\"0-1\"}]}]}",
		0, &jerr);
	assert_int_equal(np_state_load_json(&st, j, "state", err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "state.workloads[1].containers[0].cpus: "
				    "overlaps"));
	assert_int_equal(st.nworkloads, 0);
	json_decref(j);
	j = json_loads("{\"workloads\":[{\"spec\":{\"name\":\"a\",\"qos\":"
		       "\"LSE\",\"containers\":[{\"name\":\"m\",\"cpu\":\"2\"}]},"
		       "\"class\":\"LSE\",\"containers\":[{\"name\":\"m\","
		       "\"exclusive\":true,\"cpus\":\"0-1\",\"mems\":\"0\"}]}]}",
		       0, &jerr);
	assert_int_equal(np_state_load_json(&st, j, "state", err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "reserved"));
	json_decref(j);
	/* an exclusive set larger than its spec asks is refused */
	j = json_loads("{\"workloads\":[{\"spec\":{\"name\":\"a\",\"qos\":"
		       "\"LSE\",\"containers\":[{\"name\":\"m\",\"cpu\":\"2\"}]},"
		       "\"class\":\"LSE\",\"containers\":[{\"name\":\"m\","
		       "\"exclusive\":true,\"cpus\":\"1-3\",\"mems\":\"0\"}]}]}",
		       0, &jerr);
	assert_int_equal(np_state_load_json(&st, j, "state", err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "state.workloads[0].containers[0].cpus: "
				    "holds 3 CPU(s), its spec asks for 2000m"));
	assert_int_equal(st.nworkloads, 0);
	json_decref(j);
	np_state_free(&st);
	np_topology_free(t);
}

/* Workload spec validation names the field. */
static void spec_error(const char *json, const char *needle)
{
	struct np_workload_req w;
	json_error_t jerr;
	json_t *j = json_loads(json, 0, &jerr);
	char err[256] = "";
	assert_non_null(j);
	assert_int_equal(np_workload_req_from_json(&w, j, "spec", err, sizeof(err)),
			 -EINVAL);
	if (!strstr(err, needle))
		fail_msg("spec %s: error \"%s\" lacks \"%s\"", json, err, needle);
	np_workload_req_free(&w);
	json_decref(j);
}

static void test_spec_validation(void **state)
{
	struct np_workload_req w;
	json_error_t jerr;
	json_t *j;
	char err[256];
	(void)state;
	spec_error("{\"qos\":\"LSE\",\"containers\":[{\"name\":\"a\"}]}",
		   "spec.name: required");
	spec_error("{\"name\":\"x\",\"qos\":\"Gold\",\"containers\":[{\"name\":\"a\"}]}",
		   "spec.qos: \"Gold\" is not");
	spec_error("{\"name\":\"x\",\"qos\":\"LS\",\"containers\":[]}",
		   "spec.containers");
	spec_error("{\"name\":\"x\",\"qos\":\"LS\",\"cgroup\":\"../etc\","
		   "\"containers\":[{\"name\":\"a\"}]}",
		   "spec.cgroup: \"../etc\" must not contain");
	spec_error("{\"name\":\"x\",\"qos\":\"LS\",\"cgroup\":\"/abs\","
		   "\"containers\":[{\"name\":\"a\"}]}",
		   "must be relative");
	spec_error("{\"name\":\"x\",\"qos\":\"LS\",\"cgroup\":\"a//b\","
		   "\"containers\":[{\"name\":\"a\"}]}",
		   "empty component");
	spec_error("{\"name\":\"x\",\"qos\":\"LS\",\"containers\":[{\"name\":"
		   "\"a\",\"cpu\":\"-2\"}]}",
		   "spec.containers[0].cpu");
	spec_error("{\"name\":\"x\",\"qos\":\"LS\",\"containers\":[{\"name\":"
		   "\"a\",\"cpu\":\"1000000\"}]}",
		   "more CPUs than any machine has");
	spec_error("{\"name\":\"x\",\"qos\":\"LS\",\"containers\":[{\"name\":"
		   "\"a\",\"memory\":\"2Gb\"}]}",
		   "spec.containers[0].memory: quantity \"2Gb\" has an unknown "
		   "suffix");
	spec_error("{\"name\":\"x\",\"qos\":\"LS\",\"containers\":[{\"name\":"
		   "\"a\",\"memory\":\"0.5\"}]}",
		   "not a whole number of bytes");
	spec_error("{\"name\":\"x\",\"qos\":\"LS\",\"containers\":[{\"name\":"
		   "\"a\",\"hugepages-2Mi\":\"3Mi\"}]}",
		   "not a whole number of pages");
	spec_error("{\"name\":\"x\",\"qos\":\"LS\",\"containers\":[{\"name\":"
		   "\"a\",\"gpus\":1}]}",
		   "spec.containers[0].gpus: unknown field");
	spec_error("{\"name\":\"x\",\"qos\":\"LS\",\"containers\":[{\"name\":"
		   "\"a\"},{\"name\":\"a\"}]}",
		   "duplicate container name");
	spec_error("{\"name\":\"x\",\"qos\":\"LS\",\"isolation\":\"partition\","
		   "\"containers\":[{\"name\":\"a\"}]}",
		   "a partition needs exclusive CPUs");
	spec_error("{\"name\":\"x\",\"qos\":\"LSE\",\"isolation\":\"partition\","
		   "\"unit\":\"x.service\",\"containers\":[{\"name\":\"a\"}]}",
		   "spec.isolation: a unit workload cannot be a partition");
	spec_error("{\"name\":\"x\",\"qos\":\"LSE\",\"resourceSpec\":{"
		   "\"preferredCPUBindPolicy\":\"Tight\"},\"containers\":[{"
		   "\"name\":\"a\"}]}",
		   "spec.resourceSpec.preferredCPUBindPolicy");
	spec_error("{\"name\":\"x\",\"qos\":\"LS\",\"containers\":[{\"name\":"
		   "\"a\",\"devices\":{\"v.com/gpu\":0}}]}",
		   "expected a count 1..1024");
	/* Guaranteed: an LSE container with 250m is refused (below) */
	j = json_loads("{\"name\":\"ok\",\"qos\":\"Guaranteed\",\"cgroup\":\"pods/ok\","
		       "\"containers\":[{\"name\":\"a\",\"cpu\":\"2\",\"memory\":"
		       "\"1.5Gi\",\"hugepages-1Gi\":\"2Gi\",\"devices\":{\"v.com/"
		       "gpu\":2}},{\"name\":\"b\",\"cpu\":\"250m\"}],"
		       "\"resourceSpec\":{\"preferredCPUBindPolicy\":"
		       "\"SpreadByPCPUs\",\"preferredCPUExclusivePolicy\":"
		       "\"PCPULevel\"},\"isolation\":\"partition\"}",
		       0, &jerr);
	assert_int_equal(np_workload_req_from_json(&w, j, "spec", err, sizeof(err)),
			 0);
	assert_int_equal(w.c[0].cpu_milli, 2000);
	assert_int_equal(w.c[0].memory, 3ULL << 29);
	assert_int_equal(w.c[0].huge_size_kb[0], 1048576);
	assert_int_equal(w.c[0].huge_bytes[0], 2 * GiB);
	assert_int_equal(w.c[0].dev[0].count, 2);
	assert_int_equal(w.c[1].cpu_milli, 250);
	assert_int_equal(w.bind, NP_BIND_SPREAD_BY_PCPUS);
	assert_int_equal(w.excl, NP_EXCL_PCPU_LEVEL);
	assert_true(w.partition);
	np_workload_req_free(&w);
	json_decref(j);
	spec_error("{\"name\":\"x\",\"qos\":\"LSE\",\"containers\":[{\"name\":"
		   "\"a\",\"cpu\":\"2\"},{\"name\":\"b\",\"cpu\":\"250m\"}]}",
		   "spec.containers[1].cpu: LSE needs whole CPUs, at least 1, "
		   "got 250m");
	spec_error("{\"name\":\"x\",\"qos\":\"LSR\",\"containers\":[{\"name\":"
		   "\"a\"}]}",
		   "spec.containers[0].cpu: LSR needs whole CPUs, at least 1, "
		   "got 0m");
	spec_error("{\"name\":\"x\",\"qos\":\"LS\",\"cgroup\":\"a/"
		   "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
		   "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
		   "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
		   "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
		   "xxxxxxxxxx\",\"containers\":[{\"name\":\"a\"}]}",
		   "spec.cgroup: a component is 258 bytes long");
}

/* Pod scope: one hint for the whole workload. */
static void test_pod_scope(void **state)
{
	struct np_topology *t = np_test_topology(2, 1, 4, 2, true, GiB);
	struct np_node_state st;
	struct np_decision d;
	struct np_workload_req *w;
	char err[256];
	(void)state;
	/* nodes of 8 CPUs; two containers of 3 CPUs: pod scope keeps both
	 * on one node, as the pod's 6 CPUs fit there. */
	np_test_state_init(&st, t, "{\"cpu_policy\":\"static\",\"reserved_cpus\":\"0,8\","
		     "\"topology_policy\":\"restricted\","
		     "\"topology_scope\":\"pod\"}");
	w = np_test_workload("pod", NP_QOS_GUARANTEED, 3000);
	w->ncontainers = 2;
	w->c[1] = w->c[0];
	w->c[1].name = "side";
	assert_int_equal(np_admit(&st, w, &d, err, sizeof(err)), 0);
	assert_true(d.admitted);
	assert_true(d.alloc->c[0].hint.mask == d.alloc->c[1].hint.mask);
	assert_int_equal(np_nodemask_count(d.alloc->c[0].hint.mask), 1);
	assert_false(np_cpuset_intersects(d.alloc->c[0].cpus, d.alloc->c[1].cpus));
	np_state_free(&st);
	np_topology_free(t);
}

/* A container's CPU set: a shared container points at the one
 * process-wide empty set (no heap), an exclusive one owns its own; a copy
 * owns copies of its own (changing it leaves the original alone), and
 * copy and free leak nothing (ASan). */
/* np_release_keep: the allocation moved out and the aggregates without
 * it, also from a state with no device array yet (it is made before
 * anything moves: the refresh cannot fail after); a bad index changes
 * nothing. */
static void test_release_keep(void **state)
{
	struct np_topology *t = np_test_topology(2, 1, 2, 2, true, GiB);
	struct np_node_state st;
	struct np_workload_alloc out, untouched;
	struct np_decision d;
	np_cpuset excl1;
	char err[256];
	(void)state;
	np_test_state_init(&st, t, "{\"cpu_policy\":\"static\",\"reserved_cpus\":\"0,4\"}");
	assert_int_equal(np_admit(&st, np_test_workload("g0", NP_QOS_GUARANTEED, 2000), &d,
				  err, sizeof(err)),
			 0);
	assert_true(d.admitted);
	assert_int_equal(np_admit(&st, np_test_workload("g1", NP_QOS_GUARANTEED, 2000), &d,
				  err, sizeof(err)),
			 0);
	assert_true(d.admitted);
	excl1 = *st.w[1]->c[0].cpus;
	memset(&untouched, 0xa5, sizeof(untouched));
	out = untouched;
	assert_int_equal(np_release_keep(&st, 2, &out), -ENOENT);
	assert_int_equal(np_release_keep(&st, -1, &out), -ENOENT);
	assert_memory_equal(&out, &untouched, sizeof(out));
	assert_int_equal(st.nworkloads, 2);

	free(st.cache.dev_taken);
	st.cache.dev_taken = NULL;
	assert_int_equal(np_release_keep(&st, 0, &out), 0);
	assert_string_equal(out.req.name, "g0");
	assert_int_equal(st.nworkloads, 1);
	assert_string_equal(st.w[0]->req.name, "g1");
	assert_non_null(st.cache.dev_taken);
	assert_true(np_cpuset_equal(&st.cache.excl, &excl1));
	np_workload_alloc_free(&out);
	np_state_free(&st);
	np_topology_free(t);
}

static void test_container_cpus_owned(void **state)
{
	struct np_topology *t = np_test_topology(2, 1, 2, 2, true, GiB);
	struct np_node_state st, st2;
	struct np_workload_alloc cp;
	const struct np_workload_alloc *a;
	struct np_workload_req *w;
	struct np_decision d;
	np_cpuset excl, one;
	char err[256], buf[64];
	(void)state;
	np_test_state_init(&st, t, "{\"cpu_policy\":\"static\",\"reserved_cpus\":\"0,4\"}");
	/* a Guaranteed pod: 2 whole CPUs (exclusive) and 500m (shared) */
	w = np_test_workload("mix", NP_QOS_GUARANTEED, 2000);
	w->ncontainers = 2;
	w->c[1] = w->c[0];
	w->c[1].name = "side";
	w->c[1].cpu_milli = 500;
	assert_int_equal(np_admit(&st, w, &d, err, sizeof(err)), 0);
	assert_true(d.admitted);
	assert_int_equal(np_admit(&st, np_test_workload("ls", NP_QOS_LS, 500), &d, err,
				  sizeof(err)),
			 0);
	assert_true(d.admitted);
	assert_ptr_equal(st.w[1]->c[0].cpus, &np_cpuset_empty_set);
	a = st.w[0];
	assert_true(a->c[0].exclusive);
	assert_ptr_not_equal(a->c[0].cpus, &np_cpuset_empty_set);
	assert_int_equal(np_cpuset_count(a->c[0].cpus), 2);
	assert_false(a->c[1].exclusive);
	assert_ptr_equal(a->c[1].cpus, &np_cpuset_empty_set);
	excl = *a->c[0].cpus;

	assert_int_equal(np_workload_alloc_copy(&cp, a), 0);
	assert_ptr_not_equal(cp.c[0].cpus, a->c[0].cpus);
	assert_true(np_cpuset_equal(cp.c[0].cpus, a->c[0].cpus));
	assert_ptr_equal(cp.c[1].cpus, &np_cpuset_empty_set);
	assert_true(np_workload_alloc_fp(&cp) == np_workload_alloc_fp(a));
	/* the copy's own set is rewritten in place, the original's kept */
	np_cpuset_zero(&one);
	np_cpuset_set(&one, 3);
	assert_int_equal(np_container_set_cpus(&cp.c[0], &one), 0);
	assert_true(np_cpuset_equal(cp.c[0].cpus, &one));
	assert_true(np_cpuset_equal(a->c[0].cpus, &excl));
	assert_int_equal(np_container_set_cpus(&cp.c[0], cp.c[0].cpus), 0);
	assert_true(np_cpuset_equal(cp.c[0].cpus, &one));
	assert_true(np_workload_alloc_fp(&cp) != np_workload_alloc_fp(a));
	/* the copy's shared container takes a set of its own */
	assert_int_equal(np_container_set_cpus(&cp.c[1], &one), 0);
	assert_ptr_not_equal(cp.c[1].cpus, &np_cpuset_empty_set);
	assert_ptr_equal(a->c[1].cpus, &np_cpuset_empty_set);
	assert_true(np_cpuset_empty(&np_cpuset_empty_set));
	/* emptied: back on the shared set, its heap set freed */
	np_cpuset_zero(&one);
	assert_int_equal(np_container_set_cpus(&cp.c[0], &one), 0);
	assert_ptr_equal(cp.c[0].cpus, &np_cpuset_empty_set);
	assert_true(np_cpuset_equal(a->c[0].cpus, &excl));
	np_workload_alloc_free(&cp);

	/* a state copy too: independent, freed apart */
	assert_int_equal(np_state_copy(&st2, &st), 0);
	assert_ptr_not_equal(st2.w[0]->c[0].cpus, st.w[0]->c[0].cpus);
	assert_ptr_equal(st2.w[0]->c[1].cpus, &np_cpuset_empty_set);
	np_state_free(&st2);
	/* saved and loaded: the same form, fingerprint and kinds of sets */
	{
		json_t *j1, *j2;
		char *s1, *s2;

		assert_int_equal(np_state_to_json(&st, &j1), 0);
		np_test_state_init(&st2, t, "{\"cpu_policy\":\"static\","
			      "\"reserved_cpus\":\"0,4\"}");
		assert_int_equal(np_state_load_json(&st2, j1, "state", err,
						    sizeof(err)),
				 0);
		assert_int_equal(np_state_to_json(&st2, &j2), 0);
		s1 = json_dumps(j1, JSON_SORT_KEYS);
		s2 = json_dumps(j2, JSON_SORT_KEYS);
		assert_string_equal(s1, s2);
		assert_true(np_workload_alloc_fp(st2.w[0]) ==
			    np_workload_alloc_fp(st.w[0]));
		assert_ptr_not_equal(st2.w[0]->c[0].cpus, &np_cpuset_empty_set);
		assert_ptr_equal(st2.w[0]->c[1].cpus, &np_cpuset_empty_set);
		assert_ptr_equal(st2.w[1]->c[0].cpus, &np_cpuset_empty_set);
		free(s1);
		free(s2);
		json_decref(j1);
		json_decref(j2);
		np_state_free(&st2);
	}
	np_cpuset_format(st.w[0]->c[0].cpus, buf, sizeof(buf));
	np_cpuset_format(&excl, err, sizeof(err));
	assert_string_equal(buf, err);
	assert_int_equal(np_release(&st, "mix"), 0);
	np_state_free(&st);
	np_topology_free(t);
}

/* 64 NUMA nodes: the admission path does not enumerate 2^64 node sets. */
static void test_64_nodes(void **state)
{
	struct np_topology *t = np_test_topology(8, 8, 4, 2, true, 8 * GiB);
	struct np_node_state st;
	struct np_decision d;
	char err[256];
	int admitted = 0;
	(void)state;
	assert_int_equal(t->nnuma, 64);
	np_test_state_init(&st, t, "{\"cpu_policy\":\"static\",\"reserved_cpus\":2,"
		     "\"topology_policy\":\"restricted\"}");
	/* 8 CPUs = one whole node each time: 63 fit (node 0 holds the
	 * reserved core), the 64th is rejected. */
	for (int i = 0; i < 64; i++) {
		char name[32];
		snprintf(name, sizeof(name), "w%d", i);
		assert_int_equal(np_admit(&st, np_test_workload(name, NP_QOS_GUARANTEED, 8000),
					  &d, err, sizeof(err)),
				 0);
		if (!d.admitted)
			break;
		assert_int_equal(np_nodemask_count(d.alloc->c[0].hint.mask), 1);
		admitted++;
	}
	assert_int_equal(admitted, 63);
	np_state_free(&st);
	/* align-by-socket at 64 nodes: a 16-CPU admission across two nodes
	 * of one socket returns (its socket width was a walk over 2^64 node
	 * sets) */
	np_test_state_init(&st, t, "{\"cpu_policy\":\"static\",\"reserved_cpus\":2,"
		     "\"topology_policy\":\"best-effort\","
		     "\"cpu_policy_options\":{\"align-by-socket\":true}}");
	assert_int_equal(np_admit(&st, np_test_workload("wide", NP_QOS_GUARANTEED, 16000), &d,
				  err, sizeof(err)),
			 0);
	assert_true(d.admitted);
	assert_int_equal(np_topology_sockets_of_nodes(t, d.alloc->c[0].hint.mask),
			 1);
	np_state_free(&st);
	np_topology_free(t);
}

/* The width search agrees with the explicit kubelet path whenever a
 * preferred answer exists (random CPU + device providers, <= 8 nodes). */
static void test_search_matches_explicit(void **state)
{
	unsigned seed = 12345;
	int compared = 0;
	(void)state;
	for (int iter = 0; iter < 3000; iter++) {
		struct np_provider prov[3];
		struct np_hints_query q = {0};
		struct np_merge_result a, b;
		uint16_t(*dist)[NP_MAX_NUMA] = calloc(NP_MAX_NUMA, sizeof(*dist));
		int n = 2 + (int)(rand_r(&seed) % 7), np = 1 + (int)(rand_r(&seed) % 3);
		assert_non_null(dist);
		for (int i = 0; i < n; i++)
			for (int j = 0; j < n; j++)
				dist[i][j] = i == j ? 10 : (uint16_t)(11 + rand_r(&seed) % 20);
		q.nodes = ((np_nodemask)1 << n) - 1;
		q.distance = (const uint16_t(*)[NP_MAX_NUMA])dist;
		q.prefer_closest = rand_r(&seed) % 2;
		q.policy = 1 + rand_r(&seed) % 3;
		q.nprov = np;
		q.prov = prov;
		for (int p = 0; p < np; p++) {
			memset(&prov[p], 0, sizeof(prov[p]));
			prov[p].kind = p == 0 ? NP_PROV_CPU : NP_PROV_DEVICE;
			snprintf(prov[p].resource, sizeof(prov[p].resource), "r%d", p);
			prov[p].nres = 1;
			prov[p].nodes = q.nodes;
			for (int i = 0; i < n; i++) {
				prov[p].total[0][i] = 4 + rand_r(&seed) % 5;
				prov[p].avail[0][i] = rand_r(&seed) % (prov[p].total[0][i] + 1);
			}
			prov[p].request[0] = 1 + rand_r(&seed) % 12;
		}
		assert_int_equal(np_hints_best(&q, &a), 0);
		assert_int_equal(np_hints_best_search(&q, &b), 0);
		if (a.best.preferred) {
			if (!b.best.preferred || a.best.mask != b.best.mask ||
			    a.best.any != b.best.any)
				fail_msg("iteration %d: explicit %llx/%d, search "
					 "%llx/%d",
					 iter, (unsigned long long)a.best.mask,
					 a.best.preferred,
					 (unsigned long long)b.best.mask,
					 b.best.preferred);
			compared++;
		} else {
			assert_false(b.best.preferred);
		}
		assert_int_equal(a.admit, b.admit);
		free(dist);
	}
	printf("search == explicit on %d preferred cases\n", compared);
	assert_true(compared > 500);
}

/*
 * Properties over random topologies and random admission sequences:
 * exclusive sets never overlap and never touch reserved CPUs; every
 * admitted exclusive container has exactly its request; full-pcpus-only
 * gives whole cores; single-numa-node keeps each container in one node.
 */
static void test_properties(void **state)
{
	unsigned seed = 777;
	long checked = 0;
	static const char *const policies[] = {
		"{\"cpu_policy\":\"static\",\"reserved_cpus\":1,"
		"\"topology_policy\":\"best-effort\"}",
		"{\"cpu_policy\":\"static\",\"reserved_cpus\":2,"
		"\"topology_policy\":\"restricted\",\"cpu_policy_options\":"
		"{\"full-pcpus-only\":true}}",
		"{\"cpu_policy\":\"static\",\"reserved_cpus\":1,"
		"\"topology_policy\":\"single-numa-node\"}",
		"{\"cpu_policy\":\"static\",\"reserved_cpus\":2,"
		"\"topology_policy\":\"best-effort\",\"cpu_policy_options\":"
		"{\"distribute-cpus-across-numa\":true,\"full-pcpus-only\":true}}",
		"{\"cpu_policy\":\"static\",\"reserved_cpus\":1,"
		"\"topology_policy\":\"restricted\",\"cpu_policy_options\":"
		"{\"distribute-cpus-across-cores\":true}}",
		"{\"cpu_policy\":\"static\",\"reserved_cpus\":1,"
		"\"topology_policy\":\"best-effort\",\"cpu_policy_options\":"
		"{\"prefer-align-cpus-by-uncorecache\":true}}",
	};
	(void)state;
	for (int iter = 0; iter < 300; iter++) {
		int sockets = 1 + (int)(rand_r(&seed) % 4);
		int nps = 1 + (int)(rand_r(&seed) % 2);
		int cores = 1 + (int)(rand_r(&seed) % 4);
		int threads = (int[]){1, 2, 2, 4}[rand_r(&seed) % 4];
		int pi = (int)(rand_r(&seed) % 6);
		struct np_topology *t = np_test_topology(
			sockets, nps, cores, threads, rand_r(&seed) % 2, GiB);
		struct np_node_state st;
		assert_non_null(t);
		if (t->ncpus < 4) {
			np_topology_free(t);
			continue;
		}
		np_test_state_init(&st, t, policies[pi]);
		for (int k = 0; k < 12; k++) {
			struct np_decision d;
			char name[16], err[256];
			enum np_qos q = (enum np_qos[]){NP_QOS_LSE, NP_QOS_LSR,
						       NP_QOS_GUARANTEED,
						       NP_QOS_LS}[rand_r(&seed) % 4];
			int cpus = 1 + (int)(rand_r(&seed) % 6);
			struct np_pools p;
			np_cpuset seen;

			snprintf(name, sizeof(name), "w%d", k);
			assert_int_equal(np_admit(&st, np_test_workload(name, q, cpus * 1000), &d,
						  err, sizeof(err)),
					 0);
			if (rand_r(&seed) % 5 == 0 && st.nworkloads)
				np_release(&st, st.w[rand_r(&seed) % st.nworkloads]->req.name);
			np_state_pools(&st, &p);
			np_cpuset_zero(&seen);
			for (int i = 0; i < st.nworkloads; i++) {
				const struct np_container_alloc *c = &st.w[i]->c[0];
				if (!c->exclusive)
					continue;
				assert_false(np_cpuset_intersects(&seen, c->cpus));
				assert_false(np_cpuset_intersects(c->cpus, &st.reserved));
				assert_int_equal(np_cpuset_count(c->cpus),
						 st.w[i]->req.c[0].cpu_milli / 1000);
				if (pi == 1 || pi == 3) {
					np_cpuset whole;
					np_topology_cores_of(t, c->cpus, &whole);
					assert_true(np_cpuset_equal(&whole, c->cpus));
				}
				if (pi == 2)
					assert_int_equal(np_nodemask_count(
								 np_topology_nodes_of(t, c->cpus)),
							 1);
				np_cpuset_or(&seen, &seen, c->cpus);
				checked++;
			}
		}
		np_state_free(&st);
		np_topology_free(t);
	}
	printf("property checks on %ld exclusive allocations\n", checked);
	assert_true(checked > 1000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pools),
		cmocka_unit_test(test_reject_changes_nothing),
		cmocka_unit_test(test_distribute_evenly),
		cmocka_unit_test(test_state_validation),
		cmocka_unit_test(test_spec_validation),
		cmocka_unit_test(test_pod_scope),
		cmocka_unit_test(test_container_cpus_owned),
		cmocka_unit_test(test_release_keep),
		cmocka_unit_test(test_64_nodes),
		cmocka_unit_test(test_search_matches_explicit),
		cmocka_unit_test(test_properties),
	};
	return cmocka_run_group_tests_name("admit", tests, NULL, NULL);
}
