// SPDX-License-Identifier: Apache-2.0
/*
 * Quiet cycles: a reconcile cycle skips the managed cgroups (no read, no
 * plan, no write) when nothing can have changed since the last cycle that
 * went through them and found nothing to do (docs/architecture.md, "Quiet cycles").
 */
#include "daemon/daemon_internal.h"
#include "numaplace/be_suppress.h"

#include <stdint.h>

/* Nothing can differ from the last cycle through the managed cgroups,
 * which found nothing to do: no save since (admission, release, resize,
 * spec file, verification), no error, no CPU hotplug, no event of the
 * enforcer (a cpuset file written, a cgroup removed or renamed: inotify)
 * and no full reading due; BE suppression off (its pool moves with the
 * load). The enforcer's events are consumed here either way. */
bool np_daemon_quiet_cycle(struct np_daemon *d,
			   const np_cpuset *offline0)
{
	bool since = d->enf->ops->quiet &&
		     d->enf->ops->quiet(d->enf, NP_ENF_QUIET_SINCE);

	return since && d->quiet_ok && !d->dirty &&
	       d->n.state_saves == d->quiet_saves &&
	       d->n.write_errors == d->quiet_errors &&
	       np_cpuset_equal(offline0, &d->st.offline) &&
	       d->cfg.be_suppress.policy == NP_SUPPRESS_NONE;
}

/* After a cycle: may the next ones be quiet? Not when it wrote, failed,
 * or saved after it went through the cgroups (verification's partition,
 * a pending mark: the next cycle must see it). */
void np_daemon_quiet_after(struct np_daemon *d, bool quiet, int r,
			   int writes, uint64_t errors0, uint64_t saves0)
{
	bool clean = r == 0 && writes == 0 && d->n.write_errors == errors0 &&
		     d->n.state_saves == saves0;

	if (!d->enf)
		return;
	if (quiet)
		d->quiet_ok = d->quiet_ok && clean;
	else
		d->quiet_ok = clean && d->enf->ops->quiet &&
			      d->enf->ops->quiet(d->enf, NP_ENF_QUIET_READ);
	d->quiet_saves = d->n.state_saves;
	d->quiet_errors = d->n.write_errors;
}
