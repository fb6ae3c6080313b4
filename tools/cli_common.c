// SPDX-License-Identifier: Apache-2.0
/* What the subcommands share: usage exits, operands, numaplaced requests. */
#include "cli.h"
#include "numaplace/ctl.h"

#include <stdio.h>
#include <unistd.h>

int cli_usage(void (*usage)(FILE *f), int c)
{
	if (c == 'h') {
		usage(stdout);
		return NP_EXIT_OK;
	}
	usage(stderr);
	return NP_EXIT_USAGE;
}

bool cli_no_operands(const char *cmd, int argc, char **argv)
{
	if (optind == argc)
		return true;
	fprintf(stderr, "numaplace %s: unexpected argument '%s'\n", cmd,
		argv[optind]);
	return false;
}

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
