/* What the fuzz targets share (each tests/fuzz/NAME.c is one libFuzzer
 * target, built by `make fuzz`): the input as a C string, and the input
 * as a file for the parsers that read one. A target checks what must
 * hold of every input; libFuzzer with ASan and UBSan reports the rest
 * (crashes, leaks, undefined behaviour). */
#ifndef EBB_FUZZ_H
#define EBB_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A finding of the target's own: the input broke a promise. */
#define FUZZ_ASSERT(cond)                                                                   \
	do {                                                                                \
		if (!(cond)) {                                                              \
			fprintf(stderr, "%s:%d: promise broken: %s\n", __FILE__, __LINE__, #cond); \
			abort();                                                            \
		}                                                                           \
	} while (0)

/* data as a NUL-terminated string (cut at its first NUL), to free. */
static inline char *fuzz_string(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

/* A file of this process's for the parsers that open a path, in memory
 * (/dev/shm) where there is one: rewriting a file on ext4 waits for the
 * disk at each close (auto_da_alloc), a hundred times slower. */
static inline void fuzz_tmp_path(char *path, size_t size, const char *what)
{
	snprintf(path, size, "%s/ebb-fuzz-%s-%ld", access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp", what,
		 (long)getpid());
}

/* data written to this process's one file, whose path it returns. The
 * file goes at exit. */
static char fuzz_path[64];

static inline void fuzz_unlink(void) { unlink(fuzz_path); }

static inline const char *fuzz_file(const uint8_t *data, size_t size)
{
	FILE *f;

	if (!fuzz_path[0]) {
		fuzz_tmp_path(fuzz_path, sizeof fuzz_path, "input");
		atexit(fuzz_unlink);
	}
	if (!(f = fopen(fuzz_path, "w")) || fwrite(data, 1, size, f) != size || fclose(f) != 0)
		abort();
	return fuzz_path;
}

#endif
