// SPDX-License-Identifier: Apache-2.0
/*
 * Control socket client: one request line, one response line (protocol in
 * include/numaplace/ctl.h), spec loading for `numaplace admit`, and the
 * human rendering of a status answer for `numaplace status`.
 */
#include "numaplace/admit.h"
#include "numaplace/error.h"
#include "numaplace/ctl.h"
#include "numaplace/topology_json.h"

#include "engine/json_util.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* ---- transport ---------------------------------------------------------- */

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Milliseconds left until deadline (-1 = none), for poll(). */
static int left_ms(long long deadline)
{
	long long l;
	if (deadline < 0)
		return -1;
	l = deadline - now_ms();
	if (l <= 0)
		return 0;
	return l > 1000000000 ? 1000000000 : (int)l;
}

/* Wait for events on fd; 0, -ETIMEDOUT or -errno. EINTR restarts with the
 * time that is left. */
static int wait_fd(int fd, short events, long long deadline)
{
	for (;;) {
		struct pollfd p = {.fd = fd, .events = events};
		int n = poll(&p, 1, left_ms(deadline));
		if (n > 0)
			return 0; /* ready, or an error the next call reports */
		if (n == 0)
			return -ETIMEDOUT;
		if (errno != EINTR)
			return -errno;
	}
}

static void timeout_text(char *buf, size_t len, int timeout_ms)
{
	if (timeout_ms % 1000 == 0)
		snprintf(buf, len, "%d s", timeout_ms / 1000);
	else
		snprintf(buf, len, "%d ms", timeout_ms);
}

static int connect_error(int e, const char *path, char *err, size_t errlen)
{
	switch (e) {
	case ENOENT:
		NP_ERR("numaplaced is not running (no socket at %s)", path);
		break;
	case ECONNREFUSED:
		NP_ERR("numaplaced is not running (stale socket %s)", path);
		break;
	case EACCES:
	case EPERM:
		NP_ERR("permission denied on %s: run as root", path);
		e = EACCES;
		break;
	default:
		NP_ERR("cannot connect to numaplaced at %s: %s", path,
		    strerror(e));
		break;
	}
	return -e;
}

static int ctl_connect(const char *path, long long deadline, int *fdp,
		       char *err, size_t errlen)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	size_t n = strlen(path);
	int fd, r;

	if (n == 0 || n >= sizeof(a.sun_path)) {
		NP_ERR("socket path \"%s\": %s", path,
		    n ? "longer than 107 bytes" : "empty");
		return n ? -ENAMETOOLONG : -EINVAL;
	}
	memcpy(a.sun_path, path, n + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		r = -errno;
		NP_ERR("socket: %s", strerror(-r));
		return r;
	}
	for (;;) {
		int e, soerr = 0;
		socklen_t sl = sizeof(soerr);

		if (!connect(fd, (struct sockaddr *)&a, sizeof(a)))
			break;
		e = errno;
		if (e == EISCONN)
			break;
		if (e == EINTR)
			continue;
		if (e == EAGAIN) {
			/* Listen backlog full: retry until the deadline. */
			int l = left_ms(deadline);
			if (l == 0) {
				r = -ETIMEDOUT;
				NP_ERR("numaplaced at %s is not accepting "
				    "connections (backlog full)",
				    path);
				goto fail;
			}
			usleep((useconds_t)(l < 0 || l > 10 ? 10 : l) * 1000);
			continue;
		}
		if (e != EINPROGRESS && e != EALREADY) {
			r = connect_error(e, path, err, errlen);
			goto fail;
		}
		r = wait_fd(fd, POLLOUT, deadline);
		if (r == -ETIMEDOUT) {
			NP_ERR("connecting to numaplaced at %s timed out", path);
			goto fail;
		}
		if (r) {
			NP_ERR("poll %s: %s", path, strerror(-r));
			goto fail;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl))
			soerr = errno;
		if (soerr) {
			r = connect_error(soerr, path, err, errlen);
			goto fail;
		}
		break;
	}
	*fdp = fd;
	return 0;
fail:
	close(fd);
	return r;
}

/* Write all of buf. Returns 0, -ETIMEDOUT, or -errno (-EPIPE when the
 * peer closed: its answer may still be readable). */
static int send_all(int fd, const char *buf, size_t len, long long deadline)
{
	size_t off = 0;

	while (off < len) {
		ssize_t k = send(fd, buf + off, len - off, MSG_NOSIGNAL);
		int r;
		if (k > 0) {
			off += (size_t)k;
			continue;
		}
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if ((r = wait_fd(fd, POLLOUT, deadline)))
				return r;
			continue;
		}
		return k < 0 ? -errno : -EPIPE;
	}
	return 0;
}

/*
 * Read up to and including the first '\n'. *linep is malloc'd, holds the
 * line without the newline, and is NUL-terminated. A final line without a
 * newline before EOF is returned with *terminated false.
 */
static int recv_line(int fd, long long deadline, char **linep, size_t *lenp,
		     bool *terminated)
{
	size_t cap = 4096, len = 0, scanned = 0;
	char *buf = malloc(cap + 1), *nl;
	int r;

	if (!buf)
		return -ENOMEM;
	*terminated = false;
	for (;;) {
		ssize_t k;

		nl = memchr(buf + scanned, '\n', len - scanned);
		if (nl) {
			len = (size_t)(nl - buf);
			*terminated = true;
			break;
		}
		scanned = len;
		if (len >= NP_CTL_MAX_LINE) {
			r = -EMSGSIZE;
			goto fail;
		}
		if (len == cap) {
			char *nb;
			cap = cap * 2 > NP_CTL_MAX_LINE ? NP_CTL_MAX_LINE
							: cap * 2;
			nb = realloc(buf, cap + 1);
			if (!nb) {
				r = -ENOMEM;
				goto fail;
			}
			buf = nb;
		}
		k = recv(fd, buf + len, cap - len, 0);
		if (k > 0) {
			len += (size_t)k;
			continue;
		}
		if (k == 0)
			break; /* EOF */
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK) {
			if ((r = wait_fd(fd, POLLIN, deadline)))
				goto fail;
			continue;
		}
		if (errno == ECONNRESET)
			break; /* like EOF: report what we have */
		r = -errno;
		goto fail;
	}
	buf[len] = '\0';
	*linep = buf;
	*lenp = len;
	return 0;
fail:
	free(buf);
	return r;
}

/* The start of a bad answer, printable, for error messages. */
static void excerpt(const char *s, size_t len, char *out, size_t outlen)
{
	size_t o = 0;
	for (size_t i = 0; i < len && o + 5 < outlen && i < 60; i++)
		out[o++] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
	if (len > 60 && o + 4 < outlen) {
		memcpy(out + o, "...", 3);
		o += 3;
	}
	out[o] = '\0';
}

int np_ctl_call_timeout(const char *socket_path, const json_t *request,
			json_t **response, char *err, size_t errlen,
			int timeout_ms)
{
	long long deadline = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
	char *req = NULL, *line = NULL, tbuf[32], ex[80];
	size_t reqlen, len = 0;
	bool terminated;
	json_error_t jerr;
	json_t *resp;
	int fd = -1, r, sr;

	*response = NULL;
	if (!socket_path)
		socket_path = NP_CTL_DEFAULT_SOCKET;
	timeout_text(tbuf, sizeof(tbuf), timeout_ms);
	if (!json_is_object(request)) {
		NP_ERR("request: expected a JSON object");
		return -EINVAL;
	}
	req = json_dumps(request, JSON_COMPACT | JSON_PRESERVE_ORDER);
	if (!req) {
		NP_ERR("request: cannot encode as JSON");
		return -ENOMEM;
	}
	reqlen = strlen(req);
	if (reqlen + 1 > NP_CTL_MAX_LINE) {
		NP_ERR("request is %zu bytes, over the %d byte line limit",
		    reqlen + 1, NP_CTL_MAX_LINE);
		r = -EMSGSIZE;
		goto out;
	}
	req[reqlen] = '\n'; /* replaces the NUL: req is sent by length */
	if ((r = ctl_connect(socket_path, deadline, &fd, err, errlen)))
		goto out;
	sr = send_all(fd, req, reqlen + 1, deadline);
	if (sr == -ETIMEDOUT) {
		r = sr;
		NP_ERR("numaplaced at %s did not take the request within %s",
		    socket_path, tbuf);
		goto out;
	}
	if (sr && sr != -EPIPE && sr != -ECONNRESET) {
		r = sr;
		NP_ERR("sending to numaplaced at %s: %s", socket_path,
		    strerror(-r));
		goto out;
	}
	/* Even after EPIPE an answer (e.g. "permission denied") may wait. */
	r = recv_line(fd, deadline, &line, &len, &terminated);
	if (r == -ETIMEDOUT) {
		NP_ERR("no answer from numaplaced at %s within %s", socket_path,
		    tbuf);
		goto out;
	}
	if (r == -EMSGSIZE) {
		NP_ERR("the answer from numaplaced at %s exceeds the %d byte "
		    "line limit",
		    socket_path, NP_CTL_MAX_LINE);
		goto out;
	}
	if (r) {
		NP_ERR("reading from numaplaced at %s: %s", socket_path,
		    strerror(-r));
		goto out;
	}
	if (!terminated && len == 0) {
		r = -ECONNRESET;
		if (sr)
			NP_ERR("numaplaced at %s closed the connection before "
			    "taking the request (%s)",
			    socket_path, strerror(-sr));
		else
			NP_ERR("numaplaced at %s closed the connection without "
			    "answering",
			    socket_path);
		goto out;
	}
	resp = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!resp) {
		r = -EPROTO;
		excerpt(line, len, ex, sizeof(ex));
		if (!terminated)
			NP_ERR("numaplaced at %s closed the connection in the "
			    "middle of its answer (%zu bytes: \"%s\")",
			    socket_path, len, ex);
		else
			NP_ERR("numaplaced at %s answered with something that is "
			    "not JSON (column %d: %s): \"%s\"",
			    socket_path, jerr.column, jerr.text, ex);
		goto out;
	}
	if (!json_is_object(resp)) {
		r = -EPROTO;
		excerpt(line, len, ex, sizeof(ex));
		NP_ERR("numaplaced at %s answered with JSON that is not an "
		    "object: \"%s\"",
		    socket_path, ex);
		json_decref(resp);
		goto out;
	}
	*response = resp;
	r = 0;
out:
	if (fd >= 0)
		close(fd);
	free(line);
	free(req);
	return r;
}

int np_ctl_call(const char *socket_path, const json_t *request,
		json_t **response, char *err, size_t errlen)
{
	return np_ctl_call_timeout(socket_path, request, response, err, errlen,
				   NP_CTL_TIMEOUT_MS);
}

int np_ctl_check(const json_t *response, char *err, size_t errlen)
{
	const json_t *ok = json_object_get(response, "ok");
	const char *msg;

	if (!json_is_boolean(ok)) {
		NP_ERR("malformed answer from numaplaced: ok: expected true or "
		    "false");
		return -EPROTO;
	}
	if (json_is_true(ok))
		return 0;
	msg = json_string_value(json_object_get(response, "error"));
	NP_ERR("%s", msg && *msg ? msg
			      : "numaplaced refused the request "
				"without saying why");
	return -EREMOTEIO;
}

/* ---- spec files --------------------------------------------------------- */

int np_ctl_load_spec(const char *path, json_t **spec, char *err, size_t errlen)
{
	bool is_stdin = !strcmp(path, "-");
	const char *label = is_stdin ? "stdin" : path;
	struct np_workload_req *w = NULL;
	char verr[512];
	json_error_t jerr;
	json_t *j;
	FILE *f;
	int r;

	*spec = NULL;
	f = is_stdin ? stdin : fopen(path, "re");
	if (!f) {
		r = -errno;
		NP_ERR("%s: %s", path, strerror(-r));
		return r;
	}
	j = json_loadf(f, JSON_REJECT_DUPLICATES, &jerr);
	if (!is_stdin)
		fclose(f);
	if (!j) {
		NP_ERR("%s: invalid JSON at line %d, column %d: %s", label,
		    jerr.line, jerr.column, jerr.text);
		return -EINVAL;
	}
	if (!json_is_object(j)) {
		NP_ERR("%s: spec: expected a workload spec object", label);
		r = -EINVAL;
		goto fail;
	}
	w = malloc(sizeof(*w));
	if (!w) {
		r = -ENOMEM;
		NP_ERR("%s: out of memory", label);
		goto fail;
	}
	r = np_workload_req_from_json(w, j, "spec", verr, sizeof(verr));
	np_workload_req_free(w);
	free(w);
	if (r) {
		NP_ERR("%s: %s", label, verr);
		goto fail;
	}
	*spec = j;
	return 0;
fail:
	json_decref(j);
	return r;
}

/* ---- status rendering --------------------------------------------------- */

/* Exclusive workloads get A-Z then a-z; R, b and x mean something else. */
static const char letters[] =
    "ABCDEFGHIJKLMNOPQSTUVWXYZacdefghijklmnopqrstuvwyz";

struct wl_row {
	const char *name, *qos, *cls, *cgroup, *cpuset, *mems;
	char sym;
	char qc[64];
	char *containers; /* malloc'd */
};

static const char *str_or(const json_t *o, const char *key, const char *def)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? s : def;
}

static const char *fmt_set(const np_cpuset *s, char *buf, size_t len)
{
	if (np_cpuset_empty(s))
		snprintf(buf, len, "(none)");
	else if (np_cpuset_format(s, buf, len) < 0)
		snprintf(buf, len, "(%d CPUs)", np_cpuset_count(s));
	return buf;
}

static const char *fmt_time(json_int_t t, char *buf, size_t len)
{
	struct tm tm;
	time_t tt = (time_t)t;
	if (t <= 0 || !localtime_r(&tt, &tm) ||
	    !strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm))
		snprintf(buf, len, "never");
	return buf;
}

/* "label item  item  item", wrapped before column 78; continuation lines
 * are indented by 8. */
struct wrap {
	FILE *out;
	int col;
	bool first;
};

static void wrap_start(struct wrap *w, FILE *out, const char *label)
{
	w->out = out;
	w->col = fprintf(out, "%s", label);
	w->first = true;
}

static void wrap_add(struct wrap *w, const char *text)
{
	int n = (int)strlen(text);
	if (!w->first && w->col + 2 + n > 78) {
		fprintf(w->out, "\n        ");
		w->col = 8;
	} else {
		fputs(w->first ? " " : "  ", w->out);
		w->col += w->first ? 1 : 2;
	}
	w->first = false;
	fputs(text, w->out);
	w->col += n;
}

static void wrap_end(struct wrap *w)
{
	fputc('\n', w->out);
}

static int digits(int v)
{
	int d = 1;
	while (v >= 10) {
		v /= 10;
		d++;
	}
	return d;
}

static char *container_names(const json_t *cs)
{
	size_t i, n = 0;
	const json_t *c;
	char *s;

	json_array_foreach(cs, i, c)
	{
		n += strlen(str_or(c, "name", "?")) + 1;
	}
	s = malloc(n + 2);
	if (!s)
		return NULL;
	s[0] = '\0';
	json_array_foreach(cs, i, c)
	{
		if (i)
			strcat(s, ",");
		strcat(s, str_or(c, "name", "?"));
	}
	if (!json_array_size(cs))
		strcpy(s, "-");
	return s;
}

/* "RESOURCE ID,ID" per resource: the first after `first`, the others after
 * `sep`. */
static void print_devices(FILE *out, const json_t *devices, const char *first,
			  const char *sep)
{
	const json_t *ids, *id;
	const char *res;
	size_t m;

	json_object_foreach((json_t *)devices, res, ids)
	{
		fprintf(out, "%s%s", first, res);
		first = sep;
		json_array_foreach(ids, m, id)
		{
			const char *s = json_string_value(id);
			fprintf(out, "%s%s", m ? "," : " ", s ? s : "?");
		}
	}
}

static void print_hint(FILE *out, const json_t *hint)
{
	const json_t *mask = json_object_get(hint, "mask"), *v;
	size_t i;

	if (!json_is_object(hint))
		return;
	if (!json_is_array(mask)) {
		fprintf(out, "hint any"); /* no NUMA preference */
		return;
	}
	fprintf(out, "hint ");
	json_array_foreach(mask, i, v)
	{
		fprintf(out, "%s%lld", i ? "," : "",
			(long long)json_integer_value(v));
	}
	fprintf(out, " %s",
		json_is_true(json_object_get(hint, "preferred"))
		    ? "preferred"
		    : "not preferred");
}

/* The "verification" object: which signals are active and why the others
 * are not, what the daemon did, and one line per workload with anything
 * counted (only the counters that are not zero). */
static void render_verification(const json_t *v, FILE *out)
{
	static const struct {
		const char *key, *fmt;
	} wl[] = {
		{"run_outside", "ran outside %lld switch(es)"},
		{"run_outside_ticks", "%lld tick(s) outside"},
		{"intrusions", "%lld intrusion(s)"},
		{"migrate_disallowed", "%lld migration(s) to a disallowed CPU"},
		{"outside_mems_bytes", "%lld byte(s) outside its mems"},
		{"transition", "%lld transition(s) (not violations)"},
	};
	const json_t *sig, *act, *ws, *x;
	const char *key;
	json_int_t dropped;

	if (!json_is_object(v))
		return;
	fprintf(out, "\nverification: %s", str_or(v, "state", "?"));
	if (json_is_string(json_object_get(v, "pin_dir")))
		fprintf(out, " (maps in %s)", str_or(v, "pin_dir", "?"));
	fputc('\n', out);
	sig = json_object_get(v, "signals");
	json_object_foreach((json_t *)sig, key, x)
		fprintf(out, "  %-20s %s\n", key,
			json_is_string(x) ? json_string_value(x) : "?");
	act = json_object_get(v, "actions");
	dropped = json_integer_value(json_object_get(v, "samples_dropped"));
	if (json_is_object(act)) {
		fprintf(out,
			"  actions: %lld cpuset rewrite(s), %lld partition(s), "
			"%lld page migration(s), %lld report(s)",
			(long long)json_integer_value(json_object_get(act, "rewrites")),
			(long long)json_integer_value(json_object_get(act, "partitioned")),
			(long long)json_integer_value(json_object_get(act, "migrations")),
			(long long)json_integer_value(json_object_get(act, "reports")));
		if (dropped > 0)
			fprintf(out, "; %lld sample(s) dropped", (long long)dropped);
		fputc('\n', out);
	}
	ws = json_object_get(v, "workloads");
	json_object_foreach((json_t *)ws, key, x)
	{
		bool viol = json_is_true(json_object_get(x, "violation"));
		double ratio = json_number_value(json_object_get(x, "remote_fault_ratio"));
		const char *sep = "";
		bool any = viol || ratio > 0;

		for (size_t i = 0; i < sizeof(wl) / sizeof(wl[0]); i++)
			any |= json_integer_value(json_object_get(x, wl[i].key)) > 0;
		if (!any)
			continue;
		fprintf(out, "  %s %s:", viol ? "VIOLATION" : "counted  ", key);
		for (size_t i = 0; i < sizeof(wl) / sizeof(wl[0]); i++) {
			json_int_t n = json_integer_value(json_object_get(x, wl[i].key));
			if (n <= 0)
				continue;
			fprintf(out, "%s ", sep);
			fprintf(out, wl[i].fmt, (long long)n);
			sep = ",";
		}
		if (ratio > 0)
			fprintf(out, "%s remote fault ratio %.2f", sep, ratio);
		fprintf(out, " (numaplace violations %s)\n", key);
	}
}

int np_status_render_err(const json_t *status, FILE *out, char *err,
			 size_t errlen)
{
	static const char *const pool_keys[] = {"reserved", "shared", "be",
						"allocatable", "exclusive"};
	static const char *const pool_names[] = {"reserved", "shared", "BE",
						 "allocatable", "exclusive"};
	static const char *const known_counters[] = {
	    "cycles",	"drift_repaired", "admitted",
	    "rejected", "released",	  "write_errors"};
	static const char *const counter_names[] = {
	    "cycles",	"drift repaired", "admitted",
	    "rejected", "released",	  "write errors"};
	const json_t *pools, *ws, *w, *c, *cs, *counters, *rj, *lc, *v;
	struct np_topology *t = NULL;
	np_cpuset pool[5];
	struct wl_row *rows = NULL;
	char *sym = NULL, buf[4096], path[96];
	bool used_b = false, used_x = false, used_q = false, used_dash = false;
	size_t i, nw = 0, k;
	struct wrap wr;
	int r, nletter = 0;

	if (!json_is_object(status)) {
		NP_ERR("status: expected an object");
		return -EINVAL;
	}
	if ((r = np_topology_from_json(&t, json_object_get(status, "topology"),
				       "status.topology", err, errlen)))
		return r;
	pools = json_object_get(status, "pools");
	if (!json_is_object(pools)) {
		NP_ERR("status.pools: expected an object");
		r = -EINVAL;
		goto out;
	}
	for (k = 0; k < 5; k++) {
		np_cpuset_zero(&pool[k]);
		r = np_json_cpuset(pools, pool_keys[k], "status.pools", k < 2,
				   &pool[k], err, errlen);
		if (r && r != -ENOENT)
			goto out;
	}
	ws = json_object_get(status, "workloads");
	if (ws && !json_is_array(ws)) {
		NP_ERR("status.workloads: expected an array");
		r = -EINVAL;
		goto out;
	}
	nw = json_array_size(ws);
	rows = calloc(nw ? nw : 1, sizeof(*rows));
	sym = calloc((size_t)t->max_cpu + 1, 1);
	if (!rows || !sym) {
		r = -ENOMEM;
		goto out;
	}

	/* Workload rows; exclusive CPUs get the workload's letter. */
	json_array_foreach(ws, i, w)
	{
		struct wl_row *row = &rows[i];
		bool any_excl = false;
		np_cpuset mine;

		if (!json_is_object(w)) {
			NP_ERR("status.workloads[%zu]: expected an object", i);
			r = -EINVAL;
			goto out;
		}
		row->name = str_or(w, "name", "?");
		row->qos = str_or(w, "qos", "?");
		row->cls = str_or(w, "class", row->qos);
		row->cgroup = str_or(w, "cgroup", "-");
		row->cpuset = str_or(w, "cpuset", "");
		row->mems = str_or(w, "mems", "");
		if (!strcmp(row->qos, row->cls))
			snprintf(row->qc, sizeof(row->qc), "%s", row->qos);
		else
			snprintf(row->qc, sizeof(row->qc), "%s/%s", row->qos,
				 row->cls);
		cs = json_object_get(w, "containers");
		row->containers = container_names(cs);
		if (!row->containers) {
			r = -ENOMEM;
			goto out;
		}
		np_cpuset_zero(&mine);
		json_array_foreach(cs, k, c)
		{
			np_cpuset s;

			if (!json_is_true(json_object_get(c, "exclusive")))
				continue;
			snprintf(path, sizeof(path),
				 "status.workloads[%zu].containers[%zu]", i, k);
			if ((r = np_json_cpuset(c, "cpuset", path, true, &s,
						err, errlen)))
				goto out;
			np_cpuset_or(&mine, &mine, &s);
			any_excl = true;
		}
		if (!any_excl &&
		    json_is_true(json_object_get(w, "exclusive"))) {
			snprintf(path, sizeof(path), "status.workloads[%zu]",
				 i);
			if ((r = np_json_cpuset(w, "cpuset", path, true, &mine,
						err, errlen)))
				goto out;
			any_excl = true;
		}
		if (any_excl) {
			row->sym = nletter < (int)sizeof(letters) - 1
				       ? letters[nletter]
				       : '+';
			nletter++;
			NP_CPUSET_FOREACH (cpu, &mine)
				if (cpu < t->max_cpu && !sym[cpu])
					sym[cpu] = row->sym;
		} else {
			row->sym = !strcmp(row->cls, "BE") ? 'b' : '.';
		}
	}

	/* The picture, one block per NUMA node. */
	for (int n = 0; n < t->nnuma; n++) {
		np_cpuset present, sockets_seen;
		int cw, per_line = 0, nsock = 0, line_max;
		bool first = true;

		np_cpuset_zero(&present);
		np_cpuset_zero(&sockets_seen);
		for (int cpu = 0; cpu < t->max_cpu; cpu++)
			if (t->cpu[cpu].present && t->cpu[cpu].numa == n) {
				np_cpuset_set(&present, cpu);
				if (!np_cpuset_test(&sockets_seen,
						    t->cpu[cpu].socket)) {
					np_cpuset_set(&sockets_seen,
						      t->cpu[cpu].socket);
					nsock++;
				}
			}
		fprintf(out, "NUMA node %d", t->numa[n].u.id);
		if (nsock) {
			fprintf(out, " (socket%s", nsock > 1 ? "s" : "");
			NP_CPUSET_FOREACH (s, &sockets_seen) {
				fprintf(out, "%s%d", first ? " " : ",",
					t->sockets[s].id);
				first = false;
			}
			fprintf(out, ")");
		}
		if (np_cpuset_empty(&present)) {
			fprintf(out, ": no cpus\n");
			continue;
		}
		fprintf(out, ": cpus %s\n",
			fmt_set(&present, buf, sizeof(buf)));
		cw = digits(t->max_cpu - 1);
		line_max = cw <= 2 ? 12 : 8; /* under 80 columns */
		NP_CPUSET_FOREACH (cpu, &present) {
			char ch;
			if (!t->cpu[cpu].online) {
				ch = 'x';
				used_x = true;
			} else if (np_cpuset_test(&pool[0], cpu)) {
				ch = 'R';
			} else if (sym[cpu]) {
				ch = sym[cpu];
			} else if (np_cpuset_test(&pool[4], cpu)) {
				ch = '?';
				used_q = true;
			} else if (np_cpuset_test(&pool[1], cpu)) {
				ch = '.';
			} else if (np_cpuset_test(&pool[2], cpu)) {
				ch = 'b';
				used_b = true;
			} else {
				ch = '-';
				used_dash = true;
			}
			if (per_line == line_max) {
				fputc('\n', out);
				per_line = 0;
			}
			fprintf(out, "  %*d:%c", cw, cpu, ch);
			per_line++;
		}
		fputc('\n', out);
	}
	wrap_start(&wr, out, "legend:");
	wrap_add(&wr, "R reserved");
	wrap_add(&wr, ". shared");
	if (used_b)
		wrap_add(&wr, "b BE only");
	for (i = 0; i < nw; i++) {
		if (rows[i].sym == '.' || rows[i].sym == 'b')
			continue;
		snprintf(buf, sizeof(buf), "%c %s (%s)", rows[i].sym,
			 rows[i].name, rows[i].cls);
		wrap_add(&wr, buf);
	}
	if (used_q)
		wrap_add(&wr, "? exclusive, owner not listed");
	if (used_dash)
		wrap_add(&wr, "- in no pool");
	if (used_x)
		wrap_add(&wr, "x offline");
	wrap_end(&wr);

	/* Pools. */
	fprintf(out, "\npools:\n");
	for (k = 0; k < 5; k++)
		fprintf(out, "  %-12s %s\n", pool_names[k],
			fmt_set(&pool[k], buf, sizeof(buf)));
	v = json_object_get(pools, "cpuSharedPools");
	if (json_array_size(v)) {
		fprintf(out, "cpuSharedPools:\n");
		json_array_foreach(v, i, c)
		{
			fprintf(out, "  node %lld (socket %lld): %s\n",
				(long long)json_integer_value(
				    json_object_get(c, "node")),
				(long long)json_integer_value(
				    json_object_get(c, "socket")),
				str_or(c, "cpuset", ""));
		}
	}

	/* Workloads. */
	if (!nw) {
		fprintf(out, "\nworkloads: none\n");
	} else {
		int wn = 4, wq = 9, wg = 6, wc = 6, wm = 4;
		fprintf(out, "\nworkloads: %zu\n", nw);
		for (i = 0; i < nw; i++) {
			int l;
#define WIDEN(wv, s)                                                           \
	do {                                                                   \
		l = (int)strlen(s);                                            \
		if (l > wv)                                                    \
			wv = l;                                                \
	} while (0)
			WIDEN(wn, rows[i].name);
			WIDEN(wq, rows[i].qc);
			WIDEN(wg, rows[i].cgroup);
			WIDEN(wc, rows[i].cpuset);
			WIDEN(wm, rows[i].mems);
#undef WIDEN
		}
		fprintf(out, "  %s %-*s  %-*s  %-*s  %-*s  %-*s  %s\n", " ", wn,
			"NAME", wq, "QOS/CLASS", wg, "CGROUP", wc, "CPUSET", wm,
			"MEMS", "CONTAINERS");
		for (i = 0; i < nw; i++)
			fprintf(out, "  %c %-*s  %-*s  %-*s  %-*s  %-*s  %s\n",
				rows[i].sym, wn, rows[i].name, wq, rows[i].qc,
				wg, rows[i].cgroup, wc, rows[i].cpuset, wm,
				rows[i].mems, rows[i].containers);
		/* Devices, when any container has some. */
		json_array_foreach(ws, i, w)
		{
			cs = json_object_get(w, "containers");
			json_array_foreach(cs, k, c)
			{
				v = json_object_get(c, "devices");
				if (!json_object_size(v))
					continue;
				fprintf(out,
					"  devices of %s/%s:", rows[i].name,
					str_or(c, "name", "?"));
				print_devices(out, v, " ", "; ");
				fputc('\n', out);
			}
		}
	}

	/* Counters, recent rejections, the last cycle. */
	counters = json_object_get(status, "counters");
	if (json_is_object(counters)) {
		const char *key;
		fputc('\n', out);
		wrap_start(&wr, out, "counters:");
		for (k = 0; k < 6; k++) {
			v = json_object_get(counters, known_counters[k]);
			if (!json_is_integer(v))
				continue;
			snprintf(buf, sizeof(buf), "%s %lld", counter_names[k],
				 (long long)json_integer_value(v));
			wrap_add(&wr, buf);
		}
		json_object_foreach((json_t *)counters, key, v)
		{
			bool known = false;
			for (k = 0; k < 6; k++)
				known =
				    known || !strcmp(key, known_counters[k]);
			if (known || !json_is_integer(v))
				continue;
			snprintf(buf, sizeof(buf), "%s %lld", key,
				 (long long)json_integer_value(v));
			for (char *p = buf; *p; p++)
				if (*p == '_')
					*p = ' ';
			wrap_add(&wr, buf);
		}
		wrap_end(&wr);
	}
	rj = json_object_get(status, "rejections");
	if (json_array_size(rj)) {
		size_t nr = json_array_size(rj), from = nr > 5 ? nr - 5 : 0;
		char tb[64];
		fprintf(out, "last rejections%s:\n",
			from ? " (most recent 5)" : "");
		for (i = from; i < nr; i++) {
			c = json_array_get(rj, i);
			fprintf(out, "  %s  %s (resource %s): %s\n",
				fmt_time(json_integer_value(
					     json_object_get(c, "time")),
					 tb, sizeof(tb)),
				str_or(c, "workload", "?"),
				str_or(c, "resource", "?"),
				str_or(c, "reason", ""));
		}
	}
	lc = json_object_get(status, "last_cycle");
	v = json_object_get(status, "reconcile_period_s");
	if (json_is_object(lc)) {
		json_int_t lt = json_integer_value(json_object_get(lc, "time"));
		if (lt > 0)
			fprintf(out,
				"last reconcile cycle: %s, %lld writes, "
				"%lld us",
				fmt_time(lt, buf, sizeof(buf)),
				(long long)json_integer_value(
				    json_object_get(lc, "writes")),
				(long long)json_integer_value(
				    json_object_get(lc, "duration_us")));
		else
			fprintf(out, "last reconcile cycle: none yet");
		if (json_is_number(v))
			fprintf(out, " (every %g s)", json_number_value(v));
		fputc('\n', out);
	}
	render_verification(json_object_get(status, "verification"), out);
	r = 0;
out:
	if (rows)
		for (i = 0; i < nw; i++)
			free(rows[i].containers);
	free(rows);
	free(sym);
	np_topology_free(t);
	return r;
}

int np_status_render(const json_t *status, FILE *out)
{
	return np_status_render_err(status, out, NULL, 0);
}

int np_decision_render(const json_t *decision, FILE *out)
{
	const json_t *adm = json_object_get(decision, "admitted"), *cs, *c,
		     *first_hint = NULL;
	bool same_hint = true, excl;
	const char *qos, *cls;
	size_t i;

	if (!json_is_object(decision) || !json_is_boolean(adm))
		return -EINVAL;
	if (!json_is_true(adm)) {
		fprintf(
		    out, "rejected %s: %s (resource %s)\n",
		    str_or(decision, "workload", str_or(decision, "name", "?")),
		    str_or(decision, "reason", "no reason given"),
		    str_or(decision, "resource", "?"));
		return 0;
	}
	cs = json_object_get(decision, "containers");
	json_array_foreach(cs, i, c)
	{
		const json_t *h = json_object_get(c, "hint");
		if (!i)
			first_hint = h;
		else if (!json_equal((json_t *)first_hint, (json_t *)h))
			same_hint = false;
	}
	qos = str_or(decision, "qos", "?");
	cls = str_or(decision, "class", qos);
	excl = json_is_true(json_object_get(decision, "exclusive"));
	fprintf(out, "admitted %s: cpuset %s mems %s (",
		str_or(decision, "name", "?"), str_or(decision, "cpuset", ""),
		str_or(decision, "mems", ""));
	if (strcmp(qos, cls))
		fprintf(out, "%s/", qos);
	fprintf(out, "%s%s", cls, excl ? "" : ", shared pool");
	if (first_hint && same_hint) {
		fprintf(out, ", ");
		print_hint(out, first_hint);
	} else if (first_hint) {
		fprintf(out, ", hints per container");
	}
	fprintf(out, ")\n");
	json_array_foreach(cs, i, c)
	{
		fprintf(out, "  %s: cpuset %s%s, mems %s, ",
			str_or(c, "name", "?"), str_or(c, "cpuset", ""),
			json_is_true(json_object_get(c, "exclusive"))
			    ? " exclusive"
			    : " shared",
			str_or(c, "mems", ""));
		print_hint(out, json_object_get(c, "hint"));
		print_devices(out, json_object_get(c, "devices"), ", ", ", ");
		fputc('\n', out);
	}
	return 0;
}
