// SPDX-License-Identifier: Apache-2.0
/*
 * What the cluster reads about this node (numaplace/export.h): asked for
 * over the control socket (op "export") and kept written to the files
 * config.export names, for an agent to push (JSON, replaced atomically,
 * only when the content changes).
 */
#include "daemon/daemon_internal.h"
#include "basic/fileio.h"
#include "numaplace/export.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

/* config.export.node_name, else the host name lowercased (as the kubelet
 * names its node). */
static int node_name(const struct np_daemon *d, char *out, size_t len,
		     char *err, size_t errlen)
{
	struct utsname u;
	size_t i;

	if (d->cfg.export_.node_name[0]) {
		snprintf(out, len, "%s", d->cfg.export_.node_name);
		return 0;
	}
	if (uname(&u) < 0) {
		snprintf(err, errlen, "export: uname: %s", strerror(errno));
		return -errno;
	}
	for (i = 0; u.nodename[i] && i + 1 < len; i++)
		out[i] = (char)tolower((unsigned char)u.nodename[i]);
	out[i] = '\0';
	if (!np_export_node_name_ok(out)) {
		snprintf(err, errlen,
			 "export: the host name \"%.64s\" is not a node name: "
			 "set config.export.node_name",
			 out);
		return -EINVAL;
	}
	return 0;
}

json_t *np_daemon_export(struct np_daemon *d, const char *format,
			 const char *name, char *err, size_t errlen)
{
	char host[256];
	json_t *o;

	if (!strcmp(format, "koordinator")) {
		o = np_export_koordinator(&d->st);
	} else if (!strcmp(format, "nrt")) {
		if (!name) {
			if (node_name(d, host, sizeof(host), err, errlen))
				return NULL;
			name = host;
		} else if (!np_export_node_name_ok(name)) {
			snprintf(err, errlen,
				 "node_name: \"%.64s\" is not a node name (at "
				 "most 253 of a-z, 0-9, '-' and '.', "
				 "alphanumeric at both ends)",
				 name);
			return NULL;
		}
		o = np_export_nrt(&d->st, name);
	} else {
		snprintf(err, errlen,
			 "format: \"%.32s\" is not one of nrt, koordinator",
			 format);
		return NULL;
	}
	if (!o)
		snprintf(err, errlen, "export: %s", strerror(ENOMEM));
	return o;
}

/* Replace path with text atomically. */
static int write_file(const char *path, const char *text, char *err,
		      size_t errlen)
{
	char dir[NP_PATH_MAX];
	const char *slash = strrchr(path, '/');
	int fd, r;

	if (slash == path)
		snprintf(dir, sizeof(dir), "/");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		snprintf(err, errlen, "export: %.300s: %s", dir, strerror(-r));
		return r;
	}
	r = np_write_atomic_at(fd, slash + 1, text, strlen(text), 0644);
	close(fd);
	if (r)
		snprintf(err, errlen, "export: %.300s: %s", path, strerror(-r));
	return r;
}

/* A change of what the exports say: admissions, releases, re-placements,
 * CPUs going offline or back. */
static uint64_t change_stamp(const struct np_daemon *d)
{
	/* each counter only grows: a change of any changes the mix */
	const uint64_t v[] = {d->n.admitted, d->n.released, d->n.replaced,
			      d->n.hotplug, d->n.vanished,
			      (uint64_t)d->st.nworkloads};
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		h = (h ^ v[i]) * 1099511628211ull;
	return h;
}

void np_daemon_export_files(struct np_daemon *d)
{
	const char *paths[2] = {d->cfg.export_.nrt_file,
				d->cfg.export_.koordinator_file};
	static const char *const formats[2] = {"nrt", "koordinator"};
	uint64_t stamp = change_stamp(d);

	for (int i = 0; i < 2; i++) {
		struct np_export_file *e = &d->export_file[i];
		char err[512] = "";
		char *text = NULL;
		json_t *o;

		if (!paths[i][0] || (e->done && e->stamp == stamp &&
				     !strcmp(e->path, paths[i])))
			continue;
		o = np_daemon_export(d, formats[i], NULL, err, sizeof(err));
		if (o)
			text = json_dumps(o, JSON_INDENT(2));
		json_decref(o);
		if (text && (!e->last || strcmp(text, e->last) ||
			     strcmp(e->path, paths[i]))) {
			size_t n = strlen(text);
			char *t = realloc(text, n + 2);
			if (t) {
				text = t;
				memcpy(text + n, "\n", 2);
			}
			if (!write_file(paths[i], text, err, sizeof(err))) {
				free(e->last);
				e->last = text;
				text = NULL;
				e->writes++;
				e->time = time(NULL);
			}
		}
		free(text);
		if (err[0] && strcmp(err, e->error))
			np_log(LOG_ERR, "%s (tried again each cycle)", err);
		snprintf(e->error, sizeof(e->error), "%s", err);
		snprintf(e->path, sizeof(e->path), "%s", paths[i]);
		/* a failure is tried again at the next publish */
		e->done = !err[0];
		e->stamp = stamp;
	}
}

json_t *np_daemon_export_status(const struct np_daemon *d)
{
	const char *paths[2] = {d->cfg.export_.nrt_file,
				d->cfg.export_.koordinator_file};
	static const char *const keys[2] = {"nrt_file", "koordinator_file"};
	json_t *o = json_object();

	for (int i = 0; o && i < 2; i++) {
		const struct np_export_file *e = &d->export_file[i];
		json_t *f;
		if (!paths[i][0])
			continue;
		f = json_pack("{s:s,s:I,s:I}", "path", paths[i], "writes",
			      (json_int_t)e->writes, "time", (json_int_t)e->time);
		if (f && e->error[0])
			json_object_set_new(f, "error", json_string(e->error));
		json_object_set_new(o, keys[i], f);
	}
	return o;
}

void np_daemon_export_free(struct np_daemon *d)
{
	for (int i = 0; i < 2; i++) {
		free(d->export_file[i].last);
		d->export_file[i].last = NULL;
	}
}
