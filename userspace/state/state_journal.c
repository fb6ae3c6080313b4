// SPDX-License-Identifier: Apache-2.0
/*
 * The state journal (see numaplace/state_journal.h): records of what
 * changed between two snapshots, their format (the flat form, a record's
 * line) and their replay on load; what the state file calls
 * (state_file.c). The writer that appends them is state_journal_write.c.
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

#define SEP NP_JOURNAL_SEP
#define RESET_HINT                                                             \
	"inspect it, then start numaplaced with --reset-state to discard the " \
	"state"

/* ---- the flat form ---- */

static int put(json_t *flat, const char *a, const char *b, const char *c,
	       json_t *v)
{
	char *key;
	int r;

	if (asprintf(&key, "%s%s%s%s%s", a, b ? SEP : "", b ? b : "",
		     c ? SEP : "", c ? c : "") < 0)
		return -ENOMEM;
	r = json_object_set_nocheck(flat, key, v) ? -ENOMEM : 0;
	free(key);
	return r;
}

/* state and daemon (may be NULL) into flat; -EINVAL when a workload has
 * no name or two have the same. */
int np_journal_flatten(const json_t *state, const json_t *daemon,
		       json_t *flat)
{
	const char *k, *m;
	json_t *v, *mv, *w;
	size_t i;

	json_object_foreach((json_t *)state, k, v)
	{
		if (strcmp(k, "workloads") || !json_is_array(v)) {
			if (put(flat, "s", k, NULL, v))
				return -ENOMEM;
			continue;
		}
		json_array_foreach(v, i, w)
		{
			const char *name = json_string_value(
			    json_object_get(json_object_get(w, "spec"), "name"));
			char key[NP_NAME_MAX + 8];
			if (!name || strlen(name) >= NP_NAME_MAX)
				return -EINVAL;
			snprintf(key, sizeof(key), "w" SEP "%s", name);
			if (json_object_get(flat, key))
				return -EINVAL;
			if (put(flat, "w", name, NULL, w))
				return -ENOMEM;
		}
	}
	if (!daemon)
		return 0;
	if (json_object_set_new_nocheck(flat, "D", json_true()))
		return -ENOMEM;
	json_object_foreach((json_t *)daemon, k, v)
	{
		if (!json_is_object(v)) {
			if (put(flat, "d", k, NULL, v))
				return -ENOMEM;
			continue;
		}
		json_t *marker = json_object();
		int r = marker ? put(flat, "d", k, NULL, marker) : -ENOMEM;
		json_decref(marker);
		if (r)
			return r;
		json_object_foreach(v, m, mv) if (put(flat, "o", k, m, mv)) return
		    -ENOMEM;
	}
	return 0;
}

/* flat back into *state and *daemon (NULL when flat has no "D"). */
int np_journal_unflatten(const json_t *flat, json_t **state, json_t **daemon)
{
	json_t *st = json_object(), *ws = json_array(), *dm = NULL, *v;
	const char *key;
	int r = st && ws && !json_object_set(st, "workloads", ws) ? 0 : -ENOMEM;

	json_object_foreach((json_t *)flat, key, v)
	{
		const char *k = key + 2, *sep;
		char obj[256];
		if (r)
			break;
		if (key[0] == 'w')
			r = json_array_append(ws, v);
		else if (key[0] == 's')
			r = json_object_set(st, k, v);
		else if (key[0] == 'D' || key[0] == 'd' || key[0] == 'o') {
			if (!dm && !(dm = json_object())) {
				r = -ENOMEM;
				break;
			}
			if (key[0] == 'd')
				r = json_is_object(v)
					? (json_is_object(json_object_get(dm, k))
					       ? 0
					       : json_object_set_new(dm, k,
								     json_object()))
					: json_object_set(dm, k, v);
			else if (key[0] == 'o' && (sep = strstr(k, SEP)) &&
				 (size_t)(sep - k) < sizeof(obj)) {
				json_t *o;
				snprintf(obj, sizeof(obj), "%.*s", (int)(sep - k),
					 k);
				if (!json_is_object(o = json_object_get(dm, obj)))
					json_object_set_new(dm, obj,
							    o = json_object());
				r = json_object_set(o, sep + 1, v);
			}
		}
		r = r ? -ENOMEM : 0;
	}
	json_decref(ws);
	if (r) {
		json_decref(st);
		json_decref(dm);
		return r;
	}
	*state = st;
	*daemon = dm;
	return 0;
}

/* ---- records ---- */

char *np_journal_record_line(uint64_t seq, json_t *puts, json_t *dels)
{
	json_t *rec = json_pack("{s:I,s:O,s:O}", "seq", (json_int_t)seq, "put",
				puts, "del", dels);
	char *text = rec ? json_dumps(rec, JSON_COMPACT) : NULL, *line = NULL;

	if (text && asprintf(&line, "%016" PRIx64 " %s\n",
			     np_fnv1a64(text, strlen(text)), text) < 0)
		line = NULL;
	free(text);
	json_decref(rec);
	return line;
}

/* One line (without its newline): its record, or NULL if it is damaged. */
static json_t *parse_line(const char *s, size_t len)
{
	char hex[17], *end;
	uint64_t h;
	json_t *rec;

	if (len < 18 || s[16] != ' ')
		return NULL;
	memcpy(hex, s, 16);
	hex[16] = '\0';
	for (int i = 0; i < 16; i++)
		if (!((hex[i] >= '0' && hex[i] <= '9') ||
		      (hex[i] >= 'a' && hex[i] <= 'f')))
			return NULL;
	h = strtoull(hex, &end, 16);
	if (h != np_fnv1a64(s + 17, len - 17))
		return NULL;
	rec = json_loadb(s + 17, len - 17, JSON_REJECT_DUPLICATES, NULL);
	if (!json_is_integer(json_object_get(rec, "seq")) ||
	    json_integer_value(json_object_get(rec, "seq")) < 1 ||
	    !json_is_object(json_object_get(rec, "put")) ||
	    !json_is_array(json_object_get(rec, "del"))) {
		json_decref(rec);
		return NULL;
	}
	return rec;
}

/*
 * The records of a journal (buf, len) as an array, in order, up to a
 * damaged tail. A damaged line followed by a good one, or numbers that
 * do not follow each other: NP_STATEFILE_ECORRUPT.
 */
static int scan(const char *path, const char *buf, size_t len, json_t **out,
		char *err, size_t errlen)
{
	json_t *recs = json_array(), *rec;
	size_t pos = 0, bad_at = 0;
	int lineno = 0, bad_line = 0;
	uint64_t prev = 0;

	if (!recs)
		return -ENOMEM;
	while (pos < len) {
		const char *nl = memchr(buf + pos, '\n', len - pos);
		if (!nl)
			break; /* an unfinished last line: never acknowledged */
		lineno++;
		rec = parse_line(buf + pos, (size_t)(nl - (buf + pos)));
		if (!rec && !bad_line) {
			bad_line = lineno;
			bad_at = pos;
		} else if (rec && bad_line) {
			json_decref(rec);
			json_decref(recs);
			return np_errf(err, errlen, NP_STATEFILE_ECORRUPT,
				       "state journal %s is corrupt (record "
				       "%d at byte %zu is damaged, yet record "
				       "%d after it is whole); " RESET_HINT,
				       path, bad_line, bad_at, lineno);
		} else if (rec) {
			uint64_t seq = (uint64_t)json_integer_value(
			    json_object_get(rec, "seq"));
			if (prev && seq != prev + 1) {
				json_decref(rec);
				json_decref(recs);
				return np_errf(
				    err, errlen, NP_STATEFILE_ECORRUPT,
				    "state journal %s is corrupt (record %d "
				    "is number %" PRIu64 ", after %" PRIu64
				    "); " RESET_HINT,
				    path, lineno, seq, prev);
			}
			prev = seq;
			json_array_append_new(recs, rec);
		}
		pos = (size_t)(nl - buf) + 1;
	}
	*out = recs;
	return 0;
}

/* dir's journal read and scanned; *recs NULL when there is none. */
int np_journal_records(int dfd, const char *dir, json_t **recs, char *err,
		       size_t errlen)
{
	_cleanup_free_ char *buf = NULL;
	char path[4096];
	size_t len = 0;
	int r;

	*recs = NULL;
	snprintf(path, sizeof(path), "%s/" NP_JOURNAL_NAME, dir);
	r = np_read_at(dfd, NP_JOURNAL_NAME, NP_READ_NOFOLLOW | NP_READ_REGULAR,
		       NP_STATEFILE_MAX_SIZE, &buf, &len);
	if (r == -ENOENT)
		return 0;
	if (r == -EFBIG)
		return np_errf(err, errlen, NP_STATEFILE_ECORRUPT,
			       "state journal %s is corrupt (larger than any "
			       "journal); " RESET_HINT,
			       path);
	if (r)
		return np_errf(err, errlen, r, "reading %s: %s", path,
			       strerror(-r));
	return scan(path, buf, len, recs, err, errlen);
}

int np_journal_last_seq(int dfd, const char *dir, uint64_t *seq, char *err,
			size_t errlen)
{
	json_t *recs;
	int r = np_journal_records(dfd, dir, &recs, err, errlen);
	size_t n = recs ? json_array_size(recs) : 0;

	*seq = n ? (uint64_t)json_integer_value(
		       json_object_get(json_array_get(recs, n - 1), "seq"))
		 : 0;
	json_decref(recs);
	return r;
}

bool np_journal_has_records(int dfd)
{
	_cleanup_free_ char *buf = NULL;
	size_t len = 0;

	return !np_read_at(dfd, NP_JOURNAL_NAME,
			   NP_READ_NOFOLLOW | NP_READ_REGULAR,
			   NP_STATEFILE_MAX_SIZE, &buf, &len) &&
	       memchr(buf, '\n', len);
}

/* ---- replay ---- */

/* The snapshot's checksum holds (else it is left to its loading). */
bool np_journal_snapshot_whole(const json_t *doc)
{
	const char *s = json_string_value(json_object_get(doc, "checksum"));
	char want[32];

	if (!s || !json_is_object(json_object_get(doc, "body")))
		return false;
	snprintf(want, sizeof(want), "fnv1a64:%016" PRIx64,
		 np_json_fnv1a64(json_object_get(doc, "body")));
	return !strcmp(s, want);
}

/*
 * Whether key is of a kind the flat form has (np_journal_flatten): "D";
 * "s", "d" or "w", SEP and a name; "o", SEP, a name, SEP and a member.
 * A put's value (v; NULL for a del) fits it: "D" true, a workload an
 * object that names itself as its key does. A sealed record that breaks
 * this was not written by numaplaced, and a load that read past it would
 * make of it whatever its path makes of unknown keys.
 */
static bool key_ok(const char *key, const json_t *v)
{
	const char *k, *sep;

	if (!strcmp(key, "D"))
		return !v || json_is_true(v);
	if (!key[0] || !strchr("sdow", key[0]) || key[1] != SEP[0] ||
	    !*(k = key + 2))
		return false;
	sep = strchr(k, SEP[0]);
	if (key[0] == 'o')
		return sep && sep > k && sep[1] && !strchr(sep + 1, SEP[0]);
	if (sep)
		return false;
	if (key[0] == 's')
		return strcmp(k, "workloads") != 0;
	if (key[0] == 'w') {
		const char *name = json_string_value(
		    json_object_get(json_object_get(v, "spec"), "name"));
		return strlen(k) < NP_NAME_MAX &&
		       (!v || (json_is_object(v) && name && !strcmp(name, k)));
	}
	return true;
}

/* ECORRUPT for record seq's key (a del when v is NULL), named escaped. */
static int bad_key(const char *path, uint64_t seq, const char *key,
		   const json_t *v, char *err, size_t errlen)
{
	_cleanup_json_ json_t *s = key ? json_string_nocheck(key) : NULL;
	_cleanup_free_ char *q =
	    s ? json_dumps(s, JSON_ENCODE_ANY | JSON_ENSURE_ASCII) : NULL;

	return np_errf(err, errlen, NP_STATEFILE_ECORRUPT,
		       "state journal %s is corrupt (record %" PRIu64
		       " %s %s, %s); " RESET_HINT,
		       path, seq, v ? "puts" : "deletes", q ? q : "a non-string",
		       v ? "no key of that kind or a value that does not fit it"
			 : "no key of that kind");
}

/* Records with seq > from applied to flat; *last: the last applied. */
int np_journal_replay(const char *path, json_t *flat, const json_t *recs,
		      uint64_t from, uint64_t *last, int *n, char *err,
		      size_t errlen)
{
	size_t i, k;
	json_t *rec, *v;
	const char *key;

	*n = 0;
	*last = from;
	json_array_foreach(recs, i, rec)
	{
		uint64_t seq =
		    (uint64_t)json_integer_value(json_object_get(rec, "seq"));
		if (seq <= from)
			continue;
		if (seq != *last + 1)
			return np_errf(err, errlen, NP_STATEFILE_ECORRUPT,
				       "state journal %s is corrupt (it goes "
				       "on with record %" PRIu64
				       ", the state file holds up to %" PRIu64
				       "); " RESET_HINT,
				       path, seq, *last);
		/* a refusal leaves flat half applied: the callers drop it */
		json_array_foreach(json_object_get(rec, "del"), k, v)
		{
			key = json_string_value(v);
			if (!key || !key_ok(key, NULL))
				return bad_key(path, seq, key, NULL, err, errlen);
			json_object_del(flat, key);
		}
		json_object_foreach(json_object_get(rec, "put"), key, v)
		{
			if (!key_ok(key, v))
				return bad_key(path, seq, key, v, err, errlen);
			if (json_object_set_nocheck(flat, key, v))
				return -ENOMEM;
		}
		*last = seq;
		(*n)++;
	}
	return 0;
}

/* Records applied to the parsed snapshot doc (its checksum renewed). */
static int apply_doc(const char *path, json_t *doc, const json_t *recs,
		     int *applied, char *err, size_t errlen)
{
	json_t *body = json_object_get(doc, "body"), *state = NULL,
	       *daemon = NULL, *js = json_object_get(body, "journal_seq");
	_cleanup_json_ json_t *flat = json_object();
	uint64_t from, last;
	char sum[32];
	int r;

	if (js && (!json_is_integer(js) || json_integer_value(js) < 0))
		return np_errf(err, errlen, NP_STATEFILE_ECORRUPT,
			       "state file beside %s is corrupt "
			       "(body.journal_seq is not a number); " RESET_HINT,
			       path);
	from = js ? (uint64_t)json_integer_value(js) : 0;
	if (!flat)
		return -ENOMEM;
	if ((r = np_journal_flatten(json_object_get(body, "state"),
			 json_object_get(body, "daemon"), flat)))
		return r == -EINVAL
			   ? np_errf(err, errlen, NP_STATEFILE_ECORRUPT,
				     "state file beside %s is corrupt (a "
				     "workload without a name, or twice); " RESET_HINT,
				     path)
			   : np_errf(err, errlen, r, "%s: out of memory", path);
	if ((r = np_journal_replay(path, flat, recs, from, &last, applied, err,
				   errlen)))
		return r;
	if (!*applied)
		return 0;
	if ((r = np_journal_unflatten(flat, &state, &daemon)))
		return np_errf(err, errlen, r, "%s: out of memory", path);
	json_object_set_new(body, "state", state);
	if (daemon)
		json_object_set_new(body, "daemon", daemon);
	else
		json_object_del(body, "daemon");
	json_object_del(body, "pools");
	json_object_set_new(body, "journal_seq", json_integer((json_int_t)last));
	snprintf(sum, sizeof(sum), "fnv1a64:%016" PRIx64, np_json_fnv1a64(body));
	return json_object_set_new(doc, "checksum", json_string(sum)) ? -ENOMEM
								       : 0;
}

int np_journal_apply_doc(int dfd, const char *dir, const char *buf,
			 size_t len, json_t **out, int *applied, char *err,
			 size_t errlen)
{
	_cleanup_json_ json_t *recs = NULL, *doc = NULL;
	char path[4096];
	int r;

	*applied = 0;
	*out = NULL;
	snprintf(path, sizeof(path), "%s/" NP_JOURNAL_NAME, dir);
	if ((r = np_journal_records(dfd, dir, &recs, err, errlen)) || !recs ||
	    !json_array_size(recs))
		return r;
	doc = json_loadb(buf, len, JSON_REJECT_DUPLICATES, NULL);
	if (!doc || !np_journal_snapshot_whole(doc))
		return 0;
	if ((r = apply_doc(path, doc, recs, applied, err, errlen)) || !*applied)
		return r;
	*out = np_take_ptr(doc);
	return 0;
}

int np_journal_apply(int dfd, const char *dir, char **buf, size_t *len,
		     int *applied, char *err, size_t errlen)
{
	_cleanup_json_ json_t *doc = NULL;
	char *text;
	int r = np_journal_apply_doc(dfd, dir, *buf, *len, &doc, applied, err,
				     errlen);

	if (r || !doc)
		return r;
	if (!(text = json_dumps(doc, JSON_INDENT(1) | JSON_SORT_KEYS)))
		return np_errf(err, errlen, -ENOMEM,
			       "%s/" NP_JOURNAL_NAME ": out of memory", dir);
	free(*buf);
	*buf = text;
	*len = strlen(text);
	return 0;
}

/* ---- writing ---- */

int np_journal_clear(int dfd, const char *dir, char *err, size_t errlen)
{
	struct stat sb;
	bool existed = !fstatat(dfd, NP_JOURNAL_NAME, &sb, AT_SYMLINK_NOFOLLOW);
	int fd = openat(dfd, NP_JOURNAL_NAME,
			O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	int r = 0;

	if (fd < 0)
		return np_errf(err, errlen, -errno, "opening %s/%s: %s", dir,
			       NP_JOURNAL_NAME, strerror(errno));
	if (ftruncate(fd, 0) || fsync(fd))
		r = np_errf(err, errlen, -errno, "emptying %s/%s: %s", dir,
			    NP_JOURNAL_NAME, strerror(errno));
	close(fd);
	if (!r && !existed && fsync(dfd))
		r = np_errf(err, errlen, -errno,
			    "fsync of state directory %s after creating %s: %s",
			    dir, NP_JOURNAL_NAME, strerror(errno));
	return r;
}
