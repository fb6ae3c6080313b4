/* SPDX-License-Identifier: Apache-2.0 */
/* Shared by the state directory's files (state_file.c, state_document.c,
 * state_hash.c, state_stream.c, state_journal*.c, state_reset.c). */
#ifndef NUMAPLACE_STATE_INTERNAL_H
#define NUMAPLACE_STATE_INTERNAL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct np_node_state;

#include "numaplace/cpuset.h"
#include "numaplace/version.h"

/* "fnv1a64:" and 16 hex digits: the checksum and the fingerprints. */
#define NP_STATEFILE_HASH_PREFIX "fnv1a64:"

/* state_document.c: a CPU set as the state file writes it (a list
 * string; NULL: out of memory). */
json_t *np_statefile_cpus_json(const np_cpuset *s);
/* state_hash.c: h as "fnv1a64:<16 hex>" (NULL: out of memory), and back
 * (-EINVAL if it is not that). */
json_t *np_statefile_hash_json(uint64_t h);
int np_statefile_hash_parse(const json_t *j, uint64_t *h);

/* dir opened O_DIRECTORY, or -errno with a message. */
int np_statefile_open_dir(const char *dir, char *err, size_t errlen);
/* np_statefile_clean_tmp() on an open directory. */
int np_statefile_clean_tmp_at(int dfd, const char *dir, int *removed,
			      char *err, size_t errlen);

/*
 * The text of dir/state.json for st (state_stream.c): what
 * json_dumps(np_statefile_document_seq(st, daemon, seq), JSON_INDENT(1) |
 * JSON_SORT_KEYS) and a newline would be, written to fd as it is built,
 * one workload at a time, through a buffer. *bytes: the bytes written.
 * 0, -ENOMEM (*io false), or the write's -errno (*io true).
 */
int np_statefile_stream(int fd, const struct np_node_state *st,
			const json_t *daemon, uint64_t seq, size_t *bytes,
			bool *io);

/* state_journal.c: the journal's format, for its writer
 * (state_journal_write.c). A flat key's parts are joined by SEP. */
#define NP_JOURNAL_SEP "\x1f"
/* state and daemon (may be NULL) into flat; -EINVAL when a workload has
 * no name or two have the same. */
int np_journal_flatten(const json_t *state, const json_t *daemon,
		       json_t *flat);
/* One record line (malloc'd), or NULL on ENOMEM. */
char *np_journal_record_line(uint64_t seq, json_t *puts, json_t *dels);
/* For the streamed load (state_load_stream.c): dir's journal read and
 * checked, its records in order up to a damaged tail (*recs NULL when
 * there is none); those with seq > from applied to a flat form (*last,
 * *n: the last applied and how many; a record that does not follow, or
 * with a key of a kind the flat form has not, is NP_STATEFILE_ECORRUPT,
 * and the flat form is then half applied: to be dropped); a flat form
 * back into a state object and the
 * daemon's part (NULL without "D"). */
int np_journal_records(int dfd, const char *dir, json_t **recs, char *err,
		       size_t errlen);
int np_journal_replay(const char *path, json_t *flat, const json_t *recs,
		      uint64_t from, uint64_t *last, int *n, char *err,
		      size_t errlen);
int np_journal_unflatten(const json_t *flat, json_t **state, json_t **daemon);

/* state_file.c: a body's checks before its state is loaded, as a load
 * of the whole document makes them: the fingerprints, the stored policy
 * and topology against st's, the reserved CPUs (body.state needs only
 * its members but the workloads). */
int np_statefile_check_body(const char *path, const json_t *body,
			    const struct np_node_state *st, char *err,
			    size_t errlen);
/* np_statefile_load_with, streamed first (stream) or read as one
 * document only (the tests compare the two). */
int np_statefile_load_dir(const char *dir, struct np_node_state *st,
			  bool *fresh, json_t **daemon, bool stream, char *err,
			  size_t errlen);
/* state_load_stream.c: dir's state.json and journal loaded into st as a
 * stream, and *daemon (if not NULL) set as np_statefile_load_with sets
 * it; false (st and *daemon untouched) when it is not a state file as
 * numaplaced writes it with every check passing, or memory ran out:
 * the caller then loads the whole document, which says why. */
bool np_statefile_load_stream(int dfd, const char *dir,
			      struct np_node_state *st, json_t **daemon);

#endif
