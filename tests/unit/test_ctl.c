// SPDX-License-Identifier: Apache-2.0
/*
 * Control socket client: np_ctl_call against a fake numaplaced (a forked
 * child serving a Unix socket in a temp dir with canned answers), and
 * local spec validation for `numaplace admit`. The renderers of the
 * answers are tested in test_status_render.c.
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
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "numaplace/admit.h"
#include "numaplace/ctl.h"
#include "numaplace/topology_json.h"
#include "fixtures.h"

/* ---- the fake server ---------------------------------------------------- */

struct srv {
	char dir[64];
	char path[128];
	pid_t pid;
};

typedef int (*behave_fn)(int fd);

static void mktempdir(char *dir, size_t len)
{
	snprintf(dir, len, "/tmp/np-ctl-XXXXXX");
	if (!mkdtemp(dir))
		fail_msg("mkdtemp: %s", strerror(errno));
}

static int listen_at(const char *path)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 4))
		fail_msg("bind/listen %s: %s", path, strerror(errno));
	return fd;
}

/* The child accepts one connection and runs fn; its exit status is fn's. */
static void srv_start(struct srv *s, behave_fn fn)
{
	int lfd;

	mktempdir(s->dir, sizeof(s->dir));
	snprintf(s->path, sizeof(s->path), "%s/ctl.sock", s->dir);
	lfd = listen_at(s->path);
	s->pid = fork();
	assert_true(s->pid >= 0);
	if (s->pid == 0) {
		int cfd = accept(lfd, NULL, NULL);
		_exit(cfd < 0 ? 90 : fn(cfd));
	}
	close(lfd);
}

static void srv_stop(struct srv *s)
{
	int status = 0;

	assert_int_equal(waitpid(s->pid, &status, 0), s->pid);
	unlink(s->path);
	rmdir(s->dir);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		fail_msg("fake server failed (status 0x%x)", status);
}

/* Child side: read one request line into buf (NUL-terminated), reading
 * `step` bytes at a time; returns its length or -1. */
static ssize_t srv_read_line(int fd, char *buf, size_t cap, size_t step)
{
	size_t len = 0;

	while (len + 1 < cap) {
		size_t want = cap - 1 - len < step ? cap - 1 - len : step;
		ssize_t k = read(fd, buf + len, want);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		len += (size_t)k;
		buf[len] = '\0';
		if (memchr(buf, '\n', len))
			return (ssize_t)len;
	}
	return -1;
}

static int srv_write(int fd, const char *s, size_t n)
{
	while (n) {
		ssize_t k = send(fd, s, n, MSG_NOSIGNAL);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		s += k;
		n -= (size_t)k;
	}
	return 0;
}

static int srv_puts(int fd, const char *s)
{
	return srv_write(fd, s, strlen(s));
}

/* Answer {"ok":true,"echo":REQUEST}. */
static int behave_echo(int fd)
{
	static char buf[4096];
	json_error_t jerr;
	json_t *req, *resp;
	char *out;
	int r;

	if (srv_read_line(fd, buf, sizeof(buf), sizeof(buf)) < 0)
		return 1;
	/* exactly one line, ending in the only newline */
	if (strchr(buf, '\n') != buf + strlen(buf) - 1)
		return 2;
	req = json_loads(buf, 0, &jerr);
	if (!req)
		return 3;
	resp = json_pack("{s:b,s:o}", "ok", 1, "echo", req);
	out = json_dumps(resp, JSON_COMPACT);
	r = srv_puts(fd, out) || srv_puts(fd, "\n");
	free(out);
	json_decref(resp);
	return r ? 4 : 0;
}

#define BIG_PAD 300000

/* Take a large request slowly (the client must handle short writes and
 * EAGAIN), then answer a large response in many small pieces. */
static int behave_chunks(int fd)
{
	char *buf = malloc(BIG_PAD + 4096), *out;
	json_error_t jerr;
	json_t *req, *resp;
	const char *pad;
	size_t n, off;
	ssize_t len;

	if (!buf)
		return 1;
	usleep(50000); /* let the client fill the socket buffer */
	len = srv_read_line(fd, buf, BIG_PAD + 4096, 997);
	if (len < 0)
		return 2;
	req = json_loads(buf, 0, &jerr);
	pad = json_string_value(json_object_get(req, "pad"));
	if (!pad || strlen(pad) != BIG_PAD)
		return 3;
	resp = json_pack("{s:b,s:s,s:i}", "ok", 1, "pad", pad, "n", 42);
	out = json_dumps(resp, JSON_COMPACT);
	n = strlen(out);
	/* 7-byte pieces first, then 4 KiB ones, a pause between each */
	for (off = 0; off < n;) {
		size_t k = off < 200 ? 7 : 4096;
		if (k > n - off)
			k = n - off;
		if (srv_write(fd, out + off, k))
			return 4;
		off += k;
		usleep(off < 200 ? 2000 : 200);
	}
	usleep(5000);
	if (srv_puts(fd, "\n"))
		return 5;
	free(out);
	free(buf);
	json_decref(resp);
	json_decref(req);
	return 0;
}

/* Read the request, never answer; exit when the client gives up. */
static int behave_silent(int fd)
{
	char buf[4096];
	if (srv_read_line(fd, buf, sizeof(buf), sizeof(buf)) < 0)
		return 1;
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	return 0;
}

static const char *canned;

/* Read the request, answer `canned` verbatim, close. */
static int behave_canned(int fd)
{
	char buf[4096];
	if (srv_read_line(fd, buf, sizeof(buf), sizeof(buf)) < 0)
		return 1;
	return srv_puts(fd, canned) ? 2 : 0;
}

/* Answer more than a line may hold, without a newline. */
static int behave_huge(int fd)
{
	char buf[4096];
	size_t sent = 0;

	if (srv_read_line(fd, buf, sizeof(buf), sizeof(buf)) < 0)
		return 1;
	memset(buf, 'x', sizeof(buf));
	while (sent < (size_t)NP_CTL_MAX_LINE + 8192) {
		if (srv_write(fd, buf, sizeof(buf)))
			break; /* the client gave up: fine */
		sent += sizeof(buf);
	}
	return 0;
}

static json_t *status_req(void)
{
	return json_pack("{s:s}", "op", "status");
}

/* ---- np_ctl_call -------------------------------------------------------- */

static void test_round_trip(void **state)
{
	struct srv s;
	json_t *req = json_pack("{s:s,s:s}", "op", "release", "name",
				"we\nb \"x\""),
	       *resp = NULL;
	char err[512] = "";
	(void)state;

	srv_start(&s, behave_echo);
	if (np_ctl_call(s.path, req, &resp, err, sizeof(err)))
		fail_msg("np_ctl_call: %s", err);
	srv_stop(&s);
	assert_int_equal(np_ctl_check(resp, err, sizeof(err)), 0);
	assert_true(json_equal(json_object_get(resp, "echo"), req));
	json_decref(resp);
	json_decref(req);
}

static volatile sig_atomic_t nalarm;

static void on_alarm(int sig)
{
	(void)sig;
	nalarm++;
}

static void test_chunks_and_eintr(void **state)
{
	struct sigaction sa = {.sa_handler = on_alarm}, old;
	struct itimerval it = {{0, 1000}, {0, 1000}}, off = {{0, 0}, {0, 0}};
	char *pad = malloc(BIG_PAD + 1), err[512] = "";
	json_t *req, *resp = NULL;
	struct srv s;
	int r;
	(void)state;

	assert_non_null(pad);
	memset(pad, 'p', BIG_PAD);
	pad[BIG_PAD] = '\0';
	req = json_pack("{s:s,s:s}", "op", "status", "pad", pad);
	srv_start(&s, behave_chunks);
	/* A signal every millisecond, without SA_RESTART: poll, send and
	 * recv see EINTR all along. */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, &old);
	nalarm = 0;
	setitimer(ITIMER_REAL, &it, NULL);
	r = np_ctl_call_timeout(s.path, req, &resp, err, sizeof(err), 10000);
	setitimer(ITIMER_REAL, &off, NULL);
	sigaction(SIGALRM, &old, NULL);
	srv_stop(&s);
	if (r)
		fail_msg("np_ctl_call: %d %s", r, err);
	assert_true(nalarm > 0);
	assert_int_equal(json_integer_value(json_object_get(resp, "n")), 42);
	assert_string_equal(json_string_value(json_object_get(resp, "pad")),
			    pad);
	json_decref(resp);
	json_decref(req);
	free(pad);
}

static void test_timeout(void **state)
{
	struct timespec t0, t1;
	json_t *req = status_req(), *resp = NULL;
	char err[512] = "";
	struct srv s;
	long ms;
	(void)state;

	srv_start(&s, behave_silent);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(
	    np_ctl_call_timeout(s.path, req, &resp, err, sizeof(err), 200),
	    -ETIMEDOUT);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	srv_stop(&s);
	ms = (t1.tv_sec - t0.tv_sec) * 1000 +
	     (t1.tv_nsec - t0.tv_nsec) / 1000000;
	assert_true(ms >= 190 && ms < 5000);
	assert_null(resp);
	assert_contains(err, "no answer from numaplaced at ");
	assert_contains(err, "within 200 ms");
	json_decref(req);
}

static void test_not_running(void **state)
{
	json_t *req = status_req(), *resp = NULL;
	char dir[64], path[128], want[256], err[512] = "";
	int fd;
	(void)state;

	mktempdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/none.sock", dir);
	assert_int_equal(np_ctl_call(path, req, &resp, err, sizeof(err)),
			 -ENOENT);
	snprintf(want, sizeof(want),
		 "numaplaced is not running (no socket at %s)", path);
	assert_string_equal(err, want);
	assert_null(resp);

	/* A socket file nobody listens on any more. */
	fd = listen_at(path);
	close(fd);
	assert_int_equal(np_ctl_call(path, req, &resp, err, sizeof(err)),
			 -ECONNREFUSED);
	snprintf(want, sizeof(want),
		 "numaplaced is not running (stale socket %s)", path);
	assert_string_equal(err, want);
	unlink(path);
	rmdir(dir);
	json_decref(req);
}

/* EACCES: a socket in a directory the caller may not enter. As root the
 * check runs in a child that becomes nobody. */
static void test_permission(void **state)
{
	json_t *req = status_req(), *resp = NULL;
	char dir[64], path[128], want[256], err[512] = "";
	int fd, status;
	pid_t pid;
	(void)state;

	mktempdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/ctl.sock", dir);
	fd = listen_at(path);
	chmod(dir, 0700);
	snprintf(want, sizeof(want), "permission denied on %s: run as root",
		 path);
	if (geteuid() == 0) {
		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			if (setgid(65534) || setuid(65534))
				_exit(80);
			int r = np_ctl_call(path, req, &resp, err, sizeof(err));
			_exit(r == -EACCES && !strcmp(err, want) ? 0 : 81);
		}
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
	} else {
		chmod(dir, 0);
		assert_int_equal(
		    np_ctl_call(path, req, &resp, err, sizeof(err)), -EACCES);
		assert_string_equal(err, want);
		chmod(dir, 0700);
	}
	close(fd);
	unlink(path);
	rmdir(dir);
	json_decref(req);
}

/* One canned answer; returns np_ctl_call's result. */
static int call_canned(const char *answer, json_t **resp, char *err,
		       size_t errlen)
{
	json_t *req = status_req();
	struct srv s;
	int r;

	canned = answer;
	srv_start(&s, behave_canned);
	r = np_ctl_call_timeout(s.path, req, resp, err, errlen, 5000);
	srv_stop(&s);
	json_decref(req);
	return r;
}

static void test_bad_answers(void **state)
{
	json_t *resp = NULL;
	char err[512] = "";
	(void)state;

	assert_int_equal(
	    call_canned("hello, I am not JSON\n", &resp, err, sizeof(err)),
	    -EPROTO);
	assert_null(resp);
	assert_contains(err, "answered with something that is not JSON");
	assert_contains(err, "\"hello, I am not JSON\"");

	assert_int_equal(call_canned("[1,2]\n", &resp, err, sizeof(err)),
			 -EPROTO);
	assert_contains(err, "not an object");

	assert_int_equal(call_canned("", &resp, err, sizeof(err)), -ECONNRESET);
	assert_contains(err, "closed the connection without answering");

	assert_int_equal(call_canned("{\"ok\":tr", &resp, err, sizeof(err)),
			 -EPROTO);
	assert_contains(err, "in the middle of its answer");

	/* No "ok": the call works, the check does not. */
	assert_int_equal(
	    call_canned("{\"status\":{}}\n", &resp, err, sizeof(err)), 0);
	assert_int_equal(np_ctl_check(resp, err, sizeof(err)), -EPROTO);
	assert_contains(err, "ok: expected true or false");
	json_decref(resp);
}

static void test_lenient_answers(void **state)
{
	json_t *resp = NULL;
	char err[512] = "";
	(void)state;

	/* A complete object before EOF, without its newline. */
	assert_int_equal(call_canned("{\"ok\":true}", &resp, err, sizeof(err)),
			 0);
	assert_int_equal(np_ctl_check(resp, err, sizeof(err)), 0);
	json_decref(resp);

	/* Two lines at once: the first is the answer. */
	assert_int_equal(call_canned("{\"ok\":true,\"n\":1}\n{\"ok\":true,"
				     "\"n\":2}\n",
				     &resp, err, sizeof(err)),
			 0);
	assert_int_equal(json_integer_value(json_object_get(resp, "n")), 1);
	json_decref(resp);
}

static void test_error_answer(void **state)
{
	json_t *resp = NULL;
	char err[512] = "";
	(void)state;

	assert_int_equal(
	    call_canned("{\"ok\":false,\"error\":\"release: no workload "
			"named \\\"web\\\"\"}\n",
			&resp, err, sizeof(err)),
	    0);
	assert_int_equal(np_ctl_check(resp, err, sizeof(err)), -EREMOTEIO);
	assert_string_equal(err, "release: no workload named \"web\"");
	json_decref(resp);
}

static void test_too_long(void **state)
{
	json_t *req = status_req(), *resp = NULL, *big;
	char err[512] = "", *pad;
	struct srv s;
	(void)state;

	srv_start(&s, behave_huge);
	assert_int_equal(
	    np_ctl_call_timeout(s.path, req, &resp, err, sizeof(err), 10000),
	    -EMSGSIZE);
	srv_stop(&s);
	assert_contains(err, "exceeds the 1048576 byte line limit");

	/* A request over the limit is refused before connecting. */
	pad = malloc(NP_CTL_MAX_LINE + 1);
	assert_non_null(pad);
	memset(pad, 'p', NP_CTL_MAX_LINE);
	pad[NP_CTL_MAX_LINE] = '\0';
	big = json_pack("{s:s,s:s}", "op", "admit", "pad", pad);
	assert_int_equal(
	    np_ctl_call("/nonexistent/np.sock", big, &resp, err, sizeof(err)),
	    -EMSGSIZE);
	assert_contains(err, "over the 1048576 byte line limit");
	json_decref(big);
	free(pad);
	json_decref(req);
}

static void test_bad_arguments(void **state)
{
	char path[200], err[512] = "";
	json_t *req = status_req(), *resp = NULL, *arr = json_array();
	(void)state;

	memset(path, 'a', sizeof(path) - 1);
	path[0] = '/';
	path[sizeof(path) - 1] = '\0';
	assert_int_equal(np_ctl_call(path, req, &resp, err, sizeof(err)),
			 -ENAMETOOLONG);
	assert_contains(err, "longer than 107 bytes");
	assert_int_equal(np_ctl_call("/x", arr, &resp, err, sizeof(err)),
			 -EINVAL);
	assert_contains(err, "request: expected a JSON object");
	json_decref(arr);
	json_decref(req);
}

/* ---- np_ctl_load_spec --------------------------------------------------- */

static char spec_path[128];

static void write_spec(const char *content)
{
	FILE *f = fopen(spec_path, "w");
	assert_non_null(f);
	fputs(content, f);
	fclose(f);
}

static void bad_spec(const char *content, const char *needle)
{
	json_t *spec = (json_t *)1;
	char err[512] = "";

	write_spec(content);
	assert_int_equal(np_ctl_load_spec(spec_path, &spec, err, sizeof(err)),
			 -EINVAL);
	assert_null(spec);
	assert_contains(err, spec_path);
	assert_contains(err, needle);
}

static void test_load_spec(void **state)
{
	char dir[64], err[512] = "";
	json_t *spec = NULL;
	(void)state;

	assert_int_equal(np_ctl_load_spec("dist/examples/web-lse.json", &spec,
					  err, sizeof(err)),
			 0);
	assert_string_equal(json_string_value(json_object_get(spec, "name")),
			    "web");
	json_decref(spec);

	mktempdir(dir, sizeof(dir));
	snprintf(spec_path, sizeof(spec_path), "%s/spec.json", dir);
	bad_spec("{\"name\":\"web\",\"qos\":\"LSE\",\"containers\":"
		 "[{\"name\":\"main\",\"cpu\":\"2\",\"memory\":\"2Gb\"}]}",
		 ": spec.containers[0].memory: quantity \"2Gb\" has an unknown "
		 "suffix \"Gb\"");
	bad_spec("{\"qos\":\"LSE\",\"containers\":[{\"name\":\"m\"}]}",
		 ": spec.name");
	bad_spec("{\"name\":\"web\",\"qos\":\"fast\",\"containers\":[]}",
		 ": spec.qos: \"fast\" is not LSE");
	bad_spec("{\"name\":\"web\",\"qos\":\"LSE\",\"containers\":"
		 "[{\"name\":\"m\",\"cpu\":\"2\"}],\"colour\":1}",
		 "colour");
	bad_spec("{\"name\":\"web\",", ": invalid JSON at line 1");
	bad_spec("[1]", ": spec: expected a workload spec object");
	unlink(spec_path);
	assert_int_equal(np_ctl_load_spec(spec_path, &spec, err, sizeof(err)),
			 -ENOENT);
	assert_contains(err, spec_path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_round_trip),
	    cmocka_unit_test(test_chunks_and_eintr),
	    cmocka_unit_test(test_timeout),
	    cmocka_unit_test(test_not_running),
	    cmocka_unit_test(test_permission),
	    cmocka_unit_test(test_bad_answers),
	    cmocka_unit_test(test_lenient_answers),
	    cmocka_unit_test(test_error_answer),
	    cmocka_unit_test(test_too_long),
	    cmocka_unit_test(test_bad_arguments),
	    cmocka_unit_test(test_load_spec),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
