// SPDX-License-Identifier: Apache-2.0
/*
 * The kubelet static policy's contract in the planner (issue 13 item 1):
 * kind "release" (RemoveContainer), a checkpoint's default_cpuset checked
 * with validateState's rules, the same workload admitted again (Allocate),
 * reserved_cpus 0 (the static policy's, not numaplaced's), and the
 * kubelet's error kinds. The planner cases are tests/data/plan/release.json
 * and tests/data/plan/kubelet_*.json.
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
#include "numaplace/plan.h"
#include "numaplace/topology_json.h"

/* Every case of a planner file matches its expectations; returns how many
 * were checked. */
static int run_file(const char *path)
{
	json_error_t jerr;
	json_t *all = json_load_file(path, 0, &jerr), *req;
	int checked = 0;
	size_t i;

	if (!all)
		fail_msg("%s: %s (line %d)", path, jerr.text, jerr.line);
	json_array_foreach(all, i, req)
	{
		json_t *res = NULL;
		char err[512], why[512];
		const char *id = json_string_value(json_object_get(req, "id"));
		if (np_plan(req, &res, err, sizeof(err)))
			fail_msg("%s: %s: planner error: %s", path, id, err);
		if (np_plan_check(req, res, why, sizeof(why)) != 0)
			fail_msg("%s: %s: %s", path, id, why);
		checked++;
		json_decref(res);
	}
	json_decref(all);
	return checked;
}

static void test_plan_files(void **state)
{
	(void)state;
	assert_int_equal(run_file("tests/data/plan/release.json"), 9);
	assert_int_equal(run_file("tests/data/plan/kubelet_again.json"), 4);
	assert_int_equal(run_file("tests/data/plan/kubelet_reserved0.json"), 3);
	assert_int_equal(
	    run_file("tests/data/plan/kubelet_default_cpuset.json"), 3);
	assert_int_equal(run_file("tests/data/plan/kubelet_error_kind.json"),
			 4);
	assert_int_equal(
	    run_file("tests/data/plan/kubelet_init_containers.json"), 6);
	assert_int_equal(run_file("tests/data/plan/admit_hint.json"), 6);
	assert_int_equal(
	    run_file("tests/data/plan/kubelet_pod_resources.json"), 6);
}

/* 8 CPUs, 2 nodes: node 0 = 0,1,4,5, node 1 = 2,3,6,7; c and c+4 are
 * siblings. */
#define TOPO                                                                   \
	"{\"cpus\":[{\"cpu\":0,\"core\":0,\"socket\":0,\"numa\":0},"         \
	"{\"cpu\":1,\"core\":1,\"socket\":0,\"numa\":0},"                    \
	"{\"cpu\":2,\"core\":2,\"socket\":1,\"numa\":1},"                    \
	"{\"cpu\":3,\"core\":3,\"socket\":1,\"numa\":1},"                    \
	"{\"cpu\":4,\"core\":0,\"socket\":0,\"numa\":0},"                    \
	"{\"cpu\":5,\"core\":1,\"socket\":0,\"numa\":0},"                    \
	"{\"cpu\":6,\"core\":2,\"socket\":1,\"numa\":1},"                    \
	"{\"cpu\":7,\"core\":3,\"socket\":1,\"numa\":1}],"                   \
	"\"numa_nodes\":[{\"id\":0,\"memory\":1073741824},"                  \
	"{\"id\":1,\"memory\":1073741824}]}"
#define POLICY                                                                 \
	"{\"cpu_policy\":\"static\",\"reserved_cpus\":\"0,4\","               \
	"\"topology_policy\":\"restricted\"}"
#define STRICT                                                                 \
	"{\"cpu_policy\":\"static\",\"reserved_cpus\":\"0,4\","               \
	"\"cpu_policy_options\":{\"strict-cpu-reservation\":true}}"
/* web holds 1,5 (memory on node 0), db holds 2,6 and 3. */
#define WEB                                                                    \
	"{\"spec\":{\"name\":\"web\",\"qos\":\"LSE\",\"containers\":"        \
	"[{\"name\":\"main\",\"cpu\":\"2\",\"memory\":\"64Mi\"}]},"          \
	"\"class\":\"LSE\",\"containers\":[{\"name\":\"main\","              \
	"\"exclusive\":true,\"cpus\":\"1,5\",\"mems\":\"0\","                \
	"\"memory\":{\"0\":67108864}}]}"
#define DB                                                                     \
	"{\"spec\":{\"name\":\"db\",\"qos\":\"LSE\",\"containers\":"         \
	"[{\"name\":\"a\",\"cpu\":\"2\",\"memory\":\"32Mi\"},"               \
	"{\"name\":\"b\",\"cpu\":\"1\",\"memory\":\"16Mi\"}]},"              \
	"\"class\":\"LSE\",\"containers\":["                                 \
	"{\"name\":\"a\",\"exclusive\":true,\"cpus\":\"2,6\",\"mems\":\"1\"," \
	"\"memory\":{\"1\":33554432}},"                                      \
	"{\"name\":\"b\",\"exclusive\":true,\"cpus\":\"3\",\"mems\":\"1\","  \
	"\"memory\":{\"1\":16777216}}]}"
#define GUAR1                                                                  \
	"{\"name\":\"n\",\"qos\":\"Guaranteed\",\"containers\":"             \
	"[{\"name\":\"m\",\"cpu\":\"1\"}]}"

static json_t *plan_ok(const char *s)
{
	json_error_t jerr;
	json_t *req = json_loads(s, 0, &jerr), *res = NULL;
	char err[512] = "";

	if (!req)
		fail_msg("bad test JSON: %s", jerr.text);
	if (np_plan(req, &res, err, sizeof(err)))
		fail_msg("planner error: %s", err);
	json_decref(req);
	return res;
}

static void plan_bad(const char *s, const char *needle)
{
	json_error_t jerr;
	json_t *req = json_loads(s, 0, &jerr), *res = NULL;
	char err[512] = "";

	if (!req)
		fail_msg("bad test JSON: %s", jerr.text);
	assert_int_equal(np_plan(req, &res, err, sizeof(err)), -EINVAL);
	assert_null(res);
	if (!strstr(err, needle))
		fail_msg("error \"%s\" does not hold \"%s\"", err, needle);
	json_decref(req);
}

static const char *sget(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

/* A state with a default_cpuset: admitting one CPU with it. */
static void default_bad(const char *policy, const char *def,
			const char *needle)
{
	char req[4096];
	snprintf(req, sizeof(req),
		 "{\"kind\":\"admit\",\"topology\":" TOPO ",\"policy\":%s,"
		 "\"state\":{\"workloads\":[" WEB "," DB "],"
		 "\"default_cpuset\":\"%s\"},\"workload\":" GUAR1 "}",
		 policy, def);
	plan_bad(req, needle);
}

/* Each validateState rule refused with the field and the rule named. */
static void test_default_cpuset_rules(void **state)
{
	(void)state;
	default_bad(POLICY, "",
		    "state.default_cpuset: default cpuset cannot be empty");
	default_bad(POLICY, "0,7", /* reserved 4 is missing */
		    "state.default_cpuset: not all reserved cpus: \"0,4\" are "
		    "present in defaultCpuSet: \"0,7\" (rule: the reserved "
		    "CPUs are inside the default set)");
	default_bad(POLICY, "0,3-4,7",
		    "state.default_cpuset: pod: db, container: b cpuset: \"3\" "
		    "overlaps with default cpuset \"0,3-4,7\" (rule: the "
		    "default set and the assignments are disjoint)");
	default_bad(POLICY, "0,4", /* 7 is nowhere */
		    "state.default_cpuset: current set of available CPUs "
		    "\"0-7\" doesn't match with CPUs in state \"0-6\" (rule: "
		    "the default set and the assignments together are all "
		    "CPUs)");
	/* only the reserved CPUs in the default set are named, as the
	 * kubelet's validateState names them (reserved are 0 and 4) */
	default_bad(STRICT, "0,7",
		    "state.default_cpuset: some of strictly reserved cpus: "
		    "\"0\" are present in defaultCpuSet: \"0,7\"");
	default_bad(STRICT, "0,4,7",
		    "state.default_cpuset: some of strictly reserved cpus: "
		    "\"0,4\" are present in defaultCpuSet: \"0,4,7\"");
	/* strict: all CPUs are the non-reserved ones */
	default_bad(STRICT, "", "default cpuset cannot be empty");
	default_bad(POLICY, "0-x", "state.default_cpuset: invalid cpu list");
	plan_bad("{\"kind\":\"admit\",\"topology\":" TOPO ",\"policy\":" POLICY
		 ",\"state\":{\"workloads\":[],\"default_cpuset\":3},"
		 "\"workload\":" GUAR1 "}",
		 "state.default_cpuset");
}

/* A consistent default_cpuset is accepted, and each result's state carries
 * one that the next request accepts. */
static void test_default_cpuset_chain(void **state)
{
	json_t *res, *st;
	char req[8192];
	char *sj;
	(void)state;

	res = plan_ok("{\"kind\":\"admit\",\"topology\":" TOPO
		      ",\"policy\":" POLICY ",\"state\":{\"workloads\":[" WEB
		      "],\"default_cpuset\":\"0,2-4,6-7\"},\"workload\":" GUAR1
		      "}");
	assert_true(json_is_true(json_object_get(res, "admitted")));
	st = json_object_get(res, "state");
	/* web 1,5; n takes one CPU: the default set is the rest */
	assert_string_equal(sget(st, "default_cpuset"),
			    sget(json_object_get(res, "pools"), "shared"));
	assert_int_equal(strlen(sget(st, "default_cpuset")) > 0, 1);
	sj = json_dumps(st, JSON_COMPACT);
	snprintf(req, sizeof(req),
		 "{\"kind\":\"release\",\"topology\":" TOPO ",\"policy\":" POLICY
		 ",\"state\":%s,\"workload\":\"web\"}",
		 sj);
	free(sj);
	json_decref(res);
	res = plan_ok(req);
	assert_true(json_is_true(json_object_get(res, "released")));
	assert_string_equal(sget(res, "cpus"), "1,5");
	json_decref(res);
}

static void load(struct np_node_state *st, struct np_topology **t,
		 const char *statej)
{
	json_error_t jerr;
	json_t *tj = json_loads(TOPO, 0, &jerr), *pj = json_loads(POLICY, 0, &jerr),
	       *sj = json_loads(statej, 0, &jerr);
	struct np_node_policy p;
	char err[512];

	assert_non_null(sj);
	assert_int_equal(np_topology_from_json(t, tj, "topology", err,
					       sizeof(err)),
			 0);
	assert_int_equal(np_policy_from_json(&p, pj, "policy", err, sizeof(err)),
			 0);
	assert_int_equal(np_state_init(st, *t, &p, err, sizeof(err)), 0);
	if (np_state_load_json(st, sj, "state", err, sizeof(err)))
		fail_msg("load: %s", err);
	json_decref(tj);
	json_decref(pj);
	json_decref(sj);
}

/* np_release_container: the container's CPUs and memory leave the cache,
 * the sibling keeps its own; the last container takes the workload. */
static void test_release_container(void **state)
{
	struct np_topology *t = NULL;
	struct np_node_state st;
	np_cpuset want;
	struct np_pools p;
	int i;
	(void)state;

	load(&st, &t, "{\"workloads\":[" WEB "," DB "]}");
	assert_int_equal(st.cache.mem[1], 48u << 20);
	i = np_state_find(&st, "db");
	assert_int_equal(np_release_container(&st, i, 5), -ENOENT);
	assert_int_equal(np_release_container(&st, 7, 0), -ENOENT);
	assert_int_equal(np_release_container(&st, i, 0), 0); /* a */
	i = np_state_find(&st, "db");
	assert_true(i >= 0);
	assert_int_equal(st.w[i]->ncontainers, 1);
	assert_int_equal(st.w[i]->req.ncontainers, 1);
	assert_string_equal(st.w[i]->req.c[0].name, "b");
	assert_int_equal(st.cache.mem[1], 16u << 20);
	np_cpuset_parse(&want, "1,3,5", NULL, 0);
	assert_true(np_cpuset_equal(&st.cache.excl, &want));
	np_state_pools(&st, &p);
	np_cpuset_parse(&want, "0,2,4,6-7", NULL, 0);
	assert_true(np_cpuset_equal(&p.shared, &want));
	/* the last container: the workload goes */
	assert_int_equal(np_release_container(&st, i, 0), 0);
	assert_int_equal(st.nworkloads, 1);
	assert_int_equal(np_state_find(&st, "db"), -1);
	assert_int_equal(st.cache.mem[1], 0);
	np_state_free(&st);
	np_topology_free(t);
}

/* Release requests: the answer for unknown names, and malformed ones. */
static void test_release_requests(void **state)
{
	json_t *res;
	(void)state;

	res = plan_ok("{\"kind\":\"release\",\"topology\":" TOPO
		      ",\"policy\":" POLICY ",\"state\":{\"workloads\":[" DB
		      "]},\"workload\":\"db\",\"container\":\"b\"}");
	assert_true(json_is_true(json_object_get(res, "released")));
	assert_false(json_is_true(json_object_get(res, "workload_released")));
	assert_string_equal(sget(res, "container"), "b");
	assert_string_equal(sget(res, "cpus"), "3");
	assert_string_equal(sget(json_object_get(res, "pools"), "shared"),
			    "0-1,3-5,7");
	/* the state's spec lost the container too */
	assert_int_equal(
	    json_array_size(json_object_get(
		json_object_get(json_array_get(
				    json_object_get(json_object_get(res, "state"),
						    "workloads"),
				    0),
				"spec"),
		"containers")),
	    1);
	json_decref(res);
	res = plan_ok("{\"kind\":\"release\",\"topology\":" TOPO
		      ",\"policy\":" POLICY ",\"workload\":\"ghost\"}");
	assert_false(json_is_true(json_object_get(res, "released")));
	assert_non_null(strstr(sget(res, "note"), "\"ghost\" is not admitted"));
	assert_null(json_object_get(res, "error"));
	json_decref(res);
	plan_bad("{\"kind\":\"release\",\"topology\":" TOPO ",\"policy\":" POLICY
		 "}",
		 "workload: required field is missing");
	plan_bad("{\"kind\":\"release\",\"topology\":" TOPO ",\"policy\":" POLICY
		 ",\"workload\":\"\"}",
		 "workload: expected a workload name");
	plan_bad("{\"kind\":\"release\",\"topology\":" TOPO ",\"policy\":" POLICY
		 ",\"workload\":\"w\",\"container\":3}",
		 "container: expected a string");
	plan_bad("{\"kind\":\"release\",\"topology\":" TOPO ",\"policy\":" POLICY
		 ",\"workload\":\"w\",\"containr\":\"c\"}",
		 "containr");
	plan_bad("{\"kind\":\"release\",\"policy\":" POLICY
		 ",\"workload\":\"w\"}",
		 "topology");
}

/* Admitting the same workload again changes nothing; another request is a
 * resize, refused. */
static void test_admit_again(void **state)
{
	json_t *res, *in;
	json_error_t jerr;
	char *a, *b;
	(void)state;

	res = plan_ok("{\"kind\":\"admit\",\"topology\":" TOPO
		      ",\"policy\":" POLICY ",\"state\":{\"workloads\":[" WEB
		      "]},\"workload\":{\"name\":\"web\",\"qos\":\"LSE\","
		      "\"containers\":[{\"name\":\"main\",\"cpu\":\"2\","
		      "\"memory\":\"64Mi\"}]}}");
	assert_true(json_is_true(json_object_get(res, "again")));
	assert_string_equal(sget(res, "cpuset"), "1,5");
	/* the state is the one given, nothing charged twice */
	in = json_loads("{\"workloads\":[" WEB "]}", 0, &jerr);
	{
		json_t *w = json_array_get(
		    json_object_get(json_object_get(res, "state"), "workloads"),
		    0);
		json_t *m = json_object_get(
		    json_array_get(json_object_get(w, "containers"), 0),
		    "memory");
		a = json_dumps(m, JSON_COMPACT | JSON_SORT_KEYS);
		b = json_dumps(
		    json_object_get(
			json_array_get(
			    json_object_get(
				json_array_get(json_object_get(in, "workloads"),
					       0),
				"containers"),
			    0),
			"memory"),
		    JSON_COMPACT | JSON_SORT_KEYS);
		assert_string_equal(a, b);
		free(a);
		free(b);
		assert_int_equal(json_array_size(json_object_get(
				     json_object_get(res, "state"), "workloads")),
				 1);
	}
	json_decref(in);
	json_decref(res);
	/* the same CPUs, other memory: another request */
	res = plan_ok("{\"kind\":\"admit\",\"topology\":" TOPO
		      ",\"policy\":" POLICY ",\"state\":{\"workloads\":[" WEB
		      "]},\"workload\":{\"name\":\"web\",\"qos\":\"LSE\","
		      "\"containers\":[{\"name\":\"main\",\"cpu\":\"2\","
		      "\"memory\":\"128Mi\"}]}}");
	assert_non_null(strstr(sget(res, "error"), "would be a resize"));
	json_decref(res);
}

/* reserved_cpus 0: the planner takes it (the kubelet's static policy
 * does), np_state_init (numaplaced) refuses it with today's message, and
 * an absent reserved_cpus is refused by both. */
static void test_reserved_zero(void **state)
{
	struct np_topology *t = NULL;
	struct np_node_policy p;
	struct np_node_state st;
	json_error_t jerr;
	json_t *tj = json_loads(TOPO, 0, &jerr);
	json_t *zero = json_loads("{\"cpu_policy\":\"static\","
				  "\"reserved_cpus\":0}",
				  0, &jerr);
	json_t *absent = json_loads("{\"cpu_policy\":\"static\"}", 0, &jerr);
	char err[512] = "";
	(void)state;

	assert_int_equal(np_topology_from_json(&t, tj, "topology", err,
					       sizeof(err)),
			 0);
	assert_int_equal(np_policy_from_json(&p, zero, "policy", err,
					     sizeof(err)),
			 0);
	assert_true(p.reserved_zero);
	assert_int_equal(np_state_init(&st, t, &p, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "policy.reserved_cpus: the static CPU policy "
				 "needs at least one reserved CPU (a list or a "
				 "count)");
	assert_int_equal(np_state_init_flags(&st, t, &p,
					     NP_STATE_ALLOW_NO_RESERVED, err,
					     sizeof(err)),
			 0);
	assert_true(np_cpuset_empty(&st.reserved));
	np_state_free(&st);
	assert_int_equal(np_policy_from_json(&p, absent, "policy", err,
					     sizeof(err)),
			 0);
	assert_false(p.reserved_zero);
	assert_int_equal(np_state_init_flags(&st, t, &p,
					     NP_STATE_ALLOW_NO_RESERVED, err,
					     sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "needs at least one reserved CPU"));
	plan_bad("{\"kind\":\"admit\",\"topology\":" TOPO
		 ",\"policy\":{\"cpu_policy\":\"static\"},\"workload\":" GUAR1
		 "}",
		 "policy.reserved_cpus: the static CPU policy needs at least "
		 "one reserved CPU");
	json_decref(tj);
	json_decref(zero);
	json_decref(absent);
	np_topology_free(t);
}

/* error_kind is the planner's: np_decision_to_json (what numaplaced
 * answers) is as before. */
static void test_error_kind(void **state)
{
	struct np_topology *t = NULL;
	struct np_node_state st;
	struct np_workload_req w;
	struct np_decision d;
	json_error_t jerr;
	json_t *wj = json_loads("{\"name\":\"n\",\"qos\":\"Guaranteed\","
				"\"containers\":[{\"name\":\"m\",\"cpu\":\"3\"}]}",
				0, &jerr),
	       *dj;
	char err[512];
	(void)state;

	load(&st, &t, "{\"workloads\":[" WEB "," DB "]}");
	assert_int_equal(np_workload_req_from_json(&w, wj, "workload", err,
						   sizeof(err)),
			 0);
	/* only CPU 7 is free outside the reserved 0,4: no node holds 3 */
	assert_int_equal(np_admit(&st, &w, &d, err, sizeof(err)), 0);
	assert_false(d.admitted);
	assert_string_equal(d.error_kind, "TopologyAffinityError");
	dj = np_decision_to_json(&st, &d);
	/* the decision carries it: the planner's result and numaplaced's
	 * socket answer alike */
	assert_string_equal(json_string_value(json_object_get(dj, "error_kind")),
			    "TopologyAffinityError");
	json_decref(dj);
	np_workload_req_free(&w);
	json_decref(wj);
	np_state_free(&st);
	np_topology_free(t);
}

/* A pod whose init container holds 2,6 and 3,7 and whose app container
 * reuses 2,6: loads. The same sets on two app containers: refused. */
#define POD_SPEC(init_key)                                                     \
	"{\"spec\":{\"name\":\"pod\",\"qos\":\"Guaranteed\","       \
	"\"" init_key "\":[{\"name\":\"i\",\"cpu\":\"4\"}"             \
	"],\"containers\":[{\"name\":\"m\",\"cpu\":\"2\"}]},"         \
	"\"class\":\"LSE\",\"containers\":["                             \
	"{\"name\":\"i\",\"exclusive\":true,\"cpus\":\"2-3,6-7\","    \
	"\"mems\":\"1\"},"                                                 \
	"{\"name\":\"m\",\"exclusive\":true,\"cpus\":\"2,6\","        \
	"\"mems\":\"1\"}]}"

#define TWO_APPS                                                               \
	"{\"spec\":{\"name\":\"pod\",\"qos\":\"Guaranteed\","       \
	"\"containers\":[{\"name\":\"i\",\"cpu\":\"4\"},"               \
	"{\"name\":\"m\",\"cpu\":\"2\"}]},"                               \
	"\"class\":\"LSE\",\"containers\":["                             \
	"{\"name\":\"i\",\"exclusive\":true,\"cpus\":\"2-3,6-7\","    \
	"\"mems\":\"1\"},"                                                 \
	"{\"name\":\"m\",\"exclusive\":true,\"cpus\":\"2,6\","        \
	"\"mems\":\"1\"}]}"

static void test_init_containers_state(void **state)
{
	json_t *res;
	(void)state;

	/* reused CPUs load; the next admission sees all four taken */
	res = plan_ok("{\"kind\":\"admit\",\"topology\":" TOPO
		      ",\"policy\":" POLICY ",\"state\":{\"workloads\":["
		      POD_SPEC("init_containers") "]},\"workload\":" GUAR1 "}");
	assert_true(json_is_true(json_object_get(res, "admitted")));
	/* 0,4 reserved, 2-3,6-7 the pod's: 1 or 5 */
	assert_true(!strcmp(sget(res, "cpuset"), "1") ||
		    !strcmp(sget(res, "cpuset"), "5"));
	json_decref(res);
	/* two app containers may not share CPUs */
	plan_bad("{\"kind\":\"admit\",\"topology\":" TOPO
		 ",\"policy\":" POLICY ",\"state\":{\"workloads\":["
		 TWO_APPS "]},\"workload\":" GUAR1 "}",
		 "overlaps another exclusive allocation");
}

/* Pod-level resources: a has 2,6 of its own, s and t share the pod's rest
 * 3,7. The state loads; the next admission sees the 4 CPUs taken; s and t
 * may share, a and s may not. */
#define POD2(s_cpus)                                                           \
	"{\"spec\":{\"name\":\"pod\",\"qos\":\"Guaranteed\","       \
	"\"resources\":{\"cpu\":\"4\"},\"containers\":["                  \
	"{\"name\":\"a\",\"cpu\":\"2\"},{\"name\":\"s\"},"              \
	"{\"name\":\"t\"}]},\"class\":\"LSE\",\"containers\":["          \
	"{\"name\":\"a\",\"exclusive\":true,\"cpus\":\"2,6\","        \
	"\"mems\":\"1\"},"                                                 \
	"{\"name\":\"s\",\"exclusive\":true,\"pod_shared\":true,"      \
	"\"cpus\":\"" s_cpus "\",\"mems\":\"1\"},"                       \
	"{\"name\":\"t\",\"exclusive\":true,\"pod_shared\":true,"      \
	"\"cpus\":\"3,7\",\"mems\":\"1\"}]}"

static void test_pod_resources_state(void **state)
{
	json_t *res;
	(void)state;

	res = plan_ok("{\"kind\":\"admit\",\"topology\":" TOPO
		      ",\"policy\":" POLICY ",\"state\":{\"workloads\":["
		      POD2("3,7") "]},\"workload\":" GUAR1 "}");
	assert_true(json_is_true(json_object_get(res, "admitted")));
	assert_true(!strcmp(sget(res, "cpuset"), "1") ||
		    !strcmp(sget(res, "cpuset"), "5"));
	json_decref(res);
	plan_bad("{\"kind\":\"admit\",\"topology\":" TOPO
		 ",\"policy\":" POLICY ",\"state\":{\"workloads\":["
		 POD2("2-3,6-7") "]},\"workload\":" GUAR1 "}",
		 "overlaps another exclusive allocation");
	/* releasing s frees nothing: t still holds the pod's rest */
	res = plan_ok("{\"kind\":\"release\",\"topology\":" TOPO
		      ",\"policy\":" POLICY ",\"state\":{\"workloads\":["
		      POD2("3,7") "]},\"workload\":\"pod\",\"container\":"
		      "\"s\"}");
	assert_string_equal(sget(res, "cpus"), "");
	json_decref(res);
}

/* A pod of budget 4 whose only container a holds 2,6: 3,7 are the pod's
 * (pod_rest REST). */
#define PODREST(rest)                                                          \
	"{\"spec\":{\"name\":\"pod\",\"qos\":\"Guaranteed\","       \
	"\"resources\":{\"cpu\":\"4\"},\"containers\":["                  \
	"{\"name\":\"a\",\"cpu\":\"2\"}]},\"class\":\"LSE\","          \
	"\"pod_rest\":\"" rest "\",\"containers\":["                       \
	"{\"name\":\"a\",\"exclusive\":true,\"cpus\":\"2,6\","        \
	"\"mems\":\"1\"}]}"
#define GUAR3                                                                  \
	"{\"name\":\"n\",\"qos\":\"Guaranteed\",\"containers\":"             \
	"[{\"name\":\"m\",\"cpu\":\"3\"}]}"

/* A pod's rest (every container with its own request, the budget
 * larger) is the pod's: saved, loaded back, out of the shared pool and
 * out of reach of the next admission; checked when loaded. */
static void test_pod_rest_state(void **state)
{
	json_t *res, *st, *w;
	char req[8192];
	char *sj;
	(void)state;

	/* the result's state carries it; the next request accepts it */
	res = plan_ok("{\"kind\":\"admit\",\"topology\":" TOPO
		      ",\"policy\":" POLICY ",\"workload\":{\"name\":\"pod\","
		      "\"qos\":\"Guaranteed\",\"resources\":{\"cpu\":\"4\"},"
		      "\"containers\":[{\"name\":\"a\",\"cpu\":\"2\"}]}}");
	assert_true(json_is_true(json_object_get(res, "admitted")));
	assert_string_equal(sget(res, "cpuset"), "2-3,6-7");
	assert_string_equal(sget(res, "pod_rest"), "3,7");
	st = json_object_get(res, "state");
	w = json_array_get(json_object_get(st, "workloads"), 0);
	assert_string_equal(json_string_value(json_object_get(w, "pod_rest")),
			    "3,7");
	sj = json_dumps(st, JSON_COMPACT);
	snprintf(req, sizeof(req),
		 "{\"kind\":\"admit\",\"topology\":" TOPO ",\"policy\":"
		 POLICY ",\"state\":%s,\"workload\":" GUAR3 "}",
		 sj);
	free(sj);
	json_decref(res);
	/* node 0 has 1,5 free only: 3 CPUs do not fit, the rest is not
	 * taken */
	res = plan_ok(req);
	assert_false(json_is_true(json_object_get(res, "admitted")));
	assert_string_equal(sget(json_object_get(res, "pools"), "shared"),
			    "0-1,4-5");
	json_decref(res);
	/* loaded from a state, no alignment: 1,5 are all that is free, 3
	 * CPUs do not fit (the rest would make 4) */
	res = plan_ok("{\"kind\":\"admit\",\"topology\":" TOPO
		      ",\"policy\":{\"cpu_policy\":\"static\","
		      "\"reserved_cpus\":\"0,4\"},\"state\":{\"workloads\":["
		      PODREST("3,7") "]},\"workload\":" GUAR3 "}");
	assert_false(json_is_true(json_object_get(res, "admitted")));
	assert_string_equal(sget(json_object_get(res, "pools"), "shared"),
			    "0-1,4-5");
	json_decref(res);
	/* the kubelet's validateState: the rest is assigned */
	json_decref(plan_ok("{\"kind\":\"admit\",\"topology\":" TOPO
			    ",\"policy\":" POLICY ",\"state\":{\"workloads\":["
			    PODREST("3,7") "],\"default_cpuset\":\"0-1,4-5\"},"
			    "\"workload\":" GUAR1 "}"));
	plan_bad("{\"kind\":\"admit\",\"topology\":" TOPO
		 ",\"policy\":" POLICY ",\"state\":{\"workloads\":["
		 PODREST("3,7") "],\"default_cpuset\":\"0-1,3-5\"},"
		 "\"workload\":" GUAR1 "}",
		 "pod: pod cpuset: \"3,7\" overlaps with default cpuset");
	/* refused: another container's CPUs, too many, reserved ones */
	plan_bad("{\"kind\":\"admit\",\"topology\":" TOPO
		 ",\"policy\":" POLICY ",\"state\":{\"workloads\":["
		 PODREST("6-7") "]},\"workload\":" GUAR1 "}",
		 "state.workloads[0].pod_rest: overlaps another exclusive "
		 "allocation");
	plan_bad("{\"kind\":\"admit\",\"topology\":" TOPO
		 ",\"policy\":" POLICY ",\"state\":{\"workloads\":["
		 PODREST("1,3,7") "]},\"workload\":" GUAR1 "}",
		 "state.workloads[0].pod_rest: holds 3 CPU(s), not the pod's "
		 "resources.cpu less its containers' own");
	plan_bad("{\"kind\":\"admit\",\"topology\":" TOPO
		 ",\"policy\":" POLICY ",\"state\":{\"workloads\":["
		 PODREST("3-4") "]},\"workload\":" GUAR1 "}",
		 "state.workloads[0].pod_rest: includes reserved CPUs");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plan_files),
		cmocka_unit_test(test_default_cpuset_rules),
		cmocka_unit_test(test_default_cpuset_chain),
		cmocka_unit_test(test_release_container),
		cmocka_unit_test(test_release_requests),
		cmocka_unit_test(test_admit_again),
		cmocka_unit_test(test_reserved_zero),
		cmocka_unit_test(test_error_kind),
		cmocka_unit_test(test_init_containers_state),
		cmocka_unit_test(test_pod_resources_state),
		cmocka_unit_test(test_pod_rest_state),
	};
	return cmocka_run_group_tests_name("plan_kubelet", tests, NULL, NULL);
}
