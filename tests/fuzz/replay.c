// SPDX-License-Identifier: Apache-2.0
/* main() for a harness outside libFuzzer: runs each file given (or each
 * file of each directory given) once through LLVMFuzzerTestOneInput, as
 * the normal test builds do with the seeds and the kept crash inputs. */
#include "fuzz.h"

#include <dirent.h>
#include <string.h>
#include <sys/stat.h>

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (!f) {
		perror(path);
		return 1;
	}
	if (fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET) || !(buf = malloc((size_t)n + 1))) {
		fclose(f);
		return 1;
	}
	if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
		fclose(f);
		free(buf);
		return 1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput((const uint8_t *)buf, (size_t)n);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	int files = 0, bad = 0;

	for (int i = 1; i < argc; i++) {
		struct stat st;
		DIR *d;
		struct dirent *e;
		if (stat(argv[i], &st))
			continue; /* no such directory: nothing kept there */
		if (!S_ISDIR(st.st_mode)) {
			bad += run_file(argv[i]);
			files++;
			continue;
		}
		if (!(d = opendir(argv[i])))
			return 1;
		while ((e = readdir(d))) {
			char p[4096];
			if (e->d_name[0] == '.')
				continue;
			snprintf(p, sizeof(p), "%s/%s", argv[i], e->d_name);
			bad += run_file(p);
			files++;
		}
		closedir(d);
	}
	if (fuzz_report && fuzz_report())
		bad++;
	printf("%s: %d input(s) replayed\n", argv[0], files);
	return bad ? 1 : 0;
}
