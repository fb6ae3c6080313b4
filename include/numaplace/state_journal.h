/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The state journal: STATE_DIR/journal, appended to between two
 * snapshots (STATE_DIR/state.json, numaplace/state_file.h), so that a
 * save costs one write and one fdatasync of what changed instead of
 * rewriting the whole state.
 *
 * Record (one line):  <16 hex> <JSON>\n
 *   the hex is FNV-1a 64 of the JSON text; the JSON is
 *   {"seq": N, "put": {KEY: VALUE, ...}, "del": [KEY, ...]}
 * KEY names one part of the snapshot's body (the flat form below); a put
 * replaces it with VALUE, a del removes it:
 *   "w\x1fNAME"           state.workloads[] entry whose spec.name is NAME
 *   "s\x1fKEY"            state.KEY (any other key of "state")
 *   "D"                   body.daemon exists
 *   "d\x1fKEY"            daemon.KEY ({} when it is an object: its members
 *   "o\x1fKEY\x1fMEMBER"  are daemon.KEY.MEMBER)
 * Records are numbered 1, 2, ... without gaps; the snapshot says in
 * body.journal_seq the last record it includes (absent: 0).
 *
 * Load: the snapshot, then the records with seq > journal_seq in order.
 * A line that is incomplete or fails its checksum at the end of the file
 * is a save that never finished (never acknowledged): it and what
 * follows are ignored. A bad line followed by a good one is corruption:
 * the load is refused. Compaction (np_statefile_compact()) writes the
 * snapshot atomically with journal_seq = the last record, then empties
 * the journal: a crash before the snapshot's rename leaves the old
 * snapshot and the whole journal, one after it a snapshot whose
 * journal_seq skips every record still in the journal.
 */
#ifndef NUMAPLACE_STATE_JOURNAL_H
#define NUMAPLACE_STATE_JOURNAL_H

#include "numaplace/strmap.h"
#include "numaplace/admit.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NP_JOURNAL_NAME "journal"
#define NP_JOURNAL_BAK_PREFIX "journal.bak."
/* Compact once the journal is this much larger than the snapshot. */
#define NP_JOURNAL_SLACK (256u << 10)

/*
 * What a writer (numaplaced) keeps between saves. Zero-initialised is a
 * valid start: the first save compacts.
 */
struct np_journal {
	json_t *last;	   /* flat form of the last save but its workloads;
			    * NULL: none */
	/* name -> np_workload_alloc_fp() of each workload as last saved
	 * (the long holds the 64 bits); valid when have_wfp */
	struct np_strmap wfp;
	bool have_wfp;
	/* (a fingerprint is kept in the map's long) */
	_Static_assert(sizeof(long) >= sizeof(uint64_t), "a 64-bit long");
	uint64_t seq;	   /* last record written (or the snapshot's) */
	size_t bytes;	   /* journal size */
	size_t snap_bytes; /* size of the snapshot written last */
	unsigned long records, compactions;
};

/*
 * Save st and the daemon's part (an object or NULL) durably: a record of
 * what changed since the last save (nothing changed: no write), one
 * write and one fdatasync; or, the first time, after a failure, when the
 * journal has outgrown the snapshot or with NP_JOURNAL_COMPACT, a
 * compaction. The journal is opened for each record (no descriptor held
 * open for writing). A record is refused with -ENOSPC when the file
 * system's free space is below the record plus the last snapshot's size
 * (the next compaction's need). err names STATE_DIR/state.json and the
 * step that failed. 0 or -errno; on failure the next save compacts.
 */
#define NP_JOURNAL_COMPACT 1u /* compact now */
/* A record appended without its fdatasync: for what need not be durable
 * at once (the next synced record or compaction makes it so; lost in a
 * crash before that, it is a torn tail, ignored). */
#define NP_JOURNAL_NOSYNC 2u
int np_journal_save(struct np_journal *j, const char *dir,
		    const struct np_node_state *st, const json_t *daemon,
		    unsigned flags, char *err, size_t errlen);
/* Forget the last save (the next one compacts). */
void np_journal_fini(struct np_journal *j);

/*
 * The snapshot text in *buf (*len bytes) with dir's journal (dfd: the
 * directory) replayed into it: when records apply, *buf is replaced by a
 * new snapshot document (same format, body.journal_seq the last record,
 * body.pools dropped: it would be stale) and *applied is set to their
 * number. A snapshot that does not parse or whose checksum fails is left
 * as it is (its loading says what is wrong). NP_STATEFILE_ECORRUPT for a
 * damaged journal, -errno for I/O errors.
 */
int np_journal_apply(int dfd, const char *dir, char **buf, size_t *len,
		     int *applied, char *err, size_t errlen);
/* A parsed snapshot has a body whose checksum holds. */
bool np_journal_snapshot_whole(const json_t *doc);
/* The same, the new snapshot as a document: *out (the caller's, with its
 * checksum renewed) when records applied, else NULL; buf is not
 * changed. A load parses the file once this way, not twice. */
int np_journal_apply_doc(int dfd, const char *dir, const char *buf,
			 size_t len, json_t **out, int *applied, char *err,
			 size_t errlen);
/* dir/state.json with dir's journal replayed, parsed, its checksum
 * checked (not validated against a topology): for tools and tests that
 * show the state. -ENOENT when there is no state.json,
 * NP_STATEFILE_ECORRUPT, or another -errno, with a message. */
int np_journal_document(const char *dir, json_t **doc, char *err,
			size_t errlen);
/* The highest sequence number of the well-formed records in dir's
 * journal (0: none or no journal). 0 or -errno. */
int np_journal_last_seq(int dfd, const char *dir, uint64_t *seq, char *err,
			size_t errlen);
/* Whether dir has a journal with at least one complete record. */
bool np_journal_has_records(int dfd);
/* Empty dir's journal (created if missing, the directory fsync'd then),
 * durably. 0 or -errno. */
int np_journal_clear(int dfd, const char *dir, char *err, size_t errlen);

#endif
