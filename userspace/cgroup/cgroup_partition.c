// SPDX-License-Identifier: Apache-2.0
/*
 * cpuset partitions (hard isolation): cpuset.cpus.exclusive (Linux 6.7+)
 * and cpuset.cpus.partition with read-back; a partition the kernel marks
 * invalid is reverted to member and the kernel's reason reported.
 */
#include "cgroup_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const partition_names[] = {
    [NP_CGROUP_MEMBER] = "member",
    [NP_CGROUP_ROOT] = "root",
    [NP_CGROUP_ISOLATED] = "isolated",
};

const char *np_cgroup_partition_name(enum np_cgroup_partition p)
{
	if ((unsigned int)p >=
	    sizeof(partition_names) / sizeof(*partition_names))
		return "?";
	return partition_names[p];
}

int np_cgroup_partition_parse(const char *s, enum np_cgroup_partition *mode,
			      bool *invalid, char *reason, size_t reasonlen)
{
	const char *p = s, *close_paren;
	size_t n;
	int m = -1;

	if (reason && reasonlen)
		reason[0] = '\0';
	*invalid = false;
	p += strspn(p, " \t\n");
	n = strcspn(p, " \t\n");
	for (int i = 0;
	     i < (int)(sizeof(partition_names) / sizeof(*partition_names)); i++)
		if (strlen(partition_names[i]) == n &&
		    !strncmp(p, partition_names[i], n))
			m = i;
	if (m < 0)
		return -EINVAL;
	p += n;
	p += strspn(p, " \t");
	if (!strncmp(p, "invalid", 7)) {
		*invalid = true;
		p += 7;
		p += strspn(p, " \t");
		if (*p == '(') {
			/* the reason may itself contain parentheses */
			close_paren = strrchr(p, ')');
			if (!close_paren)
				return -EINVAL;
			if (reason && reasonlen)
				snprintf(reason, reasonlen, "%.*s",
					 (int)(close_paren - p - 1), p + 1);
			p = close_paren + 1;
		}
	}
	p += strspn(p, " \t\n");
	if (*p)
		return -EINVAL;
	*mode = (enum np_cgroup_partition)m;
	return 0;
}

static int read_partition(const struct cg_dir *d, enum np_cgroup_partition *got,
			  bool *invalid, char *reason, size_t reasonlen,
			  char *raw, size_t rawlen, char *err, size_t errlen)
{
	char *txt = NULL, *nl;
	int r;

	r = cg_read_msg(d->fd, d->disp, "cpuset.cpus.partition", &txt, err,
			errlen);
	if (r < 0)
		return r;
	nl = strchr(txt, '\n');
	if (nl)
		*nl = '\0';
	snprintf(raw, rawlen, "%s", txt);
	r = np_cgroup_partition_parse(txt, got, invalid, reason, reasonlen);
	if (r < 0)
		np_errmsg(err, errlen,
		       "%s/cpuset.cpus.partition: unexpected content '%.64s'",
		       d->disp, txt);
	free(txt);
	return r;
}

/* Append "; <what>: <msg2>" to err (the first failure stays first). */
static void append_err(char *err, size_t errlen, const char *what,
		       const char *msg2)
{
	size_t l;

	if (!err || !errlen)
		return;
	l = strlen(err);
	if (l + 1 < errlen)
		snprintf(err + l, errlen - l, "; %s: %s", what, msg2);
}

/*
 * Write the partition's exclusive CPUs (6.7+; *old gets the previous value,
 * to restore): 1 when written, 0 when the kernel has no such file and the
 * request equals cpuset.cpus (before 6.7 those are the exclusive CPUs).
 */
static int set_exclusive(const struct np_cgroup_root *root,
			 const struct cg_dir *dp, const np_cpuset *exclusive,
			 char **old, char *err, size_t errlen)
{
	struct cg_dir d = *dp;
	char e2[512], *val;
	int r = cg_read(d.fd, "cpuset.cpus.exclusive", old);

	if (r == -ENOENT) {
		char a[160], b[160];
		np_cpuset cpus;

		r = cg_read_cpus(&d, "cpuset.cpus", &cpus, err, errlen);
		if (r < 0)
			return r;
		if (np_cpuset_equal(&cpus, exclusive))
			return 0;
		cg_fmt_cpus(exclusive, a, sizeof(a));
		cg_fmt_cpus(&cpus, b, sizeof(b));
		np_errmsg(err, errlen,
			  "%s: cpuset.cpus.exclusive does not exist (Linux < "
			  "6.7): the partition's exclusive CPUs are its "
			  "cpuset.cpus (%s), cannot request '%s'",
			  d.disp, b, a);
		return -EOPNOTSUPP;
	}
	if (r < 0) {
		np_errmsg(err, errlen, "cannot read %s/cpuset.cpus.exclusive: %s",
			  d.disp, cg_strerror(r, e2, sizeof(e2)));
		return r;
	}
	if (strchr(*old, '\n'))
		*strchr(*old, '\n') = '\0';
	if (!(val = np_cpuset_str(exclusive))) {
		np_errmsg(err, errlen, "out of memory");
		return -ENOMEM;
	}
	r = cg_write(root, d.fd, d.rel, d.disp, "cpuset.cpus.exclusive", val,
		     err, errlen);
	free(val);
	return r < 0 ? r : 1;
}

/* After the kernel refused a partition: back to member, checked. */
static int revert_to_member(const struct np_cgroup_root *root,
			    const struct cg_dir *dp, const char *want,
			    const char *reason, char *err, size_t errlen)
{
	struct cg_dir d = *dp;
	char reason2[256], raw2[320], e2[512];
	enum np_cgroup_partition got;
	bool invalid2;
	int r;

	r = cg_write(root, d.fd, d.rel, d.disp, "cpuset.cpus.partition",
		     "member", e2, sizeof(e2));
	if (r == 0)
		r = read_partition(&d, &got, &invalid2, reason2, sizeof(reason2),
				   raw2, sizeof(raw2), e2, sizeof(e2));
	if (r == 0 && (invalid2 || got != NP_CGROUP_MEMBER)) {
		snprintf(e2, sizeof(e2), "cpuset.cpus.partition reads back '%s'",
			 raw2);
		r = -EIO;
	}
	if (r < 0)
		np_errmsg(err, errlen,
			  "%s: kernel refused partition '%s': \"%s\"; "
			  "reverting to member failed: %s",
			  d.disp, want, reason, e2);
	return r;
}

int np_cgroup_set_partition(const struct np_cgroup_root *root,
			    const char *cgroup, enum np_cgroup_partition mode,
			    const np_cpuset *exclusive, char *err,
			    size_t errlen)
{
	char reason[256], raw[320], e2[512], *old_excl = NULL;
	const char *want = np_cgroup_partition_name(mode);
	enum np_cgroup_partition got;
	bool invalid, wrote_excl = false;
	struct cg_dir d;
	int r, r2;

	if ((unsigned int)mode > NP_CGROUP_ISOLATED) {
		np_errmsg(err, errlen, "invalid partition mode %d", (int)mode);
		return -EINVAL;
	}
	r = cg_open(root, cgroup, &d, err, errlen);
	if (r < 0)
		return r;

	if (exclusive) {
		r = set_exclusive(root, &d, exclusive, &old_excl, err, errlen);
		if (r < 0)
			goto cleanup;
		wrote_excl = r > 0;
	}

	r = cg_write(root, d.fd, d.rel, d.disp, "cpuset.cpus.partition", want,
		     err, errlen);
	if (r < 0)
		goto restore;
	r = read_partition(&d, &got, &invalid, reason, sizeof(reason), raw,
			   sizeof(raw), err, errlen);
	if (r < 0)
		goto cleanup;
	if (!invalid && got == mode)
		goto cleanup;
	if (!invalid) {
		np_errmsg(err, errlen,
		       "%s: wrote '%s' to cpuset.cpus.partition but it reads "
		       "back '%s'",
		       d.disp, want, raw);
		r = -EIO;
		goto cleanup;
	}

	/* The kernel refused: back to member, quoting its reason. */
	if ((r = revert_to_member(root, &d, want, reason, err, errlen)) < 0)
		goto cleanup;
	np_errmsg(err, errlen,
	       "warning: %s: kernel refused partition '%s': \"%s\" "
	       "(cpuset.cpus.partition read back '%s'); reverted to member",
	       d.disp, want, *reason ? reason : "no reason given", raw);
	r = NP_CGROUP_PARTITION_REFUSED;
restore:
	if (wrote_excl) {
		r2 =
		    cg_write(root, d.fd, d.rel, d.disp, "cpuset.cpus.exclusive",
			     old_excl, e2, sizeof(e2));
		if (r2 < 0) {
			append_err(err, errlen,
				   "restoring cpuset.cpus.exclusive failed",
				   e2);
			r = r2;
		}
	}
cleanup:
	free(old_excl);
	cg_dir_close(&d);
	return r;
}
