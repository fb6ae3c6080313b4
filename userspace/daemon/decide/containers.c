// SPDX-License-Identifier: Apache-2.0
/*
 * Decide: workloads that are OCI containers ("container": {"id",
 * "cgroup"} in the spec; `numaplace oci-hook` sends them). Their cgroup is
 * the runtime's, named from the hierarchy root ("/np/ctr1",
 * "/numaplace.slice/np-ctr3.scope/container"): numaplaced writes its
 * cpuset like any workload's but never creates or removes it, and
 * releases the workload when the runtime removed it (reconcile.c,
 * release_vanished). What may be admitted is checked here. Under the
 * systemd driver a container that is a scope of its own (runc's systemd
 * driver) is placed through the scope's unit properties instead.
 */
#include "daemon/daemon_internal.h"
#include "numaplace/enforcer.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Does a (component-wise) contain b, or equal it? */
static bool within(const char *a, const char *b)
{
	size_t n = strlen(a);
	return !n || (!strncmp(a, b, n) && (b[n] == '\0' || b[n] == '/'));
}

/* Will the engine give it CPUs of its own? (LSE, LSR; Guaranteed with
 * whole CPUs under the static policy.) */
static bool wants_exclusive(const struct np_daemon *d,
			    const struct np_workload_req *w)
{
	if (w->qos == NP_QOS_LSE || w->qos == NP_QOS_LSR)
		return true;
	if (w->qos != NP_QOS_GUARANTEED ||
	    d->cfg.policy.cpu_policy != NP_CPU_POLICY_STATIC)
		return false;
	for (int i = 0; i < w->ncontainers; i++)
		if (w->c[i].cpu_milli > 0 && w->c[i].cpu_milli % 1000 == 0)
			return true;
	return false;
}

int np_daemon_find_container(const struct np_daemon *d, const char *id)
{
	for (int i = 0; i < d->st.nworkloads; i++)
		if (d->st.w[i]->req.container_id &&
		    !strcmp(d->st.w[i]->req.container_id, id))
			return i;
	return -1;
}

/* Is unit a scope (the only units a runtime makes for one container)? */
static bool is_scope(const char *unit)
{
	size_t n = strlen(unit);
	return n > 6 && !strcmp(unit + n - 6, ".scope");
}

int np_daemon_container_unit(struct np_daemon *d, struct np_workload_req *w)
{
	char unit[NP_UNIT_NAME_MAX], uerr[256];

	if (!w->container_id || w->unit || !w->cgroup || w->cgroup[0] != '/' ||
	    !d->enf || !d->enf->ops->set_unit ||
	    np_systemd_unit_of_cgroup(w->cgroup + 1, unit, sizeof(unit), uerr,
				      sizeof(uerr)) ||
	    !is_scope(unit))
		return 0;
	return (w->unit = strdup(unit)) ? 0 : -ENOMEM;
}

int np_daemon_container_check(struct np_daemon *d,
			      const struct np_workload_req *w, char *why,
			      size_t len)
{
	const char *rel = w->cgroup + 1, *managed = d->cfg.cgroup_parent;
	char unit[NP_UNIT_NAME_MAX], uerr[256], err[512];
	np_cpuset cpus;
	np_nodemask mems;
	int i, r;

	if (!w->container_id)
		return 0;
	if ((i = np_daemon_find_container(d, w->container_id)) >= 0 &&
	    strcmp(d->st.w[i]->req.name, w->name)) {
		snprintf(why, len, "container %.128s is workload %.128s's already",
			 w->container_id, d->st.w[i]->req.name);
		return -EBUSY;
	}
	if (within(managed, rel) || within(rel, managed)) {
		snprintf(why, len,
			 "container cgroup %.512s is %s numaplace's managed "
			 "parent /%.512s: give the runtime a cgroup outside it",
			 w->cgroup, within(managed, rel) ? "inside" : "above",
			 managed);
		return -EINVAL;
	}
	for (int k = 0; k < d->cfg.nshared; k++) {
		const char *s = d->cfg.shared_cgroups[k];
		if (within(rel, s)) {
			snprintf(why, len,
				 "container cgroup %.512s holds the shared "
				 "cgroup /%.512s",
				 w->cgroup, s);
			return -EINVAL;
		}
		if (within(s, rel) && wants_exclusive(d, w)) {
			snprintf(why, len,
				 "container cgroup %.512s is inside /%.512s, "
				 "which is confined to the shared pool: exclusive "
				 "CPUs need a parent outside shared_cgroups (crun "
				 "cgroupsPath numaplace.slice:PREFIX:NAME, podman "
				 "--cgroup-parent numaplace.slice)",
				 w->cgroup, s);
			return -EPERM;
		}
	}
	/* Under systemd the unit's own cgroup is systemd's to write (it
	 * rewrites it at every daemon-reload): a scope (runc's systemd
	 * driver) is placed through its properties (w->unit, set by
	 * np_daemon_container_unit); below a unit (crun's and podman's
	 * "container") the runtime was delegated the tree. */
	if (d->enf && d->enf->ops->set_unit && !w->unit &&
	    !np_systemd_unit_of_cgroup(rel, unit, sizeof(unit), uerr,
				       sizeof(uerr))) {
		snprintf(why, len,
			 "container cgroup %.512s is the cgroup of the systemd "
			 "unit %s, which systemd writes, and not a scope: the "
			 "container must run in a scope of its own (runc's "
			 "systemd driver) or in a cgroup below a unit (crun "
			 "and podman use .../container)",
			 w->cgroup, unit);
		return -EPERM;
	}
	if (d->enf && (r = d->enf->ops->read(d->enf, w->cgroup, &cpus, &mems,
					     err, sizeof(err)))) {
		snprintf(why, len, "container cgroup %.512s: %s", w->cgroup,
			 r == -ENOENT ? "does not exist" : err);
		return r;
	}
	return 0;
}

/*
 * The same workload or container asked for again with the same request (a
 * client retrying after a lost answer, a runtime calling both prestart and
 * createRuntime, a hook retried after a timeout): its allocation, as the
 * kubelet's Allocate answers a container it knows. A container is found by
 * its id, anything else by its name among the workloads admitted through
 * the socket (a spec file's is refused as before). true with dec filled;
 * false for
 * anything else (a different request goes through admission, which
 * refuses a taken name).
 */
bool np_daemon_admit_again(struct np_daemon *d, const json_t *spec,
			   struct np_decision *dec)
{
	const json_t *ctr = json_object_get(spec, "container");
	const char *id = json_string_value(json_object_get(ctr, "id"));
	const char *name = json_string_value(json_object_get(spec, "name"));
	struct np_workload_req w;
	bool same;
	char err[256];
	int i;

	if (ctr) {
		i = id ? np_daemon_find_container(d, id) : -1;
	} else {
		/* only one admitted through the socket: a spec file's
		 * workload is not the socket's to answer for */
		const struct np_wl_meta *m = name ? np_daemon_meta_find(d, name) : NULL;
		i = m && !strempty(m->spec_file)[0] ? np_state_find(&d->st, name) : -1;
	}
	if (i < 0)
		return false;
	if (np_workload_req_from_json(&w, spec, "spec", err, sizeof(err))) {
		np_workload_req_free(&w);
		return false;
	}
	same = np_workload_req_same(&w, &d->st.w[i]->req);
	np_workload_req_free(&w);
	if (!same)
		return false;
	memset(dec, 0, sizeof(*dec));
	dec->admitted = true;
	snprintf(dec->workload, sizeof(dec->workload), "%s",
		 d->st.w[i]->req.name);
	dec->alloc = d->st.w[i];
	return true;
}
