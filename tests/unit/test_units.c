// SPDX-License-Identifier: Apache-2.0
/*
 * Units beside numaplace's scope in its slice that are no workload
 * (daemon/apply/units.c): a service never admitted, and a unit workload
 * released while its unit keeps running, are confined to the shared pool
 * (narrowed before an exclusive grant, widened after a release, a change by
 * hand repaired), until they stop (then given back what they had) or are
 * admitted again; after a crash, kept confined, not given back first. On
 * the fake enforcer with units (tests/support): in_slice[] are the units
 * running right below numaplace.slice. The systemd backend under systemd
 * as PID 1: tests/vm/systemd, scenario 40-unit.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "daemon/daemon_internal.h"
#include "fake_daemon.h"
#include "numaplace/daemon.h"

struct fx {
	struct fake_daemon fd; /* dir, d, f */
};

static int setup(void **state)
{
	*state = fake_daemon_new(sizeof(struct fx), "units");
	return 0;
}

static void assert_log(struct fx *x, const char *want)
{
	if (strcmp(fake_log(x->fd.f), want))
		fail_msg("enforcer calls:\n%s\nwanted:\n%s", fake_log(x->fd.f),
			 want);
}

static void reconcile(struct fx *x)
{
	fake_log_clear(x->fd.f);
	assert_int_equal(np_daemon_reconcile(&x->fd.d), 0);
}

/* A running unit right below numaplace.slice, with cpus ("" : none of
 * its own). */
static struct fake_cgroup *running(struct fx *x, const char *unit,
				   const char *cpus)
{
	struct fake_cgroup *u = fake_cg(x->fd.f, 'u', unit, true);
	int i = 0;

	u->exists = true;
	np_cpuset_zero(&u->cpus);
	if (*cpus)
		assert_int_equal(np_cpuset_parse(&u->cpus, cpus, NULL, 0), 0);
	while (x->fd.f->in_slice[i] && strcmp(x->fd.f->in_slice[i], unit))
		i++;
	x->fd.f->in_slice[i] = unit;
	return u;
}

/* c's CPU list (one at a time: a static buffer) */
static const char *cpus_of(const np_cpuset *c)
{
	static char b[256];

	assert_true(np_cpuset_format(c, b, sizeof(b)) >= 0);
	return b;
}

static bool recorded(struct fx *x, const char *unit)
{
	for (int i = 0; i < 4 && x->fd.f->recorded[i]; i++)
		if (!strcmp(x->fd.f->recorded[i], unit))
			return true;
	return false;
}

#define LSE_SVC                                                                \
	"{\"name\": \"svc\", \"unit\": \"busy.service\", \"qos\": \"LSE\", "   \
	"\"containers\": [{\"name\": \"main\", \"cpu\": \"2\"}]}"

/* A service that is no workload: the shared pool at the first cycle, then
 * out of an exclusive grant before the grant is written, nothing while
 * nothing changes, a hand change repaired; stopped, given back once. */
static void test_stray(void **state)
{
	struct fx *x = *state;
	struct fake_cgroup *u;
	int narrow, grant;

	fake_enable_units(x->fd.f);
	u = running(x, "app.service", "");
	reconcile(x);
	assert_log(x, "confine-unit app.service cpus=0-7\n");
	assert_true(recorded(x, "app.service"));
	reconcile(x);
	assert_log(x, "");
	fake_log_clear(x->fd.f);
	fake_daemon_admit(&x->fd, FAKE_LSE_WEB);
	narrow = fake_log_find(x->fd.f, "confine-unit app.service cpus=0,2-4,6-7");
	grant = fake_log_find(x->fd.f, "write web cpuset.cpus=1,5");
	if (narrow < 0 || grant < 0 || narrow > grant)
		fail_msg("the stray does not yield before the grant:\n%s",
			 fake_log(x->fd.f));
	reconcile(x);
	assert_log(x, "");
	np_cpuset_parse(&u->cpus, "0-7", NULL, 0); /* set-property by hand */
	reconcile(x);
	assert_log(x, "confine-unit app.service cpus=0,2-4,6-7\n");
	/* stopped: looked at each cycle, nothing set (systemd 252 would make
	 * its cgroup again), its record kept, what it has untouched */
	u->exists = false;
	for (int i = 0; i < 2; i++) {
		reconcile(x);
		assert_log(x, "release-unit app.service\n");
		assert_true(recorded(x, "app.service"));
		assert_string_equal(cpus_of(&u->cpus), "0,2-4,6-7");
	}
	/* started again beside the scope, web gone: the shared pool */
	u->exists = true;
	json_decref(fake_daemon_ok(&x->fd, "{\"op\": \"release\", \"name\": \"web\"}"));
	assert_true(fake_log_find(x->fd.f, "confine-unit app.service cpus=0-7") >= 0);
	/* running in another slice (no longer listed beside the scope):
	 * given back, forgotten, never confined again */
	x->fd.f->in_slice[0] = NULL;
	reconcile(x);
	assert_log(x, "release-unit app.service\n");
	assert_false(recorded(x, "app.service"));
	reconcile(x);
	assert_log(x, "");
}

/* Released while its unit keeps running: kept at the release (no CPU given
 * back), the shared pool at the cycle; out of the next grant; admitted
 * again, its workload's (no more confined); released when stopped, given
 * back at once. */
static void test_released_runs_on(void **state)
{
	struct fx *x = *state;
	struct fake_cgroup *u;
	np_cpuset cur;
	int narrow, grant;

	fake_enable_units(x->fd.f);
	running(x, "busy.service", "0-7");
	fake_daemon_admit(&x->fd, LSE_SVC);
	assert_log(x, "set host system.slice cpus=0,2-4,6-7\n"
		      "set-unit busy.service cpus=1,5 mems=0\n");
	fake_log_clear(x->fd.f);
	json_decref(fake_daemon_ok(&x->fd, "{\"op\": \"release\", \"name\": \"svc\"}"));
	assert_log(x, "release-unit busy.service\n"
		      "confine-unit busy.service cpus=0-7\n"
		      "set host system.slice cpus=0-7\n");
	reconcile(x);
	assert_log(x, "");
	fake_log_clear(x->fd.f);
	fake_daemon_admit(&x->fd, FAKE_LSE_WEB);
	narrow = fake_log_find(x->fd.f, "confine-unit busy.service cpus=0,2-4,6-7");
	grant = fake_log_find(x->fd.f, "write web cpuset.cpus=1,5");
	if (narrow < 0 || grant < 0 || narrow > grant)
		fail_msg("the released unit does not yield before the grant:\n%s",
			 fake_log(x->fd.f));
	fake_log_clear(x->fd.f);
	fake_daemon_admit(&x->fd, LSE_SVC);
	assert_true(fake_log_find(x->fd.f, "set-unit busy.service cpus=") >= 0);
	assert_int_equal(fake_log_find(x->fd.f, "confine-unit"), -1);
	reconcile(x);
	assert_log(x, "");
	/* stopped, then released: nothing set on it at the release nor
	 * after, its record kept; started again, confined */
	u = fake_cg(x->fd.f, 'u', "busy.service", false);
	cur = u->cpus;
	u->exists = false;
	fake_log_clear(x->fd.f);
	json_decref(fake_daemon_ok(&x->fd, "{\"op\": \"release\", \"name\": \"svc\"}"));
	assert_int_equal(fake_log_find(x->fd.f, "release-unit busy.service"), 0);
	assert_int_equal(fake_log_find(x->fd.f, "confine-unit"), -1);
	assert_int_equal(fake_log_find(x->fd.f, "set-unit"), -1);
	assert_true(recorded(x, "busy.service"));
	reconcile(x);
	assert_log(x, "release-unit busy.service\n");
	assert_true(np_cpuset_equal(&u->cpus, &cur));
	u->exists = true;
	json_decref(fake_daemon_ok(&x->fd, "{\"op\": \"release\", \"name\": \"web\"}"));
	assert_true(fake_log_find(x->fd.f, "confine-unit busy.service cpus=0-7") >= 0);
}

/* Units that are not right below numaplace.slice are left alone: one
 * running in another slice, no workload, gets no call; a unit workload
 * there released while it runs is given back at once, not confined. */
static void test_outside_slice(void **state)
{
	struct fx *x = *state;
	struct fake_cgroup *o, *b;

	fake_enable_units(x->fd.f);
	o = fake_cg(x->fd.f, 'u', "other.service", true);
	o->exists = true;
	snprintf(o->slice, sizeof(o->slice), "app.slice");
	np_cpuset_parse(&o->cpus, "0-7", NULL, 0);
	b = fake_cg(x->fd.f, 'u', "busy.service", true);
	b->exists = true;
	snprintf(b->slice, sizeof(b->slice), "app.slice");
	np_cpuset_parse(&b->cpus, "0-7", NULL, 0);
	reconcile(x);
	assert_log(x, "");
	fake_daemon_admit(&x->fd, LSE_SVC);
	assert_true(fake_log_find(x->fd.f, "set-unit busy.service cpus=1,5") >= 0);
	x->fd.f->recorded[0] = "busy.service"; /* the backend's record */
	fake_daemon_admit(&x->fd, FAKE_LSE_WEB);
	fake_log_clear(x->fd.f);
	json_decref(fake_daemon_ok(&x->fd, "{\"op\": \"release\", \"name\": \"svc\"}"));
	assert_int_equal(fake_log_find(x->fd.f, "release-unit busy.service"), 0);
	assert_int_equal(fake_log_find(x->fd.f, "confine-unit"), -1);
	assert_false(recorded(x, "busy.service"));
	reconcile(x);
	assert_log(x, "");
	assert_int_equal(fake_log_find(x->fd.f, "other.service"), -1);
	assert_string_equal(cpus_of(&o->cpus), "0-7");
}

/* After a crash the state has no workload for a unit the enforcer kept a
 * record of: one that runs on beside the scope stays confined (no give
 * back, then taking again); a scope that ended is forgotten; a service
 * that is stopped, loaded or not, keeps its record and gets nothing. */
static void test_stale_stray(void **state)
{
	struct fx *x = *state;

	fake_enable_units(x->fd.f);
	running(x, "app.service", "0,2-3,6-7");
	fake_cg(x->fd.f, 'u', "idle.service", true); /* loaded, stopped */
	x->fd.f->recorded[0] = "app.service";
	x->fd.f->recorded[1] = "gone.scope";
	x->fd.f->recorded[2] = "idle.service";
	x->fd.f->recorded[3] = "unloaded.service";
	np_daemon_stale_units(&x->fd.d);
	assert_int_equal(x->fd.d.nunit_left, 4);
	reconcile(x);
	/* idle.service and unloaded.service: looked at, before the plan
	 * and after it, and nothing set (not running); gone.scope, a scope
	 * that ended, forgotten; unit_left is taken in the order its
	 * removals leave it */
	assert_log(x, "release-unit app.service\n"
		      "release-unit unloaded.service\n"
		      "release-unit idle.service\n"
		      "release-unit gone.scope\n"
		      "confine-unit app.service cpus=0-7\n"
		      "release-unit idle.service\n"
		      "release-unit unloaded.service\n");
	assert_int_equal(x->fd.d.nunit_left, 0);
	assert_true(recorded(x, "app.service"));
	assert_false(recorded(x, "gone.scope"));
	assert_true(recorded(x, "idle.service"));
	assert_true(recorded(x, "unloaded.service"));
}

/* A runtime's scope beside numaplace's (crun's, podman's), confined while
 * no workload, then holding an admitted container's cgroup ("container"
 * below it): given back what it had before the container's CPUs are
 * written, and left alone after. (The fake's in_slice[] says where a unit
 * runs; the container's path only has to name the scope.) */
#define CTR_CG "/kubepods.slice/np-ctr.scope/container"
#define CTR                                                                    \
	"{\"name\": \"ctr\", \"qos\": \"LSE\", \"containers\": [{\"name\": "   \
	"\"main\", \"cpu\": \"2\"}], \"container\": {\"id\": \"c0ffee\", "     \
	"\"cgroup\": \"" CTR_CG "\", \"limits\": {\"cpu\": \"2\"}, "           \
	"\"requests\": {\"cpu\": \"2\"}}}"

static void test_scope_holds_container(void **state)
{
	struct fx *x = *state;
	struct fake_cgroup *c;
	char path[128], err[1024];
	int back, grant;

	np_daemon_fini(&x->fd.d);
	free(x->fd.f);
	fake_daemon_config_add(&x->fd,
			       ", \"oci_hook\": {\"policy\": {\"rules\": "
			       "[{\"cgroup_parent\": \"kubepods.slice\", "
			       "\"qos\": [\"LSE\", \"LS\"]}]}}",
			       path, sizeof(path), NULL, 0);
	assert_non_null(x->fd.f = fake_enforcer_new());
	fake_enable_units(x->fd.f);
	for (int i = 0; i < 2; i++) {
		c = fake_cg(x->fd.f, 'h', i ? "numaplace.slice" : "system.slice",
			    true);
		c->exists = true;
		np_cpuset_parse(&c->cpus, "0-7", NULL, 0);
		c->mems = 0x3;
	}
	c = fake_cg(x->fd.f, 'm', CTR_CG, true);
	c->exists = true;
	np_cpuset_parse(&c->cpus, "0-7", NULL, 0);
	if (np_daemon_init_with(&x->fd.d, path, 0, &x->fd.f->e, err,
				sizeof(err)))
		fail_msg("init: %s", err);
	running(x, "np-ctr.scope", "");
	reconcile(x);
	assert_log(x, "confine-unit np-ctr.scope cpus=0-7\n");
	fake_log_clear(x->fd.f);
	fake_daemon_admit(&x->fd, CTR);
	back = fake_log_find(x->fd.f, "give-back-unit np-ctr.scope");
	grant = fake_log_find(x->fd.f, "write " CTR_CG " cpuset.cpus=1,5");
	if (back < 0 || grant < 0 || back > grant)
		fail_msg("the scope is not given back before the grant:\n%s",
			 fake_log(x->fd.f));
	assert_false(recorded(x, "np-ctr.scope"));
	reconcile(x);
	assert_log(x, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_stray, setup,
						fake_daemon_teardown),
		cmocka_unit_test_setup_teardown(test_released_runs_on, setup,
						fake_daemon_teardown),
		cmocka_unit_test_setup_teardown(test_stale_stray, setup,
						fake_daemon_teardown),
		cmocka_unit_test_setup_teardown(test_scope_holds_container,
						setup, fake_daemon_teardown),
		cmocka_unit_test_setup_teardown(test_outside_slice, setup,
						fake_daemon_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
