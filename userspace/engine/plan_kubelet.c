// SPDX-License-Identifier: Apache-2.0
/*
 * The kubelet static policy's contract on the node state: a checkpoint's
 * "default_cpuset" checked with the kubelet's validateState rules, one
 * container released (the kubelet's RemoveContainer), and when two
 * requests are the same. The planner's kinds are in plan.c. Pure: no I/O.
 */
#include "engine/json_util.h"
#include "engine/plan_internal.h"
#include "numaplace/admit.h"
#include "numaplace/topology_json.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *cpus_str(const np_cpuset *s, char *buf, size_t len)
{
	if (np_cpuset_format(s, buf, len) < 0)
		snprintf(buf, len, "?");
	return buf;
}

/* The CPUs the kubelet's validateState calls allCPUs: the topology's
 * (online here), without the reserved ones under strict-cpu-reservation. */
static void all_cpus(const struct np_node_state *st, np_cpuset *out)
{
	np_cpuset_andnot(out, &st->topo->online, &st->offline);
	if (st->policy.opt.strict_cpu_reservation)
		np_cpuset_andnot(out, out, &st->reserved);
}

int np_state_check_default(const struct np_node_state *st,
			   struct np_workload_alloc *const *w, int n,
			   const json_t *j, const char *path, char *err,
			   size_t errlen)
{
	char b1[1024], b2[1024];
	np_cpuset def, all, known, in;
	int r, nassigned = 0;

	r = np_json_cpuset(j, "default_cpuset", path, false, &def, err,
			   errlen);
	if (r == -ENOENT)
		return 0;
	if (r)
		return r;
	all_cpus(st, &all);
	for (int i = 0; i < n; i++)
		for (int c = 0; c < w[i]->ncontainers; c++)
			nassigned += w[i]->c[c].exclusive;
	if (np_cpuset_empty(&def)) {
		if (nassigned)
			return np_json_fail(
			    err, errlen, path, "default_cpuset",
			    "default cpuset cannot be empty (rule: the default "
			    "set may be empty only when nothing is assigned; "
			    "%d exclusive assignment(s) here)",
			    nassigned);
		return 0; /* the kubelet initialises it to all CPUs */
	}
	/* strict: the kubelet names only the reserved CPUs that are in the
	 * default set (reserved ∩ default), not all reserved ones */
	np_cpuset_and(&in, &st->reserved, &def);
	if (st->policy.opt.strict_cpu_reservation && !np_cpuset_empty(&in))
		return np_json_fail(
		    err, errlen, path, "default_cpuset",
		    "some of strictly reserved cpus: \"%s\" are present in "
		    "defaultCpuSet: \"%s\" (rule: with strict-cpu-reservation "
		    "the reserved CPUs are outside the default set)",
		    cpus_str(&in, b1, sizeof(b1)),
		    cpus_str(&def, b2, sizeof(b2)));
	if (!st->policy.opt.strict_cpu_reservation &&
	    !np_cpuset_equal(&in, &st->reserved))
		return np_json_fail(
		    err, errlen, path, "default_cpuset",
		    "not all reserved cpus: \"%s\" are present in "
		    "defaultCpuSet: \"%s\" (rule: the reserved CPUs are "
		    "inside the default set)",
		    cpus_str(&st->reserved, b1, sizeof(b1)),
		    cpus_str(&def, b2, sizeof(b2)));
	known = def;
	for (int i = 0; i < n; i++)
		for (int c = 0; c < w[i]->ncontainers; c++) {
			const struct np_container_alloc *ca = &w[i]->c[c];
			if (!ca->exclusive)
				continue;
			if (np_cpuset_intersects(ca->cpus, &def))
				return np_json_fail(
				    err, errlen, path, "default_cpuset",
				    "pod: %s, container: %s cpuset: \"%s\" "
				    "overlaps with default cpuset \"%s\" (rule: "
				    "the default set and the assignments are "
				    "disjoint)",
				    w[i]->req.name, np_container_name(w[i], c),
				    cpus_str(ca->cpus, b1, sizeof(b1)),
				    cpus_str(&def, b2, sizeof(b2)));
			np_cpuset_or(&known, &known, ca->cpus);
		}
	/* a pod's rest is assigned (the kubelet's pod entry holds it) */
	for (int i = 0; i < n; i++) {
		if (!w[i]->pod_rest)
			continue;
		if (np_cpuset_intersects(w[i]->pod_rest, &def))
			return np_json_fail(
			    err, errlen, path, "default_cpuset",
			    "pod: %s cpuset: \"%s\" overlaps with default "
			    "cpuset \"%s\" (rule: the default set and the "
			    "assignments are disjoint)",
			    w[i]->req.name,
			    cpus_str(w[i]->pod_rest, b1, sizeof(b1)),
			    cpus_str(&def, b2, sizeof(b2)));
		np_cpuset_or(&known, &known, w[i]->pod_rest);
	}
	if (!np_cpuset_equal(&known, &all))
		return np_json_fail(
		    err, errlen, path, "default_cpuset",
		    "current set of available CPUs \"%s\" doesn't match with "
		    "CPUs in state \"%s\" (rule: the default set and the "
		    "assignments together are all CPUs)",
		    cpus_str(&all, b1, sizeof(b1)),
		    cpus_str(&known, b2, sizeof(b2)));
	return 0;
}

int np_release_container(struct np_node_state *st, int i, int k)
{
	struct np_workload_alloc *a;
	struct np_workload_req *q;

	if (i < 0 || i >= st->nworkloads)
		return -ENOENT;
	a = st->w[i];
	q = &a->req;
	if (k < 0 || k >= a->ncontainers || a->ncontainers != q->ncontainers)
		return -ENOENT;
	if (a->ncontainers == 1)
		return np_release(st, q->name);
	free(a->c[k].charge);
	free(a->c[k].baseline);
	np_cpuset_drop(a->c[k].cpus);
	free((char *)q->c[k].name);
	free(q->c[k].cgroup);
	free(q->c[k].dev);
	memmove(&a->c[k], &a->c[k + 1],
		sizeof(*a->c) * (size_t)(a->ncontainers - k - 1));
	memmove(&q->c[k], &q->c[k + 1],
		sizeof(*q->c) * (size_t)(q->ncontainers - k - 1));
	a->ncontainers--;
	q->ncontainers--;
	return np_state_refresh(st);
}

/* Release what the request names from st into *res (a new object). */
/* What releasing container k of a frees: its exclusive CPUs that no other
 * container of the workload holds too (an init container's reused CPUs,
 * the pod's shared rest, stay the workload's). */
bool np_workload_req_same(const struct np_workload_req *a,
			  const struct np_workload_req *b)
{
	json_t *ja = np_workload_req_to_json(a), *jb = np_workload_req_to_json(b);
	bool same = ja && jb && json_equal(ja, jb);

	json_decref(ja);
	json_decref(jb);
	return same;
}
