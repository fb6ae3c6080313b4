// SPDX-License-Identifier: Apache-2.0
/*
 * Decide: the daemon's record of each workload beside the engine's state
 * (struct np_wl_meta: its spec file and canonical spec, whether its cgroup
 * was written, ...; found by name through an index), and the notes about
 * spec files that are not admitted (rejected, invalid, retired). Called by
 * every stage; calls nothing of the daemon.
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

struct np_wl_meta *np_daemon_meta_find(struct np_daemon *d, const char *name)
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

struct np_wl_meta *np_daemon_meta_add(struct np_daemon *d, const char *name)
{
	struct np_wl_meta *m = np_daemon_meta_find(d, name), *g;
	if (m)
		return m;
	g = realloc(d->meta, sizeof(*g) * (size_t)(d->nmeta + 1));
	if (!g)
		return NULL;
	d->meta = g;
	m = &d->meta[d->nmeta];
	memset(m, 0, sizeof(*m));
	if (!(m->name = strdup(name)))
		return NULL;
	if (np_strmap_put(&d->meta_ix, m->name, d->nmeta)) {
		free(m->name);
		return NULL;
	}
	d->nmeta++;
	return m;
}

void np_daemon_meta_del(struct np_daemon *d, const char *name)
{
	struct np_wl_meta *m = np_daemon_meta_find(d, name);
	if (!m)
		return;
	np_strmap_del(&d->meta_ix, m->name);
	free(m->name);
	free(m->spec_file);
	free(m->spec_json);
	*m = d->meta[--d->nmeta];
	if (m != &d->meta[d->nmeta] &&
	    np_strmap_put(&d->meta_ix, m->name, m - d->meta))
		np_strmap_free(&d->meta_ix); /* rebuilt on the next find */
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
