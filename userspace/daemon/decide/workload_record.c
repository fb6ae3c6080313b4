// SPDX-License-Identifier: Apache-2.0
/*
 * Decide: the daemon's record of each workload (struct np_wl_meta: its
 * spec file and canonical spec, whether its cgroup was written, ...),
 * held by the workload's allocation in the engine's state (struct
 * np_workload_rec) and freed with it, found through the engine's own
 * index (np_state_find), so that a record and a workload cannot disagree;
 * and the notes about spec files that are not admitted (rejected,
 * invalid, retired), the daemon's own. Called by every stage; calls
 * nothing of the daemon.
 */
#include "daemon/daemon_internal.h"
#include "numaplace/cleanup.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Replace a meta string (NULL for ""); false when out of memory (the old
 * value is kept). */
bool np_daemon_set_str(char **dst, const char *src)
{
	char *s = NULL;
	if (src && *src && !(s = strdup(src)))
		return false;
	free(*dst);
	*dst = s;
	return true;
}

static void meta_free(struct np_workload_rec *r)
{
	struct np_wl_meta *m = (struct np_wl_meta *)r; /* rec is first */

	free(m->name);
	free(m->spec_file);
	free(m->spec_json);
	free(m);
}

/* Only a record this file made is the daemon's (rec.free says so). */
struct np_wl_meta *np_daemon_meta_of(const struct np_workload_alloc *a)
{
	return a->rec && a->rec->free == meta_free ? (struct np_wl_meta *)a->rec
						  : NULL;
}

struct np_wl_meta *np_daemon_meta_find(struct np_daemon *d, const char *name)
{
	int i = np_state_find(&d->st, name);

	return i < 0 ? NULL : np_daemon_meta_of(d->st.w[i]);
}

struct np_wl_meta *np_daemon_meta_add(struct np_daemon *d, const char *name)
{
	int i = np_state_find(&d->st, name);
	struct np_wl_meta *m;

	if (i < 0)
		return NULL; /* not admitted: no record */
	if ((m = np_daemon_meta_of(d->st.w[i])))
		return m;
	if (!(m = calloc(1, sizeof(*m))))
		return NULL;
	m->rec.free = meta_free;
	if (!(m->name = strdup(name))) {
		free(m);
		return NULL;
	}
	np_workload_rec_set(d->st.w[i], &m->rec);
	return m;
}

struct np_spec_note *np_daemon_note_find(struct np_daemon *d, const char *file)
{
	for (int i = 0; i < d->nnotes; i++)
		if (!strcmp(d->notes[i].file, file))
			return &d->notes[i];
	return NULL;
}

struct np_spec_note *np_daemon_note_set(struct np_daemon *d, const char *file,
				     const char *canon)
{
	struct np_spec_note *n = np_daemon_note_find(d, file);
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

void np_daemon_note_del(struct np_daemon *d, const char *file)
{
	struct np_spec_note *n = np_daemon_note_find(d, file);
	if (n)
		*n = d->notes[--d->nnotes];
}

/* An invalid spec is reported once per content and reason (a file that
 * does not parse has no content: once per reason). */
void np_daemon_note_invalid(struct np_daemon *d, const char *path,
			 const json_t *spec, const char *err)
{
	_cleanup_free_ char *c2 =
		spec ? json_dumps(spec, JSON_COMPACT | JSON_SORT_KEYS)
		     : strdup("");
	struct np_spec_note *n = np_daemon_note_find(d, path);

	if (n && c2 && !strcmp(n->canon, c2) && !strcmp(n->reason, err))
		return;
	np_log(LOG_ERR, "spec %s: %s", path, err);
	n = np_daemon_note_set(d, path, c2);
	if (n)
		snprintf(n->reason, sizeof(n->reason), "%s", err);
}
