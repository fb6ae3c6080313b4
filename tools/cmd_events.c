// SPDX-License-Identifier: Apache-2.0
/* numaplace events: the latest violation samples, from numaplaced. */
#include "cli.h"
#include "numaplace/ctl.h"

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static void events_usage(FILE *f)
{
	fprintf(f,
		"usage: numaplace events [--json] [--limit N] [--socket PATH]\n"
		"\n"
		"The latest violation samples numaplaced took from its ring\n"
		"buffer (oldest first): ran outside its CPUs, intrusion on\n"
		"exclusive CPUs, migration to a disallowed CPU, NUMA balancer\n"
		"moves, hinting faults outside its memory nodes. Samples are\n"
		"rate-limited (verify.sample_burst); `numaplace violations` has\n"
		"the complete counts.\n"
		"\n"
		"  -j, --json           the daemon's answer as JSON\n"
		"  -n, --limit N        at most N events (default 50, max 100000)\n"
		"  -s, --socket PATH    control socket (default %s)\n"
		"  -h, --help           this text\n"
		"\n"
		"Exit: 0 ok; 1 numaplaced failed or is not reachable; 2 bad usage.\n",
		NP_CTL_DEFAULT_SOCKET);
}

int cmd_events(int argc, char **argv)
{
	static const struct option opts[] = {
		{"json", no_argument, NULL, 'j'},
		{"limit", required_argument, NULL, 'n'},
		{"socket", required_argument, NULL, 's'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	const char *sock = NP_CTL_DEFAULT_SOCKET;
	json_t *req, *resp = NULL, *ev;
	long limit = 50;
	char err[1024], *end;
	bool json = false;
	int c, rc = NP_EXIT_FAIL;
	size_t i;

	while ((c = getopt_long(argc, argv, "jn:s:h", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'n':
			limit = strtol(optarg, &end, 10);
			if (*end || limit < 1 || limit > 100000) {
				fprintf(stderr, "numaplace events: --limit: expected "
					"1..100000, got \"%s\"\n", optarg);
				return NP_EXIT_USAGE;
			}
			break;
		case 's':
			sock = optarg;
			break;
		case 'h':
			events_usage(stdout);
			return NP_EXIT_OK;
		default:
			events_usage(stderr);
			return NP_EXIT_USAGE;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "numaplace events: unexpected argument \"%s\"\n",
			argv[optind]);
		return NP_EXIT_USAGE;
	}
	req = json_pack("{s:s,s:I}", "op", "events", "limit", (json_int_t)limit);
	if (!req)
		return NP_EXIT_FAIL;
	if (np_ctl_call(sock, req, &resp, err, sizeof(err))) {
		fprintf(stderr, "numaplace events: %s\n", err);
		goto out;
	}
	if (np_ctl_check(resp, err, sizeof(err))) {
		fprintf(stderr, "numaplaced: %s\n", err);
		goto out;
	}
	rc = NP_EXIT_OK;
	if (json) {
		char *s = json_dumps(resp, JSON_INDENT(2));
		printf("%s\n", s ? s : "{}");
		free(s);
		goto out;
	}
	if (!json_is_true(json_object_get(resp, "verification")))
		printf("(verification is not active in numaplaced: see "
		       "`numaplace status`)\n");
	ev = json_object_get(resp, "events");
	for (i = 0; i < json_array_size(ev); i++) {
		const json_t *e = json_array_get(ev, i);
		double t = json_number_value(json_object_get(e, "time"));
		time_t sec = (time_t)t;
		struct tm tm;
		char tb[32];
		localtime_r(&sec, &tm);
		strftime(tb, sizeof(tb), "%H:%M:%S", &tm);
		printf("%s.%03d  %-18s %-16s pid %-7lld %-16s CPU %-4lld %s\n", tb,
		       (int)((t - (double)sec) * 1000),
		       json_string_value(json_object_get(e, "kind")),
		       json_string_value(json_object_get(e, "workload")),
		       (long long)json_integer_value(json_object_get(e, "pid")),
		       json_string_value(json_object_get(e, "comm")),
		       (long long)json_integer_value(json_object_get(e, "cpu")),
		       json_string_value(json_object_get(e, "detail")));
	}
	if (!json_array_size(ev))
		printf("no violation samples\n");
out:
	json_decref(resp);
	json_decref(req);
	return rc;
}
