// SPDX-License-Identifier: Apache-2.0
/*
 * The daemon's core (the np_daemon_ group behind daemon_internal.h: the
 * request dispatcher serve/requests.c, admission and release in
 * decide/workloads.c, the save in persist/persist.c, the placement files
 * of serve/placement_files.c) on the fake daemon (tests/support/
 * fake_daemon.h: CPUs 0-7, siblings 0/4 1/5 2/6 3/7, reserved 0,4): a
 * request the dispatcher refuses names what is wrong and changes nothing;
 * an admission or release, once answered, is what a restarted daemon
 * loads (acknowledged means durable); a workload's placement file holds
 * its CPUs and goes with its release, and a file of a workload the state
 * does not know is removed. The loop itself (signals, timers, the socket,
 * sd_notify) runs in tests/host/daemon-host.sh.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon/daemon_internal.h"
#include "fake_daemon.h"

static int setup(void **state)
{
	*state = fake_daemon_new(sizeof(struct fake_daemon), "daemon");
	return 0;
}

/* The error of a refused request, which must name want. */
static void refused(struct fake_daemon *x, const char *text, const char *want)
{
	json_t *resp = fake_daemon_ask(x, text);
	const char *err = json_string_value(json_object_get(resp, "error"));

	if (json_is_true(json_object_get(resp, "ok")) || !err)
		fail_msg("%s was not refused", text);
	if (!strstr(err, want))
		fail_msg("%s: \"%s\" does not say \"%s\"", text, err, want);
	json_decref(resp);
}

static const struct np_workload_alloc *find(struct fake_daemon *x,
					    const char *name)
{
	int i = np_state_find(&x->d.st, name);

	return i >= 0 ? x->d.st.w[i] : NULL;
}

static void test_dispatch_refusals(void **state)
{
	struct fake_daemon *x = *state;

	refused(x, "[1]", "request: expected a JSON object");
	refused(x, "{}", "op: required field is missing");
	refused(x, "{\"op\": 3}", "op: expected a string");
	refused(x, "{\"op\": \"admitt\"}",
		"op: \"admitt\" is not one of status, admit, release, events,"
		" plan, reload, export, defrag, explain, resize");
	/* a misspelt key would change the request silently */
	refused(x, "{\"op\": \"admit\", \"spce\": " FAKE_LSE_WEB "}",
		"spce: unknown field for op \"admit\"");
	refused(x, "{\"op\": \"release\", \"name\": \"web\", \"force\": true}",
		"force: unknown field for op \"release\"");
	refused(x, "{\"op\": \"release\", \"name\": \"nobody\"}", "nobody");
	/* nothing admitted, nothing written */
	assert_int_equal(x->d.st.nworkloads, 0);
	assert_int_equal(x->d.n.admitted, 0);
	assert_string_equal(fake_log(x->f), "");
}

/* What was answered is what a restarted daemon loads. */
static void test_answer_is_durable(void **state)
{
	struct fake_daemon *x = *state;
	const struct np_workload_alloc *a;
	char cpus[64];

	fake_daemon_admit(x, FAKE_LSE_WEB);
	fake_daemon_admit(x, FAKE_LS_API);
	assert_non_null(a = find(x, "web"));
	np_cpuset_format(a->c[0].cpus, cpus, sizeof(cpus));
	assert_string_equal(cpus, "1,5");

	fake_daemon_restart(x);
	assert_int_equal(x->d.st.nworkloads, 2);
	assert_non_null(a = find(x, "web"));
	np_cpuset_format(a->c[0].cpus, cpus, sizeof(cpus));
	assert_string_equal(cpus, "1,5"); /* existing allocations never move */
	assert_non_null(find(x, "api"));

	json_decref(
	    fake_daemon_ok(x, "{\"op\": \"release\", \"name\": \"web\"}"));
	fake_daemon_restart(x);
	assert_int_equal(x->d.st.nworkloads, 1);
	assert_null(find(x, "web"));
	assert_non_null(find(x, "api"));
}

static char *placement(struct fake_daemon *x, const char *name)
{
	char path[256];
	FILE *fp;
	static char buf[8192];
	size_t n;

	snprintf(path, sizeof(path), "%s/workloads/%s.json", x->dir, name);
	if (!(fp = fopen(path, "r")))
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, fp);
	buf[n] = '\0';
	fclose(fp);
	return buf;
}

static void test_placement_files(void **state)
{
	struct fake_daemon *x = *state;
	char path[256];
	const char *text;
	json_t *j;

	assert_true(x->d.cfg.placement_files);
	assert_string_equal(x->d.cfg.run_dir, x->dir);
	/* a file left by a workload the state does not know (released while
	 * the daemon was down): removed at the first pass */
	snprintf(path, sizeof(path), "%s/workloads", x->dir);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/workloads/ghost.json", x->dir);
	fake_write_file(path, "{}");
	fake_daemon_admit(x, FAKE_LSE_WEB);
	assert_int_equal(np_daemon_reconcile(&x->d), 0);
	np_daemon_placement_files(&x->d);
	assert_int_equal(access(path, F_OK), -1);
	if (!(text = placement(x, "web")))
		fail_msg("no placement file for web in %s/workloads", x->dir);
	assert_non_null(j = json_loads(text, 0, NULL));
	assert_string_equal(json_string_value(json_object_get(j, "name")),
			    "web");
	assert_string_equal(json_string_value(json_object_get(j, "cpuset")),
			    "1,5");
	assert_true(json_is_true(json_object_get(j, "exclusive")));
	json_decref(j);

	/* a released workload's file goes with it */
	json_decref(
	    fake_daemon_ok(x, "{\"op\": \"release\", \"name\": \"web\"}"));
	assert_null(placement(x, "web"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_dispatch_refusals, setup,
					    fake_daemon_teardown),
	    cmocka_unit_test_setup_teardown(test_answer_is_durable, setup,
					    fake_daemon_teardown),
	    cmocka_unit_test_setup_teardown(test_placement_files, setup,
					    fake_daemon_teardown),
	};
	return cmocka_run_group_tests_name("daemon", tests, NULL, NULL);
}
