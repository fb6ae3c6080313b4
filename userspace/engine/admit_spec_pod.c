// SPDX-License-Identifier: Apache-2.0
/*
 * The workload spec's workload-level fields: "hint" (a given Topology
 * Manager result) and "resources" (the kubelet's pod-level resources).
 */
#include "engine/admit_spec_internal.h"
#include "engine/json_util.h"
#include "numaplace/quantity.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* "hint": {"mask": [NODE, ...], "preferred": BOOL}, both required; the
 * nodes are checked against the topology at admission. */
int np_spec_hint_from_json(struct np_workload_req *w, const json_t *j,
			   const char *path, char *err, size_t errlen)
{
	static const char *const keys[] = {"mask", "preferred", NULL};
	const json_t *h = json_object_get(j, "hint"), *m, *v;
	char hp[160];
	size_t i;
	int r;

	if (!h || json_is_null(h))
		return 0;
	snprintf(hp, sizeof(hp), "%s.hint", path);
	if (!json_is_object(h))
		return np_json_fail(err, errlen, path, "hint",
				    "must be an object {\"mask\": [nodes], "
				    "\"preferred\": true|false}");
	if ((r = np_json_only_keys(h, keys, hp, err, errlen)))
		return r;
	m = json_object_get(h, "mask");
	if (!json_is_array(m) || !json_array_size(m))
		return np_json_fail(err, errlen, hp, "mask",
				    "must be a non-empty array of NUMA node "
				    "ids");
	json_array_foreach(m, i, v)
	{
		json_int_t n = json_is_integer(v) ? json_integer_value(v) : -1;
		if (n < 0 || n >= NP_MAX_NUMA)
			return np_json_fail(err, errlen, hp, "mask",
					    "element %zu is not a NUMA node id "
					    "(0..%d)", i, NP_MAX_NUMA - 1);
		if (w->hint.mask & (1ULL << n))
			return np_json_fail(err, errlen, hp, "mask",
					    "node %lld is listed twice",
					    (long long)n);
		w->hint.mask |= 1ULL << n;
	}
	if ((r = np_json_bool(h, "preferred", hp, true, &w->hint.preferred,
			      err, errlen)))
		return r;
	w->has_hint = true;
	return 0;
}

/*
 * "resources": {"cpu": Q, "memory": Q} (the pod's spec.resources, requests
 * equal to limits): at least one; the containers' own requests must fit in
 * it. An exclusive class (LSE, LSR; Guaranteed under static) needs whole
 * CPUs in it. Init containers are not taken with it (not supported yet).
 */
int np_spec_resources_from_json(struct np_workload_req *w, const json_t *j,
				const char *path, char *err, size_t errlen)
{
	static const char *const keys[] = {"cpu", "memory", NULL};
	const json_t *res = json_object_get(j, "resources");
	int64_t cpus = 0;
	uint64_t mem = 0;
	char rp[160];
	int r;

	if (!res || json_is_null(res))
		return 0;
	snprintf(rp, sizeof(rp), "%s.resources", path);
	if (!json_is_object(res))
		return np_json_fail(err, errlen, path, "resources",
				    "must be an object {\"cpu\": Q, "
				    "\"memory\": Q}");
	if ((r = np_json_only_keys(res, keys, rp, err, errlen)) ||
	    (r = np_spec_get_cpu(res, rp, &w->pod_cpu_milli, err, errlen)) ||
	    (r = np_spec_get_bytes(res, "memory", rp, &w->pod_memory, err,
				   errlen)))
		return r;
	if (!w->pod_cpu_milli && !w->pod_memory)
		return np_json_fail(err, errlen, rp, "cpu",
				    "give cpu, memory or both (more than 0)");
	if ((w->qos == NP_QOS_LSE || w->qos == NP_QOS_LSR) &&
	    w->pod_cpu_milli % 1000)
		return np_json_fail(err, errlen, rp, "cpu",
				    "%s needs whole CPUs, got %lldm",
				    np_qos_name(w->qos),
				    (long long)w->pod_cpu_milli);
	for (int k = 0; k < w->ncontainers; k++) {
		if (w->c[k].init)
			return np_json_fail(err, errlen, path, "resources",
					    "init containers with pod-level "
					    "resources are not supported yet");
		cpus += w->c[k].cpu_milli;
		mem += w->c[k].memory;
	}
	if (w->pod_cpu_milli && cpus > w->pod_cpu_milli)
		return np_json_fail(err, errlen, rp, "cpu",
				    "the containers ask for %lldm together, "
				    "more than the pod's %lldm",
				    (long long)cpus,
				    (long long)w->pod_cpu_milli);
	if (w->pod_memory && mem > w->pod_memory)
		return np_json_fail(err, errlen, rp, "memory",
				    "the containers ask for %llu bytes "
				    "together, more than the pod's %llu",
				    (unsigned long long)mem,
				    (unsigned long long)w->pod_memory);
	w->has_pod_res = true;
	return 0;
}

void np_spec_pod_to_json(const struct np_workload_req *w, json_t *o)
{
	if (w->has_hint) {
		json_t *m = json_array();
		NP_NODEMASK_FOREACH(n, w->hint.mask)
		json_array_append_new(m, json_integer(n));
		json_object_set_new(o, "hint",
				    json_pack("{s:o,s:b}", "mask", m,
					      "preferred", w->hint.preferred));
	}
	if (w->has_pod_res) {
		json_t *r = json_object();
		char buf[64];
		if (w->pod_cpu_milli) {
			snprintf(buf, sizeof(buf), "%lldm",
				 (long long)w->pod_cpu_milli);
			json_object_set_new(r, "cpu", json_string(buf));
		}
		if (w->pod_memory) {
			np_quantity_format_bytes(w->pod_memory, buf,
						 sizeof(buf));
			json_object_set_new(r, "memory", json_string(buf));
		}
		json_object_set_new(o, "resources", r);
	}
}
