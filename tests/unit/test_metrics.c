// SPDX-License-Identifier: Apache-2.0
/*
 * /metrics (daemon/serve/metrics.c, metrics_render.c): the listen address
 * parser, histograms and the rejection table, the daemon's families for a
 * daemon on a fake enforcer (values checked against what it admitted),
 * label escaping, and the HTTP server on a Unix socket and on a TCP port
 * picked by the kernel.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon/daemon_internal.h"
#include "daemon/serve/metrics.h"
#include "fake_daemon.h"

static void test_addr_parse(void **state)
{
	static const char *const good[] = {"127.0.0.1:9464", "0.0.0.0:1",
					   "[::1]:9464", "[::]:0",
					   "unix:/run/np/metrics.sock"};
	static const struct {
		const char *s, *why;
	} bad[] = {
		{"localhost:9464", "not an IPv4 address"},
		{"127.0.0.1", "expected \"HOST:PORT\""},
		{":9464", "expected \"HOST:PORT\""},
		{"127.0.0.1:", "is not a port"},
		{"127.0.0.1:65536", "is not a port"},
		{"127.0.0.1:-1", "is not a port"},
		{"127.0.0.1:94a", "is not a port"},
		{"[::1:9464", "in brackets"},
		{"[zz]:9464", "not an IPv6 address"},
		{"unix:run/x", "absolute path"},
		{"unix:/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		 "longer than"},
	};
	struct np_metrics_addr a;
	char why[256];

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		assert_int_equal(np_metrics_addr_parse(good[i], &a, why,
						       sizeof(why)),
				 0);
	assert_int_equal(np_metrics_addr_parse("127.0.0.1:9464", &a, why,
					       sizeof(why)),
			 0);
	assert_int_equal(a.sa.ss_family, AF_INET);
	assert_int_equal(ntohs(((struct sockaddr_in *)&a.sa)->sin_port), 9464);
	assert_int_equal(np_metrics_addr_parse("unix:/x.sock", &a, why,
					       sizeof(why)),
			 0);
	assert_true(a.unix_path);
	assert_string_equal(((struct sockaddr_un *)&a.sa)->sun_path, "/x.sock");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why[0] = '\0';
		assert_int_equal(np_metrics_addr_parse(bad[i].s, &a, why,
						       sizeof(why)),
				 -EINVAL);
		if (!strstr(why, bad[i].why))
			fail_msg("'%s': '%s' does not say '%s'", bad[i].s, why,
				 bad[i].why);
	}
}

static void test_hist(void **state)
{
	struct np_hist h = {0};

	(void)state;
	np_hist_add(&h, np_hist_admission_le, 0.00001); /* = first bound */
	np_hist_add(&h, np_hist_admission_le, 0.0000100001);
	np_hist_add(&h, np_hist_admission_le, 0.003);
	np_hist_add(&h, np_hist_admission_le, 2.0); /* past the last */
	assert_int_equal(h.bucket[0], 1);
	assert_int_equal(h.bucket[1], 1);
	assert_int_equal(h.bucket[8], 1); /* 0.0025 < 0.003 <= 0.005 */
	assert_int_equal(h.inf, 1);
	assert_int_equal(h.count, 4);
	assert_true(h.sum > 2.003 && h.sum < 2.0031);
}

static void test_rej_count(void **state)
{
	struct np_rej_count t[NP_REJ_RESOURCES];
	char name[32];

	(void)state;
	memset(t, 0, sizeof(t));
	np_rej_count_add(t, "cpu");
	np_rej_count_add(t, "cpu");
	np_rej_count_add(t, "");
	assert_string_equal(t[0].resource, "cpu");
	assert_int_equal(t[0].n, 2);
	assert_string_equal(t[1].resource, "other");
	for (int i = 0; i < 40; i++) {
		snprintf(name, sizeof(name), "dev%d", i);
		np_rej_count_add(t, name);
	}
	/* 29 new names fit beside cpu and other (one entry kept for
	 * "other" while it is not there); the rest is "other" */
	assert_string_equal(t[NP_REJ_RESOURCES - 2].resource, "dev28");
	assert_string_equal(t[NP_REJ_RESOURCES - 1].resource, "");
	assert_int_equal(t[1].n, 1 + 11);
	memset(t, 0, sizeof(t));
	for (int i = 0; i < 40; i++) {
		snprintf(name, sizeof(name), "dev%d", i);
		np_rej_count_add(t, name);
	}
	assert_string_equal(t[NP_REJ_RESOURCES - 2].resource, "dev30");
	assert_string_equal(t[NP_REJ_RESOURCES - 1].resource, "other");
	assert_int_equal(t[NP_REJ_RESOURCES - 1].n, 9);
}

static json_t *request(struct np_daemon *d, const char *text)
{
	json_t *req = json_loads(text, 0, NULL), *resp;

	assert_non_null(req);
	resp = fake_daemon_serve(d, req);
	json_decref(req);
	return resp;
}

static bool has_line(const char *text, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = text; (p = strstr(p, line)); p += n)
		if ((p == text || p[-1] == '\n') && p[n] == '\n')
			return true;
	return false;
}

#define assert_line(text, line)                                            \
	do {                                                               \
		if (!has_line(text, line))                                 \
			fail_msg("no line '%s' in:\n%s", line, text);      \
	} while (0)

static void test_render_daemon(void **state)
{
	struct fake_daemon x;
	size_t len = 0;
	char *t;

	(void)state;
	fake_daemon_start(&x, "metrics");
	json_decref(request(&x.d, "{\"op\":\"admit\",\"spec\":{\"name\":\"db\","
				  "\"qos\":\"LSE\",\"containers\":[{\"name\":"
				  "\"m\",\"cpu\":\"2\"}]}}"));
	json_decref(request(&x.d, "{\"op\":\"admit\",\"spec\":{\"name\":\"web\","
				  "\"qos\":\"LS\",\"containers\":[{\"name\":"
				  "\"m\",\"cpu\":\"1\"}]}}"));
	json_decref(request(&x.d, "{\"op\":\"admit\",\"spec\":{\"name\":\"big\","
				  "\"qos\":\"LSE\",\"containers\":[{\"name\":"
				  "\"m\",\"cpu\":\"7\"}]}}"));
	/* the pod shared pool would be empty: the kubelet's kind */
	json_decref(request(&x.d, "{\"op\":\"admit\",\"spec\":{\"name\":"
				  "\"pp\",\"qos\":\"Guaranteed\",\"resources\":"
				  "{\"cpu\":\"2\"},\"containers\":[{\"name\":"
				  "\"a\",\"cpu\":\"2\"},{\"name\":\"s\"}]}}"));
	np_rej_count_add(x.d.rej_by, "a\"b\\c\nd");
	t = np_metrics_render_daemon(&x.d, &len);
	assert_non_null(t);
	assert_int_equal(strlen(t), len);
	/* node 0 = 0,1,4,5 with 0,4 reserved: db has the core 1,5 */
	assert_line(t, "numaplace_cpus{pool=\"online\",node=\"0\"} 4");
	assert_line(t, "numaplace_cpus{pool=\"reserved\",node=\"0\"} 2");
	assert_line(t, "numaplace_cpus{pool=\"exclusive\",node=\"0\"} 2");
	assert_line(t, "numaplace_cpus{pool=\"shared\",node=\"0\"} 0");
	assert_line(t, "numaplace_cpus{pool=\"shared\",node=\"1\"} 4");
	assert_line(t, "numaplace_cpus{pool=\"exclusive\",node=\"1\"} 0");
	assert_line(t, "numaplace_cpus{pool=\"offline\",node=\"1\"} 0");
	assert_line(t, "numaplace_workloads{qos=\"LSE\"} 1");
	assert_line(t, "numaplace_workloads{qos=\"LS\"} 1");
	assert_line(t, "numaplace_workloads{qos=\"BE\"} 0");
	assert_line(t, "numaplace_admissions_total{result=\"admitted\"} 2");
	assert_line(t, "numaplace_admissions_total{result=\"rejected\"} 2");
	assert_line(t, "numaplace_rejections_total{resource=\"cpu\"} 2");
	assert_line(t, "numaplace_rejections_by_kind_total{error_kind="
		       "\"EmptyPodSharedPoolError\"} 1");
	assert_line(t, "numaplace_rejections_by_kind_total{error_kind="
		       "\"TopologyAffinityError\"} 1");
	assert_line(t, "numaplace_rejections_total{resource=\"a\\\"b\\\\c\\nd\"} 1");
	assert_line(t, "numaplace_admission_duration_seconds_count 4");
	assert_line(t, "numaplace_admission_duration_seconds_bucket{le=\"+Inf\"} 4");
	assert_line(t, "numaplace_verification_enabled 0");
	assert_line(t, "# TYPE numaplace_reconcile_duration_seconds histogram");
	free(t);
	/* cumulative buckets never go down */
	np_hist_add(&x.d.hist_reconcile, np_hist_reconcile_le, 0.003);
	np_hist_add(&x.d.hist_reconcile, np_hist_reconcile_le, 20);
	t = np_metrics_render_daemon(&x.d, &len);
	{
		unsigned long long prev = 0, v;
		int n = 0;
		for (const char *p = t;
		     (p = strstr(p, "numaplace_reconcile_duration_seconds_bucket"));
		     p++) {
			assert_int_equal(sscanf(strchr(p, ' '), " %llu", &v), 1);
			assert_true(v >= prev);
			prev = v;
			n++;
		}
		assert_int_equal(n, NP_HIST_BUCKETS + 1);
		assert_int_equal(prev, x.d.hist_reconcile.count);
	}
	free(t);
	fake_daemon_stop(&x);
}

/* GET path over fd; the whole answer. */
static char *http_get(int fd, const char *path)
{
	static char buf[65536];
	char req[256];
	size_t n = 0;
	ssize_t r;

	snprintf(req, sizeof(req),
		 "GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
		 path);
	assert_int_equal(write(fd, req, strlen(req)), (ssize_t)strlen(req));
	while ((r = read(fd, buf + n, sizeof(buf) - 1 - n)) > 0)
		n += (size_t)r;
	buf[n] = '\0';
	close(fd);
	return buf;
}

static int connect_unix(const char *path)
{
	struct sockaddr_un un = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	snprintf(un.sun_path, sizeof(un.sun_path), "%s", path);
	assert_int_equal(connect(fd, (struct sockaddr *)&un, sizeof(un)), 0);
	return fd;
}

static int connect_tcp(unsigned port)
{
	struct sockaddr_in in = {.sin_family = AF_INET,
				 .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	assert_int_equal(connect(fd, (struct sockaddr *)&in, sizeof(in)), 0);
	return fd;
}

static void test_server(void **state)
{
	struct np_metrics *m;
	char dir[] = "/tmp/np-metrics-XXXXXX", sock[128], listen[160], err[256];
	char *body;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(sock, sizeof(sock), "%s/m.sock", dir);
	snprintf(listen, sizeof(listen), "unix:%s", sock);
	assert_int_equal(np_metrics_start(&m, listen, err, sizeof(err)), 0);
	body = http_get(connect_unix(sock), "/metrics");
	assert_non_null(strstr(body, "HTTP/1.1 200"));
	assert_non_null(strstr(body, "text/plain; version=0.0.4"));
	np_metrics_publish(m, strdup("numaplace_test 1\n"),
			   strlen("numaplace_test 1\n"), "", 0, NULL, 0);
	body = http_get(connect_unix(sock), "/metrics");
	assert_non_null(strstr(body, "\r\n\r\nnumaplace_test 1\n"));
	body = http_get(connect_unix(sock), "/");
	assert_non_null(strstr(body, "HTTP/1.1 200"));
	body = http_get(connect_unix(sock), "/metricsx");
	assert_non_null(strstr(body, "HTTP/1.1 404"));
	assert_int_equal(np_metrics_scrapes(m), 2);
	assert_int_equal(np_metrics_port(m), 0);
	/* a second server on the same path replaces a stale socket only
	 * when nothing listens there any more */
	np_metrics_stop(m);
	assert_int_equal(access(sock, F_OK), -1);

	assert_int_equal(np_metrics_start(&m, "127.0.0.1:0", err, sizeof(err)), 0);
	assert_true(np_metrics_port(m) > 0);
	np_metrics_publish(m, strdup("a 2\n"), 4, "", 0, NULL, 0);
	body = http_get(connect_tcp(np_metrics_port(m)), "/metrics");
	assert_non_null(strstr(body, "\r\n\r\na 2\n"));
	{
		struct np_metrics *m2;
		char l2[64];
		snprintf(l2, sizeof(l2), "127.0.0.1:%u", np_metrics_port(m));
		assert_int_equal(np_metrics_start(&m2, l2, err, sizeof(err)),
				 -EADDRINUSE);
		assert_null(m2);
		assert_non_null(strstr(err, "Address already in use"));
		assert_non_null(strstr(err, "metrics.listen"));
	}
	np_metrics_stop(m);
	assert_int_equal(np_metrics_start(&m, "bogus", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "metrics.listen 'bogus'"));
	rmdir(dir);
}

static void test_render_bpf_without_pins(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	np_metrics_render_bpf(f, "/nonexistent/np-pins", 99, NULL, 0);
	np_metrics_render_bpf(f, "", 99, NULL, 0);
	fclose(f);
	assert_int_equal(len, 0);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_addr_parse),
		cmocka_unit_test(test_hist),
		cmocka_unit_test(test_rej_count),
		cmocka_unit_test(test_render_daemon),
		cmocka_unit_test(test_server),
		cmocka_unit_test(test_render_bpf_without_pins),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
