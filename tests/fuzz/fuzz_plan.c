// SPDX-License-Identifier: Apache-2.0
/* numaplace plan / the control socket's "plan" op: a request object with
 * its topology, policy, state, spec, hints (numaplace/plan.h). */
#include "fuzz.h"
#include "numaplace/plan.h"

#include <jansson.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *req = json_loadb((const char *)data, size,
				 JSON_REJECT_DUPLICATES, NULL);
	json_t *res = NULL;
	char err[1024] = "";
	int r;

	if (!req)
		return 0;
	r = np_plan(req, &res, err, sizeof(err));
	FUZZ_NEEDS_MESSAGE(r, err);
	json_decref(res);
	json_decref(req);
	return 0;
}
