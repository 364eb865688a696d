/* What the SQL engines do with the tables of store/schema.h: the column
 * lists of their statements (store/sql.h), and every bind and read of a
 * row, column by column through the engine's own calls, so that neither
 * engine names a column of a table in its code. Private to the store. */
#ifndef EBB_STORE_ROWS_H
#define EBB_STORE_ROWS_H

#include <stdint.h>
#include <stdio.h>

#include "store/schema.h"

/* The columns a statement names, of a table. */
enum rows_set {
	ROWS_ALL,    /* every column */
	ROWS_STRUCT, /* those of its struct, as a SELECT reads them */
	ROWS_INSERT, /* those an insert writes: the struct's, but the id */
	ROWS_UPDATE, /* the id, then those an update writes */
};

/* Whether column c is one of set (ROWS_UPDATE: of those an update
 * writes, the id apart). */
int rows_in_set(const struct schema_column *c, enum rows_set set);

/* Writes the names of t's columns of set (not ROWS_UPDATE), ", " between,
 * into out; and as many parameters, the mark then their number from
 * first: $1, $2 ... or ?1, ?2 ... */
void rows_names(FILE *out, const struct schema_table *t, enum rows_set set);
void rows_marks(FILE *out, const struct schema_table *t, enum rows_set set, char mark, int first);

/* Where a row's values come from (a result's row) and go to (a
 * statement's parameters): an engine's own calls. */
struct rows_source {
	int64_t (*int64)(void *src, int col);
	double (*real)(void *src, int col);
	/* NULL for SQL's NULL, else *len its length in bytes */
	const char *(*text)(void *src, int col, size_t *len);
};
struct rows_sink {
	void (*int64)(void *dst, int64_t v);
	void (*real)(void *dst, double v);
	void (*text)(void *dst, const char *v); /* NULL: SQL's NULL */
};

/* Fills row (zeroed first) from the result's columns 0 on, those of
 * ROWS_STRUCT in order. An unknown state or market reads as failed,
 * terminated or on-demand; a text too long for its buffer is cut. */
void rows_read(const struct schema_table *t, void *row, const struct rows_source *from, void *src);
/* Hands the values of row's columns of set (ROWS_INSERT or ROWS_UPDATE)
 * to the sink, in order. */
void rows_bind(const struct schema_table *t, const void *row, enum rows_set set, const struct rows_sink *to,
	       void *dst);
/* Hands a row read on to cb through t's emit, then frees the texts the
 * read copied: the callback's return. */
int rows_emit(const struct schema_table *t, union schema_cb cb, void *arg, void *row);

#endif
