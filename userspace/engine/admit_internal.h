/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Engine-internal: what admission (admit.c) shares with the in-place
 * resize (resize.c): the pool exclusive CPUs come from and the node's
 * options for a kubelet or a Koordinator take.
 */
#ifndef NUMAPLACE_ENGINE_ADMIT_INTERNAL_H
#define NUMAPLACE_ENGINE_ADMIT_INTERNAL_H

#include "numaplace/admit.h"

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

#endif
