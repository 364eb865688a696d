/* See copy.h. Both stores are opened through the front end first, which
 * migrates each to this version's schema and, for PostgreSQL, takes the
 * database's lock, so that no serve runs on the target meanwhile; the
 * rows then go table by table of store/schema.c, parents first, column by
 * column by name, from a read-only SQLite connection to a libpq one of
 * their own, in one transaction. */
#include "store/copy.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "store/pg_args.h"
#include "store/pq_lazy.h"
#include "store/rows.h"
#include "store/sql.h"
#include "store/store.h"

/* The most sums a table's check compares (schema.h: check). */
#define MAX_CHECKS 5

struct copy {
	sqlite3 *src;
	PGconn *dst;
	char *err;
	size_t errsize;
};

static int sqlite_fail(struct copy *c, const char *what)
{
	snprintf(c->err, c->errsize, "sqlite: %s: %s", what, sqlite3_errmsg(c->src));
	return -1;
}

static int pg_fail(struct copy *c, const char *what, const PGresult *r)
{
	const char *why = r ? PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY) : NULL;

	snprintf(c->err, c->errsize, "postgres: %s: %s", what, why ? why : PQerrorMessage(c->dst));
	c->err[strcspn(c->err, "\n")] = '\0';
	return -1;
}

/* Runs sql on the target: its result, or NULL with the reason in err. */
static PGresult *pg_query(struct copy *c, const char *sql)
{
	PGresult *r = PQexec(c->dst, sql);

	if (PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK)
		return r;
	pg_fail(c, sql, r);
	PQclear(r);
	return NULL;
}

static int pg_exec(struct copy *c, const char *sql)
{
	PGresult *r = pg_query(c, sql);

	PQclear(r);
	return r ? 0 : -1;
}

/* The target's table must be empty: the copy keeps the ids. */
static int check_empty(struct copy *c, const struct schema_table *t)
{
	char sql[128];
	PGresult *r;
	int empty;

	snprintf(sql, sizeof sql, "SELECT NOT EXISTS (SELECT 1 FROM %s)", t->name);
	if (!(r = pg_query(c, sql)))
		return -1;
	empty = strcmp(PQgetvalue(r, 0, 0), "t") == 0;
	PQclear(r);
	if (!empty)
		snprintf(c->err, c->errsize, "the target's table %s is not empty: copy into an empty database", t->name);
	return empty ? 0 : -1;
}

/* The identity column of t, whose values the copy gives: NULL if none. */
static const char *identity(const struct schema_table *t)
{
	for (int i = 0; i < t->ncols; i++) {
		if (t->cols[i].flags & SCHEMA_ID)
			return t->cols[i].name;
	}
	return NULL;
}

/* The SELECT of every column of t from the source, or the INSERT of
 * them into the target: the caller frees it. */
static char *statement(struct copy *c, const struct schema_table *t, int insert)
{
	char *sql = NULL;
	size_t size;
	FILE *f = open_memstream(&sql, &size);

	if (!f) {
		snprintf(c->err, c->errsize, "out of memory");
		return NULL;
	}
	if (insert)
		fprintf(f, "INSERT INTO %s (", t->name);
	else
		fputs("SELECT ", f);
	rows_names(f, t, ROWS_ALL);
	if (insert) {
		fprintf(f, ") %sVALUES (", identity(t) ? "OVERRIDING SYSTEM VALUE " : "");
		rows_marks(f, t, ROWS_ALL, '$', 1);
		fputc(')', f);
	} else {
		fprintf(f, " FROM %s", t->name);
	}
	if (fclose(f) != 0) {
		free(sql);
		snprintf(c->err, c->errsize, "out of memory");
		return NULL;
	}
	return sql;
}

/* A row of the source as the target's parameters. A real goes as %.17g,
 * which gives it back whole (SQLite's own text has 15 digits). */
static void row_args(sqlite3_stmt *st, int n, struct pg_args *a)
{
	for (int i = 0; i < n; i++) {
		int type = sqlite3_column_type(st, i);
		if (type == SQLITE_NULL)
			pg_args_text(a, NULL);
		else if (type == SQLITE_FLOAT)
			pg_args_num(a, sqlite3_column_double(st, i));
		else
			pg_args_text(a, (const char *)sqlite3_column_text(st, i));
	}
}

/* The rows of one table, each an INSERT of its columns by name. */
static int copy_rows(struct copy *c, const struct schema_table *t, int64_t *rows)
{
	char *select = statement(c, t, 0), *insert = select ? statement(c, t, 1) : NULL;
	sqlite3_stmt *st = NULL;
	int rc = SQLITE_ERROR;

	*rows = 0;
	if (!insert)
		goto done;
	if (sqlite3_prepare_v2(c->src, select, -1, &st, NULL) != SQLITE_OK) {
		sqlite_fail(c, select);
		goto done;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct pg_args a = {0};
		PGresult *r;
		row_args(st, t->ncols, &a);
		if (pg_args_check(&a, c->err, c->errsize) != 0)
			goto done;
		r = PQexecParams(c->dst, insert, a.n, NULL, a.v, NULL, NULL, 0);
		if (PQresultStatus(r) != PGRES_COMMAND_OK) {
			pg_fail(c, t->name, r);
			PQclear(r);
			goto done;
		}
		PQclear(r);
		(*rows)++;
	}
	if (rc != SQLITE_DONE)
		sqlite_fail(c, t->name);
done:
	sqlite3_finalize(st);
	free(select);
	free(insert);
	return rc == SQLITE_DONE ? 0 : -1;
}

/* The table's check on both sides: equal counts and sums (a sum of reals
 * within a relative 1e-9: the two engines add in different orders). */
static int verify(struct copy *c, const struct schema_table *t)
{
	double want[MAX_CHECKS], got[MAX_CHECKS];
	char sql[512];
	sqlite3_stmt *st;
	PGresult *r;
	int n;

	snprintf(sql, sizeof sql, "SELECT %s FROM %s", t->check, t->name);
	if (sqlite3_prepare_v2(c->src, sql, -1, &st, NULL) != SQLITE_OK)
		return sqlite_fail(c, sql);
	if (sqlite3_step(st) != SQLITE_ROW) {
		sqlite3_finalize(st);
		return sqlite_fail(c, sql);
	}
	if ((n = sqlite3_column_count(st)) > MAX_CHECKS) {
		sqlite3_finalize(st);
		snprintf(c->err, c->errsize, "%s: its check compares %d values, more than %d", t->name, n, MAX_CHECKS);
		return -1;
	}
	for (int i = 0; i < n; i++)
		want[i] = sqlite3_column_double(st, i);
	sqlite3_finalize(st);
	if (!(r = pg_query(c, sql)))
		return -1;
	if (PQnfields(r) != n) {
		snprintf(c->err, c->errsize, "%s: the check has %d values in the source, %d in the copy", t->name, n,
			 PQnfields(r));
		PQclear(r);
		return -1;
	}
	for (int i = 0; i < n; i++)
		got[i] = strtod(PQgetvalue(r, 0, i), NULL);
	for (int i = 0; i < n; i++) {
		if (fabs(got[i] - want[i]) > 1e-9 * fmax(1.0, fabs(want[i]))) {
			snprintf(c->err, c->errsize, "%s: %s is %.17g in the copy, %.17g in the source: nothing was copied",
				 t->name, PQfname(r, i), got[i], want[i]);
			PQclear(r);
			return -1;
		}
	}
	PQclear(r);
	return 0;
}

/* The next id of an identity column follows the ids copied. */
static int follow_ids(struct copy *c, const struct schema_table *t)
{
	const char *id = identity(t);
	char sql[256];

	if (!id)
		return 0;
	snprintf(sql, sizeof sql,
		 "SELECT setval(pg_get_serial_sequence('%s', '%s'), COALESCE(MAX(%s), 0) + 1, false) FROM %s",
		 t->name, id, id, t->name);
	return pg_exec(c, sql);
}

static int copy_all(struct copy *c, FILE *out)
{
	const struct schema_table *const *t;
	int64_t rows[SCHEMA_NTABLES];

	if (pg_exec(c, "BEGIN") != 0)
		return -1;
	/* The copied instance_events are the history: the triggers that
	 * write it must not add to it. */
	if (pg_exec(c, "ALTER TABLE instances DISABLE TRIGGER USER") != 0)
		return -1;
	for (t = schema_tables; *t; t++) {
		if (check_empty(c, *t) != 0 || copy_rows(c, *t, &rows[t - schema_tables]) != 0 ||
		    follow_ids(c, *t) != 0)
			return -1;
	}
	if (pg_exec(c, "ALTER TABLE instances ENABLE TRIGGER USER") != 0)
		return -1;
	/* The tallies are the jobs', counted (store/counts.h). */
	if (pg_exec(c, PG_TALLIES_FILL) != 0)
		return -1;
	for (t = schema_tables; *t; t++) {
		if (verify(c, *t) != 0)
			return -1;
	}
	if (pg_exec(c, "COMMIT") != 0)
		return -1;
	for (t = schema_tables; *t; t++)
		fprintf(out, "%-16s %10lld rows, counts and sums the same on both sides\n", (*t)->name,
			(long long)rows[t - schema_tables]);
	return 0;
}

/* serve holds DATA_DIR/ebb.lock while it runs (serve/server.c): taken
 * here too, the source cannot change under the copy. */
static int lock_source(const char *dir, char *err, size_t errsize)
{
	char path[4200];
	int fd;

	snprintf(path, sizeof path, "%s/ebb.lock", dir);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0640);
	if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) != 0) {
		snprintf(err, errsize, "%s: %s", dir, fd < 0 ? strerror(errno) : "in use by a running ebb serve: stop it first");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

int store_copy(const struct config *from, const struct config *to, const char *to_url, FILE *out, char *err,
	       size_t errsize)
{
	struct copy c = {.err = err, .errsize = errsize};
	struct store *a = NULL, *b = NULL;
	char path[4200];
	int lock, rc = -1;

	snprintf(path, sizeof path, "%s/ebb.db", from->data_dir);
	if (access(path, R_OK) != 0) {
		snprintf(err, errsize, "%s: no SQLite store there: %s", path, strerror(errno));
		return -1;
	}
	if ((lock = lock_source(from->data_dir, err, errsize)) < 0)
		return -1;
	/* Each opened by its engine: both schemas at this version, and the
	 * target's lock held until the end. */
	if (!(a = store_open(from, err, errsize)) || !(b = store_open(to, err, errsize)))
		goto done;
	store_close(a);
	a = NULL;
	if (sqlite3_open_v2(path, &c.src, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		sqlite_fail(&c, path);
		goto done;
	}
	c.dst = PQconnectdb(to_url);
	if (PQstatus(c.dst) != CONNECTION_OK) {
		pg_fail(&c, "connect", NULL);
		goto done;
	}
	rc = copy_all(&c, out);
done:
	if (c.dst) /* else libpq may not even be loaded */
		PQfinish(c.dst);
	sqlite3_close(c.src);
	store_close(a);
	store_close(b);
	close(lock);
	return rc;
}
