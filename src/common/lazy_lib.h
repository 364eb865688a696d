/* A shared library loaded the first time ebb needs it, not at start: the
 * libraries only some configurations use (libcurl for webhooks and
 * clients, libpq for the PostgreSQL store) would otherwise be mapped by
 * every process, with their own dependencies, and the idle control plane
 * would miss its memory goal (docs/BENCHMARKS.md). A caller keeps a table
 * of function pointers and a list of the symbols that fill it. */
#ifndef EBB_LAZY_LIB_H
#define EBB_LAZY_LIB_H

#include <stddef.h>

struct lazy_sym {
	const char *name;
	size_t offset; /* of its pointer in the caller's table */
};

/* Loads `soname` and fills every pointer of `table`: 0, or -1 with the
 * reason in why (the library missing, or the symbol it lacks). */
int lazy_lib_load(const char *soname, void *table, const struct lazy_sym *syms, size_t n, char *why,
		  size_t whysize);

#endif
