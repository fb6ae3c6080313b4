// SPDX-License-Identifier: Apache-2.0
/*
 * numaplace/export.h: the NodeResourceTopology object (zones, costs, cpu,
 * memory, hugepages and device quantities, policy attributes and the old
 * topologyPolicies enum), Koordinator's annotations, the pod UID of a
 * cgroup, a node state rebuilt from a status object, and a state file
 * read offline (np_statefile_read).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "numaplace/admit.h"
#include "numaplace/export.h"
#include "numaplace/state_file.h"
#include "numaplace/topology_json.h"
#include "topo_gen.h"
#include "fixtures.h"

#define TOPO "tests/data/topology/"
#define MiB (1ULL << 20)
#define GiB (1ULL << 30)

/* kubelet-2socket.json: node 0 = CPUs 0-3,8-11 (64 GiB, 512 x 2Mi and
 * 4 x 1Gi hugepages), node 1 = 4-7,12-14 (cpu 15 offline; 32 GiB, 1024 x
 * 2Mi, one nvidia.com/gpu), distances 10/21. */
#define POLICY                                                                 \
	"{\"cpu_policy\":\"static\",\"reserved_cpus\":\"0,8\","                \
	"\"topology_policy\":\"single-numa-node\",\"topology_scope\":"         \
	"\"container\"}"

static struct np_topology *load_topo(const char *file)
{
	struct np_topology *t = NULL;
	char err[512];

	if (np_topology_load(&t, file, err, sizeof(err)))
		fail_msg("%s: %s", file, err);
	return t;
}

/* LSE web: 4 CPUs, 2 GiB and 512 MiB of 2Mi hugepages on node 0 (the
 * kubelet pod cgroup names its UID); LSR api: 2 CPUs, the GPU, on node 1;
 * a shared and a BE workload. */
static void populated(struct np_node_state *st, const struct np_topology *t)
{
	np_test_state_init(st, t, POLICY);
	np_test_admit_json(st, "{\"name\":\"web\",\"cgroup\":\"kubepods.slice/kubepods-"
		  "pod0b5f1c6e_8a7b_4c1d_9e2f_3a4b5c6d7e8f.slice\",\"qos\":"
		  "\"LSE\",\"containers\":[{\"name\":\"main\",\"cpu\":\"4\","
		  "\"memory\":\"2Gi\",\"hugepages-2Mi\":\"512Mi\"}]}");
	np_test_admit_json(st, "{\"name\":\"api\",\"cgroup\":\"pods/api\",\"qos\":\"LSR\","
		  "\"containers\":[{\"name\":\"a\",\"cpu\":2,\"memory\":"
		  "\"1Gi\",\"devices\":{\"nvidia.com/gpu\":1}}]}");
	np_test_admit_json(st, "{\"name\":\"shared\",\"cgroup\":\"pods/shared\",\"qos\":"
		  "\"LS\",\"containers\":[{\"name\":\"s\",\"cpu\":\"500m\"}]}");
	np_test_admit_json(st, "{\"name\":\"batch\",\"cgroup\":\"pods/batch\",\"qos\":"
		  "\"BE\",\"containers\":[{\"name\":\"b\"}]}");
}

static const json_t *zone(const json_t *nrt, int i)
{
	const json_t *z = json_array_get(json_object_get(nrt, "zones"), i);

	assert_non_null(z);
	return z;
}

static const json_t *res(const json_t *z, const char *name)
{
	const json_t *r;
	size_t i;

	json_array_foreach(json_object_get(z, "resources"), i, r)
		if (!strcmp(json_string_value(json_object_get(r, "name")), name))
			return r;
	return NULL;
}

static void assert_res(const json_t *z, const char *name, const char *cap,
		       const char *alloc, const char *avail)
{
	const json_t *r = res(z, name);

	if (!r)
		fail_msg("zone %s has no resource %s",
			 json_string_value(json_object_get(z, "name")), name);
	assert_string_equal(json_string_value(json_object_get(r, "capacity")),
			    cap);
	assert_string_equal(
	    json_string_value(json_object_get(r, "allocatable")), alloc);
	assert_string_equal(json_string_value(json_object_get(r, "available")),
			    avail);
}

static char *u64(uint64_t v)
{
	static char buf[4][32];
	static int k;

	k = (k + 1) % 4;
	snprintf(buf[k], sizeof(buf[k]), "%llu", (unsigned long long)v);
	return buf[k];
}

static void test_nrt_zones(void **state)
{
	struct np_topology *t = load_topo(TOPO "kubelet-2socket.json");
	struct np_node_state st;
	json_t *nrt;
	const json_t *z0, *z1;

	(void)state;
	populated(&st, t);
	nrt = np_export_nrt(&st, "worker-1");
	assert_non_null(nrt);
	assert_string_equal(json_string_value(json_object_get(nrt, "apiVersion")),
			    "topology.node.k8s.io/v1alpha2");
	assert_string_equal(json_string_value(json_object_get(nrt, "kind")),
			    "NodeResourceTopology");
	assert_string_equal(json_string_value(json_object_get(
				json_object_get(nrt, "metadata"), "name")),
			    "worker-1");
	assert_int_equal(json_array_size(json_object_get(nrt, "zones")), 2);
	z0 = zone(nrt, 0);
	z1 = zone(nrt, 1);
	assert_string_equal(json_string_value(json_object_get(z0, "name")),
			    "node-0");
	assert_string_equal(json_string_value(json_object_get(z1, "type")),
			    "Node");
	/* 8 CPUs, 0 and 8 reserved, web's 4 exclusive */
	assert_res(z0, "cpu", "8", "6", "2");
	/* 7 online CPUs (15 is offline), api's 2 exclusive (LSR counts) */
	assert_res(z1, "cpu", "7", "7", "5");
	assert_res(z0, "memory", u64(64 * GiB), u64(64 * GiB), u64(62 * GiB));
	assert_res(z1, "memory", u64(32 * GiB), u64(32 * GiB), u64(31 * GiB));
	assert_res(z0, "hugepages-2Mi", u64(GiB), u64(GiB), u64(512 * MiB));
	assert_res(z0, "hugepages-1Gi", u64(4 * GiB), u64(4 * GiB),
		   u64(4 * GiB));
	assert_res(z1, "hugepages-2Mi", u64(2 * GiB), u64(2 * GiB),
		   u64(2 * GiB));
	assert_null(res(z1, "hugepages-1Gi"));
	assert_res(z1, "nvidia.com/gpu", "1", "1", "0");
	/* devices without NUMA affinity belong to no zone */
	assert_null(res(z0, "nvidia.com/gpu"));
	assert_null(res(z0, "intel.com/sriov_netdevice"));
	assert_null(res(z1, "example.com/fpga"));
	json_decref(nrt);
	np_state_free(&st);
	np_topology_free(t);
}

/* Costs name every zone, itself included, with the matrix's values. */
static void test_nrt_costs(void **state)
{
	struct np_topology *t = np_test_topology(2, 2, 2, 2, true, GiB);
	struct np_node_state st;
	json_t *nrt;

	(void)state;
	np_test_state_init(&st, t, "{}");
	nrt = np_export_nrt(&st, "n");
	assert_int_equal(json_array_size(json_object_get(nrt, "zones")), 4);
	for (int i = 0; i < 4; i++) {
		const json_t *c = json_object_get(zone(nrt, i), "costs");
		assert_int_equal(json_array_size(c), 4);
		for (int j = 0; j < 4; j++) {
			const json_t *e = json_array_get(c, (size_t)j);
			char name[24];
			snprintf(name, sizeof(name), "node-%d", j);
			assert_string_equal(
			    json_string_value(json_object_get(e, "name")), name);
			assert_int_equal(
			    json_integer_value(json_object_get(e, "value")),
			    np_topology_distance(t, i, j));
		}
		/* 10 local, 12 same socket, 20 remote */
		assert_int_equal(json_integer_value(json_object_get(
				     json_array_get(c, (size_t)i), "value")),
				 10);
		assert_int_equal(json_integer_value(json_object_get(
				     json_array_get(c, (size_t)(i ^ 1)), "value")),
				 12);
		assert_int_equal(json_integer_value(json_object_get(
				     json_array_get(c, (size_t)(i ^ 2)), "value")),
				 20);
	}
	/* no memory reservation in the model: allocatable = capacity */
	assert_res(zone(nrt, 3), "memory", u64(GiB), u64(GiB), u64(GiB));
	assert_res(zone(nrt, 3), "cpu", "4", "4", "4");
	json_decref(nrt);
	np_state_free(&st);
	np_topology_free(t);
}

/* Without known distances there are no costs (10/20 are defaults). */
static void test_nrt_no_distances(void **state)
{
	struct np_topology *t = load_topo(TOPO "koord-cpu-topology.json");
	struct np_node_state st;
	json_t *nrt;

	(void)state;
	assert_false(t->distances_known);
	np_test_state_init(&st, t, "{}");
	nrt = np_export_nrt(&st, "n");
	assert_null(json_object_get(zone(nrt, 0), "costs"));
	/* no memory size known: no memory resource */
	assert_null(res(zone(nrt, 0), "memory"));
	assert_non_null(res(zone(nrt, 0), "cpu"));
	json_decref(nrt);
	np_state_free(&st);
	np_topology_free(t);
}

static void test_nrt_policies(void **state)
{
	static const struct {
		enum np_tm_policy p;
		enum np_tm_scope s;
		const char *policy, *scope, *old;
	} cases[] = {
	    {NP_TM_NONE, NP_TM_SCOPE_CONTAINER, "none", "container", "None"},
	    {NP_TM_NONE, NP_TM_SCOPE_POD, "none", "pod", "None"},
	    {NP_TM_BEST_EFFORT, NP_TM_SCOPE_CONTAINER, "best-effort",
	     "container", "BestEffortContainerLevel"},
	    {NP_TM_BEST_EFFORT, NP_TM_SCOPE_POD, "best-effort", "pod",
	     "BestEffortPodLevel"},
	    {NP_TM_RESTRICTED, NP_TM_SCOPE_CONTAINER, "restricted", "container",
	     "RestrictedContainerLevel"},
	    {NP_TM_RESTRICTED, NP_TM_SCOPE_POD, "restricted", "pod",
	     "RestrictedPodLevel"},
	    {NP_TM_SINGLE_NUMA_NODE, NP_TM_SCOPE_CONTAINER, "single-numa-node",
	     "container", "SingleNUMANodeContainerLevel"},
	    {NP_TM_SINGLE_NUMA_NODE, NP_TM_SCOPE_POD, "single-numa-node", "pod",
	     "SingleNUMANodePodLevel"},
	};
	struct np_topology *t = load_topo(TOPO "kubelet-2socket.json");
	struct np_node_state st;

	(void)state;
	np_test_state_init(&st, t, "{}");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *nrt, *a, *tp;
		st.policy.tm_policy = cases[i].p;
		st.policy.tm_scope = cases[i].s;
		nrt = np_export_nrt(&st, "n");
		a = json_object_get(nrt, "attributes");
		tp = json_object_get(nrt, "topologyPolicies");
		assert_int_equal(json_array_size(a), 2);
		assert_string_equal(json_string_value(json_object_get(
					json_array_get(a, 0), "name")),
				    "topologyManagerPolicy");
		assert_string_equal(json_string_value(json_object_get(
					json_array_get(a, 0), "value")),
				    cases[i].policy);
		assert_string_equal(json_string_value(json_object_get(
					json_array_get(a, 1), "name")),
				    "topologyManagerScope");
		assert_string_equal(json_string_value(json_object_get(
					json_array_get(a, 1), "value")),
				    cases[i].scope);
		assert_int_equal(json_array_size(tp), 1);
		assert_string_equal(json_string_value(json_array_get(tp, 0)),
				    cases[i].old);
		json_decref(nrt);
	}
	np_state_free(&st);
	np_topology_free(t);
}

/* An annotation's value parsed back from its JSON text. */
static json_t *annotation(const json_t *k, const char *key)
{
	const char *s = json_string_value(json_object_get(k, key));
	json_t *j;

	if (!s)
		fail_msg("no annotation %s", key);
	j = json_loads(s, 0, NULL);
	assert_non_null(j);
	return j;
}

static void test_koordinator(void **state)
{
	struct np_topology *t = load_topo(TOPO "kubelet-2socket.json"), *back;
	struct np_node_state st;
	json_t *k, *topo, *pools, *be, *allocs, *want;
	char err[256];

	(void)state;
	populated(&st, t);
	k = np_export_koordinator(&st);
	assert_non_null(k);
	assert_int_equal(json_object_size(k), 4);
	/* cpu-topology: every online CPU; our loader reads it back */
	topo = annotation(k, NP_KOORD_CPU_TOPOLOGY);
	assert_int_equal(json_array_size(json_object_get(topo, "detail")), 15);
	want = json_loads("{\"id\":12,\"core\":4,\"socket\":1,\"node\":1}", 0,
			  NULL);
	assert_true(json_equal(json_array_get(json_object_get(topo, "detail"),
					      12),
			       want));
	json_decref(want);
	if (np_topology_from_json(&back, topo, "cpu-topology", err,
				  sizeof(err)))
		fail_msg("%s", err);
	assert_int_equal(back->ncpus, 15);
	assert_int_equal(back->nnuma, 2);
	assert_int_equal(back->ncores, t->ncores);
	np_topology_free(back);
	/* LS pool: all - exclusive (LSE and LSR); BE pool: all - LSE -
	 * reserved. web holds 4 of node 0, api 2 of node 1. */
	pools = annotation(k, NP_KOORD_CPU_SHARED_POOLS);
	be = annotation(k, NP_KOORD_BE_CPU_SHARED_POOLS);
	{
		struct np_pools p;
		json_t *ws, *wb;
		np_state_pools(&st, &p);
		ws = np_shared_pools_to_json(&st, &p.shared);
		wb = np_shared_pools_to_json(&st, &p.be);
		assert_true(json_equal(pools, ws));
		assert_true(json_equal(be, wb));
		assert_int_equal(np_cpuset_count(&p.shared), 15 - 6);
		assert_int_equal(np_cpuset_count(&p.be), 15 - 4 - 2);
		json_decref(ws);
		json_decref(wb);
	}
	assert_int_equal(json_array_size(pools), 2);
	assert_int_equal(json_integer_value(json_object_get(
			     json_array_get(pools, 1), "socket")),
			 1);
	/* pod-cpu-allocs: the exclusive workloads only */
	allocs = annotation(k, NP_KOORD_POD_CPU_ALLOCS);
	assert_int_equal(json_array_size(allocs), 2);
	{
		const json_t *w = json_array_get(allocs, 0),
			     *a = json_array_get(allocs, 1);
		np_cpuset s;
		assert_string_equal(json_string_value(json_object_get(w, "name")),
				    "web");
		assert_string_equal(json_string_value(json_object_get(w, "uid")),
				    "0b5f1c6e-8a7b-4c1d-9e2f-3a4b5c6d7e8f");
		assert_string_equal(
		    json_string_value(json_object_get(w, "namespace")), "");
		assert_true(json_is_false(json_object_get(w, "managedByKubelet")));
		assert_int_equal(np_cpuset_parse(&s,
						 json_string_value(json_object_get(
						     w, "cpuset")),
						 NULL, 0),
				 0);
		assert_int_equal(np_cpuset_count(&s), 4);
		assert_string_equal(json_string_value(json_object_get(a, "name")),
				    "api");
		assert_string_equal(json_string_value(json_object_get(a, "uid")),
				    "");
	}
	json_decref(topo);
	json_decref(pools);
	json_decref(be);
	json_decref(allocs);
	json_decref(k);
	np_state_free(&st);
	np_topology_free(t);
}

static void test_pod_uid(void **state)
{
	char uid[40];

	(void)state;
	assert_true(np_export_pod_uid(
	    "kubepods.slice/kubepods-burstable.slice/kubepods-burstable-"
	    "pod0b5f1c6e_8a7b_4c1d_9e2f_3a4b5c6d7e8f.slice",
	    uid, sizeof(uid)));
	assert_string_equal(uid, "0b5f1c6e-8a7b-4c1d-9e2f-3a4b5c6d7e8f");
	assert_true(np_export_pod_uid(
	    "kubepods/besteffort/pod0b5f1c6e-8a7b-4c1d-9e2f-3a4b5c6d7e8f/c1",
	    uid, sizeof(uid)));
	assert_string_equal(uid, "0b5f1c6e-8a7b-4c1d-9e2f-3a4b5c6d7e8f");
	assert_false(np_export_pod_uid("pods/web", uid, sizeof(uid)));
	assert_false(np_export_pod_uid("kubepods-podxyz.slice", uid,
				       sizeof(uid)));
	assert_false(np_export_pod_uid(
	    "kubepods-pod0b5f1c6e_8a7b_4c1d_9e2f_3a4b5c6d7e8F.slice", uid,
	    sizeof(uid)));
	assert_false(np_export_pod_uid(NULL, uid, sizeof(uid)));
	assert_false(np_export_pod_uid(
	    "pod0b5f1c6e-8a7b-4c1d-9e2f-3a4b5c6d7e8f", uid, 36));
}

/* The status numaplaced reports, as requests.c builds it. */
static json_t *status_of(const struct np_node_state *st)
{
	json_t *ws = json_array();

	for (int i = 0; i < st->nworkloads; i++)
		json_array_append_new(ws,
				      np_workload_alloc_to_json(st, st->w[i]));
	return json_pack("{s:o,s:o,s:o,s:s}", "topology",
			 np_topology_to_json(st->topo), "pools",
			 np_pools_to_json(st), "workloads", ws, "offline_cpus",
			 "");
}

/* Everything but memory and hugepages' "available" (the status carries
 * no charges) is the same as from the state itself. */
static void test_from_status(void **state)
{
	struct np_topology *t = load_topo(TOPO "kubelet-2socket.json"), *t2;
	struct np_node_state st, st2;
	json_t *status, *a, *b, *ka, *kb;
	char err[512];

	(void)state;
	populated(&st, t);
	status = status_of(&st);
	if (np_export_state_from_status(status, &st.policy, &t2, &st2, err,
					sizeof(err)))
		fail_msg("%s", err);
	a = np_export_nrt(&st, "n");
	b = np_export_nrt(&st2, "n");
	assert_true(json_equal(json_object_get(a, "attributes"),
			       json_object_get(b, "attributes")));
	for (int i = 0; i < 2; i++) {
		assert_true(json_equal(res(zone(a, i), "cpu"),
				       res(zone(b, i), "cpu")));
		assert_true(json_equal(json_object_get(zone(a, i), "costs"),
				       json_object_get(zone(b, i), "costs")));
	}
	assert_true(json_equal(res(zone(a, 1), "nvidia.com/gpu"),
			       res(zone(b, 1), "nvidia.com/gpu")));
	assert_res(zone(b, 0), "memory", u64(64 * GiB), u64(64 * GiB),
		   u64(64 * GiB));
	ka = np_export_koordinator(&st);
	kb = np_export_koordinator(&st2);
	assert_true(json_equal(ka, kb));
	json_decref(a);
	json_decref(b);
	json_decref(ka);
	json_decref(kb);
	np_state_free(&st2);
	np_topology_free(t2);
	json_decref(status);
	np_state_free(&st);
	np_topology_free(t);
}

/* A field that is wrong is named, and nothing is left allocated. */
static void expect_bad_status(json_t *status, const char *needle)
{
	struct np_topology *t2 = (void *)1;
	struct np_node_state st2;
	struct np_node_policy p;
	char err[512] = "";

	np_policy_from_json(&p, NULL, NULL, NULL, 0);
	assert_int_equal(np_export_state_from_status(status, &p, &t2, &st2, err,
						     sizeof(err)),
			 -EINVAL);
	assert_null(t2);
	if (!strstr(err, needle))
		fail_msg("expected \"%s\" in \"%s\"", needle, err);
}

static void test_from_status_bad(void **state)
{
	struct np_topology *t = load_topo(TOPO "kubelet-2socket.json");
	struct np_node_state st;
	json_t *s, *c0;

	(void)state;
	populated(&st, t);
	s = status_of(&st);
	c0 = json_array_get(
	    json_object_get(json_array_get(json_object_get(s, "workloads"), 1),
			    "containers"),
	    0);
	/* api's CPUs claimed by web too */
	json_object_set_new(
	    c0, "cpuset",
	    json_deep_copy(json_object_get(
		json_array_get(json_object_get(s, "workloads"), 0), "cpuset")));
	expect_bad_status(s, "status.workloads[1].containers[0].cpuset: "
			     "overlaps");
	json_object_set_new(c0, "cpuset", json_string("99"));
	expect_bad_status(s, "status.workloads[1].containers[0].cpuset");
	json_object_set_new(c0, "cpuset", json_string("4-5"));
	json_object_set_new(c0, "devices",
			    json_pack("{s:[s]}", "nvidia.com/gpu", "nope"));
	expect_bad_status(s, "status.workloads[1].containers[0].devices");
	json_object_set_new(c0, "devices", json_object());
	json_object_set_new(json_array_get(json_object_get(s, "workloads"), 1),
			    "qos", json_string("Gold"));
	expect_bad_status(s, "status.workloads[1].qos: unknown \"Gold\"");
	json_object_set_new(json_object_get(s, "pools"), "reserved",
			    json_string("x"));
	expect_bad_status(s, "status.pools.reserved");
	json_object_del(s, "pools");
	expect_bad_status(s, "status.pools: expected an object");
	json_object_set_new(s, "topology", json_string("?"));
	expect_bad_status(s, "status.topology");
	json_decref(s);
	s = json_array();
	expect_bad_status(s, "status: expected an object");
	json_decref(s);
	np_state_free(&st);
	np_topology_free(t);
}

/* A state file read offline: the policy and allocations it holds. */
static void test_statefile_read(void **state)
{
	struct np_topology *t = load_topo(TOPO "kubelet-2socket.json");
	struct np_topology *other = np_test_topology(1, 2, 4, 2, true, GiB);
	struct np_node_state st, st2;
	char dir[] = "/tmp/np-export-XXXXXX", path[64], err[1024];
	json_t *a, *b;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	populated(&st, t);
	if (np_statefile_save(dir, &st, err, sizeof(err)))
		fail_msg("%s", err);
	snprintf(path, sizeof(path), "%s/state.json", dir);
	if (np_statefile_read(path, t, &st2, err, sizeof(err)))
		fail_msg("%s", err);
	assert_int_equal(st2.policy.tm_policy, NP_TM_SINGLE_NUMA_NODE);
	a = np_export_nrt(&st, "n");
	b = np_export_nrt(&st2, "n");
	assert_true(json_equal(a, b));
	json_decref(a);
	json_decref(b);
	np_state_free(&st2);
	/* another machine */
	assert_int_equal(np_statefile_read(path, other, &st2, err, sizeof(err)),
			 NP_STATEFILE_ETOPOLOGY);
	assert_non_null(strstr(err, path));
	/* damaged */
	f = fopen(path, "r+");
	assert_non_null(f);
	fseek(f, 40, SEEK_SET);
	fputc('#', f);
	fclose(f);
	assert_int_equal(np_statefile_read(path, t, &st2, err, sizeof(err)),
			 NP_STATEFILE_ECORRUPT);
	assert_non_null(strstr(err, path));
	unlink(path);
	assert_int_equal(np_statefile_read(path, t, &st2, err, sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "reading state file"));
	rmdir(dir);
	np_state_free(&st);
	np_topology_free(other);
	np_topology_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_nrt_zones),
	    cmocka_unit_test(test_nrt_costs),
	    cmocka_unit_test(test_nrt_no_distances),
	    cmocka_unit_test(test_nrt_policies),
	    cmocka_unit_test(test_koordinator),
	    cmocka_unit_test(test_pod_uid),
	    cmocka_unit_test(test_from_status),
	    cmocka_unit_test(test_from_status_bad),
	    cmocka_unit_test(test_statefile_read),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
