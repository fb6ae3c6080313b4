// SPDX-License-Identifier: Apache-2.0
/*
 * Host isolation: the originals in RUNTIME_DIR/hostiso.json (in
 * STATE_DIR before 2026-11-30: moved from there at the first load).
 *
 *   {"version": 1, "isolated": "1,5",
 *    "default_smp_affinity": "ff", "workqueue_cpumask": "ff",
 *    "irqs": [{"irq": 24, "affinity": "0-7"}],
 *    "kthreads": [{"pid": 12, "comm": "rcu_gp", "start": 45,
 *                  "affinity": "0-7"}]}
 *
 * The mask fields are absent when numaplace did not change them. Values
 * are the text the files held (newline included), written back as they
 * were.
 */
#include "enforce/hostiso_internal.h"
#include "basic/fileio.h"
#include "engine/json_util.h"
#include "numaplace/cleanup.h"
#include "numaplace/error.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SAVE_MAX (16u << 20)

struct hi_item *hi_find(struct hi_list *l, int id)
{
	for (int i = 0; i < l->n; i++)
		if (l->v[i].id == id)
			return &l->v[i];
	return NULL;
}

struct hi_item *hi_add(struct hi_list *l, int id, const char *orig)
{
	struct hi_item *it;

	if (l->n == l->cap) {
		int cap = l->cap ? 2 * l->cap : 64;
		struct hi_item *g = realloc(l->v, sizeof(*g) * (size_t)cap);
		if (!g)
			return NULL;
		l->v = g;
		l->cap = cap;
	}
	it = &l->v[l->n];
	memset(it, 0, sizeof(*it));
	it->id = id;
	if (!(it->orig = strdup(orig)))
		return NULL;
	l->n++;
	return it;
}

void hi_truncate(struct hi_list *l, int n)
{
	while (l->n > n)
		free(l->v[--l->n].orig);
}

void hi_forget(struct np_hostiso *h)
{
	hi_truncate(&h->irqs, 0);
	hi_truncate(&h->kts, 0);
	free(h->def_orig);
	free(h->wq_orig);
	free(h->present);
	h->def_orig = h->wq_orig = NULL;
	h->present = NULL;
	h->npresent = 0;
	h->present_known = false;
	h->saved = false;
}

static json_t *to_json(const struct np_hostiso *h)
{
	_cleanup_free_ char *iso = np_cpuset_str(&h->isolated);
	json_t *irqs = json_array(), *kts = json_array(), *j;

	j = json_pack("{s:i,s:s,s:o,s:o}", "version", 1, "isolated",
		      iso ? iso : "", "irqs", irqs, "kthreads", kts);
	if (!j || !iso)
		goto fail;
	if ((h->def_orig && json_object_set_new(j, "default_smp_affinity",
						json_string(h->def_orig))) ||
	    (h->wq_orig && json_object_set_new(j, "workqueue_cpumask",
					       json_string(h->wq_orig))))
		goto fail;
	for (int i = 0; i < h->irqs.n; i++)
		if (json_array_append_new(
			    irqs, json_pack("{s:i,s:s}", "irq", h->irqs.v[i].id,
					    "affinity", h->irqs.v[i].orig)))
			goto fail;
	if (h->present_known) {
		json_t *pr = json_array();
		if (!pr || json_object_set_new(j, "irqs_present", pr))
			goto fail;
		for (int i = 0; i < h->npresent; i++)
			if (json_array_append_new(pr,
						  json_integer(h->present[i])))
				goto fail;
	}
	for (int i = 0; i < h->kts.n; i++) {
		const struct hi_item *k = &h->kts.v[i];
		if (json_array_append_new(
			    kts, json_pack("{s:i,s:s,s:I,s:s}", "pid", k->id,
					   "comm", k->comm, "start",
					   (json_int_t)k->start, "affinity",
					   k->orig)))
			goto fail;
	}
	return j;
fail:
	json_decref(j);
	return NULL;
}

int hi_save(struct np_hostiso *h, char *err, size_t errlen)
{
	_cleanup_json_ json_t *j = to_json(h);
	_cleanup_free_ char *text = NULL;
	int r;

	if (!j || !(text = json_dumps(j, JSON_INDENT(1) | JSON_SORT_KEYS)))
		return np_errno(err, errlen, -ENOMEM, "%s/%s", h->dir,
				NP_HOSTISO_FILE);
	r = np_write_atomic_at(h->dirfd, NP_HOSTISO_FILE, text, strlen(text),
			       0600);
	if (r)
		return np_errno(err, errlen, r, "writing %s/%s", h->dir,
				NP_HOSTISO_FILE);
	h->saved = true;
	return 0;
}

int hi_unlink(struct np_hostiso *h, char *err, size_t errlen)
{
	int r = np_unlink_durable_at(h->dirfd, NP_HOSTISO_FILE);

	if (r)
		return np_errno(err, errlen, r, "removing %s/%s", h->dir,
				NP_HOSTISO_FILE);
	h->saved = false;
	return 0;
}

/* A string field that parses as a cpu list (mask: a hex mask). */
static int cpus_field(const json_t *o, const char *key, const char *path,
		      bool required, bool mask, const char **out, char *err,
		      size_t errlen)
{
	char perr[256];
	np_cpuset s;
	int r = np_json_str(o, key, path, required, out, err, errlen);

	if (r)
		return r;
	r = mask ? np_cpuset_parse_mask(&s, *out, perr, sizeof(perr))
		 : np_cpuset_parse(&s, *out, perr, sizeof(perr));
	if (r)
		return np_json_fail(err, errlen, path, key, "%s", perr);
	return 0;
}

static int irqs_from_json(struct np_hostiso *h, const json_t *a, char *err,
			  size_t errlen)
{
	static const char *const keys[] = {"irq", "affinity", NULL};
	const json_t *e;
	size_t i;

	if (!json_is_array(a))
		return np_json_fail(err, errlen, "", "irqs", "expected an array");
	json_array_foreach(a, i, e)
	{
		char path[32];
		const char *aff;
		long long irq;
		int r;
		snprintf(path, sizeof(path), "irqs[%zu]", i);
		if (!json_is_object(e))
			return np_json_fail(err, errlen, path, NULL,
					    "expected an object");
		if ((r = np_json_only_keys(e, keys, path, err, errlen)) ||
		    (r = np_json_int(e, "irq", path, true, 0, 1 << 24, &irq,
				     err, errlen)) ||
		    (r = cpus_field(e, "affinity", path, true, false, &aff, err,
				    errlen)))
			return r;
		if (hi_find(&h->irqs, (int)irq))
			return np_json_fail(err, errlen, path, "irq",
					    "%lld is listed twice", irq);
		if (!hi_add(&h->irqs, (int)irq, aff))
			return -ENOMEM;
	}
	return 0;
}

static int kts_from_json(struct np_hostiso *h, const json_t *a, char *err,
			 size_t errlen)
{
	static const char *const keys[] = {"pid", "comm", "start", "affinity",
					   NULL};
	const json_t *e;
	size_t i;

	if (!json_is_array(a))
		return np_json_fail(err, errlen, "", "kthreads",
				    "expected an array");
	json_array_foreach(a, i, e)
	{
		char path[32];
		const char *aff, *comm;
		long long pid, start;
		struct hi_item *k;
		int r;
		snprintf(path, sizeof(path), "kthreads[%zu]", i);
		if (!json_is_object(e))
			return np_json_fail(err, errlen, path, NULL,
					    "expected an object");
		if ((r = np_json_only_keys(e, keys, path, err, errlen)) ||
		    (r = np_json_int(e, "pid", path, true, 1, 1 << 30, &pid,
				     err, errlen)) ||
		    (r = np_json_int(e, "start", path, true, 0, 1LL << 62,
				     &start, err, errlen)) ||
		    (r = np_json_str(e, "comm", path, true, &comm, err,
				     errlen)) ||
		    (r = cpus_field(e, "affinity", path, true, false, &aff, err,
				    errlen)))
			return r;
		if (hi_find(&h->kts, (int)pid))
			return np_json_fail(err, errlen, path, "pid",
					    "%lld is listed twice", pid);
		if (!(k = hi_add(&h->kts, (int)pid, aff)))
			return -ENOMEM;
		k->start = (unsigned long long)start;
		snprintf(k->comm, sizeof(k->comm), "%s", comm);
	}
	return 0;
}

/* "irqs_present": IRQ numbers (optional: older files have none). */
static int present_from_json(struct np_hostiso *h, const json_t *a, char *err,
			     size_t errlen)
{
	const json_t *v;
	size_t i;

	if (!a)
		return 0;
	if (!json_is_array(a) || json_array_size(a) > 65536)
		return np_json_fail(err, errlen, "", "irqs_present",
				    "expected an array of IRQ numbers");
	if (!(h->present = malloc(sizeof(int) * (json_array_size(a) + 1))))
		return -ENOMEM;
	json_array_foreach(a, i, v)
	{
		if (!json_is_integer(v) || json_integer_value(v) < 0 ||
		    json_integer_value(v) > 1 << 20)
			return np_json_fail(err, errlen, "", "irqs_present",
					    "element %zu is not an IRQ number",
					    i);
		h->present[h->npresent++] = (int)json_integer_value(v);
	}
	h->present_known = true;
	return 0;
}

static int from_json(struct np_hostiso *h, const json_t *j, char *err,
		     size_t errlen)
{
	static const char *const keys[] = {
		"version",  "isolated", "default_smp_affinity",
		"workqueue_cpumask", "irqs", "kthreads", "irqs_present", NULL};
	const char *s;
	long long v;
	int r;

	if (!json_is_object(j))
		return np_json_fail(err, errlen, "", NULL, "expected an object");
	if ((r = np_json_only_keys(j, keys, "", err, errlen)) ||
	    (r = np_json_int(j, "version", "", true, 1, 1, &v, err, errlen)))
		return r;
	if ((r = np_json_cpuset(j, "isolated", "", true, &h->isolated, err,
				errlen)))
		return r;
	r = cpus_field(j, "default_smp_affinity", "", false, true, &s, err,
		       errlen);
	if (r == 0 && !(h->def_orig = strdup(s)))
		return -ENOMEM;
	if (r && r != -ENOENT)
		return r;
	r = cpus_field(j, "workqueue_cpumask", "", false, true, &s, err,
		       errlen);
	if (r == 0 && !(h->wq_orig = strdup(s)))
		return -ENOMEM;
	if (r && r != -ENOENT)
		return r;
	if ((r = irqs_from_json(h, json_object_get(j, "irqs"), err, errlen)) ||
	    (r = present_from_json(h, json_object_get(j, "irqs_present"), err,
				   errlen)))
		return r;
	return kts_from_json(h, json_object_get(j, "kthreads"), err, errlen);
}

int np_hostiso_load(struct np_hostiso *h, char *err, size_t errlen)
{
	_cleanup_free_ char *text = NULL;
	_cleanup_json_ json_t *j = NULL;
	const char *dir;
	json_error_t je;
	char msg[512];
	bool old, removing;
	int r;

	if (h->loaded)
		return h->saved;
	r = np_read_moved_at(h->dirfd, h->oldfd, NP_HOSTISO_FILE,
			     NP_READ_NOFOLLOW | NP_READ_REGULAR, SAVE_MAX,
			     &text, NULL, &old);
	dir = old ? h->old_dir : h->dir;
	if (r == -ENOENT) {
		h->loaded = true;
		return 0;
	}
	if (r)
		return np_errno(err, errlen, r, "reading %s/%s", dir,
				NP_HOSTISO_FILE);
	if (!(j = json_loads(text, JSON_REJECT_DUPLICATES, &je)))
		return np_errf(err, errlen, -EINVAL,
			       "%s/%s: line %d column %d: %s", dir,
			       NP_HOSTISO_FILE, je.line, je.column, je.text);
	hi_forget(h);
	if ((r = from_json(h, j, msg, sizeof(msg)))) {
		hi_forget(h);
		return np_errf(err, errlen, r, "%s/%s: %s", dir,
			       NP_HOSTISO_FILE, msg);
	}
	/* read from an older release's place: moved here (a stale copy
	 * there beside this one is removed) */
	if ((r = np_finish_move_at(h->dirfd, h->oldfd, NP_HOSTISO_FILE, text,
				   strlen(text), 0600, old, &removing))) {
		hi_forget(h);
		return np_errno(err, errlen, r,
				removing ? "removing %s/%s (moved to %s)"
					 : "moving %s/%s to %s",
				h->old_dir, NP_HOSTISO_FILE, h->dir);
	}
	h->loaded = h->saved = true;
	return 1;
}
