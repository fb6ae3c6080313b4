// SPDX-License-Identifier: Apache-2.0
/*
 * /metrics over HTTP (libmicrohttpd, its own polling thread): the
 * listening address, the snapshot the loop publishes, the request
 * handler. What is said is in metrics_render.c; what the daemon counts
 * for it, metrics_count.c.
 */
#include "daemon/serve/metrics.h"
#include "basic/log.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define NP_METRICS_MAX_PROGS 32
#define NP_METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

struct np_metrics {
	struct MHD_Daemon *mhd;
	int unix_fd; /* the listening Unix socket, or -1 */
	char unix_path[108];
	unsigned port;
	pthread_mutex_t lock;
	/* the snapshot (under lock) */
	char *text;
	size_t len;
	char pin_dir[4096];
	unsigned tick_hz;
	struct np_bpf_prog_ref progs[NP_METRICS_MAX_PROGS];
	int nprogs;
	uint64_t scrapes;
};

/* One scrape: the snapshot, then the BPF side. */
static char *scrape(struct np_metrics *m, size_t *len)
{
	struct np_bpf_prog_ref progs[NP_METRICS_MAX_PROGS];
	char pin_dir[sizeof(m->pin_dir)];
	unsigned tick_hz;
	int nprogs;
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	if (!f)
		return NULL;
	pthread_mutex_lock(&m->lock);
	if (m->text)
		fwrite(m->text, 1, m->len, f);
	memcpy(progs, m->progs, sizeof(progs));
	nprogs = m->nprogs;
	memcpy(pin_dir, m->pin_dir, sizeof(pin_dir));
	tick_hz = m->tick_hz;
	m->scrapes++;
	pthread_mutex_unlock(&m->lock);
	np_metrics_render_bpf(f, pin_dir, tick_hz, progs, nprogs);
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status,
			     const char *type, char *body, size_t len,
			     enum MHD_ResponseMemoryMode mode)
{
	struct MHD_Response *r =
		MHD_create_response_from_buffer(len, body, mode);
	enum MHD_Result ret;

	if (!r) {
		if (mode == MHD_RESPMEM_MUST_FREE)
			free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c,
			      const char *url, const char *method,
			      const char *version, const char *upload_data,
			      size_t *upload_size, void **con_cls)
{
	static const char index_page[] =
		"numaplaced: the metrics are at /metrics\n";
	static const char not_found[] = "not found: try /metrics\n";
	static const char bad_method[] = "only GET and HEAD\n";
	struct np_metrics *m = cls;
	char *body;
	size_t len = 0;

	(void)version;
	(void)upload_data;
	if (!*con_cls) { /* headers only so far: wait for the whole request */
		*con_cls = (void *)1;
		return MHD_YES;
	}
	if (*upload_size) { /* a body is not read */
		*upload_size = 0;
		return MHD_YES;
	}
	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain",
			     (char *)bad_method, sizeof(bad_method) - 1,
			     MHD_RESPMEM_PERSISTENT);
	if (!strcmp(url, "/"))
		return reply(c, MHD_HTTP_OK, "text/plain", (char *)index_page,
			     sizeof(index_page) - 1, MHD_RESPMEM_PERSISTENT);
	if (strcmp(url, "/metrics"))
		return reply(c, MHD_HTTP_NOT_FOUND, "text/plain",
			     (char *)not_found, sizeof(not_found) - 1,
			     MHD_RESPMEM_PERSISTENT);
	body = scrape(m, &len);
	if (!body)
		return MHD_NO;
	return reply(c, MHD_HTTP_OK, NP_METRICS_CONTENT_TYPE, body, len,
		     MHD_RESPMEM_MUST_FREE);
}

/* The Unix socket is bound and listening under PATH.PID~ first, then
 * renamed into place (as the control socket is): a client that sees the
 * path can connect, never ECONNREFUSED between bind() and listen(). A
 * socket left by an earlier run is replaced; anything else at the path is
 * refused. */
static int unix_listen(struct np_metrics *m, const struct np_metrics_addr *a,
		       char *err, size_t errlen)
{
	const struct sockaddr_un *un = (const struct sockaddr_un *)&a->sa;
	struct sockaddr_un tmp = *un;
	struct stat st;
	int fd = -1, r;

	if (snprintf(tmp.sun_path, sizeof(tmp.sun_path), "%s.%d~", un->sun_path,
		     (int)getpid()) >= (int)sizeof(tmp.sun_path)) {
		snprintf(err, errlen,
			 "metrics.listen unix:%s: path too long (at most %zu "
			 "bytes, with room for its temporary name)",
			 un->sun_path,
			 sizeof(tmp.sun_path) - 1 -
				 (strlen(tmp.sun_path) - strlen(un->sun_path)));
		return -ENAMETOOLONG;
	}
	if (!lstat(un->sun_path, &st) && !S_ISSOCK(st.st_mode)) {
		snprintf(err, errlen,
			 "metrics.listen unix:%s: exists and is not a socket "
			 "(not replaced)", un->sun_path);
		return -EEXIST;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		goto fail;
	unlink(tmp.sun_path);
	if (bind(fd, (const struct sockaddr *)&tmp, a->len) || listen(fd, 16) ||
	    rename(tmp.sun_path, un->sun_path)) {
		r = errno;
		unlink(tmp.sun_path);
		errno = r;
		goto fail;
	}
	m->unix_fd = fd;
	snprintf(m->unix_path, sizeof(m->unix_path), "%s", un->sun_path);
	return 0;
fail:
	r = -errno;
	snprintf(err, errlen, "metrics.listen unix:%s: %s", un->sun_path,
		 strerror(-r));
	if (fd >= 0)
		close(fd);
	return r;
}

int np_metrics_start(struct np_metrics **out, const char *listen, char *err,
		     size_t errlen)
{
	struct np_metrics_addr a;
	struct np_metrics *m;
	char why[256];
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL;
	int r;

	*out = NULL;
	if ((r = np_metrics_addr_parse(listen, &a, why, sizeof(why)))) {
		snprintf(err, errlen, "metrics.listen '%s': %s", listen, why);
		return r;
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->unix_fd = -1;
	pthread_mutex_init(&m->lock, NULL);
	if (a.unix_path && (r = unix_listen(m, &a, err, errlen))) {
		np_metrics_stop(m);
		return r;
	}
	if (a.sa.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	errno = 0;
	m->mhd = a.unix_path
		? MHD_start_daemon(flags, 0, NULL, NULL, handle, m,
				   MHD_OPTION_LISTEN_SOCKET, m->unix_fd,
				   MHD_OPTION_CONNECTION_LIMIT, 16u,
				   MHD_OPTION_CONNECTION_TIMEOUT, 10u,
				   MHD_OPTION_END)
		: MHD_start_daemon(flags, 0, NULL, NULL, handle, m,
				   MHD_OPTION_SOCK_ADDR, &a.sa,
				   MHD_OPTION_CONNECTION_LIMIT, 16u,
				   MHD_OPTION_CONNECTION_TIMEOUT, 10u,
				   MHD_OPTION_END);
	if (!m->mhd) {
		r = errno ? -errno : -EADDRNOTAVAIL;
		snprintf(err, errlen, "metrics.listen %s: cannot listen: %s",
			 listen, strerror(-r));
		np_metrics_stop(m);
		return r;
	}
	if (!a.unix_path) {
		const union MHD_DaemonInfo *i =
			MHD_get_daemon_info(m->mhd, MHD_DAEMON_INFO_BIND_PORT);
		m->port = i ? i->port : 0;
	}
	*out = m;
	return 0;
}

void np_metrics_stop(struct np_metrics *m)
{
	if (!m)
		return;
	if (m->mhd)
		MHD_stop_daemon(m->mhd);
	if (m->unix_fd >= 0) {
		close(m->unix_fd);
		unlink(m->unix_path);
	}
	pthread_mutex_destroy(&m->lock);
	free(m->text);
	free(m);
}

void np_metrics_publish(struct np_metrics *m, char *text, size_t len,
			const char *pin_dir, unsigned tick_hz,
			const struct np_bpf_prog_ref *progs, int nprogs)
{
	char *old;

	if (!m) {
		free(text);
		return;
	}
	if (nprogs > NP_METRICS_MAX_PROGS)
		nprogs = NP_METRICS_MAX_PROGS;
	pthread_mutex_lock(&m->lock);
	old = m->text;
	m->text = text;
	m->len = text ? len : 0;
	snprintf(m->pin_dir, sizeof(m->pin_dir), "%s", pin_dir ? pin_dir : "");
	m->tick_hz = tick_hz;
	if (nprogs > 0)
		memcpy(m->progs, progs, sizeof(progs[0]) * (size_t)nprogs);
	m->nprogs = nprogs > 0 ? nprogs : 0;
	pthread_mutex_unlock(&m->lock);
	free(old);
}

unsigned np_metrics_port(const struct np_metrics *m)
{
	return m ? m->port : 0;
}

uint64_t np_metrics_scrapes(const struct np_metrics *m)
{
	uint64_t n;

	if (!m)
		return 0;
	pthread_mutex_lock((pthread_mutex_t *)&m->lock);
	n = m->scrapes;
	pthread_mutex_unlock((pthread_mutex_t *)&m->lock);
	return n;
}
