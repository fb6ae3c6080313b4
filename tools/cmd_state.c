// SPDX-License-Identifier: Apache-2.0
/*
 * numaplace state DIR: the state numaplaced keeps in DIR as one document,
 * state.json with the journal's records replayed (what numaplaced loads;
 * the format of state.json, body.pools left out when records applied).
 * Read only; checksums are checked (exit 2 when one fails), the
 * allocations are not validated
 * against a topology (`numaplace explain --state` does that).
 */
#include "cli.h"
#include "numaplace/state_file.h"
#include "numaplace/state_journal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
	fprintf(f, "usage: numaplace state DIR\n"
		   "  the state numaplaced keeps in DIR (its state_dir):\n"
		   "  state.json with the journal replayed, as JSON\n");
}

int cmd_state(int argc, char **argv)
{
	char err[1024];
	json_t *doc;
	char *text;
	int r;

	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		usage(stdout);
		return 0;
	}
	if (argc != 2 || argv[1][0] == '-') {
		usage(stderr);
		return 2;
	}
	if ((r = np_journal_document(argv[1], &doc, err, sizeof(err)))) {
		fprintf(stderr, "numaplace state: %s\n", err);
		return r == NP_STATEFILE_ECORRUPT ? 2 : 1; /* bad input : I/O */
	}
	text = json_dumps(doc, JSON_INDENT(1) | JSON_SORT_KEYS);
	json_decref(doc);
	if (!text) {
		fprintf(stderr, "numaplace state: out of memory\n");
		return 1;
	}
	puts(text);
	free(text);
	return 0;
}
