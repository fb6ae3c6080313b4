// SPDX-License-Identifier: Apache-2.0
/*
 * The systemd driver's record of what the units it confines had before
 * (userspace/enforce/systemd_units.c, host-units.json): kept in the
 * runtime directory, which a full state disk does not fill; moved from
 * the state directory, where an older numaplaced kept it, at open. The
 * bus calls around it: tests/vm/systemd (scenarios 30-nofight, 40-unit,
 * 50-crash, 90-chaos).
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

#include "enforce/systemd_internal.h"
#include "fake_daemon.h" /* fake_write_file */
#include "fixtures.h"

struct fx {
	char dir[64];
	struct systemd_backend s; /* its record's part only: no bus */
};

static int setup(void **state)
{
	struct fx *x = calloc(1, sizeof(*x));

	assert_non_null(x);
	snprintf(x->dir, sizeof(x->dir), "/tmp/np-sdrec-XXXXXX");
	assert_non_null(mkdtemp(x->dir));
	snprintf(x->s.runtime_dir, sizeof(x->s.runtime_dir), "%s/run", x->dir);
	snprintf(x->s.state_dir, sizeof(x->s.state_dir), "%s/state", x->dir);
	assert_int_equal(mkdir(x->s.runtime_dir, 0755), 0);
	assert_int_equal(mkdir(x->s.state_dir, 0700), 0);
	*state = x;
	return 0;
}

static int teardown(void **state)
{
	struct fx *x = *state;
	char cmd[128];

	free(x->s.units);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", x->dir);
	assert_int_equal(system(cmd), 0);
	free(x);
	return 0;
}

static bool in_dir(struct fx *x, const char *dir)
{
	char path[160];
	snprintf(path, sizeof(path), "%s/%s/host-units.json", x->dir, dir);
	return access(path, F_OK) == 0;
}

static void put(struct fx *x, const char *dir, const char *text)
{
	char path[160];
	snprintf(path, sizeof(path), "%s/%s/host-units.json", x->dir, dir);
	fake_write_file(path, text);
}

/* The original CPUs of unit as the record gave them ("" for none). */
static const char *orig_cpus(struct fx *x, const char *unit)
{
	static char out[64];
	struct host_unit *u = np_systemd_unit_find(&x->s, unit);

	assert_non_null(u);
	assert_true(u->recorded);
	out[0] = '\0';
	if (u->orig_cpus_set)
		assert_true(np_cpuset_format(&u->orig_cpus, out, sizeof(out)) >= 0);
	return out;
}

#define REC_03                                                                 \
	"{\"units\": {\"system.slice\": {\"cpus\": \"0-3\", \"mems\": null}, " \
	"\"user.slice\": {\"cpus\": null, \"mems\": \"0\"}}, \"version\": 1}"
#define REC_07                                                                 \
	"{\"units\": {\"system.slice\": {\"cpus\": \"0-7\", \"mems\": null}}, " \
	"\"version\": 1}"

/* An upgrade: the record in the state directory only. Its originals are
 * taken, it is written to the runtime directory byte for byte, then
 * removed from the state directory. */
static void test_moved(void **state)
{
	struct fx *x = *state;
	char err[512];

	put(x, "state", REC_03);
	if (np_systemd_load_originals(&x->s, err, sizeof(err)))
		fail_msg("load: %s", err);
	assert_string_equal(orig_cpus(x, "system.slice"), "0-3");
	assert_string_equal(orig_cpus(x, "user.slice"), "");
	assert_false(in_dir(x, "state"));
	assert_string_equal(np_test_get(x->dir, "run/host-units.json"), REC_03);
}

/* Both there: the runtime directory's wins, the state directory's (an
 * older release's, here with other originals) is removed. */
static void test_moved_both(void **state)
{
	struct fx *x = *state;
	char err[512];

	put(x, "run", REC_07);
	put(x, "state", REC_03);
	if (np_systemd_load_originals(&x->s, err, sizeof(err)))
		fail_msg("load: %s", err);
	assert_string_equal(orig_cpus(x, "system.slice"), "0-7");
	assert_null(np_systemd_unit_find(&x->s, "user.slice"));
	assert_false(in_dir(x, "state"));
	assert_string_equal(np_test_get(x->dir, "run/host-units.json"), REC_07);
}

/* A state directory's record that is not valid: -EINVAL naming it there;
 * it stays where it is, nothing is written to the runtime directory. A
 * runtime one that is not valid likewise, and the state directory's
 * beside it is not removed either. */
static void test_moved_bad(void **state)
{
	static const char *const bad[] = {
		"{\"version\": 1,",
		"{\"version\": 2, \"units\": {}}",
		("{\"version\": 1, \"units\": {\"system.slice\": {\"cpus\": "
		 "\"x\", \"mems\": null}}}"),
	};
	struct fx *x = *state;
	char err[512], want[4200];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		put(x, "state", bad[i]);
		assert_int_equal(np_systemd_load_originals(&x->s, err, sizeof(err)),
				 -EINVAL);
		snprintf(want, sizeof(want), "%s/host-units.json", x->s.state_dir);
		if (!strstr(err, want))
			fail_msg("error \"%s\" does not name %s", err, want);
		assert_string_equal(np_test_get(x->dir, "state/host-units.json"),
				    bad[i]);
		assert_false(in_dir(x, "run"));
	}
	put(x, "state", REC_03);
	put(x, "run", "{\"version\": 1,");
	assert_int_equal(np_systemd_load_originals(&x->s, err, sizeof(err)),
			 -EINVAL);
	snprintf(want, sizeof(want), "%s/host-units.json", x->s.runtime_dir);
	if (!strstr(err, want))
		fail_msg("error \"%s\" does not name %s", err, want);
	assert_true(in_dir(x, "state"));
}

/* The state directory cannot take a file (host-units.json.tmp there is a
 * directory: the write fails as on a full or read-only disk), the runtime
 * directory can: the record is written (in the runtime directory), so a
 * unit is confined. (Before the record moved, this was "writing
 * STATE/host-units.json: Is a directory", and the unit was left on every
 * CPU: docs/reliability.md, "The first 2-hour run".) Then a state
 * directory that does not exist at all: the same. */
static void test_state_unwritable(void **state)
{
	struct fx *x = *state;
	struct host_unit *u;
	char err[512], path[4200];

	snprintf(path, sizeof(path), "%s/host-units.json.tmp", x->s.state_dir);
	assert_int_equal(mkdir(path, 0700), 0);
	assert_non_null(u = np_systemd_unit_add(&x->s, "system.slice",
						"system.slice"));
	u->recorded = true;
	u->orig_cpus_set = true;
	assert_int_equal(np_cpuset_parse(&u->orig_cpus, "0-7", NULL, 0), 0);
	if (np_systemd_save_originals(&x->s, err, sizeof(err)))
		fail_msg("save: %s", err);
	assert_string_equal(np_test_get(x->dir, "run/host-units.json"), REC_07);
	assert_false(in_dir(x, "state"));
	/* read back by the next start, with no state directory */
	free(x->s.units);
	x->s.units = NULL;
	x->s.nunits = 0;
	snprintf(x->s.state_dir, sizeof(x->s.state_dir), "%s/none", x->dir);
	if (np_systemd_load_originals(&x->s, err, sizeof(err)))
		fail_msg("load: %s", err);
	assert_string_equal(orig_cpus(x, "system.slice"), "0-7");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_moved, setup, teardown),
		cmocka_unit_test_setup_teardown(test_moved_both, setup, teardown),
		cmocka_unit_test_setup_teardown(test_moved_bad, setup, teardown),
		cmocka_unit_test_setup_teardown(test_state_unwritable, setup,
						teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
