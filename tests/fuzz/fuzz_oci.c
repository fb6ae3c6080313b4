// SPDX-License-Identifier: Apache-2.0
/*
 * numaplace oci-hook's parsers (numaplace/oci.h): the input is an OCI
 * state, a NUL byte, and a bundle's config.json (no NUL: the state only).
 * Both are parsed, the config's cgroupsPath resolved, the workload spec
 * built, and the whole input read as /proc/PID/cgroup text too.
 */
#include "fuzz.h"
#include "numaplace/oci.h"

#include <errno.h>
#include <string.h>

static void spec(const struct np_oci_state *st, const struct np_oci_config *c)
{
	struct np_oci_request rq;
	struct np_oci_cgroup g;
	char err[1024] = "";
	int r;

	r = np_oci_cgroups_path(c->cgroups_path, &g, err, sizeof(err));
	FUZZ_NEEDS_MESSAGE(r, err);
	err[0] = '\0';
	r = np_oci_request_build(&rq, st, c, r ? NULL : g.path, err,
				 sizeof(err));
	FUZZ_NEEDS_MESSAGE(r, err);
	if (!r) {
		json_t *ls = np_oci_shared_spec(rq.spec);
		json_decref(ls);
	}
	np_oci_request_free(&rq);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	const char *nul = memchr(buf, '\0', size);
	size_t slen = nul ? (size_t)(nul - buf) : size;
	struct np_oci_state st;
	struct np_oci_config c;
	enum np_oci_failure f;
	char err[1024] = "", out[512];
	int r;

	r = np_oci_proc_cgroup(buf, size, out, sizeof(out), err, sizeof(err));
	FUZZ_NEEDS_MESSAGE(r, err);
	err[0] = '\0';
	r = np_oci_state_parse(&st, buf, slen, NP_OCI_POSTSTOP, err,
			       sizeof(err));
	FUZZ_NEEDS_MESSAGE(r, err);
	np_oci_state_free(&st);
	err[0] = '\0';
	r = np_oci_state_parse(&st, buf, slen, NP_OCI_CREATE_RUNTIME, err,
			       sizeof(err));
	FUZZ_NEEDS_MESSAGE(r, err);
	if (r || !nul) {
		np_oci_state_free(&st);
		return 0;
	}
	err[0] = '\0';
	r = np_oci_config_parse(&c, nul + 1, size - slen - 1, err, sizeof(err));
	FUZZ_NEEDS_MESSAGE(r, err);
	if (!r) {
		err[0] = '\0';
		r = np_oci_failure_annotation(&st, &c, &f, err, sizeof(err));
		if (r != -ENOENT)
			FUZZ_NEEDS_MESSAGE(r, err);
		spec(&st, &c);
	}
	np_oci_config_free(&c);
	np_oci_state_free(&st);
	return 0;
}
