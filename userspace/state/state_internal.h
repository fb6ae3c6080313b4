/* SPDX-License-Identifier: Apache-2.0 */
/* Shared by the state directory's files (state_file.c, state_reset.c). */
#ifndef NUMAPLACE_STATE_INTERNAL_H
#define NUMAPLACE_STATE_INTERNAL_H

#include <stddef.h>

/* dir opened O_DIRECTORY, or -errno with a message. */
int np_statefile_open_dir(const char *dir, char *err, size_t errlen);
/* np_statefile_clean_tmp() on an open directory. */
int np_statefile_clean_tmp_at(int dfd, const char *dir, int *removed,
			      char *err, size_t errlen);

#endif
