// SPDX-License-Identifier: Apache-2.0
/* numaplace admit: send a workload spec to numaplaced, print the decision. */
#include "cli.h"
#include "status_render.h"
#include "numaplace/ctl.h"

#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

static void admit_usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: numaplace admit -f SPEC [--wait WHAT] [--json] [--socket "
	    "PATH]\n"
	    "\n"
	    "Validates the workload spec SPEC (numaplace-workload(5)),\n"
	    "asks numaplaced to admit it and prints the decision:\n"
	    "  admitted web: cpuset 1,5 mems 0 (LSE, hint 0 preferred)\n"
	    "  rejected web: REASON (resource cpu)\n"
	    "\n"
	    "  -f, --file SPEC      the spec file, - for stdin\n"
	    "  -w, --wait WHAT      answer once the placement is enforced (the\n"
	    "                       default: cgroups written) or durable (saved;\n"
	    "                       numaplaced writes the cgroups right after)\n"
	    "  -j, --json           print the decision as JSON\n"
	    "  -s, --socket PATH    control socket (default %s)\n"
	    "  -h, --help           this text\n"
	    "\n"
	    "Exit: 0 admitted; 1 rejected, or numaplaced failed or is not\n"
	    "      reachable; 2 bad usage or a bad spec (the message names\n"
	    "      the field; numaplaced is not contacted).\n",
	    NP_CTL_DEFAULT_SOCKET);
}

int cmd_admit(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"file", required_argument, NULL, 'f'},
	    {"json", no_argument, NULL, 'j'},
	    {"wait", required_argument, NULL, 'w'},
	    {"socket", required_argument, NULL, 's'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	const char *file = NULL, *sock = NP_CTL_DEFAULT_SOCKET, *wait = NULL;
	json_t *spec = NULL, *req = NULL, *resp = NULL;
	const json_t *dec;
	bool as_json = false;
	char err[1024];
	int c, r, rc = NP_EXIT_FAIL;

	while ((c = getopt_long(argc, argv, "f:jw:s:h", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			file = optarg;
			break;
		case 'w':
			if (!cli_wait_arg("admit", optarg))
				return NP_EXIT_USAGE;
			wait = optarg;
			break;
		case 'j':
			as_json = true;
			break;
		case 's':
			sock = optarg;
			break;
		default:
			return cli_usage(admit_usage, c);
		}
	}
	if (!cli_no_operands("admit", argc, argv))
		return NP_EXIT_USAGE;
	if (!file) {
		fprintf(stderr, "numaplace admit: -f SPEC is required (see "
				"'numaplace admit --help')\n");
		return NP_EXIT_USAGE;
	}
	r = np_ctl_load_spec(file, &spec, err, sizeof(err));
	if (r) {
		fprintf(stderr, "numaplace admit: %s\n", err);
		return r == -ENOMEM ? NP_EXIT_FAIL : NP_EXIT_USAGE;
	}
	req = cli_with_wait(json_pack("{s:s,s:O}", "op", "admit", "spec", spec),
			    wait);
	if (cli_ctl_request("admit", sock, req, &resp))
		goto out;
	dec = json_object_get(resp, "decision");
	if (!json_is_boolean(json_object_get(dec, "admitted"))) {
		fprintf(stderr, "numaplace admit: malformed answer from "
				"numaplaced: decision.admitted is missing\n");
		goto out;
	}
	if (as_json) {
		cli_print_json(dec);
	} else {
		np_decision_render(dec, stdout);
		if (json_is_true(json_object_get(resp, "again")))
			printf("(admitted already with this request: nothing "
			       "changed)\n");
	}
	rc = json_is_true(json_object_get(dec, "admitted")) ? NP_EXIT_OK
							    : NP_EXIT_FAIL;
out:
	json_decref(resp);
	json_decref(req);
	json_decref(spec);
	return rc;
}
