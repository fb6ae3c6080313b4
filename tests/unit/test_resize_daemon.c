// SPDX-License-Identifier: Apache-2.0
/*
 * The daemon's in-place resize against a fake enforcer: the control
 * socket op "resize" and a spec file whose only change is the CPU count.
 * The current CPUs are kept; the state is saved before any cgroup write;
 * a grow's shared cgroups yield before the workload widens, a shrink's
 * workload narrows before the shared cgroups widen; a resize that cannot
 * be met (or cannot be saved) changes nothing; malformed requests are
 * refused with the field named.
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
};

static int setup(void **state)
{
	struct fx *x = fake_daemon_new(sizeof(*x), "resize");
	*state = x;
	return 0;
}

/* The answer to a request (owned by the caller). */
static const char *cpus_of(struct fx *x, const char *name)
{
	static char buf[64];
	int i = np_state_find(&x->fd.d.st, name);
	assert_true(i >= 0);
	np_cpuset_format(x->fd.d.st.w[i]->c[0].cpus, buf, sizeof(buf));
	return buf;
}

/* What is saved: state.json's text and the state journal's (records
 * since state.json was last written), in a static buffer. */
static const char *state_text(struct fx *x)
{
	static char buf[131072];
	static const char *const files[] = {"state.json", "journal"};
	size_t used = 0;

	for (size_t i = 0; i < 2; i++) {
		char path[256];
		FILE *f;
		snprintf(path, sizeof(path), "%s/state/%s", x->fd.dir,
			 files[i]);
		f = fopen(path, "r");
		if (!f) {
			assert_int_equal(i, 1); /* state.json is always there */
			continue;
		}
		used += fread(buf + used, 1, sizeof(buf) - 1 - used, f);
		fclose(f);
	}
	buf[used] = '\0';
	return buf;
}

#define LSE_WEB                                                                \
	"{\"name\": \"web\", \"cgroup\": \"web\", \"qos\": \"LSE\", "         \
	"\"containers\": [{\"name\": \"main\", \"cpu\": \"1\"}]}"
#define LS_API                                                                 \
	"{\"name\": \"api\", \"cgroup\": \"api\", \"qos\": \"LS\", "          \
	"\"containers\": [{\"name\": \"main\", \"cpu\": \"500m\"}]}"

static void resize_ok(struct fx *x, const char *text, const char *prev,
		      const char *now)
{
	json_t *r = fake_daemon_ask(&x->fd, text);
	if (!json_is_true(json_object_get(r, "resized")))
		fail_msg("not resized: %s",
			 json_dumps(r, JSON_COMPACT) ?: "?");
	assert_string_equal(json_string_value(json_object_get(r, "previous")),
			    prev);
	assert_string_equal(json_string_value(json_object_get(r, "cpus")), now);
	json_decref(r);
}

/* Grow 1 -> 2 and back: the kept CPU never leaves; the writes in the safe
 * order; saved first. */
static void test_grow_shrink_order(void **state)
{
	struct fx *x = *state;
	char first[64];
	int yield, widen, narrow, back;

	fake_daemon_admit(&x->fd, LS_API);
	fake_daemon_admit(&x->fd, LSE_WEB);
	snprintf(first, sizeof(first), "%s", cpus_of(x, "web"));
	assert_string_equal(first, "1");
	fake_log_clear(x->fd.f);
	resize_ok(x, "{\"op\":\"resize\",\"name\":\"web\",\"cpus\":2}", "1",
		  "1,5");
	/* saved (state.json's layout aside) with the baseline */
	assert_non_null(strstr(state_text(x), "\"1,5\""));
	assert_non_null(strstr(state_text(x), "\"baseline\""));
	assert_int_equal(x->fd.d.n.resized, 1);
	assert_int_equal(x->fd.d.n.released, 0);
	/* grow: the shared cgroup and the host slice yield 5 first */
	yield = fake_log_find(x->fd.f, "write api cpuset.cpus=0,2-4,6-7");
	widen = fake_log_find(x->fd.f, "write web cpuset.cpus=1,5");
	if (yield < 0 || widen < 0 || yield > widen ||
	    fake_log_find(x->fd.f, "set host system.slice") > widen)
		fail_msg("grow writes:\n%s", fake_log(x->fd.f));
	fake_log_clear(x->fd.f);
	resize_ok(x, "{\"op\":\"resize\",\"name\":\"web\",\"cpus\":1}", "1,5",
		  "1");
	/* shrink: the workload gives 5 up before the shared cgroup gets it */
	narrow = fake_log_find(x->fd.f, "write web cpuset.cpus=1 ");
	back = fake_log_find(x->fd.f, "write api cpuset.cpus=0,2-7");
	if (narrow < 0 || back < 0 || narrow > back)
		fail_msg("shrink writes:\n%s", fake_log(x->fd.f));
	assert_int_equal(x->fd.d.n.resized, 2);
	/* the same count again: nothing written, nothing saved */
	fake_log_clear(x->fd.f);
	{
		uint64_t saves = x->fd.d.n.state_saves;
		resize_ok(x, "{\"op\":\"resize\",\"name\":\"web\",\"cpus\":1}",
			  "1", "1");
		assert_int_equal(x->fd.d.n.state_saves, saves);
		assert_string_equal(fake_log(x->fd.f), "");
	}
}

/* Cannot be met, or cannot be saved: the old allocation stays, nothing is
 * written, the answer says why. */
static void test_refused_unchanged(void **state)
{
	struct fx *x = *state;
	char before[131072], dir[sizeof(x->fd.d.cfg.state_dir)];
	struct np_wl_meta *m;
	json_t *r;

	fake_daemon_admit(&x->fd, LS_API);
	fake_daemon_admit(&x->fd, LSE_WEB);
	m = np_daemon_meta_find(&x->fd.d, "web");
	assert_non_null(m);
	snprintf(before, sizeof(before), "%s", state_text(x));
	fake_log_clear(x->fd.f);
	/* restricted: web's node 0 holds 1,5 free only, 0,4 are reserved */
	r = fake_daemon_ask(&x->fd, "{\"op\":\"resize\",\"name\":\"web\",\"cpus\":3}");
	assert_true(json_is_true(json_object_get(r, "ok")));
	assert_false(json_is_true(json_object_get(r, "resized")));
	assert_non_null(strstr(
	    json_string_value(json_object_get(json_object_get(r, "decision"),
					      "reason")),
	    "topology affinity error"));
	assert_string_equal(json_string_value(json_object_get(r, "cpus")), "1");
	json_decref(r);
	assert_string_equal(state_text(x), before);
	assert_string_equal(fake_log(x->fd.f), "");
	/* the state cannot be saved: refused, nothing changed */
	assert_true(strlen(x->fd.d.cfg.state_dir) + 6 < sizeof(dir));
	memcpy(dir, x->fd.d.cfg.state_dir, sizeof(dir));
	strcat(x->fd.d.cfg.state_dir, "/none");
	r = fake_daemon_ask(&x->fd, "{\"op\":\"resize\",\"name\":\"web\",\"cpus\":2}");
	memcpy(x->fd.d.cfg.state_dir, dir, sizeof(dir));
	assert_false(json_is_true(json_object_get(r, "ok")));
	assert_non_null(strstr(json_string_value(json_object_get(r, "error")),
			       "was not resized, nothing changed"));
	json_decref(r);
	assert_string_equal(cpus_of(x, "web"), "1");
	assert_int_equal(x->fd.d.n.resized, 0);
	assert_string_equal(fake_log(x->fd.f), "");
	assert_string_equal(state_text(x), before);
	/* the allocation put back keeps the workload's record */
	assert_ptr_equal(np_daemon_meta_find(&x->fd.d, "web"), m);
	assert_true(m->established);
}

static void bad(struct fx *x, const char *text, const char *needle)
{
	json_t *r = fake_daemon_ask(&x->fd, text);
	const char *e = json_string_value(json_object_get(r, "error"));
	assert_false(json_is_true(json_object_get(r, "ok")));
	if (!e || !strstr(e, needle))
		fail_msg("error \"%s\" lacks \"%s\"", e ? e : "", needle);
	json_decref(r);
}

static void test_malformed(void **state)
{
	struct fx *x = *state;
	char before[131072];

	fake_daemon_admit(&x->fd, LS_API);
	fake_daemon_admit(&x->fd, LSE_WEB);
	snprintf(before, sizeof(before), "%s", state_text(x));
	fake_log_clear(x->fd.f);
	bad(x, "{\"op\":\"resize\",\"name\":\"nosuch\",\"cpus\":2}",
	    "resize: no workload named \"nosuch\"");
	bad(x, "{\"op\":\"resize\",\"name\":\"api\",\"cpus\":2}",
	    "has no exclusive CPUs");
	bad(x, "{\"op\":\"resize\",\"name\":\"web\",\"cpus\":0}",
	    "cpus: expected an integer 1..4096");
	bad(x, "{\"op\":\"resize\",\"name\":\"web\",\"cpus\":-1}",
	    "cpus: expected an integer 1..4096");
	bad(x, "{\"op\":\"resize\",\"name\":\"web\",\"cpus\":4294967296}",
	    "cpus: expected an integer 1..4096");
	bad(x, "{\"op\":\"resize\",\"name\":\"web\",\"cpus\":\"2\"}",
	    "cpus: expected an integer");
	bad(x, "{\"op\":\"resize\",\"name\":\"web\",\"cpus\":9}",
	    "cpus: 9 is out of range 1..8");
	bad(x, "{\"op\":\"resize\",\"name\":\"web\"}",
	    "cpus: required field is missing");
	bad(x, "{\"op\":\"resize\",\"cpus\":2}", "name: required field");
	bad(x, "{\"op\":\"resize\",\"name\":\"web\",\"cpus\":2,\"x\":1}",
	    "x: unknown field for op \"resize\"");
	bad(x,
	    "{\"op\":\"resize\",\"name\":\"web\",\"container\":\"side\","
	    "\"cpus\":2}",
	    "has no container \"side\"");
	assert_string_equal(state_text(x), before);
	assert_string_equal(fake_log(x->fd.f), "");
}

static void put_spec(struct fx *x, const char *text)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/specs/db.json", x->fd.dir);
	fake_write_file(path, text);
}

/* The spec directory as a cycle takes it in: the files read and queued
 * (collect), then decided (admitted, resized, released). */
static void scan_specs(struct fx *x)
{
	assert_int_equal(np_daemon_scan_specs(&x->fd.d), 0);
	np_daemon_decide_specs(&x->fd.d);
}

/* A spec file whose CPU count changes is resized in place, not released;
 * any other change still releases and admits it; the socket does not
 * resize a spec file's workload. */
static void test_spec_file(void **state)
{
	struct fx *x = *state;
	int yield, widen;

	put_spec(x, "{\"name\":\"db\",\"qos\":\"LSE\",\"containers\":"
		    "[{\"name\":\"m\",\"cpu\":\"1\"}]}");
	scan_specs(x);
	fake_daemon_admit(&x->fd, LS_API);
	assert_string_equal(cpus_of(x, "db"), "1");
	fake_log_clear(x->fd.f);
	put_spec(x, "{\"name\":\"db\",\"qos\":\"LSE\",\"containers\":"
		    "[{\"name\":\"m\",\"cpu\":\"2\"}]}");
	scan_specs(x);
	assert_int_equal(np_daemon_reconcile(&x->fd.d), 0);
	assert_string_equal(cpus_of(x, "db"), "1,5");
	assert_int_equal(x->fd.d.n.released, 0);
	assert_int_equal(x->fd.d.n.resized, 1);
	yield = fake_log_find(x->fd.f, "write api cpuset.cpus=0,2-4,6-7");
	widen = fake_log_find(x->fd.f, "write db cpuset.cpus=1,5");
	if (yield < 0 || widen < 0 || yield > widen)
		fail_msg("grow writes:\n%s", fake_log(x->fd.f));
	/* scanned again: unchanged, nothing done */
	scan_specs(x);
	assert_int_equal(x->fd.d.n.resized, 1);
	bad(x, "{\"op\":\"resize\",\"name\":\"db\",\"cpus\":1}",
	    "comes from the spec file");
	/* too big for node 0 under restricted: refused, kept, said */
	put_spec(x, "{\"name\":\"db\",\"qos\":\"LSE\",\"containers\":"
		    "[{\"name\":\"m\",\"cpu\":\"3\"}]}");
	scan_specs(x);
	assert_string_equal(cpus_of(x, "db"), "1,5");
	assert_int_equal(x->fd.d.n.released, 0);
	/* another change (the class): released and admitted again */
	put_spec(x, "{\"name\":\"db\",\"qos\":\"LSR\",\"containers\":"
		    "[{\"name\":\"m\",\"cpu\":\"2\"}]}");
	scan_specs(x);
	assert_int_equal(x->fd.d.n.released, 1);
	assert_true(np_state_find(&x->fd.d.st, "db") >= 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_grow_shrink_order, setup,
						fake_daemon_teardown),
		cmocka_unit_test_setup_teardown(test_refused_unchanged, setup,
						fake_daemon_teardown),
		cmocka_unit_test_setup_teardown(test_malformed, setup,
						fake_daemon_teardown),
		cmocka_unit_test_setup_teardown(test_spec_file, setup,
						fake_daemon_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
