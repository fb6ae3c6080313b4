// SPDX-License-Identifier: Apache-2.0
/*
 * Finding and opening the cgroup2 hierarchy: /proc/self/mountinfo and
 * /proc/cgroups parsing (paths injectable), the cgroup v1 cpuset refusal,
 * the statfs check for real cgroup2 vs a fake tree, and the cpuset
 * controller check.
 */
#include "cgroup_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <unistd.h>

#define DEFAULT_MOUNTINFO "/proc/self/mountinfo"
#define DEFAULT_PROC_CGROUPS "/proc/cgroups"
#define V1_ADVICE "boot with systemd.unified_cgroup_hierarchy=1"

/* What one pass over mountinfo tells us. */
struct survey {
	char v1_cpuset[NP_CGROUP_PATH_MAX]; /* "" if none */
	char v2[NP_CGROUP_PATH_MAX];	    /* best cgroup2 mount, "" if none */
	bool v2_is_root;		    /* it mounts the hierarchy root */
};

/* mountinfo escapes ' ', '\t', '\n' and '\\' as \ooo; decode in place. */
static void unescape(char *s)
{
	char *w = s;

	for (char *r = s; *r; r++) {
		if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' &&
		    r[2] <= '7' && r[3] >= '0' && r[3] <= '7') {
			*w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 +
				      (r[3] - '0'));
			r += 3;
		} else {
			*w++ = *r;
		}
	}
	*w = '\0';
}

/* "rw,cpuset,noprefix" contains opt as a whole comma-separated item. */
static bool has_opt(const char *opts, const char *opt)
{
	size_t ol = strlen(opt);

	while (*opts) {
		size_t n = strcspn(opts, ",");

		if (n == ol && !strncmp(opts, opt, ol))
			return true;
		opts += n + (opts[n] == ',');
	}
	return false;
}

/*
 * One mountinfo line (proc(5)): id parent maj:min root mountpoint options
 * [optional fields...] - fstype source superoptions.
 */
static int survey_line(char *line, struct survey *s)
{
	char *f[64], *save = NULL, *tok;
	int nf = 0, sep = -1;
	const char *fstype, *super;

	for (tok = strtok_r(line, " \n", &save); tok;
	     tok = strtok_r(NULL, " \n", &save)) {
		if (nf == (int)(sizeof(f) / sizeof(f[0])))
			return -EINVAL;
		if (sep < 0 && nf >= 6 && !strcmp(tok, "-"))
			sep = nf;
		f[nf++] = tok;
	}
	if (nf == 0)
		return 0; /* blank line */
	if (sep < 0 || nf < sep + 3)
		return -EINVAL;
	fstype = f[sep + 1];
	super = nf > sep + 3 ? f[sep + 3] : "";
	unescape(f[3]);
	unescape(f[4]);

	if (!strcmp(fstype, "cgroup") && has_opt(super, "cpuset")) {
		if (!s->v1_cpuset[0])
			snprintf(s->v1_cpuset, sizeof(s->v1_cpuset), "%s",
				 f[4]);
	} else if (!strcmp(fstype, "cgroup2")) {
		bool is_root = !strcmp(f[3], "/");

		/* first mount of the hierarchy root wins; a bind mount of a
		 * subtree only if nothing better shows up */
		if (!s->v2[0] || (is_root && !s->v2_is_root)) {
			if (strlen(f[4]) >= sizeof(s->v2))
				return -ENAMETOOLONG;
			snprintf(s->v2, sizeof(s->v2), "%s", f[4]);
			s->v2_is_root = is_root;
		}
	}
	return 0;
}

static int survey_mountinfo(const char *path, struct survey *s, char *err,
			    size_t errlen)
{
	char eb[128], *line = NULL;
	size_t cap = 0;
	int lineno = 0, r = 0;
	FILE *f;

	memset(s, 0, sizeof(*s));
	f = fopen(path, "re");
	if (!f) {
		r = -errno;
		np_errmsg(err, errlen, "cannot read %s: %s", path,
		       cg_strerror(r, eb, sizeof(eb)));
		return r;
	}
	while (getline(&line, &cap, f) >= 0) {
		lineno++;
		r = survey_line(line, s);
		if (r < 0) {
			np_errmsg(err, errlen, "%s:%d: malformed mountinfo line",
			       path, lineno);
			goto cleanup;
		}
	}
	if (ferror(f)) {
		r = -EIO;
		np_errmsg(err, errlen, "cannot read %s: I/O error", path);
	}
cleanup:
	free(line);
	fclose(f);
	return r;
}

/*
 * /proc/cgroups: "#subsys_name hierarchy num_cgroups enabled".  Sets
 * the hierarchy id and enabled flag of cpuset; -ENOENT from fopen, -ESRCH if no
 * cpuset line.
 */
static int proc_cgroups_cpuset(const char *path, int *hier, int *enabled,
			       char *err, size_t errlen)
{
	char eb[128], *line = NULL;
	size_t cap = 0;
	int r = -ESRCH;
	FILE *f;

	f = fopen(path, "re");
	if (!f) {
		r = -errno;
		np_errmsg(err, errlen, "cannot read %s: %s", path,
		       cg_strerror(r, eb, sizeof(eb)));
		return r;
	}
	while (getline(&line, &cap, f) >= 0) {
		char name[64];
		int h, n, e;

		if (line[0] == '#')
			continue;
		if (sscanf(line, "%63s %d %d %d", name, &h, &n, &e) != 4)
			continue;
		if (!strcmp(name, "cpuset")) {
			*hier = h;
			*enabled = e;
			r = 0;
			break;
		}
	}
	free(line);
	fclose(f);
	return r;
}

int np_cgroup_check_v1(const char *mountinfo, const char *proc_cgroups,
		       char *err, size_t errlen)
{
	const char *pc = proc_cgroups ? proc_cgroups : DEFAULT_PROC_CGROUPS;
	struct survey *s;
	int hier = 0, enabled = 1, r;

	s = malloc(sizeof(*s));
	if (!s) {
		np_errmsg(err, errlen, "out of memory");
		return -ENOMEM;
	}
	r = survey_mountinfo(mountinfo ? mountinfo : DEFAULT_MOUNTINFO, s, err,
			     errlen);
	if (r < 0)
		goto cleanup;
	if (s->v1_cpuset[0]) {
		np_errmsg(err, errlen,
		       "cpuset is bound to a cgroup v1 hierarchy (mounted at "
		       "%s); " V1_ADVICE,
		       s->v1_cpuset);
		r = -EOPNOTSUPP;
		goto cleanup;
	}
	r = proc_cgroups_cpuset(pc, &hier, &enabled, err, errlen);
	if (r == -ENOENT && !proc_cgroups) {
		/* the mountinfo check above is the primary signal */
		r = 0;
		goto cleanup;
	}
	if (r == -ESRCH) {
		np_errmsg(err, errlen,
		       "no cpuset controller in %s: kernel built without "
		       "CONFIG_CPUSETS",
		       pc);
		r = -EOPNOTSUPP;
		goto cleanup;
	}
	if (r < 0)
		goto cleanup;
	if (hier != 0) {
		np_errmsg(
		    err, errlen,
		    "cpuset is bound to a cgroup v1 hierarchy (hierarchy %d in "
		    "%s, not mounted in this mount namespace); " V1_ADVICE,
		    hier, pc);
		r = -EOPNOTSUPP;
	} else if (!enabled) {
		np_errmsg(
		    err, errlen,
		    "cpuset controller is disabled (enabled=0 in %s): remove "
		    "cgroup_disable=cpuset from the kernel command line",
		    pc);
		r = -EOPNOTSUPP;
	}
cleanup:
	free(s);
	return r;
}

int np_cgroup_find_mount(const char *mountinfo, const char *proc_cgroups,
			 char *path, size_t len, char *err, size_t errlen)
{
	const char *mi = mountinfo ? mountinfo : DEFAULT_MOUNTINFO;
	struct survey *s;
	int r;

	r = np_cgroup_check_v1(mountinfo, proc_cgroups, err, errlen);
	if (r < 0)
		return r;
	s = malloc(sizeof(*s));
	if (!s) {
		np_errmsg(err, errlen, "out of memory");
		return -ENOMEM;
	}
	r = survey_mountinfo(mi, s, err, errlen);
	if (r < 0)
		goto cleanup;
	if (!s->v2[0]) {
		np_errmsg(err, errlen,
		       "no cgroup2 mount in %s: mount one (mount -t cgroup2 "
		       "none /sys/fs/cgroup) or pass the root explicitly",
		       mi);
		r = -ENOENT;
		goto cleanup;
	}
	if (strlen(s->v2) >= len) {
		np_errmsg(err, errlen, "cgroup2 mount path %s too long", s->v2);
		r = -ENAMETOOLONG;
		goto cleanup;
	}
	memcpy(path, s->v2, strlen(s->v2) + 1);
cleanup:
	free(s);
	return r;
}

int np_cgroup2_mount_find(const char *mountinfo, char *out, size_t len)
{
	char err[256];
	struct survey *s = malloc(sizeof(*s));
	int r;

	if (!s)
		return -ENOMEM;
	r = survey_mountinfo(mountinfo ? mountinfo : DEFAULT_MOUNTINFO, s, err,
			     sizeof(err));
	if (r < 0)
		goto cleanup;
	if (!s->v2[0])
		r = -ENOENT;
	else if (strlen(s->v2) >= len)
		r = -ENAMETOOLONG;
	else
		memcpy(out, s->v2, strlen(s->v2) + 1);
cleanup:
	free(s);
	return r;
}

void np_cgroup_close(struct np_cgroup_root *root)
{
	if (root->parent_fd >= 0)
		close(root->parent_fd);
	if (root->root_fd >= 0)
		close(root->root_fd);
	if (root->top_fd >= 0)
		close(root->top_fd);
	root->parent_fd = root->root_fd = root->top_fd = -1;
	root->parent_mnt = 0;
}

/* "cpuset" must be listed in the root's cgroup.controllers. */
static int check_controllers(const struct np_cgroup_root *root,
			     const struct np_cgroup_opts *opts, char *err,
			     size_t errlen)
{
	char *txt = NULL, *nl;
	int r;

	r = cg_read_msg(root->root_fd, root->path, "cgroup.controllers", &txt,
			err, errlen);
	if (r == -ENOENT)
		np_errmsg(
		    err, errlen,
		    "%s has no cgroup.controllers: not the root of a cgroup v2 "
		    "hierarchy",
		    root->path);
	if (r < 0)
		return r;
	if (cg_has_word(txt, "cpuset"))
		goto cleanup;
	/* The usual reason on a real host is a hybrid layout: say so. */
	if (!root->fake) {
		r = np_cgroup_check_v1(opts->mountinfo, opts->proc_cgroups, err,
				       errlen);
		if (r < 0)
			goto cleanup;
	}
	nl = strchr(txt, '\n');
	if (nl)
		*nl = '\0';
	np_errmsg(err, errlen,
	       "cpuset controller not available in %s/cgroup.controllers "
	       "(has: %s)",
	       root->path, *txt ? txt : "nothing");
	r = -ENODEV;
cleanup:
	free(txt);
	return r;
}

int np_cgroup_open(struct np_cgroup_root *root,
		   const struct np_cgroup_opts *opts, char *err, size_t errlen)
{
	const char *parent = opts->parent ? opts->parent : "";
	struct statfs sfs;
	struct cg_dir d;
	char eb[128];
	int r;

	memset(root, 0, sizeof(*root));
	root->root_fd = root->parent_fd = root->top_fd = -1;

	if (opts->root) {
		if (strlen(opts->root) >= sizeof(root->path)) {
			np_errmsg(err, errlen, "cgroup root path too long");
			return -ENAMETOOLONG;
		}
		snprintf(root->path, sizeof(root->path), "%s", opts->root);
	} else {
		r = np_cgroup_find_mount(opts->mountinfo, opts->proc_cgroups,
					 root->path, sizeof(root->path), err,
					 errlen);
		if (r < 0)
			return r;
	}
	if (*parent) {
		r = np_cgroup_path_check(parent, err, errlen);
		if (r < 0)
			return r;
	}
	snprintf(root->parent, sizeof(root->parent), "%s", parent);

	root->root_fd = open(root->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (root->root_fd < 0) {
		r = -errno;
		np_errmsg(err, errlen, "cannot open cgroup root %s: %s",
		       root->path, cg_strerror(r, eb, sizeof(eb)));
		goto fail;
	}
	if (fstatfs(root->root_fd, &sfs) < 0) {
		r = -errno;
		np_errmsg(err, errlen, "statfs %s: %s", root->path,
		       cg_strerror(r, eb, sizeof(eb)));
		goto fail;
	}
	if ((unsigned long)sfs.f_type == CGROUP_SUPER_MAGIC) {
		/* a real cgroup v1 hierarchy is never a test tree */
		np_errmsg(err, errlen,
		       "%s is a cgroup v1 hierarchy, not cgroup2; numaplace "
		       "needs cgroup v2 (" V1_ADVICE ")",
		       root->path);
		r = -EMEDIUMTYPE;
		goto fail;
	}
	if ((unsigned long)sfs.f_type != CGROUP2_SUPER_MAGIC) {
		if (!opts->allow_fake) {
			np_errmsg(err, errlen,
			       "%s is not a cgroup2 filesystem (f_type 0x%lx, "
			       "cgroup2 is 0x%lx); pass allow_fake to use a "
			       "test tree",
			       root->path, (unsigned long)sfs.f_type,
			       (unsigned long)CGROUP2_SUPER_MAGIC);
			r = -EMEDIUMTYPE;
			goto fail;
		}
		root->fake = true;
	}
	r = check_controllers(root, opts, err, errlen);
	if (r < 0)
		goto fail;
	root->top_fd = opts->top ? open(opts->top, O_RDONLY | O_DIRECTORY |
							   O_CLOEXEC)
				 : fcntl(root->root_fd, F_DUPFD_CLOEXEC, 3);
	snprintf(root->top, sizeof(root->top), "%s",
		 opts->top ? opts->top : root->path);
	if (root->top_fd < 0) {
		r = -errno;
		np_errmsg(err, errlen, "cannot open cgroup hierarchy root %s: %s",
			  opts->top ? opts->top : root->path,
			  cg_strerror(r, eb, sizeof(eb)));
		goto fail;
	}

	if (!*parent) {
		root->parent_fd = fcntl(root->root_fd, F_DUPFD_CLOEXEC, 3);
		if (root->parent_fd < 0) {
			r = -errno;
			np_errmsg(err, errlen, "dup: %s",
			       cg_strerror(r, eb, sizeof(eb)));
			goto fail;
		}
		root->parent_mnt = cg_mount_id(root->parent_fd);
		return 0;
	}
	r = cg_walk(root, root->root_fd, "", parent,
		    opts->create_parent ? CG_WALK_CREATE | CG_WALK_ENABLE : 0,
		    &d, err, errlen);
	if (r < 0)
		goto fail;
	root->parent_fd = d.fd;
	root->parent_mnt = cg_mount_id(root->parent_fd);
	d.fd = -1;
	cg_dir_close(&d);
	return 0;
fail:
	np_cgroup_close(root);
	return r;
}
