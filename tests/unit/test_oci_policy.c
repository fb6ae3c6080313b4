// SPDX-License-Identifier: Apache-2.0
/*
 * Who may ask for what (numaplace/oci_policy.h): config.oci_hook.policy
 * parsed and matched, and a container workload's request checked against
 * its resources and its rule: the hostile requests (six exclusive
 * CPUs for a tenth of one, 64Gi without a memory limit, a partition, a
 * cap) refused naming the rule and both values; what the resources give
 * admitted.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "numaplace/oci_policy.h"

static void policy(struct np_oci_policy *p, const char *text)
{
	json_error_t je;
	json_t *j = json_loads(text, 0, &je);
	char err[512];

	if (!j)
		fail_msg("bad test JSON %s: %s", text, je.text);
	if (np_oci_policy_from_json(p, j, "config.oci_hook.policy", err,
				    sizeof(err)))
		fail_msg("policy %s refused: %s", text, err);
	json_decref(j);
}

static void bad_policy(const char *text, const char *needle)
{
	struct np_oci_policy p;
	json_t *j = json_loads(text, 0, NULL);
	char err[512] = "";

	assert_non_null(j);
	if (np_oci_policy_from_json(&p, j, "config.oci_hook.policy", err,
				    sizeof(err)) != -EINVAL)
		fail_msg("accepted: %s", text);
	if (!strstr(err, needle))
		fail_msg("\"%s\" lacks \"%s\"", err, needle);
	json_decref(j);
}

/* A container workload: QOS, CPU, MEMORY as a spec gives them, its
 * container object's extra members (namespace, limits, requests). */
static void req(struct np_workload_req *w, const char *qos, const char *cpu,
		const char *memory, const char *extra)
{
	char s[2048], err[512];
	json_t *j;

	snprintf(s, sizeof(s),
		 "{\"name\":\"w\",\"qos\":\"%s\",\"containers\":[{\"name\":"
		 "\"main\"%s%s%s%s%s%s}],\"container\":{\"id\":\"c1\","
		 "\"cgroup\":\"/np/c1\"%s%s}}",
		 qos, cpu ? ",\"cpu\":\"" : "", cpu ? cpu : "",
		 cpu ? "\"" : "", memory ? ",\"memory\":\"" : "",
		 memory ? memory : "", memory ? "\"" : "", extra ? "," : "",
		 extra ? extra : "");
	if (!(j = json_loads(s, 0, NULL)))
		fail_msg("bad test JSON %s", s);
	if (np_workload_req_from_json(w, j, "spec", err, sizeof(err)))
		fail_msg("spec %s refused: %s", s, err);
	json_decref(j);
}

/* Checked under the rule matching its namespace and cgroup, bounded by
 * its stated resources; NULL when allowed, else the reason. */
static const char *check(const struct np_oci_policy *p,
			 const struct np_workload_req *w, int held)
{
	static char why[1024];
	struct np_oci_bounds b;

	np_oci_bounds_of(&b, w, "linux.resources");
	why[0] = '\0';
	if (!np_oci_policy_check(p,
				 np_oci_policy_match(p, w->container_ns,
						     w->cgroup),
				 w, &b, true, held, why, sizeof(why)))
		return NULL;
	return why;
}

static void refused(const struct np_oci_policy *p,
		    const struct np_workload_req *w, int held,
		    const char *needle)
{
	const char *why = check(p, w, held);

	if (!why)
		fail_msg("allowed, wanted \"%s\"", needle);
	if (!strstr(why, needle))
		fail_msg("\"%s\" lacks \"%s\"", why, needle);
}

static void allowed(const struct np_oci_policy *p,
		    const struct np_workload_req *w, int held)
{
	const char *why = check(p, w, held);

	if (why)
		fail_msg("refused: %s", why);
}

#define TENTH "\"limits\":{\"cpu\":\"100m\"},\"requests\":{\"cpu\":\"100m\"}"
#define TWO "\"limits\":{\"cpu\":\"2\"},\"requests\":{\"cpu\":\"2\"}"

static void test_parse(void **unused)
{
	struct np_oci_policy p;
	json_t *j;
	char *s;
	(void)unused;

	np_oci_policy_defaults(&p);
	assert_int_equal(p.nrules, 0);
	assert_int_equal(p.def.qos, 1u << NP_QOS_LS | 1u << NP_QOS_BE);
	assert_false(p.def.partition || p.def.host_isolation ||
		     p.def.without_limit);
	assert_int_equal(p.def.max_exclusive_cpus, -1);
	policy(&p, "{\"default\":{\"qos\":[\"BE\"]},\"rules\":[{\"namespace\":"
		   "\"trading\",\"qos\":[\"LSE\",\"LS\"],\"host_isolation\":"
		   "true,\"max_exclusive_cpus\":4},{\"cgroup_parent\":"
		   "\"kubepods.slice\",\"partition\":true}]}");
	assert_int_equal(p.nrules, 2);
	assert_int_equal(p.def.qos, 1u << NP_QOS_BE);
	assert_string_equal(p.rule[0].ns, "trading");
	assert_int_equal(p.rule[0].max_exclusive_cpus, 4);
	assert_true(p.rule[0].host_isolation);
	/* relative, as shared_cgroups are: from the root */
	assert_string_equal(p.rule[1].cgroup_parent, "/kubepods.slice");
	/* a key a rule leaves out is the built-in default's */
	assert_int_equal(p.rule[1].qos, 1u << NP_QOS_LS | 1u << NP_QOS_BE);
	j = np_oci_policy_to_json(&p);
	s = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
	assert_non_null(strstr(s, "\"max_exclusive_cpus\":4,\"namespace\":"
				  "\"trading\",\"partition\":false,\"qos\":"
				  "[\"LSE\",\"LS\"]"));
	free(s);
	json_decref(j);

	bad_policy("{\"rules\":[{\"qos\":[\"LSE\"]}]}",
		   "config.oci_hook.policy.rules[0]: a rule needs a namespace "
		   "or a cgroup_parent");
	bad_policy("{\"rules\":[{\"namespace\":\"a\",\"qos\":[\"Guaranteed\"]}]}",
		   "config.oci_hook.policy.rules[0].qos[0]: expected LSE, LSR, "
		   "LS or BE");
	bad_policy("{\"default\":{\"namespace\":\"a\"}}",
		   "config.oci_hook.policy.default.namespace: unknown");
	bad_policy("{\"rules\":[{\"cgroup_parent\":\"a/../b\"}]}",
		   "cgroup_parent: \"a/../b\" has an empty, \".\" or \"..\"");
	bad_policy("{\"rules\":[{\"namespace\":\"a\",\"max_exclusive_cpus\":-1}]}",
		   "rules[0].max_exclusive_cpus: expected an integer 0..4096");
	bad_policy("{\"rules\":[{\"namespace\":\"a\",\"partition\":1}]}",
		   "rules[0].partition");
	bad_policy("{\"rule\":[]}", "config.oci_hook.policy.rule: unknown");
	bad_policy("{\"rules\":[{\"namespace\":\"a\"},{\"namespace\":\"a\"},"
		   "{\"namespace\":\"a\"},{\"namespace\":\"a\"},{\"namespace\":"
		   "\"a\"},{\"namespace\":\"a\"},{\"namespace\":\"a\"},"
		   "{\"namespace\":\"a\"},{\"namespace\":\"a\"},{\"namespace\":"
		   "\"a\"},{\"namespace\":\"a\"},{\"namespace\":\"a\"},"
		   "{\"namespace\":\"a\"},{\"namespace\":\"a\"},{\"namespace\":"
		   "\"a\"},{\"namespace\":\"a\"},{\"namespace\":\"a\"}]}",
		   "rules: expected an array of at most 16 rules");
}

static void test_match(void **unused)
{
	struct np_oci_policy p;
	char name[400];
	(void)unused;

	policy(&p, "{\"rules\":[{\"namespace\":\"a\",\"cgroup_parent\":\"/np\"},"
		   "{\"namespace\":\"a\"},{\"cgroup_parent\":\"np/x\"}]}");
	assert_int_equal(np_oci_policy_match(&p, "a", "/np/c1"), 0);
	assert_int_equal(np_oci_policy_match(&p, "a", "/other/c1"), 1);
	/* at or below, component-wise: /npx is not below /np */
	assert_int_equal(np_oci_policy_match(&p, "a", "/npx/c1"), 1);
	assert_int_equal(np_oci_policy_match(&p, "b", "/np/x/c1"), 2);
	assert_int_equal(np_oci_policy_match(&p, "b", "/np/x"), 2);
	assert_int_equal(np_oci_policy_match(&p, NULL, "/np/c1"), -1);
	np_oci_rule_name(&p, 0, name, sizeof(name));
	assert_string_equal(name, "oci_hook.policy.rules[0] (namespace \"a\", "
				  "cgroup_parent /np)");
	np_oci_rule_name(&p, -1, name, sizeof(name));
	assert_string_equal(name, "oci_hook.policy.default");
}

/* The case and its kin, under the built-in default. */
static void test_hostile_default(void **unused)
{
	struct np_oci_policy p;
	struct np_workload_req w;
	(void)unused;

	np_oci_policy_defaults(&p);
	/* LSE, 6 CPUs, for a container given a tenth of one */
	req(&w, "LSE", "6", NULL, TENTH);
	refused(&p, &w, 0,
		"oci_hook.policy.default: qos LSE is not allowed for this "
		"container (the rule allows LS, BE)");
	np_workload_req_free(&w);
	req(&w, "LSR", "2", NULL, TWO);
	refused(&p, &w, 0, "qos LSR is not allowed");
	np_workload_req_free(&w);
	/* LS, 6 CPUs above its limit: both values named */
	req(&w, "LS", "6", NULL, TENTH);
	refused(&p, &w, 0,
		"oci_hook.policy.default: cpu 6 is above the container's CPU "
		"limit of 100m (linux.resources)");
	np_workload_req_free(&w);
	/* 64Gi for a container without a memory limit */
	req(&w, "LS", NULL, "64Gi", NULL);
	refused(&p, &w, 0,
		"oci_hook.policy.default: memory 64Gi is asked for a container "
		"without a memory limit, which this rule does not allow "
		"(without_limit)");
	np_workload_req_free(&w);
	req(&w, "LS", NULL, "2Gi", "\"limits\":{\"memory\":\"1Gi\"}");
	refused(&p, &w, 0,
		"memory 2Gi is above the container's memory limit of 1Gi");
	np_workload_req_free(&w);
	/* CPUs above the request of a container without a limit */
	req(&w, "LS", "4", NULL, "\"requests\":{\"cpu\":\"500m\"}");
	refused(&p, &w, 0,
		"cpu 4 is asked for a container without a CPU limit (its "
		"request: 500m)");
	np_workload_req_free(&w);
	req(&w, "BE", "1", NULL, NULL);
	refused(&p, &w, 0, "cpu 1 is asked for a container without a CPU "
			   "limit (its request: none)");
	np_workload_req_free(&w);
	/* hugepages: above the limit, a size it was not given */
	req(&w, "LS", NULL, NULL,
	    "\"limits\":{\"hugepages-2Mi\":\"4Mi\",\"hugepages-1Gi\":0}");
	w.c[0].nhuge = 1;
	w.c[0].huge_size_kb[0] = 2048;
	w.c[0].huge_bytes[0] = 8 << 20;
	refused(&p, &w, 0, "hugepages-2Mi 8Mi is above the container's limit "
			   "of 4Mi");
	w.c[0].huge_size_kb[0] = 1024 * 1024;
	w.c[0].huge_bytes[0] = 1 << 30;
	refused(&p, &w, 0, "hugepages-1Gi 1Gi is above the container's limit "
			   "of 0");
	np_workload_req_free(&w);
	/* a partition: a container workload cannot be one (the spec says
	 * so); the rule is checked on the request as the hook has it */
	req(&w, "LS", NULL, NULL, NULL);
	w.partition = true;
	refused(&p, &w, 0, "oci_hook.policy.default: isolation \"partition\" "
			   "is not allowed");
	np_workload_req_free(&w);
}

/* What the resources give is admitted under the default. */
static void test_resources_allowed(void **unused)
{
	struct np_oci_policy p;
	struct np_workload_req w;
	(void)unused;

	np_oci_policy_defaults(&p);
	req(&w, "Burstable", "500m", NULL,
	    "\"limits\":{\"cpu\":\"2\"},\"requests\":{\"cpu\":\"500m\"}");
	allowed(&p, &w, 0);
	np_workload_req_free(&w);
	/* up to the limit, as an annotation may choose */
	req(&w, "LS", "2", "1Gi",
	    "\"limits\":{\"cpu\":\"2\",\"memory\":\"1Gi\"},\"requests\":"
	    "{\"cpu\":\"500m\"}");
	allowed(&p, &w, 0);
	np_workload_req_free(&w);
	/* the kubelet's Guaranteed (exclusive under static): the resources
	 * say so, not a listed class */
	req(&w, "Guaranteed", "2", NULL, TWO);
	allowed(&p, &w, 0);
	np_workload_req_free(&w);
	req(&w, "Guaranteed", "2", NULL,
	    "\"limits\":{\"cpu\":\"2\"},\"requests\":{\"cpu\":\"1\"}");
	refused(&p, &w, 0,
		"qos Guaranteed needs a Guaranteed container, a CPU limit "
		"equal to its request; it has limit 2 (linux.resources), "
		"request 1");
	np_workload_req_free(&w);
	req(&w, "BestEffort", NULL, NULL, NULL);
	allowed(&p, &w, 0);
	np_workload_req_free(&w);
}

static void test_rules(void **unused)
{
	struct np_oci_policy p;
	struct np_workload_req w;
	(void)unused;

	policy(&p, "{\"rules\":[{\"namespace\":\"trading\",\"qos\":[\"LSE\","
		   "\"LSR\",\"LS\",\"BE\"],\"max_exclusive_cpus\":4},"
		   "{\"namespace\":\"lab\",\"qos\":[\"LSE\",\"LS\"],"
		   "\"without_limit\":true}]}");
	req(&w, "LSE", "2", NULL, "\"namespace\":\"trading\"," TWO);
	allowed(&p, &w, 0);
	allowed(&p, &w, 2);
	/* the cap counts what the rule's containers hold */
	refused(&p, &w, 3,
		"oci_hook.policy.rules[0] (namespace \"trading\"): 2 exclusive "
		"CPU(s), with the 3 its containers hold already, is more than "
		"its max_exclusive_cpus 4");
	np_workload_req_free(&w);
	/* LSE needs Guaranteed resources in whole CPUs */
	req(&w, "LSE", "1", NULL,
	    "\"namespace\":\"trading\",\"limits\":{\"cpu\":\"2\"},"
	    "\"requests\":{\"cpu\":\"1\"}");
	refused(&p, &w, 0,
		"qos LSE needs a Guaranteed container, a CPU limit equal to "
		"its request in whole CPUs; it has limit 2 (linux.resources), "
		"request 1");
	np_workload_req_free(&w);
	req(&w, "LSE", "1", NULL,
	    "\"namespace\":\"trading\",\"limits\":{\"cpu\":\"1500m\"},"
	    "\"requests\":{\"cpu\":\"1500m\"}");
	refused(&p, &w, 0, "in whole CPUs; it has limit 1500m");
	np_workload_req_free(&w);
	req(&w, "LSE", "2", NULL, "\"namespace\":\"trading\"");
	refused(&p, &w, 0,
		"oci_hook.policy.rules[0] (namespace \"trading\"): cpu 2 is "
		"asked for a container without a CPU limit");
	np_workload_req_free(&w);
	/* a namespace whose rule allows asking without a limit */
	req(&w, "LSE", "2", "8Gi", "\"namespace\":\"lab\"");
	allowed(&p, &w, 0);
	np_workload_req_free(&w);
	/* with a limit, the limit still holds there */
	req(&w, "LSE", "3", NULL, "\"namespace\":\"lab\"," TWO);
	refused(&p, &w, 0,
		"oci_hook.policy.rules[1] (namespace \"lab\"): cpu 3 is above "
		"the container's CPU limit of 2");
	np_workload_req_free(&w);
	/* another namespace falls to the default */
	req(&w, "LSE", "2", NULL, "\"namespace\":\"web\"," TWO);
	refused(&p, &w, 0, "oci_hook.policy.default: qos LSE is not allowed");
	np_workload_req_free(&w);
}

/* The kernel's limits narrow the stated ones; the tighter one is named. */
static void test_bounds_narrow(void **unused)
{
	struct np_oci_policy p;
	struct np_workload_req w;
	struct np_oci_bounds b, k;
	char why[512];
	(void)unused;

	np_oci_policy_defaults(&p);
	req(&w, "LS", "2", NULL, TWO);
	np_oci_bounds_of(&b, &w, "container.limits");
	memset(&k, 0, sizeof(k));
	k.cpu_limit = 100;
	k.memory_limit = -1;
	snprintf(k.cpu_from, sizeof(k.cpu_from), "cpu.max of /np/c1: 10000 100000");
	np_oci_bounds_narrow(&b, &k);
	assert_int_equal(b.cpu_limit, 100);
	assert_int_equal(np_oci_policy_check(&p, -1, &w, &b, true, 0, why,
					     sizeof(why)),
			 -EPERM);
	assert_non_null(strstr(why, "cpu 2 is above the container's CPU limit "
				    "of 100m (cpu.max of /np/c1: 10000 100000)"));
	/* a looser kernel limit leaves the stated one */
	np_oci_bounds_of(&b, &w, "container.limits");
	k.cpu_limit = 8000;
	np_oci_bounds_narrow(&b, &k);
	assert_int_equal(b.cpu_limit, 2000);
	assert_string_equal(b.cpu_from, "container.limits");
	np_workload_req_free(&w);
}

static void test_exclusive_cpus(void **unused)
{
	struct np_workload_req w;
	(void)unused;

	req(&w, "Guaranteed", "2", NULL, NULL);
	assert_int_equal(np_oci_exclusive_cpus(&w, true), 2);
	assert_int_equal(np_oci_exclusive_cpus(&w, false), 0);
	np_workload_req_free(&w);
	req(&w, "Guaranteed", "1500m", NULL, NULL);
	assert_int_equal(np_oci_exclusive_cpus(&w, true), 0);
	np_workload_req_free(&w);
	req(&w, "LSR", "3", NULL, NULL);
	assert_int_equal(np_oci_exclusive_cpus(&w, false), 3);
	np_workload_req_free(&w);
	req(&w, "LS", "3", NULL, NULL);
	assert_int_equal(np_oci_exclusive_cpus(&w, true), 0);
	np_workload_req_free(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_match),
		cmocka_unit_test(test_hostile_default),
		cmocka_unit_test(test_resources_allowed),
		cmocka_unit_test(test_rules),
		cmocka_unit_test(test_bounds_narrow),
		cmocka_unit_test(test_exclusive_cpus),
	};
	return cmocka_run_group_tests_name("oci_policy", tests, NULL, NULL);
}
