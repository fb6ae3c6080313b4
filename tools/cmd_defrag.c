// SPDX-License-Identifier: Apache-2.0
/*
 * numaplace defrag: the fewest moves of movable workloads that make room
 * for a rejected admission (a spec, or the last one numaplaced rejected),
 * shown (--dry-run) or carried out by numaplaced (--apply).
 */
#include "cli.h"
#include "status_render.h"
#include "numaplace/ctl.h"

#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void defrag_usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: numaplace defrag [--dry-run|--apply] [-f SPEC] [--json] "
	    "[--socket PATH]\n"
	    "\n"
	    "When an exclusive admission is rejected although enough CPUs are\n"
	    "free (scattered over NUMA nodes and cores), shows the fewest\n"
	    "moves of other workloads that make room for it: shared and BE\n"
	    "workloads first, exclusive ones only when their spec says\n"
	    "\"movable\": true. Each moved workload is admitted again with its\n"
	    "own request. Without -f, the last admission numaplaced rejected.\n"
	    "\n"
	    "  -n, --dry-run        show the plan (the default)\n"
	    "  -a, --apply          carry it out: moves saved, written in the\n"
	    "                       safe order, pages migrated when a moved\n"
	    "                       workload's memory nodes change; then the\n"
	    "                       request is admitted\n"
	    "  -f, --file SPEC      the workload spec, - for stdin\n"
	    "  -j, --json           print numaplaced's answer as JSON\n"
	    "  -s, --socket PATH    control socket (default %s)\n"
	    "  -h, --help           this text\n"
	    "\n"
	    "Exit: 0 a plan exists (or none is needed; with --apply: carried\n"
	    "      out and admitted); 1 no plan, the admission rejected, or\n"
	    "      numaplaced failed or is not reachable; 2 bad usage or a bad\n"
	    "      spec (the message names the field).\n",
	    NP_CTL_DEFAULT_SOCKET);
}

static const char *str(const json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? s : "";
}

/* "CPUs 4-5 (NUMA node 1)" */
static void place(const json_t *p, FILE *f)
{
	const char *c = str(p, "cpus"), *m = str(p, "mems");
	fprintf(f, "%s %s (NUMA node%s %s)", *c ? "CPUs" : "the shared pool",
		c, strchr(m, ',') || strchr(m, '-') ? "s" : "", m);
}

static void render_moves(const json_t *plan, FILE *f)
{
	const json_t *moves = json_object_get(plan, "moves"), *m;
	size_t i, n = json_array_size(moves);

	fprintf(f, "%zu move%s make%s room (%lld move set(s) simulated, %lld "
		   "movable workload(s), up to %lld moves):\n",
		n, n == 1 ? "" : "s", n == 1 ? "s" : "",
		(long long)json_integer_value(json_object_get(plan, "tried")),
		(long long)json_integer_value(json_object_get(plan, "candidates")),
		(long long)json_integer_value(json_object_get(plan, "max_moves")));
	json_array_foreach(moves, i, m)
	{
		fprintf(f, "  %zu. move %s (%s) from ", i + 1, str(m, "workload"),
			str(m, "class"));
		place(json_object_get(m, "from"), f);
		fprintf(f, " to ");
		place(json_object_get(m, "to"), f);
		if (json_is_true(json_object_get(m, "mems_change")))
			fprintf(f, "; its pages move to node(s) %s",
				str(json_object_get(m, "to"), "mems"));
		fprintf(f, "\n");
	}
	fprintf(f, "then %s is admitted on ", str(plan, "workload"));
	place(json_object_get(plan, "admits"), f);
	fprintf(f, ".\n");
}

/* The plan in sentences; true when it makes room (or none is needed). */
static bool render_plan(const json_t *plan, FILE *f)
{
	const json_t *rej = json_object_get(plan, "rejected"), *k;
	bool found = json_is_true(json_object_get(plan, "found"));
	size_t i;

	if (!json_is_true(json_object_get(plan, "needed"))) {
		fprintf(f, "%s fits as things are, on ", str(plan, "workload"));
		place(json_object_get(plan, "admits"), f);
		fprintf(f, ": no move is needed.\n");
		return true;
	}
	fprintf(f, "%s is rejected as things are: %s (resource %s).\n",
		str(plan, "workload"), str(rej, "reason"), str(rej, "resource"));
	if (found)
		render_moves(plan, f);
	else
		fprintf(f, "No plan: %s.\n", str(plan, "why"));
	json_array_foreach(json_object_get(plan, "kept"), i, k)
		fprintf(f, "%s stays where it is: %s.\n", str(k, "workload"),
			str(k, "why"));
	return found;
}

struct defrag_args {
	const char *file, *sock;
	bool apply, as_json;
};

static int parse(int argc, char **argv, struct defrag_args *a)
{
	static const struct option opts[] = {
	    {"dry-run", no_argument, NULL, 'n'},
	    {"apply", no_argument, NULL, 'a'},
	    {"file", required_argument, NULL, 'f'},
	    {"json", no_argument, NULL, 'j'},
	    {"socket", required_argument, NULL, 's'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	bool dry = false;
	int c;

	a->sock = NP_CTL_DEFAULT_SOCKET;
	while ((c = getopt_long(argc, argv, "naf:js:h", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			dry = true;
			break;
		case 'a':
			a->apply = true;
			break;
		case 'f':
			a->file = optarg;
			break;
		case 'j':
			a->as_json = true;
			break;
		case 's':
			a->sock = optarg;
			break;
		default:
			return cli_usage(defrag_usage, c);
		}
	}
	if (!cli_no_operands("defrag", argc, argv))
		return NP_EXIT_USAGE;
	if (dry && a->apply) {
		fprintf(stderr, "numaplace defrag: --dry-run and --apply "
				"exclude each other\n");
		return NP_EXIT_USAGE;
	}
	return -1;
}

int cmd_defrag(int argc, char **argv)
{
	struct defrag_args a = {0};
	json_t *spec = NULL, *req = NULL, *resp = NULL;
	const json_t *plan, *dec;
	char err[1024];
	int r, rc;

	if ((rc = parse(argc, argv, &a)) >= 0)
		return rc;
	rc = NP_EXIT_FAIL;
	if (a.file && (r = np_ctl_load_spec(a.file, &spec, err, sizeof(err)))) {
		fprintf(stderr, "numaplace defrag: %s\n", err);
		return r == -ENOMEM ? NP_EXIT_FAIL : NP_EXIT_USAGE;
	}
	req = json_pack("{s:s,s:b}", "op", "defrag", "apply", a.apply);
	if (req && spec)
		json_object_set(req, "spec", spec);
	if (cli_ctl_request("defrag", a.sock, req, &resp))
		goto out;
	plan = json_object_get(resp, "plan");
	dec = json_object_get(resp, "decision");
	if (!json_is_object(plan)) {
		fprintf(stderr, "numaplace defrag: malformed answer from "
				"numaplaced: plan is missing\n");
		goto out;
	}
	json_object_del(resp, "ok");
	if (a.as_json)
		cli_print_json(resp);
	else
		render_plan(plan, stdout);
	if (!json_is_true(json_object_get(plan, "found")) &&
	    json_is_true(json_object_get(plan, "needed")))
		goto out; /* no plan */
	if (a.apply && dec) {
		if (!a.as_json)
			np_decision_render(dec, stdout);
		rc = json_is_true(json_object_get(dec, "admitted"))
			     ? NP_EXIT_OK
			     : NP_EXIT_FAIL;
	} else {
		if (!a.as_json && !a.apply &&
		    json_is_true(json_object_get(plan, "needed")))
			printf("Run 'numaplace defrag --apply%s%s' to carry it "
			       "out.\n",
			       a.file ? " -f " : "", a.file ? a.file : "");
		rc = NP_EXIT_OK;
	}
out:
	json_decref(resp);
	json_decref(req);
	json_decref(spec);
	return rc;
}
