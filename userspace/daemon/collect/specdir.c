// SPDX-License-Identifier: Apache-2.0
/*
 * Collect: the spec directory. Every *.json file is a workload spec: read
 * (if trusted) and parsed, and queued for decide (d->specq;
 * decide/specs.c admits new and changed files, releases the workloads of
 * removed ones). Nothing is admitted, saved or written here. Invalid
 * files are noted (said once per content and reason) and read again
 * every cycle, as are rejected ones; a file whose cgroup was removed by
 * hand is retired until it changes.
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
	np_daemon_note_invalid(d, path, NULL, why);
	for (int i = 0; r == -EPERM && i < d->st.nworkloads; i++) {
		struct np_wl_meta *m = np_daemon_meta_of(d->st.w[i]);
		if (m && !strcmp(strempty(m->spec_file), path))
			m->seen_scan = d->spec_scan;
	}
	return false;
}

/* For decide: path and spec (a new reference); -ENOMEM. */
static int queue(struct np_daemon *d, const char *path, json_t *spec)
{
	struct np_spec_queue *q = &d->specq;
	char *p;

	if (q->n == q->cap) {
		int cap = q->cap ? 2 * q->cap : 16;
		struct np_spec_item *v = realloc(q->v, sizeof(*v) * (size_t)cap);
		if (!v)
			return -ENOMEM;
		q->v = v;
		q->cap = cap;
	}
	if (!(p = strdup(path)))
		return -ENOMEM;
	q->v[q->n].path = p;
	q->v[q->n++].spec = json_incref(spec);
	return 0;
}

/* The file says what its workload was admitted with from it: marked
 * seen (not removed), nothing for decide (most files, most cycles). */
static bool as_admitted(struct np_daemon *d, const char *path,
			const json_t *spec, const char *name)
{
	struct np_wl_meta *m = np_daemon_meta_find(d, name);
	_cleanup_free_ char *canon = NULL;

	if (!m || strcmp(strempty(m->spec_file), path))
		return false;
	canon = json_dumps(spec, JSON_COMPACT | JSON_SORT_KEYS);
	if (!canon || strcmp(strempty(m->spec_json), canon))
		return false;
	m->seen_scan = d->spec_scan;
	return true;
}

static void scan_one(struct np_daemon *d, const char *path)
{
	_cleanup_json_ json_t *spec = NULL;
	_cleanup_free_ char *text = NULL;
	struct np_wl_meta *m;
	json_error_t jerr;
	const char *name;
	char err[512];
	size_t len;

	if (!read_spec(d, path, &text, &len))
		return;
	spec = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!spec) {
		snprintf(err, sizeof(err), "line %d: %s", jerr.line, jerr.text);
		np_daemon_note_invalid(d, path, NULL, err);
		return;
	}
	if (!json_is_object(spec)) {
		np_daemon_note_invalid(d, path, spec,
				       "spec: expected a workload spec object");
		return;
	}
	name = json_string_value(json_object_get(spec, "name"));
	if (!name) {
		np_daemon_note_invalid(d, path, spec,
				       "name: required field is missing");
		return;
	}
	if (as_admitted(d, path, spec, name) || !queue(d, path, spec))
		return;
	np_log(LOG_ERR, "spec %s: out of memory (read again next cycle)", path);
	if ((m = np_daemon_meta_find(d, name)))
		m->seen_scan = d->spec_scan; /* not taken for removed */
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
	d->specq.scanned = true; /* decide releases what it did not find */
	d->scan_more = false;
	d->scan_deadline_us = np_daemon_now_us() + NP_SCAN_BUDGET_MS * 1000u;
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
	return 0;
}
