// SPDX-License-Identifier: Apache-2.0
/*
 * numaplaced core: admission requests, the reconcile cycle that makes the
 * cgroup tree match the allocations, and the event loop.
 */
#include "numaplace/ctl.h"
#include "numaplace/error.h"
#include "basic/fileio.h"
#include "basic/log.h"
#include "daemon/ctl_server.h"
#include "numaplace/daemon.h"
#include "numaplace/plan.h"
#include "numaplace/state_file.h"
#include "numaplace/topology_json.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <syslog.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#define logm np_log

/* ---- workload bookkeeping ----------------------------------------------- */

#define S(s) ((s) ? (s) : "")

/* Replace a meta string (NULL for ""); false when out of memory (the old
 * value is kept). */
static bool set_str(char **dst, const char *src)
{
	char *s = NULL;
	if (src && *src && !(s = strdup(src)))
		return false;
	free(*dst);
	*dst = s;
	return true;
}

/* (Re)build the name index when meta[] changed behind its back (entries
 * appended directly, as the benchmark does). */
static int meta_reindex(struct np_daemon *d)
{
	np_strmap_free(&d->meta_ix);
	for (int i = 0; i < d->nmeta; i++)
		if (np_strmap_put(&d->meta_ix, d->meta[i].name, i)) {
			np_strmap_free(&d->meta_ix);
			return -ENOMEM;
		}
	return 0;
}

static struct np_wl_meta *meta_find(struct np_daemon *d, const char *name)
{
	long i;
	if (d->meta_ix.n != (size_t)d->nmeta ||
	    (np_strmap_get(&d->meta_ix, name, &i) &&
	     (i >= d->nmeta || strcmp(d->meta[i].name, name))))
		if (meta_reindex(d)) {
			for (int k = 0; k < d->nmeta; k++)
				if (!strcmp(d->meta[k].name, name))
					return &d->meta[k];
			return NULL;
		}
	return np_strmap_get(&d->meta_ix, name, &i) ? &d->meta[i] : NULL;
}

static struct np_wl_meta *meta_add(struct np_daemon *d, const char *name)
{
	struct np_wl_meta *m = meta_find(d, name), *g;
	if (m)
		return m;
	g = realloc(d->meta, sizeof(*g) * (size_t)(d->nmeta + 1));
	if (!g)
		return NULL;
	d->meta = g;
	m = &d->meta[d->nmeta];
	memset(m, 0, sizeof(*m));
	snprintf(m->name, sizeof(m->name), "%s", name);
	if (np_strmap_put(&d->meta_ix, m->name, d->nmeta))
		return NULL;
	d->nmeta++;
	return m;
}

static void meta_del(struct np_daemon *d, const char *name)
{
	struct np_wl_meta *m = meta_find(d, name);
	if (!m)
		return;
	np_strmap_del(&d->meta_ix, m->name);
	free(m->spec_file);
	free(m->spec_json);
	*m = d->meta[--d->nmeta];
	if (m != &d->meta[d->nmeta] &&
	    np_strmap_put(&d->meta_ix, m->name, m - d->meta))
		np_strmap_free(&d->meta_ix); /* rebuilt on the next find */
}

static void note_rejection(struct np_daemon *d, const struct np_decision *dec)
{
	struct np_rejection *r;
	if (d->nrej == NP_MAX_REJECTIONS)
		memmove(&d->rej[0], &d->rej[1], sizeof(d->rej[0]) * (NP_MAX_REJECTIONS - 1));
	else
		d->nrej++;
	r = &d->rej[d->nrej - 1];
	snprintf(r->workload, sizeof(r->workload), "%s", dec->workload);
	snprintf(r->resource, sizeof(r->resource), "%s", dec->resource);
	snprintf(r->reason, sizeof(r->reason), "%s", dec->reason);
	r->time = time(NULL);
	d->n.rejected++;
}

static struct np_spec_note *note_find(struct np_daemon *d, const char *file)
{
	for (int i = 0; i < d->nnotes; i++)
		if (!strcmp(d->notes[i].file, file))
			return &d->notes[i];
	return NULL;
}

static struct np_spec_note *note_set(struct np_daemon *d, const char *file,
				     const char *canon)
{
	struct np_spec_note *n = note_find(d, file);
	if (!n) {
		struct np_spec_note *g =
			realloc(d->notes, sizeof(*g) * (size_t)(d->nnotes + 1));
		if (!g)
			return NULL;
		d->notes = g;
		n = &d->notes[d->nnotes++];
		memset(n, 0, sizeof(*n));
		snprintf(n->file, sizeof(n->file), "%s", file);
	}
	snprintf(n->canon, sizeof(n->canon), "%s", canon ? canon : "");
	return n;
}

static void note_del(struct np_daemon *d, const char *file)
{
	struct np_spec_note *n = note_find(d, file);
	if (n)
		*n = d->notes[--d->nnotes];
}

static json_t *origins_json(const struct np_daemon *d);

static int save_state(struct np_daemon *d)
{
	char err[512];
	json_t *o = origins_json(d);
	int r = o ? np_statefile_save_with(d->cfg.state_dir, &d->st, o, err,
					   sizeof(err))
		  : -ENOMEM;
	if (!o)
		snprintf(err, sizeof(err), "out of memory");
	json_decref(o);
	if (r < 0)
		logm(LOG_ERR, "saving state: %s", err);
	else
		d->dirty = false;
	return r;
}

/*
 * The daemon's part of the state file (body.daemon), in the same atomic
 * write as the allocations so that the two never disagree:
 *   {"spec_files": {"NAME": "FILE", ...}, "pending": ["NAME", ...]}
 * spec_files: which spec file each workload came from, so that a restart
 * can tell a spec removed or changed while the daemon was down from a
 * workload admitted through the socket. pending: admitted, but its cgroup
 * not written yet. The state is saved before a cgroup is touched
 * (write-ahead), so a kill in between leaves a workload whose cgroup does
 * not exist yet; the restarted daemon creates it instead of taking it for
 * a cgroup removed by hand.
 */
static json_t *origins_json(const struct np_daemon *d)
{
	json_t *o = json_object(), *files = json_object(), *pend = json_array();
	bool bad = !o || !files || !pend;

	for (int i = 0; !bad && i < d->nmeta; i++) {
		if (S(d->meta[i].spec_file)[0])
			bad |= json_object_set_new(
				   files, d->meta[i].name,
				   json_string(d->meta[i].spec_file)) != 0;
		if (!d->meta[i].established)
			bad |= json_array_append_new(
				   pend, json_string(d->meta[i].name)) != 0;
	}
	if (bad || json_object_set(o, "spec_files", files) ||
	    json_object_set(o, "pending", pend)) {
		json_decref(o);
		o = NULL;
	}
	json_decref(files);
	json_decref(pend);
	return o;
}

/* Applies what origins_json() saved. Names the state does not know are
 * ignored. An older numaplaced kept the spec files in a flat
 * STATE_DIR/origins.json {"NAME": "FILE"}: read when the state has no
 * daemon part. */
static void load_origins(struct np_daemon *d, const json_t *o)
{
	char path[NP_PATH_MAX + 32];
	json_error_t jerr;
	json_t *legacy = NULL, *v;
	const json_t *files, *pend;
	const char *name;
	size_t k;

	if (!o) {
		snprintf(path, sizeof(path), "%s/origins.json",
			 d->cfg.state_dir);
		if (!(legacy = json_load_file(path, 0, &jerr))) {
			if (access(path, F_OK) == 0)
				logm(LOG_ERR, "%s: %s (line %d): spec origins "
				     "unknown, every loaded workload is taken "
				     "as admitted through the socket",
				     path, jerr.text, jerr.line);
			return;
		}
		o = legacy;
	}
	files = legacy ? legacy : json_object_get(o, "spec_files");
	pend = legacy ? NULL : json_object_get(o, "pending");
	if ((files && !json_is_object(files)) ||
	    (pend && !json_is_array(pend))) {
		logm(LOG_ERR, "state: daemon.spec_files must be an object and "
		     "daemon.pending an array: spec origins unknown");
		json_decref(legacy);
		return;
	}
	json_object_foreach((json_t *)files, name, v)
	{
		struct np_wl_meta *m = meta_find(d, name);
		if (m && json_is_string(v))
			set_str(&m->spec_file, json_string_value(v));
	}
	json_array_foreach(pend, k, v)
	{
		struct np_wl_meta *m =
			json_is_string(v) ? meta_find(d, json_string_value(v))
					  : NULL;
		/* Without create_cgroups nobody but the user makes the
		 * cgroup: a missing one stays "removed", and is released. */
		if (m && d->cfg.create_cgroups)
			m->established = false;
	}
	json_decref(legacy);
}

/*
 * Admit one spec. On success the workload's cgroup is prepared (created if
 * configured) and the next reconcile writes its cpuset. A cgroup that
 * cannot be prepared undoes the admission.
 */
static int admit_spec(struct np_daemon *d, const json_t *spec,
		      const char *spec_file, struct np_decision *dec,
		      char *err, size_t errlen)
{
	struct np_workload_req *w = calloc(1, sizeof(*w));
	struct np_wl_meta *m;
	char *canon = NULL;
	int r;

	if (!w)
		return -ENOMEM;
	if ((r = np_workload_req_from_json(w, spec, "spec", err, errlen)))
		goto out;
	r = np_admit(&d->st, w, dec, err, errlen);
	if (r)
		goto out;
	if (!dec->admitted) {
		struct np_spec_note *n = spec_file ? note_find(d, spec_file) : NULL;
		/* A spec file is retried every cycle; say it once per reason. */
		if (!n || strcmp(n->reason, dec->reason)) {
			note_rejection(d, dec);
			logm(LOG_WARNING, "rejected %s: %s", w->name, dec->reason);
		}
		if (spec_file) {
			canon = json_dumps(spec, JSON_COMPACT | JSON_SORT_KEYS);
			n = note_set(d, spec_file, canon);
			if (n)
				snprintf(n->reason, sizeof(n->reason), "%s",
					 dec->reason);
		}
		goto out;
	}
	if (spec_file)
		note_del(d, spec_file);
	m = meta_add(d, w->name);
	if (!m) {
		np_release(&d->st, w->name);
		r = -ENOMEM;
		goto out;
	}
	canon = json_dumps(spec, JSON_COMPACT | JSON_SORT_KEYS);
	if (!set_str(&m->spec_file, spec_file) || !set_str(&m->spec_json, canon)) {
		np_release(&d->st, w->name);
		meta_del(d, w->name);
		r = -ENOMEM;
		goto out;
	}
	m->established = false;
	m->seen_scan = d->spec_scan; /* admitted from this scan's file */
	/* Durable before any cgroup is touched and before it is reported:
	 * an admission the state file does not know would be lost by a
	 * crash while its cgroup already shows it. */
	d->dirty = true;
	if ((r = save_state(d))) {
		np_release(&d->st, w->name);
		meta_del(d, w->name);
		d->dirty = false;
		dec->admitted = false;
		dec->alloc = NULL;
		NP_ERR("state %.200s/state.json could not be saved (%s): %s was "
		    "not admitted, nothing changed",
		    d->cfg.state_dir, strerror(-r), w->name);
		goto out;
	}
	/* Test-only fault injection (tests/daemon-host.sh): die where a
	 * SIGKILL between the state save and the cgroup's creation would. */
	if (d->failpoint_admit_saved) {
		logm(LOG_ERR, "failpoint admit-saved: exiting after saving %s",
		     w->name);
		_exit(86);
	}
	if (d->cg_open) {
		unsigned fl = d->cfg.create_cgroups ? NP_CGROUP_CREATE : 0;
		char cerr[512];
		r = np_cgroup_prepare(&d->cg, w->cgroup, fl, cerr, sizeof(cerr));
		for (int i = 0; !r && i < w->ncontainers; i++) {
			char sub[2 * NP_PATH_MAX];
			if (!w->c[i].cgroup || !w->c[i].cgroup[0])
				continue;
			snprintf(sub, sizeof(sub), "%s/%s", w->cgroup,
				 w->c[i].cgroup);
			r = np_cgroup_prepare(&d->cg, sub, fl, cerr, sizeof(cerr));
		}
		if (r) {
			np_release(&d->st, w->name);
			meta_del(d, w->name);
			d->dirty = true;
			save_state(d); /* a failure leaves it dirty: retried */
			NP_ERR("cgroup %.200s: %.400s", w->cgroup, cerr);
			dec->admitted = false;
			dec->alloc = NULL;
			goto out;
		}
	}
	d->n.admitted++;
	logm(LOG_INFO, "admitted %s", w->name);
out:
	free(canon);
	np_workload_req_free(w);
	free(w);
	return r;
}

static int release_wl(struct np_daemon *d, const char *name, const char *why)
{
	int i = np_state_find(&d->st, name), r;
	struct np_workload_alloc keep; /* owns its arrays until freed or
					  handed back to the state */
	char cg[NP_PATH_MAX] = "";

	if (i < 0)
		return -ENOENT;
	snprintf(cg, sizeof(cg), "%s", d->st.w[i].req.cgroup);
	if ((r = np_release_keep(&d->st, i, &keep))) {
		if (r != -ENOENT)
			np_workload_alloc_free(&keep);
		return r;
	}
	/* Durable before the cgroup is touched and before it is reported;
	 * when the state cannot be saved the workload stays admitted. */
	d->dirty = true;
	if ((r = save_state(d))) {
		int ri = np_state_insert(&d->st, i, &keep);
		if (ri) {
			np_workload_alloc_free(&keep);
			return ri;
		}
		d->dirty = false;
		logm(LOG_ERR,
		     "release of %s (%s) not done: the state could not be "
		     "saved; it stays admitted",
		     name, why);
		return -EIO;
	}
	np_cgroup_cache_forget(&d->cgc, keep.req.cgroup);
	for (int c = 0; c < keep.req.ncontainers; c++)
		if (keep.req.c[c].cgroup && keep.req.c[c].cgroup[0]) {
			char sub[2 * NP_PATH_MAX], *slash;
			snprintf(sub, sizeof(sub), "%s/%s", keep.req.cgroup,
				 keep.req.c[c].cgroup);
			np_cgroup_cache_forget(&d->cgc, sub);
			/* Container cgroups go first (a cgroup with children
			 * cannot be removed), up to the workload's; busy
			 * ones stay, and so does the workload's below. */
			while (d->cg_open && strlen(sub) > strlen(cg) &&
			       !unlinkat(d->cg.parent_fd, sub, AT_REMOVEDIR) &&
			       (slash = strrchr(sub, '/')))
				*slash = '\0';
		}
	np_workload_alloc_free(&keep);
	/* Remove the cgroup; one that still has tasks stays on the shared
	 * pool until it is empty. */
	if (d->cg_open && cg[0] && unlinkat(d->cg.parent_fd, cg, AT_REMOVEDIR) &&
	    errno != ENOENT) {
		char (*g)[2 * NP_PATH_MAX] =
			realloc(d->left, sizeof(*g) * (size_t)(d->nleft + 1));
		logm(LOG_WARNING,
		     "released %s, but its cgroup %s is busy (%s): it stays on "
		     "the shared pool until it is empty",
		     name, cg, strerror(errno));
		if (g) {
			d->left = g;
			snprintf(d->left[d->nleft++], sizeof(d->left[0]), "%s", cg);
		}
	}
	meta_del(d, name);
	d->n.released++;
	logm(LOG_INFO, "released %s (%s)", name, why);
	return 0;
}

/* ---- spec directory ----------------------------------------------------- */


static int scan_specs(struct np_daemon *d)
{
	DIR *dir = opendir(d->cfg.spec_dir);
	struct dirent *e;
	if (!dir) {
		if (errno != ENOENT)
			logm(LOG_ERR, "spec directory %s: %s", d->cfg.spec_dir,
			     strerror(errno));
		return 0;
	}
	/* workloads named by a spec file of this scan are marked with it */
	d->spec_scan++;
	while ((e = readdir(dir))) {
		char path[2 * NP_PATH_MAX], err[512], *canon;
		const char *name;
		json_error_t jerr;
		json_t *spec;
		size_t len = strlen(e->d_name);
		struct np_wl_meta *m;
		struct np_decision dec;

		if (e->d_name[0] == '.' || len < 6 ||
		    strcmp(e->d_name + len - 5, ".json"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", d->cfg.spec_dir, e->d_name);
		spec = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
		if (!spec) {
			logm(LOG_ERR, "spec %s: line %d: %s", path, jerr.line,
			     jerr.text);
			continue;
		}
		name = json_string_value(json_object_get(spec, "name"));
		if (!name) {
			logm(LOG_ERR, "spec %s: name: required field is missing",
			     path);
			json_decref(spec);
			continue;
		}
		m = meta_find(d, name);
		if (m)
			m->seen_scan = d->spec_scan;
		canon = json_dumps(spec, JSON_COMPACT | JSON_SORT_KEYS);
		if (m && canon && !strcmp(S(m->spec_json), canon)) {
			free(canon);
			json_decref(spec);
			continue;
		}
		if (m && !S(m->spec_json)[0] && np_state_find(&d->st, name) >= 0) {
			/* Loaded from the state after a restart: adopt it if
			 * the file still says what the state recorded, else
			 * it changed while we were down: admit it anew. */
			struct np_workload_req *fw = calloc(1, sizeof(*fw));
			char *a = NULL, *b = NULL;
			json_t *ja = NULL, *jb = NULL;
			bool same = false;
			if (fw && !np_workload_req_from_json(fw, spec, "spec",
							     err, sizeof(err))) {
				ja = np_workload_req_to_json(fw);
				jb = np_workload_req_to_json(
					&d->st.w[np_state_find(&d->st, name)].req);
				a = json_dumps(ja, JSON_COMPACT | JSON_SORT_KEYS);
				b = json_dumps(jb, JSON_COMPACT | JSON_SORT_KEYS);
				same = a && b && !strcmp(a, b);
			}
			free(a);
			free(b);
			json_decref(ja);
			json_decref(jb);
			if (fw)
				np_workload_req_free(fw);
			free(fw);
			if (same && set_str(&m->spec_json, canon) &&
			    set_str(&m->spec_file, path)) {
				free(canon);
				json_decref(spec);
				continue;
			}
		}
		{
			struct np_spec_note *n = note_find(d, path);
			if (n && n->retired && canon && !strcmp(n->canon, canon)) {
				free(canon);
				json_decref(spec);
				continue;
			}
		}
		free(canon);
		if (np_state_find(&d->st, name) >= 0 &&
		    release_wl(d, name, "spec changed") < 0) {
			/* retried next cycle */
			json_decref(spec);
			continue;
		}
		if (admit_spec(d, spec, path, &dec, err, sizeof(err)) < 0) {
			/* An invalid spec is reported once per content. */
			char *c2 = json_dumps(spec, JSON_COMPACT | JSON_SORT_KEYS);
			struct np_spec_note *n = note_find(d, path);
			if (!n || !c2 || strcmp(n->canon, c2) ||
			    strcmp(n->reason, err)) {
				logm(LOG_ERR, "spec %s: %s", path, err);
				n = note_set(d, path, c2);
				if (n)
					snprintf(n->reason, sizeof(n->reason),
						 "%s", err);
			}
			free(c2);
		}
		json_decref(spec);
	}
	closedir(dir);
	for (int i = 0; i < d->nnotes; i++)
		if (access(d->notes[i].file, F_OK)) {
			note_del(d, d->notes[i].file);
			i--;
		}
	/* Specs that disappeared release their workloads. */
	for (int i = 0; i < d->nmeta; i++) {
		if (!S(d->meta[i].spec_file)[0])
			continue;
		if (d->meta[i].seen_scan != d->spec_scan) {
			char name[NP_NAME_MAX];
			snprintf(name, sizeof(name), "%s", d->meta[i].name);
			release_wl(d, name, "spec file removed");
			i--;
		}
	}
	return 0;
}

/* ---- reconcile ---------------------------------------------------------- */

static struct np_written *written_find(struct np_daemon *d, const char *path)
{
	long i;
	return np_strmap_get(&d->written_ix, path, &i) ? &d->written[i] : NULL;
}

/* The cpus recorded in w equal s. */
static bool written_cpus_equal(const struct np_written *w, const np_cpuset *s)
{
	if (w->ncpuwords &&
	    memcmp(w->cpus, s->w, sizeof(s->w[0]) * (size_t)w->ncpuwords))
		return false;
	for (int k = w->ncpuwords; k < NP_CPUSET_WORDS; k++)
		if (s->w[k])
			return false;
	return true;
}

static void written_set(struct np_daemon *d, const char *path,
			const np_cpuset *cpus, np_nodemask mems)
{
	struct np_written *w = written_find(d, path);
	int nw = NP_CPUSET_WORDS;
	if (!w) {
		struct np_written *g = realloc(
			d->written, sizeof(*g) * (size_t)(d->nwritten + 1));
		if (!g)
			return;
		d->written = g;
		w = &d->written[d->nwritten];
		memset(w, 0, sizeof(*w));
		if (!(w->path = strdup(path)))
			return;
		if (np_strmap_put(&d->written_ix, w->path, d->nwritten)) {
			free(w->path);
			return;
		}
		d->nwritten++;
	}
	w->mems = mems;
	if (written_cpus_equal(w, cpus))
		return;
	while (nw > 0 && !cpus->w[nw - 1])
		nw--;
	if (nw != w->ncpuwords) {
		uint64_t *g = realloc(w->cpus, sizeof(*g) * (size_t)(nw ? nw : 1));
		if (!g)
			return; /* out of memory: the previous record stays */
		w->cpus = g;
		w->ncpuwords = nw;
	}
	memcpy(w->cpus, cpus->w, sizeof(cpus->w[0]) * (size_t)nw);
}

static bool any_partition(const struct np_daemon *d)
{
	for (int i = 0; i < d->st.nworkloads; i++)
		if (d->st.w[i].req.partition)
			return true;
	return false;
}

struct desired {
	const char *path; /* a workload's cgroup, a leftover or own */
	char *own;        /* container sub-cgroup path (heap) */
	/* a pool or a container's set (valid for the cycle), or own_cpus */
	const np_cpuset *cpus;
	np_cpuset *own_cpus; /* union over several containers (heap) */
	np_nodemask mems;
	bool exclusive;
	bool present; /* its cgroup exists (read or created this cycle) */
	int wl; /* workload index */
	/* Its meta (NULL for leftovers): meta[] does not change from
	 * build_desired to the end of the cycle. */
	struct np_wl_meta *m;
};

static void free_desired(struct desired *v, int n)
{
	for (int i = 0; v && i < n; i++) {
		free(v[i].own);
		free(v[i].own_cpus);
	}
	free(v);
}

/* The entries point into *pp and d->st: valid until either changes. */
static int build_desired(struct np_daemon *d, struct np_pools *pp,
			 struct desired **out, int *n)
{
	struct np_pools *p = pp;
	struct desired *v;
	int k = 0, cap = 0;

	np_state_pools(&d->st, p);
	/* Below a partition-root parent the reserved CPUs are not there. */
	if (any_partition(d)) {
		np_cpuset_andnot(&p->shared, &p->shared, &p->reserved);
		np_cpuset_andnot(&p->be, &p->be, &p->reserved);
	}
	/* One per workload, one per container with its own cgroup. */
	for (int i = 0; i < d->st.nworkloads; i++) {
		cap++;
		for (int c = 0; c < d->st.w[i].ncontainers; c++)
			cap += d->st.w[i].req.c[c].cgroup &&
			       d->st.w[i].req.c[c].cgroup[0];
	}
	/* Exclusive grants can take every CPU best effort may use; BE tasks
	 * then squeeze onto the shared pool (an empty cpuset.cpus would mean
	 * "all of the parent's"). */
	if (np_cpuset_empty(&p->be)) {
		if (!d->be_squeezed)
			logm(LOG_WARNING,
			     "the best-effort pool is empty (every CPU is "
			     "reserved or exclusive): BE workloads run on the "
			     "shared pool until CPUs are released");
		d->be_squeezed = true;
		p->be = p->shared;
	} else {
		d->be_squeezed = false;
	}
	cap += d->nleft;
	v = calloc((size_t)cap + 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (int i = 0; i < d->st.nworkloads; i++) {
		const struct np_workload_alloc *a = &d->st.w[i];
		struct desired *wd = &v[k++];
		bool excl = true; /* exclusive only when every container is */
		wd->path = a->req.cgroup;
		wd->wl = i;
		wd->m = meta_find(d, a->req.name);
		if (a->ncontainers > 1 &&
		    !(wd->own_cpus = calloc(1, sizeof(*wd->own_cpus)))) {
			free_desired(v, k);
			return -ENOMEM;
		}
		for (int c = 0; c < a->ncontainers; c++) {
			const struct np_container_alloc *ca = &a->c[c];
			const np_cpuset *cc = ca->exclusive ? &ca->cpus
					      : a->qos_class == NP_QOS_BE
						      ? &p->be
						      : &p->shared;
			/* one container: its set; several: their union */
			if (wd->own_cpus)
				np_cpuset_or(wd->own_cpus, wd->own_cpus, cc);
			else
				wd->cpus = cc;
			wd->mems |= ca->mems;
			excl &= ca->exclusive;
			if (a->req.c[c].cgroup && a->req.c[c].cgroup[0]) {
				struct desired *cd = &v[k++];
				if (asprintf(&cd->own, "%s/%s", a->req.cgroup,
					     a->req.c[c].cgroup) < 0) {
					cd->own = NULL;
					free_desired(v, k);
					return -ENOMEM;
				}
				cd->path = cd->own;
				cd->cpus = cc;
				cd->mems = ca->mems;
				cd->exclusive = ca->exclusive;
				cd->wl = i;
				cd->m = wd->m;
			}
		}
		if (wd->own_cpus)
			wd->cpus = wd->own_cpus;
		wd->exclusive = excl;
		if (!wd->mems)
			wd->mems = d->topo->numa_mask;
	}
	for (int i = 0; i < d->nleft; i++) {
		struct np_cgroup_state cs;
		char err[256];
		bool reused = false;
		/* a released cgroup that a new workload took over is that
		 * workload's now */
		for (int w = 0; w < k && !reused; w++)
			reused = !strcmp(v[w].path, d->left[i]);
		if (reused ||
		    np_cgroup_inspect(&d->cg, d->left[i], &cs, err, sizeof(err)) ==
			    -ENOENT ||
		    (cs.procs_empty &&
		     !unlinkat(d->cg.parent_fd, d->left[i], AT_REMOVEDIR))) {
			memcpy(d->left[i], d->left[--d->nleft], sizeof(d->left[0]));
			i--;
			continue;
		}
		v[k].path = d->left[i];
		v[k].cpus = &p->shared;
		v[k].mems = d->topo->numa_mask;
		v[k].wl = -1;
		k++;
	}
	*out = v;
	*n = k;
	return 0;
}

/*
 * Host cgroups confined to the shared pool (config.shared_cgroups) live
 * outside the managed parent, so they are written around the main plan:
 * before it, shrunk to what they keep (old ∩ pool), so that no CPU granted
 * exclusively is still theirs; after it, widened to the pool.
 */
static int shared_cgroups_phase(struct np_daemon *d, bool before)
{
	struct np_pools p;
	int writes = 0;

	if (!d->cg_top_open)
		return 0;
	np_state_pools(&d->st, &p);
	/* Beside a partition-root parent, host slices keep only the reserved
	 * CPUs (anything else would overlap the partition and void it). */
	if (any_partition(d))
		p.shared = p.reserved;
	for (int i = 0; i < d->cfg.nshared; i++) {
		const char *cg = d->cfg.shared_cgroups[i];
		struct np_cgroup_state cs;
		np_cpuset want;
		char err[512];
		int r;

		if (np_cgroup_inspect(&d->cg_top, cg, &cs, err, sizeof(err)))
			continue; /* gone or not there yet: nothing to do */
		if (before) {
			np_cpuset_and(&want, &cs.cpus, &p.shared);
			if (np_cpuset_empty(&cs.cpus) || np_cpuset_empty(&want) ||
			    np_cpuset_equal(&want, &cs.cpus))
				continue;
		} else {
			want = p.shared;
			if (np_cpuset_equal(&want, &cs.cpus))
				continue;
		}
		r = np_cgroup_write_cpus(&d->cg_top, cg, &want, NULL, err,
					 sizeof(err));
		if (r < 0) {
			logm(LOG_ERR, "shared cgroup %s: %s", cg, err);
			d->n.write_errors++;
		} else {
			writes++;
		}
	}
	return writes;
}

/*
 * cpuset partitions (isolation "partition"). A cgroup can only be a valid
 * partition when its parent is a partition root (Linux 6.1 has no
 * cpuset.cpus.exclusive to say otherwise), so while any workload asks for
 * one, the managed parent becomes a "root" partition over every CPU but
 * the reserved ones, which stay with the host; shared workloads below it
 * then run on the shared pool without the reserved CPUs. Each such
 * workload's cgroup becomes "isolated" once its CPUs are in place; when
 * the kernel refuses, it stays a member and the kernel's reason is logged.
 */
static void parent_partition(struct np_daemon *d)
{
	struct np_cgroup_state cs;
	np_cpuset want;
	char err[1024];
	int r;

	if (!d->cg_top_open || !any_partition(d))
		return;
	if (np_cgroup_inspect(&d->cg_top, d->cfg.cgroup_parent, &cs, err,
			      sizeof(err)))
		return;
	np_cpuset_andnot(&want, &d->topo->online, &d->st.reserved);
	if (cs.has_partition && cs.partition == NP_CGROUP_ROOT &&
	    !cs.partition_invalid && np_cpuset_equal(&cs.cpus, &want))
		return;
	if (!np_cpuset_equal(&cs.cpus, &want) &&
	    (r = np_cgroup_write_cpus(&d->cg_top, d->cfg.cgroup_parent, &want,
				      NULL, err, sizeof(err))) < 0) {
		logm(LOG_ERR, "partition parent %s: %s", d->cfg.cgroup_parent,
		     err);
		return;
	}
	r = np_cgroup_set_partition(&d->cg_top, d->cfg.cgroup_parent,
				    NP_CGROUP_ROOT, NULL, err, sizeof(err));
	if (r)
		logm(r < 0 ? LOG_ERR : LOG_WARNING, "partition parent %s: %s",
		     d->cfg.cgroup_parent, err);
	else
		logm(LOG_INFO, "%s is a partition root (for isolated workloads)",
		     d->cfg.cgroup_parent);
}

static void workload_partitions(struct np_daemon *d)
{
	for (int i = 0; i < d->st.nworkloads; i++) {
		const struct np_workload_alloc *a = &d->st.w[i];
		struct np_wl_meta *m = meta_find(d, a->req.name);
		struct np_cgroup_state cs;
		char err[1024];
		int r;

		if (!a->req.partition || !m)
			continue;
		if (np_cgroup_inspect(&d->cg, a->req.cgroup, &cs, err,
				      sizeof(err)) ||
		    !cs.has_partition)
			continue;
		if (cs.partition == NP_CGROUP_ISOLATED && !cs.partition_invalid) {
			m->partition_done = true;
			continue;
		}
		if (m->partition_done && cs.partition_invalid) {
			logm(LOG_WARNING, "partition of %s became invalid: %s",
			     a->req.name, cs.partition_reason);
			m->partition_done = false;
		}
		if (m->partition_done)
			continue;
		r = np_cgroup_set_partition(&d->cg, a->req.cgroup,
					    NP_CGROUP_ISOLATED, NULL, err,
					    sizeof(err));
		m->partition_done = true; /* refused ones are not retried */
		if (r)
			logm(r < 0 ? LOG_ERR : LOG_WARNING,
			     "partition of %s: %s (kept as a member cgroup)",
			     a->req.name, err);
		else
			logm(LOG_INFO, "%s is an isolated partition", a->req.name);
	}
}

/* The policy maps get the new placement before any cgroup is written,
 * so that the rewrite falls into their settle window. */
static void verify_sync(struct np_daemon *d, const struct desired *v, int n)
{
	struct np_verify_wl *w;
	int k = 0;

	if (!d->verify)
		return;
	w = calloc((size_t)n + 1, sizeof(*w));
	if (!w)
		return;
	for (int i = 0; i < n; i++) {
		if (v[i].wl < 0 || strcmp(v[i].path, d->st.w[v[i].wl].req.cgroup))
			continue; /* leftovers and container sub-cgroups */
		w[k].wl = v[i].wl;
		snprintf(w[k].cgroup, sizeof(w[k].cgroup), "%s", v[i].path);
		w[k].cpus = *v[i].cpus;
		w[k].mems = v[i].mems;
		w[k].exclusive = v[i].exclusive;
		k++;
	}
	np_verify_sync(d, w, k);
	free(w);
}

/* A cgroup no longer holds what was written there: logged with both
 * values and counted, whether the drift check or the counters saw it. */
void np_daemon_drift(struct np_daemon *d, const char *cgroup,
		     const np_cpuset *have, const np_cpuset *want,
		     const char *how)
{
	char *a = np_cpuset_str(have), *b = np_cpuset_str(want);
	logm(LOG_WARNING, "drift in %s: cpuset.cpus is \"%s\", want \"%s\"%s",
	     cgroup, a ? a : "?", b ? b : "?", how);
	free(a);
	free(b);
	d->n.drift_repaired++;
}

int np_daemon_reconcile(struct np_daemon *d)
{
	struct np_cgroup_change *ch = NULL;
	struct np_cgroup_plan plan = {0};
	struct desired *v = NULL;
	struct np_pools pools; /* the desired sets point into it */
	struct timespec t0, t1;
	int n = 0, nch = 0, chcap = 0, r = 0, writes = 0;
	bool synced = false;
	char err[1024];

	clock_gettime(CLOCK_MONOTONIC, &t0);
	d->n.cycles++;
	/* cgroups are read once per cycle (np_cgroup_read_cpuset). */
	np_cgroup_cache_next(&d->cgc);
	scan_specs(d);
	if (!d->cg_open)
		goto done;
	/* Workloads whose cgroup vanished are released. */
	for (int i = 0; i < d->st.nworkloads; i++) {
		struct np_wl_meta *m = meta_find(d, d->st.w[i].req.name);
		np_cpuset cpus;
		np_nodemask mems;
		if (!m || !m->established)
			continue;
		if (np_cgroup_read_cpuset(&d->cgc, &d->cg,
					  d->st.w[i].req.cgroup, &cpus, &mems,
					  err, sizeof(err)) == -ENOENT) {
			char name[NP_NAME_MAX];
			snprintf(name, sizeof(name), "%s", d->st.w[i].req.name);
			d->n.vanished++;
			if (S(m->spec_file)[0]) {
				struct np_spec_note *note =
					note_set(d, m->spec_file, S(m->spec_json));
				if (note)
					note->retired = true;
			}
			release_wl(d, name, "cgroup removed");
			i--;
		}
	}
	/* Write-ahead: the state on disk must know every allocation before
	 * a cgroup shows it, or a crash could hand the same CPUs out twice. */
	if (d->dirty && save_state(d)) {
		logm(LOG_ERR, "state not saved: no cgroup written this cycle");
		goto done;
	}
	writes += shared_cgroups_phase(d, true);
	parent_partition(d);
	if ((r = build_desired(d, &pools, &v, &n)))
		goto done;
	verify_sync(d, v, n);
	synced = true;
	for (int i = 0; i < n; i++) {
		struct np_cgroup_state cs;
		struct np_wl_meta *m = v[i].m;
		int ir = np_cgroup_read_cpuset(&d->cgc, &d->cg, v[i].path,
					       &cs.cpus, &cs.mems, err,
					       sizeof(err));
		if (ir == -ENOENT && v[i].wl < 0)
			continue;
		if (ir == -ENOENT && d->cfg.create_cgroups) {
			ir = np_cgroup_prepare(&d->cg, v[i].path,
					       NP_CGROUP_CREATE, err,
					       sizeof(err));
			if (!ir)
				ir = np_cgroup_read_cpuset(&d->cgc, &d->cg,
							   v[i].path, &cs.cpus,
							   &cs.mems, err,
							   sizeof(err));
		}
		if (ir) {
			logm(LOG_ERR, "cgroup %s: %s", v[i].path, err);
			d->n.write_errors++;
			continue;
		}
		v[i].present = true;
		if (np_cpuset_equal(&cs.cpus, v[i].cpus) &&
		    cs.mems == v[i].mems) {
			written_set(d, v[i].path, v[i].cpus, v[i].mems);
			continue;
		}
		/* Drift: a cgroup no longer holds what we last wrote there
		 * (a planned change of its desired set is not drift). */
		struct np_written *wr = written_find(d, v[i].path);
		if (m && m->established && wr &&
		    (!written_cpus_equal(wr, &cs.cpus) || wr->mems != cs.mems))
			np_daemon_drift(d, v[i].path, &cs.cpus, v[i].cpus, "");
		if (np_cpuset_empty(v[i].cpus) || !v[i].mems) {
			/* nothing a cpuset can express: skip this one
			 * rather than fail the whole plan */
			logm(LOG_ERR, "cgroup %s: no CPUs or memory nodes are "
			     "left for it; left as it is", v[i].path);
			d->n.write_errors++;
			continue;
		}
		if (nch == chcap) {
			/* Changes are few in a steady cycle: grown on demand. */
			int cap = chcap ? 2 * chcap : 16;
			struct np_cgroup_change *g =
				realloc(ch, sizeof(*g) * (size_t)cap);
			if (!g) {
				r = -ENOMEM;
				goto done;
			}
			ch = g;
			chcap = cap;
		}
		memset(&ch[nch], 0, sizeof(ch[nch]));
		ch[nch].cgroup = v[i].path;
		ch[nch].old_cpus = cs.cpus;
		ch[nch].new_cpus = *v[i].cpus;
		ch[nch].old_mems = cs.mems;
		ch[nch].new_mems = v[i].mems;
		ch[nch].kind = v[i].exclusive ? NP_CGROUP_EXCLUSIVE
					      : NP_CGROUP_SHARED;
		nch++;
	}
	if (nch) {
		r = np_cgroup_plan_build(&plan, ch, nch, err, sizeof(err));
		if (r) {
			logm(LOG_ERR, "planning cpuset writes: %s", err);
			d->n.write_errors++;
			goto done;
		}
		writes += plan.n;
		r = np_cgroup_plan_apply(&d->cg, &plan, NULL, err, sizeof(err));
		if (r < 0) {
			logm(LOG_ERR, "applying cpuset writes: %s", err);
			d->n.write_errors++;
		} else if (r > 0) {
			logm(LOG_WARNING, "%s", err);
		}
		if (r >= 0)
			for (int i = 0; i < nch; i++)
				written_set(d, ch[i].cgroup, &ch[i].new_cpus,
					    ch[i].new_mems);
		r = r < 0 ? r : 0;
	}
	writes += shared_cgroups_phase(d, false);
	workload_partitions(d);
	for (int i = 0; i < n; i++) {
		/* No longer pending (saved at the end of the cycle): a
		 * restart now takes a missing cgroup for one removed by
		 * hand. */
		if (v[i].wl >= 0 && v[i].m && !v[i].m->established &&
		    v[i].present) {
			v[i].m->established = true;
			d->dirty = true;
		}
	}
done:
	/* Counters are read even when the writes failed: a placement that
	 * could not be applied shows up as violations, and is reported. */
	if (synced)
		np_verify_check(d);
	np_cgroup_plan_free(&plan);
	free(ch);
	free_desired(v, n);
	if (d->dirty)
		save_state(d);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	d->last_cycle.time = time(NULL);
	d->last_cycle.writes = writes;
	d->last_cycle.duration_us = (t1.tv_sec - t0.tv_sec) * 1000000L +
				    (t1.tv_nsec - t0.tv_nsec) / 1000;
	return r;
}

/* ---- control requests --------------------------------------------------- */

json_t *np_daemon_status(struct np_daemon *d)
{
	json_t *ws = json_array(), *rj = json_array();
	for (int i = 0; i < d->st.nworkloads; i++)
		json_array_append_new(ws, np_workload_alloc_to_json(&d->st,
								    &d->st.w[i]));
	for (int i = 0; i < d->nrej; i++)
		json_array_append_new(
			rj, json_pack("{s:s,s:s,s:s,s:I}", "workload",
				      d->rej[i].workload, "resource",
				      d->rej[i].resource, "reason",
				      d->rej[i].reason, "time",
				      (json_int_t)d->rej[i].time));
	return json_pack(
		"{s:o,s:o,s:o,s:{s:I,s:I,s:I,s:I,s:I,s:I,s:I},s:o,s:f,s:{s:I,s:i,s:I},s:o}",
		"topology", np_topology_to_json(d->topo), "pools",
		np_pools_to_json(&d->st), "workloads", ws, "counters",
		"cycles", (json_int_t)d->n.cycles, "drift_repaired",
		(json_int_t)d->n.drift_repaired, "admitted",
		(json_int_t)d->n.admitted, "rejected", (json_int_t)d->n.rejected,
		"released", (json_int_t)d->n.released, "write_errors",
		(json_int_t)d->n.write_errors, "vanished",
		(json_int_t)d->n.vanished, "rejections", rj,
		"reconcile_period_s", d->cfg.reconcile_period_ms / 1000.0,
		"last_cycle", "time", (json_int_t)d->last_cycle.time, "writes",
		d->last_cycle.writes, "duration_us",
		(json_int_t)d->last_cycle.duration_us, "verification",
		np_verify_status(d));
}


json_t *np_daemon_handle(struct np_daemon *d, const json_t *req)
{
	const char *op = json_string_value(json_object_get(req, "op"));
	char err[1024];

	if (!json_is_object(req) || !op)
		return np_ctl_error("op: required field is missing");
	if (!strcmp(op, "status"))
		return json_pack("{s:b,s:o}", "ok", 1, "status",
				 np_daemon_status(d));
	if (!strcmp(op, "admit")) {
		struct np_decision dec;
		const json_t *spec = json_object_get(req, "spec");
		json_t *res;
		int r;
		if (!json_is_object(spec))
			return np_ctl_error("spec: expected a workload spec object");
		r = admit_spec(d, spec, NULL, &dec, err, sizeof(err));
		if (r)
			return np_ctl_error("%s", err);
		res = json_pack("{s:b,s:o}", "ok", 1, "decision",
				np_decision_to_json(&d->st, &dec));
		if (dec.admitted) {
			np_daemon_reconcile(d); /* apply now, not in 10 s */
		}
		return res;
	}
	if (!strcmp(op, "release")) {
		const char *name = json_string_value(json_object_get(req, "name"));
		int r;
		if (!name)
			return np_ctl_error("name: required field is missing");
		r = release_wl(d, name, "requested");
		if (r == -ENOENT)
			return np_ctl_error("release: no workload named \"%s\"", name);
		if (r < 0)
			return np_ctl_error("release %s: the state could not be saved "
				    "(%s); it stays admitted, nothing changed",
				    name, strerror(-r));
		np_daemon_reconcile(d);
		return json_pack("{s:b}", "ok", 1);
	}
	if (!strcmp(op, "events")) {
		const json_t *lim = json_object_get(req, "limit");
		json_int_t n = 100;
		if (lim && !json_is_null(lim)) {
			if (!json_is_integer(lim) || json_integer_value(lim) < 1 ||
			    json_integer_value(lim) > 100000)
				return np_ctl_error("limit: expected an integer 1..100000");
			n = json_integer_value(lim);
		}
		return json_pack("{s:b,s:o,s:b,s:I}", "ok", 1, "events",
				 np_verify_events(d, (int)n), "verification",
				 d->verify != NULL, "dropped",
				 (json_int_t)np_verify_samples_dropped(d));
	}
	if (!strcmp(op, "plan")) {
		json_t *res = NULL;
		if (np_plan(json_object_get(req, "request"), &res, err,
			    sizeof(err)))
			return np_ctl_error("request.%s", err);
		return json_pack("{s:b,s:o}", "ok", 1, "result", res);
	}
	if (!strcmp(op, "reload")) {
		np_daemon_reconcile(d);
		return json_pack("{s:b}", "ok", 1);
	}
	return np_ctl_error("op: \"%s\" is not admit, release, status, plan or reload",
		    op);
}

/* One request per connection line; root peers only. */
/* ---- setup and the loop ------------------------------------------------- */


/*
 * Child cgroups of the managed parent that belong to no workload (released
 * while busy before a restart, or written just before a crash) must not
 * keep CPUs that are now someone else's: treat them as leftovers, kept on
 * the shared pool until empty, then removed.
 */
static void adopt_unknown_cgroups(struct np_daemon *d)
{
	int fd = dup(d->cg.parent_fd);
	DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;

	if (!dir) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((e = readdir(dir))) {
		bool known = false;
		size_t n = strlen(e->d_name);
		char(*g)[2 * NP_PATH_MAX];
		if (e->d_type != DT_DIR || e->d_name[0] == '.')
			continue;
		for (int i = 0; i < d->st.nworkloads && !known; i++) {
			const char *cg = d->st.w[i].req.cgroup;
			known = !strncmp(cg, e->d_name, n) &&
				(cg[n] == '\0' || cg[n] == '/');
		}
		if (known)
			continue;
		g = realloc(d->left, sizeof(*g) * (size_t)(d->nleft + 1));
		if (!g)
			break;
		d->left = g;
		snprintf(d->left[d->nleft++], sizeof(d->left[0]), "%s",
			 e->d_name);
		logm(LOG_WARNING,
		     "cgroup %s belongs to no workload: kept on the shared pool "
		     "until it is empty",
		     e->d_name);
	}
	closedir(dir);
}

int np_daemon_init(struct np_daemon *d, const char *config_path,
		   unsigned flags, char *err, size_t errlen)
{
	struct np_cgroup_opts o = {0};
	json_t *origins = NULL;
	bool fresh = false;
	int r;

	memset(d, 0, sizeof(*d));
	d->epfd = d->tfd = d->sfd = d->ifd = -1;
	d->cg.root_fd = d->cg.parent_fd = -1;
	d->cg_top.root_fd = d->cg_top.parent_fd = -1;
	snprintf(d->config_path, sizeof(d->config_path), "%s", config_path);
	{
		const char *fp = getenv("NUMAPLACED_FAILPOINT");
		d->failpoint_admit_saved = fp && !strcmp(fp, "admit-saved");
	}
	if ((r = np_config_load(&d->cfg, config_path, err, errlen)))
		return r;
	{
		/* The cgroup cache keeps two files open per managed cgroup:
		 * take what the hard limit allows (epoll/poll only, no
		 * select()). */
		struct rlimit rl;
		if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
			rl.rlim_cur = rl.rlim_max;
			(void)setrlimit(RLIMIT_NOFILE, &rl);
		}
	}
	if ((r = np_topology_load(&d->topo, d->cfg.topology, err, errlen)))
		return r;
	if ((r = np_state_init(&d->st, d->topo, &d->cfg.policy, err, errlen)))
		return r;
	o.root = d->cfg.cgroup_root[0] ? d->cfg.cgroup_root : NULL;
	o.parent = d->cfg.cgroup_parent;
	o.allow_fake = d->cfg.fake_cgroup_root;
	o.create_parent = true;
	if ((r = np_cgroup_open(&d->cg, &o, err, errlen)))
		return r;
	d->cg_open = true;
	{
		struct np_cgroup_opts top = o;
		top.parent = "";
		top.create_parent = false;
		if ((r = np_cgroup_open(&d->cg_top, &top, err, errlen)))
			return r;
		d->cg_top_open = true;
		for (int i = 0; i < d->cfg.nshared; i++)
			if ((r = np_cgroup_prepare(&d->cg_top,
						   d->cfg.shared_cgroups[i], 0,
						   err, errlen)))
				return r;
	}
	if ((r = np_mkdir_p(d->cfg.state_dir, 0700))) {
		NP_ERR("state directory %.200s: %s", d->cfg.state_dir, strerror(-r));
		return r;
	}
	if (flags & NP_DAEMON_RESET_STATE) {
		if ((r = np_statefile_reset(d->cfg.state_dir, err, errlen)))
			return r;
	}
	if ((r = np_statefile_load_with(d->cfg.state_dir, &d->st, &fresh,
					&origins, err, errlen)))
		return r;
	/* Loaded workloads are established (their cgroups exist already),
	 * except those the state lists as pending. */
	for (int i = 0; i < d->st.nworkloads; i++) {
		struct np_wl_meta *m = meta_add(d, d->st.w[i].req.name);
		if (!m) {
			json_decref(origins);
			return -ENOMEM;
		}
		m->established = true;
	}
	load_origins(d, origins);
	json_decref(origins);
	/* Specs removed while we were down release their workloads. */
	for (int i = 0; i < d->nmeta; i++)
		if (S(d->meta[i].spec_file)[0] &&
		    access(d->meta[i].spec_file, F_OK) && errno == ENOENT) {
			char name[NP_NAME_MAX];
			snprintf(name, sizeof(name), "%s", d->meta[i].name);
			release_wl(d, name, "spec file removed while stopped");
			i--;
		}
	adopt_unknown_cgroups(d);
	logm(LOG_INFO, "%s state with %d workload(s) from %s",
	     fresh ? "fresh" : "loaded", d->st.nworkloads, d->cfg.state_dir);
	if ((r = np_verify_start(d))) {
		NP_ERR("verify: the BPF programs could not be loaded and "
		    "verify.enabled is \"on\" (see the log above)");
		return r;
	}
	return 0;
}

void np_daemon_fini(struct np_daemon *d)
{
	np_verify_stop(d);
	if (d->dirty)
		save_state(d);
	np_ctl_server_close(d->ctl);
	d->ctl = NULL;
	if (d->epfd >= 0)
		close(d->epfd);
	if (d->tfd >= 0)
		close(d->tfd);
	if (d->sfd >= 0)
		close(d->sfd);
	if (d->ifd >= 0)
		close(d->ifd);
	np_cgroup_cache_free(&d->cgc);
	np_cgroup_close(&d->cg);
	np_cgroup_close(&d->cg_top);
	np_state_free(&d->st);
	np_topology_free(d->topo);
	for (int i = 0; i < d->nmeta; i++) {
		free(d->meta[i].spec_file);
		free(d->meta[i].spec_json);
	}
	free(d->meta);
	for (int i = 0; i < d->nwritten; i++) {
		free(d->written[i].path);
		free(d->written[i].cpus);
	}
	free(d->written);
	np_strmap_free(&d->meta_ix);
	np_strmap_free(&d->written_ix);
	free(d->notes);
	free(d->left);
	d->notes = NULL;
	d->left = NULL;
	d->topo = NULL;
	d->meta = NULL;
	d->written = NULL;
}

static int add_fd(struct np_daemon *d, int fd)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};
	return epoll_ctl(d->epfd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

static void reload(struct np_daemon *d)
{
	struct np_config c;
	char err[512];
	if (np_config_load(&c, d->config_path, err, sizeof(err))) {
		logm(LOG_ERR, "reload: %s (keeping the running configuration)",
		     err);
		return;
	}
	if (memcmp(&c.policy, &d->cfg.policy, sizeof(c.policy)) ||
	    strcmp(c.cgroup_parent, d->cfg.cgroup_parent) ||
	    strcmp(c.state_dir, d->cfg.state_dir)) {
		logm(LOG_ERR, "reload: node_policy, cgroup_parent and state_dir "
			      "need a restart (and a state reset for a policy "
			      "change); keeping the running configuration");
		return;
	}
	d->cfg.reconcile_period_ms = c.reconcile_period_ms;
	/* Thresholds and actions apply at once; what shapes the loaded
	 * programs needs a restart. */
	if (c.verify.enabled != d->cfg.verify.enabled ||
	    c.verify.max_workloads != d->cfg.verify.max_workloads ||
	    c.verify.tick_hz != d->cfg.verify.tick_hz ||
	    c.verify.sample_burst != d->cfg.verify.sample_burst ||
	    c.verify.grace_ms != d->cfg.verify.grace_ms ||
	    strcmp(c.bpf_pin_path, d->cfg.bpf_pin_path))
		logm(LOG_WARNING, "reload: verify.enabled, max_workloads, "
				  "tick_hz, sample_burst, grace_ms and "
				  "bpf_pin_path take effect at the next restart");
	d->cfg.verify.settle_ms = c.verify.settle_ms;
	d->cfg.verify.on_intrusion = c.verify.on_intrusion;
	d->cfg.verify.on_remote_memory = c.verify.on_remote_memory;
	d->cfg.verify.remote_fault_ratio = c.verify.remote_fault_ratio;
	d->cfg.verify.min_fault_pages = c.verify.min_fault_pages;
	d->cfg.verify.outside_mems_bytes = c.verify.outside_mems_bytes;
	d->cfg.verify.migrate_interval_s = c.verify.migrate_interval_s;
	logm(LOG_INFO, "configuration reloaded");
}

static json_t *handle_request(void *ctx, const json_t *req)
{
	return np_daemon_handle(ctx, req);
}

int np_daemon_run(struct np_daemon *d)
{
	struct np_ctl_limits lim;
	struct itimerspec its = {0};
	sigset_t mask;
	char err[512];
	int r;

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	d->epfd = epoll_create1(EPOLL_CLOEXEC);
	d->sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	d->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	d->ifd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	if (d->epfd < 0 || d->sfd < 0 || d->tfd < 0 || d->ifd < 0)
		return -errno;
	its.it_value.tv_sec = its.it_interval.tv_sec =
		d->cfg.reconcile_period_ms / 1000;
	its.it_value.tv_nsec = its.it_interval.tv_nsec =
		(long)(d->cfg.reconcile_period_ms % 1000) * 1000000L;
	timerfd_settime(d->tfd, 0, &its, NULL);
	np_mkdir_p(d->cfg.spec_dir, 0755);
	if (inotify_add_watch(d->ifd, d->cfg.spec_dir,
			      IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM |
				      IN_DELETE) < 0)
		logm(LOG_WARNING, "cannot watch %s: %s (specs are picked up "
				  "each period)",
		     d->cfg.spec_dir, strerror(errno));
	lim = NP_CTL_SERVER_DEFAULT_LIMITS;
	if ((r = np_ctl_server_open(&d->ctl, d->cfg.socket_path, &lim,
				    handle_request, d, err, sizeof(err)))) {
		logm(LOG_ERR, "%s", err);
		return r;
	}
	if ((r = add_fd(d, d->sfd)) || (r = add_fd(d, d->tfd)) ||
	    (r = add_fd(d, d->ifd)) || (r = add_fd(d, np_ctl_server_fd(d->ctl))))
		return r;
	np_daemon_reconcile(d);
	sd_notifyf(0, "READY=1\nSTATUS=%d workloads, reconciling every %u ms",
		   d->st.nworkloads, d->cfg.reconcile_period_ms);
	while (!d->stop) {
		struct epoll_event ev[8];
		int n = epoll_wait(d->epfd, ev, 8, -1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		for (int i = 0; i < n; i++) {
			int fd = ev[i].data.fd;
			if (fd == d->tfd) {
				uint64_t x;
				(void)!read(fd, &x, sizeof(x));
				np_daemon_reconcile(d);
				sd_notifyf(0,
					   "WATCHDOG=1\nSTATUS=%d workloads, "
					   "%llu drift repaired, %llu rejected",
					   d->st.nworkloads,
					   (unsigned long long)d->n.drift_repaired,
					   (unsigned long long)d->n.rejected);
			} else if (fd == d->sfd) {
				struct signalfd_siginfo si;
				while (read(fd, &si, sizeof(si)) == sizeof(si)) {
					if (si.ssi_signo == SIGHUP) {
						reload(d);
						np_daemon_reconcile(d);
					} else {
						d->stop = true;
					}
				}
			} else if (fd == d->ifd) {
				char buf[4096];
				while (read(fd, buf, sizeof(buf)) > 0)
					;
				np_daemon_reconcile(d);
			} else if (d->ctl && fd == np_ctl_server_fd(d->ctl)) {
				np_ctl_server_dispatch(d->ctl);
			}
		}
	}
	sd_notify(0, "STOPPING=1");
	logm(LOG_INFO, "stopping");
	return 0;
}
