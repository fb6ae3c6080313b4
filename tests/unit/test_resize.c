// SPDX-License-Identifier: Apache-2.0
/*
 * In-place resize (np_resize): scale-up keeps every current CPU, scale-down
 * keeps a subset of the current CPUs with the baseline first, Koordinator
 * classes the same with their bind policy, a resize that cannot be met
 * changes nothing, malformed requests are refused, the baseline survives a
 * save and load, and property runs on random topologies.
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

static void admit(struct np_node_state *st, const struct np_workload_req *w)
{
	struct np_decision d;
	char err[256];
	assert_int_equal(np_admit(st, w, &d, err, sizeof(err)), 0);
	if (!d.admitted)
		fail_msg("%s rejected: %s", w->name, d.reason);
}

static np_cpuset cpus_of(const struct np_node_state *st, const char *name)
{
	int i = np_state_find(st, name);
	assert_true(i >= 0);
	return *st->w[i]->c[0].cpus;
}

/* Every exclusive set disjoint from the others and from the reserved
 * CPUs, and as large as its spec asks. */
static void check_invariants(const struct np_node_state *st)
{
	np_cpuset seen;
	np_cpuset_zero(&seen);
	for (int i = 0; i < st->nworkloads; i++)
		for (int k = 0; k < st->w[i]->ncontainers; k++) {
			const struct np_container_alloc *c = &st->w[i]->c[k];
			if (!c->exclusive)
				continue;
			assert_false(np_cpuset_intersects(&seen, c->cpus));
			assert_false(np_cpuset_intersects(c->cpus,
							  &st->reserved));
			assert_int_equal(np_cpuset_count(c->cpus),
					 st->w[i]->req.c[k].cpu_milli / 1000);
			np_cpuset_or(&seen, &seen, c->cpus);
		}
}

/* Resize and require it done; returns the new set. */
static np_cpuset resize_ok(struct np_node_state *st, const char *name,
			   int n)
{
	struct np_decision d;
	char err[256] = "";
	int r = np_resize(st, name, NULL, n, &d, err, sizeof(err));
	if (r)
		fail_msg("resize %s to %d: %d %s", name, n, r, err);
	if (!d.admitted)
		fail_msg("resize %s to %d refused: %s", name, n, d.reason);
	assert_ptr_equal(d.alloc, st->w[np_state_find(st, name)]);
	check_invariants(st);
	return cpus_of(st, name);
}

static void grow_shrink(const char *policy, enum np_qos q)
{
	struct np_topology *t = np_test_topology(2, 1, 4, 2, true, GiB);
	struct np_node_state st;
	np_cpuset orig, four, six, three, one;
	(void)0;
	np_test_state_init(&st, t, policy);
	admit(&st, np_test_workload("a", q, 2000));
	admit(&st, np_test_workload("b", q, 2000));
	orig = cpus_of(&st, "a");
	four = resize_ok(&st, "a", 4);
	assert_int_equal(np_cpuset_count(&four), 4);
	assert_true(np_cpuset_subset(&orig, &four));
	/* back to 2: the baseline, the CPUs it was admitted with */
	{
		np_cpuset two = resize_ok(&st, "a", 2);
		assert_true(np_cpuset_equal(&two, &orig));
	}
	six = resize_ok(&st, "a", 6);
	assert_true(np_cpuset_subset(&orig, &six));
	three = resize_ok(&st, "a", 3);
	assert_int_equal(np_cpuset_count(&three), 3);
	assert_true(np_cpuset_subset(&three, &six));
	assert_true(np_cpuset_subset(&orig, &three));
	/* below the baseline: a subset of it */
	one = resize_ok(&st, "a", 1);
	assert_int_equal(np_cpuset_count(&one), 1);
	assert_true(np_cpuset_subset(&one, &orig));
	np_state_free(&st);
	np_topology_free(t);
}

static void test_kubelet_grow_shrink(void **state)
{
	(void)state;
	grow_shrink("{\"cpu_policy\":\"static\",\"reserved_cpus\":\"0,8\"}",
		    NP_QOS_GUARANTEED);
	grow_shrink("{\"cpu_policy\":\"static\",\"reserved_cpus\":\"0,8\","
		    "\"cpu_policy_options\":{\"distribute-cpus-across-numa\":"
		    "true}}",
		    NP_QOS_GUARANTEED);
	grow_shrink("{\"cpu_policy\":\"static\",\"reserved_cpus\":\"0,8\","
		    "\"topology_policy\":\"best-effort\"}",
		    NP_QOS_GUARANTEED);
}

static void test_koord_grow_shrink(void **state)
{
	(void)state;
	grow_shrink("{\"cpu_policy\":\"static\",\"reserved_cpus\":\"0,8\"}",
		    NP_QOS_LSE);
	grow_shrink("{\"cpu_policy\":\"static\",\"reserved_cpus\":\"0,8\"}",
		    NP_QOS_LSR);
}

/* FullPCPUs required: whole cores on growth too. */
static void test_koord_full_pcpus(void **state)
{
	struct np_topology *t = np_test_topology(2, 1, 4, 2, true, GiB);
	struct np_node_state st;
	struct np_workload_req *w;
	np_cpuset orig, got, whole;
	(void)state;
	np_test_state_init(&st, t, "{\"cpu_policy\":\"static\",\"reserved_cpus\":\"0,8\"}");
	w = np_test_workload("a", NP_QOS_LSE, 2000);
	w->has_bind = true;
	w->bind = NP_BIND_FULL_PCPUS;
	w->bind_required = true;
	admit(&st, w);
	orig = cpus_of(&st, "a");
	got = resize_ok(&st, "a", 4);
	assert_true(np_cpuset_subset(&orig, &got));
	np_topology_cores_of(t, &got, &whole);
	assert_true(np_cpuset_equal(&whole, &got));
	np_state_free(&st);
	np_topology_free(t);
}

static json_t *state_json(const struct np_node_state *st)
{
	json_t *j = NULL;
	assert_int_equal(np_state_to_json(st, &j), 0);
	return j;
}

static void refused_unchanged(struct np_node_state *st, const char *name,
			      int n, const char *needle, const char *kind)
{
	struct np_decision d;
	char err[256] = "";
	json_t *before = state_json(st), *after;
	assert_int_equal(np_resize(st, name, NULL, n, &d, err, sizeof(err)),
			 0);
	if (d.admitted) {
		char *c = np_cpuset_str(d.alloc->c[0].cpus);
		fail_msg("resize %s to %d done: %s", name, n, c);
	}
	if (!strstr(d.reason, needle))
		fail_msg("reason \"%s\" lacks \"%s\"", d.reason, needle);
	assert_string_equal(d.error_kind, kind);
	after = state_json(st);
	assert_true(json_equal(before, after));
	json_decref(before);
	json_decref(after);
}

static void test_cannot_be_met(void **state)
{
	struct np_topology *t = np_test_topology(2, 1, 4, 2, true, GiB);
	struct np_node_state st;
	(void)state;
	np_test_state_init(&st, t, "{\"cpu_policy\":\"static\",\"reserved_cpus\":\"0,8\"}");
	admit(&st, np_test_workload("a", NP_QOS_GUARANTEED, 4000));
	admit(&st, np_test_workload("b", NP_QOS_LSE, 8000));
	/* 14 allocatable: 2 left */
	refused_unchanged(&st, "a", 7, "not enough free CPUs",
			  "UnexpectedAdmissionError");
	refused_unchanged(&st, "b", 11, "3 more needed, 2 available",
			  "UnexpectedAdmissionError");
	np_state_free(&st);
	/* single-numa-node: the hint's node is full */
	np_test_state_init(&st, t, "{\"cpu_policy\":\"static\",\"reserved_cpus\":\"0,8\","
		     "\"topology_policy\":\"single-numa-node\"}");
	/* node 0 has 6 allocatable CPUs, 10 are free on the machine */
	admit(&st, np_test_workload("a", NP_QOS_GUARANTEED, 4000));
	refused_unchanged(&st, "a", 7, "single-numa-node",
			  "TopologyAffinityError");
	np_state_free(&st);
	/* full-pcpus-only: an odd count */
	np_test_state_init(&st, t, "{\"cpu_policy\":\"static\",\"reserved_cpus\":\"0,8\","
		     "\"cpu_policy_options\":{\"full-pcpus-only\":true}}");
	admit(&st, np_test_workload("a", NP_QOS_GUARANTEED, 2000));
	refused_unchanged(&st, "a", 3, "SMT Alignment Error",
			  "SMTAlignmentError");
	np_state_free(&st);
	np_topology_free(t);
}

static void bad(struct np_node_state *st, const char *name,
		const char *container, int n, int want, const char *needle)
{
	struct np_decision d;
	char err[256] = "";
	json_t *before = state_json(st), *after;
	assert_int_equal(np_resize(st, name, container, n, &d, err,
				   sizeof(err)),
			 want);
	if (!strstr(err, needle))
		fail_msg("error \"%s\" lacks \"%s\"", err, needle);
	after = state_json(st);
	assert_true(json_equal(before, after));
	json_decref(before);
	json_decref(after);
}

static void test_malformed(void **state)
{
	struct np_topology *t = np_test_topology(2, 1, 4, 2, true, GiB);
	struct np_node_state st;
	struct np_workload_req *w;
	(void)state;
	np_test_state_init(&st, t, "{\"cpu_policy\":\"static\",\"reserved_cpus\":\"0,8\"}");
	admit(&st, np_test_workload("a", NP_QOS_GUARANTEED, 2000));
	admit(&st, np_test_workload("ls", NP_QOS_LS, 1500));
	w = np_test_workload("two", NP_QOS_GUARANTEED, 1000);
	w->ncontainers = 2;
	w->c[1].name = "side";
	w->c[1].cpu_milli = 1000;
	admit(&st, w);
	bad(&st, "nope", NULL, 2, -ENOENT, "workload: \"nope\" is not admitted");
	bad(&st, "a", NULL, 0, -EINVAL, "cpus: 0 is out of range 1..16");
	bad(&st, "a", NULL, -3, -EINVAL, "cpus: -3 is out of range");
	bad(&st, "a", NULL, 17, -EINVAL, "cpus: 17 is out of range");
	bad(&st, "a", "other", 3, -ENOENT, "has no container \"other\"");
	bad(&st, "ls", NULL, 2, -EINVAL, "has no exclusive CPUs");
	bad(&st, "two", NULL, 2, -EINVAL, "2 exclusive containers: name one");
	{
		struct np_decision d;
		char err[256];
		np_cpuset side = *st.w[np_state_find(&st, "two")]->c[1].cpus, got;
		assert_int_equal(np_resize(&st, "two", "side", 2, &d, err,
					   sizeof(err)),
				 0);
		assert_true(d.admitted);
		got = *st.w[np_state_find(&st, "two")]->c[1].cpus;
		assert_true(np_cpuset_subset(&side, &got));
		assert_int_equal(np_cpuset_count(&got), 2);
		check_invariants(&st);
	}
	np_state_free(&st);
	np_topology_free(t);
}

/* The baseline is saved and loaded: a shrink after a restart still
 * returns to the CPUs of the admission. */
static void test_baseline_saved(void **state)
{
	struct np_topology *t = np_test_topology(2, 1, 4, 2, true, GiB);
	struct np_node_state st, st2;
	np_cpuset orig, two;
	json_t *j;
	char err[256];
	(void)state;
	np_test_state_init(&st, t, "{\"cpu_policy\":\"static\",\"reserved_cpus\":\"0,8\"}");
	admit(&st, np_test_workload("a", NP_QOS_LSE, 2000));
	orig = cpus_of(&st, "a");
	resize_ok(&st, "a", 5);
	j = state_json(&st);
	assert_non_null(json_object_get(
	    json_array_get(json_object_get(json_array_get(json_object_get(
						j, "workloads"), 0),
					   "containers"),
			   0),
	    "baseline"));
	np_test_state_init(&st2, t, "{\"cpu_policy\":\"static\",\"reserved_cpus\":\"0,8\"}");
	if (np_state_load_json(&st2, j, "state", err, sizeof(err)))
		fail_msg("load: %s", err);
	two = resize_ok(&st2, "a", 2);
	assert_true(np_cpuset_equal(&two, &orig));
	json_decref(j);
	/* a baseline outside the cpus is refused */
	j = json_loads("{\"workloads\":[{\"spec\":{\"name\":\"a\",\"qos\":"
		       "\"LSE\",\"containers\":[{\"name\":\"m\",\"cpu\":\"2\"}]},"
		       "\"class\":\"LSE\",\"containers\":[{\"name\":\"m\","
		       "\"exclusive\":true,\"cpus\":\"1-2\",\"baseline\":\"3\","
		       "\"mems\":\"0\"}]}]}",
		       0, NULL);
	np_state_free(&st2);
	np_test_state_init(&st2, t, "{\"cpu_policy\":\"static\",\"reserved_cpus\":\"0,8\"}");
	assert_int_equal(np_state_load_json(&st2, j, "state", err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "state.workloads[0].containers[0]."
				    "baseline"));
	json_decref(j);
	np_state_free(&st2);
	np_state_free(&st);
	np_topology_free(t);
}

/* Random resizes on random topologies and policies: what is kept is kept,
 * nothing overlaps, a refusal changes nothing. */
static void test_properties(void **state)
{
	unsigned seed = 4242;
	long done = 0, refused = 0;
	static const char *const policies[] = {
		"{\"cpu_policy\":\"static\",\"reserved_cpus\":1}",
		"{\"cpu_policy\":\"static\",\"reserved_cpus\":2,"
		"\"topology_policy\":\"restricted\",\"cpu_policy_options\":"
		"{\"full-pcpus-only\":true}}",
		"{\"cpu_policy\":\"static\",\"reserved_cpus\":1,"
		"\"topology_policy\":\"single-numa-node\"}",
		"{\"cpu_policy\":\"static\",\"reserved_cpus\":2,"
		"\"cpu_policy_options\":{\"distribute-cpus-across-numa\":true,"
		"\"full-pcpus-only\":true}}",
		"{\"cpu_policy\":\"static\",\"reserved_cpus\":1,"
		"\"cpu_policy_options\":{\"distribute-cpus-across-cores\":true}}",
		"{\"cpu_policy\":\"static\",\"reserved_cpus\":1,"
		"\"topology_policy\":\"best-effort\"}",
	};
	static const enum np_qos qs[] = {NP_QOS_GUARANTEED, NP_QOS_LSE,
					 NP_QOS_LSR};
	(void)state;
	for (int iter = 0; iter < 150; iter++) {
		struct np_topology *t = np_test_topology(
		    1 + (int)(rand_r(&seed) % 2), 1 + (int)(rand_r(&seed) % 2),
		    2 + (int)(rand_r(&seed) % 3), 2, rand_r(&seed) % 2, GiB);
		struct np_node_state st;
		int pi = (int)(rand_r(&seed) % 6);
		char name[NP_NAME_MAX];
		np_test_state_init(&st, t, policies[pi]);
		for (int k = 0; k < 4; k++) {
			struct np_decision d;
			char err[256];
			snprintf(name, sizeof(name), "w%d", k);
			assert_int_equal(
			    np_admit(&st, np_test_workload(name, qs[rand_r(&seed) % 3], 2000),
				     &d, err, sizeof(err)),
			    0);
		}
		for (int k = 0; k < 30 && st.nworkloads; k++) {
			int i = (int)(rand_r(&seed) % (unsigned)st.nworkloads);
			int n = 1 + (int)(rand_r(&seed) % 8);
			if (n > t->ncpus)
				n = t->ncpus;
			np_cpuset cur = *st.w[i]->c[0].cpus, got;
			json_t *before = state_json(&st), *after;
			struct np_decision d;
			char err[256];
			snprintf(name, sizeof(name), "%s", st.w[i]->req.name);
			assert_int_equal(np_resize(&st, name, NULL, n, &d, err,
						   sizeof(err)),
					 0);
			after = state_json(&st);
			if (!d.admitted) {
				assert_true(d.reason[0] != '\0');
				assert_true(json_equal(before, after));
				refused++;
			} else {
				got = *st.w[i]->c[0].cpus;
				assert_int_equal(np_cpuset_count(&got), n);
				if (n >= np_cpuset_count(&cur))
					assert_true(np_cpuset_subset(&cur, &got));
				else
					assert_true(np_cpuset_subset(&got, &cur));
				/* new CPUs off the hint's nodes: their nodes
				 * join the memory nodes (found by 20-crash on
				 * 4node: CPU 12 of node 3 with mems 1) */
				assert_true((np_topology_nodes_of(t, &got) &
					     ~st.w[i]->c[0].mems) == 0);
				done++;
			}
			check_invariants(&st);
			json_decref(before);
			json_decref(after);
		}
		np_state_free(&st);
		np_topology_free(t);
	}
	printf("%ld resizes done, %ld refused\n", done, refused);
	assert_true(done > 500);
	assert_true(refused > 20);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kubelet_grow_shrink),
		cmocka_unit_test(test_koord_grow_shrink),
		cmocka_unit_test(test_koord_full_pcpus),
		cmocka_unit_test(test_cannot_be_met),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_baseline_saved),
		cmocka_unit_test(test_properties),
	};
	return cmocka_run_group_tests_name("resize", tests, NULL, NULL);
}
