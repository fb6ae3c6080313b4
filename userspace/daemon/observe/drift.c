// SPDX-License-Identifier: Apache-2.0
/*
 * Observe: drift, a cgroup that no longer holds what the daemon wrote
 * (found by the cycle's read back or by verification): said and counted.
 */
#include "daemon/daemon_internal.h"

#include <stdlib.h>

void np_daemon_drift(struct np_daemon *d, const char *cgroup,
		     const np_cpuset *have, const np_cpuset *want,
		     const char *how)
{
	char *a = np_cpuset_str(have), *b = np_cpuset_str(want);
	np_log(LOG_WARNING, "drift in %s: cpuset.cpus is \"%s\", want \"%s\"%s",
	       cgroup, a ? a : "?", b ? b : "?", how);
	free(a);
	free(b);
	d->n.drift_repaired++;
}
