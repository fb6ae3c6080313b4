// SPDX-License-Identifier: Apache-2.0
/* What the subcommands share: numaplaced requests, loading a topology or
 * a JSON file (usage exits and operands: cli_args.c). */
#include "cli.h"
#include "basic/fileio.h"
#include "numaplace/ctl.h"
#include "numaplace/error.h"
#include "numaplace/topology.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int cli_ctl_request(const char *cmd, const char *sock, const json_t *req,
		    json_t **resp)
{
	char err[1024];

	*resp = NULL;
	if (!req) {
		fprintf(stderr, "numaplace %s: out of memory\n", cmd);
		return -1;
	}
	if (np_ctl_call(sock, req, resp, err, sizeof(err))) {
		fprintf(stderr, "numaplace %s: %s\n", cmd, err);
		return -1;
	}
	if (np_ctl_check(*resp, err, sizeof(err))) {
		fprintf(stderr, "numaplaced: %s\n", err);
		json_decref(*resp);
		*resp = NULL;
		return -1;
	}
	return 0;
}

void cli_print_json(const json_t *j)
{
	json_dumpf(j, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	fputc('\n', stdout);
}

int cli_load_topology(const char *cmd, const char *src, struct np_topology **t)
{
	char err[512];
	int r = np_topology_load(t, src, err, sizeof(err));

	if (r >= 0)
		return NP_EXIT_OK;
	fprintf(stderr, "numaplace %s: %s\n", cmd, err);
	/* a source given that is missing or not valid is bad input */
	return src && strcmp(src, "live") &&
		       (r == -EINVAL || r == -ENOENT || r == -ENOTDIR ||
			r == -EISDIR || r == -ERANGE || r == -E2BIG ||
			r == -ENAMETOOLONG || r == -EACCES || r == -ELOOP)
		   ? NP_EXIT_USAGE
		   : NP_EXIT_FAIL;
}

bool cli_open_file(const char *cmd, const char *path, FILE **f)
{
	int r = np_fopen_read(path, f);

	if (r)
		fprintf(stderr, "numaplace %s: %s: %s\n", cmd, np_echo(path),
			r == -EISDIR ? "is a directory, not a file"
				     : strerror(-r));
	return !r;
}

json_t *cli_load_json(const char *cmd, const char *path)
{
	bool is_stdin = !strcmp(path, "-");
	json_error_t jerr;
	FILE *f = stdin;
	json_t *j;

	if (!is_stdin && !cli_open_file(cmd, path, &f))
		return NULL;
	j = json_loadf(f, JSON_REJECT_DUPLICATES, &jerr);
	if (!is_stdin)
		fclose(f);
	if (!j)
		fprintf(stderr, "numaplace %s: %s: %s (line %d, column %d)\n",
			cmd, is_stdin ? "stdin" : np_echo(path), jerr.text,
			jerr.line, jerr.column);
	return j;
}
