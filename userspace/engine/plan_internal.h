/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Engine-internal: what the planner's kinds share to read a request
 * (plan_kubelet.c defines them).
 */
#ifndef NUMAPLACE_ENGINE_PLAN_INTERNAL_H
#define NUMAPLACE_ENGINE_PLAN_INTERNAL_H

#include "numaplace/admit.h"

#include <jansson.h>

/* req's "topology", "policy" and optional "state" into *t and st (st
 * zeroed by the caller; free both, also on an error). */
int np_plan_load(const json_t *req, struct np_topology **t,
		 struct np_node_state *st, char *err, size_t errlen);
/* req's "workload" (required) and "container" (optional, NULL when
 * absent): names of 1..NP_NAME_MAX-1 bytes. */
int np_plan_target(const json_t *req, const char **name, const char **ctr,
		   char *err, size_t errlen);

#endif
