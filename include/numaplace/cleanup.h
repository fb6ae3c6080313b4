/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Cleanup attributes (systemd's _cleanup_ idiom): a local released when it
 * goes out of scope, so that error paths need no goto ladder.
 *
 *	_cleanup_free_ char *buf = NULL;
 *	_cleanup_close_ int fd = -1;
 *
 * Hand a value on with np_take_ptr()/np_take_fd(), which leave the local
 * empty.
 */
#ifndef NUMAPLACE_CLEANUP_H
#define NUMAPLACE_CLEANUP_H

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static inline void np_freep(void *p)
{
	free(*(void **)p);
}

static inline void np_closep(const int *fd)
{
	if (*fd >= 0) {
		int saved = errno;
		close(*fd);
		errno = saved;
	}
}

static inline void np_fclosep(FILE **f)
{
	if (*f)
		fclose(*f);
}

static inline void np_json_decrefp(json_t **j)
{
	json_decref(*j);
}

#define _cleanup_free_ __attribute__((cleanup(np_freep)))
#define _cleanup_close_ __attribute__((cleanup(np_closep)))
#define _cleanup_fclose_ __attribute__((cleanup(np_fclosep)))
#define _cleanup_json_ __attribute__((cleanup(np_json_decrefp)))

#define np_take_ptr(p)                                                         \
	({                                                                     \
		__typeof__(p) _p = (p);                                        \
		(p) = NULL;                                                    \
		_p;                                                            \
	})
#define np_take_fd(fd)                                                         \
	({                                                                     \
		int _fd = (fd);                                                \
		(fd) = -1;                                                     \
		_fd;                                                           \
	})

#endif
