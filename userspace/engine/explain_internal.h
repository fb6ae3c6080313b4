/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Engine-internal: the trace hooks of the admission path (admit.c, the
 * takes) into struct np_explain (explain_trace.c).
 */
#ifndef NUMAPLACE_ENGINE_EXPLAIN_INTERNAL_H
#define NUMAPLACE_ENGINE_EXPLAIN_INTERNAL_H

#include "numaplace/admit.h"
#include "numaplace/explain.h"
#include "numaplace/hints.h"

/* A container's request (sets ex->container = i). */
void np_ex_request(struct np_explain *ex, int i,
		   const struct np_container_req *c, bool exclusive);
/* The providers of q, their hints, and the merged hint res. */
void np_ex_merge(struct np_explain *ex, const struct np_hints_query *q,
		 const struct np_merge_result *res);
/* The container uses the pod's hint. */
void np_ex_pod_hint(struct np_explain *ex, const struct np_hint *h);
/* A take of q->count CPUs out of avail is about to run. */
void np_ex_strategy(struct np_explain *ex, const struct np_take_req *q,
		    const np_cpuset *avail);
/* After a take: why each CPU not in got was not taken. */
void np_ex_skips(struct np_explain *ex, const struct np_node_state *st,
		 const np_cpuset *pool, const np_cpuset *aligned,
		 const np_cpuset *got);
void np_ex_result(struct np_explain *ex, const char *name,
		  const struct np_container_alloc *a);
void np_ex_reject(struct np_explain *ex, const char *resource,
		  const char *reason);
/* An order a take step used: n units (their ids and up to three sort
 * keys), in order; taken[i] when unit i gave CPUs in this step. */
struct np_ex_event *np_ex_order(struct np_explain *ex, int step, int unit,
				int n);

#endif
