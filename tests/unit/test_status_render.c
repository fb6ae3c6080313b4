// SPDX-License-Identifier: Apache-2.0
/*
 * The CLI's renderings (tools/status_render.c): the status renderer on
 * hand-made and library-made status objects, and the decision printer.
 * Linked with tools/status_render.o (see the Makefile).
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
#include "numaplace/topology_json.h"
#include "status_render.h"
#include "fixtures.h"

/* ---- np_status_render --------------------------------------------------- */

/* Render into a string (freed by the caller); asserts success. */
static char *render(const json_t *status)
{
	char *buf = NULL, err[512] = "";
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int r;

	assert_non_null(f);
	r = np_status_render_err(status, f, err, sizeof(err));
	fclose(f);
	if (r)
		fail_msg("render: %d %s", r, err);
	return buf;
}

static json_t *parse(const char *s)
{
	json_error_t jerr;
	json_t *j = json_loads(s, 0, &jerr);
	if (!j)
		fail_msg("test JSON, column %d: %s", jerr.column, jerr.text);
	return j;
}

/* 2 sockets x 1 node x 2 cores x 2 threads: node 0 = cpus 0-3. */
#define TOPO8                                                                  \
	"{\"cpus\": ["                                                         \
	"{\"cpu\":0,\"core\":0,\"socket\":0,\"numa\":0,\"l3\":0},"             \
	"{\"cpu\":1,\"core\":0,\"socket\":0,\"numa\":0,\"l3\":0},"             \
	"{\"cpu\":2,\"core\":1,\"socket\":0,\"numa\":0,\"l3\":0},"             \
	"{\"cpu\":3,\"core\":1,\"socket\":0,\"numa\":0,\"l3\":0},"             \
	"{\"cpu\":4,\"core\":2,\"socket\":1,\"numa\":1,\"l3\":1},"             \
	"{\"cpu\":5,\"core\":2,\"socket\":1,\"numa\":1,\"l3\":1},"             \
	"{\"cpu\":6,\"core\":3,\"socket\":1,\"numa\":1,\"l3\":1},"             \
	"{\"cpu\":7,\"core\":3,\"socket\":1,\"numa\":1,\"l3\":1}],"            \
	"\"distances\": [[10,20],[20,10]],"                                    \
	"\"numa_nodes\": [{\"id\":0,\"memory\":8589934592},"                   \
	"{\"id\":1,\"memory\":8589934592}]}"

static const char hand_status[] =
    "{\"topology\": " TOPO8 ","
    " \"pools\": {\"reserved\":\"0,4\", \"shared\":\"0,2-4\","
    "  \"exclusive\":\"1,5-7\", \"be\":\"2-3,6-7\", \"allocatable\":\"2-3\","
    "  \"cpuSharedPools\":[{\"socket\":0,\"node\":0,\"cpuset\":\"0,2-3\"},"
    "                      {\"socket\":1,\"node\":1,\"cpuset\":\"4\"}],"
    "  \"beSharedPools\":[]},"
    " \"workloads\": ["
    "  {\"name\":\"web\",\"cgroup\":\"pods/web\",\"qos\":\"LSE\","
    "   \"class\":\"LSE\",\"cpuset\":\"1,5\",\"exclusive\":true,"
    "   \"mems\":\"0-1\",\"containers\":[{\"name\":\"main\","
    "   \"cpuset\":\"1,5\",\"exclusive\":true,\"mems\":\"0-1\","
    "   \"hint\":{\"mask\":[0,1],\"preferred\":false},\"devices\":{}}]},"
    "  {\"name\":\"api\",\"cgroup\":\"api\",\"qos\":\"LS\",\"class\":\"LS\","
    "   \"cpuset\":\"0,2-4\",\"exclusive\":false,\"mems\":\"0-1\","
    "   \"containers\":[{\"name\":\"main\",\"cpuset\":\"0,2-4\","
    "   \"exclusive\":false,\"mems\":\"0-1\",\"hint\":{\"mask\":null,"
    "   \"preferred\":true},\"devices\":{}}]},"
    "  {\"name\":\"db\",\"cgroup\":\"db\",\"qos\":\"Guaranteed\","
    "   \"class\":\"LSR\",\"cpuset\":\"6-7\",\"exclusive\":true,"
    "   \"mems\":\"1\",\"containers\":[{\"name\":\"pg\",\"cpuset\":\"6-7\","
    "   \"exclusive\":true,\"mems\":\"1\",\"hint\":{\"mask\":[1],"
    "   \"preferred\":true},\"devices\":{\"vendor.com/gpu\":"
    "   [\"0000:3b:00.0\"]}}]}],"
    " \"counters\": {\"cycles\":120,\"drift_repaired\":3,\"admitted\":4,"
    "  \"rejected\":1,\"released\":1,\"write_errors\":0,\"vanished\":2},"
    " \"rejections\": [{\"workload\":\"late\",\"resource\":\"cpu\","
    "  \"reason\":\"topology affinity error: no NUMA node fits\","
    "  \"time\":1700000000}],"
    " \"reconcile_period_s\": 10,"
    " \"last_cycle\": {\"time\":1700000100,\"writes\":2,"
    "  \"duration_us\":153}}";

static void test_render_hand_made(void **state)
{
	json_t *st = parse(hand_status);
	char *out;
	(void)state;

	out = render(st);
	assert_contains(out, "NUMA node 0 (socket 0): cpus 0-3\n"
			     "  0:R  1:A  2:.  3:.\n"
			     "NUMA node 1 (socket 1): cpus 4-7\n"
			     "  4:R  5:A  6:B  7:B\n"
			     "legend: R reserved  . shared  A web (LSE)  "
			     "B db (LSR)\n");
	/* pools and the shared pool per node */
	assert_contains(out, "  reserved     0,4\n");
	assert_contains(out, "  shared       0,2-4\n");
	assert_contains(out, "  BE           2-3,6-7\n");
	assert_contains(out, "  allocatable  2-3\n");
	assert_contains(out, "  node 0 (socket 0): 0,2-3\n");
	assert_contains(out, "  node 1 (socket 1): 4\n");
	/* the workloads table: letter, name, qos/class, cgroup, ... */
	assert_contains(out, "workloads: 3\n");
	assert_contains(out, "  A web   LSE             pods/web  1,5");
	assert_contains(out, "  . api   LS              api       0,2-4");
	assert_contains(out, "  B db    Guaranteed/LSR  db        6-7");
	assert_contains(out, "devices of db/pg: vendor.com/gpu 0000:3b:00.0");
	/* counters, also one the renderer does not know by name */
	assert_contains(out, "drift repaired 3");
	assert_contains(out, "rejected 1");
	assert_contains(out, "write errors 0");
	assert_contains(out, "vanished 2");
	assert_contains(out, "late (resource cpu): topology affinity error: "
			     "no NUMA node fits\n");
	assert_contains(out, ", 2 writes, 153 us (every 10 s)\n");
	assert_true(strstr(out, "offline CPUs") == NULL);
	free(out);

	/* hotplug: CPU 5 of web offline */
	json_object_set_new(st, "offline_cpus", json_string("5"));
	json_object_set_new(st, "degraded", json_pack("{s:s}", "web", "5"));
	out = render(st);
	assert_contains(out, "offline CPUs: 5; web degraded (offline 5)\n");
	free(out);
	json_decref(st);
}

/* Marks the picture does not normally show: offline, BE only, an exclusive
 * CPU without a listed owner, a CPU in no pool; many CPUs per node wrap. */
static void test_render_odd_cpus(void **state)
{
	json_t *st, *cpus = json_array();
	char *out;
	(void)state;

	for (int c = 0; c < 20; c++)
		json_array_append_new(cpus,
				      json_pack("{s:i,s:i,s:i,s:i,s:b}", "cpu",
						c, "core", c, "socket", 0,
						"numa", 0, "online", c != 3));
	st = json_pack("{s:{s:o},s:{s:s,s:s,s:s,s:s},s:[]}", "topology", "cpus",
		       cpus, "pools", "reserved", "0", "shared", "1,10-19",
		       "be", "2", "exclusive", "4", "workloads");
	out = render(st);
	assert_contains(out, "NUMA node 0 (socket 0): cpus 0-19\n"
			     "   0:R   1:.   2:b   3:x   4:?   5:-");
	assert_contains(out, "  11:.\n  12:.");
	assert_contains(out, "legend: R reserved  . shared  b BE only  "
			     "? exclusive, owner not listed\n"
			     "        - in no pool  x offline\n");
	assert_contains(out, "workloads: none\n");
	free(out);
	json_decref(st);
}

static int count(const char *hay, const char *needle)
{
	int n = 0;
	for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

/* A status assembled from the library's own JSON forms, as numaplaced
 * builds it. */
static void test_render_library_status(void **state)
{
	static const char *const specs[] = {
	    "{\"name\":\"web\",\"qos\":\"LSE\",\"containers\":"
	    "[{\"name\":\"main\",\"cpu\":\"2\"}]}",
	    "{\"name\":\"db\",\"qos\":\"LSR\",\"containers\":"
	    "[{\"name\":\"pg\",\"cpu\":\"2\"}]}",
	    "{\"name\":\"api\",\"qos\":\"LS\",\"containers\":"
	    "[{\"name\":\"main\",\"cpu\":\"500m\"}]}",
	};
	json_t *tj = parse(TOPO8),
	       *pj = parse("{\"cpu_policy\":\"static\",\"reserved_cpus\":"
			   "\"0,4\",\"topology_policy\":\"restricted\"}");
	struct np_workload_req *w = calloc(1, sizeof(*w));
	struct np_topology *t = NULL;
	struct np_node_policy pol;
	struct np_node_state ns;
	struct np_decision d;
	json_t *st, *ws = json_array(), *dj;
	char err[512], *out, *pic, *buf = NULL;
	size_t len = 0;
	FILE *f;
	(void)state;

	assert_non_null(w);
	assert_int_equal(
	    np_topology_from_json(&t, tj, "topology", err, sizeof(err)), 0);
	assert_int_equal(
	    np_policy_from_json(&pol, pj, "policy", err, sizeof(err)), 0);
	if (np_state_init(&ns, t, &pol, err, sizeof(err)))
		fail_msg("state: %s", err);
	for (size_t i = 0; i < 3; i++) {
		json_t *sj = parse(specs[i]);
		if (np_workload_req_from_json(w, sj, "spec", err,
					      sizeof(err)) ||
		    np_admit(&ns, w, &d, err, sizeof(err)))
			fail_msg("admit %zu: %s", i, err);
		assert_true(d.admitted);
		np_workload_req_free(w);
		json_decref(sj);
	}
	for (int i = 0; i < ns.nworkloads; i++)
		json_array_append_new(ws,
				      np_workload_alloc_to_json(&ns, ns.w[i]));
	st = json_pack("{s:o,s:o,s:o,s:{s:i},s:[],s:f,s:{s:i,s:i,s:i}}",
		       "topology", np_topology_to_json(t), "pools",
		       np_pools_to_json(&ns), "workloads", ws, "counters",
		       "admitted", 3, "rejections", "reconcile_period_s", 0.5,
		       "last_cycle", "time", 0, "writes", 0, "duration_us", 0);
	out = render(st);
	pic = strdup(out);
	*strstr(pic, "legend:") = '\0';
	assert_int_equal(count(pic, ":A"), 2);
	assert_int_equal(count(pic, ":B"), 2);
	assert_int_equal(count(pic, ":R"), 2);
	assert_int_equal(count(pic, ":."), 2);
	assert_contains(pic, "0:R");
	assert_contains(pic, "4:R");
	assert_contains(out, "A web (LSE)  B db (LSR)\n");
	assert_contains(out, "  . api ");
	assert_contains(out, "counters: admitted 3\n");
	assert_contains(out, "last reconcile cycle: none yet (every 0.5 s)\n");
	free(pic);
	free(out);

	/* The decision printer on the last admission (api, shared) and on
	 * web, looked up again. */
	f = open_memstream(&buf, &len);
	dj = np_decision_to_json(&ns, &d);
	assert_int_equal(np_decision_render(dj, f), 0);
	json_decref(dj);
	d.alloc = ns.w[np_state_find(&ns, "web")];
	dj = np_decision_to_json(&ns, &d);
	assert_int_equal(np_decision_render(dj, f), 0);
	json_decref(dj);
	fclose(f);
	assert_contains(buf, "admitted api: cpuset ");
	assert_contains(buf, "(LS, shared pool, hint any)\n"
			     "  main: cpuset ");
	assert_contains(buf, "admitted web: cpuset ");
	assert_contains(buf, " (LSE, hint 0 preferred)\n  main: cpuset ");
	assert_contains(buf, " exclusive, mems 0, hint 0 preferred\n");
	free(buf);

	json_decref(st);
	np_state_free(&ns);
	np_topology_free(t);
	json_decref(pj);
	json_decref(tj);
	free(w);
}

static void test_render_malformed(void **state)
{
	json_t *st = parse(hand_status), *a = json_array();
	char err[512] = "";
	FILE *f = fopen("/dev/null", "w");
	(void)state;

	assert_int_equal(np_status_render_err(a, f, err, sizeof(err)), -EINVAL);
	assert_contains(err, "status: expected an object");
	json_object_set_new(json_object_get(st, "pools"), "reserved",
			    json_string("0-x"));
	assert_int_equal(np_status_render_err(st, f, err, sizeof(err)),
			 -EINVAL);
	assert_contains(err, "status.pools.reserved: invalid cpu list");
	json_object_del(st, "topology");
	assert_int_equal(np_status_render(st, f), -EINVAL);
	assert_int_equal(np_status_render_err(st, f, err, sizeof(err)),
			 -EINVAL);
	assert_contains(err, "status.topology");
	fclose(f);
	json_decref(a);
	json_decref(st);
}

static void test_decision_rejected(void **state)
{
	json_t *d = parse("{\"admitted\":false,\"workload\":\"late\","
			  "\"resource\":\"cpu\",\"reason\":\"topology "
			  "affinity error: no fit\"}");
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	json_t *bad = parse("{\"name\":\"x\"}");
	(void)state;

	assert_int_equal(np_decision_render(d, f), 0);
	assert_int_equal(np_decision_render(bad, f), -EINVAL);
	fclose(f);
	assert_string_equal(buf, "rejected late: topology affinity error: "
				 "no fit (resource cpu)\n");
	free(buf);
	json_decref(bad);
	json_decref(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_render_hand_made),
	    cmocka_unit_test(test_render_odd_cpus),
	    cmocka_unit_test(test_render_library_status),
	    cmocka_unit_test(test_render_malformed),
	    cmocka_unit_test(test_decision_rejected),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
