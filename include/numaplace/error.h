/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Errors, the one convention of the whole code base (in the manner of
 * crun's libcrun_error_t and systemd's log_error_errno): a function returns
 * 0 or a negative errno, and says what went wrong, with its context, once,
 * into the caller's buffer (char *err, size_t errlen; either may be
 * NULL/0). Callers that add context wrap the message they were given:
 *
 *	if ((r = np_read_at(fd, name, 0, MAX, &buf, &len)) < 0)
 *		return np_errno(err, errlen, r, "reading %s", name);
 *
 * gives "reading state.json: Permission denied" and returns r.
 *
 * Header only: the pure engine uses it too and links nothing else.
 */
#ifndef NUMAPLACE_ERROR_H
#define NUMAPLACE_ERROR_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Put the message into err (truncated to errlen; NULL-safe). */
static inline __attribute__((format(printf, 3, 0))) void
np_verrmsg(char *err, size_t errlen, const char *fmt, va_list ap)
{
	if (err && errlen)
		vsnprintf(err, errlen, fmt, ap);
}

static inline __attribute__((format(printf, 3, 4))) void
np_errmsg(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	np_verrmsg(err, errlen, fmt, ap);
	va_end(ap);
}

/* The message, and return code (a negative errno). */
static inline __attribute__((format(printf, 4, 5))) int
np_errf(char *err, size_t errlen, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	np_verrmsg(err, errlen, fmt, ap);
	va_end(ap);
	return code;
}

/* "MESSAGE: strerror(-code)", and return code (a negative errno). */
static inline __attribute__((format(printf, 4, 5))) int
np_errno(char *err, size_t errlen, int code, const char *fmt, ...)
{
	char buf[64];
	va_list ap;
	size_t n;

	if (!err || !errlen)
		return code;
	va_start(ap, fmt);
	np_verrmsg(err, errlen, fmt, ap);
	va_end(ap);
	n = strlen(err);
	if (n + 2 < errlen)
		snprintf(err + n, errlen - n, ": %s",
			 strerror_r(code < 0 ? -code : code, buf, sizeof(buf)));
	return code;
}

/* In a function with parameters `char *err, size_t errlen`. */
#define NP_ERR(...) np_errmsg(err, errlen, __VA_ARGS__)

/*
 * Echoing what the user gave (a name, a path, a quantity, a key) in a
 * message: whole up to NP_ECHO_MAX bytes, else its first NP_ECHO_MAX bytes
 * (not splitting a UTF-8 character) and "...", so that a 10,000-byte
 * value does not fill the terminal. The one way every message cuts an
 * echoed value. Header only, as the rest of this file: the pure engine
 * uses it too (it may call nothing of userspace/basic/).
 *
 *	NP_ERR("name: workload \"%s\" is already admitted", np_echo(name));
 */
#define NP_ECHO_MAX 128
#define NP_ECHO_SIZE (NP_ECHO_MAX + 4) /* "..." and the NUL */

/* s cut into buf (NP_ECHO_SIZE bytes), or s itself when short enough;
 * NULL is "(null)". Not inlined: inlined with a short constant string,
 * gcc's -Warray-bounds takes the cut path for reachable. */
static __attribute__((noinline, unused)) const char *
np_echo_into(char *buf, const char *s)
{
	size_t n;

	if (!s)
		return "(null)";
	n = strnlen(s, NP_ECHO_MAX + 1);
	if (n <= NP_ECHO_MAX)
		return s;
	n = NP_ECHO_MAX;
	/* back to the start of a UTF-8 character (at most 3 bytes) */
	for (int k = 0; k < 3 && ((unsigned char)s[n] & 0xC0) == 0x80; k++)
		n--;
	memcpy(buf, s, n);
	memcpy(buf + n, "...", 4);
	return buf;
}

/* In an argument list: the buffer lives to the end of the enclosing
 * block. */
#define np_echo(s) np_echo_into((char[NP_ECHO_SIZE]){0}, (s))

#endif
