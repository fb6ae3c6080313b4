// SPDX-License-Identifier: Apache-2.0
/*
 * BE suppression (np_suppress_compute, np_suppress_pick). Expectations are
 * worked out by hand from Koordinator's cpusuppress formula as described in
 * its koordlet (qosmanager/plugins/cpusuppress): budget = capacity x
 * threshold% - non-BE - host apps - system, floor 2 CPUs, growth of 10% of
 * the CPUs per round. No upstream data is copied.
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

#include "numaplace/be_suppress.h"
#include "fixtures.h"

static struct np_suppress_in in8(int64_t node, int64_t non_be, int64_t be)
{
	struct np_suppress_in in = {.capacity = 8,
				    .pool = 6,
				    .threshold = 65,
				    .u = {.node = node,
					  .non_be = non_be,
					  .be = be}};
	return in;
}

static void compute_ok(const struct np_suppress_in *in,
		       struct np_suppress_out *o)
{
	char err[256] = "";

	if (np_suppress_compute(in, o, err, sizeof(err)))
		fail_msg("np_suppress_compute: %s", err);
}

/* 8 CPUs at 65%: 5200 m. system = 3000 - 2000 - 500 = 500;
 * budget = 5200 - 2000 - 0 - 500 = 2700 -> 3 CPUs, quota 270000 us. */
static void test_formula(void **state)
{
	struct np_suppress_in in = in8(3000, 2000, 500);
	struct np_suppress_out o;

	(void)state;
	compute_ok(&in, &o);
	assert_int_equal(o.system, 500);
	assert_int_equal(o.budget, 2700);
	assert_int_equal(o.cpus, 3);
	assert_int_equal(o.quota_us, 270000);
	assert_false(o.growth_limited);

	/* host apps count like LS, and are not system: 16 CPUs at 65% =
	 * 10400; system = 8000 - 3000 - 2000 - 1000 = 2000; budget = 10400 -
	 * 3000 - 1000 - 2000 = 4400 -> 5 CPUs */
	in = (struct np_suppress_in){
	    .capacity = 16,
	    .pool = 16,
	    .threshold = 65,
	    .u = {.node = 8000, .non_be = 3000, .be = 2000, .host_apps = 1000}};
	compute_ok(&in, &o);
	assert_int_equal(o.system, 2000);
	assert_int_equal(o.budget, 4400);
	assert_int_equal(o.cpus, 5);
	assert_int_equal(o.quota_us, 440000);

	/* node usage below the parts (sampling skew): system is 0, not
	 * negative; budget = 5200 - 2000 = 3200 -> 4 */
	in = in8(1000, 2000, 500);
	compute_ok(&in, &o);
	assert_int_equal(o.system, 0);
	assert_int_equal(o.budget, 3200);
	assert_int_equal(o.cpus, 4);
}

/* The minimum and the floor of 2 CPUs. */
static void test_minimum(void **state)
{
	struct np_suppress_in in = in8(3000, 2000, 500);
	struct np_suppress_out o;

	(void)state;
	in.min_cpus = 5; /* 5000 > 2700 */
	compute_ok(&in, &o);
	assert_int_equal(o.budget, 2700);
	assert_int_equal(o.cpus, 5);
	assert_int_equal(o.quota_us, 500000);
	in.min_cpus = 1; /* below the floor: 2 */
	in.u.non_be = 5000;
	in.u.node = 5500; /* budget = 5200 - 5000 - 0 = 200 */
	compute_ok(&in, &o);
	assert_int_equal(o.budget, 200);
	assert_int_equal(o.cpus, 2);
	assert_int_equal(o.quota_us, 200000);
}

/* Threshold 0 leaves BE the floor only; 100 gives the idle node's whole
 * pool (never more than the pool). */
static void test_threshold_bounds(void **state)
{
	struct np_suppress_in in = in8(3000, 2000, 500);
	struct np_suppress_out o;

	(void)state;
	in.threshold = 0; /* 0 - 2000 - 500 = -2500 */
	compute_ok(&in, &o);
	assert_int_equal(o.budget, -2500);
	assert_int_equal(o.cpus, 2);
	assert_int_equal(o.quota_us, 200000);
	in = in8(0, 0, 0);
	in.threshold = 100; /* 8000, pool 6 */
	compute_ok(&in, &o);
	assert_int_equal(o.budget, 8000);
	assert_int_equal(o.cpus, 6);
	assert_int_equal(o.quota_us, 600000);
	in.pool = 1; /* the pool caps the floor too */
	compute_ok(&in, &o);
	assert_int_equal(o.cpus, 1);
	assert_int_equal(o.quota_us, 100000);
}

/* LS usage above the budget: BE is held at the floor. */
static void test_usage_above(void **state)
{
	struct np_suppress_in in = in8(7500, 7000, 500);
	struct np_suppress_out o;

	(void)state;
	compute_ok(&in, &o);
	assert_int_equal(o.system, 0);
	assert_int_equal(o.budget, 5200 - 7000);
	assert_int_equal(o.cpus, 2);
}

/* Growth: 10% of the CPUs per round (at least 1); shrinking at once. */
static void test_growth(void **state)
{
	struct np_suppress_in in = {.capacity = 32, .pool = 32,
				    .threshold = 100, .prev_cpus = 4};
	struct np_suppress_out o;

	(void)state;
	compute_ok(&in, &o); /* 32 wanted, 4 + floor(3.2) = 7 */
	assert_int_equal(o.budget, 32000);
	assert_int_equal(o.cpus, 7);
	assert_true(o.growth_limited);
	in.prev_cpus = 30; /* 30 + 3 > 32: not limited */
	in.prev_quota_us = 3000000;
	compute_ok(&in, &o);
	assert_int_equal(o.cpus, 32);
	assert_int_equal(o.quota_us, 3200000);
	assert_false(o.growth_limited);
	in.prev_quota_us = 400000; /* 4 CPUs of quota + 3 */
	compute_ok(&in, &o);
	assert_int_equal(o.quota_us, 700000);
	assert_true(o.growth_limited);
	/* 8 CPUs: a step of 1 (10% is 0.8) */
	in = in8(0, 0, 0);
	in.prev_cpus = 2;
	compute_ok(&in, &o);
	assert_int_equal(o.cpus, 3);
	/* shrink: from 6 straight to 3 (budget 2700) */
	in = in8(3000, 2000, 500);
	in.prev_cpus = 6;
	in.prev_quota_us = 600000;
	compute_ok(&in, &o);
	assert_int_equal(o.cpus, 3);
	assert_int_equal(o.quota_us, 270000);
	assert_false(o.growth_limited);
}

static void expect_einval(const struct np_suppress_in *in, const char *field)
{
	struct np_suppress_out o;
	char err[256] = "";

	assert_int_equal(np_suppress_compute(in, &o, err, sizeof(err)),
			 -EINVAL);
	if (!strstr(err, field))
		fail_msg("error \"%s\" does not name %s", err, field);
}

static void test_invalid(void **state)
{
	struct np_suppress_in in = in8(3000, 2000, 500);

	(void)state;
	in.threshold = 101;
	expect_einval(&in, "cpuSuppressThresholdPercent");
	in.threshold = -1;
	expect_einval(&in, "cpuSuppressThresholdPercent");
	in = in8(3000, -1, 500);
	expect_einval(&in, "usage");
	in = in8(3000, 2000, 500);
	in.min_cpus = 9;
	expect_einval(&in, "cpuSuppressMinCPUs");
	in = in8(3000, 2000, 500);
	in.pool = 9;
	expect_einval(&in, "pool");
	in.capacity = 0;
	expect_einval(&in, "capacity");
	in = in8(INT64_MAX, 0, 0);
	expect_einval(&in, "usage");
}

static void test_policy_names(void **state)
{
	enum np_suppress_policy p;

	(void)state;
	assert_int_equal(np_suppress_policy_parse("cfsQuota", &p), 0);
	assert_int_equal(p, NP_SUPPRESS_CFS_QUOTA);
	assert_string_equal(np_suppress_policy_name(p), "cfsQuota");
	assert_int_equal(np_suppress_policy_parse("cpuset", &p), 0);
	assert_int_equal(p, NP_SUPPRESS_CPUSET);
	assert_int_equal(np_suppress_policy_parse("none", &p), 0);
	assert_int_equal(p, NP_SUPPRESS_NONE);
	assert_int_equal(np_suppress_policy_parse("cfsquota", &p), -EINVAL);
}

/* 2 sockets, one NUMA node each, 4 cores each, SMT 2, Linux numbering:
 * thread t of core c is CPU t * 8 + c (node 0: 0-3,8-11; node 1: 4-7,
 * 12-15). */
static struct np_topology *topo16(void)
{
	struct np_cpu_desc d[16];
	struct np_topology *t = NULL;
	char err[256];

	for (int c = 0; c < 8; c++)
		for (int th = 0; th < 2; th++) {
			struct np_cpu_desc *x = &d[c * 2 + th];
			memset(x, 0, sizeof(*x));
			x->cpu = th * 8 + c;
			x->core = c;
			x->numa = c / 4;
			x->socket = c / 4;
			x->l3 = -1;
			x->online = true;
		}
	if (np_topology_build(&t, d, 16, err, sizeof(err)))
		fail_msg("topology: %s", err);
	return t;
}

static void pick(const struct np_topology *t, const struct np_pools *p, int n,
		 const char *want)
{
	np_cpuset got;

	assert_int_equal(np_suppress_pick(t, p, n, &got), 0);
	np_test_assert_cpus(&got, want);
}

static void test_pick_spread(void **state)
{
	struct np_topology *t = topo16();
	struct np_pools p;

	(void)state;
	memset(&p, 0, sizeof(p));
	p.be = np_test_cpus("0-15");
	/* equal buckets: node 0 first (lowest CPU); a pair from each */
	pick(t, &p, 4, "0,4,8,12");
	/* a pair from each, then one single from node 0 */
	pick(t, &p, 5, "0-1,4,8,12");
	/* one pair (node 0), the single from node 1 */
	pick(t, &p, 3, "0,4,8");
	pick(t, &p, 2, "0,8");
	pick(t, &p, 1, "0");
	pick(t, &p, 0, "");
	pick(t, &p, 16, "0-15");
	pick(t, &p, 40, "0-15");
	np_topology_free(t);
}

/* LSE on core 1 (1,9), LSR on core 5 (5,13), reserved 0,8: the BE pool is
 * the 12 other CPUs and LSR's; 6 CPUs = 1 from LSR (floor(6 x 2 / 12)) and
 * 5 from LS. LS buckets: node 1 has 6 (4,12,6,14,7,15), node 0 has 4
 * (2,10,3,11): node 1 first: pair 4,12; node 0: pair 2,10; then a single
 * from node 1: 6. LSR: 5. */
static void test_pick_lsr_ls(void **state)
{
	struct np_topology *t = topo16();
	struct np_pools p;
	np_cpuset got, bad;

	(void)state;
	memset(&p, 0, sizeof(p));
	p.reserved = np_test_cpus("0,8");
	p.lse = np_test_cpus("1,9");
	p.exclusive = np_test_cpus("1,5,9,13");
	p.be = np_test_cpus("2-7,10-15");
	pick(t, &p, 6, "2,4-6,10,12");
	/* 12: all of it, 2 (= floor(12 x 2 / 12)) from LSR */
	pick(t, &p, 12, "2-7,10-15");
	/* 2: floor(2 x 2 / 12) = 0 from LSR; the pair 4,12 */
	pick(t, &p, 2, "4,12");
	/* every size: exactly n CPUs, never LSE or reserved */
	bad = np_test_cpus("0-1,8-9");
	for (int n = 0; n <= 14; n++) {
		assert_int_equal(np_suppress_pick(t, &p, n, &got), 0);
		assert_int_equal(np_cpuset_count(&got), n < 12 ? n : 12);
		assert_true(np_cpuset_subset(&got, &p.be));
		assert_false(np_cpuset_intersects(&got, &bad));
	}
	/* only LSR left to BE: LS part empty, everything from LSR */
	p.be = np_test_cpus("5,13");
	pick(t, &p, 2, "5,13");
	np_topology_free(t);
}

static void config_bad(const char *text, const char *msg)
{
	struct np_suppress_config c, before;
	json_t *j = json_loads(text, 0, NULL);
	char err[256] = "";

	assert_non_null(j);
	np_suppress_config_defaults(&c, NP_SUPPRESS_NONE);
	before = c;
	assert_int_equal(np_suppress_config_from_json(&c, j, "config.be",
						      err, sizeof(err)),
			 -EINVAL);
	if (!strstr(err, msg))
		fail_msg("error \"%s\" does not hold \"%s\"", err, msg);
	assert_memory_equal(&c, &before, sizeof(c));
	json_decref(j);
}

static void test_config(void **state)
{
	struct np_suppress_config c;
	json_t *j = json_loads("{\"cpuSuppressThresholdPercent\": 40, "
			       "\"cpuSuppressPolicy\": \"cfsQuota\", "
			       "\"cpuSuppressMinCPUs\": 3}",
			       0, NULL), *out;
	char err[256] = "";

	(void)state;
	np_suppress_config_defaults(&c, NP_SUPPRESS_NONE);
	assert_int_equal(c.threshold, 65);
	assert_int_equal(c.policy, NP_SUPPRESS_NONE);
	assert_int_equal(c.min_cpus, 0);
	assert_int_equal(np_suppress_config_from_json(&c, NULL, "x", err,
						      sizeof(err)),
			 0);
	assert_int_equal(c.threshold, 65);
	assert_int_equal(np_suppress_config_from_json(&c, j, "x", err,
						      sizeof(err)),
			 0);
	assert_int_equal(c.threshold, 40);
	assert_int_equal(c.policy, NP_SUPPRESS_CFS_QUOTA);
	assert_int_equal(c.min_cpus, 3);
	out = np_suppress_config_to_json(&c);
	assert_string_equal(json_string_value(json_object_get(
				out, "cpuSuppressPolicy")),
			    "cfsQuota");
	json_decref(out);
	json_decref(j);
	config_bad("[]", "config.be: expected an object");
	config_bad("{\"cpuSuppressThresholdPercent\": 101}",
		   "config.be.cpuSuppressThresholdPercent");
	config_bad("{\"cpuSuppressThresholdPercent\": \"65\"}",
		   "config.be.cpuSuppressThresholdPercent");
	config_bad("{\"cpuSuppressMinCPUs\": -1}",
		   "config.be.cpuSuppressMinCPUs");
	config_bad("{\"cpuSuppressPolicy\": \"static\"}",
		   "config.be.cpuSuppressPolicy: \"static\"");
	/* a good key before a bad one changes nothing */
	config_bad("{\"cpuSuppressThresholdPercent\": 10, \"cpuSuppressPolicy\": 1}",
		   "config.be.cpuSuppressPolicy");
	config_bad("{\"threshold\": 10}", "config.be.threshold");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_formula),
	    cmocka_unit_test(test_minimum),
	    cmocka_unit_test(test_threshold_bounds),
	    cmocka_unit_test(test_usage_above),
	    cmocka_unit_test(test_growth),
	    cmocka_unit_test(test_invalid),
	    cmocka_unit_test(test_policy_names),
	    cmocka_unit_test(test_pick_spread),
	    cmocka_unit_test(test_pick_lsr_ls),
	    cmocka_unit_test(test_config),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
