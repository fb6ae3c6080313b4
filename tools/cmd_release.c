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
	    "usage: numaplace release [--wait WHAT] [--socket PATH] NAME\n"
	    "       numaplace release [--wait WHAT] [--socket PATH] "
	    "--container ID\n"
	    "\n"
	    "Asks numaplaced to release the workload NAME, or the workload\n"
	    "of the OCI container ID: its exclusive CPUs, memory and devices\n"
	    "go back to the pools. A container that holds nothing (released\n"
	    "already) is not an error: \"container ID: nothing to release\".\n"
	    "\n"
	    "  -c, --container ID   the container's id (as numaplace oci-hook\n"
	    "                       admitted it)\n"
	    "  -w, --wait WHAT      answer once the release is enforced (the\n"
	    "                       default: cgroups written) or durable (saved;\n"
	    "                       numaplaced writes the cgroups right after)\n"
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
	    {"container", required_argument, NULL, 'c'},
	    {"wait", required_argument, NULL, 'w'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	const char *sock = NP_CTL_DEFAULT_SOCKET, *name, *ctr = NULL,
		   *wait = NULL;
	json_t *req, *resp = NULL;
	int c, rc = NP_EXIT_FAIL;

	while ((c = getopt_long(argc, argv, "s:c:w:h", opts, NULL)) != -1) {
		switch (c) {
		case 'w':
			if (!cli_wait_arg("release", optarg))
				return NP_EXIT_USAGE;
			wait = optarg;
			break;
		case 's':
			sock = optarg;
			break;
		case 'c':
			ctr = optarg;
			break;
		default:
			return cli_usage(release_usage, c);
		}
	}
	if (ctr) {
		if (argc != optind || !*ctr) {
			fprintf(stderr, "numaplace release: --container ID takes "
					"no workload NAME (see 'numaplace "
					"release --help')\n");
			return NP_EXIT_USAGE;
		}
		req = json_pack("{s:s,s:s}", "op", "release", "container", ctr);
		req = cli_with_wait(req, wait);
		if (!cli_ctl_request("release", sock, req, &resp)) {
			const char *n = json_string_value(
			    json_object_get(resp, "name"));
			if (json_is_true(json_object_get(resp, "released")))
				printf("released %s (container %s)\n",
				       n ? n : "?", ctr);
			else
				printf("container %s: nothing to release\n", ctr);
			rc = NP_EXIT_OK;
		}
		json_decref(resp);
		json_decref(req);
		return rc;
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
	req = cli_with_wait(req, wait);
	if (!cli_ctl_request("release", sock, req, &resp)) {
		printf("released %s\n", name);
		rc = NP_EXIT_OK;
	}
	json_decref(resp);
	json_decref(req);
	return rc;
}
