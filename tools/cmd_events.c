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

static const char *str(const json_t *e, const char *key)
{
	const char *v = json_string_value(json_object_get(e, key));
	return v && *v ? v : "-";
}

/* 14:31:32.123  ran-outside         web          pid 4242 (stress)  CPU 5  gen 2  detail */
static void print_event(const json_t *e)
{
	double t = json_number_value(json_object_get(e, "time"));
	time_t sec = (time_t)t;
	int ms = (int)((t - (double)sec) * 1000);
	char tb[32] = "--:--:--", who[64];
	struct tm tm;

	if (t > 0 && localtime_r(&sec, &tm))
		strftime(tb, sizeof(tb), "%H:%M:%S", &tm);
	if (ms < 0 || ms > 999)
		ms = 0;
	snprintf(who, sizeof(who), "pid %lld (%s)",
		 (long long)json_integer_value(json_object_get(e, "pid")),
		 str(e, "comm"));
	printf("%s.%03d  %-18s %-12s %-28s CPU %-4lld gen %-4lld %s\n", tb, ms,
	       str(e, "kind"), str(e, "workload"), who,
	       (long long)json_integer_value(json_object_get(e, "cpu")),
	       (long long)json_integer_value(json_object_get(e, "gen")),
	       str(e, "detail"));
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
	char *end;
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
		default:
			return cli_usage(events_usage, c);
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
	if (cli_ctl_request("events", sock, req, &resp))
		goto out;
	rc = NP_EXIT_OK;
	if (json) {
		char *s = json_dumps(resp, JSON_INDENT(2));
		printf("%s\n", s ? s : "{}");
		free(s);
		goto out;
	}
	if (json_is_false(json_object_get(resp, "verification")))
		printf("(verification is not active in numaplaced: see "
		       "`numaplace status`)\n");
	ev = json_object_get(resp, "events");
	for (i = 0; i < json_array_size(ev); i++)
		print_event(json_array_get(ev, i));
	if (!json_array_size(ev))
		printf("no violation samples\n");
	if (json_integer_value(json_object_get(resp, "dropped")) > 0)
		printf("(%lld sample(s) dropped by the rate limiter or a full "
		       "ring buffer: `numaplace violations` has the complete "
		       "counts)\n",
		       (long long)json_integer_value(json_object_get(resp, "dropped")));
out:
	json_decref(resp);
	json_decref(req);
	return rc;
}
