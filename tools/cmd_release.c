// SPDX-License-Identifier: Apache-2.0
/* numaplace release: ask numaplaced to release a workload. */
#include "cli.h"
#include "numaplace/ctl.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

static void release_usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: numaplace release [--socket PATH] NAME\n"
	    "\n"
	    "Asks numaplaced to release the workload NAME: its exclusive\n"
	    "CPUs, memory and devices go back to the pools.\n"
	    "\n"
	    "  -s, --socket PATH    control socket (default %s)\n"
	    "  -h, --help           this text\n"
	    "\n"
	    "Exit: 0 released; 1 no such workload, or numaplaced failed or\n"
	    "      is not reachable; 2 bad usage.\n",
	    NP_CTL_DEFAULT_SOCKET);
}

int cmd_release(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"socket", required_argument, NULL, 's'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	const char *sock = NP_CTL_DEFAULT_SOCKET, *name;
	json_t *req, *resp = NULL;
	int c, rc = NP_EXIT_FAIL;

	while ((c = getopt_long(argc, argv, "s:h", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			sock = optarg;
			break;
		default:
			return cli_usage(release_usage, c);
		}
	}
	if (argc - optind != 1 || !*argv[optind]) {
		fprintf(stderr,
			"numaplace release: %s (see 'numaplace release "
			"--help')\n",
			argc - optind > 1 ? "give one workload NAME"
					  : "workload NAME is required");
		return NP_EXIT_USAGE;
	}
	name = argv[optind];
	req = json_pack("{s:s,s:s}", "op", "release", "name", name);
	if (!cli_ctl_request("release", sock, req, &resp)) {
		printf("released %s\n", name);
		rc = NP_EXIT_OK;
	}
	json_decref(resp);
	json_decref(req);
	return rc;
}
