// SPDX-License-Identifier: Apache-2.0
/*
 * The daemon's log (userspace/basic/log.h), read back from stderr
 * redirected to a file: one line a call, the syslog priority first
 * ("<4>numaplaced: warning: ...", what journald files it by),
 * np_log_errno ending in the errno's text whichever sign it is given in and
 * returning the code, and a message longer than the line buffer cut to one
 * line, never split into two.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include <cmocka.h>

#include "basic/log.h"

static char path[64];
static int saved = -1;

/* stderr into a new file until read_back() */
static void capture(void)
{
	int fd;

	snprintf(path, sizeof(path), "/tmp/np-log-XXXXXX");
	assert_true((fd = mkstemp(path)) >= 0);
	fflush(stderr);
	assert_true((saved = dup(STDERR_FILENO)) >= 0);
	assert_int_equal(dup2(fd, STDERR_FILENO), STDERR_FILENO);
	close(fd);
}

/* What was logged since capture() (static buffer). */
static const char *read_back(void)
{
	static char buf[8192];
	FILE *fp;
	size_t n;

	fflush(stderr);
	assert_int_equal(dup2(saved, STDERR_FILENO), STDERR_FILENO);
	close(saved);
	assert_non_null(fp = fopen(path, "r"));
	n = fread(buf, 1, sizeof(buf) - 1, fp);
	buf[n] = '\0';
	fclose(fp);
	unlink(path);
	return buf;
}

static void test_lines(void **state)
{
	const char *out;

	(void)state;
	capture();
	np_log(LOG_WARNING, "drift in %s: cpuset.cpus is \"%s\"", "web", "4-7");
	np_log(LOG_DEBUG, "cycle %d", 7);
	out = read_back();
	assert_string_equal(out,
			    "<4>numaplaced: warning: drift in web: cpuset.cpus "
			    "is \"4-7\"\n"
			    "<7>numaplaced: debug: cycle 7\n");
}

static void test_errno(void **state)
{
	const char *out;
	char want[256];

	(void)state;
	capture();
	assert_int_equal(np_log_errno(LOG_ERR, -EROFS, "state %s", "/s"),
			 -EROFS);
	assert_int_equal(np_log_errno(LOG_ERR, EACCES, "open"), EACCES);
	out = read_back();
	snprintf(want, sizeof(want),
		 "<3>numaplaced: error: state /s: %s\n"
		 "<3>numaplaced: error: open: %s\n",
		 strerror(EROFS), strerror(EACCES));
	assert_string_equal(out, want);
}

static void test_long_line(void **state)
{
	static char big[5000];
	const char *out;
	size_t n;

	(void)state;
	memset(big, 'a', sizeof(big) - 1);
	capture();
	np_log_errno(LOG_ERR, -ENOSPC, "%s", big);
	np_log(LOG_INFO, "next");
	out = read_back();
	n = strcspn(out, "\n");
	assert_true(n > 1000 && n < 2048);
	assert_string_equal(out + n, "\n<6>numaplaced: info: next\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_lines),
	    cmocka_unit_test(test_errno),
	    cmocka_unit_test(test_long_line),
	};
	return cmocka_run_group_tests_name("log", tests, NULL, NULL);
}
