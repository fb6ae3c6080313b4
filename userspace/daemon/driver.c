// SPDX-License-Identifier: Apache-2.0
/*
 * Which enforcer applies the placements (config "cgroup_driver"): cgroupfs
 * (numaplaced writes the cgroup files itself) or systemd (unit properties
 * over the bus, cgroup files only below a delegated scope). "auto" picks
 * systemd when PID 1 is systemd and its bus answers, and says why.
 */
#include "daemon_internal.h"
#include "numaplace/enforcer.h"
#include "numaplace/error.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define NP_WORKLOAD_SCOPE "numaplace-workloads.scope"

static int open_cgroupfs(struct np_daemon *d, const char *const *host,
			 char *err, size_t errlen)
{
	struct np_cgroup_opts o = {0};

	o.root = d->cfg.cgroup_root[0] ? d->cfg.cgroup_root : NULL;
	o.parent = d->cfg.cgroup_parent;
	o.allow_fake = d->cfg.fake_cgroup_root;
	o.create_parent = true;
	o.full_scan_ms = d->cfg.full_scan_ms;
	return np_enforcer_cgroupfs_open(&d->enf, &o, host, d->cfg.nshared,
					 err, errlen);
}

static int open_systemd(struct np_daemon *d, const char *const *host,
			char *err, size_t errlen)
{
	static const char *const holder[] = {"/proc/self/exe",
					     "--scope-holder", NULL};
	struct np_enforcer_systemd_opts o = {
		.root = d->cfg.cgroup_root[0] ? d->cfg.cgroup_root : NULL,
		.slice = d->cfg.cgroup_parent,
		.scope = NP_WORKLOAD_SCOPE,
		.runtime_dir = d->cfg.runtime_dir,
		.state_dir = d->cfg.state_dir,
		.holder_argv = holder,
		.online = d->topo->online,
		.full_scan_ms = d->cfg.full_scan_ms,
	};
	char managed[NP_PATH_MAX], via[256];
	int r;

	for (int i = 0; i < 64; i++)
		if (d->topo->numa_mask >> i & 1)
			np_cpuset_set(&o.nodes, i);
	if ((r = np_daemon_runtime_dir(d, err, errlen)))
		return r;
	r = np_enforcer_systemd_open(&d->enf, &o, host, d->cfg.nshared,
				     managed, sizeof(managed), err, errlen);
	if (r < 0)
		return r;
	snprintf(via, sizeof(via), "%s", err);
	np_log(LOG_INFO,
	       "cgroup driver: systemd (bus: %s); workloads below the "
	       "delegated scope %s",
	       via, managed);
	/* From here on the managed parent is the scope. */
	snprintf(d->cfg_parent, sizeof(d->cfg_parent), "%s",
		 d->cfg.cgroup_parent);
	snprintf(d->cfg.cgroup_parent, sizeof(d->cfg.cgroup_parent), "%s",
		 managed);
	return 0;
}

int np_daemon_open_enforcer(struct np_daemon *d, char *err, size_t errlen)
{
	const char *host[NP_MAX_SHARED_CGROUPS];
	enum np_cgroup_driver drv = d->cfg.driver;
	char why[512] = "";
	int r;

	if (drv == NP_DRIVER_AUTO) {
		if (d->cfg.fake_cgroup_root)
			snprintf(why, sizeof(why), "a fake cgroup root");
		drv = !d->cfg.fake_cgroup_root &&
			      np_systemd_usable(NULL, why, sizeof(why))
			  ? NP_DRIVER_SYSTEMD
			  : NP_DRIVER_CGROUPFS;
		np_log(LOG_INFO, "cgroup driver auto: %s (%s)",
		       np_cgroup_driver_name(drv), why);
		if (drv == NP_DRIVER_SYSTEMD &&
		    (r = np_config_check_systemd(&d->cfg, err, errlen)))
			return r;
	}
	/* Configured, but this is no systemd host: the operator's to fix,
	 * not something a restart would cure. */
	if (drv == NP_DRIVER_SYSTEMD && d->cfg.driver == NP_DRIVER_SYSTEMD &&
	    !np_systemd_usable(NULL, why, sizeof(why)))
		return np_errf(err, errlen, -EOPNOTSUPP,
			       "config.cgroup_driver is \"systemd\", but %s",
			       why);
	if (drv == NP_DRIVER_SYSTEMD)
		np_config_systemd_defaults(&d->cfg);
	for (int i = 0; i < d->cfg.nshared; i++)
		host[i] = d->cfg.shared_cgroups[i];
	if (drv == NP_DRIVER_CGROUPFS) {
		snprintf(d->cfg_parent, sizeof(d->cfg_parent), "%s",
			 d->cfg.cgroup_parent);
		return open_cgroupfs(d, host, err, errlen);
	}
	if ((r = open_systemd(d, host, err, errlen)) < 0) {
		char msg[1024];
		snprintf(msg, sizeof(msg), "%s", err);
		np_errf(err, errlen, r, "systemd driver: %.900s", msg);
	}
	return r;
}

/* A clean stop: host cgroups get their CPUs back (systemd driver). */
void np_daemon_shutdown_enforcer(struct np_daemon *d)
{
	char err[1024];

	if (!d->enf || !d->enf->ops->shutdown)
		return;
	if (d->enf->ops->shutdown(d->enf, err, sizeof(err)) < 0)
		np_log(LOG_ERR, "giving host units their CPUs back: %s", err);
	else
		np_log(LOG_INFO, "host units have their CPUs back");
}

bool np_daemon_stopping_for_restart(struct np_daemon *d)
{
	char why[768] = "";
	bool restart;

	if (!d->enf || !d->enf->ops->restarting)
		return false;
	restart = d->enf->ops->restarting(d->enf, why, sizeof(why));
	if (restart)
		np_log(LOG_INFO,
		       "stopping for a restart (%s): host units and IRQs keep "
		       "their confinement for the next start",
		       why);
	else
		np_log(LOG_INFO, "a stop (%s): host units and IRQs get back "
				 "what they had",
		       why);
	return restart;
}
