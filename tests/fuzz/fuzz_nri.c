// SPDX-License-Identifier: Apache-2.0
/*
 * containerd's NRI v0.1 Request (numaplace/nri.h), as `numaplace-oci-hook
 * invoke` reads it on stdin: parsed; when it is a create, the pause
 * container's annotations filtered and the workload spec built as the
 * hook builds it; the Result made from the message, whatever its bytes.
 */
#include "fuzz.h"
#include "numaplace/nri.h"

#include <errno.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct np_nri_request rq;
	struct np_oci_request spec;
	char err[1024] = "";
	json_t *res;
	int r;

	r = np_nri_request_parse(&rq, (const char *)data, size, err,
				 sizeof(err));
	FUZZ_NEEDS_MESSAGE(r, err);
	res = np_nri_result(rq.version, r ? err : NULL, "w", "0");
	if (!res)
		abort();
	json_decref(res);
	if (!r && rq.state == NP_NRI_CREATE) {
		(void)np_nri_annotated(&rq);
		if (rq.sandbox && np_nri_pause_only(&rq))
			abort();
		err[0] = '\0';
		r = np_oci_request_build(&spec, &rq.st, &rq.oc,
					 rq.oc.cgroups_path[0] ? rq.cgroup.path
							       : NULL,
					 err, sizeof(err));
		FUZZ_NEEDS_MESSAGE(r, err);
		np_nri_field_names(err, sizeof(err));
		np_oci_request_free(&spec);
	}
	np_nri_request_free(&rq);
	return 0;
}
