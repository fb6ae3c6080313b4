/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Crash-safe checkpoint of the node state: STATE_DIR/state.json.
 *
 * File format (version 1; keys sorted, indented for people to read):
 *
 *   {"body": {
 *      "fingerprint": {"policy": "fnv1a64:<16 hex>",
 *                      "topology": "fnv1a64:<16 hex>"},
 *      "policy":   np_policy_to_json() of the node policy,
 *      "topology": {"online": "0-15", "numa": {"0": "0-3,8-11", ...},
 *                   "sockets": {"0": "0-15"}, "cores": {"0": "0,8", ...}},
 *      "state":    np_state_to_json() (reserved CPUs, workloads with their
 *                  containers' CPUs, mems, hint, memory, devices),
 *      "pools":    np_pools_to_json() (informational, ignored on load),
 *      "daemon":   optional object, the daemon's own bookkeeping about the
 *                  workloads (opaque here; numaplaced: where each came
 *                  from and which wait for their cgroup), saved in the
 *                  same atomic write so that it never disagrees with
 *                  "state"},
 *    "checksum": "fnv1a64:<16 hex>",
 *    "format": "numaplace-state",
 *    "version": 1}
 *
 * checksum is FNV-1a 64 over json_dumps(body, JSON_SORT_KEYS |
 * JSON_COMPACT), so it does not depend on how the file is laid out. Each
 * fingerprint is FNV-1a 64 over the same canonical dump of the "policy" or
 * "topology" object beside it; both objects are stored so that a mismatch
 * message can name what changed. The topology fingerprint covers the
 * online CPUs and each one's core, socket and NUMA node ids (not memory
 * sizes or devices: devices in allocations are checked one by one when the
 * state is loaded).
 *
 * Between two such writes numaplaced appends what changed to
 * STATE_DIR/journal (numaplace/state_journal.h); body.journal_seq (absent:
 * 0) is the last journal record the file includes. Loading replays the
 * records after it; every save here (a compaction) empties the journal.
 *
 * Writes are atomic: STATE_DIR/state.json.tmp.<pid> is created with
 * O_CREAT|O_EXCL|O_CLOEXEC|O_NOFOLLOW, mode 0600, written completely,
 * fsync'd, renamed over state.json, and the directory is fsync'd. A crash
 * at any point leaves either the old or the new state.json. Loading
 * removes temp files left behind by such a crash. The text is written as
 * it is built, one workload at a time, and the checksum computed on the
 * way: a save holds one workload's JSON in memory, never the whole
 * document (the text is the same as np_statefile_document_seq() dumped
 * whole with JSON_INDENT(1) | JSON_SORT_KEYS, and a newline).
 *
 * One process owns a state directory; these functions do no locking.
 * Nothing here touches cgroups or the daemon.
 */
#ifndef NUMAPLACE_STATE_FILE_H
#define NUMAPLACE_STATE_FILE_H

#include "numaplace/admit.h"

#include <errno.h>
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NP_STATEFILE_NAME "state.json"
#define NP_STATEFILE_TMP_PREFIX "state.json.tmp."
#define NP_STATEFILE_BAK_PREFIX "state.json.bak."
#define NP_STATEFILE_VERSION 1
#define NP_STATEFILE_FORMAT "numaplace-state"
/* Refuse to read anything larger (a 4096-CPU node is well below 16 MiB). */
#define NP_STATEFILE_MAX_SIZE (64u << 20)

/*
 * Load outcomes other than success. Each comes with a message in err that
 * says what is wrong and how to recover. Other negative errnos are I/O
 * errors (err names the file and the operation).
 */
/* bad JSON, truncated, checksum mismatch, or state that does not validate */
#define NP_STATEFILE_ECORRUPT (-EBADMSG)
/* the node policy differs from the one the state was written under */
#define NP_STATEFILE_EPOLICY (-ESTALE)
/* the CPU topology differs from the one the state was written on */
#define NP_STATEFILE_ETOPOLOGY (-EXDEV)
/* written by a different (newer) format version */
#define NP_STATEFILE_EVERSION (-EPROTONOSUPPORT)

/* FNV-1a 64 of a buffer. */
uint64_t np_fnv1a64(const void *buf, size_t len);
/* The same piece by piece: h = NP_FNV1A64_INIT, then
 * h = np_fnv1a64_update(h, piece, len) for each piece in order. */
#define NP_FNV1A64_INIT 0xcbf29ce484222325ULL
uint64_t np_fnv1a64_update(uint64_t h, const void *buf, size_t len);
/* FNV-1a 64 of json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT); 0 on ENOMEM. */
uint64_t np_json_fnv1a64(const json_t *j);

/* The topology description that is fingerprinted (see above). */
json_t *np_statefile_topology_json(const struct np_topology *t);

/*
 * The whole document that np_statefile_save() writes (for tests and for a
 * "show state" command). Returns NULL on ENOMEM.
 */
json_t *np_statefile_document(const struct np_node_state *st);

/*
 * Atomically write st to dir/state.json (see above). dir must exist. On
 * any failure the previous state.json is untouched, the temp file is
 * removed, and err says which step failed. 0 or -errno.
 */
int np_statefile_save(const char *dir, const struct np_node_state *st,
		      char *err, size_t errlen);
/* The same with body.daemon = daemon (an object; NULL: none). */
int np_statefile_save_with(const char *dir, const struct np_node_state *st,
			   const json_t *daemon, char *err, size_t errlen);
json_t *np_statefile_document_with(const struct np_node_state *st,
				   const json_t *daemon);
/* The same with body.journal_seq = seq (none when 0). */
json_t *np_statefile_document_seq(const struct np_node_state *st,
				  const json_t *daemon, uint64_t seq);
/*
 * Compaction, what np_statefile_save_with() does: the snapshot written
 * atomically with journal_seq = the larger of *seq and the last record in
 * the journal (*seq is set to it), then the journal emptied (created if
 * missing). *bytes (may be NULL): the snapshot's size. 0 or -errno.
 */
int np_statefile_compact(const char *dir, const struct np_node_state *st,
			 const json_t *daemon, uint64_t *seq, size_t *bytes,
			 char *err, size_t errlen);

/*
 * Load dir/state.json into st, which must come from np_state_init() with
 * the current topology and node policy (and hold no allocations: they are
 * replaced), with the journal's records replayed into it. Stale temp files
 * are removed first.
 *
 *   0, *fresh = true    no state.json: st is left empty (a new node)
 *   0, *fresh = false   loaded and validated against the topology
 *   NP_STATEFILE_ECORRUPT, NP_STATEFILE_EPOLICY, NP_STATEFILE_ETOPOLOGY,
 *   NP_STATEFILE_EVERSION, or another -errno for I/O errors.
 *
 * On any error st is unchanged and nothing is started over: the caller
 * must refuse to run until the operator resets the state (see
 * np_statefile_reset()). fresh may be NULL.
 */
int np_statefile_load(const char *dir, struct np_node_state *st, bool *fresh,
		      char *err, size_t errlen);
/* The same, and *daemon = a new reference to body.daemon (NULL when the
 * file has none, is fresh, or on error; the caller json_decref()s it). */
int np_statefile_load_with(const char *dir, struct np_node_state *st,
			   bool *fresh, json_t **daemon, char *err,
			   size_t errlen);

/*
 * The contents of a state file (buf, len; path names it in messages) into
 * st, validated as np_statefile_load_with() does once it has read the file.
 */
int np_statefile_load_buf(const char *path, const char *buf, size_t len,
			  struct np_node_state *st, json_t **daemon, char *err,
			  size_t errlen);

/*
 * Read a state file at path (any name; read only: nothing is cleaned up
 * or written) for tools that show a node offline: st is initialised with
 * topology t and the node policy the file was written under (its
 * body.policy), then loaded and validated as np_statefile_load() does
 * (checksum, fingerprints, allocations against t). On success free st
 * with np_state_free(). NP_STATEFILE_ECORRUPT, NP_STATEFILE_ETOPOLOGY,
 * NP_STATEFILE_EVERSION, or -errno for I/O errors; err names the file.
 */
int np_statefile_read(const char *path, const struct np_topology *t,
		      struct np_node_state *st, char *err, size_t errlen);

/*
 * CPUs the topology t has offline now that dir/state.json's topology knew
 * online: their records there (core, socket, NUMA node; the L3 of a
 * sibling, else of the socket), for np_topology_restore(), so that a
 * restart while a CPU is offline finds the topology the state was saved
 * with. *fix is malloc'd (NULL and *nfix 0 when there is none). Best
 * effort: a missing or unreadable file gives none (its loading says
 * what is wrong). 0 or -ENOMEM.
 */
int np_statefile_offline_places(const char *dir, const struct np_topology *t,
				struct np_cpu_desc **fix, int *nfix);

/*
 * Remove stale dir/state.json.tmp.* files (left by a crash during a save).
 * Sets *removed (may be NULL) to their number. 0 or -errno.
 */
int np_statefile_clean_tmp(const char *dir, int *removed, char *err,
			   size_t errlen);

/*
 * --reset-state: move dir/state.json aside to dir/state.json.bak.<unix
 * time> (".<n>" is appended if that name is taken; an existing file is
 * never overwritten and nothing is deleted), then dir/journal to
 * dir/journal.bak.<same suffix>, fsync the directory, and
 * remove stale temp files. The next np_statefile_load() starts fresh. No
 * state.json is not an error. bak receives the new name ("" if there was
 * nothing to move); bak may be NULL. 0 or -errno.
 */
int np_statefile_move_aside(const char *dir, char *bak, size_t baklen,
			    char *err, size_t errlen);
/* np_statefile_move_aside() without the name. */
int np_statefile_reset(const char *dir, char *err, size_t errlen);

#endif
