/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The one name <-> enum table pattern: an enum's names in an array indexed
 * by its values, looked up both ways by these helpers.
 *
 *	static const char *const qos_names[] = {
 *		[NP_QOS_LSE] = "LSE", [NP_QOS_LSR] = "LSR", ...};
 *	NP_NAME_OF(qos_names, q)        -> "LSE" ("?" when out of range)
 *	NP_NAME_FIND(qos_names, "LSR")  -> NP_QOS_LSR (-1 when unknown)
 *
 * Header only: the pure engine uses it too.
 */
#ifndef NUMAPLACE_NAMES_H
#define NUMAPLACE_NAMES_H

#include <string.h>

#define NP_NAMES_LEN(tab) ((int)(sizeof(tab) / sizeof((tab)[0])))

static inline const char *np_name_of(const char *const *names, int n, int v,
				     const char *unknown)
{
	return v >= 0 && v < n && names[v] ? names[v] : unknown;
}

/* The index of s in names (exact match), or -1. */
static inline int np_name_find(const char *const *names, int n, const char *s)
{
	for (int i = 0; s && i < n; i++)
		if (names[i] && !strcmp(names[i], s))
			return i;
	return -1;
}

#define NP_NAME_OF(tab, v) np_name_of((tab), NP_NAMES_LEN(tab), (int)(v), "?")
#define NP_NAME_FIND(tab, s) np_name_find((tab), NP_NAMES_LEN(tab), (s))

#endif
