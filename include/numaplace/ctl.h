/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Control socket: the protocol between numaplaced and its clients, and the
 * client side (userspace/daemon/serve/ctl_client.c). The human renderings of
 * the answers are the CLI's (tools/status_render.h).
 *
 * ---- Protocol (the contract numaplaced implements) ------------------------
 *
 * Transport: a SOCK_STREAM Unix socket, by default NP_CTL_DEFAULT_SOCKET
 * (config key "socket"), mode 0600. Only root peers are served (checked
 * with SO_PEERCRED).
 *
 * Framing: newline-delimited JSON. The client sends one request object,
 * compact, on one line ending in '\n'; the server answers with one response
 * object on one line ending in '\n'. The client then closes the connection
 * (the server may keep it open for further requests, answered in order).
 * A line, '\n' included, is at most NP_CTL_MAX_LINE bytes in either
 * direction. JSON strings never contain a raw newline (they are escaped), so
 * '\n' always ends a message.
 *
 * Requests and their answers:
 *
 *   {"op":"admit","spec":{...workload spec, numaplace-workload(5)...}}
 *     -> {"ok":true,"decision":D}
 *        D is np_decision_to_json(): when admitted, the workload status
 *        (np_workload_alloc_to_json: name, cgroup, qos, class, cpuset,
 *        exclusive, mems, containers[{name, cpuset, exclusive, mems,
 *        hint{mask,preferred}, devices}], cpuSharedPools for shared
 *        classes) plus "admitted":true; when rejected
 *        {"admitted":false,"workload":NAME,"resource":"cpu","reason":"..."}.
 *        A rejection is a successful request: "ok" is true.
 *
 *   {"op":"release","name":"web"}
 *     -> {"ok":true}
 *        unknown name:
 *        {"ok":false,"error":"release: no workload named \"web\""}
 *
 *   {"op":"status"}
 *     -> {"ok":true,"status":{
 *           "topology": np_topology_to_json() (the JSON topology form),
 *           "pools": np_pools_to_json() {reserved, shared, exclusive, be,
 *                    allocatable, cpuSharedPools, beSharedPools},
 *           "workloads": [np_workload_alloc_to_json(), ...],
 *           "counters": {"cycles":N,"drift_repaired":N,"admitted":N,
 *                        "rejected":N,"released":N,"write_errors":N,
 *                        "writes":N (cgroup writes and unit changes, all
 *                        cycles), "bus_reads":N, "bus_changes":N (systemd
 *                        method calls), "state_saves":N (state.json
 *                        written and fsynced), ...},
 *           "rejections": [{"workload":"x","resource":"cpu",
 *                           "reason":"...","time":UNIX}, ...] (most recent
 *                          last),
 *           "reconcile_period_s": 10,
 *           "last_cycle": {"time":UNIX,"writes":N,"duration_us":N}}}
 *        Further counters may be added; clients show the ones they do not
 *        know by name.
 *
 *   {"op":"plan","request":{...planner request, docs/planner.md...}}
 *     -> {"ok":true,"result":{...np_plan() result...}}
 *
 *   {"op":"reload"}
 *     -> {"ok":true}
 *
 * Any failure: {"ok":false,"error":"MESSAGE"}, the message naming the
 * field, e.g. bad JSON ("request: invalid JSON at column 3: ..."), an
 * unknown op ("op: \"x\" is not admit, release, status, plan or reload"),
 * a bad spec ("spec.containers[0].cpu: ..."), or a non-root peer
 * ("permission denied: numaplaced accepts requests from root only").
 */
#ifndef NUMAPLACE_CTL_H
#define NUMAPLACE_CTL_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

#define NP_CTL_DEFAULT_SOCKET "/run/numaplace/numaplace.sock"
/* Longest request or response line, '\n' included. */
#define NP_CTL_MAX_LINE (1024 * 1024)
/* Default time limit of one call (connect, send, answer). */
#define NP_CTL_TIMEOUT_MS 30000

/*
 * One request, one response. socket_path NULL means NP_CTL_DEFAULT_SOCKET.
 * Returns 0 with *response set (a JSON object, which may still say
 * "ok":false: see np_ctl_check) or a negative errno with err set:
 *   -ENOENT        "numaplaced is not running (no socket at PATH)"
 *   -ECONNREFUSED  "numaplaced is not running (stale socket PATH)"
 *   -EACCES        "permission denied on PATH: run as root"
 *   -ETIMEDOUT     no (complete) answer within the time limit
 *   -EMSGSIZE      request or response over NP_CTL_MAX_LINE
 *   -ECONNRESET    the server closed the connection without answering
 *   -EPROTO        the answer is not a JSON object
 * np_ctl_call uses NP_CTL_TIMEOUT_MS; timeout_ms < 0 means no limit.
 */
int np_ctl_call(const char *socket_path, const json_t *request,
		json_t **response, char *err, size_t errlen);
int np_ctl_call_timeout(const char *socket_path, const json_t *request,
			json_t **response, char *err, size_t errlen,
			int timeout_ms);

/*
 * 0 if the response says "ok":true; -EREMOTEIO with the server's "error"
 * message in err if "ok":false; -EPROTO if it has no boolean "ok".
 */
int np_ctl_check(const json_t *response, char *err, size_t errlen);

/*
 * Read a workload spec from path ("-" = stdin) and validate it as
 * numaplaced will (np_workload_req_from_json, path "spec"). Returns 0 with
 * *spec set, -EINVAL for bad JSON or a bad spec (err names the file and
 * the field), or -errno if the file cannot be read.
 */
int np_ctl_load_spec(const char *path, json_t **spec, char *err, size_t errlen);

#endif
