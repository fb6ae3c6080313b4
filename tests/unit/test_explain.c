// SPDX-License-Identifier: Apache-2.0
/*
 * numaplace explain: the trace says what happened. For the kubelet and
 * Koordinator take vectors (tests/data/vectors/take.json) the CPUs the
 * traced steps took are the CPUs the take returned, and tracing changes
 * nothing; for the admission cases (tests/data/plan/admit.json) the CPUs
 * the explanation says each container got are its allocation, and every
 * skipped CPU's reason holds. Concrete cases check exact sentences and
 * JSON fields.
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

#include "fake_daemon.h"
#include "numaplace/admit.h"
#include "numaplace/explain.h"
#include "numaplace/plan.h"
#include "numaplace/take.h"
#include "numaplace/topology_json.h"

static json_t *load(const char *path)
{
	json_error_t jerr;
	json_t *j = json_load_file(path, 0, &jerr);

	if (!j)
		fail_msg("%s: %s (line %d)", path, jerr.text, jerr.line);
	return j;
}

static const char *str(const json_t *o, const char *k, const char *def)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? s : def;
}

/* ---- take vectors ------------------------------------------------------- */

/* The request of a take vector; false when explain does not trace it
 * step by step (resize, distribution, uncore partials, preferred CPUs). */
static bool take_req(const json_t *c, struct np_take_req *q, bool *full)
{
	const char *strategy = str(c, "strategy", "packed");

	memset(q, 0, sizeof(*q));
	if (json_object_get(c, "current") ||
	    json_is_true(json_object_get(c, "expect_error")))
		return false;
	q->count = (int)json_integer_value(json_object_get(c, "count"));
	assert_int_equal(np_cpuset_parse(&q->available, str(c, "available", ""),
					 NULL, 0),
			 0);
	q->koord = json_object_get(c, "bind_policy") ||
		   json_object_get(c, "numa_strategy") ||
		   json_object_get(c, "exclusive_policy");
	if (q->koord) {
		assert_int_equal(np_bind_policy_parse(str(c, "bind_policy", ""),
						      &q->bind_policy),
				 0);
		assert_int_equal(np_numa_strategy_parse(
					 str(c, "numa_strategy", "MostAllocated"),
					 &q->numa_strategy),
				 0);
		q->required = json_is_true(json_object_get(c, "required"));
		*full = !q->required && !json_object_get(c, "preferred_cpus") &&
			!json_object_get(c, "exclusive_marks");
		return true;
	}
	q->strategy = strcmp(strategy, "spread") ? NP_TAKE_PACKED
						 : NP_TAKE_SPREAD;
	q->group_size = (int)json_integer_value(json_object_get(c, "group_size"));
	*full = !json_is_true(json_object_get(c, "distribute_across_numa")) &&
		!json_is_true(json_object_get(c, "prefer_uncore"));
	q->distribute_across_numa =
		json_is_true(json_object_get(c, "distribute_across_numa"));
	q->prefer_uncore = json_is_true(json_object_get(c, "prefer_uncore"));
	return true;
}

/* The CPUs the trace's steps say they took. */
static void traced(const struct np_explain *ex, np_cpuset *out)
{
	np_cpuset_zero(out);
	for (int i = 0; i < ex->n; i++)
		if (ex->ev[i].kind == NP_EX_ORDER) {
			assert_false(np_cpuset_intersects(out, &ex->ev[i].cpus));
			np_cpuset_or(out, out, &ex->ev[i].cpus);
		}
}

static void test_take_vectors(void **state)
{
	json_t *all = load("tests/data/vectors/take.json"), *c;
	int n = 0, exact = 0;
	size_t i;

	(void)state;
	json_array_foreach(all, i, c)
	{
		struct np_topology *t = NULL;
		struct np_take_req q;
		struct np_explain ex;
		np_cpuset plain, out, said;
		char err[512];
		bool full = false;

		if (!take_req(c, &q, &full))
			continue;
		assert_int_equal(np_topology_from_json(
					 &t, json_object_get(c, "topology"),
					 "topology", err, sizeof(err)),
				 0);
		q.topo = t;
		np_explain_init(&ex);
		if (np_take(&q, &plain, err, sizeof(err)) == 0) {
			q.trace = &ex;
			assert_int_equal(np_take(&q, &out, err, sizeof(err)), 0);
			assert_true(np_cpuset_equal(&plain, &out));
			traced(&ex, &said);
			assert_true(np_cpuset_subset(&said, &out));
			if (full && !np_cpuset_equal(&said, &out))
				fail_msg("%s: the trace says other CPUs",
					 str(c, "id", "?"));
			exact += np_cpuset_equal(&said, &out);
			n++;
		}
		np_explain_free(&ex);
		np_topology_free(t);
	}
	print_message("take vectors: %d traced, %d step by step\n", n, exact);
	assert_true(n > 50 && exact > 30);
	json_decref(all);
}

/* ---- admission cases ----------------------------------------------------- */

/* Every CPU not taken by container ci is skipped once, for a reason that
 * holds in st (before the admission: rejected, or the state minus w). */
static void check_skips(const struct np_node_state *st,
			const struct np_explain *ex, int ci,
			const np_cpuset *got, const np_nodemask hint)
{
	np_cpuset seen = *got;

	for (int i = 0; i < ex->n; i++) {
		const struct np_ex_event *e = &ex->ev[i];
		if (e->kind != NP_EX_SKIP || e->container != ci)
			continue;
		assert_false(np_cpuset_intersects(&seen, &e->cpus));
		np_cpuset_or(&seen, &seen, &e->cpus);
		NP_CPUSET_FOREACH(cpu, &e->cpus)
		{
			int k = np_state_find(st, e->name);
			int node = st->topo->cpu[cpu].numa;
			switch (e->code) {
			case NP_EXS_RESERVED:
				assert_true(np_cpuset_test(&st->reserved, cpu));
				break;
			case NP_EXS_HELD:
				assert_true(k >= 0);
				np_cpuset held;
				np_workload_exclusive_cpus(st->w[k], &held);
				assert_true(np_cpuset_test(&held, cpu));
				break;
			case NP_EXS_OUTSIDE_HINT:
				assert_false(np_nodemask_test(
					hint, st->topo->numa[node].u.id));
				/* fall through: free */
			case NP_EXS_LATER:
				assert_false(np_cpuset_test(&st->reserved, cpu));
				assert_false(np_cpuset_test(&st->cache.excl, cpu));
				break;
			default:
				break;
			}
		}
	}
	assert_true(np_cpuset_equal(&seen, &st->topo->online));
}

/* A plan request's topology, policy, state and workload (fails the test
 * on error). */
static void load_case(const json_t *c, struct np_topology **t,
		      struct np_node_state *st, struct np_workload_req *w)
{
	struct np_node_policy pol;
	char err[512];

	assert_int_equal(np_topology_from_json(t, json_object_get(c, "topology"),
					       "topology", err, sizeof(err)),
			 0);
	assert_int_equal(np_policy_from_json(&pol, json_object_get(c, "policy"),
					     "policy", err, sizeof(err)),
			 0);
	assert_int_equal(np_state_init(st, *t, &pol, err, sizeof(err)), 0);
	assert_int_equal(np_state_load_json(st, json_object_get(c, "state"),
					    "state", err, sizeof(err)),
			 0);
	assert_int_equal(np_workload_req_from_json(w, json_object_get(c, "workload"),
						   "workload", err, sizeof(err)),
			 0);
}

/* Explain plan request c; check it against the planner's own answer. */
static void check_admit_case(const json_t *c)
{
	struct np_topology *t = NULL;
	struct np_node_state st = {0}, before = {0};
	struct np_workload_req w = {0};
	struct np_decision d;
	struct np_explain ex;
	json_t *planned = NULL;
	char err[512];

	assert_int_equal(np_plan(c, &planned, err, sizeof(err)), 0);
	load_case(c, &t, &st, &w);
	assert_int_equal(np_state_copy(&before, &st), 0);
	np_explain_init(&ex);
	assert_int_equal(np_admit_explain(&st, &w, &d, &ex, err, sizeof(err)), 0);
	assert_int_equal(d.admitted,
			 json_is_true(json_object_get(planned, "admitted")));
	if (d.admitted) {
		np_cpuset all, said, want;
		np_cpuset_zero(&all);
		for (int i = 0; i < d.alloc->ncontainers; i++) {
			const struct np_container_alloc *a = &d.alloc->c[i];
			assert_true(np_explain_result(&ex, i, &said));
			assert_true(np_cpuset_equal(&said, a->cpus));
			np_cpuset_or(&all, &all, &said);
			if (a->exclusive)
				check_skips(&before, &ex, i, a->cpus,
					    a->hint.any ? t->numa_mask
							: a->hint.mask);
		}
		assert_int_equal(np_cpuset_parse(&want, str(planned, "cpuset", ""),
						 NULL, 0),
				 0);
		if (!np_cpuset_empty(&all))
			assert_true(np_cpuset_equal(&all, &want));
	} else {
		assert_string_equal(ex.reason, d.reason);
	}
	np_explain_free(&ex);
	np_workload_req_free(&w);
	np_state_free(&before);
	np_state_free(&st);
	np_topology_free(t);
	json_decref(planned);
}

static void test_admit_cases(void **state)
{
	json_t *all = load("tests/data/plan/admit.json"), *c;
	size_t i;

	(void)state;
	json_array_foreach(all, i, c) check_admit_case(c);
	print_message("admit cases: %zu explained\n", json_array_size(all));
	json_decref(all);
}

/* ---- concrete cases ------------------------------------------------------ */

/* A plan request on vm-2node.json with policy pol and workloads. */
static json_t *request(const char *pol, const char *state, const char *wl)
{
	json_t *topo = load("tests/data/topology/vm-2node.json");
	json_error_t jerr;
	json_t *r = json_pack("{s:s,s:o,s:o,s:o}", "kind", "admit", "topology",
			      topo, "policy", json_loads(pol, 0, &jerr),
			      "workload", json_loads(wl, 0, &jerr));

	assert_non_null(r);
	if (state)
		json_object_set_new(r, "state", json_loads(state, 0, &jerr));
	return r;
}

static void assert_sentences(const json_t *x, const char *const *want, int n)
{
	const json_t *s = json_object_get(x, "sentences");

	for (int i = 0; i < n; i++) {
		const char *got = json_string_value(json_array_get(s, (size_t)i));
		if (!got || strcmp(got, want[i]))
			fail_msg("sentence %d: got \"%s\", want \"%s\"", i,
				 got ? got : "(none)", want[i]);
	}
	assert_int_equal(json_array_size(s), n);
}

#define POLICY_2NODE(tm)                                                       \
	"{\"cpu_policy\": \"static\", \"reserved_cpus\": \"0,4\", "            \
	"\"topology_policy\": \"" tm "\"}"

static void test_lse_full_pcpus(void **state)
{
	static const char *const want[] = {
		"container main asks for 2 exclusive CPUs.",
		"cpu hints (request 2): {0-1} not preferred, {1} preferred, {0} "
		"preferred (node 0 2 free of 4, node 1 4 free of 4).",
		"merged hint: {0} preferred (policy restricted): {0} chosen over "
		"{1}, equally narrow and preferred: lower mask.",
		"take: Koordinator FullPCPUs, MostAllocated, exclusive None: 2 "
		"CPUs out of 1,5.",
		"one NUMA node holds them: NUMA node 0 (2 candidate CPUs): CPUs "
		"1,5.",
		"skipped 0,4: reserved.",
		"skipped 2-3,6-7: free, but outside the hint's NUMA nodes.",
		"container main got CPUs 1,5, memory nodes {0} (hint {0} "
		"preferred).",
	};
	json_t *req = request(POLICY_2NODE("restricted"), NULL,
			      "{\"name\": \"web\", \"qos\": \"LSE\", "
			      "\"resourceSpec\": {\"preferredCPUBindPolicy\": "
			      "\"FullPCPUs\"}, \"containers\": [{\"name\": "
			      "\"main\", \"cpu\": \"2\"}]}");
	json_t *x = NULL;
	char err[256];

	(void)state;
	assert_int_equal(np_explain_plan(req, &x, err, sizeof(err)), 0);
	assert_string_equal(str(x, "cpuset", ""), "1,5");
	assert_sentences(x, want, (int)(sizeof(want) / sizeof(want[0])));
	json_decref(x);
	json_decref(req);
}

/* The first event of kind k in x's events. */
static const json_t *event(const json_t *x, const char *k)
{
	const json_t *e;
	size_t i;

	json_array_foreach(json_object_get(x, "events"), i, e) if (
		!strcmp(str(e, "kind", ""), k)) return e;
	fail_msg("no %s event", k);
	return NULL;
}

static void test_restricted_node0_full(void **state)
{
	json_t *req = request(POLICY_2NODE("restricted"), NULL,
			      "{\"name\": \"web\", \"qos\": \"LSE\", "
			      "\"containers\": [{\"name\": \"main\", \"cpu\": "
			      "\"2\"}]}");
	struct np_topology *t = NULL;
	struct np_node_state st = {0};
	struct np_workload_req w = {0};
	struct np_decision d;
	const json_t *m, *p, *sk;
	json_t *x = NULL;
	char err[256];

	(void)state;
	/* "a" fills node 0; then "web" */
	load_case(req, &t, &st, &w);
	snprintf(w.name, sizeof(w.name), "a");
	assert_int_equal(np_admit(&st, &w, &d, err, sizeof(err)), 0);
	assert_true(d.admitted);
	snprintf(w.name, sizeof(w.name), "web");
	assert_int_equal(np_admit(&st, &w, &d, err, sizeof(err)), 0);
	assert_true(d.admitted);

	assert_int_equal(np_explain_workload(&st, "nope", &x, err, sizeof(err)),
			 -ENOENT);
	assert_string_equal(err, "no workload named nope");
	assert_int_equal(np_explain_workload(&st, "web", &x, err, sizeof(err)),
			 0);
	assert_string_equal(str(x, "cpuset", ""), "2,6");
	assert_string_equal(str(x, "held", ""), "2,6");
	assert_true(json_is_true(json_object_get(x, "same")));
	m = event(x, "merge");
	assert_string_equal(str(m, "why", ""), "only");
	assert_int_equal(json_integer_value(json_array_get(
				 json_object_get(json_object_get(m, "hint"), "mask"), 0)),
			 1);
	assert_int_equal(json_array_size(json_object_get(
				 json_object_get(m, "hint"), "mask")),
			 1);
	p = event(x, "provider");
	assert_int_equal(json_integer_value(json_object_get(
				 json_array_get(json_object_get(p, "nodes"), 0), "free")),
			 0);
	assert_string_equal(json_string_value(json_array_get(
				    json_object_get(x, "sentences"), 1)),
			    "cpu hints (request 2): {0-1} not preferred, {1} "
			    "preferred (node 0 0 free of 4, node 1 4 free of 4).");
	sk = event(x, "skip");
	assert_string_equal(str(sk, "why", ""), "reserved");
	{
		const json_t *e;
		size_t i;
		bool held = false;
		json_array_foreach(json_object_get(x, "events"), i, e) if (
			!strcmp(str(e, "kind", ""), "skip") &&
			!strcmp(str(e, "why", ""), "held"))
		{
			assert_string_equal(str(e, "holder", ""), "a");
			assert_string_equal(str(e, "cpus", ""), "1,5");
			held = true;
		}
		assert_true(held);
	}
	json_decref(x);
	np_workload_req_free(&w);
	np_state_free(&st);
	np_topology_free(t);
	json_decref(req);
}

static void test_koord_spread(void **state)
{
	static const char *const want[] = {
		"container main asks for 2 exclusive CPUs.",
		"take: Koordinator SpreadByPCPUs, MostAllocated, exclusive None: "
		"2 CPUs out of 1-3,5-7.",
		"NUMA node 0 passed over: 1 candidate CPU, 2 needed.",
		"one NUMA node holds them: NUMA node 1 (2 candidate CPUs): CPUs "
		"2-3.",
		"skipped 0,4: reserved.",
		"skipped 1,5-7: free, but later in the take's order.",
		"container main got CPUs 2-3, memory nodes {1} (no NUMA hint).",
	};
	json_t *req = request(POLICY_2NODE("none"), NULL,
			      "{\"name\": \"s\", \"qos\": \"LSE\", "
			      "\"resourceSpec\": {\"preferredCPUBindPolicy\": "
			      "\"SpreadByPCPUs\"}, \"containers\": [{\"name\": "
			      "\"main\", \"cpu\": \"2\"}]}");
	json_t *x = NULL;
	char err[256];

	(void)state;
	assert_int_equal(np_explain_plan(req, &x, err, sizeof(err)), 0);
	assert_sentences(x, want, (int)(sizeof(want) / sizeof(want[0])));
	json_decref(x);
	json_decref(req);
}

static void test_bad_request(void **state)
{
	json_t *req = json_pack("{s:s}", "kind", "take"), *x = NULL;
	char err[256];

	(void)state;
	assert_int_equal(np_explain_plan(req, &x, err, sizeof(err)), -EINVAL);
	assert_string_equal(err,
			    "kind: explain takes a request of kind \"admit\"");
	json_object_set_new(req, "kind", json_string("admit"));
	assert_int_equal(np_explain_plan(req, &x, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "topology"));
	json_decref(req);
}

/* The control socket op "explain" on a daemon (fake enforcer). */
static json_t *ctl(struct fake_daemon *x, const char *text)
{
	json_t *req = json_loads(text, 0, NULL), *resp;

	assert_non_null(req);
	resp = fake_daemon_serve(&x->d, req);
	json_decref(req);
	assert_non_null(resp);
	return resp;
}

static void test_daemon_op(void **state)
{
	struct fake_daemon x;
	json_t *r;

	(void)state;
	fake_daemon_start(&x, "explain");
	r = ctl(&x, "{\"op\": \"admit\", \"spec\": {\"name\": \"web\", "
		    "\"cgroup\": \"web\", \"qos\": \"LSE\", \"containers\": "
		    "[{\"name\": \"m\", \"cpu\": \"2\"}]}}");
	assert_true(json_is_true(json_object_get(
		json_object_get(r, "decision"), "admitted")));
	json_decref(r);
	r = ctl(&x, "{\"op\": \"explain\", \"name\": \"web\"}");
	assert_true(json_is_true(json_object_get(r, "ok")));
	assert_string_equal(str(json_object_get(r, "explain"), "held", ""),
			    "1,5");
	assert_string_equal(str(json_object_get(r, "explain"), "cpuset", ""),
			    "1,5");
	json_decref(r);
	r = ctl(&x, "{\"op\": \"explain\", \"name\": \"nope\"}");
	assert_string_equal(str(r, "error", ""), "no workload named nope");
	json_decref(r);
	r = ctl(&x, "{\"op\": \"explain\", \"name\": 3}");
	assert_string_equal(str(r, "error", ""), "name: expected a string");
	json_decref(r);
	fake_daemon_stop(&x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_take_vectors),
		cmocka_unit_test(test_admit_cases),
		cmocka_unit_test(test_lse_full_pcpus),
		cmocka_unit_test(test_restricted_node0_full),
		cmocka_unit_test(test_koord_spread),
		cmocka_unit_test(test_bad_request),
		cmocka_unit_test(test_daemon_op),
	};
	return cmocka_run_group_tests_name("explain", tests, NULL, NULL);
}
