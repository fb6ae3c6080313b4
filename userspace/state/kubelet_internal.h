/* SPDX-License-Identifier: Apache-2.0 */
/* Between kubelet_import.c (the checkpoint) and kubelet_adopt.c. */
#ifndef NUMAPLACE_STATE_KUBELET_INTERNAL_H
#define NUMAPLACE_STATE_KUBELET_INTERNAL_H

#include "numaplace/kubelet_import.h"

/*
 * np_kubelet_adopt(), and uids (may be NULL) receives, for each added
 * workload in order, its pod UID (pointing into ck).
 */
int np_kubelet_adopt_uids(struct np_node_state *st,
			  const struct np_kubelet_checkpoint *ck,
			  const char *prefix, const char **uids, int *nadopted,
			  char *err, size_t errlen);

#endif
