// SPDX-License-Identifier: Apache-2.0
/*
 * systemd's D-Bus calls (userspace/enforce/systemd_bus.c) against a small
 * manager of our own: a child process serving the methods and properties
 * systemd 252 serves (GetUnitByPID, the unit's Id and Job "(uo)", a job's
 * JobType), on a socket pair. np_systemd_bus_job_of_pid, which a stop uses
 * to tell a restart from a stop: a restart job, no job, a manager that
 * never answers (the call gives up within its time, not sd-bus's 25 s), an
 * error reply named in the message.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-id128.h>

#include "enforce/systemd_bus.h"

#define UNIT_PATH "/org/freedesktop/systemd1/unit/numaplaced_2eservice"
#define JOB_PATH "/org/freedesktop/systemd1/job/7"

enum mode { JOB_RESTART, JOB_NONE, MUTE, NO_UNIT };

static int reply_get(sd_bus_message *m, enum mode mode)
{
	const char *iface, *prop;
	int r = sd_bus_message_read(m, "ss", &iface, &prop);

	if (r < 0)
		return r;
	if (!strcmp(prop, "Id"))
		return sd_bus_reply_method_return(m, "v", "s",
						  "numaplaced.service");
	if (!strcmp(prop, "Job"))
		return mode == JOB_RESTART
			   ? sd_bus_reply_method_return(m, "v", "(uo)", 7u,
							JOB_PATH)
			   : sd_bus_reply_method_return(m, "v", "(uo)", 0u,
							"/");
	if (!strcmp(prop, "JobType"))
		return sd_bus_reply_method_return(m, "v", "s", "restart");
	return sd_bus_reply_method_errorf(m, "org.freedesktop.DBus.Error.UnknownProperty",
					  "no %s", prop);
}

/* The child: answers calls until the peer hangs up. */
static void serve(int fd, enum mode mode)
{
	sd_bus *b = NULL;
	sd_id128_t id;

	if (sd_id128_randomize(&id) < 0 || sd_bus_new(&b) < 0 ||
	    sd_bus_set_fd(b, fd, fd) < 0 || sd_bus_set_server(b, 1, id) < 0 ||
	    sd_bus_set_anonymous(b, 1) < 0 || sd_bus_start(b) < 0)
		_exit(1);
	for (;;) {
		sd_bus_message *m = NULL;
		int r = sd_bus_process(b, &m);

		if (r < 0)
			_exit(0); /* the peer is gone */
		if (m && sd_bus_message_is_method_call(m, NULL, NULL) > 0 &&
		    mode != MUTE) {
			const char *member = sd_bus_message_get_member(m);
			if (!strcmp(member, "GetUnitByPID"))
				r = mode == NO_UNIT
					? sd_bus_reply_method_errorf(
						  m, "org.freedesktop.systemd1.NoUnitForPID",
						  "PID 1234 does not belong to any loaded unit.")
					: sd_bus_reply_method_return(m, "o", UNIT_PATH);
			else if (!strcmp(member, "Get"))
				r = reply_get(m, mode);
			if (r < 0)
				_exit(1);
		}
		sd_bus_message_unref(m);
		if (r == 0 && sd_bus_wait(b, UINT64_MAX) < 0)
			_exit(0);
	}
}

struct fx {
	pid_t child;
	sd_bus *bus;
};

static struct fx *start(enum mode mode)
{
	struct fx *x = calloc(1, sizeof(*x));
	int sv[2];

	assert_non_null(x);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	x->child = fork();
	assert_true(x->child >= 0);
	if (x->child == 0) {
		close(sv[0]);
		serve(sv[1], mode);
	}
	close(sv[1]);
	assert_int_equal(sd_bus_new(&x->bus), 0);
	assert_int_equal(sd_bus_set_fd(x->bus, sv[0], sv[0]), 0);
	assert_int_equal(sd_bus_set_anonymous(x->bus, 1), 0);
	assert_int_equal(sd_bus_start(x->bus), 0);
	return x;
}

static void stop(struct fx *x)
{
	int status;

	sd_bus_flush_close_unref(x->bus);
	kill(x->child, SIGTERM);
	waitpid(x->child, &status, 0);
	free(x);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* What the manager in `mode` says of pid 1234: its unit and the job's
 * type. */
static void job_of(enum mode mode, char *unit, size_t unitlen, char *type,
		   size_t typelen)
{
	struct fx *x = start(mode);
	char err[256];

	assert_int_equal(np_systemd_bus_job_of_pid(x->bus, 1234, 2000000, unit,
						   unitlen, type, typelen, err,
						   sizeof(err)),
			 0);
	stop(x);
}

static void test_restart_job(void **state)
{
	char unit[64], type[32];

	(void)state;
	job_of(JOB_RESTART, unit, sizeof(unit), type, sizeof(type));
	assert_string_equal(unit, "numaplaced.service");
	assert_string_equal(type, "restart");
}

static void test_no_job(void **state)
{
	char unit[64], type[32] = "x";

	(void)state;
	job_of(JOB_NONE, unit, sizeof(unit), type, sizeof(type));
	assert_string_equal(unit, "numaplaced.service");
	assert_string_equal(type, "");
}

/* A manager that does not answer (busy with a daemon-reload): the call
 * gives up after its time, with the call named. */
static void test_mute(void **state)
{
	struct fx *x = start(MUTE);
	char unit[64], type[32], err[256];
	double t0 = now_s(), dt;
	int r;

	(void)state;
	r = np_systemd_bus_job_of_pid(x->bus, 1234, 300000, unit, sizeof(unit),
				      type, sizeof(type), err, sizeof(err));
	dt = now_s() - t0;
	assert_int_equal(r, -ETIMEDOUT);
	assert_true(dt >= 0.29 && dt < 5.0);
	assert_non_null(strstr(err, "GetUnitByPID(1234)"));
	stop(x);
}

static void test_error_reply(void **state)
{
	struct fx *x = start(NO_UNIT);
	char unit[64], type[32], err[256];
	int r;

	(void)state;
	r = np_systemd_bus_job_of_pid(x->bus, 1234, 2000000, unit, sizeof(unit),
				      type, sizeof(type), err, sizeof(err));
	assert_true(r < 0);
	assert_non_null(strstr(err, "GetUnitByPID(1234)"));
	assert_non_null(strstr(err, "does not belong to any loaded unit"));
	assert_non_null(strstr(err, "org.freedesktop.systemd1.NoUnitForPID"));
	stop(x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_restart_job),
		cmocka_unit_test(test_no_job),
		cmocka_unit_test(test_mute),
		cmocka_unit_test(test_error_reply),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
