// SPDX-License-Identifier: Apache-2.0
/*
 * In-place resize of an exclusive container, after the kubelet's CPU
 * manager resize (gate InPlacePodVerticalScalingExclusiveCPUs): a scale-up
 * keeps every current CPU and adds with the resize take
 * (takeByTopologyNUMAPackedForResize / ...DistributedForResize, given the
 * current CPUs and the baseline); a scale-down keeps a subset of the
 * current CPUs, the baseline (the CPUs promised at admission) first.
 * Koordinator classes (LSE/LSR) keep what they have the same way, through
 * their accumulator with the current (or baseline) CPUs preferred.
 * Works on locals and commits only a result that keeps what it must.
 */
#include "engine/admit_internal.h"
#include "numaplace/error.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* The container to resize: the named one, or the only exclusive one. */
static int find_container(const struct np_workload_alloc *a,
			  const char *container, char *err, size_t errlen)
{
	int k = -1, n = 0;

	if (a->req.has_pod_res) {
		NP_ERR("workload: \"%s\" has pod-level resources: resizing "
		       "its budget in place is not supported yet",
		       a->req.name);
		return -EINVAL;
	}
	if (container) {
		for (int i = 0; i < a->ncontainers; i++)
			if (!strcmp(a->req.c[i].name, container))
				k = i;
		if (k < 0) {
			NP_ERR("container: workload \"%s\" has no container "
			       "\"%s\"",
			       a->req.name, container);
			return -ENOENT;
		}
		if (!a->c[k].exclusive) {
			NP_ERR("container: \"%s\" of workload \"%s\" runs on a "
			       "shared pool: only exclusive CPUs are resized "
			       "in place",
			       container, a->req.name);
			return -EINVAL;
		}
		return k;
	}
	for (int i = 0; i < a->ncontainers; i++)
		if (a->c[i].exclusive) {
			k = i;
			n++;
		}
	if (n == 0) {
		NP_ERR("workload: \"%s\" (class %s) has no exclusive CPUs: "
		       "only exclusive CPUs are resized in place",
		       a->req.name, np_qos_name(a->qos_class));
		return -EINVAL;
	}
	if (n > 1) {
		NP_ERR("container: workload \"%s\" has %d exclusive "
		       "containers: name one",
		       a->req.name, n);
		return -EINVAL;
	}
	return k;
}

/*
 * Free CPUs a scale-up adding `add` may take from: those aligned with the
 * container's hint when they suffice; else, unless the Topology Manager
 * policy is restricted or single-numa-node, every free CPU.
 */
static int grow_pool(const struct np_node_state *st,
		     const struct np_container_alloc *c, int add,
		     np_cpuset *out, struct np_decision *d)
{
	const struct np_node_policy *p = &st->policy;
	np_cpuset pool, aligned;
	char nodes[256];
	int nfree;

	np_admit_exclusive_pool(st, &pool);
	nfree = np_cpuset_count(&pool);
	if (nfree < add) {
		np_admit_reject(
		    d, p->opt.full_pcpus_only ? SMT_ALIGNMENT : UNEXPECTED,
		    "cpu",
		    "not enough free %sCPUs to grow: %d more needed, %d "
		    "available",
		    p->opt.full_pcpus_only ? "physical " : "", add, nfree);
		return -ENOSPC;
	}
	*out = pool;
	if (c->hint.any)
		return 0;
	np_topology_aligned_cpus(st->topo, c->hint.mask, p->opt.align_by_socket,
				 &aligned);
	np_cpuset_and(&aligned, &aligned, &pool);
	if (np_cpuset_count(&aligned) >= add) {
		*out = aligned;
		return 0;
	}
	if (p->tm_policy == NP_TM_RESTRICTED ||
	    p->tm_policy == NP_TM_SINGLE_NUMA_NODE) {
		np_nodemask_format(c->hint.mask, nodes, sizeof(nodes));
		np_admit_reject(
		    d, TOPOLOGY_AFFINITY, "cpu",
		    "topology affinity error: growing needs %d more cpus "
		    "on NUMA node(s) %s (policy %s), %d free there",
		    add, nodes, np_tm_policy_name(p->tm_policy),
		    np_cpuset_count(&aligned));
		return -ENOSPC;
	}
	return 0;
}

/*
 * The take: from avail (scale-up: the free CPUs; scale-down: the CPUs
 * kept from), keeping keep. kubelet classes use the resize take with
 * current/baseline; Koordinator classes prefer keep.
 */
static int resize_take(const struct np_node_state *st,
		       const struct np_workload_alloc *a,
		       const np_cpuset *avail, const np_cpuset *cur,
		       const np_cpuset *base, const np_cpuset *keep,
		       bool resize, int n, np_cpuset *out, char *why,
		       size_t len)
{
	struct np_take_req q = {.topo = st->topo, .count = n};

	if (a->req.qos == NP_QOS_LSE || a->req.qos == NP_QOS_LSR) {
		np_admit_koord_opts(st, &a->req, &q);
		/* Its own CPUs are no other workload's marks. */
		np_cpuset_andnot(&q.pcpu_marked, &q.pcpu_marked, cur);
		np_cpuset_andnot(&q.numa_marked, &q.numa_marked, cur);
		np_cpuset_or(&q.available, avail, keep);
		q.has_preferred = true;
		q.preferred = *keep;
		return np_take_koord(&q, out, why, len);
	}
	np_admit_kubelet_opts(st, &q);
	q.available = *avail;
	q.align_by_socket = st->policy.opt.align_by_socket;
	q.resize = resize;
	if (resize) {
		q.current = *cur;
		q.baseline = *base;
	}
	return np_take_kubelet(&q, out, why, len);
}

/* Choose the new set of container c (count n) into *out and its baseline
 * into *nbase; -ENOSPC with the reason in d. */
static int choose(const struct np_node_state *st,
		  const struct np_workload_alloc *a,
		  const struct np_container_alloc *c, int n, np_cpuset *out,
		  np_cpuset *nbase, struct np_decision *d)
{
	np_cpuset cur = *c->cpus, base, avail;
	const np_cpuset *keep;
	int ncur = np_cpuset_count(&cur), r;
	bool resize = true;
	char why[256] = "";

	base = !c->baseline || np_cpuset_empty(c->baseline) ? cur
							      : *c->baseline;
	np_cpuset_and(&base, &base, &cur);
	*nbase = base;
	if (n > ncur) {
		if ((r = grow_pool(st, c, n - ncur, &avail, d)))
			return r;
		keep = &cur;
	} else if (n >= np_cpuset_count(&base)) {
		avail = cur;
		keep = &base;
	} else {
		/* Below the baseline, which the kubelet refuses: keep n of
		 * the baseline, chosen as a fresh take among them, and they
		 * become the baseline. */
		avail = base;
		np_cpuset_zero(&base);
		keep = &base;
		resize = false;
	}
	r = resize_take(st, a, &avail, &cur, &base, keep, resize, n, out, why,
			sizeof(why));
	if (r == -ENOSPC || r == -EINVAL) {
		np_admit_reject(d,
				st->policy.opt.full_pcpus_only ? SMT_ALIGNMENT
							       : UNEXPECTED,
				"cpu", "%s", why);
		return -ENOSPC;
	}
	if (r)
		return r;
	if (np_cpuset_count(out) != n || !np_cpuset_subset(keep, out) ||
	    (n < ncur && !np_cpuset_subset(out, &cur))) {
		np_admit_reject(
		    d, UNEXPECTED, "cpu",
		    "the take could not keep the %s CPUs with %d cpus",
		    n > ncur ? "current" : "baseline", n);
		return -ENOSPC;
	}
	if (!resize)
		*nbase = *out;
	return 0;
}

int np_resize(struct np_node_state *st, const char *name, const char *container,
	      int cpus, struct np_decision *d, char *err, size_t errlen)
{
	struct np_workload_alloc *a;
	struct np_container_alloc *c, old;
	np_cpuset out, nbase, *nb;
	const np_cpuset *ncpus;
	int64_t old_milli;
	int i, k, r, online = np_cpuset_count(&st->topo->online);

	memset(d, 0, sizeof(*d));
	snprintf(d->workload, sizeof(d->workload), "%s", name ? name : "");
	if (!name || (i = np_state_find(st, name)) < 0) {
		NP_ERR("workload: \"%s\" is not admitted", name ? name : "");
		return -ENOENT;
	}
	a = st->w[i];
	if ((k = find_container(a, container, err, errlen)) < 0)
		return k;
	if (cpus < 1 || cpus > online) {
		NP_ERR("cpus: %d is out of range 1..%d (the CPUs online)", cpus,
		       online);
		return -EINVAL;
	}
	c = &a->c[k];
	if (st->policy.opt.full_pcpus_only && cpus % st->topo->cpus_per_core) {
		np_admit_reject(
		    d, SMT_ALIGNMENT, "cpu",
		    "SMT Alignment Error: requested %d cpus not multiple "
		    "cpus per core = %d",
		    cpus, st->topo->cpus_per_core);
		return 0;
	}
	if (cpus == np_cpuset_count(c->cpus)) {
		d->admitted = true;
		d->alloc = a;
		return 0;
	}
	if ((r = choose(st, a, c, cpus, &out, &nbase, d)))
		return r == -ENOSPC ? 0 : r;
	/* new sets beside the old ones, which a failure puts back */
	if (!(nb = malloc(sizeof(*nb))))
		return -ENOMEM;
	if ((r = np_cpuset_dup(&ncpus, &out))) {
		free(nb);
		return r;
	}
	*nb = nbase;
	old = *c;
	old_milli = a->req.c[k].cpu_milli;
	c->cpus = ncpus;
	c->baseline = nb;
	/* CPUs taken off the hint's nodes (a policy that allows it):
	 * their nodes join the memory nodes, as an admission without a
	 * hint has them; pages already placed stay where they are */
	c->mems |= np_topology_nodes_of(st->topo, &out);
	a->req.c[k].cpu_milli = (int64_t)cpus * 1000;
	if ((r = np_state_refresh(st))) {
		*c = old;
		a->req.c[k].cpu_milli = old_milli;
		np_state_refresh(st);
		free(nb);
		np_cpuset_drop(ncpus);
		return r;
	}
	free(old.baseline);
	np_cpuset_drop(old.cpus);
	d->admitted = true;
	d->alloc = a;
	return 0;
}
