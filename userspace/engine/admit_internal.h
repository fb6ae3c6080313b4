/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Engine-internal: what admission (admit.c) shares with the in-place
 * resize (resize.c): the pool exclusive CPUs come from and the node's
 * options for a kubelet or a Koordinator take.
 */
#ifndef NUMAPLACE_ENGINE_ADMIT_INTERNAL_H
#define NUMAPLACE_ENGINE_ADMIT_INTERNAL_H

#include "numaplace/admit.h"

/* The kubelet's admission error kinds (lifecycle.PodAdmitResult.Reason):
 * the Topology Manager's, the CPU manager's full-pcpus-only one, and what
 * any provider's failing Allocate becomes. */
#define TOPOLOGY_AFFINITY "TopologyAffinityError"
#define SMT_ALIGNMENT "SMTAlignmentError"
#define UNEXPECTED "UnexpectedAdmissionError"
/* The CPU manager's: a pod with pod-level resources whose containers'
 * own exclusive CPUs take the whole budget while a container has none
 * (the pod shared pool would be empty). */
#define EMPTY_POD_SHARED_POOL "EmptyPodSharedPoolError"

/* admit_common.c: d rejected; kind is the kubelet's error kind, "" when
 * it has none. */
__attribute__((format(printf, 4, 5))) void
np_admit_reject(struct np_decision *d, const char *kind, const char *resource,
		const char *fmt, ...);
/* Too few CPUs: with full-pcpus-only the kubelet's SMTAlignmentError
 * (CausedByPhysicalCPUs), else its allocateCPUs error, unexpected. */
static inline const char *
np_admit_smt_or_unexpected(const struct np_node_state *st)
{
	return st->policy.opt.full_pcpus_only ? SMT_ALIGNMENT : UNEXPECTED;
}
/* count exclusive CPUs for w under hint into out, from the free ones and
 * reuse (the kubelet's allocateCPUs with reusableCPUs); -ENOSPC (reason
 * in d) when they do not fit. */
int np_admit_take_cpus(const struct np_node_state *st,
		       const struct np_workload_req *w, int count,
		       const struct np_hint *hint, const np_cpuset *reuse,
		       np_cpuset *out, struct np_decision *d,
		       struct np_explain *ex);
/* count exclusive CPUs for w out of avail only (a pod's CPUs); -ENOSPC
 * (reason in d) when they do not fit. */
int np_admit_take_from(const struct np_node_state *st,
		       const struct np_workload_req *w, const np_cpuset *avail,
		       int count, np_cpuset *out, struct np_decision *d,
		       struct np_explain *ex);
/* Index of the hugepage size size_kb on node nn, -1 when it has none. */
int np_admit_huge_index(const struct np_numa_node *nn, uint64_t size_kb);
static inline bool np_admit_device_taken(const struct np_node_state *st, int k)
{
	return k < st->cache.ndevices && st->cache.dev_taken[k];
}
/* Memory and hugepages of c on a->mems into a->charge; -ENOSPC (reason in
 * d) when the nodes are short, -ENOMEM. */
int np_admit_charge_memory(const struct np_node_state *st,
			   const struct np_container_req *c,
			   struct np_container_alloc *a, struct np_decision *d);
/* c's devices into a->dev: aligned with a->mems first, then other nodes,
 * then devices without a node; -ENOSPC (reason in d) when too few. */
int np_admit_pick_devices(const struct np_node_state *st,
			  const struct np_container_req *c,
			  struct np_container_alloc *a, struct np_decision *d);

/* Free CPUs an exclusive request may take (full-pcpus-only: whole free
 * cores only). */
void np_admit_exclusive_pool(const struct np_node_state *st, np_cpuset *out);
/* The node's cpu_manager options into a kubelet take. */
void np_admit_kubelet_opts(const struct np_node_state *st,
			   struct np_take_req *q);
/* w's bind policy and the node's Koordinator settings into a take, with
 * the PCPULevel / NUMANodeLevel marks of every allocation. */
void np_admit_koord_opts(const struct np_node_state *st,
			 const struct np_workload_req *w, struct np_take_req *q);

/* The name index of np_state_find (state_ops.c): dropped, rebuilt from
 * st->w (by np_state_refresh and np_state_copy), given the entry just
 * appended at the end, or told the array moved (a realloc) with the same
 * entries; indexed: np_state_indexed() before the array changed. Out of
 * memory leaves it unused: np_state_find scans. */
void np_state_index_free(struct np_node_state *st);
void np_state_index_build(struct np_node_state *st);
void np_state_index_appended(struct np_node_state *st, bool indexed);
void np_state_index_moved(struct np_node_state *st, bool indexed);
/* state_cache.c: np_state_refresh without the index (the entries did not
 * move). */
int np_state_cache_refresh(struct np_node_state *st);

/* policy.c: the kubelet's checks of p's options on t, with its reasons;
 * 0 or -EINVAL with err. */
int np_policy_validate(const struct np_topology *t,
		       const struct np_node_policy *p, char *err,
		       size_t errlen);

#endif
