// SPDX-License-Identifier: Apache-2.0
/*
 * np-probe-keys KIND PATH TEMPLATE: the keys the real parser accepts in one
 * object, read from the code by running it (tests/host/man-host.sh checks that
 * the man pages name each one).
 *
 * KIND is "config" (np_config_from_json, what numaplaced and the hook read)
 * or "spec" (np_workload_req_from_json, a workload spec). TEMPLATE is a
 * JSON document the parser accepts, in which one object holds the key "@":
 * that object is probed. Each name on stdin (one a line) is put there in
 * place of "@", with the value null, and the parser is run: the name is a
 * key of the object unless the parser says "PATH.NAME: unknown field" (the
 * words np_json_only_keys and the container parser use). A name the
 * template already has is probed the same way (null in place of its value,
 * which is put back after). Prints the accepted names, one a line; exit 2
 * on bad usage or a template that is not JSON or has no "@".
 */
#include "numaplace/admit.h"
#include "numaplace/config.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The object holding "@", depth first. */
static json_t *marked(json_t *j)
{
	const char *k;
	json_t *v, *m;
	size_t i;

	if (json_is_object(j)) {
		if (json_object_get(j, "@"))
			return j;
		json_object_foreach(j, k, v) if ((m = marked(v))) return m;
	} else if (json_is_array(j)) {
		json_array_foreach(j, i, v) if ((m = marked(v))) return m;
	}
	return NULL;
}

static bool accepted(bool config, const json_t *doc, const char *path,
		     const char *name)
{
	char err[1024], unknown[512];
	int r;

	err[0] = 0;
	if (config) {
		struct np_config c;
		r = np_config_from_json(&c, doc, err, sizeof(err));
	} else {
		struct np_workload_req w;
		r = np_workload_req_from_json(&w, doc, "spec", err,
					      sizeof(err));
		if (r == 0)
			np_workload_req_free(&w);
	}
	snprintf(unknown, sizeof(unknown), "%s.%s: unknown field", path, name);
	return r == 0 || strncmp(err, unknown, strlen(unknown));
}

int main(int argc, char **argv)
{
	json_error_t jerr;
	json_t *doc, *obj;
	char line[256];
	bool config;

	if (argc != 4 || (strcmp(argv[1], "config") && strcmp(argv[1], "spec"))) {
		fprintf(stderr, "usage: np-probe-keys config|spec PATH TEMPLATE "
				"< names\n");
		return 2;
	}
	config = !strcmp(argv[1], "config");
	if (!(doc = json_loads(argv[3], 0, &jerr)) || !(obj = marked(doc))) {
		fprintf(stderr, "np-probe-keys: template: %s\n",
			doc ? "no object holds \"@\"" : jerr.text);
		return 2;
	}
	json_object_del(obj, "@");
	while (fgets(line, sizeof(line), stdin)) {
		json_t *had;

		line[strcspn(line, "\n")] = 0;
		if (!line[0])
			continue;
		had = json_incref(json_object_get(obj, line));
		json_object_set_new(obj, line, json_null());
		if (accepted(config, doc, argv[2], line))
			printf("%s\n", line);
		if (had)
			json_object_set_new(obj, line, had);
		else
			json_object_del(obj, line);
	}
	json_decref(doc);
	return 0;
}
