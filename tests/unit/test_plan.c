// SPDX-License-Identifier: Apache-2.0
/*
 * The planner contract: every vector copied from the kubelet's and
 * Koordinator's test tables (tests/data/vectors, origins named per case)
 * and our own admission cases (tests/data/plan) give their expected result;
 * malformed requests are rejected with the offending field named.
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

#include "numaplace/merge.h"
#include "numaplace/plan.h"

static int run_file(const char *path, const char *only_kind)
{
	json_error_t jerr;
	json_t *all = json_load_file(path, 0, &jerr);
	size_t i;
	json_t *req;
	int fails = 0, checked = 0;

	if (!all)
		fail_msg("%s: %s (line %d)", path, jerr.text, jerr.line);
	assert_true(json_is_array(all));
	json_array_foreach(all, i, req)
	{
		json_t *res = NULL;
		char err[512], why[512];
		const char *kind = json_string_value(json_object_get(req, "kind"));
		const char *id = json_string_value(json_object_get(req, "id"));
		int r, k;
		if (only_kind && (!kind || strcmp(kind, only_kind)))
			continue;
		r = np_plan(req, &res, err, sizeof(err));
		if (r) {
			printf("FAIL %s: planner error: %s\n", id, err);
			fails++;
			continue;
		}
		k = np_plan_check(req, res, why, sizeof(why));
		if (k < 0) {
			printf("FAIL %s: %s\n", id, why);
			fails++;
		} else if (k == 0) {
			checked++;
		}
		json_decref(res);
	}
	printf("%s: %d cases checked, %d failed\n", path, checked, fails);
	json_decref(all);
	assert_true(checked > 0);
	return fails;
}

static void test_take_vectors(void **state)
{
	(void)state;
	assert_int_equal(run_file("tests/data/vectors/take.json", "take"), 0);
}

static void test_merge_vectors(void **state)
{
	(void)state;
	assert_int_equal(run_file("tests/data/vectors/merge.json", "merge"), 0);
}

static void test_admit_cases(void **state)
{
	(void)state;
	assert_int_equal(run_file("tests/data/plan/admit.json", "admit"), 0);
}

/* Malformed requests: -EINVAL and a message naming the field. */
static void expect_bad(const char *json, const char *needle)
{
	json_error_t jerr;
	json_t *req = json_loads(json, 0, &jerr), *res = NULL;
	char err[512] = "";
	assert_non_null(req);
	assert_int_equal(np_plan(req, &res, err, sizeof(err)), -EINVAL);
	assert_null(res);
	if (!strstr(err, needle))
		fail_msg("error \"%s\" does not name \"%s\"", err, needle);
	json_decref(req);
}

#define TOPO "{\"cpus\":[{\"cpu\":0,\"core\":0,\"socket\":0,\"numa\":0}," \
	     "{\"cpu\":1,\"core\":0,\"socket\":0,\"numa\":0}]}"

/* A merge request whose provider gives n hints for "cpu" (each one node
 * of 2, not preferred). */
static char *merge_with(int n)
{
	size_t len = 128 + (size_t)n * 40;
	char *s = malloc(len), *p = s;

	assert_non_null(s);
	p += sprintf(p, "{\"kind\":\"merge\",\"policy\":\"best-effort\","
			"\"numa_nodes\":[0,1],\"providers\":[{\"cpu\":[");
	for (int i = 0; i < n; i++)
		p += sprintf(p, "%s{\"mask\":[%d],\"preferred\":false}",
			     i ? "," : "", i % 2);
	strcpy(p, "]}]}");
	return s;
}

/* A resource may give NP_MERGE_MAX_HINTS hints (every node set of 16
 * NUMA nodes), not one more: refused naming it and the limit, before any
 * merge (3 x 300,000 hints ran for minutes). */
static void test_merge_hint_bound(void **state)
{
	json_error_t jerr;
	json_t *req, *res = NULL;
	char err[512] = "", *s;

	(void)state;
	s = merge_with(NP_MERGE_MAX_HINTS);
	req = json_loads(s, 0, &jerr);
	assert_non_null(req);
	assert_int_equal(np_plan(req, &res, err, sizeof(err)), 0);
	assert_true(json_is_true(json_object_get(res, "admit")));
	json_decref(res);
	json_decref(req);
	free(s);
	s = merge_with(NP_MERGE_MAX_HINTS + 1);
	expect_bad(s, "providers[0].cpu: 65537 hints, more than the 65536 a "
		      "resource may give");
	free(s);
}

static void test_bad_requests(void **state)
{
	(void)state;
	expect_bad("[]", "expected a JSON object");
	expect_bad("{}", "kind: required field is missing");
	expect_bad("{\"kind\":\"nope\"}", "kind: \"nope\" is not");
	expect_bad("{\"kind\":\"take\",\"available\":\"0-1\",\"count\":1}",
		   "topology");
	expect_bad("{\"kind\":\"take\",\"topology\":" TOPO
		   ",\"available\":\"0-x\",\"count\":1}",
		   "available: invalid cpu list");
	expect_bad("{\"kind\":\"take\",\"topology\":" TOPO
		   ",\"available\":\"0-1\",\"count\":-1}",
		   "count: -1 is out of range");
	expect_bad("{\"kind\":\"take\",\"topology\":" TOPO
		   ",\"available\":\"0-1\",\"count\":\"2\"}",
		   "count: expected an integer");
	expect_bad("{\"kind\":\"take\",\"topology\":" TOPO
		   ",\"available\":\"0-1\",\"count\":1,\"strategy\":\"x\"}",
		   "strategy: \"x\" is not packed or spread");
	expect_bad("{\"kind\":\"take\",\"topology\":" TOPO
		   ",\"available\":\"0-1\",\"count\":1,\"current\":\"0\"}",
		   "baseline");
	expect_bad("{\"kind\":\"take\",\"topology\":{\"cpus\":[{\"cpu\":0,"
		   "\"core\":0,\"socket\":0,\"numa\":99}]},\"available\":\"0\","
		   "\"count\":1}",
		   "topology.cpus[0].numa: 99 is out of range");
	expect_bad("{\"kind\":\"take\",\"topology\":" TOPO
		   ",\"available\":\"0-1\",\"count\":1,\"bind_policy\":\"X\"}",
		   "bind_policy: \"X\" is not");
	expect_bad("{\"kind\":\"merge\",\"policy\":\"strict\"}",
		   "policy: \"strict\" is not");
	expect_bad("{\"kind\":\"merge\",\"policy\":\"restricted\","
		   "\"numa_nodes\":[0,1],\"providers\":[{\"cpu\":[{\"mask\":"
		   "[2],\"preferred\":true}]}]}",
		   "mask: names a node not in numa_nodes");
	expect_bad("{\"kind\":\"merge\",\"policy\":\"restricted\","
		   "\"numa_nodes\":[0,0],\"providers\":[]}",
		   "numa_nodes: element 1 is not a distinct");
	expect_bad("{\"kind\":\"merge\",\"policy\":\"restricted\","
		   "\"numa_nodes\":[0,1],\"providers\":[{\"cpu\":[{\"mask\":"
		   "[0]}]}]}",
		   "preferred: required field is missing");
	expect_bad("{\"kind\":\"admit\",\"topology\":" TOPO
		   ",\"policy\":{\"cpu_policy\":\"static\"},\"workload\":{}}",
		   "reserved_cpus");
	expect_bad("{\"kind\":\"admit\",\"topology\":" TOPO
		   ",\"policy\":{\"cpu_policy\":\"static\",\"reserved_cpus\":1},"
		   "\"workload\":{\"name\":\"a\",\"qos\":\"LSE\",\"containers\":"
		   "[{\"name\":\"c\",\"cpu\":\"-1\"}]}}",
		   "workload.containers[0].cpu");
}

/* An unsatisfiable request is a result, not a failure. */
static void test_unsatisfiable(void **state)
{
	json_error_t jerr;
	json_t *req = json_loads("{\"kind\":\"take\",\"topology\":" TOPO
				 ",\"available\":\"0\",\"count\":2}",
				 0, &jerr),
	       *res = NULL;
	char err[256];
	(void)state;
	assert_int_equal(np_plan(req, &res, err, sizeof(err)), 0);
	assert_non_null(json_object_get(res, "error"));
	assert_non_null(strstr(json_string_value(json_object_get(res, "error")),
			       "requested=2, available=1"));
	json_decref(res);
	json_decref(req);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_take_vectors),
		cmocka_unit_test(test_merge_vectors),
		cmocka_unit_test(test_admit_cases),
		cmocka_unit_test(test_bad_requests),
		cmocka_unit_test(test_merge_hint_bound),
		cmocka_unit_test(test_unsatisfiable),
	};
	return cmocka_run_group_tests_name("plan", tests, NULL, NULL);
}
