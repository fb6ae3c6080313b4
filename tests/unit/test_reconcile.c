// SPDX-License-Identifier: Apache-2.0
/*
 * The reconcile stage against a fake enforcer (tests/support): the exact
 * cgroup writes of admissions, releases, drift and host confinement, in
 * their order, and what the daemon does when the enforcer fails. No
 * cgroupfs is touched: everything the daemon applies goes through the
 * enforcer interface.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon/daemon_internal.h"
#include "fake_daemon.h"
#include "numaplace/daemon.h"
#include "numaplace/state_file.h"

struct fx {
	struct fake_daemon fd; /* dir, d, f */
};

/* A daemon on the 2-node VM topology (CPUs 0-7, 0/4 1/5 2/6 3/7 are
 * siblings, reserved 0,4) with system.slice confined to the shared pool. */
static int setup(void **state)
{
	struct fx *x = fake_daemon_new(sizeof(*x), "reconcile");
	*state = x;
	return 0;
}

static void assert_log(struct fx *x, const char *want)
{
	if (strcmp(fake_log(x->fd.f), want))
		fail_msg("enforcer calls:\n%s\nwanted:\n%s", fake_log(x->fd.f),
			 want);
}

/* A shared workload: created, mems before cpus, on the shared pool (which
 * includes the reserved CPUs, as the kubelet's does). */
static void test_admit_shared(void **state)
{
	struct fx *x = *state;

	fake_daemon_admit(&x->fd, FAKE_LS_API);
	assert_log(x, "mkdir api\n"
		      "write api cpuset.mems=0-1 (mems widen)\n"
		      "write api cpuset.cpus=0-7 (widen)\n");
	assert_int_equal(x->fd.d.n.admitted, 1);
	assert_int_equal(x->fd.d.last_cycle.writes, 2);
}

/*
 * An exclusive grant: the host slice and the shared workload give its
 * CPUs up before the exclusive cgroup gets them (no CPU is ever in an
 * exclusive and a shared set at once), then nothing while nothing changes.
 */
static void test_exclusive_order(void **state)
{
	struct fx *x = *state;
	int host, yield, grant;

	fake_daemon_admit(&x->fd, FAKE_LS_API);
	fake_log_clear(x->fd.f);
	fake_daemon_admit(&x->fd, FAKE_LSE_WEB);
	assert_log(x, "mkdir web\n"
		      "set host system.slice cpus=0,2-4,6-7\n"
		      "write web cpuset.mems=0 (mems widen)\n"
		      "write api cpuset.cpus=0,2-4,6-7 (yield)\n"
		      "write web cpuset.cpus=1,5 (widen)\n");
	host = fake_log_find(x->fd.f, "set host system.slice");
	yield = fake_log_find(x->fd.f, "write api cpuset.cpus");
	grant = fake_log_find(x->fd.f, "write web cpuset.cpus");
	assert_true(host < grant && yield < grant);
	fake_log_clear(x->fd.f);
	assert_int_equal(np_daemon_reconcile(&x->fd.d), 0);
	assert_log(x, "");
	assert_int_equal(x->fd.d.last_cycle.writes, 0);
	assert_int_equal(x->fd.d.n.drift_repaired, 0);
}

/* A hand-written cpuset is drift: counted and written back. */
static void test_drift(void **state)
{
	struct fx *x = *state;
	struct fake_cgroup *web;

	fake_daemon_admit(&x->fd, FAKE_LSE_WEB);
	web = fake_cg(x->fd.f, 'm', "web", false);
	assert_non_null(web);
	np_cpuset_set(&web->cpus, 6);
	fake_log_clear(x->fd.f);
	assert_int_equal(np_daemon_reconcile(&x->fd.d), 0);
	assert_log(x, "write web cpuset.cpus=1,5 (release)\n");
	assert_int_equal(x->fd.d.n.drift_repaired, 1);
}

/* An LSR workload beside a BE one: the BE pool keeps the LSR's CPUs
 * (Koordinator lets best effort run there), the LS pool gives them up. A
 * cycle that writes both (here: both drifted, as after a hotplug) was
 * refused whole before ("target sets overlap"), every cycle after it. */
static void test_lsr_lends_to_be(void **state)
{
	struct fx *x = *state;
	struct fake_cgroup *be, *lsr, *api;
	np_cpuset want_be, want_lsr;

	fake_daemon_admit(&x->fd, FAKE_LS_API);
	fake_daemon_admit(&x->fd,
			  "{\"name\": \"batch\", \"cgroup\": \"batch\", "
			  "\"qos\": \"BE\", \"containers\": [{\"name\": "
			  "\"main\"}]}");
	fake_daemon_admit(&x->fd,
			  "{\"name\": \"db\", \"cgroup\": \"db\", "
			  "\"qos\": \"LSR\", \"containers\": [{\"name\": "
			  "\"main\", \"cpu\": \"2\"}]}");
	assert_non_null(be = fake_cg(x->fd.f, 'm', "batch", false));
	assert_non_null(lsr = fake_cg(x->fd.f, 'm', "db", false));
	assert_non_null(api = fake_cg(x->fd.f, 'm', "api", false));
	assert_int_equal(np_cpuset_count(&lsr->cpus), 2);
	/* the BE cgroup holds the LSR's CPUs, the LS one none of them */
	assert_true(np_cpuset_subset(&lsr->cpus, &be->cpus));
	assert_false(np_cpuset_intersects(&lsr->cpus, &api->cpus));
	want_be = be->cpus;
	want_lsr = lsr->cpus;
	/* both drifted: one plan writes them back */
	np_cpuset_parse(&be->cpus, "0-7", NULL, 0);
	np_cpuset_parse(&lsr->cpus, "0-7", NULL, 0);
	assert_int_equal(np_daemon_reconcile(&x->fd.d), 0);
	assert_int_equal(x->fd.d.n.write_errors, 0);
	assert_true(np_cpuset_equal(&be->cpus, &want_be));
	assert_true(np_cpuset_equal(&lsr->cpus, &want_lsr));
	/* and a cycle after it has nothing to write */
	fake_log_clear(x->fd.f);
	assert_int_equal(np_daemon_reconcile(&x->fd.d), 0);
	assert_log(x, "");
}

/* A release: the cgroup goes, its CPUs return to the shared cgroups. */
static void test_release(void **state)
{
	struct fx *x = *state;

	fake_daemon_admit(&x->fd, FAKE_LS_API);
	fake_daemon_admit(&x->fd, FAKE_LSE_WEB);
	fake_log_clear(x->fd.f);
	json_decref(fake_daemon_ok(&x->fd, "{\"op\": \"release\", \"name\": \"web\"}"));
	assert_log(x, "rmdir web\n"
		      "write api cpuset.cpus=0-7 (widen)\n"
		      "set host system.slice cpus=0-7\n");
	assert_int_equal(x->fd.d.n.released, 1);
}

/* A busy cgroup stays, on the shared pool, until it is empty. */
static void test_release_busy(void **state)
{
	struct fx *x = *state;

	fake_daemon_admit(&x->fd, FAKE_LSE_WEB);
	fake_cg(x->fd.f, 'm', "web", false)->busy = true;
	fake_log_clear(x->fd.f);
	json_decref(fake_daemon_ok(&x->fd, "{\"op\": \"release\", \"name\": \"web\"}"));
	assert_log(x, "write web cpuset.mems=0-1 (mems widen)\n"
		      "write web cpuset.cpus=0-7 (widen)\n"
		      "set host system.slice cpus=0-7\n");
	fake_cg(x->fd.f, 'm', "web", false)->busy = false;
	fake_log_clear(x->fd.f);
	assert_int_equal(np_daemon_reconcile(&x->fd.d), 0);
	assert_log(x, "rmdir web\n");
}

/* A failed apply is counted and retried; nothing is taken as written. */
static void test_apply_fails(void **state)
{
	struct fx *x = *state;

	x->fd.f->fail_apply = -EIO;
	fake_daemon_admit(&x->fd, FAKE_LSE_WEB);
	assert_int_equal(x->fd.d.n.write_errors, 1);
	assert_null(strstr(fake_log(x->fd.f), "write web"));
	fake_log_clear(x->fd.f);
	assert_int_equal(np_daemon_reconcile(&x->fd.d), 0);
	assert_non_null(strstr(fake_log(x->fd.f), "write web cpuset.cpus=1,5"));
	assert_int_equal(x->fd.d.n.drift_repaired, 0);
}

/* A cgroup removed by hand releases its workload. */
static void test_vanished(void **state)
{
	struct fx *x = *state;

	fake_daemon_admit(&x->fd, FAKE_LSE_WEB);
	fake_cg(x->fd.f, 'm', "web", false)->exists = false;
	fake_log_clear(x->fd.f);
	assert_int_equal(np_daemon_reconcile(&x->fd.d), 0);
	assert_int_equal(x->fd.d.n.vanished, 1);
	assert_int_equal(x->fd.d.st.nworkloads, 0);
	assert_log(x, "set host system.slice cpus=0-7\n");
}

/* Several cgroups vanished at once: released with one save of the state
 * (one per workload made 3,000 vanished cgroups take a minute). */
static void test_vanished_many(void **state)
{
	struct fx *x = *state;
	uint64_t saves;

	fake_daemon_admit(&x->fd, FAKE_LSE_WEB);
	fake_daemon_admit(&x->fd, FAKE_LS_API);
	fake_daemon_admit(&x->fd, "{\"name\": \"db\", \"cgroup\": \"db\", \"qos\": \"LS\", "
		 "\"containers\": [{\"name\": \"main\", \"cpu\": \"1\"}]}");
	assert_int_equal(x->fd.d.st.nworkloads, 3);
	fake_cg(x->fd.f, 'm', "web", false)->exists = false;
	fake_cg(x->fd.f, 'm', "api", false)->exists = false;
	fake_cg(x->fd.f, 'm', "db", false)->exists = false;
	saves = x->fd.d.n.state_saves;
	assert_int_equal(np_daemon_reconcile(&x->fd.d), 0);
	assert_int_equal(x->fd.d.n.vanished, 3);
	assert_int_equal(x->fd.d.st.nworkloads, 0);
	assert_int_equal(x->fd.d.n.state_saves - saves, 1);
}

/* The rejection of a request (the answer's "reason"). */
static char *rejected(struct fx *x, const char *spec)
{
	static char reason[512];
	char buf[1024];
	json_t *resp;

	snprintf(buf, sizeof(buf), "{\"op\": \"admit\", \"spec\": %s}", spec);
	resp = fake_daemon_ask(&x->fd, buf);
	char *dump = json_dumps(resp, 0);
	snprintf(reason, sizeof(reason), "%s", dump ? dump : "");
	free(dump);
	json_decref(resp);
	return reason;
}

static struct np_wl_meta *meta(struct fx *x, const char *name)
{
	struct np_wl_meta *m = np_daemon_meta_find(&x->fd.d, name);

	if (!m)
		fail_msg("no workload %s", name);
	return m;
}

#define LSE_SVC                                                                \
	"{\"name\": \"svc\", \"unit\": \"busy.service\", \"qos\": \"LSE\", "   \
	"\"containers\": [{\"name\": \"main\", \"cpu\": \"2\"}]}"

/* An enforcer without units (cgroupfs) refuses a unit workload, and says
 * why; nothing is written. */
static void test_unit_needs_systemd(void **state)
{
	struct fx *x = *state;
	char *r;

	fake_log_clear(x->fd.f);
	r = rejected(x, LSE_SVC);
	if (!strstr(r, "need the systemd cgroup driver (this daemon runs fake)"))
		fail_msg("answer: %s", r);
	assert_log(x, "");
	assert_int_equal(x->fd.d.st.nworkloads, 0);
}

/* A spec naming another workload's cgroup, or one above or below it, is
 * refused with the owner named, and nothing is written (issue 16: it took
 * the cgroup over and moved the other workload's CPUs). */
static void test_cgroup_taken(void **state)
{
	struct fx *x = *state;
	char *r;

	fake_daemon_admit(&x->fd, FAKE_LSE_WEB);
	fake_log_clear(x->fd.f);
	r = rejected(x, "{\"name\": \"x\", \"cgroup\": \"web\", \"qos\": "
			"\"LSE\", \"containers\": [{\"name\": \"m\", \"cpu\": "
			"\"2\"}]}");
	if (!strstr(r, "cgroup web is workload web's already"))
		fail_msg("answer: %s", r);
	r = rejected(x, "{\"name\": \"y\", \"cgroup\": \"web/in\", "
			"\"qos\": \"LS\", \"containers\": [{\"name\": \"m\"}]}");
	if (!strstr(r, "cgroup web/in is inside workload web's cgroup web"))
		fail_msg("answer: %s", r);
	r = rejected(x, "{\"name\": \"web2\", \"cgroup\": \"webx\", "
			"\"qos\": \"LS\", \"containers\": [{\"name\": \"m\"}]}");
	if (strstr(r, "rejected") || strstr(r, "\"admitted\": false"))
		fail_msg("webx is not web's: %s", r);
	assert_int_equal(x->fd.d.st.nworkloads, 2);
	assert_int_equal(fake_log_find(x->fd.f, "write web "), -1);
}

/* Units enabled, busy.service running on every CPU, and svc (LSE on it)
 * admitted. */
static void svc_admitted(struct fx *x)
{
	struct fake_cgroup *u;

	fake_enable_units(x->fd.f);
	u = fake_cg(x->fd.f, 'u', "busy.service", true);
	u->exists = true;
	np_cpuset_parse(&u->cpus, "0-7", NULL, 0);
	fake_daemon_admit(&x->fd, LSE_SVC);
}

/* A partition takes every unreserved CPU into the managed parent: unit
 * workloads (outside it) and partitions are not admitted together, in
 * either order. */
static void test_partition_unit_clash(void **state)
{
	struct fx *x = *state;
	char *r;

	svc_admitted(x);
	r = rejected(x, "{\"name\": \"p\", \"cgroup\": \"p\", \"qos\": "
			"\"LSE\", \"isolation\": \"partition\", \"containers\": "
			"[{\"name\": \"m\", \"cpu\": \"2\"}]}");
	if (!strstr(r, "isolation \\\"partition\\\" is refused while "
		       "workload svc is a unit"))
		fail_msg("answer: %s", r);
	json_decref(fake_daemon_ok(&x->fd, "{\"op\": \"release\", \"name\": \"svc\"}"));
	fake_daemon_admit(&x->fd, "{\"name\": \"p\", \"cgroup\": \"p\", \"qos\": \"LSE\", "
		 "\"isolation\": \"partition\", \"containers\": [{\"name\": "
		 "\"m\", \"cpu\": \"2\"}]}");
	assert_int_equal(x->fd.d.st.nworkloads, 1);
	r = rejected(x, LSE_SVC);
	if (!strstr(r, "a unit workload is refused while workload p is a "
		       "partition"))
		fail_msg("answer: %s", r);
	assert_int_equal(x->fd.d.st.nworkloads, 1);
}

/* An enforcer that cannot make partitions as it was opened (systemd with
 * the scope below a slice) refuses partition workloads with its reason,
 * and calls nothing. */
static void test_partition_refused_by_enforcer(void **state)
{
	struct fx *x = *state;
	char *r;

	x->fd.f->e.no_partitions = "needs \"cgroup_parent\": \"-.slice\"";
	fake_log_clear(x->fd.f);
	r = rejected(x, "{\"name\": \"p\", \"cgroup\": \"p\", \"qos\": "
			"\"LSE\", \"isolation\": \"partition\", \"containers\": "
			"[{\"name\": \"m\", \"cpu\": \"2\"}]}");
	if (!strstr(r, "needs \\\"cgroup_parent\\\": \\\"-.slice\\\""))
		fail_msg("answer: %s", r);
	assert_log(x, "");
	assert_int_equal(x->fd.d.st.nworkloads, 0);
	x->fd.f->e.no_partitions = NULL;
}

/*
 * A unit workload: the host slice yields before the unit gets its CPUs (a
 * unit property, no cgroup of numaplace's), nothing while nothing
 * changes, a hand change repaired through the enforcer, released units
 * get theirs back; a second workload cannot take the same unit.
 */
static void test_unit_workload(void **state)
{
	struct fx *x = *state;
	struct fake_cgroup *u;
	char *r;

	fake_enable_units(x->fd.f);
	u = fake_cg(x->fd.f, 'u', "busy.service", true);
	u->exists = true;
	np_cpuset_parse(&u->cpus, "0-7", NULL, 0);
	fake_daemon_admit(&x->fd, LSE_SVC);
	assert_log(x, "set host system.slice cpus=0,2-4,6-7\n"
		      "set-unit busy.service cpus=1,5 mems=0\n");
	fake_log_clear(x->fd.f);
	assert_int_equal(np_daemon_reconcile(&x->fd.d), 0);
	assert_log(x, "");
	np_cpuset_set(&u->cpus, 2);
	assert_int_equal(np_daemon_reconcile(&x->fd.d), 0);
	assert_log(x, "set-unit busy.service cpus=1,5 mems=0\n");
	assert_int_equal(x->fd.d.n.drift_repaired, 1);
	r = rejected(x, "{\"name\": \"two\", \"unit\": \"busy.service\", "
			"\"qos\": \"LS\", \"containers\": [{\"name\": \"m\", "
			"\"cpu\": \"1\"}]}");
	if (!strstr(r, "unit busy.service is workload svc's already"))
		fail_msg("answer: %s", r);
	fake_log_clear(x->fd.f);
	json_decref(fake_daemon_ok(&x->fd, "{\"op\": \"release\", \"name\": \"svc\"}"));
	assert_int_equal(fake_log_find(x->fd.f, "release-unit busy.service"), 0);
	/* numaplace's own units are no workloads */
	r = rejected(x, "{\"name\": \"h\", \"unit\": \"system.slice\", "
			"\"qos\": \"LSE\", \"containers\": [{\"name\": \"m\", "
			"\"cpu\": \"1\"}]}");
	if (!strstr(r, "unit system.slice is in the path of system.slice: "
		       "numaplace manages it itself"))
		fail_msg("answer: %s", r);
	r = rejected(x, "{\"name\": \"h\", \"unit\": \"-.slice\", "
			"\"qos\": \"LS\", \"containers\": [{\"name\": \"m\", "
			"\"cpu\": \"1\"}]}");
	if (!strstr(r, "unit -.slice is the root slice"))
		fail_msg("answer: %s", r);
	assert_int_equal(fake_log_find(x->fd.f, "set-unit"), -1);
}

/* A release whose unit could not be given its CPUs back (a bus error) is
 * tried again before the plan of each cycle until it works, then no more;
 * a unit admitted again in the meantime is not given back. */
static void test_unit_release_retried(void **state)
{
	struct fx *x = *state;

	svc_admitted(x);
	/* the release, and the retry of the cycle the release runs, fail */
	x->fd.f->fail_release = 3;
	fake_log_clear(x->fd.f);
	json_decref(fake_daemon_ok(&x->fd, "{\"op\": \"release\", \"name\": \"svc\"}"));
	assert_log(x, "release-unit busy.service\n"
		      "release-unit busy.service\n"
		      "set host system.slice cpus=0-7\n");
	assert_int_equal(x->fd.d.nunit_left, 1);
	fake_log_clear(x->fd.f);
	assert_int_equal(np_daemon_reconcile(&x->fd.d), 0);
	assert_int_equal(fake_log_find(x->fd.f, "release-unit busy.service"), 0);
	assert_int_equal(x->fd.d.nunit_left, 1);
	fake_log_clear(x->fd.f);
	assert_int_equal(np_daemon_reconcile(&x->fd.d), 0);
	assert_int_equal(fake_log_find(x->fd.f, "release-unit busy.service"), 0);
	assert_int_equal(x->fd.d.nunit_left, 0);
	fake_log_clear(x->fd.f);
	assert_int_equal(np_daemon_reconcile(&x->fd.d), 0);
	assert_log(x, "");
	/* failed twice, then admitted again: its workload's, not given back */
	fake_daemon_admit(&x->fd, LSE_SVC);
	x->fd.f->fail_release = 2;
	json_decref(fake_daemon_ok(&x->fd, "{\"op\": \"release\", \"name\": \"svc\"}"));
	assert_int_equal(x->fd.d.nunit_left, 1);
	fake_log_clear(x->fd.f);
	fake_daemon_admit(&x->fd, LSE_SVC);
	assert_int_equal(fake_log_find(x->fd.f, "release-unit"), -1);
	assert_int_equal(x->fd.d.nunit_left, 0);
}

/* At start, a unit the enforcer kept originals for whose workload is not
 * in the state is given back in the first cycle (it runs, in another
 * slice: test_units.c has the ones that do not); a workload's is not. */
static void test_stale_units(void **state)
{
	struct fx *x = *state;
	struct fake_cgroup *o;

	svc_admitted(x);
	o = fake_cg(x->fd.f, 'u', "old.service", true);
	o->exists = true;
	snprintf(o->slice, sizeof(o->slice), "app.slice");
	x->fd.f->recorded[0] = "busy.service";
	x->fd.f->recorded[1] = "old.service";
	np_daemon_stale_units(&x->fd.d);
	assert_int_equal(x->fd.d.nunit_left, 1);
	assert_string_equal(x->fd.d.unit_left[0].unit, "old.service");
	fake_log_clear(x->fd.f);
	assert_int_equal(np_daemon_reconcile(&x->fd.d), 0);
	assert_log(x, "release-unit old.service\n");
	assert_int_equal(x->fd.d.nunit_left, 0);
}

/* A unit that is not there yet is pending: admitted, no call, then its
 * CPUs when it appears. */
static void test_unit_pending(void **state)
{
	struct fx *x = *state;
	struct fake_cgroup *u;

	fake_enable_units(x->fd.f);
	fake_daemon_admit(&x->fd, LSE_SVC);
	assert_int_equal(x->fd.d.st.nworkloads, 1);
	assert_int_equal(fake_log_find(x->fd.f, "set-unit"), -1);
	assert_true(meta(x, "svc")->unit_pending);
	u = fake_cg(x->fd.f, 'u', "busy.service", true);
	u->exists = true;
	np_cpuset_parse(&u->cpus, "0-7", NULL, 0);
	fake_log_clear(x->fd.f);
	assert_int_equal(np_daemon_reconcile(&x->fd.d), 0);
	assert_log(x, "set-unit busy.service cpus=1,5 mems=0\n");
	assert_false(meta(x, "svc")->unit_pending);
}

/* An exclusive unit in a slice confined to the shared pool (a host
 * cgroup) could not hold its CPUs: pending, with the reason, no call; a
 * unit in a slice of its own gets them. */
static void test_unit_confined(void **state)
{
	struct fx *x = *state;
	struct fake_cgroup *u;

	fake_enable_units(x->fd.f);
	u = fake_cg(x->fd.f, 'u', "busy.service", true);
	u->exists = true;
	snprintf(u->slice, sizeof(u->slice), "system.slice");
	np_cpuset_parse(&u->cpus, "0-7", NULL, 0);
	fake_daemon_admit(&x->fd, LSE_SVC);
	assert_int_equal(x->fd.d.st.nworkloads, 1);
	assert_true(meta(x, "svc")->unit_pending);
	assert_int_equal(fake_log_find(x->fd.f, "set-unit"), -1);
	snprintf(u->slice, sizeof(u->slice), "numaplace.slice");
	fake_log_clear(x->fd.f);
	assert_int_equal(np_daemon_reconcile(&x->fd.d), 0);
	assert_log(x, "set-unit busy.service cpus=1,5 mems=0\n");
	assert_false(meta(x, "svc")->unit_pending);
}

/* A container that is a systemd scope of its own (runc's systemd driver:
 * cri-containerd-ID.scope) is placed through the scope's properties,
 * never written in its cgroup; released by id, and when the scope is gone
 * within a cycle; the state keeps the container, and a restart makes it
 * the scope's again. A container in a service's own cgroup is refused. */
#define CTR_SCOPE_CG "/kubepods.slice/cri-containerd-c0ffee.scope"
#define CTR_SCOPE                                                              \
	"{\"name\": \"ctr\", \"qos\": \"LSE\", \"containers\": [{\"name\": "   \
	"\"main\", \"cpu\": \"2\"}], \"container\": {\"id\": \"c0ffee\", "     \
	"\"cgroup\": \"" CTR_SCOPE_CG "\", \"limits\": {\"cpu\": \"2\"}, "     \
	"\"requests\": {\"cpu\": \"2\"}}}"

/* The daemon (re)started on a fake with units, the container's scope
 * running on every CPU, and a rule of oci_hook.policy letting containers
 * in kubepods.slice ask for LSE. */
static void container_scope_start(struct fx *x, bool first)
{
	char path[128], err[1024];
	struct fake_cgroup *u, *c;

	np_daemon_fini(&x->fd.d);
	free(x->fd.f);
	if (first)
		fake_daemon_config_add(
		    &x->fd,
		    ", \"oci_hook\": {\"policy\": {\"rules\": "
		    "[{\"cgroup_parent\": \"kubepods.slice\", "
		    "\"qos\": [\"LSE\", \"LS\"]}]}}",
		    path, sizeof(path), NULL, 0);
	else
		snprintf(path, sizeof(path), "%s/np.json", x->fd.dir);
	assert_non_null(x->fd.f = fake_enforcer_new());
	fake_enable_units(x->fd.f);
	for (int i = 0; i < 2; i++) {
		struct fake_cgroup *h = fake_cg(
		    x->fd.f, 'h', i ? "numaplace.slice" : "system.slice", true);
		h->exists = true;
		np_cpuset_parse(&h->cpus, "0-7", NULL, 0);
		h->mems = 0x3;
	}
	u = fake_cg(x->fd.f, 'u', "cri-containerd-c0ffee.scope", true);
	u->exists = true;
	snprintf(u->slice, sizeof(u->slice), "kubepods.slice");
	np_cpuset_parse(&u->cpus, "0-7", NULL, 0);
	c = fake_cg(x->fd.f, 'm', CTR_SCOPE_CG, true);
	c->exists = true;
	np_cpuset_parse(&c->cpus, "0-7", NULL, 0);
	if (np_daemon_init_with(&x->fd.d, path, 0, &x->fd.f->e, err,
				sizeof(err)))
		fail_msg("init: %s", err);
}

static void test_container_scope(void **state)
{
	struct fx *x = *state;
	char *r;

	container_scope_start(x, true);
	fake_log_clear(x->fd.f);
	fake_daemon_admit(&x->fd, CTR_SCOPE);
	assert_log(x, "set host system.slice cpus=0,2-4,6-7\n"
		      "set-unit cri-containerd-c0ffee.scope cpus=1,5 mems=0\n");
	assert_string_equal(x->fd.d.st.w[0]->req.unit,
			    "cri-containerd-c0ffee.scope");
	/* the same request again (a retried hook): its allocation */
	fake_log_clear(x->fd.f);
	r = rejected(x, CTR_SCOPE);
	if (!strstr(r, "\"again\": true"))
		fail_msg("answer: %s", r);
	assert_log(x, "");
	/* restarted: the state has the container, loaded as the scope's */
	container_scope_start(x, false);
	assert_int_equal(x->fd.d.st.nworkloads, 1);
	assert_string_equal(x->fd.d.st.w[0]->req.unit,
			    "cri-containerd-c0ffee.scope");
	/* released by its id: the unit given back, no cgroup written */
	fake_log_clear(x->fd.f);
	json_decref(fake_daemon_ok(&x->fd, "{\"op\": \"release\", \"container\": \"c0ffee\"}"));
	assert_int_equal(fake_log_find(x->fd.f,
				       "release-unit cri-containerd-c0ffee.scope"),
			 0);
	assert_int_equal(fake_log_find(x->fd.f, "write "), -1);
	assert_int_equal(x->fd.d.st.nworkloads, 0);
	assert_int_equal(x->fd.d.n.drift_repaired, 0);
	/* admitted again, then its scope goes (the container killed) */
	fake_daemon_admit(&x->fd, CTR_SCOPE);
	fake_cg(x->fd.f, 'm', CTR_SCOPE_CG, false)->exists = false;
	fake_log_clear(x->fd.f);
	assert_int_equal(np_daemon_reconcile(&x->fd.d), 0);
	assert_int_equal(x->fd.d.st.nworkloads, 0);
	assert_int_equal(x->fd.d.n.vanished, 1);
	assert_int_equal(fake_log_find(x->fd.f,
				       "release-unit cri-containerd-c0ffee.scope"),
			 0);
	/* a service's own cgroup is systemd's and no container's */
	fake_cg(x->fd.f, 'm', "/kubepods.slice/x.service", true)->exists = true;
	r = rejected(x, "{\"name\": \"svc\", \"qos\": \"LS\", \"containers\": "
			"[{\"name\": \"m\", \"cpu\": \"1\"}], \"container\": "
			"{\"id\": \"x1\", \"cgroup\": \"/kubepods.slice/x.service\", "
			"\"limits\": {\"cpu\": \"1\"}, \"requests\": {\"cpu\": \"1\"}}}");
	if (!strstr(r, "is the cgroup of the systemd unit x.service, which "
		       "systemd writes, and not a scope"))
		fail_msg("answer: %s", r);
}

/* A start that would look for the workloads' cgroups elsewhere (another
 * cgroup_parent, or the "auto" driver choosing otherwise) refuses,
 * naming where they are, instead of releasing them all. */
static void test_moved_parent(void **state)
{
	struct fx *x = *state;
	char path[128], cfg[2048], err[1024] = "";
	struct fake_enforcer *f2;

	fake_daemon_admit(&x->fd, FAKE_LSE_WEB);
	np_daemon_fini(&x->fd.d);
	free(x->fd.f);
	/* the same file, another managed parent */
	fake_daemon_config_add(&x->fd, ", \"cgroup_parent\": \"other.slice\"",
			       path, sizeof(path), cfg, sizeof(cfg));
	assert_non_null(f2 = fake_enforcer_new());
	assert_int_equal(np_daemon_init_with(&x->fd.d, path, 0, &f2->e, err,
					     sizeof(err)),
			 NP_STATEFILE_EPOLICY);
	if (!strstr(err, "the state's 1 workload(s) live below numaplace.slice") ||
	    !strstr(err, "this start would look below other.slice"))
		fail_msg("message: %s", err);
	np_daemon_fini(&x->fd.d);
	assert_true(f2->destroyed);
	free(f2);
	/* the state is untouched: the original configuration loads it */
	fake_write_file(path, cfg);
	assert_non_null(x->fd.f = fake_enforcer_new());
	if (np_daemon_init_with(&x->fd.d, path, 0, &x->fd.f->e, err, sizeof(err)))
		fail_msg("init: %s", err);
	assert_int_equal(x->fd.d.st.nworkloads, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_admit_shared, setup,
						fake_daemon_teardown),
		cmocka_unit_test_setup_teardown(test_exclusive_order, setup,
						fake_daemon_teardown),
		cmocka_unit_test_setup_teardown(test_drift, setup,
						fake_daemon_teardown),
		cmocka_unit_test_setup_teardown(test_release, setup,
						fake_daemon_teardown),
		cmocka_unit_test_setup_teardown(test_release_busy, setup,
						fake_daemon_teardown),
		cmocka_unit_test_setup_teardown(test_apply_fails, setup,
						fake_daemon_teardown),
		cmocka_unit_test_setup_teardown(test_vanished, setup,
						fake_daemon_teardown),
		cmocka_unit_test_setup_teardown(test_vanished_many, setup,
						fake_daemon_teardown),
		cmocka_unit_test_setup_teardown(test_unit_needs_systemd, setup,
						fake_daemon_teardown),
		cmocka_unit_test_setup_teardown(test_unit_workload, setup,
						fake_daemon_teardown),
		cmocka_unit_test_setup_teardown(test_partition_unit_clash, setup,
						fake_daemon_teardown),
		cmocka_unit_test_setup_teardown(test_cgroup_taken, setup,
						fake_daemon_teardown),
		cmocka_unit_test_setup_teardown(test_partition_refused_by_enforcer,
						setup, fake_daemon_teardown),
		cmocka_unit_test_setup_teardown(test_stale_units, setup,
						fake_daemon_teardown),
		cmocka_unit_test_setup_teardown(test_unit_release_retried, setup,
						fake_daemon_teardown),
		cmocka_unit_test_setup_teardown(test_unit_pending, setup,
						fake_daemon_teardown),
		cmocka_unit_test_setup_teardown(test_unit_confined, setup,
						fake_daemon_teardown),
		cmocka_unit_test_setup_teardown(test_lsr_lends_to_be, setup,
						fake_daemon_teardown),
		cmocka_unit_test_setup_teardown(test_container_scope, setup,
						fake_daemon_teardown),
		cmocka_unit_test_setup_teardown(test_moved_parent, setup,
						fake_daemon_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
