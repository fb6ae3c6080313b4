// SPDX-License-Identifier: Apache-2.0
/*
 * Control socket client: np_ctl_call against a fake numaplaced (a forked
 * child serving a Unix socket in a temp dir with canned answers), the
 * status renderer on hand-made and library-made status objects, the
 * decision printer, and local spec validation for `numaplace admit`.
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

#define assert_contains(hay, needle)                                           \
	do {                                                                   \
		if (!strstr((hay), (needle)))                                  \
			fail_msg("\"%s\" does not contain \"%s\"", (hay),      \
				 (needle));                                    \
	} while (0)

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

/* ---- np_status_render --------------------------------------------------- */

/* Render into a string (freed by the caller); asserts success. */
static char *render(const json_t *status)
{
	char *buf = NULL, err[512] = "";
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int r;

	assert_non_null(f);
	r = np_status_render_err(status, f, err, sizeof(err));
	fclose(f);
	if (r)
		fail_msg("render: %d %s", r, err);
	return buf;
}

static json_t *parse(const char *s)
{
	json_error_t jerr;
	json_t *j = json_loads(s, 0, &jerr);
	if (!j)
		fail_msg("test JSON, column %d: %s", jerr.column, jerr.text);
	return j;
}

/* 2 sockets x 1 node x 2 cores x 2 threads: node 0 = cpus 0-3. */
#define TOPO8                                                                  \
	"{\"cpus\": ["                                                         \
	"{\"cpu\":0,\"core\":0,\"socket\":0,\"numa\":0,\"l3\":0},"             \
	"{\"cpu\":1,\"core\":0,\"socket\":0,\"numa\":0,\"l3\":0},"             \
	"{\"cpu\":2,\"core\":1,\"socket\":0,\"numa\":0,\"l3\":0},"             \
	"{\"cpu\":3,\"core\":1,\"socket\":0,\"numa\":0,\"l3\":0},"             \
	"{\"cpu\":4,\"core\":2,\"socket\":1,\"numa\":1,\"l3\":1},"             \
	"{\"cpu\":5,\"core\":2,\"socket\":1,\"numa\":1,\"l3\":1},"             \
	"{\"cpu\":6,\"core\":3,\"socket\":1,\"numa\":1,\"l3\":1},"             \
	"{\"cpu\":7,\"core\":3,\"socket\":1,\"numa\":1,\"l3\":1}],"            \
	"\"distances\": [[10,20],[20,10]],"                                    \
	"\"numa_nodes\": [{\"id\":0,\"memory\":8589934592},"                   \
	"{\"id\":1,\"memory\":8589934592}]}"

static const char hand_status[] =
    "{\"topology\": " TOPO8 ","
    " \"pools\": {\"reserved\":\"0,4\", \"shared\":\"0,2-4\","
    "  \"exclusive\":\"1,5-7\", \"be\":\"2-3,6-7\", \"allocatable\":\"2-3\","
    "  \"cpuSharedPools\":[{\"socket\":0,\"node\":0,\"cpuset\":\"0,2-3\"},"
    "                      {\"socket\":1,\"node\":1,\"cpuset\":\"4\"}],"
    "  \"beSharedPools\":[]},"
    " \"workloads\": ["
    "  {\"name\":\"web\",\"cgroup\":\"pods/web\",\"qos\":\"LSE\","
    "   \"class\":\"LSE\",\"cpuset\":\"1,5\",\"exclusive\":true,"
    "   \"mems\":\"0-1\",\"containers\":[{\"name\":\"main\","
    "   \"cpuset\":\"1,5\",\"exclusive\":true,\"mems\":\"0-1\","
    "   \"hint\":{\"mask\":[0,1],\"preferred\":false},\"devices\":{}}]},"
    "  {\"name\":\"api\",\"cgroup\":\"api\",\"qos\":\"LS\",\"class\":\"LS\","
    "   \"cpuset\":\"0,2-4\",\"exclusive\":false,\"mems\":\"0-1\","
    "   \"containers\":[{\"name\":\"main\",\"cpuset\":\"0,2-4\","
    "   \"exclusive\":false,\"mems\":\"0-1\",\"hint\":{\"mask\":null,"
    "   \"preferred\":true},\"devices\":{}}]},"
    "  {\"name\":\"db\",\"cgroup\":\"db\",\"qos\":\"Guaranteed\","
    "   \"class\":\"LSR\",\"cpuset\":\"6-7\",\"exclusive\":true,"
    "   \"mems\":\"1\",\"containers\":[{\"name\":\"pg\",\"cpuset\":\"6-7\","
    "   \"exclusive\":true,\"mems\":\"1\",\"hint\":{\"mask\":[1],"
    "   \"preferred\":true},\"devices\":{\"vendor.com/gpu\":"
    "   [\"0000:3b:00.0\"]}}]}],"
    " \"counters\": {\"cycles\":120,\"drift_repaired\":3,\"admitted\":4,"
    "  \"rejected\":1,\"released\":1,\"write_errors\":0,\"vanished\":2},"
    " \"rejections\": [{\"workload\":\"late\",\"resource\":\"cpu\","
    "  \"reason\":\"topology affinity error: no NUMA node fits\","
    "  \"time\":1700000000}],"
    " \"reconcile_period_s\": 10,"
    " \"last_cycle\": {\"time\":1700000100,\"writes\":2,"
    "  \"duration_us\":153}}";

static void test_render_hand_made(void **state)
{
	json_t *st = parse(hand_status);
	char *out;
	(void)state;

	out = render(st);
	assert_contains(out, "NUMA node 0 (socket 0): cpus 0-3\n"
			     "  0:R  1:A  2:.  3:.\n"
			     "NUMA node 1 (socket 1): cpus 4-7\n"
			     "  4:R  5:A  6:B  7:B\n"
			     "legend: R reserved  . shared  A web (LSE)  "
			     "B db (LSR)\n");
	/* pools and the shared pool per node */
	assert_contains(out, "  reserved     0,4\n");
	assert_contains(out, "  shared       0,2-4\n");
	assert_contains(out, "  BE           2-3,6-7\n");
	assert_contains(out, "  allocatable  2-3\n");
	assert_contains(out, "  node 0 (socket 0): 0,2-3\n");
	assert_contains(out, "  node 1 (socket 1): 4\n");
	/* the workloads table: letter, name, qos/class, cgroup, ... */
	assert_contains(out, "workloads: 3\n");
	assert_contains(out, "  A web   LSE             pods/web  1,5");
	assert_contains(out, "  . api   LS              api       0,2-4");
	assert_contains(out, "  B db    Guaranteed/LSR  db        6-7");
	assert_contains(out, "devices of db/pg: vendor.com/gpu 0000:3b:00.0");
	/* counters, also one the renderer does not know by name */
	assert_contains(out, "drift repaired 3");
	assert_contains(out, "rejected 1");
	assert_contains(out, "write errors 0");
	assert_contains(out, "vanished 2");
	assert_contains(out, "late (resource cpu): topology affinity error: "
			     "no NUMA node fits\n");
	assert_contains(out, ", 2 writes, 153 us (every 10 s)\n");
	free(out);

	json_decref(st);
}

/* Marks the picture does not normally show: offline, BE only, an exclusive
 * CPU without a listed owner, a CPU in no pool; many CPUs per node wrap. */
static void test_render_odd_cpus(void **state)
{
	json_t *st, *cpus = json_array();
	char *out;
	(void)state;

	for (int c = 0; c < 20; c++)
		json_array_append_new(cpus,
				      json_pack("{s:i,s:i,s:i,s:i,s:b}", "cpu",
						c, "core", c, "socket", 0,
						"numa", 0, "online", c != 3));
	st = json_pack("{s:{s:o},s:{s:s,s:s,s:s,s:s},s:[]}", "topology", "cpus",
		       cpus, "pools", "reserved", "0", "shared", "1,10-19",
		       "be", "2", "exclusive", "4", "workloads");
	out = render(st);
	assert_contains(out, "NUMA node 0 (socket 0): cpus 0-19\n"
			     "   0:R   1:.   2:b   3:x   4:?   5:-");
	assert_contains(out, "  11:.\n  12:.");
	assert_contains(out, "legend: R reserved  . shared  b BE only  "
			     "? exclusive, owner not listed\n"
			     "        - in no pool  x offline\n");
	assert_contains(out, "workloads: none\n");
	free(out);
	json_decref(st);
}

static int count(const char *hay, const char *needle)
{
	int n = 0;
	for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

/* A status assembled from the library's own JSON forms, as numaplaced
 * builds it. */
static void test_render_library_status(void **state)
{
	static const char *const specs[] = {
	    "{\"name\":\"web\",\"qos\":\"LSE\",\"containers\":"
	    "[{\"name\":\"main\",\"cpu\":\"2\"}]}",
	    "{\"name\":\"db\",\"qos\":\"LSR\",\"containers\":"
	    "[{\"name\":\"pg\",\"cpu\":\"2\"}]}",
	    "{\"name\":\"api\",\"qos\":\"LS\",\"containers\":"
	    "[{\"name\":\"main\",\"cpu\":\"500m\"}]}",
	};
	json_t *tj = parse(TOPO8),
	       *pj = parse("{\"cpu_policy\":\"static\",\"reserved_cpus\":"
			   "\"0,4\",\"topology_policy\":\"restricted\"}");
	struct np_workload_req *w = calloc(1, sizeof(*w));
	struct np_topology *t = NULL;
	struct np_node_policy pol;
	struct np_node_state ns;
	struct np_decision d;
	json_t *st, *ws = json_array(), *dj;
	char err[512], *out, *pic, *buf = NULL;
	size_t len = 0;
	FILE *f;
	(void)state;

	assert_non_null(w);
	assert_int_equal(
	    np_topology_from_json(&t, tj, "topology", err, sizeof(err)), 0);
	assert_int_equal(
	    np_policy_from_json(&pol, pj, "policy", err, sizeof(err)), 0);
	if (np_state_init(&ns, t, &pol, err, sizeof(err)))
		fail_msg("state: %s", err);
	for (size_t i = 0; i < 3; i++) {
		json_t *sj = parse(specs[i]);
		if (np_workload_req_from_json(w, sj, "spec", err,
					      sizeof(err)) ||
		    np_admit(&ns, w, &d, err, sizeof(err)))
			fail_msg("admit %zu: %s", i, err);
		assert_true(d.admitted);
		np_workload_req_free(w);
		json_decref(sj);
	}
	for (int i = 0; i < ns.nworkloads; i++)
		json_array_append_new(ws,
				      np_workload_alloc_to_json(&ns, &ns.w[i]));
	st = json_pack("{s:o,s:o,s:o,s:{s:i},s:[],s:f,s:{s:i,s:i,s:i}}",
		       "topology", np_topology_to_json(t), "pools",
		       np_pools_to_json(&ns), "workloads", ws, "counters",
		       "admitted", 3, "rejections", "reconcile_period_s", 0.5,
		       "last_cycle", "time", 0, "writes", 0, "duration_us", 0);
	out = render(st);
	pic = strdup(out);
	*strstr(pic, "legend:") = '\0';
	assert_int_equal(count(pic, ":A"), 2);
	assert_int_equal(count(pic, ":B"), 2);
	assert_int_equal(count(pic, ":R"), 2);
	assert_int_equal(count(pic, ":."), 2);
	assert_contains(pic, "0:R");
	assert_contains(pic, "4:R");
	assert_contains(out, "A web (LSE)  B db (LSR)\n");
	assert_contains(out, "  . api ");
	assert_contains(out, "counters: admitted 3\n");
	assert_contains(out, "last reconcile cycle: none yet (every 0.5 s)\n");
	free(pic);
	free(out);

	/* The decision printer on the last admission (api, shared) and on
	 * web, looked up again. */
	f = open_memstream(&buf, &len);
	dj = np_decision_to_json(&ns, &d);
	assert_int_equal(np_decision_render(dj, f), 0);
	json_decref(dj);
	d.alloc = &ns.w[np_state_find(&ns, "web")];
	dj = np_decision_to_json(&ns, &d);
	assert_int_equal(np_decision_render(dj, f), 0);
	json_decref(dj);
	fclose(f);
	assert_contains(buf, "admitted api: cpuset ");
	assert_contains(buf, "(LS, shared pool, hint any)\n"
			     "  main: cpuset ");
	assert_contains(buf, "admitted web: cpuset ");
	assert_contains(buf, " (LSE, hint 0 preferred)\n  main: cpuset ");
	assert_contains(buf, " exclusive, mems 0, hint 0 preferred\n");
	free(buf);

	json_decref(st);
	np_state_free(&ns);
	np_topology_free(t);
	json_decref(pj);
	json_decref(tj);
	free(w);
}

static void test_render_malformed(void **state)
{
	json_t *st = parse(hand_status), *a = json_array();
	char err[512] = "";
	FILE *f = fopen("/dev/null", "w");
	(void)state;

	assert_int_equal(np_status_render_err(a, f, err, sizeof(err)), -EINVAL);
	assert_contains(err, "status: expected an object");
	json_object_set_new(json_object_get(st, "pools"), "reserved",
			    json_string("0-x"));
	assert_int_equal(np_status_render_err(st, f, err, sizeof(err)),
			 -EINVAL);
	assert_contains(err, "status.pools.reserved: invalid cpu list");
	json_object_del(st, "topology");
	assert_int_equal(np_status_render(st, f), -EINVAL);
	assert_int_equal(np_status_render_err(st, f, err, sizeof(err)),
			 -EINVAL);
	assert_contains(err, "status.topology");
	fclose(f);
	json_decref(a);
	json_decref(st);
}

static void test_decision_rejected(void **state)
{
	json_t *d = parse("{\"admitted\":false,\"workload\":\"late\","
			  "\"resource\":\"cpu\",\"reason\":\"topology "
			  "affinity error: no fit\"}");
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	json_t *bad = parse("{\"name\":\"x\"}");
	(void)state;

	assert_int_equal(np_decision_render(d, f), 0);
	assert_int_equal(np_decision_render(bad, f), -EINVAL);
	fclose(f);
	assert_string_equal(buf, "rejected late: topology affinity error: "
				 "no fit (resource cpu)\n");
	free(buf);
	json_decref(bad);
	json_decref(d);
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

	assert_int_equal(np_ctl_load_spec("tools/examples/web-lse.json", &spec,
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
	    cmocka_unit_test(test_render_hand_made),
	    cmocka_unit_test(test_render_odd_cpus),
	    cmocka_unit_test(test_render_library_status),
	    cmocka_unit_test(test_render_malformed),
	    cmocka_unit_test(test_decision_rejected),
	    cmocka_unit_test(test_load_spec),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
