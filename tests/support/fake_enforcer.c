// SPDX-License-Identifier: Apache-2.0
#include "fake_enforcer.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define F(e) ((struct fake_enforcer *)(e))

static __attribute__((format(printf, 2, 3))) void logf_(struct fake_enforcer *f,
							 const char *fmt, ...)
{
	va_list ap;

	if (f->nlog == FAKE_MAX_LOG)
		return;
	va_start(ap, fmt);
	vsnprintf(f->log[f->nlog++], sizeof(f->log[0]), fmt, ap);
	va_end(ap);
}

struct fake_cgroup *fake_cg(struct fake_enforcer *f, char tree,
			    const char *path, bool create)
{
	char key[256];

	snprintf(key, sizeof(key), "%c:%s", tree, path);
	for (int i = 0; i < f->ncg; i++)
		if (!strcmp(f->cg[i].path, key))
			return f->cg[i].exists || create ? &f->cg[i] : NULL;
	if (!create || f->ncg == FAKE_MAX_CGROUPS)
		return NULL;
	memset(&f->cg[f->ncg], 0, sizeof(f->cg[0]));
	snprintf(f->cg[f->ncg].path, sizeof(f->cg[0].path), "%s", key);
	return &f->cg[f->ncg++];
}

static char tree_c(enum np_enf_tree t)
{
	return t == NP_ENF_HOST ? 'h' : 'm';
}

static void fk_cycle(struct np_enforcer *e)
{
	(void)e;
}

static int fk_read(struct np_enforcer *e, const char *cgroup, np_cpuset *cpus,
		   np_nodemask *mems, char *err, size_t errlen)
{
	struct fake_cgroup *c = fake_cg(F(e), 'm', cgroup, false);

	F(e)->reads++;
	if (!c || !c->exists) {
		snprintf(err, errlen, "%s: no such cgroup", cgroup);
		return -ENOENT;
	}
	*cpus = c->cpus;
	*mems = c->mems;
	return 0;
}

static int fk_inspect(struct np_enforcer *e, enum np_enf_tree t,
		      const char *cgroup, struct np_cgroup_state *st, char *err,
		      size_t errlen)
{
	struct fake_cgroup *c = fake_cg(F(e), tree_c(t), cgroup, false);

	memset(st, 0, sizeof(*st));
	if (!c || !c->exists) {
		snprintf(err, errlen, "%s: no such cgroup", cgroup);
		return -ENOENT;
	}
	st->cpus = st->cpus_effective = c->cpus;
	st->mems = st->mems_effective = c->mems;
	st->has_partition = true;
	st->partition = c->partition;
	st->procs_empty = !c->busy;
	return 0;
}

static int fk_prepare(struct np_enforcer *e, enum np_enf_tree t,
		      const char *cgroup, bool create, char *err, size_t errlen)
{
	struct fake_cgroup *c = fake_cg(F(e), tree_c(t), cgroup, false);

	if (c && c->exists)
		return 0;
	if (!create) {
		snprintf(err, errlen, "%s does not exist", cgroup);
		return -ENOENT;
	}
	c = fake_cg(F(e), tree_c(t), cgroup, true);
	if (!c)
		return -ENOSPC;
	c->exists = true;
	logf_(F(e), "mkdir %s", cgroup);
	return 0;
}

static int fk_apply(struct np_enforcer *e, const struct np_cgroup_change *ch,
		    int n, int *writes, char *err, size_t errlen)
{
	struct np_cgroup_plan plan = {0};
	int r;

	*writes = 0;
	if (F(e)->fail_apply) {
		r = F(e)->fail_apply;
		F(e)->fail_apply = 0;
		snprintf(err, errlen, "applying cpuset writes: injected");
		return r;
	}
	if ((r = np_cgroup_plan_build(&plan, ch, n, err, errlen)))
		return r;
	*writes = plan.n;
	for (int i = 0; i < plan.n; i++) {
		const struct np_cgroup_step *s = &plan.steps[i];
		struct fake_cgroup *c =
			fake_cg(F(e), 'm', plan.cgroups[s->change], true);
		char *set = s->file == NP_CGROUP_CPUS ? np_cpuset_str(s->cpus)
						      : NULL;
		char m[64];
		np_nodemask_format(s->mems, m, sizeof(m));
		logf_(F(e), "write %s %s=%s (%s)", plan.cgroups[s->change],
		      s->file == NP_CGROUP_CPUS ? "cpuset.cpus" : "cpuset.mems",
		      s->file == NP_CGROUP_CPUS ? (set ? set : "?") : m,
		      np_cgroup_why_name(s->why));
		free(set);
		if (s->file == NP_CGROUP_CPUS)
			c->cpus = *s->cpus;
		else
			c->mems = s->mems;
	}
	np_cgroup_plan_free(&plan);
	return 0;
}

static int fk_set_cpuset(struct np_enforcer *e, enum np_enf_tree t,
			 const char *cgroup, const np_cpuset *cpus,
			 const np_nodemask *mems, char *err, size_t errlen)
{
	struct fake_cgroup *c = fake_cg(F(e), tree_c(t), cgroup, false);
	char *s = np_cpuset_str(cpus);

	if (!c) {
		free(s);
		snprintf(err, errlen, "%s: no such cgroup", cgroup);
		return -ENOENT;
	}
	c->cpus = *cpus;
	if (mems)
		c->mems = *mems;
	logf_(F(e), "set %s %s cpus=%s%s", t == NP_ENF_HOST ? "host" : "managed",
	      cgroup, s ? s : "?", mems ? " +mems" : "");
	free(s);
	return 0;
}

static int fk_set_partition(struct np_enforcer *e, enum np_enf_tree t,
			    const char *cgroup, enum np_cgroup_partition p,
			    char *err, size_t errlen)
{
	struct fake_cgroup *c = fake_cg(F(e), tree_c(t), cgroup, false);

	if (!c) {
		snprintf(err, errlen, "%s: no such cgroup", cgroup);
		return -ENOENT;
	}
	logf_(F(e), "partition %s %s %s", t == NP_ENF_HOST ? "host" : "managed",
	      cgroup, np_cgroup_partition_name(p));
	if (p == NP_CGROUP_MEMBER && F(e)->fail_member > 0) {
		F(e)->fail_member--;
		snprintf(err, errlen, "injected failure");
		return -EIO;
	}
	if (t == NP_ENF_HOST && p != NP_CGROUP_MEMBER && F(e)->refuse_partition) {
		snprintf(err, errlen, "kernel refused partition 'root': "
			 "\"Parent unable to distribute cpu downstream\"");
		return NP_CGROUP_PARTITION_REFUSED;
	}
	c->partition = p;
	return 0;
}

static int fk_remove(struct np_enforcer *e, const char *cgroup)
{
	struct fake_cgroup *c = fake_cg(F(e), 'm', cgroup, false);

	if (!c)
		return -ENOENT;
	if (c->busy)
		return -EBUSY;
	c->exists = false;
	logf_(F(e), "rmdir %s", cgroup);
	return 0;
}

static void fk_forget(struct np_enforcer *e, const char *cgroup)
{
	(void)e;
	(void)cgroup;
}

static int fk_enable(struct np_enforcer *e, const char *ctrl, char *err,
		     size_t errlen)
{
	(void)err;
	(void)errlen;
	logf_(F(e), "enable %s", ctrl);
	return 0;
}

static int fk_migrate(struct np_enforcer *e, const char *cgroup,
		      np_nodemask from, np_nodemask to,
		      struct np_migrate_result *res, char *err, size_t errlen)
{
	char a[64], b[64];

	(void)err;
	(void)errlen;
	memset(res, 0, sizeof(*res));
	res->pids_done = 1;
	np_nodemask_format(from, a, sizeof(a));
	np_nodemask_format(to, b, sizeof(b));
	logf_(F(e), "migrate %s %s->%s", cgroup, a, b);
	return 0;
}

static int fk_parent_fd(struct np_enforcer *e)
{
	(void)e;
	return -1;
}

static int fk_root_fd(struct np_enforcer *e)
{
	(void)e;
	return -1;
}

static bool fk_fake(struct np_enforcer *e)
{
	(void)e;
	return true;
}

static void fk_destroy(struct np_enforcer *e)
{
	/* the test keeps reading it: only marked */
	F(e)->destroyed = true;
}

static const struct np_enforcer_ops fake_ops = {
	.name = "fake",
	.partitions = true,
	.cycle = fk_cycle,
	.read = fk_read,
	.inspect = fk_inspect,
	.prepare = fk_prepare,
	.apply = fk_apply,
	.set_cpuset = fk_set_cpuset,
	.set_partition = fk_set_partition,
	.remove = fk_remove,
	.forget = fk_forget,
	.enable_controller = fk_enable,
	.migrate_memory = fk_migrate,
	.parent_fd = fk_parent_fd,
	.root_fd = fk_root_fd,
	.fake = fk_fake,
	.destroy = fk_destroy,
};

/* Units: tree 'u'; a unit that exists is loaded and running, its cpus
 * are what its cgroup holds. */
static int fk_set_unit(struct np_enforcer *e, const char *unit,
		       const np_cpuset *cpus, np_nodemask mems, bool force,
		       char *err, size_t errlen)
{
	struct fake_cgroup *c = fake_cg(F(e), 'u', unit, false);
	char *s, m[64];

	if (!c) {
		snprintf(err, errlen, "unit %s not loaded", unit);
		return -ENOENT;
	}
	if (!force && np_cpuset_equal(&c->cpus, cpus) && c->mems == mems)
		return 0;
	c->cpus = *cpus;
	c->mems = mems;
	s = np_cpuset_str(cpus);
	np_nodemask_format(mems, m, sizeof(m));
	logf_(F(e), "set-unit %s cpus=%s mems=%s", unit, s ? s : "?", m);
	free(s);
	return 1;
}

static int fk_read_unit(struct np_enforcer *e, const char *unit,
			char *slice, size_t slicelen, np_cpuset *cpus,
			char *err, size_t errlen)
{
	struct fake_cgroup *c = fake_cg(F(e), 'u', unit, false);

	/* a fake unit's slice: c->slice, else "numaplace.slice" */
	snprintf(slice, slicelen, "%s", c && c->slice[0] ? c->slice : "numaplace.slice");
	if (!c) {
		snprintf(err, errlen, "unit %s not loaded", unit);
		return -ENOENT;
	}
	*cpus = c->cpus;
	return 0;
}

/* Is unit one of in_slice[] that exists (running beside the scope)? */
static bool fk_in_slice(struct fake_enforcer *f, const char *unit)
{
	for (int i = 0; i < 4 && f->in_slice[i]; i++)
		if (!strcmp(f->in_slice[i], unit))
			return fake_cg(f, 'u', unit, false) != NULL;
	return false;
}

static bool fk_recorded(struct fake_enforcer *f, const char *unit)
{
	for (int i = 0; i < 4 && f->recorded[i]; i++)
		if (!strcmp(f->recorded[i], unit))
			return true;
	return false;
}

/* A unit that does not run: stopped, or not loaded (as the systemd
 * backend, which keeps the record of either: systemd loads a unit again
 * with the properties set on it); a scope that does not run is gone. */
static bool fk_stopped(struct fake_enforcer *f, const char *unit)
{
	return !fake_cg(f, 'u', unit, false) && !strstr(unit, ".scope");
}

static void fk_forget_record(struct fake_enforcer *f, const char *unit)
{
	for (int i = 0; i < 4 && f->recorded[i]; i++)
		if (!strcmp(f->recorded[i], unit)) {
			memmove(&f->recorded[i], &f->recorded[i + 1],
				sizeof(f->recorded[0]) * (size_t)(3 - i));
			f->recorded[3] = NULL;
			break;
		}
}

static int fk_release_unit(struct np_enforcer *e, const char *unit,
			   char *err, size_t errlen)
{
	struct fake_enforcer *f = F(e);

	logf_(f, "release-unit %s", unit);
	if (f->fail_release > 0) {
		f->fail_release--;
		snprintf(err, errlen, "injected bus error");
		return -EIO;
	}
	if (fk_in_slice(f, unit))
		return 1; /* kept: confined by the daemon */
	if (fk_recorded(f, unit) && fk_stopped(f, unit))
		return 2; /* kept, nothing set: as the systemd backend */
	fk_forget_record(f, unit);
	return 0;
}

static int fk_slice_unit(struct np_enforcer *e, int i, char *unit,
			 size_t len)
{
	struct fake_enforcer *f = F(e);

	for (int k = 0; k < 4 && f->in_slice[k]; k++)
		if (fake_cg(f, 'u', f->in_slice[k], false) && i-- == 0) {
			snprintf(unit, len, "%s", f->in_slice[k]);
			return 1;
		}
	return 0;
}

static int fk_confine_unit(struct np_enforcer *e, const char *unit,
			   const np_cpuset *cpus, bool force, char *err,
			   size_t errlen)
{
	struct fake_cgroup *c = fake_cg(F(e), 'u', unit, false);
	char *s;

	(void)err;
	(void)errlen;
	if (!cpus && !c && !strstr(unit, ".scope"))
		return 0; /* a stopped service: nothing set, record kept */
	if (!cpus) { /* given back (a stopped scope: gone, forgotten) */
		logf_(F(e), "%s-unit %s", c ? "give-back" : "forget", unit);
		fk_forget_record(F(e), unit);
		return 1;
	}
	if (!c)
		return 0; /* stopped: nothing set on it */
	if (!force && np_cpuset_equal(&c->cpus, cpus))
		return 0;
	/* recorded first, as the systemd backend does (the name kept is
	 * in_slice[]'s: the caller's is its own) */
	for (int k = 0; k < 4 && F(e)->in_slice[k]; k++) {
		const char **r = F(e)->recorded;
		int n = 0;
		if (strcmp(F(e)->in_slice[k], unit))
			continue;
		while (n < 4 && r[n] && strcmp(r[n], unit))
			n++;
		if (n < 4 && !r[n])
			r[n] = F(e)->in_slice[k];
	}
	c->cpus = *cpus;
	s = np_cpuset_str(cpus);
	logf_(F(e), "confine-unit %s cpus=%s", unit, s ? s : "?");
	free(s);
	return 1;
}

static int fk_recorded_unit(struct np_enforcer *e, int i, char *unit,
			    size_t len)
{
	if (i < 0 || i >= 4 || !F(e)->recorded[i])
		return 0;
	snprintf(unit, len, "%s", F(e)->recorded[i]);
	return 1;
}

static const struct np_enforcer_ops fake_units_ops = {
	.name = "fake-units",
	.partitions = true,
	.cycle = fk_cycle,
	.read = fk_read,
	.inspect = fk_inspect,
	.prepare = fk_prepare,
	.apply = fk_apply,
	.set_cpuset = fk_set_cpuset,
	.set_partition = fk_set_partition,
	.remove = fk_remove,
	.forget = fk_forget,
	.enable_controller = fk_enable,
	.migrate_memory = fk_migrate,
	.parent_fd = fk_parent_fd,
	.root_fd = fk_root_fd,
	.fake = fk_fake,
	.set_unit = fk_set_unit,
	.read_unit = fk_read_unit,
	.release_unit = fk_release_unit,
	.recorded_unit = fk_recorded_unit,
	.slice_unit = fk_slice_unit,
	.confine_unit = fk_confine_unit,
	.destroy = fk_destroy,
};

void fake_enable_units(struct fake_enforcer *f)
{
	f->e.ops = &fake_units_ops;
}

struct fake_enforcer *fake_enforcer_new(void)
{
	struct fake_enforcer *f = calloc(1, sizeof(*f));

	if (f)
		f->e.ops = &fake_ops;
	return f;
}

void fake_log_clear(struct fake_enforcer *f)
{
	f->nlog = 0;
}

const char *fake_log(const struct fake_enforcer *f)
{
	static char buf[FAKE_MAX_LOG * 192];
	size_t n = 0;

	buf[0] = '\0';
	for (int i = 0; i < f->nlog && n < sizeof(buf) - 1; i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s\n",
				      f->log[i]);
	return buf;
}

int fake_log_find(const struct fake_enforcer *f, const char *prefix)
{
	for (int i = 0; i < f->nlog; i++)
		if (!strncmp(f->log[i], prefix, strlen(prefix)))
			return i;
	return -1;
}
