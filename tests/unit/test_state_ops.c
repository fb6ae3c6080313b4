// SPDX-License-Identifier: Apache-2.0
/*
 * The state's array and its name index (userspace/engine/state_ops.c):
 * after every admission, refused and rejected admission (the array grown
 * for it), release, insert (at the end and in the middle), copy and
 * copy-back, np_state_find answers as a scan
 * of the array does, for present and absent names, and the index is the
 * one in use (made for this array), so the answers come from it. The
 * caller's record of a workload (np_workload_rec) is one per workload
 * through copies, releases, inserts and re-placements, freed once.
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
#include "topo_gen.h"

#define GiB (1ULL << 30)
#define NAMES 300

static int scan(const struct np_node_state *st, const char *name)
{
	for (int i = 0; i < st->nworkloads; i++)
		if (!strcmp(st->w[i]->req.name, name))
			return i;
	return -1;
}

static uint32_t rnd(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

/* Every name of the pool (present or not) found where a scan finds it,
 * from the index. */
static void check(const struct np_node_state *st, const char *what, int step)
{
	char name[32];

	if (!np_state_indexed(st))
		fail_msg("step %d (%s): the index is not in use (%d workloads)",
			 step, what, st->nworkloads);
	for (int k = 0; k < NAMES; k++) {
		snprintf(name, sizeof(name), "w%d", k);
		if (np_state_index_lookup(st, name) != scan(st, name))
			fail_msg("step %d (%s): %s is at %d in the index, the "
				 "scan finds it at %d",
				 step, what, name,
				 np_state_index_lookup(st, name),
				 scan(st, name));
		if (np_state_find(st, name) != scan(st, name))
			fail_msg("step %d (%s): %s found at %d, the scan says %d",
				 step, what, name, np_state_find(st, name),
				 scan(st, name));
	}
}

/* Workload name (cgroup the same) of one container "main": qos, CPU in
 * millicores, memory; gpus > 0: that many devices of a resource the node
 * does not have. */
static int admit_one(struct np_node_state *st, const char *name,
		     enum np_qos qos, int64_t milli, uint64_t memory, int gpus,
		     struct np_decision *d)
{
	struct np_device_req dev = {.resource = "example.com/gpu",
				    .count = gpus};
	static struct np_container_req c[1];
	static char cgroup[64];
	struct np_workload_req w;
	char err[256];

	memset(&w, 0, sizeof(w));
	memset(c, 0, sizeof(c));
	w.c = c;
	snprintf(cgroup, sizeof(cgroup), "%s", name);
	w.cgroup = cgroup;
	snprintf(w.name, sizeof(w.name), "%s", name);
	w.qos = qos;
	w.ncontainers = 1;
	c[0].name = "main";
	c[0].cpu_milli = milli;
	c[0].memory = memory;
	c[0].ndev = gpus > 0;
	c[0].dev = gpus > 0 ? &dev : NULL;
	return np_admit(st, &w, d, err, sizeof(err));
}

/* A shared workload of 1m. */
static int admit(struct np_node_state *st, const char *name,
		 struct np_decision *d)
{
	return admit_one(st, name, NP_QOS_LS, 1, 0, 0, d);
}

static void test_index_random(void **state)
{
	struct np_topology *t = np_test_topology(2, 1, 2, 2, true, GiB);
	struct np_node_policy p = {0};
	struct np_node_state st;
	uint32_t seed = 0x5eed1234;
	char err[256], name[32];
	int ops[6] = {0};
	(void)state;

	p.cpu_policy = NP_CPU_POLICY_NONE;
	if (np_state_init(&st, t, &p, err, sizeof(err)))
		fail_msg("init: %s", err);
	check(&st, "init", 0);
	for (int step = 1; step <= 4000; step++) {
		int op = (int)(rnd(&seed) % 10), r;
		struct np_decision d;

		snprintf(name, sizeof(name), "w%u", rnd(&seed) % NAMES);
		if (op == 0 && scan(&st, name) < 0) {
			/* rejected after the array grew (at its capacity
			 * now and then): a device the node does not have */
			assert_int_equal(
			    admit_one(&st, name, NP_QOS_LS, 1, 0, 1, &d), 0);
			assert_false(d.admitted);
			ops[5]++;
		} else if (op < 5) { /* admit: refused when present */
			bool had = scan(&st, name) >= 0;
			r = admit(&st, name, &d);
			assert_int_equal(r, had ? -EEXIST : 0);
			assert_true(had || d.admitted);
			ops[0]++;
		} else if (op < 7) { /* release */
			bool had = scan(&st, name) >= 0;
			assert_int_equal(np_release(&st, name), had ? 0 : -ENOENT);
			ops[1]++;
		} else if (op < 9 && st.nworkloads > 1) {
			/* out and back in at another place (middle or end) */
			struct np_workload_alloc a;
			int from = (int)(rnd(&seed) % (unsigned)st.nworkloads);
			int to;
			assert_int_equal(np_release_keep(&st, from, &a), 0);
			to = rnd(&seed) % 4 == 0
				 ? st.nworkloads
				 : (int)(rnd(&seed) %
					 (unsigned)(st.nworkloads + 1));
			assert_int_equal(np_state_insert(&st, to, &a), 0);
			ops[2 + (to == st.nworkloads - 1)]++;
		} else { /* a copy, used from then on (defrag's pattern) */
			struct np_node_state cp;
			assert_int_equal(np_state_copy(&cp, &st), 0);
			check(&cp, "copy", step);
			np_state_free(&st);
			st = cp;
			ops[4]++;
		}
		check(&st, "after an operation", step);
	}
	print_message("  %d admissions, %d rejected, %d releases, %d inserts "
		      "in the middle, %d at the end, %d copies; %d workloads "
		      "at the end\n",
		      ops[0], ops[5], ops[1], ops[2], ops[3], ops[4],
		      st.nworkloads);
	assert_true(ops[2] > 100 && ops[3] > 100 && ops[5] > 50 &&
		    st.nworkloads > 50);
	np_state_free(&st);
	assert_int_equal(np_state_find(&st, "w1"), -1);
	np_topology_free(t);
}

/* An index not made for the array (the array replaced behind its
 * back) is not used: the answers are the scan's; a refresh makes it
 * again. A stale hit (entries swapped in place) is checked against the
 * entry's name. */
static void test_index_unused(void **state)
{
	struct np_topology *t = np_test_topology(2, 1, 2, 2, true, GiB);
	struct np_node_policy p = {0};
	struct np_node_state st;
	struct np_workload_alloc **w2;
	struct np_decision d;
	char err[256];
	(void)state;

	p.cpu_policy = NP_CPU_POLICY_NONE;
	if (np_state_init(&st, t, &p, err, sizeof(err)))
		fail_msg("init: %s", err);
	assert_int_equal(admit(&st, "a", &d), 0);
	assert_int_equal(admit(&st, "b", &d), 0);
	assert_true(np_state_indexed(&st));
	assert_int_equal(np_state_find(&st, "b"), 1);
	/* a new array, swapped, behind the index's back */
	w2 = malloc(sizeof(*w2) * (size_t)st.cap);
	assert_non_null(w2);
	w2[0] = st.w[1];
	w2[1] = st.w[0];
	free(st.w);
	st.w = w2;
	assert_false(np_state_indexed(&st));
	assert_int_equal(np_state_find(&st, "b"), 0);
	assert_int_equal(np_state_find(&st, "a"), 1);
	assert_int_equal(np_state_find(&st, "c"), -1);
	/* the next admission makes it again */
	assert_int_equal(admit(&st, "c", &d), 0);
	assert_true(np_state_indexed(&st));
	assert_int_equal(np_state_find(&st, "c"), 2);
	assert_int_equal(np_state_find(&st, "b"), 0);
	/* swapped in place: the index is "in use" but its hits are stale */
	{
		struct np_workload_alloc *x = st.w[0];
		st.w[0] = st.w[1];
		st.w[1] = x;
	}
	assert_true(np_state_indexed(&st));
	assert_int_equal(np_state_find(&st, "b"), 1);
	assert_int_equal(np_state_find(&st, "a"), 0);
	assert_int_equal(np_state_refresh(&st), 0);
	assert_int_equal(np_state_find(&st, "b"), 1);
	np_state_free(&st);
	np_topology_free(t);
}

/* The state's cache as a refresh makes it, compared on a copy so that
 * st's own cache goes on being kept by admissions and releases alone
 * (a subtraction after a subtraction after ...): every aggregate, the
 * node counts too; shared parts may be marked where a refresh finds none
 * (an admission's own parts, rejected), never missed. Returns whether
 * st's parts are marked shared. */
static bool check_cache(const struct np_node_state *st, int step)
{
	const struct np_state_cache *k = &st->cache;
	struct np_node_state cp;
	const struct np_state_cache *r = &cp.cache;
	const char *differs = NULL;
	int nd = k->ndevices;

	assert_int_equal(np_state_copy(&cp, st), 0);
	assert_int_equal(np_state_refresh(&cp), 0);
	if (!np_cpuset_equal(&k->excl, &r->excl))
		differs = "excl";
	else if (!np_cpuset_equal(&k->lse, &r->lse))
		differs = "lse";
	else if (memcmp(k->mem, r->mem, sizeof(k->mem)))
		differs = "mem";
	else if (memcmp(k->huge, r->huge, sizeof(k->huge)))
		differs = "huge";
	else if (memcmp(k->used, r->used, sizeof(k->used)))
		differs = "used";
	else if (memcmp(k->nused, r->nused, sizeof(k->nused)))
		differs = "nused";
	/* a node charged by two groups (a topology policy that let it):
	 * np_state_insert in the middle leaves the group of the one put in
	 * last, a refresh the one last in the array, as before; the next
	 * release recomputes, seeing shared_parts */
	else if (!k->shared_parts && memcmp(k->group, r->group, sizeof(k->group)))
		differs = "group";
	else if (nd != r->ndevices ||
		 memcmp(k->dev_taken, r->dev_taken, sizeof(bool) * (size_t)nd))
		differs = "dev_taken";
	else if (!np_cpuset_equal(&k->marked[0], &r->marked[0]) ||
		 !np_cpuset_equal(&k->marked[1], &r->marked[1]) ||
		 memcmp(k->nmarked, r->nmarked, sizeof(k->nmarked)))
		differs = "exclusive-policy marks";
	else if (r->shared_parts && !k->shared_parts)
		differs = "shared_parts (a refresh finds them, the cache not)";
	if (differs)
		fail_msg("step %d: the cache's %s differs from a refresh's", step,
			 differs);
	np_state_free(&cp);
	return k->shared_parts;
}

/* Exclusive workloads with memory charged beside shared ones: releases
 * of either keep the cache (and the index) as a refresh makes them. */
static void test_release_cache(void **state)
{
	struct np_topology *t = np_test_topology(2, 2, 8, 2, true, 64 * GiB);
	struct np_node_policy p;
	struct np_node_state st;
	json_t *pj = json_pack("{s:s,s:s}", "cpu_policy", "static",
			       "reserved_cpus", "0,1");
	uint32_t seed = 0xcace;
	char err[256], name[32];
	int rel[2] = {0};
	(void)state;

	if (np_policy_from_json(&p, pj, "policy", err, sizeof(err)) ||
	    np_state_init(&st, t, &p, err, sizeof(err)))
		fail_msg("init: %s", err);
	json_decref(pj);
	for (int step = 1; step <= 3000; step++) {
		int k = (int)(rnd(&seed) % 200);
		bool lse = k % 4 == 0;

		snprintf(name, sizeof(name), "w%d", k);
		if (scan(&st, name) < 0 && rnd(&seed) % 3) {
			struct np_decision d;
			assert_int_equal(
			    admit_one(&st, name, lse ? NP_QOS_LSE : NP_QOS_LS,
				      lse ? 1000 * (1 + k % 3) : 100,
				      lse ? GiB : 0, 0, &d),
			    0);
		} else if (scan(&st, name) >= 0) {
			assert_int_equal(np_release(&st, name), 0);
			rel[lse]++;
		}
		check(&st, "release/admit", step);
		check_cache(&st, step);
	}
	print_message("  %d shared and %d exclusive releases, %d workloads "
		      "at the end\n",
		      rel[0], rel[1], st.nworkloads);
	assert_true(rel[0] > 100 && rel[1] > 20);
	np_state_free(&st);
	np_topology_free(t);
}

/* Pod name (Guaranteed) with pod-level resources of budget CPUs and one
 * container asking own: the rest of the budget is the pod's (pod_rest). */
static int admit_pod(struct np_node_state *st, const char *name, int own,
		     int budget, struct np_decision *d)
{
	static struct np_container_req c[1];
	static char cgroup[64];
	struct np_workload_req w;
	char err[256];

	memset(&w, 0, sizeof(w));
	memset(c, 0, sizeof(c));
	w.c = c;
	snprintf(cgroup, sizeof(cgroup), "%s", name);
	w.cgroup = cgroup;
	snprintf(w.name, sizeof(w.name), "%s", name);
	w.qos = NP_QOS_GUARANTEED;
	w.ncontainers = 1;
	w.has_pod_res = true;
	w.pod_cpu_milli = 1000 * budget;
	c[0].name = "main";
	c[0].cpu_milli = 1000 * own;
	return np_admit(st, &w, d, err, sizeof(err));
}

/* Pods whose budget is more than their container's request hold the rest
 * (pod_rest): admitted, released, moved out and back in (np_release_keep,
 * np_state_insert), the cache is what a refresh makes, the rest in it. */
static void test_pod_rest_cache(void **state)
{
	struct np_topology *t = np_test_topology(2, 2, 8, 2, true, 64 * GiB);
	struct np_node_policy p;
	struct np_node_state st;
	json_t *pj = json_pack("{s:s,s:s}", "cpu_policy", "static",
			       "reserved_cpus", "0,1");
	uint32_t seed = 0x9d35;
	char err[256], name[32];
	int ops[3] = {0};
	(void)state;

	if (np_policy_from_json(&p, pj, "policy", err, sizeof(err)) ||
	    np_state_init(&st, t, &p, err, sizeof(err)))
		fail_msg("init: %s", err);
	json_decref(pj);
	for (int step = 1; step <= 2000; step++) {
		int k = (int)(rnd(&seed) % 40), op = (int)(rnd(&seed) % 3);
		struct np_decision d;

		snprintf(name, sizeof(name), "p%d", k);
		if (scan(&st, name) < 0) {
			assert_int_equal(admit_pod(&st, name, 1, 2 + k % 3, &d),
					 0);
			if (d.admitted) {
				assert_non_null(d.alloc->pod_rest);
				assert_int_equal(np_cpuset_count(d.alloc->pod_rest),
						 1 + k % 3);
				ops[0]++;
			}
		} else if (op == 0) {
			assert_int_equal(np_release(&st, name), 0);
			ops[1]++;
		} else {
			struct np_workload_alloc a;
			int from = scan(&st, name);
			assert_int_equal(np_release_keep(&st, from, &a), 0);
			assert_int_equal(
			    np_state_insert(&st,
					    (int)(rnd(&seed) %
						  (unsigned)(st.nworkloads + 1)),
					    &a),
			    0);
			ops[2]++;
		}
		check(&st, "pod", step);
		check_cache(&st, step);
	}
	print_message("  %d pods admitted, %d released, %d moved\n", ops[0],
		      ops[1], ops[2]);
	assert_true(ops[0] > 50 && ops[1] > 20 && ops[2] > 50);
	np_state_free(&st);
	np_topology_free(t);
}

/* 2 sockets of one node each, 8 cores x 2 threads per node (CPU c and
 * c + 16 siblings), 8 GiB and 64 2 MiB pages per node, two GPUs per node
 * and two NICs of no node. */
static struct np_topology *devices_topology(void)
{
	json_t *j = json_pack("{s:[],s:[[i,i],[i,i]],s:[],s:[]}", "cpus",
			      "distances", 10, 21, 21, 10, "numa_nodes",
			      "devices");
	json_t *cpus = json_object_get(j, "cpus");
	json_t *nodes = json_object_get(j, "numa_nodes");
	json_t *devs = json_object_get(j, "devices");
	struct np_topology *t;
	char err[256], id[32];

	for (int c = 0; c < 32; c++)
		json_array_append_new(
		    cpus, json_pack("{s:i,s:i,s:i,s:i,s:i}", "cpu", c, "core",
				    c % 16, "socket", c % 16 / 8, "numa",
				    c % 16 / 8, "l3", c % 16 / 8));
	for (int n = 0; n < 2; n++)
		json_array_append_new(
		    nodes, json_pack("{s:i,s:I,s:[{s:i,s:i,s:i}]}", "id", n,
				     "memory", (json_int_t)(8 * GiB),
				     "hugepages", "size_kb", 2048, "total", 64,
				     "free", 64));
	for (int d = 0; d < 6; d++) {
		snprintf(id, sizeof(id), "0000:%02x:00.0", d + 1);
		json_array_append_new(
		    devs, d < 4 ? json_pack("{s:s,s:s,s:s,s:i}", "id", id,
					    "resource", "example.com/gpu",
					    "class", "gpu", "numa", d / 2)
				: json_pack("{s:s,s:s,s:s,s:n}", "id", id,
					    "resource", "example.com/nic",
					    "class", "nic", "numa"));
	}
	if (np_topology_from_json(&t, j, "topology", err, sizeof(err)))
		fail_msg("topology: %s", err);
	json_decref(j);
	return t;
}

/* A random workload's spec: shared, exclusive with memory, hugepages,
 * devices and Koordinator's exclusive policies, init containers, pod
 * budgets, LSR, and some that fit only in part (a first container
 * placed, a later one too big), so that a rejection takes a share out
 * again. */
static void random_spec(uint32_t *seed, const char *name, char *buf,
			size_t len)
{
	static const char *const qos[] = {"LSE", "Guaranteed", "LSR"};
	int kind = (int)(rnd(seed) % 8), cpu = 1 + (int)(rnd(seed) % 3);
	const char *q = qos[rnd(seed) % 3];
	char mem[64] = "", huge[64] = "", dev[96] = "", rs[96] = "";
	static const char *const excl[] = {"PCPULevel", "NUMANodeLevel",
					   "None"};

	if (rnd(seed) % 2)
		snprintf(mem, sizeof(mem), ",\"memory\":\"%uMi\"",
			 256 * (1 + rnd(seed) % 12));
	if (rnd(seed) % 4 == 0)
		snprintf(huge, sizeof(huge), ",\"hugepages-2Mi\":\"%uMi\"",
			 2 * (1 + rnd(seed) % 40));
	if (rnd(seed) % 3 == 0)
		snprintf(dev, sizeof(dev), ",\"devices\":{\"example.com/%s\":%u}",
			 rnd(seed) % 2 ? "gpu" : "nic", 1 + rnd(seed) % 2);
	/* Koordinator's exclusive policies: the marks the cache keeps */
	if (rnd(seed) % 2)
		snprintf(rs, sizeof(rs),
			 ",\"resourceSpec\":{\"preferredCPUExclusivePolicy\":"
			 "\"%s\"}",
			 excl[rnd(seed) % 3]);
	switch (kind) {
	case 0:
	case 1: /* shared */
		snprintf(buf, len,
			 "{\"name\":\"%s\",\"qos\":\"%s\",\"containers\":"
			 "[{\"name\":\"m\",\"cpu\":\"%dm\"%s}]}",
			 name, rnd(seed) % 2 ? "LS" : "BE", 100 * cpu, mem);
		break;
	case 2: /* exclusive, one or two containers */
		snprintf(buf, len,
			 "{\"name\":\"%s\",\"qos\":\"%s\"%s,\"containers\":"
			 "[{\"name\":\"m\",\"cpu\":\"%d\"%s%s%s}%s]}",
			 name, q, rs, cpu, mem, huge, dev,
			 rnd(seed) % 2 ? ",{\"name\":\"s\",\"cpu\":\"1\"}" : "");
		break;
	case 3: /* an init container whose CPUs (and devices) are reused */
		snprintf(buf, len,
			 "{\"name\":\"%s\",\"qos\":\"Guaranteed\","
			 "\"init_containers\":[{\"name\":\"i\",\"cpu\":\"%d\"%s}],"
			 "\"containers\":[{\"name\":\"m\",\"cpu\":\"%d\"%s%s}]}",
			 name, 1 + (int)(rnd(seed) % 4), dev, cpu, mem, dev);
		break;
	case 4: /* a pod budget: the rest the pod's, or shared by one */
		snprintf(buf, len,
			 "{\"name\":\"%s\",\"qos\":\"Guaranteed\",\"resources\":"
			 "{\"cpu\":\"%d\"%s},\"containers\":[{\"name\":\"a\","
			 "\"cpu\":\"%d\"}%s]}",
			 name, cpu + 1 + (int)(rnd(seed) % 2), mem, cpu,
			 rnd(seed) % 2 ? ",{\"name\":\"s\"}" : "");
		break;
	case 5: /* the first container fits, the second not */
		snprintf(buf, len,
			 "{\"name\":\"%s\",\"qos\":\"%s\",\"containers\":"
			 "[{\"name\":\"m\",\"cpu\":\"%d\"%s%s},{\"name\":\"b\","
			 "\"cpu\":\"%d\"%s}]}",
			 name, q, cpu, mem, dev, 8 + (int)(rnd(seed) % 24),
			 rnd(seed) % 2 ? ",\"devices\":{\"example.com/gpu\":3}"
				       : "");
		break;
	default: /* exclusive with everything */
		snprintf(buf, len,
			 "{\"name\":\"%s\",\"qos\":\"%s\"%s,\"containers\":"
			 "[{\"name\":\"m\",\"cpu\":\"%d\"%s%s%s}]}",
			 name, q, rs, cpu, mem, huge, dev);
	}
}

/*
 * Random admissions (some rejected after a first container was placed),
 * releases, moves out and back in (at the end or in the middle) and copies
 * of workloads of every kind, under four Topology Manager policies and
 * both scopes: after each, the cache (kept by subtraction) is what a
 * refresh makes, and the index answers as a scan.
 */
static void test_cache_random(void **state)
{
	static const char *const policies[] = {
	    "{\"cpu_policy\":\"static\",\"reserved_cpus\":\"0,16\","
	    "\"topology_policy\":\"best-effort\"}",
	    "{\"cpu_policy\":\"static\",\"reserved_cpus\":2,"
	    "\"topology_policy\":\"single-numa-node\"}",
	    "{\"cpu_policy\":\"static\",\"reserved_cpus\":2,"
	    "\"topology_policy\":\"restricted\",\"topology_scope\":\"pod\"}",
	    "{\"cpu_policy\":\"static\",\"reserved_cpus\":1,"
	    "\"topology_policy\":\"none\"}",
	};
	struct np_topology *t = devices_topology();
	uint32_t seed = 0xc0ffee;
	int ops[6] = {0}, shared = 0, steps = 0;
	(void)state;

	for (unsigned pi = 0; pi < sizeof(policies) / sizeof(*policies); pi++) {
		json_t *pj = json_loads(policies[pi], 0, NULL);
		struct np_node_policy p;
		struct np_node_state st;
		char err[256], name[32], spec[768];

		if (np_policy_from_json(&p, pj, "policy", err, sizeof(err)) ||
		    np_state_init(&st, t, &p, err, sizeof(err)))
			fail_msg("policy %u: %s", pi, err);
		json_decref(pj);
		for (int step = 1; step <= 1500; step++, steps++) {
			int k = (int)(rnd(&seed) % 60), op = (int)(rnd(&seed) % 8);
			int at;

			snprintf(name, sizeof(name), "w%d", k);
			at = scan(&st, name);
			if (at < 0) {
				struct np_workload_req w;
				struct np_decision d;
				json_t *j;

				random_spec(&seed, name, spec, sizeof(spec));
				assert_non_null(j = json_loads(spec, 0, NULL));
				if (np_workload_req_from_json(&w, j, "spec", err,
							      sizeof(err)))
					fail_msg("%s: %s", spec, err);
				json_decref(j);
				assert_int_equal(np_admit(&st, &w, &d, err,
							  sizeof(err)),
						 0);
				ops[d.admitted ? 0 : 1]++;
				np_workload_req_free(&w);
			} else if (op < 4) {
				assert_int_equal(np_release(&st, name), 0);
				ops[2]++;
			} else if (op < 7) {
				struct np_workload_alloc a;
				int to;
				assert_int_equal(np_release_keep(&st, at, &a), 0);
				to = op == 4 ? st.nworkloads
					     : (int)(rnd(&seed) %
						     (unsigned)(st.nworkloads + 1));
				assert_int_equal(np_state_insert(&st, to, &a), 0);
				ops[3]++;
			} else {
				struct np_node_state cp;
				assert_int_equal(np_state_copy(&cp, &st), 0);
				np_state_free(&st);
				st = cp;
				ops[4]++;
			}
			check(&st, "random", step);
			shared += check_cache(&st, step);
		}
		ops[5] += st.nworkloads;
		np_state_free(&st);
	}
	print_message("  %d admitted, %d rejected, %d released, %d moved, "
		      "%d copies; %d of %d steps with shared parts\n",
		      ops[0], ops[1], ops[2], ops[3], ops[4], shared, steps);
	assert_true(ops[0] > 1000 && ops[1] > 300 && ops[2] > 500 &&
		    ops[3] > 500);
	np_topology_free(t);
}

/* The caller's record of a workload (struct np_workload_rec): one per
 * workload, whatever holds it. Copies share it (counted), a release and
 * an insert carry it, a re-placement hands it on (np_workload_rec_move),
 * and it is freed once, with the last allocation that holds it: at the
 * workload's release, or with the state. */
struct rec {
	struct np_workload_rec r; /* first */
	int *freed;
};

static void rec_free(struct np_workload_rec *r)
{
	struct rec *x = (struct rec *)r;

	(*x->freed)++;
	free(x);
}

static struct rec *rec_new(struct np_workload_alloc *a, int *freed)
{
	struct rec *x = calloc(1, sizeof(*x));

	assert_non_null(x);
	x->r.free = rec_free;
	x->freed = freed;
	np_workload_rec_set(a, &x->r);
	assert_int_equal(x->r.refs, 1);
	return x;
}

static void test_record(void **state)
{
	struct np_topology *t = np_test_topology(2, 1, 2, 2, true, GiB);
	struct np_node_policy p = {0};
	struct np_node_state st, cp;
	struct np_workload_alloc keep, one;
	struct np_decision d;
	struct rec *ra, *rb, *rc;
	int freed_a = 0, freed_b = 0, freed_c = 0, i;
	char err[256];
	(void)state;

	p.cpu_policy = NP_CPU_POLICY_NONE;
	if (np_state_init(&st, t, &p, err, sizeof(err)))
		fail_msg("init: %s", err);
	assert_int_equal(admit(&st, "a", &d), 0);
	assert_null(d.alloc->rec); /* an admission makes none */
	assert_int_equal(admit(&st, "b", &d), 0);
	assert_int_equal(admit(&st, "c", &d), 0);
	ra = rec_new(st.w[np_state_find(&st, "a")], &freed_a);
	rb = rec_new(st.w[np_state_find(&st, "b")], &freed_b);

	/* a copy of the state holds the same records, counted */
	assert_int_equal(np_state_copy(&cp, &st), 0);
	assert_ptr_equal(cp.w[np_state_find(&cp, "a")]->rec, &ra->r);
	assert_int_equal(ra->r.refs, 2);
	np_state_free(&cp);
	assert_int_equal(ra->r.refs, 1);
	assert_int_equal(freed_a, 0);
	/* so does a copy of one allocation */
	assert_int_equal(np_workload_alloc_copy(&one, st.w[np_state_find(&st, "b")]), 0);
	assert_ptr_equal(one.rec, &rb->r);
	assert_int_equal(rb->r.refs, 2);
	np_workload_alloc_free(&one);
	assert_null(one.rec);
	assert_int_equal(rb->r.refs, 1);

	/* out and back in: the same record */
	i = np_state_find(&st, "a");
	assert_int_equal(np_release_keep(&st, i, &keep), 0);
	assert_ptr_equal(keep.rec, &ra->r);
	assert_int_equal(np_state_insert(&st, st.nworkloads, &keep), 0);
	assert_ptr_equal(st.w[np_state_find(&st, "a")]->rec, &ra->r);
	assert_int_equal(freed_a, 0);

	/* placed anew (hotplug's re-placement): the new allocation takes
	 * the record over, the old one lets it go without freeing it */
	i = np_state_find(&st, "a");
	assert_int_equal(np_release_keep(&st, i, &keep), 0);
	assert_int_equal(np_admit(&st, &keep.req, &d, err, sizeof(err)), 0);
	assert_true(d.admitted);
	np_workload_rec_move(st.w[np_state_find(&st, "a")], &keep);
	assert_null(keep.rec);
	np_workload_alloc_free(&keep);
	assert_ptr_equal(st.w[np_state_find(&st, "a")]->rec, &ra->r);
	assert_int_equal(ra->r.refs, 1);
	assert_int_equal(freed_a, 0);
	/* moved onto a copy that holds it already: counted once */
	assert_int_equal(np_workload_alloc_copy(&one, st.w[np_state_find(&st, "a")]), 0);
	assert_int_equal(ra->r.refs, 2);
	np_workload_rec_move(&one, st.w[np_state_find(&st, "a")]);
	assert_int_equal(ra->r.refs, 1);
	np_workload_rec_move(st.w[np_state_find(&st, "a")], &one);
	np_workload_alloc_free(&one);
	assert_int_equal(ra->r.refs, 1);
	assert_int_equal(freed_a, 0);

	/* set again: the old record goes */
	rc = rec_new(st.w[np_state_find(&st, "c")], &freed_c);
	(void)rc;
	rec_new(st.w[np_state_find(&st, "c")], &freed_c);
	assert_int_equal(freed_c, 1);

	/* released: freed, once */
	assert_int_equal(np_release(&st, "b"), 0);
	assert_int_equal(freed_b, 1);
	/* the state freed: every record left, once */
	np_state_free(&st);
	assert_int_equal(freed_a, 1);
	assert_int_equal(freed_b, 1);
	assert_int_equal(freed_c, 2);
	np_topology_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_index_random),
	    cmocka_unit_test(test_index_unused),
	    cmocka_unit_test(test_release_cache),
	    cmocka_unit_test(test_pod_rest_cache),
	    cmocka_unit_test(test_cache_random),
	    cmocka_unit_test(test_record),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
