// SPDX-License-Identifier: Apache-2.0
/* Kubernetes resource quantity parsing, strict and overflow-checked. */
#include "numaplace/quantity.h"
#include "numaplace/error.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static const struct {
	const char *sfx;
	uint64_t mul; /* multiplier */
} suffixes[] = {
	{"Ki", 1ULL << 10}, {"Mi", 1ULL << 20}, {"Gi", 1ULL << 30},
	{"Ti", 1ULL << 40}, {"Pi", 1ULL << 50}, {"Ei", 1ULL << 60},
	{"k", 1000ULL},	    {"M", 1000000ULL}, {"G", 1000000000ULL},
	{"T", 1000000000000ULL}, {"P", 1000000000000000ULL},
	{"E", 1000000000000000000ULL},
};

/*
 * value = (int_part + frac / 10^nfrac) * mul / div, computed exactly in
 * 128 bits; rejects results that are not whole units.
 */
static int parse(const char *s, bool allow_milli, uint64_t scale,
		 uint64_t *out, char *err, size_t errlen)
{
	unsigned __int128 ip = 0, fp = 0, pow10 = 1, mul = 1, v;
	const char *p = s;
	int nd = 0;
	bool milli = false;

	if (!s || !*s) {
		NP_ERR("empty quantity");
		return -EINVAL;
	}
	while (isdigit((unsigned char)*p)) {
		ip = ip * 10 + (unsigned)(*p++ - '0');
		if (ip > ((unsigned __int128)1 << 64)) {
			NP_ERR("quantity \"%s\" is too large", np_echo(s));
			return -ERANGE;
		}
		nd++;
	}
	if (*p == '.') {
		p++;
		while (isdigit((unsigned char)*p)) {
			if (pow10 < (unsigned __int128)1000000000000000000ULL) {
				fp = fp * 10 + (unsigned)(*p - '0');
				pow10 *= 10;
			}
			p++;
			nd++;
		}
	}
	if (nd == 0) {
		NP_ERR("quantity \"%s\" does not start with a number",
		       np_echo(s));
		return -EINVAL;
	}
	if (*p == 'm' && p[1] == '\0' && allow_milli) {
		milli = true;
		p++;
	} else if (*p) {
		unsigned i;
		for (i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++)
			if (!strcmp(p, suffixes[i].sfx))
				break;
		if (i == sizeof(suffixes) / sizeof(suffixes[0])) {
			NP_ERR("quantity \"%s\" has an unknown suffix \"%s\"",
			       np_echo(s), np_echo(p));
			return -EINVAL;
		}
		mul = suffixes[i].mul;
	}
	/* v = (ip * pow10 + fp) * mul * scale / (pow10 * (milli ? 1000 : 1)) */
	v = (ip * pow10 + fp) * mul;
	if (v / mul != ip * pow10 + fp || v > ((unsigned __int128)1 << 100)) {
		NP_ERR("quantity \"%s\" is too large", np_echo(s));
		return -ERANGE;
	}
	v *= scale;
	{
		unsigned __int128 div = pow10 * (milli ? 1000 : 1);
		if (v % div) {
			NP_ERR("quantity \"%s\" is not a whole number of %s",
			       np_echo(s), scale == 1000 ? "millicores" : "bytes");
			return -EINVAL;
		}
		v /= div;
	}
	if (v > (unsigned __int128)INT64_MAX) {
		NP_ERR("quantity \"%s\" is too large", np_echo(s));
		return -ERANGE;
	}
	*out = (uint64_t)v;
	return 0;
}

int np_quantity_cpu_milli(const char *s, int64_t *out, char *err,
			  size_t errlen)
{
	uint64_t v;
	int r = parse(s, true, 1000, &v, err, errlen);
	if (r == 0)
		*out = (int64_t)v;
	return r;
}

int np_quantity_bytes(const char *s, uint64_t *out, char *err, size_t errlen)
{
	return parse(s, false, 1, out, err, errlen);
}

void np_quantity_format_bytes(uint64_t v, char *buf, size_t len)
{
	static const char *const b[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
	int i = 0;
	while (i < 6 && v && v % 1024 == 0) {
		v /= 1024;
		i++;
	}
	snprintf(buf, len, "%llu%s", (unsigned long long)v, b[i]);
}
