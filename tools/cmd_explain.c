// SPDX-License-Identifier: Apache-2.0
/*
 * numaplace explain: why a workload got its CPUs. Live (numaplaced re-runs
 * the decision, op "explain"), offline from a topology and a state file,
 * or from a planner request of kind admit. The engine builds the
 * explanation (numaplace/explain.h); this prints it.
 */
#include "cli.h"
#include "numaplace/admit.h"
#include "numaplace/ctl.h"
#include "numaplace/explain.h"
#include "numaplace/state_file.h"
#include "numaplace/topology.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void explain_usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: numaplace explain [--json] [--socket PATH] NAME\n"
	    "       numaplace explain [--json] --topology SRC --state FILE NAME\n"
	    "       numaplace explain [--json] --input PLAN.json\n"
	    "\n"
	    "Says why a workload got its CPUs: each hint provider's hints,\n"
	    "the merged hint and why it won, the take strategy, the order it\n"
	    "took units in and its tie-breaks, the CPUs skipped and why.\n"
	    "The decision is re-run against the state without the workload;\n"
	    "when that gives other CPUs than it holds (the node changed since\n"
	    "its admission), both are said.\n"
	    "\n"
	    "  -j, --json           the explanation as JSON\n"
	    "  -t, --topology SRC   offline: a topology source\n"
	    "  -S, --state FILE     offline: a numaplaced state file\n"
	    "  -i, --input FILE     a planner request of kind admit (\"-\":\n"
	    "                       stdin): explain the admission it makes\n"
	    "  -s, --socket PATH    control socket (default %s)\n"
	    "  -h, --help           this text\n"
	    "\n"
	    "Exit: 0 ok; 1 no such workload (live), numaplaced failed or is\n"
	    "      not reachable; 2 bad usage or bad input (offline: an\n"
	    "      unknown workload too).\n",
	    NP_CTL_DEFAULT_SOCKET);
}

static void print_text(const json_t *x)
{
	const json_t *s = json_object_get(x, "sentences"), *v;
	const char *held = json_string_value(json_object_get(x, "held"));
	size_t i;

	printf("%s: %s %s\n", json_string_value(json_object_get(x, "workload")),
	       json_is_true(json_object_get(x, "admitted"))
		       ? "admitted with CPUs"
		       : "rejected:",
	       json_is_true(json_object_get(x, "admitted"))
		       ? json_string_value(json_object_get(x, "cpuset"))
		       : json_string_value(json_object_get(x, "reason")));
	if (held && !json_is_true(json_object_get(x, "same")))
		printf("note: it holds %s; re-run now, the decision gives "
		       "other CPUs (the node changed since its admission)\n",
		       *held ? held : "no exclusive CPUs");
	json_array_foreach(s, i, v) printf("  %s\n", json_string_value(v));
}

static int show(const json_t *x, bool as_json)
{
	if (as_json)
		cli_print_json(x);
	else
		print_text(x);
	return NP_EXIT_OK;
}

static int live(const char *sock, const char *name, json_t **out)
{
	json_t *req = json_pack("{s:s,s:s}", "op", "explain", "name", name);
	json_t *resp = NULL;
	char err[1024];

	if (!req || np_ctl_call(sock, req, &resp, err, sizeof(err)) ||
	    np_ctl_check(resp, err, sizeof(err))) {
		fprintf(stderr, "numaplace explain: %s\n",
			req ? err : "out of memory");
		json_decref(req);
		json_decref(resp);
		return NP_EXIT_FAIL;
	}
	*out = json_incref(json_object_get(resp, "explain"));
	json_decref(req);
	json_decref(resp);
	return *out ? NP_EXIT_OK : NP_EXIT_FAIL;
}

static int offline(const char *topo, const char *state, const char *name,
		   json_t **out)
{
	struct np_topology *t = NULL;
	struct np_node_state st = {0};
	char err[1024];
	int rc, r;

	if ((rc = cli_load_topology("explain", topo, &t)))
		return rc;
	r = np_statefile_read(state, t, &st, err, sizeof(err));
	if (r) {
		fprintf(stderr, "numaplace explain: --state: %s\n", err);
		rc = r == -ENOMEM ? NP_EXIT_FAIL : NP_EXIT_USAGE;
	} else if ((r = np_explain_workload(&st, name, out, err,
					    sizeof(err)))) {
		fprintf(stderr, "numaplace explain: %s\n", err);
		rc = r == -ENOMEM ? NP_EXIT_FAIL : NP_EXIT_USAGE;
	}
	np_state_free(&st);
	np_topology_free(t);
	return rc;
}

static int from_plan(const char *path, json_t **out)
{
	json_t *req = cli_load_json("explain", path);
	char err[1024];
	int r;

	if (!req)
		return NP_EXIT_USAGE;
	r = np_explain_plan(req, out, err, sizeof(err));
	json_decref(req);
	if (!r)
		return NP_EXIT_OK;
	fprintf(stderr, "numaplace explain: %s: %s\n", path, err);
	return r == -ENOMEM ? NP_EXIT_FAIL : NP_EXIT_USAGE;
}

int cmd_explain(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"json", no_argument, NULL, 'j'},
	    {"topology", required_argument, NULL, 't'},
	    {"state", required_argument, NULL, 'S'},
	    {"input", required_argument, NULL, 'i'},
	    {"socket", required_argument, NULL, 's'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	const char *sock = NP_CTL_DEFAULT_SOCKET, *topo = NULL, *state = NULL,
		   *input = NULL;
	bool as_json = false, sock_set = false;
	json_t *x = NULL;
	int c, rc;

	while ((c = getopt_long(argc, argv, "jt:S:i:s:h", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			as_json = true;
			break;
		case 't':
			topo = optarg;
			break;
		case 'S':
			state = optarg;
			break;
		case 'i':
			input = optarg;
			break;
		case 's':
			sock = optarg;
			sock_set = true;
			break;
		default:
			return cli_usage(explain_usage, c);
		}
	}
	if (input) {
		if (topo || state || sock_set || !cli_no_operands("explain", argc, argv)) {
			fprintf(stderr, "numaplace explain: --input takes no "
					"NAME, --topology, --state or --socket\n");
			return NP_EXIT_USAGE;
		}
		rc = from_plan(input, &x);
	} else if (argc - optind != 1 || !*argv[optind]) {
		fprintf(stderr, "numaplace explain: %s (see 'numaplace explain "
				"--help')\n",
			argc - optind > 1 ? "give one workload NAME"
					  : "workload NAME is required");
		return NP_EXIT_USAGE;
	} else if (topo || state) {
		if (!state || sock_set) {
			fprintf(stderr, "numaplace explain: offline needs "
					"--state FILE (and no --socket)\n");
			return NP_EXIT_USAGE;
		}
		rc = offline(topo, state, argv[optind], &x);
	} else {
		rc = live(sock, argv[optind], &x);
	}
	if (rc == NP_EXIT_OK)
		rc = show(x, as_json);
	json_decref(x);
	return rc;
}
