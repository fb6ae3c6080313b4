// SPDX-License-Identifier: Apache-2.0
/*
 * cpuset.cpus / cpuset.mems writes with read-back of the effective sets,
 * and the read-only inspection used for drift detection.
 */
#include "cgroup_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SETBUF 160 /* sets in messages; longer ones end in "..." */

static void fmt_cpus_or_none(const np_cpuset *s, char *buf, size_t len)
{
	if (np_cpuset_empty(s))
		snprintf(buf, len, "none");
	else
		cg_fmt_cpus(s, buf, len);
}

static void fmt_mems_or_none(np_nodemask m, char *buf, size_t len)
{
	if (!m)
		snprintf(buf, len, "none");
	else
		cg_fmt_mems(m, buf, len);
}

/* The parent's effective set, formatted for a message. */
static void parent_effective(const struct cg_dir *d, const char *file,
			     bool cpus, char *buf, size_t len)
{
	char eb[128], *txt = NULL;
	np_nodemask m;
	np_cpuset s;
	int r;

	if (d->sub) {
		/* the managed parent, or sub's parent below it */
		const char *slash = strrchr(d->sub, '/');
		char up[NP_CGROUP_PATH_MAX];

		snprintf(up, sizeof(up), "%.*s",
			 slash ? (int)(slash - d->sub) : 0, d->sub);
		r = cg_read_in(d->fd, slash ? up : NULL, file, &txt);
	} else if (d->parent_fd < 0) {
		snprintf(buf, len, "unknown");
		return;
	} else {
		r = cg_read(d->parent_fd, file, &txt);
	}
	if (r < 0) {
		snprintf(buf, len, "unreadable: %s",
			 cg_strerror(r, eb, sizeof(eb)));
		return;
	}
	if (cpus) {
		r = np_cpuset_parse(&s, txt, NULL, 0);
		if (r == 0)
			fmt_cpus_or_none(&s, buf, len);
	} else {
		r = np_nodemask_parse(&m, txt, NULL, 0);
		if (r == 0)
			fmt_mems_or_none(m, buf, len);
	}
	if (r < 0)
		snprintf(buf, len, "unparsable");
	free(txt);
}

static int readback_cpus(const struct cg_dir *d, const np_cpuset *want,
			 np_cpuset *granted, char *err, size_t errlen)
{
	char req[SETBUF], got[SETBUF], par[SETBUF];
	np_cpuset eff;
	int r;

	r = cg_read_cpus(d, "cpuset.cpus.effective", &eff, err, errlen);
	if (r < 0)
		return r;
	if (granted)
		*granted = eff;
	if (np_cpuset_equal(&eff, want))
		return 0;
	fmt_cpus_or_none(want, req, sizeof(req));
	fmt_cpus_or_none(&eff, got, sizeof(got));
	parent_effective(d, "cpuset.cpus.effective", true, par, sizeof(par));
	np_errmsg(err, errlen,
	       "%s: cpuset.cpus: kernel granted %s %s requested %s (parent "
	       "cpuset.cpus.effective is %s)",
	       d->disp, got, np_cpuset_subset(&eff, want) ? "of" : "instead of",
	       req, par);
	return NP_CGROUP_PARTIAL;
}

static int readback_mems(const struct cg_dir *d, np_nodemask want,
			 np_nodemask *granted, char *err, size_t errlen)
{
	char req[SETBUF], got[SETBUF], par[SETBUF];
	np_nodemask eff;
	int r;

	r = cg_read_mems(d, "cpuset.mems.effective", &eff, err, errlen);
	if (r < 0)
		return r;
	if (granted)
		*granted = eff;
	if (eff == want)
		return 0;
	fmt_mems_or_none(want, req, sizeof(req));
	fmt_mems_or_none(eff, got, sizeof(got));
	parent_effective(d, "cpuset.mems.effective", false, par, sizeof(par));
	np_errmsg(err, errlen,
	       "%s: cpuset.mems: kernel granted %s %s requested %s (parent "
	       "cpuset.mems.effective is %s)",
	       d->disp, got, (eff & ~want) == 0 ? "of" : "instead of", req,
	       par);
	return NP_CGROUP_PARTIAL;
}

int cg_write_set(const struct np_cgroup_root *root, const char *cgroup,
		 enum np_cgroup_file file, const np_cpuset *cpus,
		 const char *text, np_nodemask mems, bool readback,
		 np_cpuset *granted_cpus,
		 np_nodemask *granted_mems, char *err, size_t errlen)
{
	const char *fname =
	    file == NP_CGROUP_CPUS ? "cpuset.cpus" : "cpuset.mems";
	char mbuf[256], *val = NULL;
	struct cg_dir d;
	int r;

	/* the cgroup's files opened beneath the managed parent: no walk of
	 * its own per write (an open, a statx and a close fewer); a value
	 * refused below is refused after the walk, as it always was */
	r = (file == NP_CGROUP_CPUS ? np_cpuset_empty(cpus) : !mems)
		    ? cg_open(root, cgroup, &d, err, errlen)
		    : cg_open_files(root, cgroup, &d, err, errlen);
	if (r < 0)
		return r;
	if (file == NP_CGROUP_CPUS) {
		if (np_cpuset_empty(cpus)) {
			np_errmsg(err, errlen,
			       "%s: refusing to write an empty cpuset.cpus (it "
			       "means 'inherit the parent's CPUs')",
			       d.disp);
			r = -EINVAL;
			goto cleanup;
		}
		if (!text && !(val = np_cpuset_str(cpus))) {
			np_errmsg(err, errlen, "out of memory");
			r = -ENOMEM;
			goto cleanup;
		}
	} else {
		if (!mems) {
			np_errmsg(err, errlen,
			       "%s: refusing to write an empty cpuset.mems (it "
			       "means 'inherit the parent's nodes')",
			       d.disp);
			r = -EINVAL;
			goto cleanup;
		}
		cg_fmt_mems(mems, mbuf, sizeof(mbuf));
	}
	{
		const char *v = text ? text : val ? val : mbuf;

		r = cg_write_in(root, &d, fname, v, err, errlen);
		if (r > 0) {
			/* not opened beneath it: walked, for the walk's
			 * checks and messages */
			cg_dir_close(&d);
			if ((r = cg_open(root, cgroup, &d, err, errlen)) < 0)
				goto cleanup;
			r = cg_write_in(root, &d, fname, v, err, errlen);
		}
	}
	if (r < 0 || !readback)
		goto cleanup;
	if (file == NP_CGROUP_CPUS)
		r = readback_cpus(&d, cpus, granted_cpus, err, errlen);
	else
		r = readback_mems(&d, mems, granted_mems, err, errlen);
cleanup:
	free(val);
	cg_dir_close(&d);
	return r;
}

int np_cgroup_write_cpus(const struct np_cgroup_root *root, const char *cgroup,
			 const np_cpuset *cpus, np_cpuset *granted, char *err,
			 size_t errlen)
{
	return cg_write_set(root, cgroup, NP_CGROUP_CPUS, cpus, NULL, 0, true,
			    granted, NULL, err, errlen);
}

int np_cgroup_write_mems(const struct np_cgroup_root *root, const char *cgroup,
			 np_nodemask mems, np_nodemask *granted, char *err,
			 size_t errlen)
{
	return cg_write_set(root, cgroup, NP_CGROUP_MEMS, NULL, NULL, mems, true,
			    NULL, granted, err, errlen);
}

int np_cgroup_write_cpu_max(const struct np_cgroup_root *root,
			    const char *cgroup, int64_t quota_us,
			    int64_t period_us, char *err, size_t errlen)
{
	char val[64];
	struct cg_dir d;
	int r;

	/* the kernel's bounds: period 1 ms..1 s, quota at least 1 ms */
	if (period_us < 1000 || period_us > 1000000 ||
	    (quota_us >= 0 && quota_us < 1000)) {
		np_errmsg(err, errlen,
			  "%s: cpu.max quota %lld / period %lld us is out of "
			  "range",
			  cgroup, (long long)quota_us, (long long)period_us);
		return -EINVAL;
	}
	if (quota_us < 0)
		snprintf(val, sizeof(val), "max %lld", (long long)period_us);
	else
		snprintf(val, sizeof(val), "%lld %lld", (long long)quota_us,
			 (long long)period_us);
	r = cg_open(root, cgroup, &d, err, errlen);
	if (r < 0)
		return r;
	r = cg_write(root, d.fd, d.rel, d.disp, "cpu.max", val, err, errlen);
	cg_dir_close(&d);
	return r;
}

/* cgroup.procs can be huge: only look at its first bytes. */
static int procs_empty(const struct cg_dir *d, bool *empty, char *err,
		       size_t errlen)
{
	char buf[64], eb[128];
	ssize_t n;
	int fd, r = 0;

	fd = openat(d->fd, "cgroup.procs", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		r = -errno;
		np_errmsg(err, errlen, "cannot read %s/cgroup.procs: %s", d->disp,
		       cg_strerror(r, eb, sizeof(eb)));
		return r;
	}
	do
		n = read(fd, buf, sizeof(buf));
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		r = -errno;
		np_errmsg(err, errlen, "cannot read %s/cgroup.procs: %s", d->disp,
		       cg_strerror(r, eb, sizeof(eb)));
	} else {
		*empty = true;
		for (ssize_t i = 0; i < n; i++)
			if (buf[i] != ' ' && buf[i] != '\n' && buf[i] != '\t')
				*empty = false;
	}
	close(fd);
	return r;
}

int np_cgroup_inspect(const struct np_cgroup_root *root, const char *cgroup,
		      struct np_cgroup_state *st, char *err, size_t errlen)
{
	char eb[128], *txt = NULL;
	struct cg_dir d;
	int r;

	memset(st, 0, sizeof(*st));
	r = cg_open(root, cgroup, &d, err, errlen);
	if (r < 0)
		return r;
	r = cg_read_cpus(&d, "cpuset.cpus", &st->cpus, err, errlen);
	if (r == 0)
		r = cg_read_cpus(&d, "cpuset.cpus.effective",
				 &st->cpus_effective, err, errlen);
	if (r == 0)
		r = cg_read_mems(&d, "cpuset.mems", &st->mems, err, errlen);
	if (r == 0)
		r = cg_read_mems(&d, "cpuset.mems.effective",
				 &st->mems_effective, err, errlen);
	if (r == -ENOENT)
		np_errmsg(err, errlen,
		       "cpuset files missing in %s: +cpuset not enabled in the "
		       "parent's cgroup.subtree_control",
		       d.disp);
	if (r < 0)
		goto cleanup;

	/* Linux 6.7+ */
	r = cg_read(d.fd, "cpuset.cpus.exclusive", &txt);
	if (r == 0) {
		char pe[160];

		st->has_cpus_exclusive = true;
		r = np_cpuset_parse(&st->cpus_exclusive, txt, pe, sizeof(pe));
		if (r < 0) {
			np_errmsg(err, errlen,
			       "%s/cpuset.cpus.exclusive: cannot parse its "
			       "content: %s",
			       d.disp, pe);
			goto cleanup;
		}
	} else if (r != -ENOENT) {
		np_errmsg(err, errlen, "cannot read %s/cpuset.cpus.exclusive: %s",
		       d.disp, cg_strerror(r, eb, sizeof(eb)));
		goto cleanup;
	}
	free(txt);
	txt = NULL;

	/* Linux 5.11+ */
	st->partition = NP_CGROUP_MEMBER;
	r = cg_read(d.fd, "cpuset.cpus.partition", &txt);
	if (r == 0) {
		st->has_partition = true;
		r = np_cgroup_partition_parse(
		    txt, &st->partition, &st->partition_invalid,
		    st->partition_reason, sizeof(st->partition_reason));
		if (r < 0) {
			np_errmsg(err, errlen,
			       "%s/cpuset.cpus.partition: unexpected content "
			       "'%.64s'",
			       d.disp, txt);
			goto cleanup;
		}
	} else if (r != -ENOENT) {
		np_errmsg(err, errlen, "cannot read %s/cpuset.cpus.partition: %s",
		       d.disp, cg_strerror(r, eb, sizeof(eb)));
		goto cleanup;
	}
	r = procs_empty(&d, &st->procs_empty, err, errlen);
cleanup:
	free(txt);
	cg_dir_close(&d);
	return r;
}
