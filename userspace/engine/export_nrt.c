// SPDX-License-Identifier: Apache-2.0
/*
 * A node as the cluster reads it: the NodeResourceTopology v1alpha2 object
 * and Koordinator's node annotations (numaplace/export.h). Pure.
 */
#include "numaplace/export.h"
#include "engine/json_util.h"
#include "numaplace/names.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <ctype.h>
#include <string.h>

/* [policy][scope], NFD topology-updater's topologypolicy.DetectTopologyPolicy */
static const char *const tm_policies[][2] = {
    [NP_TM_NONE] = {"None", "None"},
    [NP_TM_BEST_EFFORT] = {"BestEffortContainerLevel", "BestEffortPodLevel"},
    [NP_TM_RESTRICTED] = {"RestrictedContainerLevel", "RestrictedPodLevel"},
    [NP_TM_SINGLE_NUMA_NODE] = {"SingleNUMANodeContainerLevel",
				"SingleNUMANodePodLevel"},
};

const char *np_export_tm_policies(enum np_tm_policy p, enum np_tm_scope s)
{
	if ((int)p < 0 || (int)p >= NP_NAMES_LEN(tm_policies) ||
	    (s != NP_TM_SCOPE_CONTAINER && s != NP_TM_SCOPE_POD))
		return "None";
	return tm_policies[p][s == NP_TM_SCOPE_POD];
}

/* A Kubernetes quantity: a plain decimal integer as a string. */
static json_t *qty(uint64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	return json_string(buf);
}

static json_t *resource(const char *name, uint64_t cap, uint64_t alloc,
			uint64_t avail)
{
	return json_pack("{s:s,s:o,s:o,s:o}", "name", name, "capacity",
			 qty(cap), "allocatable", qty(alloc), "available",
			 qty(avail));
}

static json_t *name_value(const char *name, const char *value)
{
	return json_pack("{s:s,s:s}", "name", name, "value", value);
}

/* "hugepages-2Mi", "hugepages-1Gi", "hugepages-64Ki": the page size in the
 * largest binary unit that divides it, as the kubelet names it. */
static void hugepage_name(uint64_t size_kb, char *buf, size_t len)
{
	static const char *const unit[] = {"Ki", "Mi", "Gi", "Ti"};
	int u = 0;

	while (u < 3 && size_kb >= 1024 && size_kb % 1024 == 0) {
		size_kb /= 1024;
		u++;
	}
	snprintf(buf, len, "hugepages-%" PRIu64 "%s", size_kb, unit[u]);
}

static uint64_t minus(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

/* CPUs of NUMA node index i: online ones; allocatable without the
 * reserved; available without the exclusive sets and offline CPUs. */
static json_t *cpu_resource(const struct np_node_state *st, int i)
{
	const np_cpuset *cpus = &st->topo->numa[i].u.cpus;
	np_cpuset held;
	int cap = np_cpuset_count(cpus);
	int alloc = cap - np_cpuset_count_and(cpus, &st->reserved);

	np_cpuset_or(&held, &st->cache.excl, &st->offline);
	np_cpuset_andnot(&held, &held, &st->reserved);
	return resource("cpu", (uint64_t)cap, (uint64_t)alloc,
			(uint64_t)(alloc - np_cpuset_count_and(cpus, &held)));
}

/* Devices with NUMA affinity to node id: one resource per name, sorted
 * by name as they come (a device on no node belongs to no zone). */
static int device_resources(const struct np_node_state *st, int id,
			    json_t *res)
{
	const struct np_topology *t = st->topo;

	for (int d = 0; d < t->ndevices; d++) {
		uint64_t n = 0, free_n = 0;
		bool first = true;

		if (t->devices[d].numa != id)
			continue;
		for (int e = 0; e < d && first; e++)
			if (t->devices[e].numa == id &&
			    !strcmp(t->devices[e].resource,
				    t->devices[d].resource))
				first = false;
		if (!first)
			continue;
		for (int e = d; e < t->ndevices; e++)
			if (t->devices[e].numa == id &&
			    !strcmp(t->devices[e].resource,
				    t->devices[d].resource)) {
				n++;
				free_n += !(st->cache.dev_taken &&
					    e < st->cache.ndevices &&
					    st->cache.dev_taken[e]);
			}
		if (json_array_append_new(
			res, resource(t->devices[d].resource, n, n, free_n)))
			return -ENOMEM;
	}
	return 0;
}

/* cpu, memory (when the topology knows it), hugepages, devices. Memory
 * has no reservation in the model: allocatable = capacity. */
static json_t *zone_resources(const struct np_node_state *st, int i)
{
	const struct np_numa_node *nn = &st->topo->numa[i];
	int id = nn->u.id;
	json_t *res = json_array();
	char name[48];

	if (!res || json_array_append_new(res, cpu_resource(st, i)))
		goto fail;
	if (nn->mem_total &&
	    json_array_append_new(
		res, resource("memory", nn->mem_total, nn->mem_total,
			      minus(nn->mem_total, st->cache.mem[id]))))
		goto fail;
	for (int h = 0; h < nn->nhuge; h++) {
		uint64_t sz = nn->huge[h].size_kb * 1024;
		uint64_t cap = nn->huge[h].total * sz;

		hugepage_name(nn->huge[h].size_kb, name, sizeof(name));
		if (json_array_append_new(
			res, resource(name, cap, cap,
				      minus(cap, st->cache.huge[h][id] * sz))))
			goto fail;
	}
	if (device_resources(st, id, res))
		goto fail;
	return res;
fail:
	json_decref(res);
	return NULL;
}

/* Distances to every zone, itself included; NULL when the topology has
 * none (numaplace's 10/20 defaults are not reported as facts). */
static json_t *costs(const struct np_topology *t, int i)
{
	json_t *a;
	char name[32];

	if (!t->distances_known || !(a = json_array()))
		return NULL;
	for (int j = 0; j < t->nnuma; j++) {
		snprintf(name, sizeof(name), "node-%d", t->numa[j].u.id);
		if (json_array_append_new(
			a, json_pack("{s:s,s:I}", "name", name, "value",
				     (json_int_t)np_topology_distance(t, i, j)))) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

static json_t *zone(const struct np_node_state *st, int i)
{
	const struct np_topology *t = st->topo;
	json_t *z;
	char name[32];

	snprintf(name, sizeof(name), "node-%d", t->numa[i].u.id);
	z = json_pack("{s:s,s:s}", "name", name, "type", "Node");
	if (z && t->distances_known &&
	    json_object_set_new(z, "costs", costs(t, i)))
		goto fail;
	if (z && json_object_set_new(z, "resources", zone_resources(st, i)))
		goto fail;
	return z;
fail:
	json_decref(z);
	return NULL;
}

json_t *np_export_nrt(const struct np_node_state *st, const char *node_name)
{
	const struct np_node_policy *p = &st->policy;
	json_t *zones = json_array(), *o;

	for (int i = 0; zones && i < st->topo->nnuma; i++)
		if (json_array_append_new(zones, zone(st, i))) {
			json_decref(zones);
			return NULL;
		}
	o = json_pack(
	    "{s:s,s:s,s:{s:s},s:[o,o],s:[s],s:o}", "apiVersion",
	    NP_NRT_API_VERSION, "kind", NP_NRT_KIND, "metadata", "name",
	    node_name, "attributes",
	    name_value("topologyManagerPolicy", np_tm_policy_name(p->tm_policy)),
	    name_value("topologyManagerScope", np_tm_scope_name(p->tm_scope)),
	    "topologyPolicies", np_export_tm_policies(p->tm_policy, p->tm_scope),
	    "zones", zones);
	return o;
}

/* ---- Koordinator ---- */

bool np_export_pod_uid(const char *cgroup, char *uid, size_t len)
{
	const char *c = cgroup, *next, *pod;

	for (; c && *c; c = next) {
		size_t n;

		next = strchr(c, '/');
		n = next ? (size_t)(next - c) : strlen(c);
		next = next ? next + 1 : NULL;
		if (n > 6 && !strncmp(c + n - 6, ".slice", 6))
			n -= 6; /* kubepods-burstable-pod<uid>.slice */
		pod = NULL;
		for (size_t k = 0; k + 3 <= n; k++)
			if (!strncmp(c + k, "pod", 3) &&
			    (k == 0 || c[k - 1] == '-'))
				pod = c + k + 3;
		if (!pod || (size_t)(c + n - pod) != 36 || len <= 36)
			continue;
		for (size_t k = 0; k < 36; k++) {
			char ch = pod[k] == '_' ? '-' : pod[k];
			bool dash = k == 8 || k == 13 || k == 18 || k == 23;
			if (dash ? ch != '-'
				 : !strchr("0123456789abcdef", ch) || !ch) {
				pod = NULL;
				break;
			}
			uid[k] = ch;
		}
		if (pod) {
			uid[36] = '\0';
			return true;
		}
	}
	return false;
}

/* {"detail":[{"id","core","socket","node"}]} over the online CPUs. */
static json_t *cpu_topology(const struct np_topology *t)
{
	json_t *d = json_array();

	for (int c = 0; d && c < t->max_cpu; c++) {
		const struct np_cpu *x = &t->cpu[c];
		if (!x->present || !np_cpuset_test(&t->online, c))
			continue;
		if (json_array_append_new(
			d, json_pack("{s:i,s:i,s:i,s:i}", "id", c, "core",
				     t->cores[x->core].id, "socket",
				     t->sockets[x->socket].id, "node",
				     t->numa[x->numa].u.id))) {
			json_decref(d);
			return NULL;
		}
	}
	return json_pack("{s:o}", "detail", d);
}

/* The exclusive workloads: [{"namespace","name","uid","cpuset",
 * "managedByKubelet"}]; numaplace has no namespaces. */
static json_t *pod_cpu_allocs(const struct np_node_state *st)
{
	json_t *a = json_array();
	char uid[40];

	for (int i = 0; a && i < st->nworkloads; i++) {
		const struct np_workload_alloc *w = st->w[i];
		np_cpuset cpus;

		np_workload_exclusive_cpus(w, &cpus);
		if (np_cpuset_empty(&cpus))
			continue;
		if (!np_export_pod_uid(w->req.cgroup, uid, sizeof(uid)))
			uid[0] = '\0';
		if (json_array_append_new(
			a, json_pack("{s:s,s:s,s:s,s:o,s:b}", "namespace", "",
				     "name", w->req.name, "uid", uid, "cpuset",
				     np_json_cpuset_str(&cpus), "managedByKubelet",
				     0))) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

/* The annotation value: j as compact JSON text (j is consumed). */
static int put_text(json_t *o, const char *key, json_t *j)
{
	char *s = j ? json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
	int r = s ? json_object_set_new(o, key, json_string(s)) : -1;

	free(s);
	json_decref(j);
	return r;
}

json_t *np_export_koordinator(const struct np_node_state *st)
{
	json_t *o = json_object();
	struct np_pools p;

	np_state_pools(st, &p);
	if (!o || put_text(o, NP_KOORD_CPU_TOPOLOGY, cpu_topology(st->topo)) ||
	    put_text(o, NP_KOORD_CPU_SHARED_POOLS,
		     np_shared_pools_to_json(st, &p.shared)) ||
	    put_text(o, NP_KOORD_BE_CPU_SHARED_POOLS,
		     np_shared_pools_to_json(st, &p.be)) ||
	    put_text(o, NP_KOORD_POD_CPU_ALLOCS, pod_cpu_allocs(st))) {
		json_decref(o);
		return NULL;
	}
	return o;
}

bool np_export_node_name_ok(const char *s)
{
	size_t n = strlen(s);

	if (!n || n > 253 || !isalnum((unsigned char)s[0]) ||
	    !isalnum((unsigned char)s[n - 1]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!(islower((unsigned char)s[i]) ||
		      isdigit((unsigned char)s[i]) || s[i] == '-' ||
		      s[i] == '.'))
			return false;
	return true;
}
