// SPDX-License-Identifier: Apache-2.0
/*
 * errno of a failed cgroupfs write -> an actionable message naming the
 * cgroup, the file and the value.  The kernel sources of each errno are
 * noted (kernel/cgroup/cpuset.c, kernel/cgroup/cgroup.c, kernfs).
 */
#include "cgroup_internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static int out(char *buf, size_t len, int n)
{
	if (n < 0)
		return n;
	return buf && len && (size_t)n >= len ? (int)len - 1 : n;
}

int np_cgroup_errmsg(char *buf, size_t len, int errnum, const char *cg,
		     const char *file, const char *value)
{
	int e = errnum < 0 ? -errnum : errnum;
	bool cpus = !strcmp(file, "cpuset.cpus");
	bool mems = !strcmp(file, "cpuset.mems");
	bool excl = !strcmp(file, "cpuset.cpus.exclusive");
	bool part = !strcmp(file, "cpuset.cpus.partition");
	bool subtree = !strcmp(file, "cgroup.subtree_control");
	bool cpuset = !strncmp(file, "cpuset.", 7);
	const char *v = value ? value : "";
	char eb[128];
	int n;

	if (!buf || !len)
		buf = NULL, len = 0;

	switch (e) {
	case ENOENT:
		/* cgroup_subtree_control_write(): controller not in
		 * cgroup.controllers; cpuset files: css not enabled. */
		if (subtree)
			n = snprintf(buf, len,
				     "cannot write '%s' to %s/cgroup.subtree_control: "
				     "cpuset is not in %s/cgroup.controllers; "
				     "+cpuset not enabled in the parent's "
				     "cgroup.subtree_control",
				     v, cg, cg);
		else if (excl)
			n = snprintf(buf, len,
				     "cpuset.cpus.exclusive missing in %s: needs "
				     "Linux 6.7+ (or +cpuset not enabled in the "
				     "parent's cgroup.subtree_control); '%s' not "
				     "written",
				     cg, v);
		else if (part)
			n = snprintf(buf, len,
				     "cpuset.cpus.partition missing in %s: needs "
				     "Linux 5.11+ (or +cpuset not enabled in the "
				     "parent's cgroup.subtree_control); '%s' not "
				     "written",
				     cg, v);
		else if (cpuset)
			n = snprintf(buf, len,
				     "%s missing in %s: +cpuset not enabled in the "
				     "parent's cgroup.subtree_control ('%s' not "
				     "written)",
				     file, cg, v);
		else
			n = snprintf(buf, len,
				     "%s missing in %s: not a cgroup directory? "
				     "('%s' not written)",
				     file, cg, v);
		break;
	case EBUSY:
		if (subtree)
			n = snprintf(buf, len,
				     "cannot write '%s' to %s/%s: busy: the cgroup "
				     "has processes of its own and cgroup v2 allows "
				     "controllers for children only without "
				     "internal processes (move them to a leaf "
				     "cgroup), or processes just left and the "
				     "kernel is still tearing down: retry",
				     v, cg, file);
		else if (cpus || excl || part)
			n = snprintf(buf, len,
				     "cannot write '%s' to %s/%s: busy: "
				     "SCHED_DEADLINE tasks need CPUs being removed, "
				     "or a partition change is in progress; retry "
				     "later",
				     v, cg, file);
		else
			n = snprintf(buf, len,
				     "cannot write '%s' to %s/%s: busy; retry later",
				     v, cg, file);
		break;
	case ENOSPC:
		/* validate_change(): populated cpuset cannot become empty */
		n = snprintf(buf, len,
			     "cannot write '%s' to %s/%s: the cgroup has tasks "
			     "and would be left without %s",
			     v, cg, file, mems ? "memory nodes" : "CPUs");
		break;
	case EINVAL:
		if (cpus)
			n = snprintf(buf, len,
				     "kernel rejected '%s' for %s/cpuset.cpus: "
				     "malformed list, CPUs that do not exist or "
				     "are not online, or an exclusivity/partition "
				     "conflict (a sibling partition or "
				     "cpuset.cpus.exclusive owns some of these "
				     "CPUs)",
				     v, cg);
		else if (excl)
			n = snprintf(buf, len,
				     "kernel rejected '%s' for "
				     "%s/cpuset.cpus.exclusive: malformed list, "
				     "not within the parent's exclusive CPUs, or "
				     "overlapping a sibling's exclusive CPUs",
				     v, cg);
		else if (mems)
			n = snprintf(buf, len,
				     "kernel rejected '%s' for %s/cpuset.mems: "
				     "malformed list or nodes without memory (see "
				     "/sys/devices/system/node/has_memory)",
				     v, cg);
		else if (part)
			n = snprintf(buf, len,
				     "kernel rejected '%s' for "
				     "%s/cpuset.cpus.partition: not one of member, "
				     "root, isolated (or not supported by this "
				     "kernel), or the CPUs are not exclusive",
				     v, cg);
		else if (subtree)
			n = snprintf(buf, len,
				     "kernel rejected '%s' for "
				     "%s/cgroup.subtree_control: malformed "
				     "controller list",
				     v, cg);
		else
			n = snprintf(buf, len,
				     "kernel rejected '%s' for %s/%s: invalid "
				     "argument",
				     v, cg, file);
		break;
	case ERANGE:
		/* bitmap_parselist(): bit >= nr_cpu_ids / MAX_NUMNODES */
		if (mems)
			n = snprintf(buf, len,
				     "'%s' for %s/cpuset.mems names NUMA nodes this "
				     "kernel cannot have (see "
				     "/sys/devices/system/node/possible)",
				     v, cg);
		else
			n = snprintf(buf, len,
				     "'%s' for %s/%s names CPUs that do not exist "
				     "on this machine (beyond nr_cpu_ids; see "
				     "/sys/devices/system/cpu/possible)",
				     v, cg, file);
		break;
	case EACCES:
	case EPERM:
		n = snprintf(buf, len,
			     "permission denied writing '%s' to %s/%s: run "
			     "numaplace as root (CAP_SYS_ADMIN in the initial "
			     "namespaces) or delegate %s to its user",
			     v, cg, file, cg);
		break;
	case EROFS:
		n = snprintf(buf, len,
			     "cannot write '%s' to %s/%s: the cgroup filesystem is "
			     "mounted read-only (inside a container?); run "
			     "numaplace on the host or mount cgroup2 read-write",
			     v, cg, file);
		break;
	case E2BIG:
		n = snprintf(buf, len,
			     "cannot write '%s' to %s/%s: longer than one page, "
			     "the most the kernel takes in one write",
			     v, cg, file);
		break;
	case ENODEV:
		n = snprintf(buf, len,
			     "cannot write '%s' to %s/%s: the cgroup was removed",
			     v, cg, file);
		break;
	default:
		n = snprintf(buf, len, "cannot write '%s' to %s/%s: %s", v, cg,
			     file, cg_strerror(e, eb, sizeof(eb)));
		break;
	}
	return out(buf, len, n);
}
