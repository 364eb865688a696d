/* Memory, one rule per layer (docs/ARCHITECTURE.md, "Out of memory").
 *
 * serve answers requests while others wait: what it allocates on their
 * path (common, store, provider, policy, serve) it checks, and a request
 * that finds no memory fails whole, answered 500 with nothing stored.
 * mem_* return NULL for the caller to fail so.
 *
 * A command, a replay of the simulator and a worker can do nothing
 * useful without the memory they ask for: x* print "ebb: out of memory
 * (N bytes)" and abort, as git's and redis's allocators do, and the code
 * that calls them has no path for a NULL.
 *
 * Both go through one count, which a test sets to fail the Nth
 * allocation from now (mem_fail_after), in every build, the sanitizers'
 * included. */
#ifndef EBB_MEM_H
#define EBB_MEM_H

#include <stddef.h>

void *mem_alloc(size_t n);
void *mem_calloc(size_t n, size_t size);
void *mem_realloc(void *p, size_t n);
char *mem_strdup(const char *s);
/* The first n bytes of s, terminated. */
char *mem_strndup(const char *s, size_t n);

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);

/* What x* do when memory is out, for what fails otherwise (a library's
 * NULL, plan()'s nomem): "ebb: out of memory (what)", and abort. */
void mem_out(const char *what) __attribute__((noreturn));

/* Tests: the nth allocation from now fails (1: the next), and those
 * after it succeed again; 0: none fails. */
void mem_fail_after(long n);

#endif
