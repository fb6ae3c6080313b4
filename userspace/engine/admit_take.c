// SPDX-License-Identifier: Apache-2.0
/*
 * Admission's CPU take: the node's options into a kubelet or a Koordinator
 * take, and exclusive CPUs under a hint as the kubelet's allocateCPUs
 * takes them (aligned first, then the rest).
 */
#include "engine/admit_internal.h"
#include "engine/explain_internal.h"
#include "numaplace/admit.h"
#include "numaplace/error.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

void np_admit_kubelet_opts(const struct np_node_state *st,
			   struct np_take_req *q)
{
	const struct np_cpu_options *o = &st->policy.opt;
	q->strategy = o->distribute_across_cores ? NP_TAKE_SPREAD
						 : NP_TAKE_PACKED;
	q->distribute_across_numa = o->distribute_across_numa;
	q->group_size = o->full_pcpus_only ? st->topo->cpus_per_core : 1;
	q->prefer_uncore = o->prefer_align_by_uncore;
}

/* kubelet takeByTopology with the node's options. */
static int kubelet_take(const struct np_node_state *st, const np_cpuset *avail,
			int count, np_cpuset *out, char *why, size_t len,
			struct np_explain *ex)
{
	struct np_take_req q = {.topo = st->topo, .count = count, .trace = ex};
	q.available = *avail;
	np_admit_kubelet_opts(st, &q);
	if (ex)
		np_ex_strategy(ex, &q, avail);
	return np_take_kubelet(&q, out, why, len);
}

void np_admit_koord_opts(const struct np_node_state *st,
			 const struct np_workload_req *w, struct np_take_req *q)
{
	q->koord = true;
	q->bind_policy = w->has_bind ? w->bind : st->policy.default_bind;
	if (q->bind_policy == NP_BIND_DEFAULT)
		q->bind_policy = st->policy.default_bind;
	q->required = w->bind_required || st->policy.opt.full_pcpus_only;
	q->exclusive_policy = w->excl;
	q->numa_strategy = st->policy.numa_strategy;
	/* the CPUs of the admitted workloads of each policy (the cache's,
	 * kept by admissions and releases) */
	q->pcpu_marked = st->cache.marked[0];
	q->numa_marked = st->cache.marked[1];
}

static int koord_take(const struct np_node_state *st,
		      const struct np_workload_req *w, const np_cpuset *avail,
		      int count, np_cpuset *out, char *why, size_t len,
		      struct np_explain *ex)
{
	struct np_take_req q = {.topo = st->topo, .count = count, .koord = true,
				.trace = ex};
	q.available = *avail;
	np_admit_koord_opts(st, w, &q);
	if (ex)
		np_ex_strategy(ex, &q, avail);
	return np_take_koord(&q, out, why, len);
}

/*
 * Exclusive CPUs under a hint, as the kubelet's allocateCPUs: first from
 * the hint's nodes (align-by-socket: their whole sockets), the rest from
 * everything allocatable. Koordinator classes use its accumulator and, with
 * DistributeEvenly, an even split over the hint's nodes.
 */
int np_admit_take_cpus(const struct np_node_state *st,
		       const struct np_workload_req *w, int count,
		       const struct np_hint *hint, const np_cpuset *reuse,
		       np_cpuset *out, struct np_decision *d,
		       struct np_explain *ex)
{
	const struct np_topology *t = st->topo;
	bool koord = w->qos == NP_QOS_LSE || w->qos == NP_QOS_LSR;
	np_cpuset pool, aligned, got, rest;
	char why[256];
	int r, n_aligned;

	np_admit_exclusive_pool(st, &pool);
	np_cpuset_or(&pool, &pool, reuse); /* allocateCPUs' reusableCPUs */
	np_cpuset_zero(out);
	if (st->policy.opt.full_pcpus_only && count % t->cpus_per_core) {
		np_admit_reject(d, SMT_ALIGNMENT, "cpu",
		       "SMT Alignment Error: requested %d cpus not multiple cpus "
		       "per core = %d",
		       count, t->cpus_per_core);
		return -ENOSPC;
	}
	if (np_cpuset_count(&pool) < count) {
		np_admit_reject(d, np_admit_smt_or_unexpected(st), "cpu",
		       "not enough free %sCPUs: requested %d, %d available",
		       st->policy.opt.full_pcpus_only ? "physical " : "", count,
		       np_cpuset_count(&pool));
		return -ENOSPC;
	}
	if (hint->any) {
		aligned = pool;
	} else {
		np_topology_aligned_cpus(t, hint->mask,
					 st->policy.opt.align_by_socket,
					 &aligned);
		np_cpuset_and(&aligned, &aligned, &pool);
	}
	n_aligned = np_cpuset_count(&aligned);
	if (n_aligned > count)
		n_aligned = count;
	if (koord && !hint->any && st->policy.numa_strategy ==
					   NP_NUMA_DISTRIBUTE_EVENLY &&
	    np_nodemask_count(hint->mask) > 1 && n_aligned == count) {
		/* Even split over the hint's nodes, whole cores for
		 * FullPCPUs: what DistributeEvenly promises. */
		int k = np_nodemask_count(hint->mask), i = 0;
		int unit = (w->has_bind ? w->bind : st->policy.default_bind) ==
					   NP_BIND_FULL_PCPUS
				   ? t->cpus_per_core
				   : 1;
		int units = count / unit, left = count;
		NP_NODEMASK_FOREACH(node, hint->mask)
		{
			np_cpuset in;
			int share = (units / k + (i < units % k)) * unit;
			if (i == k - 1)
				share = left;
			np_topology_cpus_of_nodes(t, NP_NODEMASK_BIT(node), &in);
			np_cpuset_and(&in, &in, &pool);
			np_cpuset_andnot(&in, &in, out);
			if (share > 0) {
				r = koord_take(st, w, &in, share, &got, why,
					       sizeof(why), ex);
				if (r)
					goto fail;
				np_cpuset_or(out, out, &got);
			}
			left -= share;
			i++;
		}
		if (ex)
			np_ex_skips(ex, st, &pool, &aligned, out);
		return 0;
	}
	r = koord ? koord_take(st, w, &aligned, n_aligned, &got, why,
			       sizeof(why), ex)
		  : kubelet_take(st, &aligned, n_aligned, &got, why,
				 sizeof(why), ex);
	if (r)
		goto fail;
	*out = got;
	if (n_aligned < count) {
		np_cpuset_andnot(&rest, &pool, out);
		r = koord ? koord_take(st, w, &rest, count - n_aligned, &got,
				       why, sizeof(why), ex)
			  : kubelet_take(st, &rest, count - n_aligned, &got,
					 why, sizeof(why), ex);
		if (r)
			goto fail;
		np_cpuset_or(out, out, &got);
	}
	if (ex)
		np_ex_skips(ex, st, &pool, &aligned, out);
	return 0;
fail:
	if (r == -ENOSPC || r == -EINVAL) {
		np_admit_reject(d, np_admit_smt_or_unexpected(st), "cpu", "%s", why);
		return -ENOSPC;
	}
	return r;
}

int np_admit_take_from(const struct np_node_state *st,
		       const struct np_workload_req *w, const np_cpuset *avail,
		       int count, np_cpuset *out, struct np_decision *d,
		       struct np_explain *ex)
{
	bool koord = w->qos == NP_QOS_LSE || w->qos == NP_QOS_LSR;
	char why[256] = "";
	int r = koord ? koord_take(st, w, avail, count, out, why, sizeof(why),
				   ex)
		      : kubelet_take(st, avail, count, out, why, sizeof(why),
				     ex);

	if (r == -ENOSPC || r == -EINVAL) {
		np_admit_reject(d, np_admit_smt_or_unexpected(st), "cpu", "%s",
				why);
		return -ENOSPC;
	}
	return r;
}
