// SPDX-License-Identifier: Apache-2.0
/*
 * errno of a failed cgroupfs write -> an actionable message naming the
 * cgroup, the file and the value.  Where each errno comes from in the
 * kernel (kernel/cgroup/cpuset.c, kernel/cgroup/cgroup.c, kernfs) is noted.
 */
#include "cgroup_internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

const char *cg_strerror(int errnum, char *buf, size_t len)
{
	/* GNU strerror_r (we build with _GNU_SOURCE): may not use buf. */
	return strerror_r(errnum < 0 ? -errnum : errnum, buf, len);
}

enum file_kind {
	F_CPUS,	   /* cpuset.cpus */
	F_MEMS,	   /* cpuset.mems */
	F_EXCL,	   /* cpuset.cpus.exclusive */
	F_PART,	   /* cpuset.cpus.partition */
	F_SUBTREE, /* cgroup.subtree_control */
	F_OTHER,
};

static enum file_kind file_kind(const char *file)
{
	static const char *const names[] = {
	    [F_CPUS] = "cpuset.cpus",
	    [F_MEMS] = "cpuset.mems",
	    [F_EXCL] = "cpuset.cpus.exclusive",
	    [F_PART] = "cpuset.cpus.partition",
	    [F_SUBTREE] = "cgroup.subtree_control",
	};

	for (int i = 0; i < F_OTHER; i++)
		if (!strcmp(file, names[i]))
			return (enum file_kind)i;
	return F_OTHER;
}

/* Why a file is missing (ENOENT); NULL: not a missing-file case. */
static const char *why_missing(enum file_kind f, const char *file)
{
	switch (f) {
	case F_EXCL:
		return "needs Linux 6.7+ (or +cpuset not enabled in the "
		       "parent's cgroup.subtree_control)";
	case F_PART:
		return "needs Linux 5.11+ (or +cpuset not enabled in the "
		       "parent's cgroup.subtree_control)";
	case F_SUBTREE:
		return NULL; /* the write itself said ENOENT, see below */
	default:
		if (!strncmp(file, "cpuset.", 7))
			return "+cpuset not enabled in the parent's "
			       "cgroup.subtree_control";
		return "not a cgroup directory?";
	}
}

/* Explanation for "cannot write 'v' to cg/file: <why>". */
static const char *why_failed(int e, enum file_kind f)
{
	switch (e) {
	case ENOENT: /* cgroup_subtree_control_write() */
		return "cpuset is not in this cgroup's cgroup.controllers: "
		       "+cpuset not enabled in the parent's "
		       "cgroup.subtree_control";
	case EBUSY:
		if (f == F_SUBTREE)
			return "busy: the cgroup has processes of its own and "
			       "cgroup v2 enables controllers for children "
			       "only without internal processes (move them "
			       "to a leaf cgroup), or processes just left and "
			       "the kernel is still tearing down: retry";
		if (f == F_CPUS || f == F_EXCL || f == F_PART)
			return "busy: SCHED_DEADLINE tasks need CPUs being "
			       "removed, or a partition change is in progress; "
			       "retry later";
		return "busy; retry later";
	case ENOSPC: /* validate_change(): populated, would become empty */
		return f == F_MEMS ? "the cgroup has tasks and would be left "
				     "without memory nodes"
				   : "the cgroup has tasks and would be left "
				     "without CPUs";
	case EINVAL:
		switch (f) {
		case F_CPUS:
			return "malformed list, CPUs that do not exist or are "
			       "not online, or an exclusivity/partition "
			       "conflict (a sibling partition or "
			       "cpuset.cpus.exclusive owns some of these CPUs)";
		case F_EXCL:
			return "malformed list, not within the parent's "
			       "exclusive CPUs, or overlapping a sibling's "
			       "exclusive CPUs";
		case F_MEMS:
			return "malformed list or nodes without memory (see "
			       "/sys/devices/system/node/has_memory)";
		case F_PART:
			return "not one of member, root, isolated (or not "
			       "supported by this kernel), or the CPUs are not "
			       "exclusive";
		case F_SUBTREE:
			return "malformed controller list";
		default:
			return "invalid argument";
		}
	case ERANGE: /* bitmap_parselist(): beyond nr_cpu_ids/MAX_NUMNODES */
		return f == F_MEMS
			   ? "names NUMA nodes this kernel cannot have (see "
			     "/sys/devices/system/node/possible)"
			   : "names CPUs that do not exist on this machine "
			     "(beyond nr_cpu_ids; see "
			     "/sys/devices/system/cpu/possible)";
	case EACCES:
	case EPERM:
		return "permission denied: run numaplace as root "
		       "(CAP_SYS_ADMIN in the initial namespaces) or delegate "
		       "the cgroup to its user";
	case EROFS:
		return "the cgroup filesystem is mounted read-only (inside a "
		       "container?); run numaplace on the host or mount "
		       "cgroup2 read-write";
	case E2BIG: /* kernfs: one page per write */
		return "longer than one page, the most the kernel takes in one "
		       "write";
	case ENODEV:
		return "the cgroup was removed";
	default:
		return NULL;
	}
}

int np_cgroup_errmsg(char *buf, size_t len, int errnum, const char *cg,
		     const char *file, const char *value)
{
	int e = errnum < 0 ? -errnum : errnum;
	enum file_kind f = file_kind(file);
	const char *v = value ? value : "";
	const char *why;
	char eb[128];
	int n;

	if (!buf || !len) {
		buf = NULL;
		len = 0;
	}
	if (e == ENOENT && (why = why_missing(f, file)))
		n = snprintf(buf, len,
			     "%s missing in %s: %s ('%s' not written)", file,
			     cg, why, v);
	else if ((why = why_failed(e, f)))
		n = snprintf(buf, len, "cannot write '%s' to %s/%s: %s", v, cg,
			     file, why);
	else
		n = snprintf(buf, len, "cannot write '%s' to %s/%s: %s", v, cg,
			     file, cg_strerror(e, eb, sizeof(eb)));
	if (n > 0 && len && (size_t)n >= len)
		n = (int)len - 1;
	return n;
}
