/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The OCI hook's machinery (oci_hook.c), shared by its two front ends:
 * the OCI runtime stages (cmd_oci_hook.c: createRuntime, prestart,
 * poststop) and containerd's NRI v0.1 `invoke` (oci_hook_nri.c). Both fill
 * the container's state and config (numaplace/oci.h) from their input;
 * from there the admission is one code: the trust rules, numaplaced's
 * answer, the wait until the cpuset is in force, the failure policy.
 */
#ifndef NUMAPLACE_TOOLS_OCI_HOOK_H
#define NUMAPLACE_TOOLS_OCI_HOOK_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "numaplace/config.h"
#include "numaplace/oci.h"

struct hook {
	const char *cmd;       /* the messages' prefix: "numaplace oci-hook" */
	const char *stage;     /* in the log's lines: "createRuntime" */
	const char *res_label; /* where the resources come from, in a refusal */
	/* the front end's names of fields, in a message said (NULL: as is) */
	void (*rename)(char *msg, size_t len);
	struct np_config cfg;
	const char *sock;
	struct np_oci_state st;
	struct np_oci_config oc;
	enum np_oci_failure mode;
	struct timespec t0;
	char cgroup[NP_PATH_MAX]; /* the pid's, from the hierarchy root */
	char root[NP_PATH_MAX];   /* the cgroup2 mount */
	char reason[2048];        /* the last refusal or failure said */
	char cpuset[1024];        /* placed: the CPUs in force */
	char workload[NP_NAME_MAX];
	/* the annotations are the pod's, copied to each of its containers
	 * (containerd's pod_annotations): one that this container's
	 * resources cannot take (an LSE pod's fractional sidecar or init
	 * container) follows the failure mode instead of being bad input */
	bool pod_wide;
};

/* --config: an explicit file must load; the default may be missing. 0,
 * or NP_EXIT_USAGE with the message said. */
int hook_load_config(struct hook *h, const char *path, bool given);
/* Bad input: "CMD: ID: MESSAGE" on stderr (and in h->reason);
 * NP_EXIT_USAGE. */
int hook_bad(struct hook *h, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/*
 * The container (h->st, h->oc, h->mode set) admitted for the pid's
 * cgroup, which must be exp's or below it (exp NULL: no cgroupsPath),
 * under oci_hook.policy, and waited for until its cpuset is in force:
 * NP_EXIT_OK (placed, h->cpuset and h->workload set, or fail-open),
 * NP_EXIT_FAIL (fail-closed) or NP_EXIT_USAGE (bad annotations), with the
 * reason said and in h->reason.
 */
int hook_place(struct hook *h, const struct np_oci_cgroup *exp);
/* {"op": "release", "container": ID}: an unknown container and numaplaced
 * not running are not errors (said on stderr). NP_EXIT_OK. */
int hook_release(struct hook *h);

/* containerd's NRI v0.1 plugin: `invoke`, the Request on stdin and the
 * Result on stdout (oci_hook_nri.c). config NULL: the plugin's conf, else
 * the built-in path. */
int hook_nri_invoke(struct hook *h, const char *config, const char *sock);

#endif
