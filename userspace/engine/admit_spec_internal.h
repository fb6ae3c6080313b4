/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Engine-internal: the workload spec's parsers that admit_spec_json.c
 * shares with admit_spec_pod.c (the workload-level fields).
 */
#ifndef NUMAPLACE_ENGINE_ADMIT_SPEC_INTERNAL_H
#define NUMAPLACE_ENGINE_ADMIT_SPEC_INTERNAL_H

#include "numaplace/admit.h"

#include <jansson.h>

/* o["cpu"] ("2", "1500m", 2) in millicores; absent = 0. */
int np_spec_get_cpu(const json_t *o, const char *path, int64_t *out,
		    char *err, size_t errlen);
/* o[key], a byte quantity; absent = 0. */
int np_spec_get_bytes(const json_t *o, const char *key, const char *path,
		      uint64_t *out, char *err, size_t errlen);
/* "hugepages-<size>" (size a byte quantity, at least 4Ki, whole Ki): 0
 * with the size in KiB, or -EINVAL. */
int np_spec_hugepage_key(const char *key, uint64_t *size_kb);
/* The "container" object's namespace, limits and requests (besides its id
 * and cgroup) into w (admit_spec_ctr.c); o is that object, cp its path. */
int np_spec_container_extra(struct np_workload_req *w, const json_t *o,
			    const char *cp, char *err, size_t errlen);
/* w's container object ({"id", "cgroup", ...}), NULL when out of memory. */
json_t *np_spec_container_to_json(const struct np_workload_req *w);
/* j["hint"]: a given Topology Manager result into w->hint. */
int np_spec_hint_from_json(struct np_workload_req *w, const json_t *j,
			   const char *path, char *err, size_t errlen);
/* j["resources"]: the pod-level budget into w, checked against the
 * containers (parsed before). */
int np_spec_resources_from_json(struct np_workload_req *w, const json_t *j,
				const char *path, char *err, size_t errlen);
/* w's workload-level fields ("hint", "resources") into o. */
void np_spec_pod_to_json(const struct np_workload_req *w, json_t *o);

#endif
