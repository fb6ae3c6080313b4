// SPDX-License-Identifier: Apache-2.0
/*
 * --reset-state: the state file and its journal moved aside, never
 * deleted (see numaplace/state_file.h).
 */
#include "numaplace/cleanup.h"
#include "numaplace/error.h"
#include "numaplace/state_file.h"
#include "numaplace/state_journal.h"
#include "state_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int move_noreplace(int dfd, const char *from, const char *to)
{
	if (!renameat2(dfd, from, dfd, to, RENAME_NOREPLACE))
		return 0;
	if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP)
		return -errno;
	/* No RENAME_NOREPLACE on this file system: link fails on EEXIST. */
	if (linkat(dfd, from, dfd, to, 0))
		return -errno;
	if (unlinkat(dfd, from, 0))
		return -errno;
	return 0;
}

/* dir/from to dir/<prefix><now>[.<n>] (name: the new name, "" when there
 * was no from). 0 or -errno with a message. */
static int move_one(int dfd, const char *dir, const char *from,
		    const char *prefix, long long now, char *name,
		    size_t namelen, char *err, size_t errlen)
{
	struct stat sb;
	int r = -EEXIST;

	name[0] = '\0';
	if (fstatat(dfd, from, &sb, AT_SYMLINK_NOFOLLOW))
		return errno == ENOENT ? 0
				       : np_errf(err, errlen, -errno,
						 "%s/%s: %s", dir, from,
						 strerror(errno));
	for (int n = 0; n < 1000 && r == -EEXIST; n++) {
		if (n)
			snprintf(name, namelen, "%s%lld.%d", prefix, now, n);
		else
			snprintf(name, namelen, "%s%lld", prefix, now);
		r = move_noreplace(dfd, from, name);
	}
	if (r)
		return np_errf(err, errlen, r, "moving %s/%s aside to %s: %s",
			       dir, from, name, strerror(-r));
	return 0;
}

int np_statefile_move_aside(const char *dir, char *bak, size_t baklen,
			    char *err, size_t errlen)
{
	char name[96], jname[96];
	long long now = (long long)time(NULL);
	_cleanup_close_ int dfd = -1;
	int r;

	if (bak && baklen)
		bak[0] = '\0';
	if ((dfd = np_statefile_open_dir(dir, err, errlen)) < 0)
		return dfd;
	/* the state file first: a crash in between leaves a journal
	 * without it, which loading refuses and a new reset moves */
	if ((r = move_one(dfd, dir, NP_STATEFILE_NAME, NP_STATEFILE_BAK_PREFIX,
			  now, name, sizeof(name), err, errlen)) ||
	    (r = move_one(dfd, dir, NP_JOURNAL_NAME, NP_JOURNAL_BAK_PREFIX, now,
			  jname, sizeof(jname), err, errlen)))
		return r;
	if ((name[0] || jname[0]) && fsync(dfd))
		return np_errf(err, errlen, -errno,
			       "fsync of state directory %s: %s", dir,
			       strerror(errno));
	if (bak && baklen && name[0])
		snprintf(bak, baklen, "%s/%s", dir, name);
	return np_statefile_clean_tmp_at(dfd, dir, NULL, err, errlen);
}

int np_statefile_reset(const char *dir, char *err, size_t errlen)
{
	return np_statefile_move_aside(dir, NULL, 0, err, errlen);
}
