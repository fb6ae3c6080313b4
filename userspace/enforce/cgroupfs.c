// SPDX-License-Identifier: Apache-2.0
/*
 * The cgroupfs enforcer backend: numaplaced writes the cpuset files of the
 * cgroups below its managed parent, and of the host cgroups it was given,
 * itself. Every cgroup write of the daemon goes through here (the write
 * primitives are in userspace/cgroup/).
 */
#include "numaplace/cleanup.h"
#include "numaplace/enforcer.h"
#include "numaplace/error.h"

#include "numaplace/strmap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

struct cgroupfs {
	struct np_enforcer e;
	struct np_cgroup_root managed, host;
	bool managed_open, host_open;
	struct np_cgroup_cache cache; /* cpuset files of managed cgroups */
	/* Drift as it happens: IN_MODIFY on the cpuset.cpus and cpuset.mems
	 * of every cgroup the daemon reads (a write by anyone; the daemon's
	 * own writes cost one extra cycle that finds nothing). The cache
	 * keeps these watches for the cgroups it holds, in this instance
	 * (lent to it), and reads a file again only when it was written;
	 * watched here are the others (containers' cgroups, named from the
	 * root, and any the cache has no room for). */
	int drift_fd;		/* inotify, -1 when there is none */
	struct np_strmap watched; /* cgroup -> wd of cpus << 32 | wd of mems */
	bool watch_full;	  /* the kernel's watch limit was reached */
	/* the managed parent passes cpuset (managed.parent_passes): read
	 * again in each cycle */
	bool parent_passes;
};

#define CG(e) ((struct cgroupfs *)(e))

static const struct np_cgroup_root *tree(struct np_enforcer *e,
					 enum np_enf_tree t)
{
	return t == NP_ENF_HOST ? &CG(e)->host : &CG(e)->managed;
}

/* The directory fd a cgroup name is relative to, and the name from it:
 * "/x" (a container's cgroup) is from the hierarchy root. */
static int dir_of(struct cgroupfs *c, const char *cgroup, const char **rel)
{
	*rel = cgroup + (*cgroup == '/');
	return *cgroup == '/' ? c->managed.top_fd : c->managed.parent_fd;
}

static void cgfs_cycle(struct np_enforcer *e)
{
	CG(e)->parent_passes = false;
	np_cgroup_cache_next(&CG(e)->cache);
}

static bool cgfs_quiet(struct np_enforcer *e, int what)
{
	struct np_cgroup_cache *c = &CG(e)->cache;
	bool watching = c->ifd > 0 && !c->blind;

	if (what == NP_ENF_QUIET_READ)
		return watching && !c->unwatched;
	/* NP_ENF_QUIET_SINCE */
	bool quiet = watching && !c->events && !c->full_now;

	c->events = false;
	return quiet;
}

/* Watch a managed cgroup's cpuset files for writes (once). */
static void watch(struct cgroupfs *c, const char *cgroup)
{
	static const char *const files[2] = {"cpuset.cpus", "cpuset.mems"};
	char path[NP_CGROUP_PATH_MAX + 64];
	long v;
	int wd[2];

	if (c->drift_fd < 0 || c->watch_full || !cgroup[0] ||
	    np_strmap_get(&c->watched, cgroup, &v))
		return;
	for (int i = 0; i < 2; i++) {
		const char *rel;
		int dfd = dir_of(c, cgroup, &rel);
		snprintf(path, sizeof(path), "/proc/self/fd/%d/%s/%s", dfd, rel,
			 files[i]);
		wd[i] = inotify_add_watch(c->drift_fd, path, IN_MODIFY);
		if (wd[i] < 0 && errno == ENOSPC) {
			c->watch_full = true;
			c->e.events_lost = "the kernel's inotify watch limit "
					   "(fs.inotify.max_user_watches) is "
					   "reached: drift in the cgroups not "
					   "watched yet is found at the "
					   "reconcile period";
			if (i)
				inotify_rm_watch(c->drift_fd, wd[0]);
			return;
		}
	}
	np_strmap_put(&c->watched, cgroup,
		      (long)(((uint64_t)(uint32_t)wd[0] << 32) | (uint32_t)wd[1]));
}

static int cgfs_read(struct np_enforcer *e, const char *cgroup,
		     np_cpuset *cpus, np_nodemask *mems, char *err,
		     size_t errlen)
{
	int r = np_cgroup_read_cpuset(&CG(e)->cache, &CG(e)->managed, cgroup,
				      cpus, mems, err, errlen);
	if (!r && !CG(e)->cache.last_watched)
		watch(CG(e), cgroup);
	return r;
}

static int cgfs_event_fd(struct np_enforcer *e)
{
	return CG(e)->drift_fd;
}

/* true: someone wrote a watched file (or events were lost). */
static bool cgfs_process_events(struct np_enforcer *e)
{
	return np_cgroup_cache_drain(&CG(e)->cache);
}

static int cgfs_inspect(struct np_enforcer *e, enum np_enf_tree t,
			const char *cgroup, struct np_cgroup_state *st,
			char *err, size_t errlen)
{
	return np_cgroup_inspect(tree(e, t), cgroup, st, err, errlen);
}

static int cgfs_prepare(struct np_enforcer *e, enum np_enf_tree t,
			const char *cgroup, bool create, char *err,
			size_t errlen)
{
	return np_cgroup_prepare(tree(e, t), cgroup,
				 create ? NP_CGROUP_CREATE : 0, err, errlen);
}

static int cgfs_apply(struct np_enforcer *e, const struct np_cgroup_change *ch,
		      int n, int *writes, char *err, size_t errlen)
{
	struct np_cgroup_plan plan = {0};
	int r;

	*writes = 0;
	if (!n)
		return 0;
	r = np_cgroup_plan_build(&plan, ch, n, err, errlen);
	if (r) {
		char msg[1024];
		snprintf(msg, sizeof(msg), "planning cpuset writes: %s",
			 err ? err : "");
		np_errmsg(err, errlen, "%s", msg);
		return r;
	}
	*writes = plan.n;
	r = np_cgroup_plan_apply(&CG(e)->managed, &plan, NULL, err, errlen);
	if (r < 0) {
		char msg[1024];
		snprintf(msg, sizeof(msg), "applying cpuset writes: %s",
			 err ? err : "");
		np_errmsg(err, errlen, "%s", msg);
	}
	np_cgroup_plan_free(&plan);
	return r;
}

static int cgfs_set_cpuset(struct np_enforcer *e, enum np_enf_tree t,
			   const char *cgroup, const np_cpuset *cpus,
			   const np_nodemask *mems, char *err, size_t errlen)
{
	int r = np_cgroup_write_cpus(tree(e, t), cgroup, cpus, NULL, err,
				     errlen);
	if (r >= 0 && mems)
		r = np_cgroup_write_mems(tree(e, t), cgroup, *mems, NULL, err,
					 errlen);
	return r;
}

static int cgfs_set_cpu_max(struct np_enforcer *e, const char *cgroup,
			    int64_t quota_us, int64_t period_us, char *err,
			    size_t errlen)
{
	return np_cgroup_write_cpu_max(tree(e, NP_ENF_MANAGED), cgroup,
				       quota_us, period_us, err, errlen);
}

static int cgfs_set_partition(struct np_enforcer *e, enum np_enf_tree t,
			      const char *cgroup, enum np_cgroup_partition p,
			      char *err, size_t errlen)
{
	return np_cgroup_set_partition(tree(e, t), cgroup, p, NULL, err,
				       errlen);
}

static int cgfs_remove(struct np_enforcer *e, const char *cgroup)
{
	if (!CG(e)->managed_open || !cgroup[0])
		return -EINVAL;
	if (cgroup[0] == '/') /* a container's: the runtime removes it */
		return -EPERM;
	return unlinkat(CG(e)->managed.parent_fd, cgroup, AT_REMOVEDIR) ? -errno
									: 0;
}

static void cgfs_forget(struct np_enforcer *e, const char *cgroup)
{
	struct cgroupfs *c = CG(e);
	long v;

	np_cgroup_cache_forget(&c->cache, cgroup);
	if (np_strmap_get(&c->watched, cgroup, &v)) {
		/* gone with the files already when the cgroup was removed */
		inotify_rm_watch(c->drift_fd, (int)((uint64_t)v >> 32));
		inotify_rm_watch(c->drift_fd, (int)(uint32_t)v);
		np_strmap_del(&c->watched, cgroup);
	}
}

/*
 * "+controller" in cgroup.subtree_control from the hierarchy root down to
 * the managed parent, like +cpuset at open. Best effort at each level: the
 * first failure is returned (after trying the rest).
 */
static int cgfs_enable_controller(struct np_enforcer *e, const char *ctrl,
				  char *err, size_t errlen)
{
	struct np_cgroup_root *m = &CG(e)->managed;
	char path[NP_CGROUP_PATH_MAX], word[64], *save = NULL, *tok;
	_cleanup_close_ int dir = dup(m->root_fd);
	int first = 0;

	snprintf(word, sizeof(word), "+%s", ctrl);
	snprintf(path, sizeof(path), "%s", m->parent);
	tok = strtok_r(path, "/", &save);
	while (dir >= 0) {
		_cleanup_close_ int fd = openat(dir, "cgroup.subtree_control",
						O_WRONLY | O_CLOEXEC);
		int sub;
		if ((fd < 0 || write(fd, word, strlen(word)) < 0) && !first)
			first = np_errno(err, errlen, -errno,
					 "%s in %s%s/cgroup.subtree_control",
					 word, m->path, tok ? "/..." : "");
		if (!tok)
			break;
		sub = openat(dir, tok, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
					       O_CLOEXEC);
		close(dir);
		dir = sub;
		tok = strtok_r(NULL, "/", &save);
	}
	return first;
}

static int cgfs_migrate(struct np_enforcer *e, const char *cgroup,
			np_nodemask from, np_nodemask to,
			struct np_migrate_result *res, char *err, size_t errlen)
{
	const char *rel;
	int dfd = dir_of(CG(e), cgroup, &rel);
	_cleanup_close_ int fd =
		openat(dfd, rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);

	memset(res, 0, sizeof(*res));
	if (fd < 0)
		return np_errno(err, errlen, -errno, "cgroup %s", cgroup);
	return np_numa_migrate_cgroup(fd, from, to, res, err, errlen);
}

static int cgfs_parent_fd(struct np_enforcer *e)
{
	return CG(e)->managed_open ? CG(e)->managed.parent_fd : -1;
}

static int cgfs_root_fd(struct np_enforcer *e)
{
	return CG(e)->managed_open ? CG(e)->managed.top_fd : -1;
}

static bool cgfs_fake(struct np_enforcer *e)
{
	return CG(e)->managed.fake;
}

static void cgfs_destroy(struct np_enforcer *e)
{
	struct cgroupfs *c = CG(e);

	np_cgroup_cache_free(&c->cache);
	np_strmap_free(&c->watched);
	if (c->drift_fd >= 0)
		close(c->drift_fd);
	if (c->managed_open)
		np_cgroup_close(&c->managed);
	if (c->host_open)
		np_cgroup_close(&c->host);
	free(c);
}

static const struct np_enforcer_ops cgroupfs_ops = {
	.name = "cgroupfs",
	.partitions = true,
	.cycle = cgfs_cycle,
	.quiet = cgfs_quiet,
	.read = cgfs_read,
	.inspect = cgfs_inspect,
	.prepare = cgfs_prepare,
	.apply = cgfs_apply,
	.set_cpuset = cgfs_set_cpuset,
	.set_cpu_max = cgfs_set_cpu_max,
	.set_partition = cgfs_set_partition,
	.remove = cgfs_remove,
	.forget = cgfs_forget,
	.enable_controller = cgfs_enable_controller,
	.migrate_memory = cgfs_migrate,
	.parent_fd = cgfs_parent_fd,
	.root_fd = cgfs_root_fd,
	.fake = cgfs_fake,
	.event_fd = cgfs_event_fd,
	.process_events = cgfs_process_events,
	.destroy = cgfs_destroy,
};

int np_enforcer_cgroupfs_open(struct np_enforcer **out,
			      const struct np_cgroup_opts *o,
			      const char *const *host, int nhost, char *err,
			      size_t errlen)
{
	struct cgroupfs *c = calloc(1, sizeof(*c));
	struct np_cgroup_opts top = *o;
	int r;

	*out = NULL;
	if (!c)
		return np_errf(err, errlen, -ENOMEM, "out of memory");
	c->e.ops = &cgroupfs_ops;
	c->managed.root_fd = c->managed.parent_fd = c->managed.top_fd = -1;
	c->host.root_fd = c->host.parent_fd = c->host.top_fd = -1;
	c->cache.full_ms = o->full_scan_ms;
	c->drift_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (c->drift_fd < 0)
		c->e.events_lost = "no inotify instance: drift is found at the "
				   "reconcile period";
	np_cgroup_cache_use_fd(&c->cache, c->drift_fd);
	if ((r = np_cgroup_open(&c->managed, o, err, errlen)))
		goto fail;
	c->managed_open = true;
	c->managed.parent_passes = &c->parent_passes;
	top.parent = "";
	top.create_parent = false;
	if ((r = np_cgroup_open(&c->host, &top, err, errlen)))
		goto fail;
	c->host_open = true;
	/* A host cgroup that does not exist yet (user.slice before the
	 * first login) is pending: the cycle prepares it when it appears. */
	for (int i = 0; i < nhost; i++)
		if ((r = np_cgroup_prepare(&c->host, host[i], 0, err, errlen)) &&
		    r != -ENOENT)
			goto fail;
	*out = &c->e;
	return 0;
fail:
	cgfs_destroy(&c->e);
	return r;
}
