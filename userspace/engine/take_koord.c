// SPDX-License-Identifier: Apache-2.0
/*
 * Koordinator's fine-grained CPU choice (the koord-scheduler
 * NodeNUMAResource "CPU accumulator"), reimplemented in C from its
 * documented behaviour and its unit-test tables (tests/data/vectors).
 *
 * Bind policies:
 *
 *  - FullPCPUs packs whole free physical cores. The search runs in stages
 *    and stops at the first that satisfies the request:
 *      1. one NUMA node holding enough CPUs in whole free cores (first
 *         skipping nodes/cores marked by the request's exclusive policy,
 *         then without that filter);
 *      2. one socket holding enough CPUs in whole free cores;
 *      3. the whole free cores of entire sockets, largest share first
 *         (the strategy plays no part), while a socket's share fits in
 *         what is still needed;
 *      4. whole free cores from the sockets with the fewest of them;
 *      5. any free CPU, in the fallback order (below).
 *    Nodes and sockets in stages 1-2 are ordered by the NUMA strategy on
 *    their free CPU count (all free CPUs; ties: the socket's free count,
 *    then the id). A unit's CPUs are taken core by core (cores in order
 *    of their lowest CPU id, never assuming how siblings are numbered), so
 *    a request that is not a multiple of the core size splits its last
 *    core unless the policy is required. Without SMT (CPUsPerCore == 1)
 *    every request takes this path.
 *
 *  - SpreadByPCPUs: pass 0 looks for one NUMA node, then one socket,
 *    whose candidates (the lowest free thread of every core the exclusive
 *    policy does not avoid) are enough; pass 1 does the same with every
 *    free CPU, threads round-robin over cores (so staying in one node
 *    beats one thread per core across sockets, as upstream's
 *    "overlapped-cores" case expects); then the fallback order.
 *
 *  - Default resolves to FullPCPUs: koord-scheduler substitutes its
 *    configured default bind policy (NodeNUMAResourceArgs
 *    .DefaultCPUBindPolicy, FullPCPUs unless configured otherwise) before
 *    it runs the accumulator.
 *
 * The fallback order sorts the free CPUs by: sockets already used by this
 * result first, then the socket's and the node's free CPU count in the
 * strategy's direction, cores with fewer free threads first, the CPU id;
 * threads are then handed out round-robin over cores. CPUs the exclusive
 * policy avoids come after all the others and are round-robined on their
 * own: a numaplace refinement (upstream drops the filter at this stage and
 * may share a marked core before doubling up on its own cores).
 *
 * NUMA strategies: MostAllocated sorts fewest free first (bin-pack),
 * LeastAllocated most free first. DistributeEvenly has no effect in
 * Koordinator's accumulator and behaves as LeastAllocated here too; the
 * even split over a multi-node hint happens in the admission layer.
 *
 * Required policies (node label cpu-bind-policy=FullPCPUsOnly or
 * SpreadByPCPUs) first restrict the available CPUs to whole free cores,
 * resp. the lowest free thread of each core, and are -EINVAL when they
 * cannot be met. A required FullPCPUs count must be a multiple of
 * CPUsPerCore; it takes only whole cores, and when cores differ in size
 * (hybrid CPUs, offline threads) and the stages find no exact fit, a
 * subset-sum search over the whole free cores decides.
 *
 * Preferred CPUs (reservations, preemption) are intersected with the
 * available CPUs and taken first (min(count, |preferred|) of them, chosen
 * by the same policy), then the rest as usual from the other CPUs.
 */
#include "engine/take_koord_internal.h"
#include "numaplace/error.h"
#include "numaplace/names.h"
#include "numaplace/take.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Last resort of a required FullPCPUs when cores differ in size (hybrid
 * CPUs, offline threads) and the stages above found no exact fit: any set
 * of whole cores of avail with exactly n CPUs (subset sum), preferring the
 * cores of pref, then lower CPU ids. Returns 0 or -ENOSPC / -ENOMEM.
 */
static int exact_whole_cores(const struct np_topology *t,
			     const np_cpuset *avail, const np_cpuset *pref,
			     int n, np_cpuset *out)
{
	size_t words = (size_t)n / 64 + 1;
	int *core = malloc(sizeof(int) * ((size_t)t->ncores + 1));
	uint64_t *can = NULL;
	int m = 0, r = -ENOSPC;

	if (!core)
		return -ENOMEM;
	/* Whole cores of avail: preferred ones first, each by lowest CPU. */
	for (int p = 0; p < 2; p++)
		for (int i = 0; i < t->ncores; i++) {
			const struct np_unit *c = &t->cores[i];
			if (!c->ncpus || !np_cpuset_subset(&c->cpus, avail) ||
			    np_cpuset_subset(&c->cpus, pref) != !p)
				continue;
			core[m++] = i;
		}
	/* can[i] = sums reachable with cores i..m-1, as a bitmap. */
	can = calloc(((size_t)m + 1) * words, sizeof(uint64_t));
	if (!can) {
		free(core);
		return -ENOMEM;
	}
	can[(size_t)m * words] = 1;
	for (int i = m - 1; i >= 0; i--) {
		uint64_t *dst = can + (size_t)i * words;
		const uint64_t *src = dst + words;
		int sz = t->cores[core[i]].ncpus;

		memcpy(dst, src, words * sizeof(uint64_t));
		for (int v = sz; v <= n; v++)
			if (src[(v - sz) / 64] >> ((v - sz) % 64) & 1)
				dst[v / 64] |= (uint64_t)1 << (v % 64);
	}
	if (can[n / 64] >> (n % 64) & 1) {
		np_cpuset_zero(out);
		for (int i = 0, v = n; i < m && v > 0; i++) {
			const uint64_t *rest = can + (size_t)(i + 1) * words;
			int sz = t->cores[core[i]].ncpus, w = v - sz;

			if (w >= 0 && (rest[w / 64] >> (w % 64) & 1)) {
				np_cpuset_or(out, out, &t->cores[core[i]].cpus);
				v = w;
			}
		}
		r = 0;
	}
	free(can);
	free(core);
	return r;
}

/* Preferred CPUs first, then the rest; -ENOSPC when no exact result. */
static int take_all(const struct np_take_req *q, enum np_bind_policy bind,
		    const np_cpuset *usable, np_cpuset *res)
{
	bool full_required = q->required && bind == NP_BIND_FULL_PCPUS;
	np_cpuset avail = *usable, got;
	int need = q->count, r;

	np_cpuset_zero(res);
	if (q->has_preferred) {
		np_cpuset pref;
		int k;

		np_cpuset_and(&pref, &q->preferred, &avail);
		/* Required FullPCPUs: only preferred CPUs forming whole cores,
		 * so that neither part splits a core. */
		if (full_required)
			np_koord_whole_cores(q->topo, &pref, &pref);
		k = np_cpuset_count(&pref);
		if (k > need)
			k = need;
		if (k > 0) {
			if ((r = np_koord_accumulate(q, bind, &pref, k, &got)))
				return r;
			np_cpuset_or(res, res, &got);
			np_cpuset_andnot(&avail, &avail, &got);
			need -= k;
		}
	}
	if (need > 0) {
		if ((r = np_koord_accumulate(q, bind, &avail, need, &got)))
			return r;
		np_cpuset_or(res, res, &got);
	}
	if (np_cpuset_count(res) != q->count)
		return -ENOSPC;
	if (full_required) {
		np_koord_whole_cores(q->topo, res, &got);
		if (!np_cpuset_equal(&got, res))
			return -ENOSPC;
	}
	return 0;
}

int np_take_koord(const struct np_take_req *q, np_cpuset *out, char *err,
		  size_t errlen)
{
	const struct np_topology *t;
	enum np_bind_policy bind;
	np_cpuset avail, res;
	bool full_required;
	int navail, r;

	if (!q || !q->topo) {
		NP_ERR("no topology");
		return -EINVAL;
	}
	t = q->topo;
	if (q->count < 0) {
		NP_ERR("count: %d is negative", q->count);
		return -EINVAL;
	}
	if ((int)q->bind_policy < 0 ||
	    (int)q->bind_policy > NP_BIND_SPREAD_BY_PCPUS ||
	    (int)q->exclusive_policy < 0 ||
	    (int)q->exclusive_policy > NP_EXCL_NUMA_NODE_LEVEL ||
	    (int)q->numa_strategy < 0 ||
	    (int)q->numa_strategy > NP_NUMA_DISTRIBUTE_EVENLY) {
		NP_ERR("invalid bind policy, exclusive policy or NUMA strategy");
		return -EINVAL;
	}
	/* koord-scheduler replaces Default with its configured default bind
	 * policy, FullPCPUs. */
	bind = q->bind_policy == NP_BIND_DEFAULT ? NP_BIND_FULL_PCPUS
						 : q->bind_policy;
	full_required = q->required && bind == NP_BIND_FULL_PCPUS;

	np_cpuset_zero(&res);
	np_cpuset_and(&avail, &q->available, &t->online);
	navail = np_cpuset_count(&avail);
	if (q->count == 0) {
		*out = res;
		return 0;
	}
	if (q->count > navail) {
		NP_ERR("not enough cpus available to satisfy request: "
		    "requested=%d, available=%d",
		    q->count, navail);
		return -ENOSPC;
	}

	if (full_required) {
		int nwhole;

		if (q->count % t->cpus_per_core) {
			NP_ERR("required bind policy FullPCPUs cannot be met: "
			    "requested=%d cpus is not a multiple of the %d "
			    "cpus per physical core",
			    q->count, t->cpus_per_core);
			return -EINVAL;
		}
		np_koord_whole_cores(t, &avail, &avail);
		nwhole = np_cpuset_count(&avail);
		if (q->count > nwhole) {
			NP_ERR("required bind policy FullPCPUs cannot be met: "
			    "requested=%d cpus, only %d cpus in whole free "
			    "physical cores (available=%d)",
			    q->count, nwhole, navail);
			return -EINVAL;
		}
	} else if (q->required && bind == NP_BIND_SPREAD_BY_PCPUS) {
		int ncores;

		np_koord_one_per_core(t, &avail, &avail);
		ncores = np_cpuset_count(&avail);
		if (q->count > ncores) {
			NP_ERR("required bind policy SpreadByPCPUs cannot be met: "
			    "requested=%d cpus, only %d physical cores have a "
			    "free cpu (available=%d)",
			    q->count, ncores, navail);
			return -EINVAL;
		}
	}

	r = take_all(q, bind, &avail, &res);
	if (r == -ENOSPC && full_required) {
		/* Only with cores of different sizes: the stages found no
		 * exact fit of whole cores; look for any. */
		np_cpuset pref;

		np_cpuset_zero(&pref);
		if (q->has_preferred)
			np_cpuset_and(&pref, &q->preferred, &avail);
		r = exact_whole_cores(t, &avail, &pref, q->count, &res);
		if (r == -ENOSPC) {
			NP_ERR("required bind policy FullPCPUs cannot be met: "
			    "no set of whole free physical cores has exactly "
			    "%d cpus",
			    q->count);
			return -EINVAL;
		}
	}
	if (r == -ENOMEM) {
		NP_ERR("out of memory");
		return r;
	}
	if (r) {
		NP_ERR("not enough cpus available to satisfy request: "
		    "requested=%d, available=%d",
		    q->count, navail);
		return r;
	}
	*out = res;
	return 0;
}
