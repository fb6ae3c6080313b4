/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Any JSON value as a YAML document, with libyaml's emitter (block style,
 * keys in the object's order). Strings a YAML reader would take for
 * something else (a number, a boolean, null, "") are quoted, so reading
 * the YAML back gives the same JSON.
 */
#ifndef NUMAPLACE_TOOLS_YAML_EMIT_H
#define NUMAPLACE_TOOLS_YAML_EMIT_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

/* 0, or -EINVAL (too deep, or libyaml refused; err says why) or -EIO
 * (writing failed). */
int np_yaml_emit(const json_t *j, FILE *out, char *err, size_t errlen);

#endif
