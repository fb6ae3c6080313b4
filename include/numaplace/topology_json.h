/* SPDX-License-Identifier: Apache-2.0 */
/*
 * JSON topology form (the planner's input, see tests/data/vectors/README.md):
 *
 *   {"cpus": [{"cpu": 0, "core": 0, "socket": 0, "numa": 0, "l3": 0,
 *              "online": true}, ...],
 *    "distances": [[10, 20], [20, 10]],            rows in ascending node id
 *    "numa_nodes": [{"id": 0, "memory": BYTES, "memory_free": BYTES,
 *                    "hugepages": [{"size_kb": 2048, "total": N,
 *                                   "free": N}]}],
 *    "devices": [{"id": "0000:3b:00.0", "resource": "vendor.com/gpu",
 *                 "name": "...", "class": "gpu|nic|other", "numa": 0|null}]}
 *
 * Only "cpus" is required ("l3" defaults to the socket, "online" to true).
 * Koordinator's cpu-topology form {"detail": [{"id", "core", "socket",
 * "node"}]} is accepted as well.
 */
#ifndef NUMAPLACE_TOPOLOGY_JSON_H
#define NUMAPLACE_TOPOLOGY_JSON_H

#include "numaplace/topology.h"

#include <jansson.h>

/* path names the JSON location in error messages (e.g. "topology"). */
int np_topology_from_json(struct np_topology **out, const json_t *j,
			  const char *path, char *err, size_t errlen);
/* The same form, complete (every field), so the output is planner input. */
json_t *np_topology_to_json(const struct np_topology *t);

const char *np_device_class_name(enum np_device_class c);
int np_device_class_parse(const char *s, enum np_device_class *out);

#endif
