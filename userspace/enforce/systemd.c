// SPDX-License-Identifier: Apache-2.0
/*
 * The systemd enforcer backend. Under systemd, PID 1 owns every cgroup: at
 * daemon-reload or set-property it rewrites cpuset.cpus of units from their
 * AllowedCPUs, including the own cpuset of a Delegate=yes unit; only the
 * cgroups below a delegation point are left alone. So:
 *
 *   - host units (system.slice, init.scope, ...) get AllowedCPUs and
 *     AllowedMemoryNodes through SetUnitProperties(runtime=true), never a
 *     cgroup file write;
 *   - workload cgroups live below a transient scope with Delegate=yes
 *     (numaplace-workloads.scope in numaplace.slice); everything below it
 *     is written through the cgroupfs backend rooted at the scope; the
 *     scope's own set is a unit property too.
 *
 * A scope stops when its cgroup is empty, so a holder process (which only
 * sleeps) keeps it up; it lives in the leaf ".np+holder" (no workload
 * cgroup can have that name: '+' is refused in specs), which leaves the
 * scope itself free of processes so that it can enable cpuset below.
 */
#include "systemd_internal.h"
#include "basic/fileio.h"
#include "numaplace/cleanup.h"
#include "numaplace/enforcer.h"
#include "numaplace/error.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

/* ---- enforcer operations ----------------------------------------------- */

static int set_unit_cpuset(struct systemd_backend *s, const char *cgroup,
			   const np_cpuset *cpus, const np_nodemask *mems,
			   char *err, size_t errlen);

static void sd_cycle(struct np_enforcer *e)
{
	SD(e)->listed_now = false; /* the slice's units: read again */
	SD(e)->fs->ops->cycle(SD(e)->fs);
}

static bool sd_quiet(struct np_enforcer *e, int what)
{
	return SD(e)->fs->ops->quiet && SD(e)->fs->ops->quiet(SD(e)->fs, what);
}

static int sd_read(struct np_enforcer *e, const char *cgroup, np_cpuset *cpus,
		   np_nodemask *mems, char *err, size_t errlen)
{
	return SD(e)->fs->ops->read(SD(e)->fs, cgroup, cpus, mems, err, errlen);
}

static int sd_inspect(struct np_enforcer *e, enum np_enf_tree t,
		      const char *cgroup, struct np_cgroup_state *st,
		      char *err, size_t errlen)
{
	if (t == NP_ENF_MANAGED)
		return SD(e)->fs->ops->inspect(SD(e)->fs, t, cgroup, st, err,
					       errlen);
	return np_cgroup_inspect(&SD(e)->host, cgroup, st, err, errlen);
}

static int sd_prepare(struct np_enforcer *e, enum np_enf_tree t,
		      const char *cgroup, bool create, char *err,
		      size_t errlen)
{
	struct np_cgroup_state st;
	int r;

	if (t == NP_ENF_MANAGED)
		return SD(e)->fs->ops->prepare(SD(e)->fs, t, cgroup, create,
					       err, errlen);
	if (create)
		return np_errf(err, errlen, -EPERM,
			       "%s: under the systemd driver, cgroups outside "
			       "%s are systemd's to create",
			       cgroup, SD(e)->managed);
	if (!np_cgroup_inspect(&SD(e)->host, cgroup, &st, err, errlen))
		return 0;
	if (faccessat(SD(e)->host.root_fd, cgroup, F_OK, AT_SYMLINK_NOFOLLOW))
		return np_errno(err, errlen, -errno, "cgroup %s", cgroup);
	/* There, without cpuset files: systemd enables the controller for
	 * a unit once it has AllowedCPUs. */
	if ((r = set_unit_cpuset(SD(e), cgroup, &SD(e)->online, NULL, err,
				 errlen)) < 0)
		return r;
	return np_cgroup_inspect(&SD(e)->host, cgroup, &st, err, errlen);
}

static int sd_apply(struct np_enforcer *e, const struct np_cgroup_change *ch,
		    int n, int *writes, char *err, size_t errlen)
{
	return SD(e)->fs->ops->apply(SD(e)->fs, ch, n, writes, err, errlen);
}

static int nodes_of(np_nodemask m, np_cpuset *out)
{
	np_cpuset_zero(out);
	for (int i = 0; i < 64; i++)
		if (m >> i & 1)
			np_cpuset_set(out, i);
	return 0;
}

/* A host cgroup (or numaplace's scope) through its unit; then read
 * back. */
static int set_unit_cpuset(struct systemd_backend *s, const char *cgroup,
			   const np_cpuset *cpus, const np_nodemask *mems,
			   char *err, size_t errlen)
{
	char unit[256], want[4096], got[4096];
	struct np_cgroup_state st;
	struct host_unit *u;
	np_cpuset nodes;
	bool own = !strcmp(cgroup, s->managed); /* nothing to restore */
	int r;

	if (own)
		snprintf(unit, sizeof(unit), "%s", s->scope);
	else if ((r = np_systemd_unit_of_cgroup(cgroup, unit, sizeof(unit),
						err, errlen)) < 0)
		return r;
	if (!(u = np_systemd_unit_add(s, unit, cgroup)))
		return np_errf(err, errlen, -ENOMEM, "out of memory");
	if (!own && (r = np_systemd_record(s, u, err, errlen)) < 0)
		return r;
	if (mems)
		nodes_of(*mems, &nodes);
	if ((r = np_systemd_set_allowed(s, unit, cpus, mems ? &nodes : NULL, err,
			     errlen)) < 0)
		return r;
	/* systemd accepts CPUs that do not exist and applies nothing */
	if (np_cgroup_inspect(&s->host, cgroup, &st, NULL, 0))
		return 0; /* not realized yet: it gets the set when it is */
	if (np_cpuset_equal(&st.cpus, cpus))
		return 0;
	np_cpuset_format(cpus, want, sizeof(want));
	np_cpuset_format(&st.cpus, got, sizeof(got));
	np_errmsg(err, errlen,
		  "systemd took AllowedCPUs=%s for %s, but its cgroup holds "
		  "%s",
		  want, unit, got);
	return 1;
}

static int sd_set_cpuset(struct np_enforcer *e, enum np_enf_tree t,
			 const char *cgroup, const np_cpuset *cpus,
			 const np_nodemask *mems, char *err, size_t errlen)
{
	if (t == NP_ENF_MANAGED)
		return SD(e)->fs->ops->set_cpuset(SD(e)->fs, t, cgroup, cpus,
						  mems, err, errlen);
	return set_unit_cpuset(SD(e), cgroup, cpus, mems, err, errlen);
}

/* Managed cgroups are below numaplace's delegated scope: their files are
 * written directly, as their cpusets are. */
static int sd_set_cpu_max(struct np_enforcer *e, const char *cgroup,
			  int64_t quota_us, int64_t period_us, char *err,
			  size_t errlen)
{
	return SD(e)->fs->ops->set_cpu_max(SD(e)->fs, cgroup, quota_us,
					   period_us, err, errlen);
}

/*
 * The delegated scope as a partition root, for isolated workloads below it.
 * Its CPUs are a unit property (AllowedCPUs, through the bus), as
 * everywhere; the partition mode is not (systemd 252 has no property for
 * it and leaves cpuset.cpus.partition alone across daemon-reload and
 * set-property), so that one file of numaplace's own scope is written
 * here. Only in the root slice (cgroup_parent "-.slice"): a partition's
 * parent must be a partition root, and Linux 6.1 refuses a scope that
 * takes all of its slice's CPUs; a slice made a root for nothing would
 * keep AllowedCPUs that systemd cannot clear, and void any later partition
 * beside it (open refuses partition admissions then: no_partitions).
 */
static int scope_partition(struct systemd_backend *s, enum np_cgroup_partition p, char *err,
		       size_t errlen)
{
	struct np_cgroup_state st;
	int r;

	if (s->e.no_partitions)
		return np_errf(err, errlen, -EOPNOTSUPP, "%s",
			       s->e.no_partitions);
	if (p == NP_CGROUP_MEMBER)
		return np_cgroup_set_partition(&s->host, s->managed, p, NULL,
					       err, errlen);
	if ((r = np_cgroup_inspect(&s->host, s->managed, &st, err, errlen)) < 0)
		return r;
	if (np_cpuset_empty(&st.cpus))
		return np_errf(err, errlen, -EINVAL,
			       "%s: no AllowedCPUs to make a partition of",
			       s->scope);
	return np_cgroup_set_partition(&s->host, s->managed, NP_CGROUP_ROOT,
				       NULL, err, errlen);
}

static int sd_set_partition(struct np_enforcer *e, enum np_enf_tree t,
			    const char *cgroup, enum np_cgroup_partition p,
			    char *err, size_t errlen)
{
	if (t == NP_ENF_MANAGED)
		return SD(e)->fs->ops->set_partition(SD(e)->fs, t, cgroup, p,
						     err, errlen);
	if (strcmp(cgroup, SD(e)->managed) || p == NP_CGROUP_ISOLATED)
		return np_errf(err, errlen, -EPERM,
			       "%s: under the systemd driver only the scope "
			       "%s becomes a partition root; other cgroups "
			       "of systemd's are not written",
			       cgroup, SD(e)->scope);
	return scope_partition(SD(e), p, err, errlen);
}

static int sd_remove(struct np_enforcer *e, const char *cgroup)
{
	return SD(e)->fs->ops->remove(SD(e)->fs, cgroup);
}

static void sd_forget(struct np_enforcer *e, const char *cgroup)
{
	SD(e)->fs->ops->forget(SD(e)->fs, cgroup);
}

/* Below the delegation point only: systemd enables the controllers down
 * to the scope (Delegate=yes). */
static int sd_enable_controller(struct np_enforcer *e, const char *ctrl,
				char *err, size_t errlen)
{
	return SD(e)->fs->ops->enable_controller(SD(e)->fs, ctrl, err, errlen);
}

static int sd_migrate(struct np_enforcer *e, const char *cgroup,
		      np_nodemask from, np_nodemask to,
		      struct np_migrate_result *res, char *err, size_t errlen)
{
	return SD(e)->fs->ops->migrate_memory(SD(e)->fs, cgroup, from, to, res,
					      err, errlen);
}

static int sd_parent_fd(struct np_enforcer *e)
{
	return SD(e)->fs->ops->parent_fd(SD(e)->fs);
}

static int sd_root_fd(struct np_enforcer *e)
{
	return SD(e)->fs->ops->root_fd(SD(e)->fs);
}

static bool sd_fake(struct np_enforcer *e)
{
	(void)e;
	return false;
}

/* Host units get back what they had; where they had no AllowedCPUs, the
 * explicit full range (an empty one would leave the cgroup as it is).
 * So do the units confined beside the scope (strays), their memory nodes
 * too; one gone meanwhile has nothing to give back. */
static int sd_shutdown(struct np_enforcer *e, char *err, size_t errlen)
{
	struct systemd_backend *s = SD(e);
	struct np_cgroup_state st;
	int first = 0;

	/* Host units cannot widen over a partition root: the scope goes back
	 * to member first (isolated workloads below then share the scope's
	 * CPUs until a restart makes them partitions again). */
	if (!np_cgroup_inspect(&s->host, s->managed, &st, NULL, 0) &&
	    st.has_partition && st.partition != NP_CGROUP_MEMBER) {
		char e2[512];
		int r = scope_partition(s, NP_CGROUP_MEMBER, e2, sizeof(e2));
		if (r < 0)
			first = np_errf(err, errlen, r, "%s", e2);
	}
	for (int i = 0; i < s->nunits; i++) {
		struct host_unit *u = &s->units[i];
		char e2[512];
		int r;
		if (!u->recorded || !(u->host || u->stray))
			continue;
		/* a stray that stopped gets nothing (np_systemd_release_unit
		 * says why) and keeps its record, on disk: the next run
		 * confines it, or gives it back, when it runs again */
		if (!u->host && (r = np_systemd_unit_runs(s, u, e2,
							  sizeof(e2))) <= 0) {
			if (r < 0 && !first)
				first = np_errf(err, errlen, r, "%s", e2);
			continue;
		}
		/* host units' memory nodes are never changed: left alone */
		r = np_systemd_set_allowed(
		    s, u->unit, u->orig_cpus_set ? &u->orig_cpus : &s->full,
		    u->host		 ? NULL
		    : u->orig_mems_set ? &u->orig_mems
					 : &s->nodes,
		    e2, sizeof(e2));
		if (r < 0 && !u->host && (r == -ENOENT || r == -ENXIO))
			r = 0;
		if (r < 0 && !first)
			first = np_errf(err, errlen, r, "%s", e2);
		if (!r && !u->host)
			u->recorded = u->known = false;
	}
	if (!first) {
		/* workload units keep theirs, and their records */
		for (int i = 0; i < s->nunits; i++)
			if (s->units[i].host)
				s->units[i].recorded = s->units[i].known =
				    false;
		first = np_systemd_save_originals(s, err, errlen);
	}
	return first;
}

/* A restart (systemctl restart, a package upgrade's postinst) runs a job
 * of type restart (try-restart on an active unit becomes one) on our unit
 * while it stops us; a stop, a stop job. 5 s at most per bus call: a
 * manager too busy to answer makes it a stop, as before. */
static bool sd_restarting(struct np_enforcer *e, char *why, size_t whylen)
{
	struct systemd_backend *s = SD(e);
	char unit[256], type[32], err[512];
	int r = 0;

	if (!s->bus)
		r = np_systemd_reconnect(s, err, sizeof(err));
	if (r >= 0)
		r = np_systemd_bus_job_of_pid(s->bus, getpid(), 5000000, unit,
					      sizeof(unit), type, sizeof(type),
					      err, sizeof(err));
	s->e.bus_reads++;
	if (r < 0) {
		snprintf(why, whylen, "cannot tell a restart from a stop: %s",
			 err);
		return false;
	}
	snprintf(why, whylen, "systemd's job on %s: %s", unit,
		 type[0] ? type : "none");
	return !strcmp(type, "restart") || !strcmp(type, "try-restart");
}

static void sd_destroy(struct np_enforcer *e)
{
	struct systemd_backend *s = SD(e);

	np_enf_destroy(s->fs);
	if (s->host_open)
		np_cgroup_close(&s->host);
	sd_bus_flush_close_unref(s->bus);
	free(s->units);
	free(s->listed);
	free(s);
}

static const struct np_enforcer_ops systemd_ops = {
	.name = "systemd",
	.cycle = sd_cycle,
	.quiet = sd_quiet,
	.read = sd_read,
	.inspect = sd_inspect,
	.prepare = sd_prepare,
	.apply = sd_apply,
	.set_cpuset = sd_set_cpuset,
	.set_cpu_max = sd_set_cpu_max,
	.set_partition = sd_set_partition,
	.partitions = true,
	.remove = sd_remove,
	.forget = sd_forget,
	.enable_controller = sd_enable_controller,
	.migrate_memory = sd_migrate,
	.parent_fd = sd_parent_fd,
	.root_fd = sd_root_fd,
	.fake = sd_fake,
	.set_unit = np_systemd_set_unit,
	.read_unit = np_systemd_read_unit,
	.release_unit = np_systemd_release_unit,
	.recorded_unit = np_systemd_recorded_unit,
	.slice_unit = np_systemd_slice_unit,
	.confine_unit = np_systemd_confine_unit,
	.event_fd = np_systemd_event_fd,
	.process_events = np_systemd_process_events,
	.shutdown = sd_shutdown,
	.restarting = sd_restarting,
	.destroy = sd_destroy,
};

/* ---- opening: the bus, the delegated scope, the host units ------------- */

/* Double fork: the holder's parent is PID 1, not numaplaced, and it
 * outlives a crash of the daemon. Returns the holder's pid. */
static pid_t spawn_holder(const char *const *argv, char *err, size_t errlen)
{
	int p[2], st;
	pid_t child, holder = -1;

	if (pipe2(p, O_CLOEXEC))
		return np_errno(err, errlen, -errno, "pipe");
	child = fork();
	if (child < 0) {
		close(p[0]);
		close(p[1]);
		return np_errno(err, errlen, -errno, "fork");
	}
	if (!child) {
		pid_t g;
		setsid();
		g = fork();
		if (g == 0) {
			int fd = open("/dev/null", O_RDWR | O_CLOEXEC);
			if (fd >= 0) {
				dup2(fd, 0);
				dup2(fd, 1);
				dup2(fd, 2);
			}
			execv(argv[0], (char *const *)argv);
			_exit(127);
		}
		(void)!write(p[1], &g, sizeof(g));
		_exit(g < 0);
	}
	close(p[1]);
	if (read(p[0], &holder, sizeof(holder)) != sizeof(holder))
		holder = -1;
	close(p[0]);
	waitpid(child, &st, 0);
	if (holder <= 0)
		return np_errf(err, errlen, -ECHILD,
			       "could not start the scope's holder process");
	return holder;
}

static int start_scope(struct systemd_backend *s, const struct np_enforcer_systemd_opts *o,
		       pid_t *holder, char *err, size_t errlen)
{
	char desc[512];
	pid_t pid;
	int r;

	if ((pid = spawn_holder(o->holder_argv, err, errlen)) < 0)
		return (int)pid;
	snprintf(desc, sizeof(desc),
		 "numaplace workloads (delegated; holder %s)",
		 o->holder_argv[0]);
	r = np_systemd_bus_start_scope(s->bus, s->scope, s->slice, pid, &s->online,
			      &s->nodes, desc, 10000, err, errlen);
	if (r < 0) {
		kill(pid, SIGKILL);
		return r;
	}
	*holder = pid;
	return 0;
}

static int open_scope(struct systemd_backend *s, const struct np_enforcer_systemd_opts *o,
		      char *err, size_t errlen)
{
	struct np_cgroup_opts fo = {0};
	struct np_systemd_unit_props ui;
	char root[NP_CGROUP_PATH_MAX * 2];
	pid_t holder = 0;
	int r;

	if ((r = np_systemd_unit_info(s, s->scope, false, &ui, err, errlen)) < 0)
		return r;
	/* a scope that failed (its holder killed, say) keeps its name until
	 * reset: a new one could not be started under it */
	if (!strcmp(ui.active, "failed") &&
	    (r = np_systemd_bus_reset_failed(s->bus, s->scope, err, errlen)) < 0)
		return r;
	if (strcmp(ui.active, "active") &&
	    (r = start_scope(s, o, &holder, err, errlen)) < 0)
		return r;
	if (snprintf(root, sizeof(root), "%s/%s", s->host.path, s->managed) >=
	    (int)sizeof(root))
		return np_errf(err, errlen, -ENAMETOOLONG, "scope path too long");
	fo.root = root;
	fo.parent = "";
	fo.top = s->host.path; /* containers' cgroups ("/x") */
	fo.full_scan_ms = o->full_scan_ms;
	if ((r = np_enforcer_cgroupfs_open(&s->fs, &fo, NULL, 0, err,
					   errlen)) < 0)
		return r;
	if (holder) {
		struct np_cgroup_root sr;
		if ((r = np_cgroup_open(&sr, &fo, err, errlen)) < 0)
			return r;
		r = np_cgroup_move_pid(&sr, HOLDER, holder, true, err, errlen);
		np_cgroup_close(&sr);
	}
	return r;
}

static int open_host_units(struct systemd_backend *s, const char *const *host,
			   int nhost, char *err, size_t errlen)
{
	char unit[256], e2[512];
	int r;

	for (int i = 0; i < nhost; i++) {
		if ((r = np_systemd_unit_of_cgroup(host[i], unit, sizeof(unit), e2,
					      sizeof(e2))) < 0)
			return np_errf(err, errlen, r, "shared_cgroups[%d]: %s",
				       i, e2);
		struct host_unit *u = np_systemd_unit_add(s, unit, host[i]);
		if (!u)
			return np_errf(err, errlen, -ENOMEM, "out of memory");
		/* the file's units, met before, learn their cgroups now */
		snprintf(u->cgroup, sizeof(u->cgroup), "%s", host[i]);
		u->host = true;
	}
	return 0;
}

/* "Every CPU", for a unit given back where it had no AllowedCPUs: the
 * possible CPUs (one hotplugged later is then included), else the online
 * ones. */
static bool full_range(np_cpuset *full, const np_cpuset *online)
{
	char *txt = NULL;
	bool ok = !np_read_at(AT_FDCWD, "/sys/devices/system/cpu/possible", 0,
			      4096, &txt, NULL) &&
		  np_cpuset_parse(full, txt, NULL, 0) >= 0;

	if (!ok)
		*full = *online;
	free(txt);
	np_cpuset_or(full, full, online);
	return ok;
}

int np_enforcer_systemd_open(struct np_enforcer **out,
			     const struct np_enforcer_systemd_opts *o,
			     const char *const *host, int nhost, char *managed,
			     size_t managed_len, char *err, size_t errlen)
{
	struct np_cgroup_opts ho = {.root = o->root, .parent = ""};
	struct systemd_backend *s = calloc(1, sizeof(*s));
	char slice_path[NP_CGROUP_PATH_MAX];
	const char *via;
	bool possible;
	int r;

	*out = NULL;
	if (!s)
		return np_errf(err, errlen, -ENOMEM, "out of memory");
	s->e.ops = &systemd_ops;
	s->online = o->online;
	possible = full_range(&s->full, &o->online);
	s->nodes = o->nodes;
	snprintf(s->address, sizeof(s->address), "%s",
		 o->bus_address ? o->bus_address : "");
	snprintf(s->runtime_dir, sizeof(s->runtime_dir), "%s", o->runtime_dir);
	snprintf(s->state_dir, sizeof(s->state_dir), "%s",
		 o->state_dir ? o->state_dir : "");
	snprintf(s->slice, sizeof(s->slice), "%s", o->slice);
	snprintf(s->scope, sizeof(s->scope), "%s", o->scope);
	if ((r = np_systemd_slice_path(o->slice, slice_path, sizeof(slice_path),
				  err, errlen)) < 0 ||
	    (r = np_systemd_unit_check(o->scope, err, errlen)) < 0)
		goto fail;
	if (slice_path[0]) {
		snprintf(s->no_partitions, sizeof(s->no_partitions),
			 "isolation \"partition\" under the systemd driver "
			 "needs \"cgroup_parent\": \"-.slice\" (the scope "
			 "then is a partition root right below the root "
			 "cgroup; below %.255s, Linux 6.1 refuses it: a "
			 "partition may not take all of its parent's CPUs)",
			 o->slice);
		s->e.no_partitions = s->no_partitions;
	}
	if ((size_t)snprintf(s->managed, sizeof(s->managed), "%.2000s%s%.255s",
			     slice_path, slice_path[0] ? "/" : "",
			     o->scope) >= sizeof(s->managed)) {
		r = np_errf(err, errlen, -ENAMETOOLONG, "scope path too long");
		goto fail;
	}
	if ((r = np_systemd_bus_connect(&s->bus, o->bus_address, &via, err, errlen)) <
	    0)
		goto fail;
	if ((r = np_cgroup_open(&s->host, &ho, err, errlen)) < 0)
		goto fail;
	s->host_open = true;
	if ((r = np_systemd_load_originals(s, err, errlen)) < 0 ||
	    (r = open_host_units(s, host, nhost, err, errlen)) < 0 ||
	    (r = open_scope(s, o, err, errlen)) < 0 ||
	    (r = np_systemd_watch(s, err, errlen)) < 0)
		goto fail;
	snprintf(managed, managed_len, "%s", s->managed);
	/* said, not silent: the open message is logged */
	np_errmsg(err, errlen, "%s%s", via,
		  possible ? ""
			   : "; /sys/devices/system/cpu/possible unreadable: "
			     "units without AllowedCPUs of their own get the "
			     "online CPUs back");
	*out = &s->e;
	return 0;
fail:
	sd_destroy(&s->e);
	return r;
}

bool np_systemd_usable(const char *bus_address, char *why, size_t len)
{
	const char *via;
	sd_bus *b = NULL;

	if (sd_booted() <= 0) {
		np_errmsg(why, len, "PID 1 is not systemd (no /run/systemd/system)");
		return false;
	}
	if (np_systemd_bus_connect(&b, bus_address, &via, why, len) < 0)
		return false;
	sd_bus_flush_close_unref(b);
	np_errmsg(why, len, "PID 1 is systemd and answers on %s", via);
	return true;
}
