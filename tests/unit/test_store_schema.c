/* The store's tables as store/schema.c describes them against what each
 * engine's migrations made of them: every table, every column in its
 * order, its SQL type and whether it may be NULL, read from the
 * database's own catalog (SQLite's table_info, PostgreSQL's
 * information_schema). A column added to schema.c without a migration,
 * or by a migration without schema.c, fails here, in either engine
 * (EBB_TEST_STORE, as the contract suite). */
#include <libpq-fe.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "store/schema.h"

/* A line per column, "TABLE COLUMN TYPE" and " NULL" if it may be, the
 * tables by name: as the catalog lists them. */
#define CATALOG_SQLITE                                                                                  \
	"SELECT m.name, p.name, p.type, p.\"notnull\" = 0 AND p.pk = 0 FROM sqlite_master m,"            \
	" pragma_table_info(m.name) p WHERE m.type = 'table' AND m.name <> 'schema_version'"           \
	" ORDER BY m.name, p.cid"
#define CATALOG_POSTGRES                                                                                \
	"SELECT table_name, column_name, data_type, is_nullable = 'YES' FROM information_schema.columns" \
	" WHERE table_schema = current_schema() AND table_name <> 'schema_version'"                     \
	" ORDER BY table_name, ordinal_position"

static void line(FILE *out, const char *table, const char *column, const char *type, int null)
{
	fprintf(out, "%s %s %s%s\n", table, column, type, null ? " NULL" : "");
}

static char *catalog_sqlite(const char *dir)
{
	char *text = NULL;
	size_t size;
	FILE *out = open_memstream(&text, &size);
	sqlite3 *db;
	sqlite3_stmt *st;

	assert_int(sqlite3_open_v2(harness_fmt("%s/ebb.db", dir), &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	if (sqlite3_prepare_v2(db, CATALOG_SQLITE, -1, &st, NULL) != SQLITE_OK)
		fail_msg("%s: %s", CATALOG_SQLITE, sqlite3_errmsg(db));
	while (sqlite3_step(st) == SQLITE_ROW)
		line(out, (const char *)sqlite3_column_text(st, 0), (const char *)sqlite3_column_text(st, 1),
		     (const char *)sqlite3_column_text(st, 2), sqlite3_column_int(st, 3));
	sqlite3_finalize(st);
	sqlite3_close(db);
	fclose(out);
	return text;
}

static char *catalog_postgres(const char *dir)
{
	char *text = NULL;
	size_t size;
	FILE *out = open_memstream(&text, &size);
	PGconn *c = PQconnectdb(harness_store_url(dir));
	PGresult *r;

	if (PQstatus(c) != CONNECTION_OK)
		fail_msg("connect: %s", PQerrorMessage(c));
	r = PQexec(c, CATALOG_POSTGRES);
	if (PQresultStatus(r) != PGRES_TUPLES_OK)
		fail_msg("%s: %s", CATALOG_POSTGRES, PQresultErrorMessage(r));
	for (int i = 0; i < PQntuples(r); i++)
		line(out, PQgetvalue(r, i, 0), PQgetvalue(r, i, 1), PQgetvalue(r, i, 2),
		     strcmp(PQgetvalue(r, i, 3), "t") == 0);
	PQclear(r);
	PQfinish(c);
	fclose(out);
	return text;
}

static char *catalog(const char *dir)
{
	return strcmp(harness_store_kind(), "postgres") == 0 ? catalog_postgres(dir) : catalog_sqlite(dir);
}

static int by_name(const void *a, const void *b)
{
	return strcmp((*(const struct schema_table *const *)a)->name, (*(const struct schema_table *const *)b)->name);
}

/* The same lines, from schema.c: PostgreSQL's with its tallies. */
static char *described(void)
{
	const struct schema_table *tables[SCHEMA_NTABLES + 1];
	char *text = NULL;
	size_t size, n = 0;
	FILE *out = open_memstream(&text, &size);

	for (; schema_tables[n]; n++)
		tables[n] = schema_tables[n];
	if (strcmp(harness_store_kind(), "postgres") == 0)
		tables[n++] = &schema_job_tallies;
	qsort(tables, n, sizeof *tables, by_name);
	for (size_t t = 0; t < n; t++) {
		for (int i = 0; i < tables[t]->ncols; i++) {
			const struct schema_column *c = &tables[t]->cols[i];
			line(out, tables[t]->name, c->name, schema_sql_type(c, harness_store_kind()),
			     (c->flags & SCHEMA_NULL) != 0);
		}
	}
	fclose(out);
	return text;
}

/* Fails at the first line where the catalog and schema.c differ. */
static void assert_same_lines(const char *got, const char *want)
{
	while (*got || *want) {
		size_t g = strcspn(got, "\n"), w = strcspn(want, "\n");
		if (g != w || memcmp(got, want, g) != 0)
			fail_msg("the database has \"%.*s\" where store/schema.c has \"%.*s\"", (int)g, got, (int)w,
				 want);
		got += g + (got[g] != '\0');
		want += w + (want[w] != '\0');
	}
}

/* What the migrations made is what schema.c says, line for line. */
static void migrated_schema_is_the_described_one(void **state)
{
	struct harness_store *h = *state;
	char *want = described(), *got = catalog(h->dir);

	assert_contains(want, "jobs instance_id ");
	assert_same_lines(got, want);
	free(want);
	free(got);
}

/* A column that a migration adds and schema.c lacks shows, in its place. */
static void a_column_schema_lacks_shows(void **state)
{
	struct harness_store *h = *state;
	const char *sql = "ALTER TABLE alerts ADD COLUMN extra TEXT";
	char *want = described(), *got;

	if (strcmp(harness_store_kind(), "postgres") == 0) {
		PGconn *c = PQconnectdb(harness_store_url(h->dir));
		PGresult *r = PQexec(c, sql);
		assert_int(PQresultStatus(r), PGRES_COMMAND_OK);
		PQclear(r);
		PQfinish(c);
	} else {
		sqlite3 *db;
		assert_int(sqlite3_open(harness_fmt("%s/ebb.db", h->dir), &db), SQLITE_OK);
		assert_int(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
		sqlite3_close(db);
	}
	got = catalog(h->dir);
	assert_contains(got, "alerts extra ");
	assert_false(strcmp(got, want) == 0);
	free(want);
	free(got);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, harness_store_setup, harness_store_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(migrated_schema_is_the_described_one),
		T(a_column_schema_lacks_shows),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
