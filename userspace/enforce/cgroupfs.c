/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The cgroupfs enforcer backend: numaplaced writes the cpuset files of the
 * cgroups below its managed parent, and of the host cgroups it was given,
 * itself. Every cgroup write of the daemon goes through here (the write
 * primitives are in userspace/cgroup/).
 */
#include "numaplace/cleanup.h"
#include "numaplace/enforcer.h"
#include "numaplace/error.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct cgroupfs {
	struct np_enforcer e;
	struct np_cgroup_root managed, host;
	bool managed_open, host_open;
	struct np_cgroup_cache cache; /* cpuset files of managed cgroups */
};

#define CG(e) ((struct cgroupfs *)(e))

static const struct np_cgroup_root *tree(struct np_enforcer *e,
					 enum np_enf_tree t)
{
	return t == NP_ENF_HOST ? &CG(e)->host : &CG(e)->managed;
}

static void cgfs_cycle(struct np_enforcer *e)
{
	np_cgroup_cache_next(&CG(e)->cache);
}

static int cgfs_read(struct np_enforcer *e, const char *cgroup,
		     np_cpuset *cpus, np_nodemask *mems, char *err,
		     size_t errlen)
{
	return np_cgroup_read_cpuset(&CG(e)->cache, &CG(e)->managed, cgroup,
				     cpus, mems, err, errlen);
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
	return unlinkat(CG(e)->managed.parent_fd, cgroup, AT_REMOVEDIR) ? -errno
									: 0;
}

static void cgfs_forget(struct np_enforcer *e, const char *cgroup)
{
	np_cgroup_cache_forget(&CG(e)->cache, cgroup);
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
	_cleanup_close_ int fd = openat(CG(e)->managed.parent_fd, cgroup,
					O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	memset(res, 0, sizeof(*res));
	if (fd < 0)
		return np_errno(err, errlen, -errno, "cgroup %s", cgroup);
	return np_numa_migrate_cgroup(fd, from, to, res, err, errlen);
}

static int cgfs_parent_fd(struct np_enforcer *e)
{
	return CG(e)->managed_open ? CG(e)->managed.parent_fd : -1;
}

static bool cgfs_fake(struct np_enforcer *e)
{
	return CG(e)->managed.fake;
}

static void cgfs_destroy(struct np_enforcer *e)
{
	struct cgroupfs *c = CG(e);

	np_cgroup_cache_free(&c->cache);
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
	.read = cgfs_read,
	.inspect = cgfs_inspect,
	.prepare = cgfs_prepare,
	.apply = cgfs_apply,
	.set_cpuset = cgfs_set_cpuset,
	.set_partition = cgfs_set_partition,
	.remove = cgfs_remove,
	.forget = cgfs_forget,
	.enable_controller = cgfs_enable_controller,
	.migrate_memory = cgfs_migrate,
	.parent_fd = cgfs_parent_fd,
	.fake = cgfs_fake,
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
	c->managed.root_fd = c->managed.parent_fd = -1;
	c->host.root_fd = c->host.parent_fd = -1;
	if ((r = np_cgroup_open(&c->managed, o, err, errlen)))
		goto fail;
	c->managed_open = true;
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
