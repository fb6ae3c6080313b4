// SPDX-License-Identifier: Apache-2.0
/* A kubelet cpu_manager_state checkpoint, parsed and adopted into an empty
 * state of a fixed 2-socket node of 6 cores x 2 threads, CPU 0 reserved
 * (the node of tests/data/state/kubelet-*.json; numaplace/kubelet_import.h). */
#include "fuzz.h"
#include "numaplace/admit.h"
#include "numaplace/kubelet_import.h"
#include "numaplace/topology.h"

#include <jansson.h>
#include <string.h>

static struct np_topology *topo(void)
{
	static struct np_topology *t;
	struct np_cpu_desc cpus[12];
	char err[256];

	if (t)
		return t;
	for (int i = 0; i < 12; i++)
		cpus[i] = (struct np_cpu_desc){.cpu = i, .core = i % 6,
					       .socket = i % 6 / 3,
					       .numa = i % 6 / 3, .l3 = -1,
					       .online = true};
	if (np_topology_build(&t, cpus, 12, err, sizeof(err)))
		abort();
	return t;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *j = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES,
			       NULL);
	struct np_kubelet_checkpoint ck;
	struct np_node_policy pol = {.cpu_policy = NP_CPU_POLICY_STATIC,
				     .reserved_explicit = true};
	struct np_node_state st;
	char err[1024] = "";
	int r, n;

	if (!j)
		return 0;
	memset(&ck, 0, sizeof(ck));
	r = np_kubelet_checkpoint_parse(&ck, j, err, sizeof(err));
	FUZZ_NEEDS_MESSAGE(r, err);
	np_cpuset_set(&pol.reserved_cpus, 0);
	if (!r && !np_state_init(&st, topo(), &pol, err, sizeof(err))) {
		err[0] = '\0';
		r = np_kubelet_adopt(&st, &ck, "kubepods.slice", &n, err,
				     sizeof(err));
		FUZZ_NEEDS_MESSAGE(r, err);
		np_state_free(&st);
	}
	np_kubelet_checkpoint_free(&ck);
	json_decref(j);
	return 0;
}
