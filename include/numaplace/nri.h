/* SPDX-License-Identifier: Apache-2.0 */
/*
 * containerd's NRI v0.1 (containerd 1.6's CRI plugin, and 1.7+ through
 * NRI's v010-adapter): the pure part of `numaplace-oci-hook invoke`
 * (tools/oci_hook_nri.c). containerd runs the plugin as `TYPE invoke` with
 * one Request JSON on stdin between `runc create` and `runc start`, and
 * reads one Result JSON from stdout; a Result with "error" set fails the
 * pod's or container's start. The Request's spec carries what the OCI
 * hook reads of the state and config.json (spec.resources is the OCI
 * linux.resources, spec.cgroupsPath linux.cgroupsPath, spec.annotations
 * the spec's annotations), so the request is parsed into numaplace/oci.h's
 * state and config and admitted by the hook's code. No I/O here
 * (userspace/engine/nri.c); every error names the request's field
 * ("spec.resources.cpu.quota: ...", "conf.pause: ...").
 */
#ifndef NUMAPLACE_NRI_H
#define NUMAPLACE_NRI_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "numaplace/oci.h"

/* Longest Request read on stdin (the spec's annotations and the results
 * of the plugins before this one included). */
#define NP_NRI_REQUEST_MAX (4 * 1024 * 1024)
/* The plugin's name in its Result. */
#define NP_NRI_PLUGIN "numaplace"

/* The request's "state": containerd 1.6 sends create and delete only. */
enum np_nri_state {
	NP_NRI_CREATE,
	NP_NRI_DELETE,
	NP_NRI_UPDATE,
	NP_NRI_PAUSE,
	NP_NRI_RESUME,
};
/* The pod's pause container (id == sandboxID): left alone, or admitted on
 * its resources alone to the shared pool (LS, no CPU of its own). */
enum np_nri_pause_mode { NP_NRI_PAUSE_IGNORE, NP_NRI_PAUSE_SHARED };
/* Which containers are numaplace's: those with a numaplace.io/
 * annotation or Koordinator's qosClass or resource-spec (as the hooks.d
 * files' "when" does), or every one. */
enum np_nri_match { NP_NRI_MATCH_ANNOTATED, NP_NRI_MATCH_ALL };

const char *np_nri_state_name(enum np_nri_state s);

/* The plugin's "conf" from /etc/nri/conf.json, every key optional:
 * {"pause": "ignore"|"shared", "containers": "annotated"|"all",
 *  "config": "/etc/numaplace/numaplace.json", "socket": PATH}. */
struct np_nri_conf {
	enum np_nri_pause_mode pause;
	enum np_nri_match containers;
	char config[NP_PATH_MAX]; /* "" = the built-in path */
	char socket[NP_PATH_MAX]; /* "" = the configuration's */
};

struct np_nri_request {
	enum np_nri_state state;
	char version[33];                     /* conf.json's "version" */
	char sandbox_id[NP_OCI_ID_MAX + 1];   /* "" when absent */
	bool sandbox;                         /* id == sandboxID: the pause */
	struct np_nri_conf conf;
	/* id, pid (0 when absent: delete), spec.annotations; status
	 * "created", no bundle */
	struct np_oci_state st;
	/* spec.cgroupsPath and spec.resources, as config.json's; no
	 * annotations (they are the state's) */
	struct np_oci_config oc;
	struct np_oci_cgroup cgroup; /* spec.cgroupsPath, when oc has one */
};

/*
 * The Request ({"conf", "version", "state", "id", "sandboxID", "pid",
 * "spec": {"resources", "namespaces", "cgroupsPath", "annotations"},
 * "labels", "results"}). create needs a pid 1..4194304 and a spec; the
 * others take the pid stale or absent. The ids are container ids (1..128
 * of [A-Za-z0-9_.+-]); spec.resources is checked as config.json's
 * linux.resources, spec.cgroupsPath in either driver's form; labels and
 * namespaces are objects of strings, results an array of objects.
 * io.kubernetes.pod.namespace is dropped from the annotations: under
 * containerd only a pod's own annotation can carry it, and the namespace
 * that picks the oci_hook.policy rule is the one containerd sets
 * (io.kubernetes.cri.sandbox-namespace). Keys
 * the v0.1 types do not have are ignored (a later version may add some).
 * A request that is not numaplace's (np_nri_ours) is read only as far as
 * deciding that: version, state, ids, conf and spec.annotations; its pid,
 * resources, cgroupsPath, labels and results are neither read nor judged.
 * 0 or -EINVAL/-ENOMEM with the field named; free with
 * np_nri_request_free either way.
 */
int np_nri_request_parse(struct np_nri_request *rq, const char *buf,
			 size_t len, char *err, size_t errlen);
void np_nri_request_free(struct np_nri_request *rq);

/* A numaplace.io/ annotation, or Koordinator's qosClass or resource-spec,
 * in spec.annotations. */
bool np_nri_annotated(const struct np_nri_request *rq);

/* Whether numaplace acts on the request: create or delete, of a container
 * (or of a pause container with conf.pause "shared") that is annotated,
 * or of any container with conf.containers "all". */
bool np_nri_ours(const struct np_nri_request *rq);

/* The pause container asks nothing of its own: the pod's annotations it
 * carries (containerd's pod_annotations pass them to the pause and to
 * every container) are dropped but numaplace.io/on-failure, so that it
 * is admitted on its resources alone. 0 or -ENOMEM. */
int np_nri_pause_only(struct np_nri_request *rq);

/* The OCI hook's names of fields in a message (config.json's
 * linux.resources, linux.cgroupsPath; the state's id and pid) rewritten
 * in place as the Request's (spec.resources, spec.cgroupsPath, id, pid). */
void np_nri_field_names(char *msg, size_t len);

/* The Result: {"plugin": "numaplace", "version": VERSION, "error"?: E,
 * "metadata"?: {"workload": NAME, "cpuset": CPUS}} (error NULL: success;
 * workload NULL: no metadata). NULL on ENOMEM. */
json_t *np_nri_result(const char *version, const char *error,
		      const char *workload, const char *cpuset);

#endif
