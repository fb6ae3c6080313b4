// SPDX-License-Identifier: Apache-2.0
/* numaplace plan: the what-if planner over stdin / --input. */
#include "cli.h"
#include "numaplace/error.h"
#include "numaplace/plan.h"

#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void plan_usage(FILE *f)
{
	fprintf(f,
		"usage: numaplace plan [--input FILE] [--check] [--compact]\n"
		"\n"
		"Reads one plan request (a JSON object) or an array of them from\n"
		"stdin or FILE and prints one result per request, in order.\n"
		"Kinds: take, merge, admit, release, resize, be_suppress\n"
		"(numaplace(1); the formats: docs/planner.md).\n"
		"\n"
		"  -i, --input FILE  read requests from FILE instead of stdin\n"
		"  -c, --check       compare each result with the request's\n"
		"                    expect/expect_error/admit fields; print a\n"
		"                    summary and exit 1 on any mismatch\n"
		"      --compact     one line per result\n"
		"\n"
		"Exit: 0 ok (an unsatisfiable request yields {\"error\": ...});\n"
		"      2 malformed input (the message names the field).\n");
}

int cmd_plan(int argc, char **argv)
{
	static const struct option opts[] = {
		{"input", required_argument, NULL, 'i'},
		{"check", no_argument, NULL, 'c'},
		{"compact", no_argument, NULL, 'C'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	const char *input = NULL;
	bool check = false, compact = false, many;
	json_error_t jerr;
	FILE *f = stdin;
	json_t *in, *outv = NULL;
	int c, rc = NP_EXIT_OK, npass = 0, nfail = 0;
	size_t n;

	while ((c = getopt_long(argc, argv, "i:ch", opts, NULL)) != -1) {
		switch (c) {
		case 'i':
			input = optarg;
			break;
		case 'c':
			check = true;
			break;
		case 'C':
			compact = true;
			break;
		default:
			return cli_usage(plan_usage, c);
		}
	}
	if (!cli_no_operands("plan", argc, argv))
		return NP_EXIT_USAGE;
	if (input && !cli_open_file("plan", input, &f))
		return NP_EXIT_USAGE;
	in = json_loadf(f, JSON_REJECT_DUPLICATES, &jerr);
	if (input)
		fclose(f);
	if (!in) {
		fprintf(stderr, "numaplace plan: %s: invalid JSON at line %d, "
				"column %d: %s\n",
			input ? np_echo(input) : "stdin", jerr.line,
			jerr.column, jerr.text);
		return NP_EXIT_USAGE;
	}
	many = json_is_array(in);
	n = many ? json_array_size(in) : 1;
	if (many)
		outv = json_array();
	for (size_t i = 0; i < n; i++) {
		const json_t *req = many ? json_array_get(in, i) : in;
		json_t *res = NULL;
		char err[512], why[512];
		int r = np_plan(req, &res, err, sizeof(err));

		if (r) {
			if (many)
				fprintf(stderr,
					"numaplace plan: request %zu: %s\n", i,
					err);
			else
				fprintf(stderr, "numaplace plan: %s\n", err);
			json_decref(outv);
			json_decref(in);
			return r == -EINVAL ? NP_EXIT_USAGE : NP_EXIT_FAIL;
		}
		if (check) {
			int k = np_plan_check(req, res, why, sizeof(why));
			const char *id = json_string_value(
				json_object_get(req, "id"));
			if (k < 0) {
				nfail++;
				fprintf(stderr, "MISMATCH %s: %s\n",
					id ? id : "(no id)", why);
			} else if (k == 0) {
				npass++;
			}
		}
		if (many)
			json_array_append_new(outv, res);
		else
			outv = res;
	}
	if (check) {
		printf("%d passed, %d failed\n", npass, nfail);
		if (nfail)
			rc = NP_EXIT_FAIL;
	} else {
		json_dumpf(outv, stdout,
			   (compact ? JSON_COMPACT : JSON_INDENT(2)) |
				   JSON_PRESERVE_ORDER);
		fputc('\n', stdout);
	}
	json_decref(outv);
	json_decref(in);
	return rc;
}
