// SPDX-License-Identifier: Apache-2.0
/* JSON to YAML with libyaml's emitter (tools/yaml_emit.h). */
#include "yaml_emit.h"
#include "numaplace/error.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#define YAML_MAX_DEPTH 64

/* Would a YAML 1.1 reader (PyYAML, go-yaml v2) resolve this plain scalar
 * to something other than a string? Conservatively: empty, starting like a
 * number, a timestamp, a merge key or null; or a boolean/null word. */
static bool needs_quotes(const char *s)
{
	static const char *const words[] = {
	    "y",  "n",   "yes", "no",   "on",	"off", "true",
	    "false", "null", "~",	"nan", ".nan", ".inf", NULL};

	if (!*s || strchr("0123456789+-.~=<", *s) || isspace((unsigned char)*s))
		return true;
	for (int i = 0; words[i]; i++)
		if (!strcasecmp(s, words[i]))
			return true;
	return false;
}

/* A string: plain unless a reader would take it for something else. */
static int scalar_ev(yaml_emitter_t *em, const char *v, bool string)
{
	bool plain = !string || !needs_quotes(v);
	yaml_event_t ev;

	if (!yaml_scalar_event_initialize(
		&ev, NULL, NULL, (yaml_char_t *)v, (int)strlen(v), plain,
		string, plain ? YAML_ANY_SCALAR_STYLE
			      : YAML_DOUBLE_QUOTED_SCALAR_STYLE))
		return -ENOMEM;
	return yaml_emitter_emit(em, &ev) ? 0 : -EINVAL;
}

static int scalar(yaml_emitter_t *em, const char *v)
{
	return scalar_ev(em, v, false);
}

static int string(yaml_emitter_t *em, const char *v)
{
	return scalar_ev(em, v, true);
}

static int emit(yaml_emitter_t *em, const json_t *j, int depth);

static int emit_object(yaml_emitter_t *em, const json_t *j, int depth)
{
	const char *key;
	json_t *v;
	yaml_event_t ev;
	int r;

	yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1,
					    YAML_BLOCK_MAPPING_STYLE);
	if (!yaml_emitter_emit(em, &ev))
		return -EINVAL;
	json_object_foreach((json_t *)j, key, v)
	{
		if ((r = string(em, key)) ||
		    (r = emit(em, v, depth + 1)))
			return r;
	}
	yaml_mapping_end_event_initialize(&ev);
	return yaml_emitter_emit(em, &ev) ? 0 : -EINVAL;
}

static int emit_array(yaml_emitter_t *em, const json_t *j, int depth)
{
	yaml_event_t ev;
	size_t i;
	json_t *v;
	int r;

	yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1,
					     YAML_BLOCK_SEQUENCE_STYLE);
	if (!yaml_emitter_emit(em, &ev))
		return -EINVAL;
	json_array_foreach(j, i, v)
	{
		if ((r = emit(em, v, depth + 1)))
			return r;
	}
	yaml_sequence_end_event_initialize(&ev);
	return yaml_emitter_emit(em, &ev) ? 0 : -EINVAL;
}

static int emit(yaml_emitter_t *em, const json_t *j, int depth)
{
	char buf[64];

	if (depth > YAML_MAX_DEPTH)
		return -E2BIG;
	switch (json_typeof(j)) {
	case JSON_OBJECT:
		return emit_object(em, j, depth);
	case JSON_ARRAY:
		return emit_array(em, j, depth);
	case JSON_STRING:
		return string(em, json_string_value(j));
	case JSON_INTEGER:
		snprintf(buf, sizeof(buf), "%" JSON_INTEGER_FORMAT,
			 json_integer_value(j));
		return scalar(em, buf);
	case JSON_REAL:
		snprintf(buf, sizeof(buf), "%.17g", json_real_value(j));
		if (!strpbrk(buf, ".en")) /* 2 -> 2.0: still a float */
			strcat(buf, ".0");
		return scalar(em, buf);
	case JSON_TRUE:
	case JSON_FALSE:
		return scalar(em, json_is_true(j) ? "true" : "false");
	default:
		return scalar(em, "null");
	}
}

int np_yaml_emit(const json_t *j, FILE *out, char *err, size_t errlen)
{
	yaml_emitter_t em;
	yaml_event_t ev;
	int r = -EINVAL;

	if (!yaml_emitter_initialize(&em))
		return np_errf(err, errlen, -ENOMEM, "yaml: out of memory");
	yaml_emitter_set_output_file(&em, out);
	yaml_emitter_set_unicode(&em, 1);
	yaml_emitter_set_width(&em, -1); /* no folding of long strings */
	yaml_emitter_set_indent(&em, 2);
	yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING);
	if (!yaml_emitter_emit(&em, &ev))
		goto out;
	yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1);
	if (!yaml_emitter_emit(&em, &ev) || (r = emit(&em, j, 0)))
		goto out;
	r = -EINVAL;
	yaml_document_end_event_initialize(&ev, 1);
	if (!yaml_emitter_emit(&em, &ev))
		goto out;
	yaml_stream_end_event_initialize(&ev);
	if (!yaml_emitter_emit(&em, &ev) || !yaml_emitter_flush(&em))
		goto out;
	r = fflush(out) || ferror(out) ? -EIO : 0;
out:
	if (r == -E2BIG)
		r = np_errf(err, errlen, -EINVAL,
			    "yaml: nested deeper than %d levels",
			    YAML_MAX_DEPTH);
	else if (r == -EIO || em.error == YAML_WRITER_ERROR)
		r = np_errf(err, errlen, -EIO, "writing YAML failed");
	else if (r)
		np_errmsg(err, errlen, "yaml: %s",
			  em.problem ? em.problem : "emitter error");
	yaml_emitter_delete(&em);
	return r;
}
