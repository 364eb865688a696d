/* Allocation through one count (see mem.h). */
#include "common/mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Allocations left before the one that fails; 0: none fails. Not
 * atomic: serve runs one thread, and a test arms it before it calls. */
static long fail_in;

void mem_fail_after(long n) { fail_in = n > 0 ? n : 0; }

/* Whether this allocation is the one a test asked to fail. */
static int failing(void)
{
	return fail_in > 0 && --fail_in == 0;
}

void *mem_alloc(size_t n) { return failing() ? NULL : malloc(n); }
void *mem_calloc(size_t n, size_t size) { return failing() ? NULL : calloc(n, size); }
void *mem_realloc(void *p, size_t n) { return failing() ? NULL : realloc(p, n); }

char *mem_strdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *copy = mem_alloc(n);

	return copy ? memcpy(copy, s, n) : NULL;
}

char *mem_strndup(const char *s, size_t n)
{
	char *copy = mem_alloc(n + 1);

	if (copy) {
		memcpy(copy, s, n);
		copy[n] = '\0';
	}
	return copy;
}

void mem_out(const char *what)
{
	fprintf(stderr, "ebb: out of memory (%s)\n", what);
	/* abort() flushes nothing, and standard error may be a file. */
	fflush(stderr);
	abort();
}

static void *or_abort(void *p, size_t n)
{
	char what[40];

	if (!p) {
		snprintf(what, sizeof what, "%zu bytes", n);
		mem_out(what);
	}
	return p;
}

void *xmalloc(size_t n) { return or_abort(mem_alloc(n ? n : 1), n); }
void *xcalloc(size_t n, size_t size) { return or_abort(mem_calloc(n ? n : 1, size ? size : 1), n * size); }
void *xrealloc(void *p, size_t n) { return or_abort(mem_realloc(p, n ? n : 1), n); }
char *xstrdup(const char *s) { return or_abort(mem_strdup(s), strlen(s) + 1); }
