/* A PostgreSQL statement's parameters, as text (the protocol's plainest
 * form): what the engine (store/postgres.c) and `ebb store copy` send.
 * The array has a fixed size: a parameter past it is counted, not
 * written, and the statement that was to take them reports it instead of
 * running (pg_args_check). */
#ifndef EBB_STORE_PG_ARGS_H
#define EBB_STORE_PG_ARGS_H

#include <stddef.h>
#include <stdint.h>

/* The most parameters of a statement: a whole row of the widest table
 * (ebb store copy's, 38 of jobs) with room to grow. */
#define PG_ARGS_MAX 64

struct pg_args {
	int n;    /* held, in v */
	int over; /* given past PG_ARGS_MAX, not held */
	const char *v[PG_ARGS_MAX];
	char buf[PG_ARGS_MAX][32]; /* the numbers' texts */
};

void pg_args_int(struct pg_args *a, int64_t v);
/* %.17g: every double back as itself. */
void pg_args_num(struct pg_args *a, double v);
/* NULL is SQL's NULL; the text must outlive the statement's run. */
void pg_args_text(struct pg_args *a, const char *v);
/* A limit; a negative one is none (LIMIT NULL). */
void pg_args_limit(struct pg_args *a, int64_t v);
/* 0 when every parameter given is held; else -1, with why in err. */
int pg_args_check(const struct pg_args *a, char *err, size_t errsize);

#endif
