// SPDX-License-Identifier: Apache-2.0
/*
 * A state file read by a tool, offline and read only (`numaplace export
 * nrt --state FILE`): the node policy comes from the file itself; and
 * a state directory's document with its journal replayed (`numaplace
 * state DIR`).
 */
#include "basic/fileio.h"
#include "numaplace/cleanup.h"
#include "numaplace/error.h"
#include "numaplace/state_file.h"
#include "numaplace/state_journal.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A file named state.json: its directory's journal replayed into buf. */
static int with_journal(const char *path, char **buf, size_t *len, char *err,
			size_t errlen)
{
	_cleanup_free_ char *copy = strdup(path), *copy2 = strdup(path);
	_cleanup_close_ int dfd = -1;
	const char *dir;
	int applied;

	if (!copy || !copy2)
		return np_errf(err, errlen, -ENOMEM, "%s: out of memory", path);
	if (strcmp(basename(copy), NP_STATEFILE_NAME))
		return 0;
	dir = dirname(copy2);
	if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return np_errno(err, errlen, -errno, "state directory %s", dir);
	return np_journal_apply(dfd, dir, buf, len, &applied, err, errlen);
}

int np_statefile_read(const char *path, const struct np_topology *t,
		      struct np_node_state *st, char *err, size_t errlen)
{
	_cleanup_free_ char *buf = NULL;
	_cleanup_json_ json_t *doc = NULL;
	struct np_node_policy p;
	json_error_t jerr;
	char why[512];
	size_t len = 0;
	int r;

	memset(st, 0, sizeof(*st));
	r = np_read_at(AT_FDCWD, path, NP_READ_REGULAR, NP_STATEFILE_MAX_SIZE,
		       &buf, &len);
	if (r)
		return np_errno(err, errlen, r, "reading state file %s", path);
	if ((r = with_journal(path, &buf, &len, err, errlen)))
		return r;
	/* Only the policy here; np_statefile_load_buf checks the rest. */
	doc = json_loadb(buf, len, 0, &jerr);
	if (!doc)
		return np_errf(err, errlen, NP_STATEFILE_ECORRUPT,
			       "state file %s: not valid JSON at line %d "
			       "column %d: %s",
			       path, jerr.line, jerr.column, jerr.text);
	if (np_policy_from_json(
		&p, json_object_get(json_object_get(doc, "body"), "policy"),
		"body.policy", why, sizeof(why)))
		return np_errf(err, errlen, NP_STATEFILE_ECORRUPT,
			       "state file %s: no valid node policy: %s", path,
			       why);
	if (np_state_init(st, t, &p, why, sizeof(why)))
		return np_errf(err, errlen, NP_STATEFILE_ETOPOLOGY,
			       "state file %s: its node policy does not fit "
			       "this topology: %s",
			       path, why);
	r = np_statefile_load_buf(path, buf, len, st, NULL, err, errlen);
	if (r)
		np_state_free(st);
	return r;
}

int np_journal_document(const char *dir, json_t **doc, char *err,
			size_t errlen)
{
	_cleanup_close_ int dfd = -1;
	_cleanup_free_ char *buf = NULL;
	json_error_t jerr;
	size_t len = 0;
	int r, applied;

	*doc = NULL;
	if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return np_errf(err, errlen, -errno, "state directory %s: %s",
			       dir, strerror(errno));
	r = np_read_at(dfd, NP_STATEFILE_NAME,
		       NP_READ_NOFOLLOW | NP_READ_REGULAR,
		       NP_STATEFILE_MAX_SIZE, &buf, &len);
	if (r)
		return np_errf(err, errlen, r, "reading %s/%s: %s", dir,
			       NP_STATEFILE_NAME, strerror(-r));
	if ((r = np_journal_apply_doc(dfd, dir, buf, len, doc, &applied, err,
				      errlen)) ||
	    *doc)
		return r; /* records applied: the document, checked */
	if (!(*doc = json_loadb(buf, len, 0, &jerr)))
		return np_errf(err, errlen, NP_STATEFILE_ECORRUPT,
			       "state file %s/%s is corrupt (not valid JSON: "
			       "%s)",
			       dir, NP_STATEFILE_NAME, jerr.text);
	if (!np_journal_snapshot_whole(*doc)) {
		json_decref(*doc);
		*doc = NULL;
		return np_errf(err, errlen, NP_STATEFILE_ECORRUPT,
			       "state file %s/%s is corrupt (no body, or its "
			       "checksum does not match)",
			       dir, NP_STATEFILE_NAME);
	}
	return 0;
}
