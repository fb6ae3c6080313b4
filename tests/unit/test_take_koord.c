// SPDX-License-Identifier: Apache-2.0
/*
 * Koordinator CPU accumulator (np_take_koord): the upstream vectors from
 * tests/data/vectors/take.json, targeted cases, and a property test on
 * random topologies. Run from the repository root.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numaplace/take.h"
#include "numaplace/topology_json.h"
#include "fixtures.h"

#define VECTORS "tests/data/vectors/take.json"

/* ---- helpers ----------------------------------------------------------- */

/*
 * sockets x numa-per-socket x cores-per-numa x smt. adjacent: SMT siblings
 * get adjacent ids (Koordinator tables); otherwise Linux numbering (thread
 * t of core c is cpu t * ncores + c).
 */
static struct np_topology *mk_topo(int sockets, int nps, int cpn, int smt,
				   bool adjacent)
{
	int ncores = sockets * nps * cpn, n = ncores * smt, i = 0;
	struct np_cpu_desc *d = calloc((size_t)n, sizeof(*d));
	struct np_topology *t = NULL;
	char err[256];

	assert_non_null(d);
	for (int c = 0; c < ncores; c++)
		for (int th = 0; th < smt; th++, i++) {
			d[i].cpu = adjacent ? c * smt + th : th * ncores + c;
			d[i].core = c;
			d[i].numa = c / cpn;
			d[i].socket = c / (cpn * nps);
			d[i].l3 = -1;
			d[i].online = true;
		}
	if (np_topology_build(&t, d, n, err, sizeof(err)))
		fail_msg("topology: %s", err);
	free(d);
	return t;
}

static struct np_take_req req(const struct np_topology *t, const char *avail,
			      int count, enum np_bind_policy bind)
{
	struct np_take_req q;

	memset(&q, 0, sizeof(q));
	q.topo = t;
	q.available = np_test_cpus(avail);
	q.count = count;
	q.koord = true;
	q.bind_policy = bind;
	return q;
}

static int take(const struct np_take_req *q, np_cpuset *out, char *err,
		size_t errlen)
{
	err[0] = 0;
	np_cpuset_zero(out);
	return np_take_koord(q, out, err, errlen);
}

/* ---- (a) upstream vectors ---------------------------------------------- */

static const char *jstr(const json_t *o, const char *k, const char *def)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? s : def;
}

/* Returns true when the case passes; prints why it does not. */
static bool run_vector(const json_t *c, const char *id)
{
	struct np_topology *t = NULL;
	struct np_take_req q;
	np_cpuset out, want;
	char err[512], buf[1024];
	const json_t *marks, *m;
	const char *s;
	bool expect_error, ok = false;
	size_t i;
	int r;

	memset(&q, 0, sizeof(q));
	if (np_topology_from_json(&t, json_object_get(c, "topology"),
				  "topology", err, sizeof(err))) {
		print_message("FAIL %s: topology: %s\n", id, err);
		return false;
	}
	q.topo = t;
	q.koord = true;
	q.count = (int)json_integer_value(json_object_get(c, "count"));
	if (np_cpuset_parse(&q.available, jstr(c, "available", ""), err,
			    sizeof(err)) < 0 ||
	    np_bind_policy_parse(jstr(c, "bind_policy", ""), &q.bind_policy) ||
	    np_exclusive_policy_parse(jstr(c, "exclusive_policy", "None"),
				      &q.exclusive_policy) ||
	    np_numa_strategy_parse(jstr(c, "numa_strategy", "MostAllocated"),
				   &q.numa_strategy)) {
		print_message("FAIL %s: bad request fields\n", id);
		goto out;
	}
	q.required = json_is_true(json_object_get(c, "required"));
	marks = json_object_get(c, "exclusive_marks");
	json_array_foreach(marks, i, m)
	{
		enum np_exclusive_policy p;
		np_cpuset mc;

		if (np_cpuset_parse(&mc, jstr(m, "cpus", ""), err,
				    sizeof(err)) < 0 ||
		    np_exclusive_policy_parse(jstr(m, "policy", ""), &p)) {
			print_message("FAIL %s: bad exclusive mark\n", id);
			goto out;
		}
		if (p == NP_EXCL_PCPU_LEVEL)
			np_cpuset_or(&q.pcpu_marked, &q.pcpu_marked, &mc);
		else if (p == NP_EXCL_NUMA_NODE_LEVEL)
			np_cpuset_or(&q.numa_marked, &q.numa_marked, &mc);
	}
	if ((s = jstr(c, "preferred_cpus", NULL))) {
		q.has_preferred = true;
		if (np_cpuset_parse(&q.preferred, s, err, sizeof(err)) < 0) {
			print_message("FAIL %s: bad preferred_cpus\n", id);
			goto out;
		}
	}
	expect_error = json_is_true(json_object_get(c, "expect_error"));

	r = take(&q, &out, err, sizeof(err));
	if (expect_error) {
		ok = r < 0;
		if (!ok) {
			np_cpuset_format(&out, buf, sizeof(buf));
			print_message("FAIL %s: got \"%s\", want an error\n",
				      id, buf);
		}
		goto out;
	}
	if (r < 0) {
		print_message("FAIL %s: error %d (%s), want \"%s\"\n", id, r,
			      err, jstr(c, "expect", ""));
		goto out;
	}
	want = np_test_cpus(jstr(c, "expect", ""));
	ok = np_cpuset_equal(&out, &want);
	if (!ok) {
		np_cpuset_format(&out, buf, sizeof(buf));
		print_message("FAIL %s: got \"%s\", want \"%s\"\n", id, buf,
			      jstr(c, "expect", ""));
	}
out:
	np_topology_free(t);
	return ok;
}

static void test_koordinator_vectors(void **state)
{
	json_error_t je;
	json_t *root, *c;
	size_t i;
	int n = 0, failed = 0;

	(void)state;
	root = json_load_file(VECTORS, 0, &je);
	if (!root)
		fail_msg("%s:%d: %s (run from the repository root)", VECTORS,
			 je.line, je.text);
	json_array_foreach(root, i, c)
	{
		const char *id = jstr(c, "id", "");

		if (strncmp(id, "koordinator/", 12) != 0 ||
		    strcmp(jstr(c, "kind", "take"), "take") != 0)
			continue;
		n++;
		if (!run_vector(c, id))
			failed++;
	}
	json_decref(root);
	print_message("koordinator take vectors: %d/%d pass\n", n - failed, n);
	assert_true(n >= 23);
	assert_int_equal(failed, 0);
}

/* ---- (b) targeted cases ------------------------------------------------- */

static void test_basics(void **state)
{
	struct np_topology *t = mk_topo(1, 1, 4, 2, true);
	struct np_take_req q = req(t, "0-7", 0, NP_BIND_FULL_PCPUS);
	np_cpuset out;
	char err[256];

	(void)state;
	assert_int_equal(take(&q, &out, err, sizeof(err)), 0);
	assert_true(np_cpuset_empty(&out));

	q.count = 9;
	assert_int_equal(take(&q, &out, err, sizeof(err)), -ENOSPC);
	assert_string_equal(err, "not enough cpus available to satisfy "
				 "request: requested=9, available=8");

	/* CPUs the topology does not have are not available. */
	q = req(t, "4-7,100-103", 6, NP_BIND_SPREAD_BY_PCPUS);
	assert_int_equal(take(&q, &out, err, sizeof(err)), -ENOSPC);
	assert_string_equal(err, "not enough cpus available to satisfy "
				 "request: requested=6, available=4");

	q.count = -1;
	assert_int_equal(take(&q, &out, err, sizeof(err)), -EINVAL);

	/* Default is FullPCPUs. */
	q = req(t, "1,3-7", 2, NP_BIND_DEFAULT);
	assert_int_equal(take(&q, &out, err, sizeof(err)), 0);
	np_test_assert_cpus(&out, "4-5");
	np_topology_free(t);
}

static void test_names(void **state)
{
	enum np_bind_policy b;
	enum np_exclusive_policy e;
	enum np_numa_strategy s;

	(void)state;
	for (int i = NP_BIND_DEFAULT; i <= NP_BIND_SPREAD_BY_PCPUS; i++) {
		assert_int_equal(
		    np_bind_policy_parse(
			np_bind_policy_name((enum np_bind_policy)i), &b),
		    0);
		assert_int_equal(b, i);
	}
	for (int i = NP_EXCL_NONE; i <= NP_EXCL_NUMA_NODE_LEVEL; i++) {
		assert_int_equal(
		    np_exclusive_policy_parse(
			np_exclusive_policy_name((enum np_exclusive_policy)i),
			&e),
		    0);
		assert_int_equal(e, i);
	}
	for (int i = NP_NUMA_MOST_ALLOCATED; i <= NP_NUMA_DISTRIBUTE_EVENLY;
	     i++) {
		assert_int_equal(
		    np_numa_strategy_parse(
			np_numa_strategy_name((enum np_numa_strategy)i), &s),
		    0);
		assert_int_equal(s, i);
	}
	assert_string_equal(np_bind_policy_name(NP_BIND_FULL_PCPUS),
			    "FullPCPUs");
	assert_string_equal(np_bind_policy_name(NP_BIND_SPREAD_BY_PCPUS),
			    "SpreadByPCPUs");
	assert_string_equal(np_exclusive_policy_name(NP_EXCL_PCPU_LEVEL),
			    "PCPULevel");
	assert_string_equal(np_exclusive_policy_name(NP_EXCL_NUMA_NODE_LEVEL),
			    "NUMANodeLevel");
	assert_string_equal(np_numa_strategy_name(NP_NUMA_LEAST_ALLOCATED),
			    "LeastAllocated");
	assert_string_equal(np_numa_strategy_name(NP_NUMA_DISTRIBUTE_EVENLY),
			    "DistributeEvenly");
	assert_int_equal(np_bind_policy_parse("", &b), 0);
	assert_int_equal(b, NP_BIND_DEFAULT);
	assert_int_equal(np_exclusive_policy_parse("", &e), 0);
	assert_int_equal(e, NP_EXCL_NONE);
	assert_true(np_bind_policy_parse("fullpcpus", &b) < 0);
	assert_true(np_bind_policy_parse(NULL, &b) < 0);
	assert_true(np_exclusive_policy_parse("CoreLevel", &e) < 0);
	assert_true(np_numa_strategy_parse("Spread", &s) < 0);
	assert_string_equal(np_bind_policy_name((enum np_bind_policy)42),
			    "unknown");
}

static void test_required_full_pcpus(void **state)
{
	struct np_topology *t = mk_topo(1, 1, 4, 2, true);
	struct np_topology *lx = mk_topo(1, 1, 4, 2, false);
	struct np_take_req q;
	np_cpuset out;
	char err[256];

	(void)state;
	/* Not a multiple of the core size. */
	q = req(t, "0-7", 3, NP_BIND_FULL_PCPUS);
	q.required = true;
	assert_int_equal(take(&q, &out, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "FullPCPUs"));
	assert_non_null(strstr(err, "multiple"));
	/* Default + required is FullPCPUs too. */
	q.bind_policy = NP_BIND_DEFAULT;
	assert_int_equal(take(&q, &out, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "FullPCPUs"));
	/* Preferred, it splits a core. */
	q.required = false;
	assert_int_equal(take(&q, &out, err, sizeof(err)), 0);
	np_test_assert_cpus(&out, "0-2");

	/* 6 CPUs are free but only two whole cores: fits only by splitting
	 * cores 0 and 1. */
	q = req(t, "1,3-7", 6, NP_BIND_FULL_PCPUS);
	assert_int_equal(take(&q, &out, err, sizeof(err)), 0);
	np_test_assert_cpus(&out, "1,3-7");
	q.required = true;
	assert_int_equal(take(&q, &out, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "FullPCPUs"));
	q.count = 4;
	assert_int_equal(take(&q, &out, err, sizeof(err)), 0);
	np_test_assert_cpus(&out, "4-7");

	/* Linux numbering: cores are {0,4} {1,5} {2,6} {3,7}. */
	q = req(lx, "1-7", 4, NP_BIND_FULL_PCPUS);
	q.required = true;
	assert_int_equal(take(&q, &out, err, sizeof(err)), 0);
	np_test_assert_cpus(&out, "1-2,5-6");
	/* Not required, the first whole cores still come first. */
	q.required = false;
	q.count = 2;
	assert_int_equal(take(&q, &out, err, sizeof(err)), 0);
	np_test_assert_cpus(&out, "1,5");
	np_topology_free(t);
	np_topology_free(lx);
}

static void test_required_spread(void **state)
{
	struct np_topology *t = mk_topo(2, 1, 4, 2, true);
	struct np_take_req q;
	np_cpuset out;
	char err[256];

	(void)state;
	q = req(t, "0-15", 4, NP_BIND_SPREAD_BY_PCPUS);
	q.required = true;
	assert_int_equal(take(&q, &out, err, sizeof(err)), 0);
	np_test_assert_cpus(&out, "0,2,4,6");
	/* Only 8 cores. */
	q.count = 9;
	assert_int_equal(take(&q, &out, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "SpreadByPCPUs"));
	/* One thread of every core, partly used cores included. */
	q = req(t, "1,3-15", 8, NP_BIND_SPREAD_BY_PCPUS);
	q.required = true;
	assert_int_equal(take(&q, &out, err, sizeof(err)), 0);
	np_test_assert_cpus(&out, "1,3-4,6,8,10,12,14");
	/* 6 from socket 0 needs both threads of two cores: only preferred. */
	q = req(t, "0-7", 6, NP_BIND_SPREAD_BY_PCPUS);
	assert_int_equal(take(&q, &out, err, sizeof(err)), 0);
	np_test_assert_cpus(&out, "0-4,6");
	q.required = true;
	assert_int_equal(take(&q, &out, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "SpreadByPCPUs"));
	/* Not required, staying in one node beats one thread per core over
	 * two sockets (as upstream's "overlapped-cores" case). */
	q = req(t, "0-15", 6, NP_BIND_SPREAD_BY_PCPUS);
	assert_int_equal(take(&q, &out, err, sizeof(err)), 0);
	np_test_assert_cpus(&out, "0-4,6");
	/* Required, it spreads over both sockets instead. */
	q.required = true;
	assert_int_equal(take(&q, &out, err, sizeof(err)), 0);
	np_test_assert_cpus(&out, "0,2,4,6,8,10");
	np_topology_free(t);
}

/* Cores of different sizes: required FullPCPUs still finds whole cores. */
static void test_required_full_hetero(void **state)
{
	/* cores {0,1} {2,3} {4}: CPU 5 (sibling of 4) is offline */
	const struct np_cpu_desc d[] = {
	    {0, 0, 0, 0, -1, true}, {1, 0, 0, 0, -1, true},
	    {2, 1, 0, 0, -1, true}, {3, 1, 0, 0, -1, true},
	    {4, 2, 0, 0, -1, true}, {5, 2, 0, 0, -1, false},
	};
	struct np_topology *t = NULL;
	struct np_take_req q;
	np_cpuset out;
	char err[256];

	(void)state;
	assert_int_equal(np_topology_build(&t, d, 6, err, sizeof(err)), 0);
	q = req(t, "0-5", 3, NP_BIND_FULL_PCPUS);
	q.required = true;
	assert_int_equal(take(&q, &out, err, sizeof(err)), 0);
	np_test_assert_cpus(&out, "0-1,4");
	/* Only two-thread cores left: 3 CPUs cannot be whole cores. */
	q.available = np_test_cpus("0-3");
	assert_int_equal(take(&q, &out, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "FullPCPUs"));
	np_topology_free(t);
}

/* The core-by-core stages miss (1 + 2, then a 2 does not fit in 1): the
 * exact search finds 2 + 2. */
static void test_required_full_exact(void **state)
{
	/* cores {0} {2,3} {4,5}: CPU 1 (sibling of 0) is offline */
	const struct np_cpu_desc d[] = {
	    {0, 0, 0, 0, -1, true}, {1, 0, 0, 0, -1, false},
	    {2, 1, 0, 0, -1, true}, {3, 1, 0, 0, -1, true},
	    {4, 2, 0, 0, -1, true}, {5, 2, 0, 0, -1, true},
	};
	struct np_topology *t = NULL;
	struct np_take_req q;
	np_cpuset out;
	char err[256];

	(void)state;
	assert_int_equal(np_topology_build(&t, d, 6, err, sizeof(err)), 0);
	q = req(t, "0-5", 4, NP_BIND_FULL_PCPUS);
	q.required = true;
	assert_int_equal(take(&q, &out, err, sizeof(err)), 0);
	np_test_assert_cpus(&out, "2-5");
	/* Not required: the usual order, splitting the last core. */
	q.required = false;
	assert_int_equal(take(&q, &out, err, sizeof(err)), 0);
	np_test_assert_cpus(&out, "0,2-4");
	np_topology_free(t);
}

static void test_exclusive_fallback(void **state)
{
	struct np_topology *t = mk_topo(2, 1, 4, 2, true);
	struct np_take_req q;
	np_cpuset out;
	char err[256];

	(void)state;
	/* Cores of socket 0 marked: PCPULevel moves to socket 1, where
	 * MostAllocated alone would stay on the fuller socket 0. */
	q = req(t, "1,3,5,7-15", 4, NP_BIND_SPREAD_BY_PCPUS);
	assert_int_equal(take(&q, &out, err, sizeof(err)), 0);
	np_test_assert_cpus(&out, "1,3,5,7");
	q.exclusive_policy = NP_EXCL_PCPU_LEVEL;
	q.pcpu_marked = np_test_cpus("0,2,4,6");
	assert_int_equal(take(&q, &out, err, sizeof(err)), 0);
	np_test_assert_cpus(&out, "8,10,12,14");
	/* Marks made under the other policy do not count. */
	q.exclusive_policy = NP_EXCL_NUMA_NODE_LEVEL;
	assert_int_equal(take(&q, &out, err, sizeof(err)), 0);
	np_test_assert_cpus(&out, "1,3,5,7");

	/* Every core marked: falls back to the marked cores. */
	q = req(t, "1,3,5,7,9,11,13,15", 4, NP_BIND_SPREAD_BY_PCPUS);
	q.exclusive_policy = NP_EXCL_PCPU_LEVEL;
	q.pcpu_marked = np_test_cpus("0,2,4,6,8,10,12,14");
	assert_int_equal(take(&q, &out, err, sizeof(err)), 0);
	np_test_assert_cpus(&out, "1,3,5,7");
	q.count = 7;
	assert_int_equal(take(&q, &out, err, sizeof(err)), 0);
	assert_int_equal(np_cpuset_count(&out), 7);
	assert_true(np_cpuset_subset(&out, &q.available));

	/* The fallback still avoids marked cores while it can: 10 CPUs
	 * span both sockets, the 6 free CPUs of unmarked cores all go in. */
	q = req(t, "1,3-15", 10, NP_BIND_SPREAD_BY_PCPUS);
	q.exclusive_policy = NP_EXCL_PCPU_LEVEL;
	q.pcpu_marked = np_test_cpus("0,2,8");
	assert_int_equal(take(&q, &out, err, sizeof(err)), 0);
	assert_int_equal(np_cpuset_count(&out), 10);
	{
		np_cpuset unmarked = np_test_cpus("4-7,10-15");
		assert_true(np_cpuset_subset(&unmarked, &out));
	}

	/* NUMANodeLevel with FullPCPUs: node 0 marked -> node 1. */
	q = req(t, "1-7,9-15", 4, NP_BIND_FULL_PCPUS);
	q.exclusive_policy = NP_EXCL_NUMA_NODE_LEVEL;
	q.numa_marked = np_test_cpus("0");
	assert_int_equal(take(&q, &out, err, sizeof(err)), 0);
	np_test_assert_cpus(&out, "10-13");
	/* Both nodes marked: the filter is dropped, MostAllocated order
	 * (equal free counts, lower id) applies again. */
	q.numa_marked = np_test_cpus("0,8");
	assert_int_equal(take(&q, &out, err, sizeof(err)), 0);
	np_test_assert_cpus(&out, "2-5");
	/* SpreadByPCPUs, both nodes marked. */
	q.bind_policy = NP_BIND_SPREAD_BY_PCPUS;
	assert_int_equal(take(&q, &out, err, sizeof(err)), 0);
	np_test_assert_cpus(&out, "1-2,4,6");
	np_topology_free(t);
}

static void test_numa_strategy(void **state)
{
	/* 2 sockets x 2 NUMA nodes x 4 cores x 2 threads: node n holds
	 * CPUs 8n..8n+7. Free: node0 8, node1 4, node2 6, node3 8. */
	struct np_topology *t = mk_topo(2, 2, 4, 2, true);
	const char *avail = "0-11,16-21,24-31";
	struct np_take_req q;
	np_cpuset out;
	char err[256];

	(void)state;
	q = req(t, avail, 4, NP_BIND_FULL_PCPUS);
	q.numa_strategy = NP_NUMA_MOST_ALLOCATED;
	assert_int_equal(take(&q, &out, err, sizeof(err)), 0);
	np_test_assert_cpus(&out, "8-11");
	/* Node 0 and 3 tie at 8; socket 1 has more free CPUs (14 > 12). */
	q.numa_strategy = NP_NUMA_LEAST_ALLOCATED;
	assert_int_equal(take(&q, &out, err, sizeof(err)), 0);
	np_test_assert_cpus(&out, "24-27");
	q.numa_strategy = NP_NUMA_DISTRIBUTE_EVENLY;
	assert_int_equal(take(&q, &out, err, sizeof(err)), 0);
	np_test_assert_cpus(&out, "24-27");

	q = req(t, avail, 2, NP_BIND_SPREAD_BY_PCPUS);
	q.numa_strategy = NP_NUMA_MOST_ALLOCATED;
	assert_int_equal(take(&q, &out, err, sizeof(err)), 0);
	np_test_assert_cpus(&out, "8,10");
	q.numa_strategy = NP_NUMA_LEAST_ALLOCATED;
	assert_int_equal(take(&q, &out, err, sizeof(err)), 0);
	np_test_assert_cpus(&out, "24,26");

	/* 6 CPUs: MostAllocated bin-packs into node 2 (6 free). */
	q = req(t, avail, 6, NP_BIND_FULL_PCPUS);
	assert_int_equal(take(&q, &out, err, sizeof(err)), 0);
	np_test_assert_cpus(&out, "16-21");
	np_topology_free(t);
}

static void test_preferred(void **state)
{
	struct np_topology *t = mk_topo(2, 1, 4, 2, true);
	struct np_take_req q;
	np_cpuset out, plain;
	char err[256];

	(void)state;
	/* Preferred 2-5, but 2-3 are not available: 4-5 first, then the
	 * rest as usual (node 0 is the fuller node). */
	q = req(t, "0-1,4-15", 4, NP_BIND_FULL_PCPUS);
	q.has_preferred = true;
	q.preferred = np_test_cpus("2-5");
	assert_int_equal(take(&q, &out, err, sizeof(err)), 0);
	np_test_assert_cpus(&out, "0-1,4-5");

	/* Nothing preferred is available: same as without. */
	q.preferred = np_test_cpus("2-3");
	assert_int_equal(take(&q, &out, err, sizeof(err)), 0);
	q.has_preferred = false;
	assert_int_equal(take(&q, &plain, err, sizeof(err)), 0);
	assert_true(np_cpuset_equal(&out, &plain));

	/* More preferred than needed: the policy picks among them. */
	q = req(t, "0-15", 2, NP_BIND_SPREAD_BY_PCPUS);
	q.has_preferred = true;
	q.preferred = np_test_cpus("8-15");
	assert_int_equal(take(&q, &out, err, sizeof(err)), 0);
	np_test_assert_cpus(&out, "8,10");

	/* Preferred CPUs partly taken by someone else, SpreadByPCPUs. */
	q = req(t, "0-9,11,13,15", 4, NP_BIND_SPREAD_BY_PCPUS);
	q.has_preferred = true;
	q.preferred = np_test_cpus("10-13");
	assert_int_equal(take(&q, &out, err, sizeof(err)), 0);
	assert_int_equal(np_cpuset_count(&out), 4);
	assert_true(np_cpuset_test(&out, 11));
	assert_true(np_cpuset_test(&out, 13));
	assert_false(np_cpuset_test(&out, 10));
	assert_false(np_cpuset_test(&out, 12));
	assert_true(np_cpuset_subset(&out, &q.available));

	/* Required FullPCPUs with half a core preferred: whole cores only. */
	q = req(t, "0-15", 2, NP_BIND_FULL_PCPUS);
	q.required = true;
	q.has_preferred = true;
	q.preferred = np_test_cpus("5");
	assert_int_equal(take(&q, &out, err, sizeof(err)), 0);
	np_test_assert_cpus(&out, "0-1");
	q.preferred = np_test_cpus("4-5");
	assert_int_equal(take(&q, &out, err, sizeof(err)), 0);
	np_test_assert_cpus(&out, "4-5");
	np_topology_free(t);
}

/* ---- property test ------------------------------------------------------ */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(uint32_t n)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)((rng_state >> 11) % n);
}

/* Random topology with shuffled CPU and core ids; *hetero is set when some
 * threads are offline (cores of different sizes). */
static struct np_topology *rnd_topo(int *smt_out, bool *hetero)
{
	static const int smts[] = {1, 2, 4};
	int sockets = 1 + (int)rnd(4), nps = 1 + (int)rnd(2);
	int cpn = 1 + (int)rnd(6), smt = smts[rnd(3)];
	int ncores = sockets * nps * cpn, n = ncores * smt;
	int *ids = malloc(sizeof(int) * (size_t)n);
	int *cids = malloc(sizeof(int) * (size_t)ncores);
	struct np_cpu_desc *d = calloc((size_t)n, sizeof(*d));
	struct np_topology *t = NULL;
	char err[256];

	assert_non_null(ids);
	assert_non_null(cids);
	assert_non_null(d);
	for (int i = 0; i < n; i++)
		ids[i] = i;
	for (int i = n - 1; i > 0; i--) {
		int j = (int)rnd((uint32_t)i + 1), x = ids[i];
		ids[i] = ids[j];
		ids[j] = x;
	}
	for (int i = 0; i < ncores; i++)
		cids[i] = i * 3 + 1;
	for (int i = ncores - 1; i > 0; i--) {
		int j = (int)rnd((uint32_t)i + 1), x = cids[i];
		cids[i] = cids[j];
		cids[j] = x;
	}
	*hetero = n > 1 && rnd(4) == 0;
	for (int i = 0; i < n; i++) {
		int c = i / smt;
		d[i].cpu = ids[i];
		d[i].core = cids[c];
		d[i].numa = c / cpn;
		d[i].socket = c / (cpn * nps);
		d[i].l3 = -1;
		/* keep CPU 0 of the list online so the topology has one */
		d[i].online = !*hetero || i == 0 || rnd(10) != 0;
	}
	if (np_topology_build(&t, d, n, err, sizeof(err)))
		fail_msg("topology: %s", err);
	free(ids);
	free(cids);
	free(d);
	*smt_out = smt;
	return t;
}

static np_cpuset rnd_subset(const np_cpuset *of, int percent)
{
	np_cpuset s;

	np_cpuset_zero(&s);
	NP_CPUSET_FOREACH (cpu, of) {
		if ((int)rnd(100) < percent)
			np_cpuset_set(&s, cpu);
	}
	return s;
}

/* Is there a set of whole free cores with exactly n CPUs? */
static bool whole_fit_exists(const struct np_topology *t,
			     const np_cpuset *avail, int n)
{
	bool *can = calloc((size_t)n + 1, sizeof(bool));
	bool r;

	assert_non_null(can);
	can[0] = true;
	for (int c = 0; c < t->ncores; c++) {
		int sz = t->cores[c].ncpus;
		if (!sz || !np_cpuset_subset(&t->cores[c].cpus, avail))
			continue;
		for (int v = n; v >= sz; v--)
			can[v] = can[v] || can[v - sz];
	}
	r = can[n];
	free(can);
	return r;
}

static void test_property_random(void **state)
{
	int checked = 0;

	(void)state;
	for (int iter = 0; iter < 600; iter++) {
		int smt;
		bool hetero;
		struct np_topology *t = rnd_topo(&smt, &hetero);

		for (int k = 0; k < 8; k++) {
			struct np_take_req q;
			np_cpuset out, again, wc;
			char err[256];
			int navail, nwc = 0, ncorefree = 0, r;
			bool full;

			memset(&q, 0, sizeof(q));
			q.topo = t;
			q.koord = true;
			q.available = rnd_subset(&t->online, (int)rnd(101));
			if (hetero)
				np_cpuset_or(&q.available, &q.available,
					     &t->offline);
			navail = np_cpuset_count_and(&q.available, &t->online);
			q.count = (int)rnd((uint32_t)t->ncpus + 2);
			q.bind_policy = (enum np_bind_policy)rnd(3);
			q.required = rnd(3) == 0;
			q.exclusive_policy = (enum np_exclusive_policy)rnd(3);
			q.numa_strategy = (enum np_numa_strategy)rnd(3);
			q.pcpu_marked = rnd_subset(&t->online, 15);
			q.numa_marked = rnd_subset(&t->online, 5);
			if (rnd(3) == 0) {
				q.has_preferred = true;
				q.preferred = rnd_subset(&t->online, 30);
			}
			full = q.bind_policy != NP_BIND_SPREAD_BY_PCPUS;
			for (int c = 0; c < t->ncores; c++) {
				int f = np_cpuset_count_and(&t->cores[c].cpus,
							    &q.available);
				if (f == t->cores[c].ncpus)
					nwc += f;
				if (f)
					ncorefree++;
			}

			r = take(&q, &out, err, sizeof(err));
			if (q.count > navail) {
				assert_int_equal(r, -ENOSPC);
				assert_non_null(strstr(err, "not enough cpus"));
				continue;
			}
			if (hetero && r && q.required && full) {
				/* cores of different sizes: a required
				 * FullPCPUs fails only for a count that is
				 * not a multiple of cpus_per_core (the
				 * kubelet's NumCPUs / NumCores) or when no
				 * set of whole cores has exactly count CPUs */
				assert_int_equal(r, -EINVAL);
				assert_non_null(strstr(err, "FullPCPUs"));
				if (q.count % t->cpus_per_core == 0)
					assert_false(whole_fit_exists(
					    t, &q.available, q.count));
				continue;
			}
			if (q.required && full && q.count && !hetero &&
			    (q.count % smt || q.count > nwc)) {
				assert_int_equal(r, -EINVAL);
				assert_non_null(strstr(err, "FullPCPUs"));
				continue;
			}
			if (q.required && !full && q.count > ncorefree) {
				assert_int_equal(r, -EINVAL);
				assert_non_null(strstr(err, "SpreadByPCPUs"));
				continue;
			}
			if (r) {
				char a[512];
				np_cpuset_format(&q.available, a, sizeof(a));
				fail_msg("iter %d: count %d of \"%s\" (%s%s): "
					 "%d %s",
					 iter, q.count, a,
					 np_bind_policy_name(q.bind_policy),
					 q.required ? ", required" : "", r,
					 err);
			}
			assert_int_equal(np_cpuset_count(&out), q.count);
			assert_true(np_cpuset_subset(&out, &q.available));
			assert_true(np_cpuset_subset(&out, &t->online));
			if (q.required && full) {
				np_topology_cores_of(t, &out, &wc);
				assert_true(np_cpuset_equal(&wc, &out));
			}
			if (q.required && !full) {
				/* at most one CPU per core */
				for (int c = 0; c < t->ncores; c++)
					assert_true(
					    np_cpuset_count_and(
						&t->cores[c].cpus, &out) <= 1);
			}
			/* preferred CPUs come first */
			if (q.has_preferred) {
				np_cpuset p;
				int want;
				np_cpuset_and(&p, &q.preferred, &q.available);
				np_cpuset_and(&p, &p, &t->online);
				if (q.required && full) {
					for (int c = 0; c < t->ncores; c++)
						if (!np_cpuset_subset(
							&t->cores[c].cpus, &p))
							np_cpuset_andnot(
							    &p, &p,
							    &t->cores[c].cpus);
				} else if (q.required) {
					np_cpuset oc;
					/* lowest free thread of each core */
					np_cpuset_zero(&oc);
					for (int c = 0; c < t->ncores; c++) {
						np_cpuset in;
						np_cpuset_and(&in,
							      &t->cores[c].cpus,
							      &q.available);
						if (!np_cpuset_empty(&in))
							np_cpuset_set(
							    &oc,
							    np_cpuset_first(
								&in));
					}
					np_cpuset_and(&p, &p, &oc);
				}
				want = np_cpuset_count(&p);
				if (want > q.count)
					want = q.count;
				assert_int_equal(np_cpuset_count_and(&p, &out),
						 want);
			}
			/* deterministic */
			assert_int_equal(take(&q, &again, err, sizeof(err)), 0);
			assert_true(np_cpuset_equal(&out, &again));
			checked++;
		}
		np_topology_free(t);
	}
	print_message("property: %d successful takes checked\n", checked);
	assert_true(checked > 1000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_koordinator_vectors),
	    cmocka_unit_test(test_basics),
	    cmocka_unit_test(test_names),
	    cmocka_unit_test(test_required_full_pcpus),
	    cmocka_unit_test(test_required_spread),
	    cmocka_unit_test(test_required_full_hetero),
	    cmocka_unit_test(test_required_full_exact),
	    cmocka_unit_test(test_exclusive_fallback),
	    cmocka_unit_test(test_numa_strategy),
	    cmocka_unit_test(test_preferred),
	    cmocka_unit_test(test_property_random),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
