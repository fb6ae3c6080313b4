/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The human renderings of numaplaced's answers (numaplace/ctl.h), for the
 * CLI: `numaplace status` and `numaplace admit`. Both need only the JSON,
 * so they also work on a saved `--json` output.
 */
#ifndef NUMAPLACE_TOOLS_STATUS_RENDER_H
#define NUMAPLACE_TOOLS_STATUS_RENDER_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

/*
 * Print the status object (the "status" member of a status answer) for
 * people: a CPU map per NUMA node, pools, workloads, counters, rejections
 * and the last reconcile cycle. Returns 0, or -EINVAL if the object is
 * malformed (np_status_render_err names the field).
 */
int np_status_render(const json_t *status, FILE *out);
int np_status_render_err(const json_t *status, FILE *out, char *err,
			 size_t errlen);

/*
 * Print an admission decision (the "decision" member of an admit answer):
 *   admitted web: cpuset 1,5 mems 0 (LSE, hint 0 preferred)
 *     main: cpuset 1,5 exclusive, mems 0, hint 0 preferred
 * or
 *   rejected web: REASON (resource cpu)
 * Returns 0, or -EINVAL if it has no boolean "admitted".
 */
int np_decision_render(const json_t *decision, FILE *out);

#endif
