/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The what-if planner: one JSON request in, one JSON result out. Kinds:
 * "take" (choose CPUs), "merge" (Topology Manager hint merge) and "admit"
 * (one full admission). The contract is tests/data/vectors/README.md.
 */
#ifndef NUMAPLACE_PLAN_H
#define NUMAPLACE_PLAN_H

#include <jansson.h>
#include <stddef.h>

/*
 * Run one request. Returns 0 with *result set (an {"error": ...} object when
 * the request is valid but cannot be met), or -EINVAL when the request is
 * malformed (err names the field), or another negative errno.
 */
int np_plan(const json_t *req, json_t **result, char *err, size_t errlen);

/*
 * Compare a result with the request's expectations ("expect",
 * "expect_error", "admit"). Returns 1 when the request has none, 0 when
 * they match, -1 on a mismatch (why says how).
 */
int np_plan_check(const json_t *req, const json_t *result, char *why,
		  size_t len);

#endif
