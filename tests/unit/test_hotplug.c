// SPDX-License-Identifier: Apache-2.0
/*
 * CPU hotplug (daemon/collect/hotplug.c) against a fake enforcer: the online list
 * is a file of the test's own (config.cpu_online_file). A CPU going
 * offline leaves the pools (shared cgroups shrink, nothing new is placed
 * there); an exclusive workload holding it is degraded and keeps it
 * ("report") or is re-placed ("replace"); the CPU coming back restores
 * the pools; a restart while it is offline loads the state.
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

struct fx {
	struct fake_daemon fd;
	char online[128];
};

static int setup(void **state)
{
	struct fx *x = fake_daemon_new(sizeof(*x), "hotplug");
	snprintf(x->online, sizeof(x->online), "%s/online", x->fd.dir);
	fake_write_file(x->online, "0-7\n");
	snprintf(x->fd.d.cfg.cpu_online_file,
		 sizeof(x->fd.d.cfg.cpu_online_file), "%s", x->online);
	*state = x;
	return 0;
}

/* Admit spec; the cpuset granted ("" when rejected). */
static const char *admit(struct fx *x, const char *spec)
{
	static char cpus[64];
	char buf[1024];
	json_t *r, *dec;

	snprintf(buf, sizeof(buf), "{\"op\": \"admit\", \"spec\": %s}", spec);
	r = fake_daemon_ask(&x->fd, buf);
	dec = json_object_get(r, "decision");
	snprintf(cpus, sizeof(cpus), "%s",
		 json_is_true(json_object_get(dec, "admitted"))
			 ? json_string_value(json_object_get(dec, "cpuset"))
			 : "");
	json_decref(r);
	return cpus;
}

static void lse(struct fx *x, const char *name, int cpus, const char *want)
{
	char spec[256];
	snprintf(spec, sizeof(spec),
		 "{\"name\": \"%s\", \"cgroup\": \"%s\", \"qos\": \"LSE\", "
		 "\"containers\": [{\"name\": \"m\", \"cpu\": \"%d\"}]}",
		 name, name, cpus);
	assert_string_equal(admit(x, spec), want);
}

/* The kernel-side set of a managed cgroup in the fake. */
static char *cg_cpus(struct fx *x, const char *path)
{
	struct fake_cgroup *c = fake_cg(x->fd.f, 'm', path, false);
	assert_non_null(c);
	return np_cpuset_str(&c->cpus);
}

static void assert_cg(struct fx *x, const char *path, const char *want)
{
	char *got = cg_cpus(x, path);
	if (strcmp(got, want))
		fail_msg("%s holds %s, wanted %s", path, got, want);
	free(got);
}

/* A top-level status field, or with name: the offline CPUs status.degraded
 * lists for that workload ("" when none); a workload's cpuset with key
 * "cpuset". */
static void assert_status(struct fx *x, const char *name, const char *key,
			  const char *want)
{
	json_t *st = np_daemon_status(&x->fd.d), *w;
	const char *got = NULL;
	size_t i;

	if (!name) {
		got = json_string_value(json_object_get(st, key));
	} else if (!strcmp(key, "offline_cpus")) {
		got = json_string_value(json_object_get(
			json_object_get(st, "degraded"), name));
	} else {
		json_array_foreach(json_object_get(st, "workloads"), i, w)
			if (!strcmp(json_string_value(json_object_get(w, "name")),
				    name))
				got = json_string_value(json_object_get(w, key));
	}
	if (strcmp(got ? got : "", want))
		fail_msg("status %s.%s = %s, wanted %s", name ? name : "", key,
			 got ? got : "(none)", want);
	json_decref(st);
}

static void cycle_with(struct fx *x, const char *online)
{
	fake_write_file(x->online, online);
	assert_int_equal(np_daemon_reconcile(&x->fd.d), 0);
}

#define LS_API                                                                 \
	"{\"name\": \"api\", \"cgroup\": \"api\", \"qos\": \"LS\", "          \
	"\"containers\": [{\"name\": \"m\", \"cpu\": \"500m\"}]}"

/* report: db keeps CPU 5 while it is offline, nobody else gets it, the
 * shared pool shrinks and grows back. */
static void test_report(void **state)
{
	struct fx *x = *state;

	assert_string_equal(admit(x, LS_API), "0-7");
	lse(x, "db", 2, "1,5");
	assert_cg(x, "api", "0,2-4,6-7");
	cycle_with(x, "0-4,6-7\n");
	assert_int_equal(x->fd.d.n.hotplug, 1);
	assert_status(x, NULL, "offline_cpus", "5");
	assert_status(x, "db", "offline_cpus", "5");
	assert_cg(x, "db", "1,5"); /* kept: it comes back to db */
	/* 2 whole cores left (2/6, 3/7) besides the reserved one */
	lse(x, "web", 4, "2-3,6-7");
	assert_cg(x, "api", "0,4");
	cycle_with(x, "0-3,6-7\n"); /* reserved CPU 4 too */
	assert_cg(x, "api", "0");
	cycle_with(x, "0-7\n");
	assert_int_equal(x->fd.d.n.hotplug, 3);
	assert_status(x, NULL, "offline_cpus", "");
	assert_status(x, "db", "offline_cpus", "");
	assert_cg(x, "api", "0,4");
	assert_int_equal(x->fd.d.n.replaced, 0);
}

/* A shared-pool CPU going offline only resizes the pool. */
static void test_shared_cpu(void **state)
{
	struct fx *x = *state;

	assert_string_equal(admit(x, LS_API), "0-7");
	lse(x, "db", 2, "1,5");
	cycle_with(x, "0-5,7\n");
	assert_cg(x, "api", "0,2-4,7");
	assert_cg(x, "db", "1,5");
	assert_status(x, "db", "offline_cpus", "");
	/* a new whole-core grant avoids the core with an offline CPU */
	lse(x, "web", 2, "3,7");
	cycle_with(x, "0-7\n");
	assert_cg(x, "api", "0,2,4,6");
}

/* replace: db moves to online CPUs; with no room it stays degraded. */
static void test_replace(void **state)
{
	struct fx *x = *state;

	struct np_wl_meta *m;

	x->fd.d.cfg.on_cpu_offline = NP_OFFLINE_REPLACE;
	assert_string_equal(admit(x, LS_API), "0-7");
	lse(x, "db", 2, "1,5");
	m = np_daemon_meta_find(&x->fd.d, "db");
	assert_non_null(m);
	assert_true(m->established);
	cycle_with(x, "0-4,6-7\n");
	assert_int_equal(x->fd.d.n.replaced, 1);
	/* placed anew, the same workload: its record goes with it */
	assert_ptr_equal(np_daemon_meta_find(&x->fd.d, "db"), m);
	assert_true(m->established);
	assert_cg(x, "db", "2,6");
	assert_status(x, "db", "offline_cpus", "");
	assert_status(x, "db", "cpuset", "2,6");
	/* CPU 5 back: in the shared pool again, db stays where it is */
	cycle_with(x, "0-7\n");
	assert_cg(x, "db", "2,6");
	assert_cg(x, "api", "0-1,3-5,7");
	/* no room: web and etl take the other whole cores, then 7 goes
	 * offline */
	lse(x, "web", 2, "1,5");
	lse(x, "etl", 2, "3,7");
	cycle_with(x, "0-6\n");
	assert_int_equal(x->fd.d.n.replaced, 1);
	assert_status(x, "etl", "offline_cpus", "7");
	assert_cg(x, "etl", "3,7");
	assert_cg(x, "web", "1,5");
}

/* An unreadable or empty list changes nothing (said once). */
static void test_unreadable(void **state)
{
	struct fx *x = *state;

	lse(x, "db", 2, "1,5");
	cycle_with(x, "");
	cycle_with(x, "0-9999999\n");
	unlink(x->online);
	assert_int_equal(np_daemon_reconcile(&x->fd.d), 0);
	assert_true(x->fd.d.online_unreadable);
	assert_int_equal(x->fd.d.n.hotplug, 0);
	assert_status(x, NULL, "offline_cpus", "");
	cycle_with(x, "0-4,6-7\n");
	assert_false(x->fd.d.online_unreadable);
	assert_status(x, "db", "offline_cpus", "5");
}

/* A restart while CPU 5 is offline: the state loads, db is degraded. */
static void test_restart_offline(void **state)
{
	struct fx *x = *state;
	char path[192], members[256], err[1024] = "";
	struct fake_cgroup *c;

	lse(x, "db", 2, "1,5");
	np_daemon_fini(&x->fd.d);
	free(x->fd.f);
	snprintf(members, sizeof(members), ", \"cpu_online_file\": \"%s\"",
		 x->online);
	fake_daemon_config_add(&x->fd, members, path, sizeof(path), NULL, 0);
	fake_write_file(x->online, "0-4,6-7\n");
	assert_non_null(x->fd.f = fake_enforcer_new());
	assert_non_null(c = fake_cg(x->fd.f, 'h', "numaplace.slice", true));
	c->exists = true;
	np_cpuset_parse(&c->cpus, "0-7", NULL, 0);
	c->mems = 3;
	assert_non_null(c = fake_cg(x->fd.f, 'm', "db", true));
	c->exists = true;
	np_cpuset_parse(&c->cpus, "1,5", NULL, 0);
	c->mems = 1;
	if (np_daemon_init_with(&x->fd.d, path, 0, &x->fd.f->e, err,
				sizeof(err)))
		fail_msg("init: %s", err);
	assert_int_equal(x->fd.d.st.nworkloads, 1);
	assert_int_equal(np_daemon_reconcile(&x->fd.d), 0);
	assert_status(x, "db", "offline_cpus", "5");
	assert_cg(x, "db", "1,5");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_report, setup, fake_daemon_teardown),
	    cmocka_unit_test_setup_teardown(test_shared_cpu, setup, fake_daemon_teardown),
	    cmocka_unit_test_setup_teardown(test_replace, setup, fake_daemon_teardown),
	    cmocka_unit_test_setup_teardown(test_unreadable, setup, fake_daemon_teardown),
	    cmocka_unit_test_setup_teardown(test_restart_offline, setup,
					    fake_daemon_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
