// SPDX-License-Identifier: Apache-2.0
/* What the subcommands share about their arguments: usage exits and
 * operands. Apart from cli_common.c, which needs the topology (hwloc), so
 * that the lean OCI hook (oci_hook_main.c) links without it. */
#include "cli.h"

#include <stdio.h>
#include <string.h>
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

bool cli_wait_arg(const char *cmd, const char *what)
{
	if (!strcmp(what, "enforced") || !strcmp(what, "durable"))
		return true;
	fprintf(stderr,
		"numaplace %s: --wait: expected enforced or durable, not "
		"'%s' (see 'numaplace %s --help')\n",
		cmd, what, cmd);
	return false;
}

json_t *cli_with_wait(json_t *req, const char *wait)
{
	if (req && wait &&
	    json_object_set_new(req, "wait", json_string(wait))) {
		json_decref(req);
		return NULL;
	}
	return req;
}

bool cli_no_operands(const char *cmd, int argc, char **argv)
{
	if (optind == argc)
		return true;
	fprintf(stderr, "numaplace %s: unexpected argument '%s'\n", cmd,
		argv[optind]);
	return false;
}
