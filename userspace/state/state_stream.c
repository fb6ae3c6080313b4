// SPDX-License-Identifier: Apache-2.0
/*
 * The state file written as a stream (np_statefile_compact): the JSON of
 * one workload at a time is built, written, hashed and freed, so that a
 * compaction holds one workload and the small parts (policy, topology,
 * pools, the daemon's part) in memory, not the whole state as one
 * document.
 *
 * The text is byte for byte what json_dumps(np_statefile_document_seq(),
 * JSON_INDENT(1) | JSON_SORT_KEYS) and a newline was: the objects around
 * the workloads (the document, its body, body.state and its "workloads"
 * array) are framed here the way jansson frames them, members in its
 * sorted (strcmp) key order, and every other value is dumped by jansson,
 * its lines indented by the depth it sits at. The checksum is fed the
 * same pieces in jansson's compact form ("{", "\"key\":", ",", "}", no
 * space), so it is FNV-1a 64 over json_dumps(body, JSON_SORT_KEYS |
 * JSON_COMPACT) without that text ever being whole.
 */
#include "basic/fileio.h"
#include "numaplace/cleanup.h"
#include "numaplace/state_file.h"
#include "state_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OUT_BUF (64u << 10)
#define TEXT_FLAGS (JSON_INDENT(1) | JSON_SORT_KEYS | JSON_ENCODE_ANY)
#define HASH_FLAGS (JSON_SORT_KEYS | JSON_COMPACT | JSON_ENCODE_ANY)

struct out {
	int fd;
	int err;       /* the first write error (-errno); nothing after it */
	int depth;     /* what the lines of jansson's dumps are indented by */
	uint64_t hash; /* FNV-1a 64 of the compact body so far */
	size_t bytes;  /* written to fd */
	size_t len;    /* in buf */
	char buf[OUT_BUF];
};

static void flush(struct out *o)
{
	int r;

	if (o->len && !o->err) {
		if ((r = np_write_all(o->fd, o->buf, o->len)))
			o->err = r;
		else
			o->bytes += o->len;
	}
	o->len = 0;
}

/* Text only (the document's own frame, indentation). */
static void put(struct out *o, const char *s, size_t n)
{
	while (n && !o->err) {
		size_t k = OUT_BUF - o->len < n ? OUT_BUF - o->len : n;

		memcpy(o->buf + o->len, s, k);
		o->len += k;
		s += k;
		n -= k;
		if (o->len == OUT_BUF)
			flush(o);
	}
}

/* The checksum only. */
static void hash(struct out *o, const char *s, size_t n)
{
	o->hash = np_fnv1a64_update(o->hash, s, n);
}

/* Punctuation of the body: the same in both forms. */
static void punct(struct out *o, const char *s)
{
	put(o, s, strlen(s));
	hash(o, s, strlen(s));
}

/* A line break and depth levels of JSON_INDENT(1) (a space each). */
static void newline(struct out *o, int depth)
{
	static const char spaces[] = "                ";
	const int n = (int)sizeof(spaces) - 1;

	put(o, "\n", 1);
	for (; depth > 0; depth -= n)
		put(o, spaces, (size_t)(depth < n ? depth : n));
}

/* jansson's indented dump, each of its lines moved right by o->depth. */
static int text_cb(const char *buf, size_t n, void *data)
{
	struct out *o = data;
	const char *nl;

	while ((nl = memchr(buf, '\n', n))) {
		put(o, buf, (size_t)(nl - buf));
		newline(o, o->depth);
		n -= (size_t)(nl - buf) + 1;
		buf = nl + 1;
	}
	put(o, buf, n);
	return o->err ? -1 : 0;
}

static int hash_cb(const char *buf, size_t n, void *data)
{
	hash(data, buf, n);
	return 0;
}

/* v, a member or element at depth, into both. 0, -ENOMEM or the write's
 * error. */
static int value(struct out *o, const json_t *v, int depth)
{
	o->depth = depth;
	if (json_dump_callback(v, text_cb, o, TEXT_FLAGS) ||
	    json_dump_callback(v, hash_cb, o, HASH_FLAGS))
		return o->err ? o->err : -ENOMEM;
	return 0;
}

/* An object's member: its value as it is, or written by fn. */
struct member {
	const char *key;
	const json_t *v;
	int (*fn)(struct out *o, const void *ctx, int depth);
	const void *ctx;
};

static int cmp_member(const void *a, const void *b)
{
	return strcmp(((const struct member *)a)->key,
		      ((const struct member *)b)->key);
}

/* {m...} at depth, its members sorted as JSON_SORT_KEYS sorts them. */
static int object(struct out *o, struct member *m, size_t n, int depth)
{
	_cleanup_json_ json_t *k = NULL;
	int r = 0;

	qsort(m, n, sizeof(*m), cmp_member);
	punct(o, "{");
	for (size_t i = 0; i < n && !r; i++) {
		if (i)
			punct(o, ",");
		newline(o, depth + 1);
		json_decref(k);
		if (!(k = json_string(m[i].key)))
			return -ENOMEM;
		if ((r = value(o, k, depth + 1)))
			break;
		put(o, ": ", 2);
		hash(o, ":", 1);
		r = m[i].v ? value(o, m[i].v, depth + 1)
			   : m[i].fn(o, m[i].ctx, depth + 1);
	}
	if (r)
		return r;
	if (n)
		newline(o, depth);
	punct(o, "}");
	return o->err;
}

/* body.state.workloads: np_workload_state_json() of each, one at a time. */
static int workloads(struct out *o, const void *ctx, int depth)
{
	const struct np_node_state *st = ctx;
	int r = 0;

	punct(o, "[");
	for (int i = 0; i < st->nworkloads && !r; i++) {
		_cleanup_json_ json_t *w =
		    np_workload_state_json(st, st->w[i]);

		if (!w)
			return -ENOMEM;
		if (i)
			punct(o, ",");
		newline(o, depth + 1);
		r = value(o, w, depth + 1);
	}
	if (r)
		return r;
	if (st->nworkloads)
		newline(o, depth);
	punct(o, "]");
	return o->err;
}

/* body.state: np_state_head_json()'s members and "workloads". */
static int state(struct out *o, const void *ctx, int depth)
{
	const struct np_node_state *st = ctx;
	_cleanup_json_ json_t *head = np_state_head_json(st);
	_cleanup_free_ struct member *m = NULL;
	const char *k;
	json_t *v;
	size_t n = 0;

	if (!head || !(m = calloc(json_object_size(head) + 1, sizeof(*m))))
		return -ENOMEM;
	json_object_foreach(head, k, v)
	{
		if (strcmp(k, "workloads")) /* np_state_to_json() replaces it */
			m[n++] = (struct member){k, v, NULL, NULL};
	}
	m[n++] = (struct member){"workloads", NULL, workloads, st};
	return object(o, m, n, depth);
}

/* The body at depth 1 (see np_statefile_document_seq()). */
static int body(struct out *o, const struct np_node_state *st,
		const json_t *daemon, uint64_t seq)
{
	_cleanup_json_ json_t *policy = np_policy_to_json(&st->policy);
	_cleanup_json_ json_t *topo = np_statefile_topology_json(st->topo);
	_cleanup_json_ json_t *pools = np_pools_to_json(st);
	_cleanup_json_ json_t *fp = NULL, *jseq = NULL;
	struct member m[7];
	size_t n = 0;

	if (!policy || !topo || !pools)
		return -ENOMEM;
	fp = json_pack("{s:o,s:o}", "policy",
		       np_statefile_hash_json(np_json_fnv1a64(policy)),
		       "topology", np_statefile_hash_json(np_json_fnv1a64(topo)));
	if (!fp || (seq && !(jseq = json_integer((json_int_t)seq))))
		return -ENOMEM;
	m[n++] = (struct member){"fingerprint", fp, NULL, NULL};
	m[n++] = (struct member){"policy", policy, NULL, NULL};
	m[n++] = (struct member){"topology", topo, NULL, NULL};
	m[n++] = (struct member){"state", NULL, state, st};
	m[n++] = (struct member){"pools", pools, NULL, NULL};
	if (daemon)
		m[n++] = (struct member){"daemon", daemon, NULL, NULL};
	if (jseq)
		m[n++] = (struct member){"journal_seq", jseq, NULL, NULL};
	return object(o, m, n, 1);
}

int np_statefile_stream(int fd, const struct np_node_state *st,
			const json_t *daemon, uint64_t seq, size_t *bytes,
			bool *io)
{
	_cleanup_free_ struct out *o = malloc(sizeof(*o));
	char tail[256];
	int r;

	*io = false;
	if (!o)
		return -ENOMEM;
	*o = (struct out){.fd = fd, .hash = NP_FNV1A64_INIT};
	/* the document's keys, sorted: body, checksum, format,
	 * numaplace_version (the writer's; tools/version.sh allows no
	 * character JSON would escape), version */
	put(o, "{", 1);
	newline(o, 1);
	put(o, "\"body\": ", 8);
	if ((r = body(o, st, daemon, seq))) {
		*io = r == o->err;
		return r;
	}
	snprintf(tail, sizeof(tail),
		 ",\n \"checksum\": \"" NP_STATEFILE_HASH_PREFIX "%016" PRIx64
		 "\",\n \"format\": \"" NP_STATEFILE_FORMAT
		 "\",\n \"numaplace_version\": \"" NP_VERSION
		 "\",\n \"version\": %d\n}\n",
		 o->hash, NP_STATEFILE_VERSION);
	put(o, tail, strlen(tail));
	flush(o);
	*io = o->err != 0;
	*bytes = o->bytes;
	return o->err;
}
