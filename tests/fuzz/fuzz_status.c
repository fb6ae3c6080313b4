// SPDX-License-Identifier: Apache-2.0
/*
 * A saved `numaplace status --json` as `numaplace export nrt --input`
 * reads it (numaplace/export.h np_export_state_from_status): the
 * topology, pools, offline CPUs and workloads of an untrusted file made
 * into a node state, then the NodeResourceTopology object and
 * Koordinator's annotations built from it. The node policy is the one the
 * status carries, else static with CPUs 0,4 reserved.
 */
#include "fuzz.h"
#include "numaplace/admit.h"
#include "numaplace/export.h"
#include "numaplace/topology.h"

#include <jansson.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct np_node_policy p;
	struct np_topology *t = NULL;
	struct np_node_state st;
	json_t *j, *pol, *o;
	const json_t *status;
	char err[1024] = "";
	int r;

	j = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL);
	if (!j)
		return 0;
	status = json_object_get(j, "status");
	if (!status)
		status = j;
	pol = json_loads("{\"cpu_policy\": \"static\", \"reserved_cpus\": "
			 "\"0,4\", \"topology_policy\": \"restricted\"}",
			 0, NULL);
	if (json_object_get(status, "node_policy"))
		r = np_policy_from_json(&p, json_object_get(status, "node_policy"),
					"status.node_policy", err, sizeof(err));
	else
		r = np_policy_from_json(&p, pol, "policy", err, sizeof(err));
	json_decref(pol);
	FUZZ_NEEDS_MESSAGE(r, err);
	if (r) {
		json_decref(j);
		return 0;
	}
	memset(&st, 0, sizeof(st));
	r = np_export_state_from_status(status, &p, &t, &st, err, sizeof(err));
	FUZZ_NEEDS_MESSAGE(r, err);
	if (!r) {
		o = np_export_nrt(&st, "fuzz-node");
		json_decref(o);
		o = np_export_koordinator(&st);
		json_decref(o);
		np_state_free(&st);
		np_topology_free(t);
	}
	json_decref(j);
	return 0;
}
