/* An error a client can act on: the HTTP status, a stable code, the field
 * at fault if any, and a sentence. */
#ifndef EBB_ERROR_H
#define EBB_ERROR_H

struct ebb_error {
	int status;
	char code[32];
	char field[64];
	char message[512];
};

/* The 500 of a request that found no memory (code "out_of_memory"):
 * serve stores nothing of it (docs/ARCHITECTURE.md, "Out of memory"). */
#define ERROR_OUT_OF_MEMORY "serve is out of memory: nothing of the request was kept"

/* Fills e and returns -1, so that callers can `return error_set(...)`. */
int error_set(struct ebb_error *e, int status, const char *code, const char *field,
	      const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* The body every error reply carries:
 * {"error": {"code": ..., "message": ..., "field": ... or null}} */
#include <jansson.h>
json_t *error_to_json(const struct ebb_error *e);

#endif
