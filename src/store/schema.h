/* The store's tables described once, column by column, for both SQL
 * engines (store/sqlite.c, store/postgres.c) and `ebb store copy`: each
 * column's name, what it holds in C (which gives its SQL type in each
 * engine), where it sits in its struct, and whether it may be NULL or is
 * ever updated. From it come the statements' column lists, every bind of
 * a row and every read of one (store/rows.h), and copy's list of tables.
 * The rows of the queries that are no table (aggregates, a join) are
 * described alike, for their reads.
 *
 * The migrations stay each engine's own history of DDL; the tables here
 * are what they end in, in the database's column order, which
 * tests/unit/test_store_schema.c holds each engine to. A column is one
 * line in its table here and a migration in each engine. Private to the
 * store, as store/engine.h. */
#ifndef EBB_STORE_SCHEMA_H
#define EBB_STORE_SCHEMA_H

#include <stddef.h>

#include "store/engine.h"

/* What a column holds in C. */
enum schema_kind {
	SCHEMA_INT64,      /* int64_t: INTEGER, bigint */
	SCHEMA_INT,        /* int: INTEGER, integer */
	SCHEMA_REAL,       /* double: REAL, double precision */
	SCHEMA_TEXT,       /* char *, the row's own copy (freed by rows_emit): TEXT, text */
	SCHEMA_BORROWED,   /* const char *, the engine's, valid until the row's callback returns */
	SCHEMA_CHARS,      /* char[N], cut to N - 1 bytes */
	SCHEMA_JOB_STATE,  /* the enums, kept by name (job_state_name...) */
	SCHEMA_INST_STATE,
	SCHEMA_MARKET,
};

/* A column's flags. */
#define SCHEMA_NULL 1u  /* may be NULL; else NOT NULL */
#define SCHEMA_ID 2u    /* the id the engine assigns at insert */
#define SCHEMA_FIXED 4u /* written at insert, never by an update */
#define SCHEMA_APART 8u /* no member of the row's struct: read and written by statements of its own */

struct schema_column {
	const char *name;
	enum schema_kind kind;
	unsigned flags;
	size_t offset, size; /* of its member */
};

/* One of store.h's callbacks, as a walk hands each row on: a row's emit
 * calls the member of its own type. */
union schema_cb {
	job_cb job;
	instance_cb instance;
	decision_cb decision;
	offer_stat_cb offer_stat;
	ledger_cb ledger;
	ledger_sum_cb ledger_sum;
	dead_letters_cb dead_letters;
	alert_cb alert;
	team_budget_cb team_budget;
	log_line_cb log_line;
	log_meta_cb log_meta;
	attempt_cb attempt;
	tuning_cb tuning;
	arrival_cb arrival;
	duration_cb duration;
	time_cb time;
	count_cb count_row;
};

/* A table, or the row of a query. */
struct schema_table {
	const char *name;
	const struct schema_column *cols;
	int ncols;
	size_t size; /* of the struct a row is read into; 0: none */
	/* Hands a row read on to its callback (NULL: never walked). */
	int (*emit)(union schema_cb cb, void *arg, void *row);
	/* What `ebb store copy` compares on both sides once it has copied
	 * the table: its count and the sums that matter most (ids, money,
	 * time). NULL for a query's row. */
	const char *check;
};

/* The largest struct a row is read into: a walk's buffer. */
#define SCHEMA_ROW_MAX 2048

extern const struct schema_table schema_jobs, schema_attempts, schema_instances, schema_instance_events,
	schema_decisions, schema_segments, schema_offer_stats, schema_ledger_sums, schema_alerts, schema_team_budgets,
	schema_job_logs, schema_job_log_meta, schema_tunings;
/* A table PostgreSQL alone keeps: the jobs' tallies, derived data its
 * writers keep up (store/counts.h), not copied but made again. */
extern const struct schema_table schema_job_tallies;
/* Every table but the schema's version and the tallies, parents first;
 * NULL-terminated. */
#define SCHEMA_NTABLES 13
extern const struct schema_table *const schema_tables[SCHEMA_NTABLES + 1];

/* The rows of the queries that are no table, in their SELECT's order:
 * the arrivals (struct arrival_row),
 * the dead letters (struct dead_letters), the ledger's join of a segment,
 * its instance and its job (struct ledger_row), the jobs' tallies (struct
 * job_count), the run times (type, ms:
 * duration_cb) and the submit times (ms: time_cb); and those read into
 * an array or one struct: integers (int64_t), the jobs on an instance
 * (struct job_on), an open segment (struct segment_found). */
extern const struct schema_table schema_arrivals, schema_dead_letters, schema_ledger,
	schema_job_counts, schema_durations, schema_submits, schema_int64s, schema_jobs_on, schema_segment_found;

/* The table's SQL type of a column, in engine "sqlite" or "postgres" (as
 * their catalogs spell it); NULL for another. */
const char *schema_sql_type(const struct schema_column *c, const char *engine);

/* The table named, or NULL. */
const struct schema_table *schema_table(const char *name);

#endif
