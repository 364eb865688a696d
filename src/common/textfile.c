/* See textfile.h. */
#include "common/textfile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/mem.h"

char *textfile_read(const char *path, size_t max, size_t *len, char *err, size_t errsize)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	size_t n;
	int failed;

	if (!f) {
		snprintf(err, errsize, "cannot read: %s", strerror(errno));
		return NULL;
	}
	if (!(buf = mem_alloc(max + 1))) {
		fclose(f);
		snprintf(err, errsize, "out of memory");
		return NULL;
	}
	/* One byte past max tells a file that is too large. */
	n = fread(buf, 1, max + 1, f);
	failed = ferror(f) || n > max;
	if (ferror(f))
		snprintf(err, errsize, "cannot read: %s", strerror(errno));
	else if (n > max)
		snprintf(err, errsize, "larger than %zu bytes", max);
	fclose(f);
	if (failed) {
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}
