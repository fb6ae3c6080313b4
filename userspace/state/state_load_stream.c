// SPDX-License-Identifier: Apache-2.0
/*
 * A state directory loaded as a stream (np_statefile_load_with tries it
 * first): state.json is read through a window, never whole. Each value
 * below body.state.workloads, each workload and each other member of the
 * body is parsed by jansson as a document of its own, hashed (the same
 * pieces as state_stream.c writes: FNV-1a 64 over the body's compact,
 * key-sorted text without that text ever being whole) and, for a
 * workload, handed to the engine's loader (np_state_load_add) and freed.
 * The journal's records (small: a compaction empties them) are read
 * first; a workload they change or delete is replaced or skipped as it
 * streams past, the ones they add follow the others, in the order the
 * replay of the whole document (state_journal.c) gives them.
 *
 * Only a state file as numaplaced writes it is streamed: members in
 * sorted order, nothing after the document, every check passing. At the
 * first doubt (a value jansson refuses, keys out of order, a checksum or
 * fingerprint that does not hold, a workload the engine refuses, a
 * journal that does not follow, a drained state, memory) the load is
 * given up, nothing changed, and np_statefile_load_with reads the
 * directory as a whole document: the outcome and every message of a bad
 * file are that path's.
 */
#include "numaplace/admit.h"
#include "numaplace/cleanup.h"
#include "numaplace/state_file.h"
#include "numaplace/state_journal.h"
#include "state_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define WINDOW (64u << 10)
#define PIECE_FLAGS (JSON_REJECT_DUPLICATES | JSON_DECODE_ANY)
#define HASH_FLAGS (JSON_SORT_KEYS | JSON_COMPACT | JSON_ENCODE_ANY)
/* jansson's nesting limit (JSON_PARSER_MAX_DEPTH, 2048) for the whole
 * document: a piece at depth d may nest this much less (with a margin:
 * a piece refused here is read with the whole document) */
#define MAX_DEPTH (2048 - 8)
#define WKEY "w" NP_JOURNAL_SEP

/* ---- the window ---- */

struct rd {
	int fd;
	char *buf;
	size_t cap, pos, end; /* unread: buf[pos..end) */
	size_t total;
	bool eof;
};

/* At least want unread bytes, fewer only at the end of the file; -1 on a
 * read error, memory, or a file larger than any state. */
static int fill(struct rd *r, size_t want)
{
	if (r->end - r->pos >= want || r->eof)
		return 0;
	if (r->end > r->pos) /* (buf is NULL before the first read) */
		memmove(r->buf, r->buf + r->pos, r->end - r->pos);
	r->end -= r->pos;
	r->pos = 0;
	if (want + WINDOW > r->cap) {
		size_t cap = r->cap ? 2 * r->cap : WINDOW;
		char *g;
		while (cap < want + WINDOW)
			cap *= 2;
		if (!(g = realloc(r->buf, cap)))
			return -1;
		r->buf = g;
		r->cap = cap;
	}
	while (r->end < want && !r->eof) {
		ssize_t n = read(r->fd, r->buf + r->end, r->cap - r->end);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		r->eof = n == 0;
		r->end += (size_t)n;
		r->total += (size_t)n;
		if (r->total > NP_STATEFILE_MAX_SIZE)
			return -1;
	}
	return 0;
}

/* The next byte past JSON's white space (not taken), or -1 at the end. */
static int peek(struct rd *r)
{
	for (;;) {
		if (r->pos == r->end && (fill(r, 1) || r->pos == r->end))
			return -1;
		char c = r->buf[r->pos];
		if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
			return (unsigned char)c;
		r->pos++;
	}
}

static bool expect(struct rd *r, char c)
{
	if (peek(r) != (unsigned char)c)
		return false;
	r->pos++;
	return true;
}

/* The length of the value at r->pos (a scan of brackets and strings;
 * jansson judges it), at nesting depth; 0 if it is cut or too deep. */
static size_t value_len(struct rd *r, int depth)
{
	int c = peek(r), d = 0;
	bool scalar = c != '{' && c != '[' && c != '"', str = false, esc = false;
	size_t i = 0;

	if (c < 0)
		return 0;
	for (;; i++) {
		if (r->pos + i == r->end &&
		    (fill(r, i + 1) || r->pos + i == r->end))
			return scalar ? i : 0;
		c = r->buf[r->pos + i];
		if (str) {
			if (esc)
				esc = false;
			else if (c == '\\')
				esc = true;
			else if (c == '"' && (str = false, d == 0))
				return i + 1;
			continue;
		}
		if (scalar) {
			if (strchr(",}] \t\r\n", c))
				return i;
			continue;
		}
		if (c == '"')
			str = true;
		else if ((c == '{' || c == '[') && ++d + depth > MAX_DEPTH)
			return 0;
		else if ((c == '}' || c == ']') && --d <= 0)
			return d == 0 ? i + 1 : 0;
	}
}

/* The value at r->pos as a document of its own (NULL: refused). */
static json_t *take(struct rd *r, int depth)
{
	size_t n = value_len(r, depth);
	json_t *v;

	if (!n)
		return NULL;
	v = json_loadb(r->buf + r->pos, n, PIECE_FLAGS, NULL);
	r->pos += n;
	return v;
}

/* ---- the journal's changes to the workloads ---- */

/* A workload's key ("w" SEP name) the records touch: COND, put while not
 * deleted before (in place if the file has it, else appended at slot);
 * GONE, deleted last; ADDED, put after a deletion (at slot). */
enum { COND = 1, GONE, ADDED };

struct load {
	struct rd r;
	struct np_state_loader *ld;
	uint64_t hash;
	json_t *top, *body, *head; /* the small parts */
	/* the journal: its records, the small flat form after them
	 * (applied of them), the workloads' keys they touch ({key: [state,
	 * value, slot]}) and the slots of those appended */
	json_t *recs, *flat, *ov, *slots;
	int applied;
	struct np_strmap names; /* the file's workloads (a replay needs
				   them named once) */
	size_t nloaded;
	bool body_seen, workloads_seen;
};

static void hash(struct load *l, const char *s)
{
	l->hash = np_fnv1a64_update(l->hash, s, strlen(s));
}

static int hash_cb(const char *buf, size_t n, void *data)
{
	struct load *l = data;

	l->hash = np_fnv1a64_update(l->hash, buf, n);
	return 0;
}

static bool hash_json(struct load *l, const json_t *v)
{
	return !json_dump_callback(v, hash_cb, l, HASH_FLAGS);
}

static void ov_put(json_t *ov, json_t *slots, const char *key,
		   const json_t *v)
{
	json_t *e = json_object_get(ov, key);
	int st = e ? (int)json_integer_value(json_array_get(e, 0)) : 0;

	if (e && st != GONE) { /* in place, wherever that is */
		json_array_set(e, 1, (json_t *)v);
		return;
	}
	json_object_set_new(ov, key,
			    json_pack("[i,O,I]", st == GONE ? ADDED : COND,
				      (json_t *)v,
				      (json_int_t)json_array_size(slots)));
	json_array_append_new(slots, json_string(key));
}

static void ov_del(json_t *ov, json_t *slots, const char *key)
{
	json_t *e = json_object_get(ov, key);

	if (e && json_integer_value(json_array_get(e, 0)) != GONE)
		json_array_set_new(slots,
				   (size_t)json_integer_value(
				       json_array_get(e, 2)),
				   json_null());
	json_object_set_new(ov, key, json_pack("[i,n,i]", GONE, -1));
}

/*
 * At body.state.workloads (the state's other members, the daemon's part
 * and journal_seq read by then): the small flat form replayed as
 * state_journal.c replays the whole (its checks, its count), and the
 * workloads' keys the same records touch, in their order.
 */
static bool journal_start(struct load *l, const char *path)
{
	const json_t *js = json_object_get(l->body, "journal_seq"), *rec, *v;
	uint64_t from, last;
	const char *key;
	char err[512];
	size_t i, k;

	if (!l->recs || !json_array_size(l->recs))
		return true;
	if (js && (!json_is_integer(js) || json_integer_value(js) < 0))
		return false;
	from = js ? (uint64_t)json_integer_value(js) : 0;
	if (!(l->flat = json_object()) || !(l->ov = json_object()) ||
	    !(l->slots = json_array()) ||
	    np_journal_flatten(l->head, json_object_get(l->body, "daemon"),
			       l->flat) ||
	    np_journal_replay(path, l->flat, l->recs, from, &last,
			      &l->applied, err, sizeof(err)))
		return false;
	json_array_foreach(l->recs, i, rec)
	{
		if ((uint64_t)json_integer_value(json_object_get(rec, "seq")) <=
		    from)
			continue;
		json_array_foreach(json_object_get(rec, "del"), k, v)
		{
			key = json_string_value(v);
			if (key && !strncmp(key, WKEY, strlen(WKEY)))
				ov_del(l->ov, l->slots, key);
		}
		json_object_foreach(json_object_get(rec, "put"), key, v)
		{
			if (!strncmp(key, WKEY, strlen(WKEY)))
				ov_put(l->ov, l->slots, key, v);
		}
	}
	return true;
}

/* ---- the document ---- */

static bool add(struct load *l, const json_t *w)
{
	char err[512];

	l->nloaded++;
	return !np_state_load_add(l->ld, w, err, sizeof(err));
}

/* One workload of the file: loaded, or what the journal made of it. */
static bool workload(struct load *l, const json_t *w)
{
	const char *name = json_string_value(
	    json_object_get(json_object_get(w, "spec"), "name"));
	char key[NP_NAME_MAX + 8];
	json_t *e;

	if (!l->applied)
		return add(l, w);
	/* the replay's flat form names each workload once */
	if (!name || strlen(name) >= NP_NAME_MAX ||
	    np_strmap_get(&l->names, name, NULL) ||
	    np_strmap_put(&l->names, name, 0))
		return false;
	snprintf(key, sizeof(key), WKEY "%s", name);
	if (!(e = json_object_get(l->ov, key)))
		return add(l, w);
	if (json_integer_value(json_array_get(e, 0)) != COND)
		return true; /* deleted (and perhaps added again, after) */
	json_array_set_new(l->slots,
			   (size_t)json_integer_value(json_array_get(e, 2)),
			   json_null()); /* here, not appended */
	return add(l, json_array_get(e, 1));
}

/* body.state.workloads, then the ones the journal added. */
static bool workloads(struct load *l, const char *path)
{
	bool first = true;
	json_t *v;
	size_t i;

	l->workloads_seen = true;
	if (!journal_start(l, path) || !expect(&l->r, '['))
		return false;
	hash(l, "[");
	while (peek(&l->r) != ']') {
		_cleanup_json_ json_t *w = NULL;
		if ((!first && !expect(&l->r, ',')) || !(w = take(&l->r, 4)))
			return false;
		if (!first)
			hash(l, ",");
		first = false;
		if (!hash_json(l, w) || !workload(l, w))
			return false;
	}
	l->r.pos++;
	hash(l, "]");
	json_array_foreach(l->slots, i, v)
	{
		json_t *e = json_object_get(l->ov, json_string_value(v) ?: "");
		if (e && !add(l, json_array_get(e, 1)))
			return false;
	}
	return true;
}

/* {"key": value, ...} whose values are at depth, keys strictly in order
 * (JSON_SORT_KEYS: so none twice), hashed when hashed, each value taken
 * by fn. */
static bool members(struct load *l, int depth, bool hashed,
		    bool (*fn)(struct load *l, const char *key, int depth,
			       const char *path),
		    const char *path)
{
	_cleanup_free_ char *prev = NULL;

	if (!expect(&l->r, '{'))
		return false;
	if (hashed)
		hash(l, "{");
	while (peek(&l->r) != '}') {
		_cleanup_json_ json_t *k = NULL;
		if ((prev && !expect(&l->r, ',')) || !(k = take(&l->r, depth)) ||
		    !json_is_string(k) ||
		    (prev && strcmp(prev, json_string_value(k)) >= 0) ||
		    !expect(&l->r, ':'))
			return false;
		if (hashed) {
			if (prev)
				hash(l, ",");
			if (!hash_json(l, k))
				return false;
			hash(l, ":");
		}
		free(prev);
		if (!(prev = strdup(json_string_value(k))) ||
		    !fn(l, prev, depth, path))
			return false;
	}
	l->r.pos++;
	if (hashed)
		hash(l, "}");
	return true;
}

/* A small value into o under key (hashed when the body's). */
static bool small(struct load *l, json_t *o, const char *key, int depth,
		  bool hashed)
{
	json_t *v = take(&l->r, depth);

	return v && (!hashed || hash_json(l, v)) &&
	       !json_object_set_new(o, key, v);
}

static bool state_member(struct load *l, const char *key, int depth,
			 const char *path)
{
	if (!strcmp(key, "workloads"))
		return workloads(l, path);
	/* after the workloads, the journal's replay would not have seen it */
	return !l->workloads_seen && small(l, l->head, key, depth, true);
}

static bool body_member(struct load *l, const char *key, int depth,
			const char *path)
{
	if (strcmp(key, "state"))
		return small(l, l->body, key, depth, true);
	return members(l, depth + 1, true, state_member, path);
}

static bool top_member(struct load *l, const char *key, int depth,
		       const char *path)
{
	if (strcmp(key, "body"))
		return small(l, l->top, key, depth, false);
	l->body_seen = true;
	return members(l, depth + 1, true, body_member, path);
}

/* The envelope as parse_envelope (state_file.c) checks it. */
static bool envelope(const struct load *l)
{
	const json_t *f = json_object_get(l->top, "format"),
		     *v = json_object_get(l->top, "version");
	uint64_t stored;

	return l->body_seen && l->workloads_seen && json_is_string(f) &&
	       !strcmp(json_string_value(f), NP_STATEFILE_FORMAT) &&
	       json_is_integer(v) &&
	       json_integer_value(v) == NP_STATEFILE_VERSION &&
	       !np_statefile_hash_parse(json_object_get(l->top, "checksum"),
					&stored) &&
	       stored == l->hash;
}

/* The state's members but its workloads and the daemon's part, after
 * the journal (as the replay of the whole document leaves them). */
static bool after_journal(struct load *l, json_t **head, json_t **daemon)
{
	json_t *state = NULL;

	*daemon = NULL;
	if (!l->applied) {
		*head = json_incref(l->head);
		*daemon = json_incref(json_object_get(l->body, "daemon"));
		return true;
	}
	if (np_journal_unflatten(l->flat, &state, daemon)) {
		json_decref(state);
		return false;
	}
	json_object_del(state, "workloads"); /* the replay's, not streamed */
	*head = state;
	if (*daemon)
		return !json_object_set(l->body, "daemon", *daemon);
	json_object_del(l->body, "daemon");
	return true;
}

static bool load_all(struct load *l, struct np_node_state *st,
		     const char *path, const char *jpath, json_t **daemon)
{
	_cleanup_json_ json_t *head = NULL, *dm = NULL;
	char err[512];

	if (!members(l, 1, false, top_member, jpath) || peek(&l->r) != -1 ||
	    !l->r.eof || !envelope(l) || !after_journal(l, &head, &dm) ||
	    json_object_set(l->body, "state", head) ||
	    np_statefile_check_body(path, l->body, st, err, sizeof(err)) ||
	    !l->nloaded) /* drained: the whole document's rules */
		return false;
	if (np_state_load_end(np_take_ptr(l->ld), head, err, sizeof(err)))
		return false;
	if (daemon)
		*daemon = np_take_ptr(dm);
	return true;
}

bool np_statefile_load_stream(int dfd, const char *dir,
			      struct np_node_state *st, json_t **daemon)
{
	struct load l = {.hash = NP_FNV1A64_INIT};
	char path[4096], jpath[4096], err[512];
	struct stat sb;
	bool ok = false;

	snprintf(path, sizeof(path), "%s/%s", dir, NP_STATEFILE_NAME);
	snprintf(jpath, sizeof(jpath), "%s/" NP_JOURNAL_NAME, dir);
	l.r.fd = openat(dfd, NP_STATEFILE_NAME,
			O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (l.r.fd < 0 || fstat(l.r.fd, &sb) || !S_ISREG(sb.st_mode) ||
	    (uint64_t)sb.st_size > NP_STATEFILE_MAX_SIZE)
		goto out;
	if (!np_journal_records(dfd, dir, &l.recs, err, sizeof(err)) &&
	    (l.top = json_object()) && (l.body = json_object()) &&
	    (l.head = json_object()) &&
	    !np_state_load_begin(&l.ld, st, "state", 0))
		ok = load_all(&l, st, path, jpath, daemon);
out:
	if (l.r.fd >= 0)
		close(l.r.fd);
	free(l.r.buf);
	np_state_load_abort(l.ld);
	np_strmap_free(&l.names);
	json_decref(l.top);
	json_decref(l.body);
	json_decref(l.head);
	json_decref(l.recs);
	json_decref(l.flat);
	json_decref(l.ov);
	json_decref(l.slots);
	return ok;
}
