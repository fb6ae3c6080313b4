// SPDX-License-Identifier: Apache-2.0
/*
 * Control socket client: one request line, one response line (protocol in
 * include/numaplace/ctl.h) and spec loading for `numaplace admit`. The
 * human renderings of the answers are the CLI's (tools/status_render.c).
 */
#include "numaplace/admit.h"
#include "basic/fileio.h"
#include "numaplace/error.h"
#include "numaplace/ctl.h"

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
		NP_ERR("numaplaced is not running (no socket at %s)",
		       np_echo(path));
		break;
	case ECONNREFUSED:
		NP_ERR("numaplaced is not running (stale socket %s)",
		       np_echo(path));
		break;
	case EACCES:
	case EPERM:
		NP_ERR("permission denied on %s: run as root", np_echo(path));
		e = EACCES;
		break;
	default:
		NP_ERR("cannot connect to numaplaced at %s: %s", np_echo(path),
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
		NP_ERR("socket path \"%s\": %s", np_echo(path),
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
			NP_ERR("connecting to numaplaced at %s timed out",
			       np_echo(path));
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
	/* a path cut short: the reason must fit */
	const char *label = is_stdin ? "stdin" : np_echo(path);
	struct np_workload_req *w = NULL;
	char verr[512];
	json_error_t jerr;
	json_t *j;
	FILE *f;
	int r;

	*spec = NULL;
	f = stdin;
	if (!is_stdin && (r = np_fopen_read(path, &f))) {
		NP_ERR("%s: %s", label,
		       r == -EISDIR ? "is a directory, not a file"
				    : strerror(-r));
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
