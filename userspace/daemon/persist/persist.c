// SPDX-License-Identifier: Apache-2.0
/*
 * Persist: the state file (numaplace/state_file.h) with the daemon's own
 * part in the same atomic, checksummed write; between two such writes a
 * journal record of what changed (numaplace/state_journal.h). Saved
 * before anything is applied or acknowledged.
 */
#include "daemon/daemon_internal.h"
#include "numaplace/error.h"
#include "numaplace/state_file.h"
#include "numaplace/state_journal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/*
 * The daemon's part of the state file (body.daemon), in the same atomic
 * write as the allocations so that the two never disagree:
 *   {"spec_files": {"NAME": "FILE", ...}, "pending": ["NAME", ...],
 *    "cgroup_driver": "systemd", "managed_parent": "PATH"}
 * spec_files: which spec file each workload came from, so that a restart
 * can tell a spec removed or changed while the daemon was down from a
 * workload admitted through the socket. pending: admitted, but its cgroup
 * not written yet. The state is saved before a cgroup is touched
 * (write-ahead), so a kill in between leaves a workload whose cgroup does
 * not exist yet; the restarted daemon creates it instead of taking it for
 * a cgroup removed by hand. cgroup_driver and managed_parent: where the
 * workloads' cgroups are, so that a start that would look elsewhere (the
 * "auto" driver choosing otherwise) refuses instead of releasing them.
 */
static json_t *origins_json(const struct np_daemon *d)
{
	json_t *o = json_object(), *files = json_object(), *pend = json_array();
	bool bad = !o || !files || !pend;

	for (int i = 0; !bad && i < d->st.nworkloads; i++) {
		const struct np_wl_meta *m = np_daemon_meta_of(d->st.w[i]);
		if (!m)
			continue;
		if (strempty(m->spec_file)[0])
			bad |= json_object_set_new(files, m->name,
						   json_string(m->spec_file)) != 0;
		if (!m->established)
			bad |= json_array_append_new(pend,
						     json_string(m->name)) != 0;
	}
	if (bad || json_object_set(o, "spec_files", files) ||
	    json_object_set(o, "pending", pend) ||
	    (d->enf && json_object_set_new(o, "cgroup_driver",
					   json_string(d->enf->ops->name))) ||
	    json_object_set_new(o, "managed_parent",
				json_string(d->cfg.cgroup_parent))) {
		json_decref(o);
		o = NULL;
	}
	json_decref(files);
	json_decref(pend);
	return o;
}

/* One journal record of what changed (or a compaction: the first save,
 * after a failure, when the journal outgrew the snapshot, and
 * NP_JOURNAL_COMPACT); flags: NP_JOURNAL_*. */
static int save(struct np_daemon *d, unsigned flags)
{
	char err[512];
	json_t *o = origins_json(d);
	int r = o ? np_journal_save(&d->journal, d->cfg.state_dir, &d->st, o,
				    flags, err, sizeof(err))
		  : -ENOMEM;
	if (!o)
		snprintf(err, sizeof(err), "out of memory");
	json_decref(o);
	if (r < 0)
		np_log(LOG_ERR, "saving state: %s", err);
	else {
		d->dirty = false;
		d->dirty_lazy = false;
		d->n.state_saves++;
		d->placement_gen++; /* placements may have changed */
	}
	return r;
}

int np_daemon_save(struct np_daemon *d)
{
	return save(d, 0);
}

int np_daemon_save_lazy(struct np_daemon *d)
{
	return save(d, NP_JOURNAL_NOSYNC);
}

/* At a clean stop: the journal compacted into state.json (what older
 * tools read), then closed. */
void np_daemon_state_close(struct np_daemon *d)
{
	if (d->journal.last && d->journal.bytes)
		save(d, NP_JOURNAL_COMPACT);
	np_journal_fini(&d->journal);
}

/* A spec file the state may name: a *.json file of spec_dir, named as
 * the scan names it (SPEC_DIR/FILE). Anything else (/etc/passwd) would be
 * taken for a spec removed while stopped and its workload released. */
static bool spec_file_ok(const struct np_daemon *d, const char *file)
{
	size_t n = strlen(d->cfg.spec_dir), len;
	const char *base = file + n + 1;

	if (strncmp(file, d->cfg.spec_dir, n) || file[n] != '/')
		return false;
	len = strlen(base);
	return len >= 6 && base[0] != '.' && !strchr(base, '/') &&
	       !strcmp(base + len - 5, ".json");
}

/* Every spec file of files is one of spec_dir's: -EINVAL naming the
 * first that is not (nothing applied yet). */
static int check_spec_files(const struct np_daemon *d, const json_t *files,
			    const char *field, char *err, size_t errlen)
{
	const char *name;
	json_t *v;

	json_object_foreach((json_t *)files, name, v)
	{
		if (!json_is_string(v) || spec_file_ok(d, json_string_value(v)))
			continue;
		return np_errf(err, errlen, -EINVAL,
			       "state: %s[\"%.127s\"]: \"%.300s\" is not a "
			       "spec file of spec_dir %.300s; mend the state "
			       "(or spec_dir), or drain the node's workloads "
			       "and start with --reset-state",
			       field, name, json_string_value(v),
			       d->cfg.spec_dir);
	}
	return 0;
}

/* Applies what origins_json() saved. Names the state does not know are
 * ignored. An older numaplaced kept the spec files in a flat
 * STATE_DIR/origins.json {"NAME": "FILE"}: read when the state has no
 * daemon part. A spec file outside spec_dir: -EINVAL (err says which),
 * nothing applied. */
int np_daemon_load_origins(struct np_daemon *d, const json_t *o, char *err,
			   size_t errlen)
{
	char path[NP_PATH_MAX + 32];
	json_error_t jerr;
	json_t *legacy = NULL, *v;
	const json_t *files, *pend;
	const char *name;
	size_t k;
	int r;

	if (!o) {
		snprintf(path, sizeof(path), "%s/origins.json",
			 d->cfg.state_dir);
		if (!(legacy = json_load_file(path, 0, &jerr))) {
			if (access(path, F_OK) == 0)
				np_log(LOG_ERR, "%s: %s (line %d): spec origins "
				     "unknown, every loaded workload is taken "
				     "as admitted through the socket",
				     path, jerr.text, jerr.line);
			return 0;
		}
		o = legacy;
	}
	files = legacy ? legacy : json_object_get(o, "spec_files");
	pend = legacy ? NULL : json_object_get(o, "pending");
	if ((files && !json_is_object(files)) ||
	    (pend && !json_is_array(pend))) {
		np_log(LOG_ERR, "state: daemon.spec_files must be an object and "
		     "daemon.pending an array: spec origins unknown");
		json_decref(legacy);
		return 0;
	}
	if (files && (r = check_spec_files(d, files,
					   legacy ? "origins.json"
						  : "daemon.spec_files",
					   err, errlen))) {
		json_decref(legacy);
		return r;
	}
	json_object_foreach((json_t *)files, name, v)
	{
		struct np_wl_meta *m = np_daemon_meta_find(d, name);
		if (m && json_is_string(v))
			np_daemon_set_str(&m->spec_file, json_string_value(v));
	}
	json_array_foreach(pend, k, v)
	{
		struct np_wl_meta *m =
			json_is_string(v) ? np_daemon_meta_find(d, json_string_value(v))
					  : NULL;
		/* Without create_cgroups nobody but the user makes the
		 * cgroup: a missing one stays "removed", and is released. */
		if (m && d->cfg.create_cgroups)
			m->established = false;
	}
	json_decref(legacy);
	return 0;
}

