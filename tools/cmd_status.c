// SPDX-License-Identifier: Apache-2.0
/*
 * numaplace status: what numaplaced manages: a CPU map per NUMA node,
 * pools, workloads, counters and the last reconcile cycle. --json prints
 * the status object as the daemon sent it; --input renders a saved one.
 */
#include "cli.h"
#include "status_render.h"
#include "numaplace/ctl.h"

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void status_usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: numaplace status [--json] [--socket PATH]\n"
	    "       numaplace status --input FILE\n"
	    "\n"
	    "Shows what numaplaced manages: every CPU of every NUMA node\n"
	    "with what it is (R reserved, . shared, b BE only, a letter per\n"
	    "exclusive workload), the pools, the workloads, the counters,\n"
	    "the last rejections and the last reconcile cycle.\n"
	    "\n"
	    "  -j, --json           print the status object as JSON\n"
	    "  -i, --input FILE     render a saved `status --json` (or a\n"
	    "                       whole status answer) instead of asking\n"
	    "                       numaplaced; - for stdin\n"
	    "  -s, --socket PATH    control socket (default %s)\n"
	    "  -h, --help           this text\n"
	    "\n"
	    "Exit: 0 ok; 1 numaplaced failed or is not reachable, or the\n"
	    "      status is malformed; 2 bad usage or a bad --input file.\n",
	    NP_CTL_DEFAULT_SOCKET);
}

int cmd_status(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"json", no_argument, NULL, 'j'},
	    {"input", required_argument, NULL, 'i'},
	    {"socket", required_argument, NULL, 's'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	const char *sock = NP_CTL_DEFAULT_SOCKET, *input = NULL;
	json_t *req = NULL, *resp = NULL;
	const json_t *st;
	bool as_json = false;
	char err[1024];
	int c, rc = NP_EXIT_FAIL;

	while ((c = getopt_long(argc, argv, "ji:s:h", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			as_json = true;
			break;
		case 'i':
			input = optarg;
			break;
		case 's':
			sock = optarg;
			break;
		default:
			return cli_usage(status_usage, c);
		}
	}
	if (!cli_no_operands("status", argc, argv))
		return NP_EXIT_USAGE;
	if (input) {
		if (!(resp = cli_load_json("status", input)))
			return NP_EXIT_USAGE;
		/* A whole answer {"ok":true,"status":{...}} or the object. */
		st = json_object_get(resp, "status");
		if (!st)
			st = resp;
	} else {
		req = json_pack("{s:s}", "op", "status");
		if (cli_ctl_request("status", sock, req, &resp))
			goto out;
		st = json_object_get(resp, "status");
	}
	if (!json_is_object(st)) {
		fprintf(stderr, "numaplace status: malformed %s: status: "
				"expected an object\n",
			input ? "input" : "answer from numaplaced");
		if (input)
			rc = NP_EXIT_USAGE; /* a bad --input file */
		goto out;
	}
	if (as_json) {
		cli_print_json(st);
		rc = NP_EXIT_OK;
		goto out;
	}
	if (np_status_render_err(st, stdout, err, sizeof(err))) {
		fflush(stdout);
		fprintf(stderr,
			"numaplace status: malformed status: %s (see "
			"--json)\n",
			err);
		if (input)
			rc = NP_EXIT_USAGE; /* a bad --input file */
		goto out;
	}
	rc = NP_EXIT_OK;
out:
	json_decref(resp);
	json_decref(req);
	return rc;
}
