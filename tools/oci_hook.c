// SPDX-License-Identifier: Apache-2.0
/*
 * The OCI hook's admission (tools/oci_hook.h), whichever front end read
 * the container: the trust rules checked first (oci_hook.policy against
 * the container's resources), numaplaced asked over its control socket,
 * the cgroup's effective cpuset polled until it is the one granted (read
 * only: the hook writes no cgroup file), the failure policy applied and
 * logged, and the release.
 */
#include "oci_hook.h"
#include "cli.h"
#include "basic/fileio.h"
#include "numaplace/cgroup.h"
#include "numaplace/cleanup.h"
#include "numaplace/error.h"
#include "numaplace/ctl.h"
#include "numaplace/oci_policy.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define POLL_MS 2

static long elapsed_ms(const struct hook *h)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - h->t0.tv_sec) * 1000 +
	       (t.tv_nsec - h->t0.tv_nsec) / 1000000;
}

static int remaining_ms(const struct hook *h)
{
	long r = (long)h->cfg.oci_hook.timeout_ms - elapsed_ms(h);
	return r > 0 ? (int)r : 0;
}

/* One line per failure, best effort ("a": appended, never truncated). */
static void hook_log(const struct hook *h, const char *what)
{
	const char *path = h->cfg.oci_hook.log_file;
	char when[32];
	time_t now = time(NULL);
	struct tm tm;
	FILE *f;

	if (!path[0])
		return;
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ",
		 gmtime_r(&now, &tm));
	if (!(f = fopen(path, "ae"))) {
		fprintf(stderr, "%s: %s: cannot log to %s: %s\n", h->cmd,
			h->st.id, path, strerror(errno));
		return;
	}
	fprintf(f, "%s %s %s %s\n", when, h->stage, h->st.id, what);
	if (fclose(f))
		fprintf(stderr, "%s: %s: cannot log to %s: %s\n", h->cmd,
			h->st.id, path, strerror(errno));
}

/* A failure under the container's mode: the exit code. */
static int hook_fail(struct hook *h, const char *reason, const char *open_note)
{
	char line[2048], why[1800];

	snprintf(why, sizeof(why), "%s", reason);
	if (h->rename)
		h->rename(why, sizeof(why));
	snprintf(line, sizeof(line), "%s: %s", np_oci_failure_name(h->mode),
		 why);
	hook_log(h, line);
	if (h->mode == NP_OCI_FAIL_CLOSED)
		snprintf(h->reason, sizeof(h->reason), "fail-closed: %s", why);
	else
		snprintf(h->reason, sizeof(h->reason), "fail-open: %s; %s", why,
			 open_note ? open_note
				   : "the container runs in the shared pool");
	fprintf(stderr, "%s: %s: %s\n", h->cmd, h->st.id, h->reason);
	return h->mode == NP_OCI_FAIL_CLOSED ? NP_EXIT_FAIL : NP_EXIT_OK;
}

int hook_bad(struct hook *h, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(h->reason, sizeof(h->reason), fmt, ap);
	va_end(ap);
	if (h->rename)
		h->rename(h->reason, sizeof(h->reason));
	fprintf(stderr, "%s: %s%s%s\n", h->cmd, h->st.id,
		h->st.id[0] ? ": " : "", h->reason);
	return NP_EXIT_USAGE;
}

/* --config: an explicit file must load; the default may be missing. */
int hook_load_config(struct hook *h, const char *path, bool given)
{
	char err[1024];

	np_config_defaults(&h->cfg);
	if (!given && access(path, F_OK) && errno == ENOENT)
		return 0;
	if (!given && access(path, R_OK))
		return 0; /* not root: a hook runs as root; defaults */
	if (np_config_load(&h->cfg, path, err, sizeof(err))) {
		snprintf(h->reason, sizeof(h->reason), "%s", err);
		fprintf(stderr, "%s: %s\n", h->cmd, err);
		return NP_EXIT_USAGE;
	}
	return 0;
}

int hook_release(struct hook *h)
{
	_cleanup_json_ json_t *req = NULL, *resp = NULL;
	char err[1024];

	req = json_pack("{s:s,s:s}", "op", "release", "container", h->st.id);
	if (!req)
		return NP_EXIT_FAIL;
	if (np_ctl_call_timeout(h->sock, req, &resp, err, sizeof(err),
				remaining_ms(h))) {
		fprintf(stderr,
			"%s: %s: %s: %s; numaplaced releases the container "
			"when its cgroup is gone\n",
			h->cmd, h->st.id, h->stage, err);
		return NP_EXIT_OK;
	}
	if (np_ctl_check(resp, err, sizeof(err)))
		fprintf(stderr, "%s: %s: %s: numaplaced: %s\n", h->cmd,
			h->st.id, h->stage, err);
	return NP_EXIT_OK;
}

/* The pid's cgroup, checked against cgroupsPath and to exist: 0, or -1
 * with the reason in err. */
static int find_cgroup(struct hook *h, const struct np_oci_cgroup *exp,
		       char *err, size_t errlen)
{
	_cleanup_free_ char *text = NULL;
	char p[64], e2[512], dir[2 * NP_PATH_MAX];
	struct stat sb;
	size_t len;
	int r;

	snprintf(p, sizeof(p), "/proc/%d/cgroup", h->st.pid);
	if ((r = np_read_at(AT_FDCWD, p, 0, 64 * 1024, &text, &len)) < 0)
		return np_errno(err, errlen, -1, "pid %d: reading %s",
				h->st.pid, p);
	if (np_oci_proc_cgroup(text, len, h->cgroup, sizeof(h->cgroup), e2,
			       sizeof(e2)))
		return np_errf(err, errlen, -1, "pid %d: %s: %s", h->st.pid, p,
			       e2);
	if (exp && np_oci_cgroup_holds(exp, h->cgroup, e2, sizeof(e2)))
		return np_errf(err, errlen, -1, "pid %d: %s", h->st.pid, e2);
	if (h->cfg.cgroup_root[0])
		snprintf(h->root, sizeof(h->root), "%s", h->cfg.cgroup_root);
	else if ((r = np_cgroup2_mount_find(NULL, h->root, sizeof(h->root))))
		return np_errno(err, errlen, -1,
				"finding the cgroup2 mount in "
				"/proc/self/mountinfo");
	snprintf(dir, sizeof(dir), "%s%s", h->root, h->cgroup);
	if (stat(dir, &sb) || !S_ISDIR(sb.st_mode))
		return np_errf(err, errlen, -1,
			       "the container's cgroup %s does not exist", dir);
	return 0;
}

/* Polled until the decision's cpuset is the cgroup's effective one. */
static int wait_in_force(struct hook *h, const char *want, char *err,
			 size_t errlen)
{
	char p[2 * NP_PATH_MAX + 32], e2[2048] = "";
	struct timespec nap = {0, POLL_MS * 1000000L};

	/* a fake tree (tests) has no kernel computing the effective set */
	snprintf(p, sizeof(p), "%s%s/%s", h->root, h->cgroup,
		 h->cfg.fake_cgroup_root ? "cpuset.cpus"
					 : "cpuset.cpus.effective");
	for (;;) {
		_cleanup_free_ char *text = NULL;
		bool equal = false;
		int r = np_read_at(AT_FDCWD, p, 0, 64 * 1024, &text, NULL);

		if (r < 0)
			np_errno(e2, sizeof(e2), r, "reading %s", p);
		else if (!np_oci_cpuset_in_force(text, want, &equal, e2,
						 sizeof(e2)) && equal)
			return 0;
		else if (!e2[0])
			snprintf(e2, sizeof(e2), "%.1100s is \"%.*s\"", p,
				 (int)(strcspn(text, "\n") & 0xff), text);
		if (remaining_ms(h) <= 0)
			return np_errf(err, errlen, -1,
				       "cpuset %s not in force after %u ms: %s",
				       want, h->cfg.oci_hook.timeout_ms, e2);
		e2[0] = '\0';
		nanosleep(&nap, NULL);
	}
}

/* After a rejection in fail-open: the same container as LS, once. */
static void admit_shared(struct hook *h, const json_t *spec, char *note,
			 size_t len)
{
	_cleanup_json_ json_t *req = NULL, *resp = NULL;
	struct np_oci_decision d;
	char err[1024];

	req = json_pack("{s:s,s:o}", "op", "admit", "spec",
			np_oci_shared_spec(spec));
	if (!req) {
		snprintf(note, len, "out of memory");
		return;
	}
	if (np_ctl_call_timeout(h->sock, req, &resp, err, sizeof(err),
				remaining_ms(h) ? remaining_ms(h) : 1) ||
	    np_ctl_check(resp, err, sizeof(err)) ||
	    np_oci_decision_parse(resp, &d, err, sizeof(err)))
		snprintf(note, len,
			 "the container runs in the shared pool (admitting it "
			 "as LS failed too: %s)", err);
	else if (!d.admitted)
		snprintf(note, len,
			 "the container runs in the shared pool (as LS it was "
			 "rejected too: %s)", d.reason);
	else
		snprintf(note, len,
			 "the container runs in the shared pool, admitted as LS "
			 "(cpuset %s)", d.cpuset);
}

static int admit(struct hook *h, const struct np_oci_request *rq)
{
	_cleanup_json_ json_t *req = NULL, *resp = NULL;
	struct np_oci_decision d;
	char err[1024], why[1400], note[1400] = "";

	req = json_pack("{s:s,s:O}", "op", "admit", "spec", rq->spec);
	if (!req)
		return hook_fail(h, "out of memory", NULL);
	if (np_ctl_call_timeout(h->sock, req, &resp, err, sizeof(err),
				remaining_ms(h) ? remaining_ms(h) : 1)) {
		snprintf(why, sizeof(why), "numaplaced: %s", err);
		return hook_fail(h, why, NULL);
	}
	if (np_ctl_check(resp, err, sizeof(err)) ||
	    np_oci_decision_parse(resp, &d, err, sizeof(err))) {
		snprintf(why, sizeof(why), "numaplaced refused %s: %s",
			 rq->name, err);
		return hook_fail(h, why, NULL);
	}
	if (!d.admitted) {
		snprintf(why, sizeof(why), "%s rejected (resource %s): %s",
			 rq->name, d.resource[0] ? d.resource : "?", d.reason);
		if (h->mode == NP_OCI_FAIL_OPEN)
			admit_shared(h, rq->spec, note, sizeof(note));
		return hook_fail(h, why, note[0] ? note : NULL);
	}
	if (wait_in_force(h, d.cpuset, err, sizeof(err)) == 0) {
		snprintf(h->cpuset, sizeof(h->cpuset), "%s", d.cpuset);
		snprintf(h->workload, sizeof(h->workload), "%s", rq->name);
		return NP_EXIT_OK;
	}
	snprintf(why, sizeof(why), "%s admitted but %s", rq->name, err);
	if (h->mode == NP_OCI_FAIL_CLOSED) {
		/* the start is aborted: give the CPUs back now (numaplaced
		 * would when the cgroup goes) */
		json_t *rel = json_pack("{s:s,s:s}", "op", "release",
					"container", h->st.id), *r2 = NULL;
		if (rel)
			np_ctl_call_timeout(h->sock, rel, &r2, err, sizeof(err),
					    500);
		json_decref(rel);
		json_decref(r2);
	}
	return hook_fail(h, why, "numaplaced still places it");
}

/* oci_hook.policy and the container's resources, checked before
 * numaplaced is asked (numaplaced checks them again, with the CPUs each
 * rule's containers hold: this is the early, friendlier refusal). 0, or
 * -EPERM with why. */
static int policy_check(const struct hook *h, const struct np_oci_request *rq,
			char *why, size_t len)
{
	const struct np_oci_policy *p = &h->cfg.oci_hook.policy;
	struct np_workload_req w = {0};
	struct np_oci_bounds b;
	int r;

	if (!(r = np_workload_req_from_json(&w, rq->spec, "spec", why, len))) {
		np_oci_bounds_of(&b, &w, h->res_label);
		r = np_oci_policy_check(
		    p, np_oci_policy_match(p, w.container_ns, h->cgroup), &w,
		    &b, h->cfg.policy.cpu_policy == NP_CPU_POLICY_STATIC, 0,
		    why, len);
	}
	np_workload_req_free(&w);
	return r;
}

/* Refused by the policy before numaplaced was asked: as a rejection (in
 * fail-open the container is admitted on what its resources give). */
static int refused(struct hook *h, const struct np_oci_request *rq,
		   const char *reason)
{
	char why[1400], note[1400] = "";

	snprintf(why, sizeof(why), "%s rejected (resource policy): %s",
		 rq->name, reason);
	if (h->mode == NP_OCI_FAIL_OPEN)
		admit_shared(h, rq->spec, note, sizeof(note));
	return hook_fail(h, why, note[0] ? note : NULL);
}

/* numaplace.io/isolation "partition" under a rule that does not allow it:
 * refused by the rule before the spec is made (a container workload can
 * never be a partition, which the spec says, but the rule says it first
 * and the container's on-failure applies). 0, or -EPERM with why. */
static int partition_check(const struct hook *h, const char *cgroup,
			   char *why, size_t len)
{
	const char *iso =
	    np_oci_annotation(&h->st, &h->oc, "numaplace.io/isolation");
	const struct np_oci_policy *p = &h->cfg.oci_hook.policy;
	char rn[320];
	int i;

	if (!iso || strcmp(iso, "partition"))
		return 0;
	i = np_oci_policy_match(p, np_oci_namespace(&h->st, &h->oc), cgroup);
	if (np_oci_policy_rule(p, i)->partition)
		return 0;
	np_oci_rule_name(p, i, rn, sizeof(rn));
	return np_errf(why, len, -EPERM,
		       "%s rejected (resource policy): %s: isolation "
		       "\"partition\" is not allowed for this container "
		       "(numaplace.io/isolation)",
		       h->st.id, rn);
}

int hook_place(struct hook *h, const struct np_oci_cgroup *exp)
{
	struct np_oci_request rq = {0};
	char err[1024];
	int r, rc;

	if (partition_check(h, exp ? exp->path : NULL, err, sizeof(err)))
		return hook_fail(h, err, NULL);
	if ((r = np_oci_request_build(&rq, &h->st, &h->oc,
				      exp ? exp->path : NULL, err,
				      sizeof(err)))) {
		np_oci_request_free(&rq);
		return r == -EDOM && h->pod_wide ? hook_fail(h, err, NULL)
						 : hook_bad(h, "%s", err);
	}
	if (find_cgroup(h, exp, err, sizeof(err))) {
		rc = hook_fail(h, err, NULL);
	} else if (np_oci_request_set_cgroup(&rq, h->cgroup)) {
		rc = hook_fail(h, "out of memory", NULL);
	} else if ((r = policy_check(h, &rq, err, sizeof(err))) == -EPERM) {
		rc = refused(h, &rq, err);
	} else if (r) {
		rc = hook_bad(h, "%s", err);
	} else {
		rc = admit(h, &rq);
	}
	np_oci_request_free(&rq);
	return rc;
}
