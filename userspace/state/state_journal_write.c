// SPDX-License-Identifier: Apache-2.0
/*
 * The state journal's writer (np_journal_save, numaplace/state_journal.h):
 * a record of what changed since the last save, or a compaction (a new
 * state file through np_statefile_compact(), the journal emptied). Above
 * the state file: it calls the state file and the journal's records
 * (state_journal.c), neither calls it.
 */
#include "numaplace/state_journal.h"
#include "basic/fileio.h"
#include "numaplace/cleanup.h"
#include "numaplace/error.h"
#include "numaplace/state_file.h"
#include "state_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

/* Forget the last save: the next one compacts. */
static void drop(struct np_journal *j)
{
	json_decref(j->last);
	j->last = NULL;
	np_strmap_free(&j->wfp);
	j->have_wfp = false;
}

void np_journal_fini(struct np_journal *j)
{
	drop(j);
}

/* Every workload's fingerprint (name -> fp), as of a compaction: 0 or
 * -ENOMEM (fps emptied). A map, not a JSON object: at 10,000 workloads
 * the object took 1.2 MB, the map 0.5. */
static int all_fps(const struct np_node_state *st, struct np_strmap *fps)
{
	for (int i = 0; i < st->nworkloads; i++)
		if (np_strmap_put(fps, st->w[i]->req.name,
				  (long)np_workload_alloc_fp(st->w[i]))) {
			np_strmap_free(fps);
			return -ENOMEM;
		}
	return 0;
}

/* The snapshot written, the journal emptied. */
static int compact_now(struct np_journal *j, const char *dir,
		       const struct np_node_state *st, const json_t *daemon,
		       json_t *flat, char *err, size_t errlen)
{
	struct np_strmap fps = {0};
	uint64_t seq = j->seq;
	size_t bytes = 0;
	int r;

	drop(j);
	if (all_fps(st, &fps)) {
		json_decref(flat);
		return np_errf(err, errlen, -ENOMEM, "saving state: out of "
						     "memory");
	}
	if ((r = np_statefile_compact(dir, st, daemon, &seq, &bytes, err,
				      errlen))) {
		json_decref(flat);
		np_strmap_free(&fps);
		return r;
	}
	j->last = flat;
	j->wfp = fps;
	j->have_wfp = true;
	j->seq = seq;
	j->bytes = 0;
	j->snap_bytes = bytes;
	j->compactions++;
	return 0;
}

/* What differs between j->last and flat (the parts other than the
 * workloads), as a record's put and del. */
static int diff(const json_t *last, const json_t *flat, json_t *puts,
		json_t *dels)
{
	const char *k;
	json_t *v;

	json_object_foreach((json_t *)flat, k, v)
	{
		json_t *old = json_object_get(last, k);
		if ((!old || !json_equal(old, v)) &&
		    json_object_set_nocheck(puts, k, v))
			return -ENOMEM;
	}
	json_object_foreach((json_t *)last, k, v)
	{
		if (!json_object_get(flat, k) &&
		    json_array_append_new(dels, json_string_nocheck(k)))
			return -ENOMEM;
	}
	return 0;
}

/* "w<SEP>NAME" into puts, its value v (stolen; NULL: out of memory). */
static int put_workload(json_t *puts, const char *name, json_t *v)
{
	char key[NP_NAME_MAX + 8];

	snprintf(key, sizeof(key), "w" NP_JOURNAL_SEP "%s", name);
	return v && !json_object_set_new_nocheck(puts, key, v) ? 0 : -ENOMEM;
}

/* "w<SEP>NAME" into dels. */
static int del_workload(json_t *dels, const char *name)
{
	char key[NP_NAME_MAX + 8];

	snprintf(key, sizeof(key), "w" NP_JOURNAL_SEP "%s", name);
	return json_array_append_new(dels, json_string_nocheck(key)) ? -ENOMEM
								      : 0;
}

/*
 * The workloads that changed since the last save, by fingerprint: each
 * one's saved form into puts and its new fingerprint into fps; the ones
 * gone into dels (fps: name -> null). A workload that did not change
 * costs its fingerprint, no JSON. -EINVAL for a workload without a name.
 */
static int diff_workloads(const struct np_strmap *last_fps,
			  const struct np_node_state *st, json_t *puts,
			  json_t *dels, json_t *fps)
{
	struct np_strmap now = {0};
	size_t seen = 0;
	int r = 0;

	for (int i = 0; i < st->nworkloads; i++) {
		const struct np_workload_alloc *a = st->w[i];
		uint64_t fp;
		long v;
		bool had;
		if (!a->req.name[0] || strlen(a->req.name) >= NP_NAME_MAX)
			return -EINVAL;
		fp = np_workload_alloc_fp(a);
		if ((had = np_strmap_get(last_fps, a->req.name, &v)))
			seen++;
		if (had && (uint64_t)v == fp)
			continue;
		if ((r = put_workload(puts, a->req.name,
				      np_workload_state_json(st, a))) ||
		    json_object_set_new_nocheck(fps, a->req.name,
						json_integer((json_int_t)fp)))
			return r ? r : -ENOMEM;
	}
	if (seen == last_fps->n)
		return 0;
	/* some are gone: which (a release; O(workloads) lookups) */
	for (int i = 0; !r && i < st->nworkloads; i++)
		r = np_strmap_put(&now, st->w[i]->req.name, 1);
	for (size_t i = 0; !r && i < last_fps->cap; i++) {
		const char *k = np_strmap_key_at(last_fps, i);
		if (!k || np_strmap_get(&now, k, NULL))
			continue;
		if (!(r = del_workload(dels, k)) &&
		    json_object_set_new_nocheck(fps, k, json_null()))
			r = -ENOMEM;
	}
	np_strmap_free(&now);
	return r;
}

/* fps (name -> fingerprint, or null: gone) applied to j->wfp. */
static int apply_fps(struct np_journal *j, json_t *fps)
{
	const char *k;
	json_t *v;

	json_object_foreach(fps, k, v)
	{
		if (json_is_null(v))
			np_strmap_del(&j->wfp, k);
		else if (np_strmap_put(&j->wfp, k,
				       (long)(uint64_t)json_integer_value(v)))
			return -ENOMEM;
	}
	return 0;
}

/*
 * A record is refused (ENOSPC) when the file system could not hold it and
 * the next compaction, a snapshot as large as the last one: a journal
 * that cannot be compacted would only grow. (An append that fits in the
 * journal's last block would succeed on a full file system.)
 */
static int room_for(const struct np_journal *j, const char *dir, size_t n,
		    char *err, size_t errlen)
{
	struct statvfs sv;
	unsigned long long avail, need = j->snap_bytes + n;

	if (statvfs(dir, &sv))
		return 0; /* the write says what is wrong, if anything */
	avail = (unsigned long long)sv.f_bavail * sv.f_frsize;
	if (avail >= need)
		return 0;
	return np_errf(err, errlen, -ENOSPC,
		       "saving state to %s/" NP_JOURNAL_NAME
		       " (the journal of %s/" NP_STATEFILE_NAME
		       "): %s (%llu bytes free, a record and the next "
		       "compaction need %llu)",
		       dir, dir, strerror(ENOSPC), avail, need);
}

/* The record (puts, dels) appended: one write, and one fdatasync unless
 * nosync. */
static int write_record(struct np_journal *j, const char *dir, json_t *puts,
			json_t *dels, bool nosync, char *err, size_t errlen)
{
	_cleanup_free_ char *line = np_journal_record_line(j->seq + 1, puts, dels);
	char path[4096];
	size_t n;
	int fd, r;

	if (!line)
		return np_errf(err, errlen, -ENOMEM, "saving state: out of "
						     "memory");
	n = strlen(line);
	if ((r = room_for(j, dir, n, err, errlen)))
		return r;
	/* opened for each record: no descriptor held open for writing
	 * (that would keep its file system from being remounted
	 * read-only) */
	snprintf(path, sizeof(path), "%s/" NP_JOURNAL_NAME, dir);
	fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW);
	r = fd < 0 ? -errno : np_write_all(fd, line, n);
	if (!r && !nosync && fdatasync(fd))
		r = -errno;
	if (r) {
		/* a partial record would be a damaged one in the middle;
		 * should this fail, the next save compacts, emptying it */
		if (fd >= 0 && ftruncate(fd, (off_t)j->bytes)) {
		}
		if (fd >= 0)
			close(fd);
		return np_errf(err, errlen, r,
			       "saving state to %s/" NP_JOURNAL_NAME
			       " (the journal of %s/" NP_STATEFILE_NAME
			       "): %s",
			       dir, dir, strerror(-r));
	}
	if (close(fd)) {
		r = -errno;
		return np_errf(err, errlen, r, "closing %s: %s", path,
			       strerror(-r));
	}
	j->seq++;
	j->bytes += n;
	j->records++;
	return 0;
}

/* The record of what changed since the last save (flat: the parts
 * other than the workloads, taken over). */
static int append(struct np_journal *j, const char *dir,
		  const struct np_node_state *st, json_t *flat, bool nosync,
		  char *err, size_t errlen)
{
	_cleanup_json_ json_t *puts = json_object(), *dels = json_array(),
			      *fps = json_object();
	int r = puts && dels && fps ? 0 : -ENOMEM;

	if (!r)
		r = diff_workloads(&j->wfp, st, puts, dels, fps);
	if (!r)
		r = diff(j->last, flat, puts, dels);
	if (r) {
		drop(j);
		json_decref(flat);
		return np_errf(err, errlen, r,
			       "saving state: %s",
			       r == -EINVAL ? "a workload without a name"
					    : "out of memory");
	}
	if ((json_object_size(puts) || json_array_size(dels)) &&
	    (r = write_record(j, dir, puts, dels, nosync, err, errlen))) {
		drop(j);
		json_decref(flat);
		return r;
	}
	if (apply_fps(j, fps)) {
		drop(j); /* the record is written: the next save compacts */
		json_decref(flat);
		return np_errf(err, errlen, -ENOMEM, "saving state: out of "
						     "memory");
	}
	json_decref(j->last);
	j->last = flat;
	return 0;
}

int np_journal_save(struct np_journal *j, const char *dir,
		    const struct np_node_state *st, const json_t *daemon,
		    unsigned flags, char *err, size_t errlen)
{
	_cleanup_json_ json_t *head = NULL, *dcopy = NULL;
	json_t *flat = json_object();
	int r;

	/* a copy: the caller may change its object after the save */
	if (daemon && json_is_object(daemon) &&
	    !(daemon = dcopy = json_deep_copy(daemon))) {
		json_decref(flat);
		return np_errf(err, errlen, -ENOMEM, "saving state: out of "
						     "memory");
	}
	if (daemon && !json_is_object(daemon)) {
		json_decref(flat);
		return np_errf(err, errlen, -EINVAL,
			       "saving state: the daemon's part is not an "
			       "object");
	}
	/* the workloads are compared by fingerprint (append), the rest in
	 * the flat form */
	if (!flat || !(head = np_state_head_json(st)) ||
	    (r = np_journal_flatten(head, daemon, flat))) {
		json_decref(flat);
		return np_errf(err, errlen, -ENOMEM,
			       "saving state: out of memory");
	}
	if ((flags & NP_JOURNAL_COMPACT) || !j->last || !j->have_wfp ||
	    j->bytes > j->snap_bytes + NP_JOURNAL_SLACK)
		return compact_now(j, dir, st, daemon, flat, err, errlen);
	return append(j, dir, st, flat, flags & NP_JOURNAL_NOSYNC, err,
		      errlen);
}
