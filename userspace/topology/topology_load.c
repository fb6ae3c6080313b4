// SPDX-License-Identifier: Apache-2.0
/*
 * Topology sources: dispatch on the source string and the JSON file loader.
 *
 *   NULL, "" or "live"   this machine, through hwloc
 *   "xml:PATH"           an hwloc XML export (lstopo --of xml)
 *   PATH ending in .xml  the same
 *   "synthetic:DESC"     an hwloc synthetic description
 *   "json:PATH"          a JSON topology file (the prefix is optional)
 *   "-"                  a JSON topology on standard input
 *   anything else        a JSON topology file (/dev/stdin works too)
 */
#include "numaplace/topology.h"
#include "numaplace/error.h"
#include "basic/fileio.h"
#include "numaplace/topology_json.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static bool has_prefix(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

static bool has_suffix(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);
	return n > m && strcasecmp(s + n - m, suf) == 0;
}

/*
 * A JSON topology file: either the topology object itself (numaplace's form
 * or Koordinator's {"detail": [...]}) or an object with a "topology" member
 * holding it (a plan request, a node state file). Duplicate keys are
 * rejected; errors name the file, and the line and column for syntax errors.
 */
int np_topology_from_json_file(struct np_topology **out, const char *path,
			       char *err, size_t errlen)
{
	bool is_stdin = !strcmp(path, "-");
	/* said in messages: a long path is cut, the reason comes first */
	const char *name = is_stdin ? "<stdin>" : np_echo(path);
	char jerrbuf[512];
	const json_t *body;
	json_error_t je;
	json_t *j;
	FILE *f = stdin;
	int r;

	if (!is_stdin && (r = np_fopen_read(path, &f))) {
		NP_ERR("topology file %s: %s", name,
		       r == -EISDIR ? "is a directory" : strerror(-r));
		return r;
	}
	j = json_loadf(f, JSON_REJECT_DUPLICATES, &je);
	if (!is_stdin)
		fclose(f);
	if (!j) {
		if (je.line > 0)
			NP_ERR("topology file %s: line %d, column %d: %s", name,
			    je.line, je.column, je.text);
		else
			NP_ERR("topology file %s: %s", name, je.text);
		return -EINVAL;
	}
	body = j;
	if (json_is_object(j) && !json_object_get(j, "cpus") &&
	    !json_object_get(j, "detail") && json_object_get(j, "topology"))
		body = json_object_get(j, "topology");
	r = np_topology_from_json(out, body, "topology", jerrbuf,
				  sizeof(jerrbuf));
	if (r)
		NP_ERR("topology file %s: %s", name, jerrbuf);
	json_decref(j);
	return r;
}

int np_topology_load(struct np_topology **out, const char *src, char *err,
		     size_t errlen)
{
	*out = NULL;
	if (!src || !*src || !strcmp(src, "live"))
		return np_topology_from_hwloc_live(out, err, errlen);
	if (has_prefix(src, "xml:"))
		return np_topology_from_hwloc_xml(out, src + 4, err, errlen);
	if (has_prefix(src, "synthetic:"))
		return np_topology_from_hwloc_synthetic(out, src + 10, err,
							errlen);
	if (has_prefix(src, "json:"))
		return np_topology_from_json_file(out, src + 5, err, errlen);
	if (has_suffix(src, ".xml"))
		return np_topology_from_hwloc_xml(out, src, err, errlen);
	return np_topology_from_json_file(out, src, err, errlen);
}
