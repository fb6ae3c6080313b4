// SPDX-License-Identifier: Apache-2.0
/*
 * Collect: the spec directory. Every *.json file is a workload spec; new
 * and changed files are admitted, removed ones released. Rejected and
 * invalid files are noted (said once per content and reason) and retried
 * every cycle; a file whose cgroup was removed by hand is retired until it
 * changes.
 */
#include "daemon/daemon_internal.h"
#include "basic/trust.h"
#include "numaplace/cleanup.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* A spec is a few hundred bytes; anything this long is not one. */
#define NP_SPEC_MAX_SIZE (1024 * 1024)

static char *canonical(const json_t *spec)
{
	return json_dumps(spec, JSON_COMPACT | JSON_SORT_KEYS);
}

/*
 * A workload loaded from the state after a restart, whose spec file says
 * what the state recorded: adopted as it is (no release, no new CPUs).
 */
static bool same_as_loaded(struct np_daemon *d, const json_t *spec,
			   const char *name)
{
	struct np_workload_req *fw = calloc(1, sizeof(*fw));
	_cleanup_free_ char *a = NULL, *b = NULL;
	_cleanup_json_ json_t *ja = NULL, *jb = NULL;
	char err[512];
	bool same = false;

	if (fw && !np_workload_req_from_json(fw, spec, "spec", err,
					     sizeof(err))) {
		const struct np_workload_alloc *wa =
			&d->st.w[np_state_find(&d->st, name)];
		/* a partition made by verification is not in the file */
		if (wa->partition_by_verify && !fw->partition)
			fw->partition = true;
		ja = np_workload_req_to_json(fw);
		jb = np_workload_req_to_json(&wa->req);
		a = json_dumps(ja, JSON_COMPACT | JSON_SORT_KEYS);
		b = json_dumps(jb, JSON_COMPACT | JSON_SORT_KEYS);
		same = a && b && !strcmp(a, b);
	}
	if (fw)
		np_workload_req_free(fw);
	free(fw);
	return same;
}

/* An invalid spec is reported once per content and reason (a file that
 * does not parse has no content: once per reason). */
static void note_invalid(struct np_daemon *d, const char *path,
			 const json_t *spec, const char *err)
{
	_cleanup_free_ char *c2 = spec ? canonical(spec) : strdup("");
	struct np_spec_note *n = np_daemon_note_find(d, path);

	if (n && c2 && !strcmp(n->canon, c2) && !strcmp(n->reason, err))
		return;
	np_log(LOG_ERR, "spec %s: %s", path, err);
	n = np_daemon_note_set(d, path, c2);
	if (n)
		snprintf(n->reason, sizeof(n->reason), "%s", err);
}

/* True when the file needs no admission: unchanged, adopted or retired. */
static bool unchanged(struct np_daemon *d, const char *path,
		      const json_t *spec, const char *name)
{
	struct np_wl_meta *m = np_daemon_meta_find(d, name);
	_cleanup_free_ char *canon = canonical(spec);
	struct np_spec_note *n;

	if (m)
		m->seen_scan = d->spec_scan;
	if (m && canon && !strcmp(strempty(m->spec_json), canon))
		return true;
	/* Loaded from the state after a restart: adopt it if the file still
	 * says what the state recorded, else it changed while we were down:
	 * admit it anew. */
	if (m && !strempty(m->spec_json)[0] && np_state_find(&d->st, name) >= 0 &&
	    same_as_loaded(d, spec, name) && np_daemon_set_str(&m->spec_json, canon) &&
	    np_daemon_set_str(&m->spec_file, path))
		return true;
	n = np_daemon_note_find(d, path);
	return n && n->retired && canon && !strcmp(n->canon, canon);
}

/* Another spec file that still exists named this workload first: this
 * one is refused (said once), instead of the two taking turns at
 * releasing and admitting it every period. */
static bool taken_by_other_file(struct np_daemon *d, const char *path,
				const json_t *spec, const char *name)
{
	struct np_wl_meta *m = np_daemon_meta_find(d, name);
	char err[2 * NP_PATH_MAX + 128];

	if (!m || !strempty(m->spec_file)[0] || !strcmp(strempty(m->spec_file), path) ||
	    access(strempty(m->spec_file), F_OK))
		return false;
	snprintf(err, sizeof(err),
		 "name: workload \"%.127s\" comes from %.900s already", name,
		 strempty(m->spec_file));
	note_invalid(d, path, spec, err);
	return true;
}

/* A workload of that name admitted through the control socket: the file
 * does not take it over (it would be released and admitted anew, its
 * CPUs moved), it is refused until the name is free. */
static bool socket_workload(struct np_daemon *d, const char *path,
			    const json_t *spec, const char *name)
{
	struct np_wl_meta *m = np_daemon_meta_find(d, name);
	char err[NP_NAME_MAX + 160];

	if (!m || strempty(m->spec_file)[0] || np_state_find(&d->st, name) < 0)
		return false;
	snprintf(err, sizeof(err),
		 "name: workload \"%.127s\" was admitted through the control "
		 "socket; release it first",
		 name);
	note_invalid(d, path, spec, err);
	return true;
}

static uint64_t mono_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* A spec file that is not trusted (basic/trust.h) is not read: refused,
 * said once per reason, and nothing changes for the workload it gave
 * (kept as it is, not released as a removed file would be). False then. */
static bool read_spec(struct np_daemon *d, const char *path, char **text,
		      size_t *len)
{
	char err[1024];
	const char *why = err;
	size_t n = strlen(path);
	int r = np_trust_read("", path, NP_SPEC_MAX_SIZE, text, len, err,
			      sizeof(err));

	if (!r)
		return true;
	if (!strncmp(err, path, n) && err[n] == ':')
		why = err + n + 2; /* note_invalid names the file */
	note_invalid(d, path, NULL, why);
	for (int i = 0; r == -EPERM && i < d->nmeta; i++)
		if (!strcmp(strempty(d->meta[i].spec_file), path))
			d->meta[i].seen_scan = d->spec_scan;
	return false;
}

static void scan_one(struct np_daemon *d, const char *path)
{
	_cleanup_json_ json_t *spec = NULL;
	_cleanup_free_ char *text = NULL;
	struct np_decision dec;
	json_error_t jerr;
	const char *name;
	char err[512];
	size_t len;

	if (!read_spec(d, path, &text, &len))
		return;
	spec = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!spec) {
		snprintf(err, sizeof(err), "line %d: %s", jerr.line, jerr.text);
		note_invalid(d, path, NULL, err);
		return;
	}
	if (!json_is_object(spec)) {
		note_invalid(d, path, spec, "spec: expected a workload spec object");
		return;
	}
	name = json_string_value(json_object_get(spec, "name"));
	if (!name) {
		note_invalid(d, path, spec, "name: required field is missing");
		return;
	}
	if (taken_by_other_file(d, path, spec, name))
		return;
	if (unchanged(d, path, spec, name))
		return;
	if (socket_workload(d, path, spec, name))
		return;
	if (mono_us() > d->scan_deadline_us) {
		d->scan_more = true; /* next cycle, after signals and requests */
		return;
	}
	if (np_state_find(&d->st, name) >= 0) {
		/* Only exclusive CPU counts changed: resized in place, its
		 * CPUs kept; anything else: released and admitted again. */
		_cleanup_free_ char *canon = canonical(spec);
		if (canon && np_daemon_resize_spec(d, spec, path, canon))
			return;
	}
	if (np_state_find(&d->st, name) >= 0 &&
	    np_daemon_release(d, name, "spec changed") < 0)
		return; /* retried next cycle */
	if (np_daemon_admit(d, spec, path, &dec, err, sizeof(err)) < 0)
		note_invalid(d, path, spec, err);
}

int np_daemon_scan_specs(struct np_daemon *d)
{
	DIR *dir = opendir(d->cfg.spec_dir);
	struct dirent *e;
	char err[1024];

	if (!dir) {
		if (errno != ENOENT)
			np_log_errno(LOG_ERR, -errno, "spec directory %s",
				     d->cfg.spec_dir);
		return 0;
	}
	/* Whoever may write the directory may put a file of theirs in it:
	 * then no file is read and nothing changes (nothing released). */
	if (np_trust_fd(dirfd(dir), "spec directory", d->cfg.spec_dir, err,
			sizeof(err))) {
		if (strcmp(err, d->spec_dir_refused))
			np_log(LOG_ERR, "%s; its spec files are not read, and "
					"their workloads stay as they are",
			       err);
		snprintf(d->spec_dir_refused, sizeof(d->spec_dir_refused),
			 "%s", err);
		closedir(dir);
		return 0;
	}
	d->spec_dir_refused[0] = '\0';
	/* workloads named by a spec file of this scan are marked with it */
	d->spec_scan++;
	d->scan_more = false;
	d->scan_deadline_us = mono_us() + NP_SCAN_BUDGET_MS * 1000u;
	while ((e = readdir(dir))) {
		char path[2 * NP_PATH_MAX];
		size_t len = strlen(e->d_name);

		if (e->d_name[0] == '.' || len < 6 ||
		    strcmp(e->d_name + len - 5, ".json"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", d->cfg.spec_dir,
			 e->d_name);
		scan_one(d, path);
	}
	closedir(dir);
	for (int i = 0; i < d->nnotes; i++)
		if (access(d->notes[i].file, F_OK)) {
			np_daemon_note_del(d, d->notes[i].file);
			i--;
		}
	/* Specs that disappeared release their workloads. */
	for (int i = 0; i < d->nmeta; i++) {
		if (!strempty(d->meta[i].spec_file)[0])
			continue;
		if (d->meta[i].seen_scan != d->spec_scan) {
			char name[NP_NAME_MAX];
			snprintf(name, sizeof(name), "%s", d->meta[i].name);
			np_daemon_release(d, name, "spec file removed");
			i--;
		}
	}
	return 0;
}
