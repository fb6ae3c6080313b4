// SPDX-License-Identifier: Apache-2.0
/*
 * numaplace-oci-hook invoke: containerd's NRI v0.1 plugin (containerd 1.6's
 * CRI plugin runs /etc/nri/conf.json's plugins as `TYPE invoke` between
 * `runc create` and `runc start`, and 1.7+ through NRI's v010-adapter).
 * The Request on stdin (numaplace/nri.h) becomes the hook's state and
 * config; create admits the container as createRuntime does (oci_hook.c),
 * delete releases it; the pod's pause container (id == sandboxID) is
 * ignored or admitted to the shared pool as the plugin's conf says.
 * Exactly one Result JSON goes to stdout, whatever happens (containerd
 * fails the start when it is not JSON or its "error" is set); everything
 * else is said on stderr (containerd's journal).
 */
#include "cli.h"
#include "oci_hook.h"
#include "basic/fileio.h"
#include "numaplace/cleanup.h"
#include "numaplace/config.h"
#include "numaplace/nri.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define CMD "numaplace nri"

/* The one Result on stdout: rc's error (h->reason) unless rc is
 * NP_EXIT_OK; the placement as metadata. */
static int result(struct hook *h, const struct np_nri_request *rq, int rc)
{
	_cleanup_json_ json_t *r = NULL;

	r = np_nri_result(rq ? rq->version : "",
			  rc == NP_EXIT_OK ? NULL
			  : h->reason[0]   ? h->reason
					   : "failed (see containerd's log)",
			  h->cpuset[0] ? h->workload : NULL, h->cpuset);
	if (!r || json_dumpf(r, stdout, JSON_COMPACT) || putchar('\n') < 0 ||
	    fflush(stdout)) {
		/* still one JSON object, or nothing containerd can read */
		fputs("{\"error\":\"numaplace: out of memory\"}\n", stdout);
		fflush(stdout);
		return NP_EXIT_FAIL;
	}
	return rc;
}

/* Bad input (the request, the configuration): said, and the Result's
 * error, whatever the failure mode (as the hook's exit 2). */
static int bad(struct hook *h, const struct np_nri_request *rq,
	       const char *what)
{
	hook_bad(h, "%s", what);
	return result(h, rq, NP_EXIT_USAGE);
}

static int create(struct hook *h, struct np_nri_request *rq)
{
	char err[1024];
	int r;

	if (rq->sandbox && np_nri_pause_only(rq))
		return bad(h, rq, "out of memory");
	/* the hook's state and config, moved */
	h->st = rq->st;
	h->oc = rq->oc;
	rq->st.annotations = rq->oc.annotations = NULL;
	r = np_oci_failure_annotation(&h->st, &h->oc, &h->mode, err,
				      sizeof(err));
	if (r == -ENOENT)
		h->mode = h->cfg.oci_hook.on_failure;
	else if (r)
		return bad(h, rq, err);
	return result(h, rq,
		      hook_place(h, rq->oc.cgroups_path[0] ? &rq->cgroup : NULL));
}

int hook_nri_invoke(struct hook *h, const char *config, const char *sock)
{
	_cleanup_free_ char *buf = NULL;
	struct np_nri_request rq;
	char err[1024];
	size_t len;
	int r, rc;

	h->cmd = CMD;
	h->res_label = "spec.resources";
	h->rename = np_nri_field_names;
	h->pod_wide = true;
	r = np_read_fd(STDIN_FILENO, NP_NRI_REQUEST_MAX, &buf, &len);
	if (r < 0) {
		if (r == -EFBIG)
			snprintf(err, sizeof(err),
				 "request: longer than %d bytes",
				 NP_NRI_REQUEST_MAX);
		else
			snprintf(err, sizeof(err), "request: reading stdin: %s",
				 strerror(-r));
		return bad(h, NULL, err);
	}
	if (np_nri_request_parse(&rq, buf, len, err, sizeof(err))) {
		snprintf(h->st.id, sizeof(h->st.id), "%s", rq.st.id);
		rc = bad(h, &rq, err);
		np_nri_request_free(&rq);
		return rc;
	}
	h->stage = rq.state == NP_NRI_CREATE ? "nri-create" : "nri-delete";
	if (!np_nri_ours(&rq)) {
		rc = result(h, &rq, NP_EXIT_OK);
		np_nri_request_free(&rq);
		return rc;
	}
	snprintf(h->st.id, sizeof(h->st.id), "%s", rq.st.id);
	if (!config && rq.conf.config[0])
		config = rq.conf.config;
	if ((rc = hook_load_config(h, config ? config : NP_CONFIG_DEFAULT_PATH,
				   config != NULL))) {
		rc = result(h, &rq, rc);
		np_nri_request_free(&rq);
		return rc;
	}
	h->sock = sock		   ? sock
		  : rq.conf.socket[0] ? rq.conf.socket
				      : h->cfg.socket_path;
	rc = rq.state == NP_NRI_CREATE ? create(h, &rq)
				       : result(h, &rq, hook_release(h));
	np_nri_request_free(&rq);
	np_oci_state_free(&h->st);
	np_oci_config_free(&h->oc);
	return rc;
}
