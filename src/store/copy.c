/* See copy.h. Both stores are opened through the front end first, which
 * migrates each to this version's schema and, for PostgreSQL, takes the
 * database's lock, so that no serve runs on the target meanwhile; the
 * rows then go table by table, column by column by name, from a
 * read-only SQLite connection to a libpq one of their own, in one
 * transaction. */
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

#include "store/pq_lazy.h"
#include "store/store.h"

/* Every table of the schema but its version, parents first, and what is
 * compared on both sides after the copy: the count and sums of the
 * columns that matter most (ids, money, time). */
static const struct table {
	const char *name;
	int has_id; /* an identity column, given its values */
	const char *check;
} tables[] = {
	{"jobs", 1, "COUNT(*), COALESCE(SUM(id), 0), COALESCE(SUM(attempts), 0), COALESCE(SUM(items_done), 0),"
		    " COALESCE(SUM(cost), 0)"},
	{"instances", 1, "COUNT(*), COALESCE(SUM(id), 0), COALESCE(SUM(billed_ms), 0), COALESCE(SUM(cost), 0)"},
	{"instance_events", 0, "COUNT(*), COALESCE(SUM(instance_id), 0), COALESCE(SUM(at), 0)"},
	{"decisions", 1, "COUNT(*), COALESCE(SUM(id), 0), COALESCE(SUM(count), 0)"},
	{"segments", 1, "COUNT(*), COALESCE(SUM(id), 0), COALESCE(SUM(end_at - start_at), 0), COALESCE(SUM(cost), 0)"},
	{"offer_stats", 0, "COUNT(*), COALESCE(SUM(runs), 0), COALESCE(SUM(launches), 0), COALESCE(SUM(alive_ms), 0)"},
	{"ledger_sums", 0, "COUNT(*), COALESCE(SUM(ms), 0), COALESCE(SUM(cost), 0), COALESCE(SUM(items), 0)"},
	{"alerts", 0, "COUNT(*)"},
	{"team_budgets", 0, "COUNT(*), COALESCE(SUM(budget), 0)"},
};

#define NTABLES (sizeof tables / sizeof *tables)
#define MAX_COLS 64
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

static int pg_exec(struct copy *c, const char *sql)
{
	PGresult *r = PQexec(c->dst, sql);
	int ok = PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK;

	if (!ok)
		pg_fail(c, sql, r);
	PQclear(r);
	return ok ? 0 : -1;
}

/* The target's table must be empty: the copy keeps the ids. */
static int check_empty(struct copy *c, const struct table *t)
{
	char sql[128];
	PGresult *r;
	int empty;

	snprintf(sql, sizeof sql, "SELECT NOT EXISTS (SELECT 1 FROM %s)", t->name);
	r = PQexec(c->dst, sql);
	if (PQresultStatus(r) != PGRES_TUPLES_OK) {
		pg_fail(c, sql, r);
		PQclear(r);
		return -1;
	}
	empty = strcmp(PQgetvalue(r, 0, 0), "t") == 0;
	PQclear(r);
	if (!empty)
		snprintf(c->err, c->errsize, "the target's table %s is not empty: copy into an empty database", t->name);
	return empty ? 0 : -1;
}

/* The rows of one table, each an INSERT of its columns by name. A real
 * goes as %.17g, which gives it back whole (SQLite's own text has 15
 * digits). */
static int copy_rows(struct copy *c, const struct table *t, int64_t *rows)
{
	char sql[4096], cols[2048] = "", marks[512] = "", num[MAX_COLS][32];
	const char *values[MAX_COLS];
	sqlite3_stmt *st;
	int n = 0, rc;

	snprintf(sql, sizeof sql, "SELECT * FROM %s", t->name);
	if (sqlite3_prepare_v2(c->src, sql, -1, &st, NULL) != SQLITE_OK)
		return sqlite_fail(c, sql);
	n = sqlite3_column_count(st);
	if (n > MAX_COLS) {
		sqlite3_finalize(st);
		snprintf(c->err, c->errsize, "%s: %d columns, more than %d", t->name, n, MAX_COLS);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		size_t lc = strlen(cols), lm = strlen(marks);
		snprintf(cols + lc, sizeof cols - lc, "%s%s", i ? ", " : "", sqlite3_column_name(st, i));
		snprintf(marks + lm, sizeof marks - lm, "%s$%d", i ? ", " : "", i + 1);
	}
	snprintf(sql, sizeof sql, "INSERT INTO %s (%s) %sVALUES (%s)", t->name, cols,
		 t->has_id ? "OVERRIDING SYSTEM VALUE " : "", marks);
	*rows = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		PGresult *r;
		for (int i = 0; i < n; i++) {
			int type = sqlite3_column_type(st, i);
			if (type == SQLITE_NULL) {
				values[i] = NULL;
			} else if (type == SQLITE_FLOAT) {
				snprintf(num[i], sizeof num[i], "%.17g", sqlite3_column_double(st, i));
				values[i] = num[i];
			} else {
				values[i] = (const char *)sqlite3_column_text(st, i);
			}
		}
		r = PQexecParams(c->dst, sql, n, NULL, values, NULL, NULL, 0);
		if (PQresultStatus(r) != PGRES_COMMAND_OK) {
			pg_fail(c, t->name, r);
			PQclear(r);
			sqlite3_finalize(st);
			return -1;
		}
		PQclear(r);
		(*rows)++;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : sqlite_fail(c, t->name);
}

/* The table's check on both sides: equal counts and sums (a sum of reals
 * within a relative 1e-9: the two engines add in different orders). */
static int verify(struct copy *c, const struct table *t)
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
	n = sqlite3_column_count(st);
	for (int i = 0; i < n && i < MAX_CHECKS; i++)
		want[i] = sqlite3_column_double(st, i);
	sqlite3_finalize(st);
	r = PQexec(c->dst, sql);
	if (PQresultStatus(r) != PGRES_TUPLES_OK || PQnfields(r) != n) {
		pg_fail(c, sql, r);
		PQclear(r);
		return -1;
	}
	for (int i = 0; i < n && i < MAX_CHECKS; i++)
		got[i] = strtod(PQgetvalue(r, 0, i), NULL);
	for (int i = 0; i < n && i < MAX_CHECKS; i++) {
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
static int follow_ids(struct copy *c, const struct table *t)
{
	char sql[256];

	snprintf(sql, sizeof sql,
		 "SELECT setval(pg_get_serial_sequence('%s', 'id'), COALESCE(MAX(id), 0) + 1, false) FROM %s",
		 t->name, t->name);
	return pg_exec(c, sql);
}

static int copy_all(struct copy *c, FILE *out)
{
	int64_t rows[NTABLES];

	if (pg_exec(c, "BEGIN") != 0)
		return -1;
	/* The copied instance_events are the history: the triggers that
	 * write it must not add to it. */
	if (pg_exec(c, "ALTER TABLE instances DISABLE TRIGGER USER") != 0)
		return -1;
	for (size_t i = 0; i < NTABLES; i++) {
		if (check_empty(c, &tables[i]) != 0 || copy_rows(c, &tables[i], &rows[i]) != 0 ||
		    (tables[i].has_id && follow_ids(c, &tables[i]) != 0))
			return -1;
	}
	if (pg_exec(c, "ALTER TABLE instances ENABLE TRIGGER USER") != 0)
		return -1;
	for (size_t i = 0; i < NTABLES; i++) {
		if (verify(c, &tables[i]) != 0)
			return -1;
	}
	if (pg_exec(c, "COMMIT") != 0)
		return -1;
	for (size_t i = 0; i < NTABLES; i++)
		fprintf(out, "%-16s %10lld rows, counts and sums the same on both sides\n", tables[i].name,
			(long long)rows[i]);
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
