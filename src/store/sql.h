/* The statements of the SQL engines (store/sqlite.c, store/postgres.c):
 * the ids of every one either runs, and the texts of those both write
 * alike, written here once. Each engine writes the others in its own
 * dialect, in its stmt_sql[]; an id an engine has no text for is the
 * other's alone. In a text, ?N is parameter N, written as the engine
 * marks them ($N for PostgreSQL), and {TABLE}, {TABLE:fields},
 * {TABLE:marks} and {TABLE:sets} are a table's columns (store/schema.c):
 * those a SELECT reads (of its struct), those an insert writes (all but
 * the id), their parameters ?1 on, and an update's "name = ?2, ..." (?1:
 * the id). Private to the store. */
#ifndef EBB_STORE_SQL_H
#define EBB_STORE_SQL_H

#include <stddef.h>

enum stmt_id {
	/* written alike, here */
	S_UPDATE, S_GET, S_GET_BY_KEY, S_DUE, S_COUNT_ROWS, S_QUEUED_OLDEST, S_RECENT_SUBMITS, S_ARRIVALS, S_JOB_COST,
	S_INST_UPDATE, S_INST_GET, S_INST_BY_TOKEN, S_DATA_SET, S_DATA_GET, S_INST_LIVE, S_INST_PAGE,
	S_DEC_INSERT, S_DEC_LIST, S_SEG_OPEN, S_SEG_FIND, S_SEG_CLOSE, S_SEG_LAST, S_SUM_ADD, S_ALERT_PUT, S_ALERT_DELETE,
	S_BUDGET_SET, S_LOG_META, S_LOG_META_PUT, S_LOG_METAS_OLDEST, S_LOG_META_DELETE, S_LOG_TOTAL, S_LOG_INSERT,
	S_LOG_LINES, S_LOG_LAST, S_LOG_DELETE, S_ATTEMPT_PUT, S_ATTEMPTS, S_TUNING_SET,
	/* in each engine's dialect */
	S_INSERT, S_NEXT_READY, S_LIST, S_LEASED_ON, S_NEXT_DEADLINE, S_RECENT_DURATIONS, S_USAGE,
	S_DEAD, S_INST_INSERT, S_STAT_ADD, S_STATS, S_LEDGER, S_LEDGER_OPEN, S_SUMS, S_ALERTS, S_BUDGETS,
	S_TUNINGS,
	/* SQLite's alone: a batch's frame (PostgreSQL's is sent deferred), a class's head */
	S_BEGIN, S_COMMIT, S_ROLLBACK, S_SAVEPOINT, S_RELEASE, S_ROLLBACK_TO, S_CLASS_HEAD,
	/* PostgreSQL's alone: reads that lock, and what several serves share */
	S_GET_LOCKED, S_INST_GET_LOCKED, S_DUE_LOCKED, S_NEXT_READY_AFTER, S_TALLIES, S_TALLY_ADD, S_TALLY_LOCK, S_NOW, S_LEADER,
	S_COUNT
};

/* A tally's run time (job_run_ms()) summed over the jobs of a group. */
#define RUN_MS_SUM                                                                                         \
	"SUM(CASE WHEN state IN ('succeeded', 'failed', 'dead') AND started_at > 0"                          \
	" THEN finished_at - started_at ELSE 0 END)"

/* The jobs' tallies counted into PostgreSQL's table (shard 0), where they
 * are made from the jobs: its migration, and `ebb store copy`. */
#define PG_TALLIES_FILL                                                                                    \
	"INSERT INTO job_tallies SELECT 0, state, lane, type, team, gpus, min_vram_gb, priority, COUNT(*),"  \
	" SUM(items), SUM(CASE WHEN est_s = 0 THEN 1 ELSE 0 END), SUM(est_s), " RUN_MS_SUM " FROM jobs"    \
	" GROUP BY 2, 3, 4, 5, 6, 7, 8"

/* An engine's texts of every statement, into out: its own (own[id]) or,
 * where it has none, the one written here, with the columns in and each
 * parameter marked with mark; NULL where neither has one. 0, or -1 with
 * the reason in err (a table or a part unknown, no memory); out's texts,
 * made or not, are the caller's to free. */
int sql_texts(const char *const own[S_COUNT], char mark, char *out[S_COUNT], char *err, size_t errsize);

#endif
