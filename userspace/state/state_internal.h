/* SPDX-License-Identifier: Apache-2.0 */
/* Shared by the state directory's files (state_file.c, state_stream.c,
 * state_reset.c). */
#ifndef NUMAPLACE_STATE_INTERNAL_H
#define NUMAPLACE_STATE_INTERNAL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct np_node_state;

#include "numaplace/version.h"

/* "fnv1a64:" and 16 hex digits: the checksum and the fingerprints. */
#define NP_STATEFILE_HASH_PREFIX "fnv1a64:"

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

#endif
