// SPDX-License-Identifier: Apache-2.0
/*
 * Decide: who may ask for what (numaplace/oci_policy.h), as numaplaced
 * applies it to every container workload it is asked to admit or resize
 * through the socket, whatever sent it: the hook's own check is only an
 * early refusal, this one is the one that holds. The request is bounded by
 * the limits it states (what the runtime was given) narrowed by those its
 * cgroup's files enforce (cpu.max, memory.max, hugetlb.<size>.max of the
 * container's cgroup and every cgroup above it), and the cap of a rule
 * counts the exclusive CPUs its containers hold now. A spec file's
 * workload is the node's own and is not checked.
 */
#include "daemon/daemon_internal.h"
#include "basic/fileio.h"
#include "numaplace/cleanup.h"
#include "numaplace/oci_policy.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A cgroup file's first line, from the hierarchy root's directory. */
static int read_line(int rootfd, const char *rel, const char *file,
		     char *buf, size_t len)
{
	_cleanup_free_ char *text = NULL;
	char path[2 * NP_PATH_MAX + 64];
	int r;

	snprintf(path, sizeof(path), "%s%s%s", rel, *rel ? "/" : "", file);
	if ((r = np_read_at(rootfd, path, NP_READ_NOFOLLOW | NP_READ_REGULAR,
			    4096, &text, NULL)) < 0)
		return r;
	snprintf(buf, len, "%.*s", (int)strcspn(text, "\n"), text);
	return 0;
}

/* "QUOTA PERIOD" of cpu.max in millicores (rounded up), -1 for "max". */
static int64_t cpu_max_milli(const char *s)
{
	uint64_t q, p;

	if (sscanf(s, "%" SCNu64 " %" SCNu64, &q, &p) != 2 || !p ||
	    q > (uint64_t)NP_MAX_CPUS * 1000000)
		return -1;
	return (int64_t)((q * 1000 + p - 1) / p);
}

static int64_t bytes_max(const char *s)
{
	uint64_t b;

	if (!strcmp(s, "max") || sscanf(s, "%" SCNu64, &b) != 1 ||
	    b > INT64_MAX)
		return -1;
	return (int64_t)b;
}

/* The kernel's name of a hugepage size: "2MB", "1GB", "64KB". */
static void huge_name(uint64_t kb, char *buf, size_t len)
{
	if (kb % (1024 * 1024) == 0)
		snprintf(buf, len, "%" PRIu64 "GB", kb / (1024 * 1024));
	else if (kb % 1024 == 0)
		snprintf(buf, len, "%" PRIu64 "MB", kb / 1024);
	else
		snprintf(buf, len, "%" PRIu64 "KB", kb);
}

/* One cgroup's limits (rel: from the root, no leading '/') into k. */
static void cgroup_limits(int rootfd, const char *rel,
			  const struct np_workload_req *w,
			  struct np_oci_bounds *k)
{
	struct np_oci_bounds one;
	char line[128], file[64];

	memset(&one, 0, sizeof(one));
	one.cpu_limit = one.cpu_request = one.memory_limit = -1;
	if (!read_line(rootfd, rel, "cpu.max", line, sizeof(line))) {
		one.cpu_limit = cpu_max_milli(line);
		snprintf(one.cpu_from, sizeof(one.cpu_from),
			 "cpu.max of /%.120s: %.24s", rel, line);
	}
	if (!read_line(rootfd, rel, "memory.max", line, sizeof(line))) {
		one.memory_limit = bytes_max(line);
		snprintf(one.memory_from, sizeof(one.memory_from),
			 "memory.max of /%.140s", rel);
	}
	for (int c = 0; c < w->ncontainers; c++)
		for (int h = 0; h < w->c[c].nhuge; h++) {
			char sz[32];
			huge_name(w->c[c].huge_size_kb[h], sz, sizeof(sz));
			snprintf(file, sizeof(file), "hugetlb.%s.max", sz);
			if (one.nhuge == NP_MAX_HUGEPAGE_SIZES ||
			    read_line(rootfd, rel, file, line, sizeof(line)))
				continue;
			one.huge_size_kb[one.nhuge] = w->c[c].huge_size_kb[h];
			one.huge_limit[one.nhuge++] = bytes_max(line);
			snprintf(one.huge_from, sizeof(one.huge_from),
				 "%.30s of /%.120s", file, rel);
		}
	np_oci_bounds_narrow(k, &one);
}

/* What bounds w: its stated limits narrowed by those the kernel enforces
 * on its cgroup and every cgroup above it (a missing file: no limit
 * there, as on a fake tree or without the controller). */
static void container_bounds(struct np_daemon *d,
			     const struct np_workload_req *w,
			     struct np_oci_bounds *b)
{
	int rootfd = d->enf ? d->enf->ops->root_fd(d->enf) : -1;
	char rel[NP_PATH_MAX], *slash;

	np_oci_bounds_of(b, w, "container.limits");
	if (rootfd < 0)
		return;
	snprintf(rel, sizeof(rel), "%s", w->cgroup + (w->cgroup[0] == '/'));
	while (rel[0]) {
		cgroup_limits(rootfd, rel, w, b);
		if (!(slash = strrchr(rel, '/')))
			break;
		*slash = '\0';
	}
}

/* Admitted from a spec file (the node's own): not under the policy. */
static bool from_spec_file(struct np_daemon *d, const char *name)
{
	struct np_wl_meta *m = np_daemon_meta_find(d, name);
	return m && strempty(m->spec_file)[0];
}

/* The exclusive CPUs held by the container workloads (not from a spec
 * file, not `skip`) that rule `rule` matches. */
static int held_by_rule(struct np_daemon *d, int rule, const char *skip)
{
	const struct np_oci_policy *p = &d->cfg.oci_hook.policy;
	int n = 0;

	for (int i = 0; i < d->st.nworkloads; i++) {
		const struct np_workload_alloc *a = d->st.w[i];
		np_cpuset cpus;
		if (!a->req.container_id || !strcmp(a->req.name, skip) ||
		    np_oci_policy_match(p, a->req.container_ns,
					a->req.cgroup) != rule ||
		    from_spec_file(d, a->req.name))
			continue;
		np_cpuset_zero(&cpus);
		for (int k = 0; k < a->ncontainers; k++)
			if (a->c[k].exclusive)
				np_cpuset_or(&cpus, &cpus, a->c[k].cpus);
		n += np_cpuset_count(&cpus);
	}
	return n;
}

int np_daemon_container_policy(struct np_daemon *d,
			       const struct np_workload_req *w, char *why,
			       size_t len)
{
	const struct np_oci_policy *p = &d->cfg.oci_hook.policy;
	struct np_oci_bounds b;
	int rule;

	if (!w->container_id)
		return 0;
	rule = np_oci_policy_match(p, w->container_ns, w->cgroup);
	container_bounds(d, w, &b);
	return np_oci_policy_check(p, rule, w, &b,
				   d->cfg.policy.cpu_policy ==
				       NP_CPU_POLICY_STATIC,
				   held_by_rule(d, rule, w->name), why, len);
}

int np_daemon_container_resize_check(struct np_daemon *d, int i,
				     const char *container, int cpus,
				     char *why, size_t len)
{
	const struct np_workload_alloc *a = d->st.w[i];
	struct np_workload_req w;
	int r, k;

	if (!a->req.container_id || from_spec_file(d, a->req.name))
		return 0;
	if ((r = np_workload_req_copy(&w, &a->req)))
		return r;
	for (k = 0; k < w.ncontainers; k++)
		if (container ? !strcmp(w.c[k].name, container)
			      : a->c[k].exclusive)
			break;
	if (k < w.ncontainers)
		w.c[k].cpu_milli = (int64_t)cpus * 1000;
	r = np_daemon_container_policy(d, &w, why, len);
	np_workload_req_free(&w);
	return r;
}

bool np_daemon_container_hostiso(struct np_daemon *d,
				 const struct np_workload_alloc *a)
{
	const struct np_oci_policy *p = &d->cfg.oci_hook.policy;

	if (!a->req.container_id || from_spec_file(d, a->req.name))
		return true;
	return np_oci_policy_rule(p, np_oci_policy_match(p, a->req.container_ns,
							 a->req.cgroup))
	    ->host_isolation;
}
