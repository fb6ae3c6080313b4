// SPDX-License-Identifier: Apache-2.0
/* numaplace resize: ask numaplaced to resize a workload's exclusive CPUs in
 * place (the current CPUs are kept). */
#include "cli.h"
#include "numaplace/cpuset.h"
#include "numaplace/ctl.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

static void resize_usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: numaplace resize [--socket PATH] NAME [--container C] "
	    "--cpus N\n"
	    "\n"
	    "Asks numaplaced to give the exclusive container of the workload\n"
	    "NAME (admitted through the control socket) N CPUs, in place: a\n"
	    "scale-up keeps every current CPU and adds some, a scale-down\n"
	    "keeps a subset of them, the CPUs of its admission first. A\n"
	    "resize that cannot be met changes nothing and says why. A spec\n"
	    "file's workload is resized by changing its file.\n"
	    "\n"
	    "  -n, --cpus N          the new number of exclusive CPUs (1..%d)\n"
	    "  -c, --container C     the container (needed when the workload\n"
	    "                        has more than one exclusive container)\n"
	    "  -s, --socket PATH     control socket (default %s)\n"
	    "  -h, --help            this text\n"
	    "\n"
	    "Exit: 0 resized; 1 refused (the reason is printed), no such\n"
	    "      workload, or numaplaced failed or is not reachable; 2 bad\n"
	    "      usage.\n",
	    NP_MAX_CPUS, NP_CTL_DEFAULT_SOCKET);
}

/* The answer: "resized NAME: cpuset A -> B", or the refusal. */
static int report(const char *name, const json_t *resp)
{
	const json_t *dec = json_object_get(resp, "decision");
	const char *prev = json_string_value(json_object_get(resp, "previous"));
	const char *now = json_string_value(json_object_get(resp, "cpus"));
	const char *why = json_string_value(json_object_get(dec, "reason"));

	if (json_is_true(json_object_get(resp, "resized"))) {
		printf("resized %s: cpuset %s -> %s\n", name, prev ? prev : "?",
		       now ? now : "?");
		return NP_EXIT_OK;
	}
	fprintf(stderr,
		"numaplace resize: %s not resized, it keeps cpuset %s: %s\n",
		name, prev ? prev : "?", why ? why : "refused");
	return NP_EXIT_FAIL;
}

int cmd_resize(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"socket", required_argument, NULL, 's'},
	    {"container", required_argument, NULL, 'c'},
	    {"cpus", required_argument, NULL, 'n'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	const char *sock = NP_CTL_DEFAULT_SOCKET, *ctr = NULL;
	json_t *req, *resp = NULL;
	long cpus = -1;
	char *end;
	int c, rc = NP_EXIT_FAIL;

	while ((c = getopt_long(argc, argv, "s:c:n:h", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			sock = optarg;
			break;
		case 'c':
			ctr = optarg;
			if (!*ctr) {
				fprintf(stderr,
					"numaplace resize: --container: "
					"expected a container name\n");
				return NP_EXIT_USAGE;
			}
			break;
		case 'n':
			errno = 0;
			cpus = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || cpus < 1 ||
			    cpus > NP_MAX_CPUS) {
				fprintf(stderr,
					"numaplace resize: --cpus: expected "
					"1..%d, got \"%s\"\n",
					NP_MAX_CPUS, optarg);
				return NP_EXIT_USAGE;
			}
			break;
		default:
			return cli_usage(resize_usage, c);
		}
	}
	if (argc - optind != 1 || !*argv[optind] || cpus < 0) {
		fprintf(stderr,
			"numaplace resize: %s (see 'numaplace resize "
			"--help')\n",
			cpus < 0	    ? "--cpus N is required"
			: argc - optind > 1 ? "give one workload NAME"
					    : "workload NAME is required");
		return NP_EXIT_USAGE;
	}
	req = json_pack("{s:s,s:s,s:I}", "op", "resize", "name", argv[optind],
			"cpus", (json_int_t)cpus);
	if (req && ctr)
		json_object_set_new(req, "container", json_string(ctr));
	if (!cli_ctl_request("resize", sock, req, &resp))
		rc = report(argv[optind], resp);
	json_decref(resp);
	json_decref(req);
	return rc;
}
