/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Failpoints: test-only fault injection, the one clearly internal place
 * for it. A failpoint is armed by NUMAPLACED_FAILPOINT=NAME in the
 * environment of a test build only: built without -DNP_FAILPOINTS (the
 * default for `make`; tests/host/daemon-host.sh uses the test build) it is
 * never armed, whatever the environment says.
 *
 * Known names: "admit-saved" (numaplaced exits 86 right after an
 * admission is saved, before its cgroup is created).
 */
#ifndef NUMAPLACE_BASIC_FAILPOINT_H
#define NUMAPLACE_BASIC_FAILPOINT_H

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static inline bool np_failpoint(const char *name)
{
#ifdef NP_FAILPOINTS
	const char *fp = getenv("NUMAPLACED_FAILPOINT");
	return fp && !strcmp(fp, name);
#else
	(void)name;
	return false;
#endif
}

#endif
