// SPDX-License-Identifier: Apache-2.0
/*
 * Defragmentation: the engine's search (fewest moves, who may move, no
 * plan said) and the daemon's op "defrag" on a fake enforcer (the moves
 * saved before anything is written, then written in the safe order, then
 * the request admitted; config.defrag.auto).
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

#include "daemon/daemon_internal.h"
#include "fake_daemon.h"
#include "numaplace/defrag.h"
#include "numaplace/state_file.h"
#include "topo_gen.h"
#include "fixtures.h"

#define GiB (1ULL << 30)

/* Admit a spec (JSON text) into st; fails the test when it is invalid. */
static bool admit(struct np_node_state *st, const char *spec)
{
	struct np_workload_req w;
	struct np_decision d;
	json_error_t je;
	json_t *j = json_loads(spec, 0, &je);
	char err[512];

	if (!j)
		fail_msg("bad test spec: %s", je.text);
	if (np_workload_req_from_json(&w, j, "spec", err, sizeof(err)) ||
	    np_admit(st, &w, &d, err, sizeof(err)))
		fail_msg("%s: %s", spec, err);
	np_workload_req_free(&w);
	json_decref(j);
	return d.admitted;
}

static void req(struct np_workload_req *w, const char *spec)
{
	json_t *j = json_loads(spec, 0, NULL);
	char err[512];

	assert_non_null(j);
	if (np_workload_req_from_json(w, j, "spec", err, sizeof(err)))
		fail_msg("%s: %s", spec, err);
	json_decref(j);
}

static char *spec(const char *name, int cpus, bool movable)
{
	static char buf[4][256];
	static int k;
	char *b = buf[k++ % 4];
	snprintf(b, sizeof(buf[0]),
		 "{\"name\": \"%s\", \"qos\": \"LSE\", \"movable\": %s, "
		 "\"containers\": [{\"name\": \"main\", \"cpu\": \"%d\"}]}",
		 name, movable ? "true" : "false", cpus);
	return b;
}

static void init(struct np_node_state *st, struct np_topology *t,
		 const char *reserved)
{
	char pj[256];

	snprintf(pj, sizeof(pj),
		 "{\"cpu_policy\": \"static\", \"reserved_cpus\": \"%s\", "
		 "\"topology_policy\": \"single-numa-node\"}",
		 reserved);
	np_test_state_init(st, t, pj);
}

static const char *cpus_of(const struct np_node_state *st, const char *name)
{
	static char buf[128];
	int i = np_state_find(st, name);
	np_cpuset s;

	assert_true(i >= 0);
	np_workload_exclusive_cpus(st->w[i], &s);
	np_cpuset_format(&s, buf, sizeof(buf));
	return buf;
}

static const char *fmt(const np_cpuset *s)
{
	static char buf[2][128];
	static int k;
	char *b = buf[k++ % 2];
	np_cpuset_format(s, b, sizeof(buf[0]));
	return b;
}

/*
 * 2 nodes (0-3, 4-7, siblings adjacent), reserved 0-1: node 0 has one free
 * core (2-3). m (2 CPUs) sits on node 1, so neither node holds 4 free CPUs
 * although 6 are free; "big" (4 CPUs, single-numa-node) is rejected.
 */
static void fragmented(struct np_node_state *st, struct np_topology **t,
		       bool movable)
{
	*t = np_test_topology(2, 1, 2, 2, false, 8 * GiB);
	init(st, *t, "0-1");
	assert_true(admit(st, spec("fill", 2, false)));
	assert_string_equal(cpus_of(st, "fill"), "2-3");
	assert_true(admit(st, spec("m", 2, movable)));
	assert_string_equal(cpus_of(st, "m"), "4-5");
	assert_int_equal(np_release(st, "fill"), 0);
}

/* One move of the movable LSE workload makes room; the plan, carried out,
 * admits the request where the plan said. */
static void test_one_move(void **state)
{
	struct np_node_state st;
	struct np_topology *t;
	struct np_workload_req w;
	struct np_defrag_plan p;
	struct np_decision d;
	char err[512];

	(void)state;
	fragmented(&st, &t, true);
	req(&w, spec("big", 4, false));
	assert_int_equal(np_defrag_search(&st, &w, 2, &p, err, sizeof(err)), 0);
	assert_true(p.needed);
	assert_string_equal(p.resource, "cpu");
	assert_true(p.found);
	assert_int_equal(p.nmoves, 1);
	assert_string_equal(p.moves[0].workload, "m");
	assert_string_equal(fmt(&p.moves[0].from_cpus), "4-5");
	assert_string_equal(fmt(&p.moves[0].to_cpus), "2-3");
	assert_int_equal(p.moves[0].from_mems, 2);
	assert_int_equal(p.moves[0].to_mems, 1);
	assert_string_equal(fmt(&p.cpus), "4-7");
	assert_int_equal(p.tried, 1);
	/* st itself is untouched by the search */
	assert_string_equal(cpus_of(&st, "m"), "4-5");
	assert_int_equal(np_defrag_apply_moves(&st, &p, err, sizeof(err)), 0);
	assert_string_equal(cpus_of(&st, "m"), "2-3");
	assert_true(st.w[np_state_find(&st, "m")]->req.movable);
	assert_int_equal(np_admit(&st, &w, &d, err, sizeof(err)), 0);
	assert_true(d.admitted);
	assert_string_equal(cpus_of(&st, "big"), "4-7");
	{
		json_t *j = np_defrag_plan_to_json(&p);
		char *s = json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT);
		assert_non_null(strstr(s, "\"moves\":[{\"class\":\"LSE\","
					  "\"from\":{\"cpus\":\"4-5\",\"mems\":"
					  "\"1\"},\"mems_change\":true,\"to\":{"
					  "\"cpus\":\"2-3\",\"mems\":\"0\"},"
					  "\"workload\":\"m\"}]"));
		assert_non_null(strstr(s, "\"admits\":{\"cpus\":\"4-7\""));
		free(s);
		json_decref(j);
	}
	np_defrag_plan_free(&p);
	np_workload_req_free(&w);
	np_state_free(&st);
	np_topology_free(t);
}

/* The same node with m not movable: never moved, no plan, and it says why. */
static void test_unmovable(void **state)
{
	struct np_node_state st;
	struct np_topology *t;
	struct np_workload_req w;
	struct np_defrag_plan p;
	char err[512];

	(void)state;
	fragmented(&st, &t, false);
	req(&w, spec("big", 4, false));
	assert_int_equal(np_defrag_search(&st, &w, 4, &p, err, sizeof(err)), 0);
	assert_true(p.needed);
	assert_false(p.found);
	assert_int_equal(p.nmoves, 0);
	assert_int_equal(p.tried, 0);
	assert_int_equal(p.nkept, 1);
	assert_string_equal(p.kept[0].workload, "m");
	assert_non_null(strstr(p.kept[0].why, "\"movable\": true"));
	assert_non_null(strstr(p.why, "no workload may move"));
	np_defrag_plan_free(&p);
	np_workload_req_free(&w);
	np_state_free(&st);
	np_topology_free(t);
}

/*
 * 2 nodes of 4 cores (0-7, 8-15), reserved 0-1. a and b (2 CPUs each,
 * movable) sit on node 1, x (2 CPUs, movable) on node 0: 8 CPUs for "big"
 * need node 1 empty, so two moves. With one move at most there is no
 * plan; the search tries x first and never moves it (fewest moves: a and
 * b only).
 */
static void test_fewest(void **state)
{
	struct np_topology *t = np_test_topology(2, 1, 4, 2, false, 8 * GiB);
	struct np_node_state st;
	struct np_workload_req w;
	struct np_defrag_plan p;
	char err[512];

	(void)state;
	init(&st, t, "0-1");
	assert_true(admit(&st, spec("x", 2, true)));
	assert_true(admit(&st, spec("fill", 4, false)));
	assert_string_equal(cpus_of(&st, "x"), "2-3");
	assert_true(admit(&st, spec("a", 2, true)));
	assert_true(admit(&st, spec("b", 2, true)));
	assert_string_equal(cpus_of(&st, "a"), "8-9");
	assert_string_equal(cpus_of(&st, "b"), "10-11");
	assert_int_equal(np_release(&st, "fill"), 0);
	req(&w, spec("big", 8, false));
	assert_int_equal(np_defrag_search(&st, &w, 1, &p, err, sizeof(err)), 0);
	assert_false(p.found);
	assert_int_equal(p.tried, 3); /* x, a, b */
	assert_non_null(strstr(p.why, "no plan of up to 1 move(s) among the 3 "
				      "movable workload(s)"));
	np_defrag_plan_free(&p);
	assert_int_equal(np_defrag_search(&st, &w, 3, &p, err, sizeof(err)), 0);
	assert_true(p.found);
	assert_int_equal(p.nmoves, 2);
	assert_string_equal(p.moves[0].workload, "a");
	assert_string_equal(p.moves[1].workload, "b");
	assert_string_equal(fmt(&p.cpus), "8-15");
	assert_int_equal(p.tried, 6); /* x, a, b, then x+a, x+b, a+b */
	for (int i = 0; i < p.nmoves; i++)
		assert_int_equal(p.moves[i].to_mems, 1); /* node 0 */
	np_defrag_plan_free(&p);
	/* bad input names the field */
	assert_int_equal(np_defrag_search(&st, &w, 9, &p, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "max_moves"));
	/* more CPUs than are free: said, nothing simulated */
	np_workload_req_free(&w);
	req(&w, spec("huge", 12, false));
	assert_int_equal(np_defrag_search(&st, &w, 2, &p, err, sizeof(err)), 0);
	assert_false(p.found);
	assert_int_equal(p.tried, 0);
	assert_non_null(strstr(p.why, "12 exclusive CPU(s) requested, only 8 "
				      "free"));
	np_defrag_plan_free(&p);
	/* admitted as things are: no move needed */
	np_workload_req_free(&w);
	req(&w, spec("small", 2, false));
	assert_int_equal(np_defrag_search(&st, &w, 2, &p, err, sizeof(err)), 0);
	assert_false(p.needed);
	assert_int_equal(p.nmoves, 0);
	np_defrag_plan_free(&p);
	np_workload_req_free(&w);
	np_state_free(&st);
	np_topology_free(t);
}

/* The spec field: parsed, validated naming the field, in the canonical
 * spec (so in the state file), absent = false. */
static void test_spec_field(void **state)
{
	struct np_workload_req w;
	char err[256];
	json_t *j, *o;

	(void)state;
	j = json_loads("{\"name\": \"a\", \"qos\": \"LSE\", \"movable\": 1, "
		       "\"containers\": [{\"name\": \"m\", \"cpu\": 1}]}",
		       0, NULL);
	assert_int_equal(np_workload_req_from_json(&w, j, "spec", err,
						   sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "spec.movable: expected true or false");
	np_workload_req_free(&w);
	json_object_set_new(j, "movable", json_true());
	assert_int_equal(np_workload_req_from_json(&w, j, "spec", err,
						   sizeof(err)),
			 0);
	assert_true(w.movable);
	o = np_workload_req_to_json(&w);
	assert_true(json_is_true(json_object_get(o, "movable")));
	json_decref(o);
	np_workload_req_free(&w);
	json_object_del(j, "movable");
	assert_int_equal(np_workload_req_from_json(&w, j, "spec", err,
						   sizeof(err)),
			 0);
	assert_false(w.movable);
	o = np_workload_req_to_json(&w);
	assert_null(json_object_get(o, "movable"));
	json_decref(o);
	np_workload_req_free(&w);
	json_decref(j);
}

/* ---- the daemon, on a fake enforcer (tests/support/fake_daemon.h: the
 * 2-node VM topology, node 0 = 0,1,4,5, node 1 = 2,3,6,7, siblings 0/4
 * 1/5 2/6 3/7, reserved 0,4, topology policy restricted) ---- */

struct fx {
	struct fake_daemon fd;
};

static int setup(void **state)
{
	struct fx *x = fake_daemon_new(sizeof(*x), "defrag");
	*state = x;
	return 0;
}

static json_t *request(struct fx *x, const char *text, bool ok)
{
	json_t *resp = fake_daemon_ask(&x->fd, text);

	if (json_is_true(json_object_get(resp, "ok")) != ok)
		fail_msg("request %s: %s", text,
			 json_dumps(resp, JSON_COMPACT));
	return resp;
}

static bool daemon_admit(struct fx *x, const char *name, int cpus,
			 bool movable)
{
	char buf[512];
	json_t *r;
	bool ok;

	snprintf(buf, sizeof(buf), "{\"op\": \"admit\", \"spec\": %s}",
		 spec(name, cpus, movable));
	r = request(x, buf, true);
	ok = json_is_true(json_object_get(json_object_get(r, "decision"),
					  "admitted"));
	json_decref(r);
	return ok;
}

static void assert_log(struct fx *x, const char *want)
{
	if (strcmp(fake_log(x->fd.f), want))
		fail_msg("enforcer calls:\n%s\nwanted:\n%s", fake_log(x->fd.f),
			 want);
}

/* fill holds node 0's free core (1,5) while m (movable) is placed on
 * node 1 (2,6); with fill released, "big" (4 CPUs) finds no node with 4
 * free CPUs and is rejected. */
static void fragment(struct fx *x, bool movable)
{
	assert_true(daemon_admit(x, "fill", 2, false));
	assert_true(daemon_admit(x, "m", 2, movable));
	assert_string_equal(cpus_of(&x->fd.d.st, "m"), "2,6");
	json_decref(request(x, "{\"op\": \"release\", \"name\": \"fill\"}",
			    true));
	assert_false(daemon_admit(x, "big", 4, false));
	fake_log_clear(x->fd.f);
}

static const char *plan_field(const json_t *r, const char *k)
{
	return json_string_value(
		json_object_get(json_object_get(r, "plan"), k));
}

/* The writes of the move, in the enforcer's order: memory nodes widened
 * first; m gets its new CPUs before it gives its old ones up (its tasks
 * always have somewhere to run), and gives them up before big gets them
 * (no CPU in two exclusive sets); m's old node goes last, then its pages
 * follow. */
#define MOVE_WRITES \
	"mkdir big\n" \
	"set host system.slice cpus=0,4\n" \
	"write m cpuset.mems=0-1 (mems widen)\n" \
	"write big cpuset.mems=1 (mems widen)\n" \
	"write m cpuset.cpus=1-2,5-6 (widen)\n" \
	"write m cpuset.cpus=1,5 (release)\n" \
	"write big cpuset.cpus=2-3,6-7 (widen)\n" \
	"write m cpuset.mems=0 (mems narrow)\n" \
	"migrate m 1->0\n"

/* A dry run writes nothing; --apply saves the moves, writes them in the
 * safe order (m leaves 2,6 before big gets it), migrates m's pages to its
 * new node, and admits the last rejected request. */
static void test_daemon_apply(void **state)
{
	struct fx *x = *state;
	uint64_t saves;
	json_t *r;
	char path[128], err[256];
	struct np_node_state loaded;

	struct np_wl_meta *m;

	fragment(x, true);
	m = np_daemon_meta_find(&x->fd.d, "m");
	assert_non_null(m);
	r = request(x, "{\"op\": \"defrag\"}", true);
	assert_string_equal(plan_field(r, "workload"), "big");
	assert_true(json_is_true(json_object_get(json_object_get(r, "plan"),
						 "found")));
	assert_false(json_is_true(json_object_get(r, "applied")));
	json_decref(r);
	assert_log(x, "");
	saves = x->fd.d.n.state_saves;
	r = request(x, "{\"op\": \"defrag\", \"apply\": true}", true);
	assert_true(json_is_true(json_object_get(r, "applied")));
	assert_true(json_is_true(json_object_get(
		json_object_get(r, "decision"), "admitted")));
	json_decref(r);
	assert_string_equal(cpus_of(&x->fd.d.st, "m"), "1,5");
	assert_string_equal(cpus_of(&x->fd.d.st, "big"), "2-3,6-7");
	/* moved, the same workload: its record went with it */
	assert_ptr_equal(np_daemon_meta_find(&x->fd.d, "m"), m);
	assert_true(m->established);
	assert_non_null(np_daemon_meta_find(&x->fd.d, "big"));
	assert_true(x->fd.d.n.state_saves >= saves + 2);
	assert_log(x, MOVE_WRITES);
	/* the state on disk has the move */
	snprintf(path, sizeof(path), "%s/state", x->fd.dir);
	assert_int_equal(np_state_init(&loaded, x->fd.d.topo,
				       &x->fd.d.cfg.policy, err, sizeof(err)),
			 0);
	assert_int_equal(np_statefile_load(path, &loaded, NULL, err,
					   sizeof(err)),
			 0);
	assert_string_equal(cpus_of(&loaded, "m"), "1,5");
	assert_true(loaded.w[np_state_find(&loaded, "m")]->req.movable);
	np_state_free(&loaded);
	/* nothing is remembered any more */
	r = request(x, "{\"op\": \"defrag\"}", false);
	assert_non_null(strstr(json_string_value(json_object_get(r, "error")),
			       "no rejected admission"));
	json_decref(r);
}

/* m not movable: no plan, nothing written, m keeps its CPUs. */
static void test_daemon_unmovable(void **state)
{
	struct fx *x = *state;
	json_t *r;

	fragment(x, false);
	r = request(x, "{\"op\": \"defrag\", \"apply\": true}", true);
	assert_false(json_is_true(json_object_get(r, "applied")));
	assert_non_null(strstr(plan_field(r, "why"), "no workload may move"));
	json_decref(r);
	assert_log(x, "");
	assert_string_equal(cpus_of(&x->fd.d.st, "m"), "2,6");
	assert_int_equal(np_state_find(&x->fd.d.st, "big"), -1);
	/* bad requests name the field */
	r = request(x, "{\"op\": \"defrag\", \"apply\": 1}", false);
	assert_string_equal(json_string_value(json_object_get(r, "error")),
			    "apply: expected true or false");
	json_decref(r);
	r = request(x, "{\"op\": \"defrag\", \"spec\": {\"name\": \"q\"}}",
		    false);
	assert_non_null(strstr(json_string_value(json_object_get(r, "error")),
			       "spec."));
	json_decref(r);
}

/* config.defrag.auto: the rejected admission is admitted at once, after
 * the move. */
static void test_daemon_auto(void **state)
{
	struct fx *x = *state;

	x->fd.d.cfg.defrag.auto_ = true;
	assert_true(daemon_admit(x, "fill", 2, false));
	assert_true(daemon_admit(x, "m", 2, true));
	json_decref(request(x, "{\"op\": \"release\", \"name\": \"fill\"}",
			    true));
	fake_log_clear(x->fd.f);
	assert_true(daemon_admit(x, "big", 4, false));
	assert_string_equal(cpus_of(&x->fd.d.st, "m"), "1,5");
	assert_string_equal(cpus_of(&x->fd.d.st, "big"), "2-3,6-7");
	assert_log(x, MOVE_WRITES);
	assert_int_equal(x->fd.d.defrag.moves, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_one_move),
	    cmocka_unit_test(test_unmovable),
	    cmocka_unit_test(test_fewest),
	    cmocka_unit_test(test_spec_field),
	    cmocka_unit_test_setup_teardown(test_daemon_apply, setup, fake_daemon_teardown),
	    cmocka_unit_test_setup_teardown(test_daemon_unmovable, setup,
					    fake_daemon_teardown),
	    cmocka_unit_test_setup_teardown(test_daemon_auto, setup, fake_daemon_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
