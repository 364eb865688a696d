/* The SQLite store engine: one file, DATA_DIR/ebb.db, in WAL mode with
 * synchronous = FULL, so a commit is on disk when it returns. Statements
 * are prepared once. The contract it keeps is store/engine.h. */
#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/config.h"
#include "common/mem.h"
#include "store/engine.h"
#include "store/rows.h"
#include "store/sql.h"
#include "store/sqlite_wal.h"

/* Each entry takes the schema one version further; never edit a shipped
 * one, append a new one. */
static const char *const migrations[] = {
	/* 1: jobs and their counts */
	"CREATE TABLE jobs ("
	" id INTEGER PRIMARY KEY,"
	" state TEXT NOT NULL, type TEXT NOT NULL, lane TEXT NOT NULL,"
	" lane_rank INTEGER NOT NULL, priority INTEGER NOT NULL, team TEXT NOT NULL,"
	" command TEXT, payload TEXT, labels TEXT,"
	" gpus INTEGER NOT NULL, min_vram_gb INTEGER NOT NULL, items INTEGER NOT NULL,"
	" timeout_s INTEGER NOT NULL, max_attempts INTEGER NOT NULL, attempts INTEGER NOT NULL,"
	" run_at INTEGER NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,"
	" finished_at INTEGER NOT NULL, idem_key TEXT, idem_hash INTEGER NOT NULL,"
	" lease_token INTEGER NOT NULL, worker TEXT NOT NULL, lease_expires INTEGER NOT NULL,"
	" lease_ms INTEGER NOT NULL, checkpoint TEXT, items_done INTEGER NOT NULL,"
	" error TEXT, result TEXT, seq INTEGER NOT NULL);"
	"CREATE INDEX jobs_ready ON jobs(lane_rank, priority DESC, seq) WHERE state = 'queued';"
	"CREATE INDEX jobs_delayed ON jobs(run_at) WHERE state = 'delayed';"
	"CREATE INDEX jobs_leased ON jobs(lease_expires) WHERE state = 'leased';"
	"CREATE UNIQUE INDEX jobs_idem ON jobs(team, idem_key) WHERE idem_key IS NOT NULL;"
	"CREATE TABLE job_counts (state TEXT, lane TEXT, type TEXT, team TEXT, n INTEGER NOT NULL,"
	" PRIMARY KEY (state, lane, type, team)) WITHOUT ROWID;"
	"CREATE TRIGGER jobs_count_insert AFTER INSERT ON jobs BEGIN"
	" INSERT INTO job_counts VALUES (NEW.state, NEW.lane, NEW.type, NEW.team, 1)"
	"  ON CONFLICT DO UPDATE SET n = n + 1; END;"
	"CREATE TRIGGER jobs_count_update AFTER UPDATE OF state ON jobs"
	" WHEN OLD.state IS NOT NEW.state BEGIN"
	" UPDATE job_counts SET n = n - 1 WHERE state = OLD.state AND lane = OLD.lane"
	"  AND type = OLD.type AND team = OLD.team;"
	" INSERT INTO job_counts VALUES (NEW.state, NEW.lane, NEW.type, NEW.team, 1)"
	"  ON CONFLICT DO UPDATE SET n = n + 1; END;"
	"CREATE TRIGGER jobs_count_delete AFTER DELETE ON jobs BEGIN"
	" UPDATE job_counts SET n = n - 1 WHERE state = OLD.state AND lane = OLD.lane"
	"  AND type = OLD.type AND team = OLD.team; END;",
	/* 2: the fleet, its history and the scaler's decisions */
	"ALTER TABLE jobs ADD COLUMN est_s INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE jobs ADD COLUMN started_at INTEGER NOT NULL DEFAULT 0;"
	"CREATE INDEX jobs_finished ON jobs(finished_at) WHERE state = 'succeeded';"
	"CREATE TABLE instances ("
	" id INTEGER PRIMARY KEY, offer TEXT NOT NULL, market TEXT NOT NULL, state TEXT NOT NULL,"
	" gpus INTEGER NOT NULL, vram_gb INTEGER NOT NULL, gpu_ids TEXT NOT NULL,"
	" provider_ref TEXT NOT NULL, launched_at INTEGER NOT NULL, registered_at INTEGER NOT NULL,"
	" idle_since INTEGER NOT NULL, terminated_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,"
	" job_id INTEGER NOT NULL, reason TEXT NOT NULL);"
	"CREATE INDEX instances_live ON instances(id) WHERE state <> 'terminated';"
	"CREATE TABLE instance_events (instance_id INTEGER NOT NULL, at INTEGER NOT NULL,"
	" state TEXT NOT NULL, reason TEXT NOT NULL);"
	"CREATE TRIGGER instances_history_insert AFTER INSERT ON instances BEGIN"
	" INSERT INTO instance_events VALUES (NEW.id, NEW.updated_at, NEW.state, NEW.reason); END;"
	"CREATE TRIGGER instances_history_update AFTER UPDATE OF state ON instances"
	" WHEN OLD.state IS NOT NEW.state BEGIN"
	" INSERT INTO instance_events VALUES (NEW.id, NEW.updated_at, NEW.state, NEW.reason); END;"
	"CREATE TABLE decisions (id INTEGER PRIMARY KEY, at INTEGER NOT NULL, kind TEXT NOT NULL,"
	" offer TEXT NOT NULL, count INTEGER NOT NULL, instance_id INTEGER NOT NULL, reason TEXT NOT NULL);",
	/* 3: the ledger, live offer estimates, interruptions */
	"ALTER TABLE jobs ADD COLUMN cost REAL NOT NULL DEFAULT 0;"
	"ALTER TABLE jobs ADD COLUMN items_start INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE jobs ADD COLUMN items_lost INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE jobs ADD COLUMN interruptions INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE instances ADD COLUMN billed_ms INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE instances ADD COLUMN cost REAL NOT NULL DEFAULT 0;"
	"ALTER TABLE instances ADD COLUMN reclaim_at INTEGER NOT NULL DEFAULT 0;"
	"CREATE TABLE segments (id INTEGER PRIMARY KEY, instance_id INTEGER NOT NULL, kind TEXT NOT NULL,"
	" job_id INTEGER NOT NULL, start_at INTEGER NOT NULL, end_at INTEGER NOT NULL, cost REAL NOT NULL);"
	"CREATE INDEX segments_open ON segments(instance_id) WHERE end_at = 0;"
	"CREATE INDEX segments_instance ON segments(instance_id);"
	"CREATE TABLE offer_stats (offer TEXT NOT NULL, market TEXT NOT NULL,"
	" runs INTEGER NOT NULL, speed_sum REAL NOT NULL, speed_n INTEGER NOT NULL, items INTEGER NOT NULL,"
	" run_ms INTEGER NOT NULL, boots INTEGER NOT NULL, boot_ms INTEGER NOT NULL,"
	" alive_ms INTEGER NOT NULL, reclaims INTEGER NOT NULL, launches INTEGER NOT NULL,"
	" launch_failures INTEGER NOT NULL, last_failure_at INTEGER NOT NULL,"
	" last_launch_at INTEGER NOT NULL, PRIMARY KEY (offer, market)) WITHOUT ROWID;",
	/* 4: job counts move to memory (counts.c): the triggers cost two
	 * statements per state change */
	"DROP TRIGGER jobs_count_insert; DROP TRIGGER jobs_count_update; DROP TRIGGER jobs_count_delete;"
	"DROP TABLE job_counts;",
	/* 5: a lease names the instance it runs on */
	"ALTER TABLE jobs ADD COLUMN instance_id INTEGER NOT NULL DEFAULT 0;",
	/* 6: each instance's own worker token, and what its provider wants
	 * back; launch failures for want of capacity apart from a broken
	 * setup's */
	"ALTER TABLE instances ADD COLUMN token TEXT NOT NULL DEFAULT '';"
	"ALTER TABLE instances ADD COLUMN provider_data TEXT NOT NULL DEFAULT '';"
	"CREATE INDEX instances_token ON instances(token) WHERE token <> '';"
	"ALTER TABLE offer_stats ADD COLUMN capacity_failures INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE offer_stats ADD COLUMN last_capacity_at INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE offer_stats ADD COLUMN broken_streak INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE offer_stats ADD COLUMN last_broken_at INTEGER NOT NULL DEFAULT 0;",
	/* 7: the ledger's running sums per day (UTC) and of all time (day
	 * -1), so that a scrape reads a few rows instead of every segment;
	 * filled from the segments there are: each closed one split over the
	 * days it covers, the items of each succeeded job on its last
	 * instance at its end */
	"CREATE TABLE ledger_sums (day INTEGER NOT NULL, offer TEXT NOT NULL, market TEXT NOT NULL,"
	" kind TEXT NOT NULL, team TEXT NOT NULL, ms INTEGER NOT NULL, gpu_ms REAL NOT NULL, cost REAL NOT NULL,"
	" items INTEGER NOT NULL, PRIMARY KEY (day, offer, market, kind, team)) WITHOUT ROWID;"
	"WITH RECURSIVE parts(id, day, last) AS ("
	"  SELECT id, start_at / 86400000, (end_at - 1) / 86400000 FROM segments WHERE end_at > start_at"
	"  UNION ALL SELECT id, day + 1, last FROM parts WHERE day < last),"
	" cut AS (SELECT p.day, s.instance_id, s.kind, s.job_id, s.cost, s.end_at - s.start_at AS len,"
	"  MIN(s.end_at, (p.day + 1) * 86400000) - MAX(s.start_at, p.day * 86400000) AS part"
	"  FROM parts p JOIN segments s ON s.id = p.id)"
	" INSERT INTO ledger_sums SELECT c.day, i.offer, i.market, c.kind,"
	"  CASE WHEN c.kind = 'job' THEN COALESCE(j.team, '') ELSE '' END,"
	"  SUM(c.part), SUM(c.part * MAX(i.gpus, 1)), SUM(c.cost * c.part / c.len), 0"
	"  FROM cut c JOIN instances i ON i.id = c.instance_id LEFT JOIN jobs j ON j.id = c.job_id"
	"  GROUP BY 1, 2, 3, 4, 5;"
	"INSERT INTO ledger_sums SELECT j.finished_at / 86400000, i.offer, i.market, 'job', j.team, 0, 0, 0,"
	" SUM(j.items_done - j.items_start) FROM jobs j JOIN instances i ON i.id = j.instance_id"
	" WHERE j.state = 'succeeded' AND j.started_at > 0 GROUP BY 1, 2, 3, 5"
	" ON CONFLICT DO UPDATE SET items = items + excluded.items;"
	"INSERT INTO ledger_sums SELECT -1, offer, market, kind, team, SUM(ms), SUM(gpu_ms), SUM(cost), SUM(items)"
	" FROM ledger_sums GROUP BY 2, 3, 4, 5;",
	/* 8: what serve's alerts read and keep: when an offer's launches
	 * began to fail (from the last failure, for one failing now), workers
	 * lost, the dead-lettered jobs by the time they died, and the alerts
	 * pending or firing */
	"ALTER TABLE offer_stats ADD COLUMN failing_since INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE offer_stats ADD COLUMN lost INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE offer_stats ADD COLUMN last_lost_at INTEGER NOT NULL DEFAULT 0;"
	"UPDATE offer_stats SET failing_since = last_failure_at WHERE last_failure_at >= last_launch_at"
	" AND last_failure_at > 0;"
	"CREATE INDEX jobs_dead ON jobs(finished_at) WHERE state = 'dead';"
	"CREATE TABLE alerts (key TEXT PRIMARY KEY, name TEXT NOT NULL, labels TEXT NOT NULL, firing INTEGER NOT NULL,"
	" since INTEGER NOT NULL, fired_at INTEGER NOT NULL, value REAL NOT NULL, summary TEXT NOT NULL) WITHOUT ROWID;",
	/* 9: several jobs per instance, each segment the GPUs it holds (0:
	 * all of them, as every segment before) */
	"ALTER TABLE segments ADD COLUMN gpus INTEGER NOT NULL DEFAULT 0;",
	/* 10: the monthly budgets an admin set at run time, over the config's;
	 * the team whose work an instance was launched for */
	"CREATE TABLE team_budgets (team TEXT PRIMARY KEY, budget REAL NOT NULL, set_at INTEGER NOT NULL)"
	" WITHOUT ROWID;"
	"ALTER TABLE instances ADD COLUMN team TEXT NOT NULL DEFAULT '';",
	/* 11: what the jobs wrote, per attempt (serve/joblog.c): the lines,
	 * and what is known of each attempt's log beside them */
	"CREATE TABLE job_logs (job_id INTEGER NOT NULL, attempt INTEGER NOT NULL, seq INTEGER NOT NULL,"
	" at INTEGER NOT NULL, stream TEXT NOT NULL, text TEXT NOT NULL, PRIMARY KEY (job_id, attempt, seq))"
	" WITHOUT ROWID;"
	"CREATE TABLE job_log_meta (job_id INTEGER NOT NULL, attempt INTEGER NOT NULL, next_seq INTEGER NOT NULL,"
	" dropped INTEGER NOT NULL, trimmed INTEGER NOT NULL, bytes INTEGER NOT NULL,"
	" head_end INTEGER NOT NULL, updated_at INTEGER NOT NULL,"
	" PRIMARY KEY (job_id, attempt)) WITHOUT ROWID;"
	"CREATE INDEX job_log_meta_updated ON job_log_meta(updated_at);",
	/* 12: every lease of a job and how its run ended */
	"CREATE TABLE job_attempts (job_id INTEGER NOT NULL, attempt INTEGER NOT NULL, instance_id INTEGER NOT NULL,"
	" offer TEXT NOT NULL, market TEXT NOT NULL, worker TEXT NOT NULL, started_at INTEGER NOT NULL,"
	" ended_at INTEGER NOT NULL, outcome TEXT NOT NULL, exit INTEGER NOT NULL, items_done INTEGER NOT NULL,"
	" checkpoint TEXT, reason TEXT, PRIMARY KEY (job_id, attempt)) WITHOUT ROWID;",
	/* 13: the last comparison `ebb tune --history --publish` sent, for
	 * the dashboard */
	"CREATE TABLE tunings (name TEXT PRIMARY KEY, body TEXT NOT NULL, published_at INTEGER NOT NULL) WITHOUT ROWID;",
	/* 14: the oldest queued job of a class, found by a seek, for the
	 * scaler's demand kept in tallies (store/counts.h); the jobs leased on
	 * an instance, by a seek too (the planner walked the whole table in
	 * id order for S_LEASED_ON's ORDER BY id, once per instance and
	 * decision) */
	"CREATE INDEX jobs_queued_class ON jobs(lane, type, team, gpus, min_vram_gb, priority, created_at)"
	" WHERE state = 'queued';"
	"CREATE INDEX jobs_leased_on ON jobs(instance_id) WHERE state = 'leased';",
	/* 15: each queued class in lease order, for the head of a class that
	 * fits a lease when the window of the lease order holds none
	 * (S_CLASS_HEAD); lane_rank within the lane, as a lane's rank may
	 * change with the configuration */
	"CREATE INDEX jobs_class_order ON jobs(lane, type, team, gpus, min_vram_gb, priority, lane_rank, seq)"
	" WHERE state = 'queued';",
	/* 16: GPUs shared by small services, a segment the part of a GPU it
	 * holds (0: its gpus, as every segment before) */
	"ALTER TABLE segments ADD COLUMN gpu_part REAL NOT NULL DEFAULT 0;",
};

#define NMIGRATIONS ((int)(sizeof migrations / sizeof *migrations))

/* A ledger row: the segment, its instance, and the job a run was of. */
#define LEDGER_SELECT                                                                             \
	"SELECT s.instance_id, s.kind, s.job_id, s.start_at, s.end_at, s.cost, i.offer, i.market," \
	" i.gpus, j.team, j.type, j.items_done, j.items_lost, i.reclaim_at > 0, s.gpus, i.team,"    \
	" s.gpu_part"                                                                               \
	" FROM segments s JOIN instances i ON i.id = s.instance_id"                                 \
	" LEFT JOIN jobs j ON j.id = s.job_id AND s.kind = 'job'"

/* A job's labels are all among the offer's (parameter p, a JSON array,
 * or NULL for none). */
#define LABELS_FIT(p)                                                                                  \
	"(labels IS NULL OR NOT EXISTS (SELECT 1 FROM json_each(jobs.labels) l"                          \
	"  WHERE l.value NOT IN (SELECT value FROM json_each(COALESCE(" p ", '[]')))))"

/* The statements in this engine's dialect; the others are store/sql.c's. */
static const char *const stmt_sql[S_COUNT] = {
	/* A batch's frame, prepared as the rest: one per request. */
	[S_BEGIN] = "BEGIN", [S_COMMIT] = "COMMIT", [S_ROLLBACK] = "ROLLBACK",
	[S_SAVEPOINT] = "SAVEPOINT request", [S_RELEASE] = "RELEASE request", [S_ROLLBACK_TO] = "ROLLBACK TO request",
	[S_INSERT] = "INSERT INTO jobs ({jobs:fields}) VALUES ({jobs:marks})",
	/* The window: the first LEASE_WINDOW ready jobs (?6) in lease order,
	 * read from the partial index jobs_ready; the filters are checked on
	 * those alone. */
	[S_NEXT_READY] = "SELECT {jobs} FROM (SELECT * FROM jobs WHERE state = 'queued'"
			 " ORDER BY lane_rank, priority DESC, seq, id LIMIT ?6) AS jobs"
			 " WHERE gpus <= ?1 AND min_vram_gb <= ?2"
			 " AND (?3 IS NULL OR type NOT IN (SELECT value FROM json_each(?3)))"
			 " AND " LABELS_FIT("?4")
			 " AND (?5 IS NULL OR NOT EXISTS (SELECT 1 FROM json_each(?5) r"
			 "  WHERE r.key = jobs.team AND r.value < MAX(jobs.gpus, 1)))"
			 " ORDER BY lane_rank, priority DESC, seq, id LIMIT 1",
	/* A class's first job in lease order whose labels the offer has: a
	 * seek into jobs_class_order, which keeps each class in that order. */
	[S_CLASS_HEAD] = "SELECT {jobs} FROM jobs WHERE state = 'queued' AND lane = ?1 AND type = ?2"
			 " AND team = ?3 AND gpus = ?4 AND min_vram_gb = ?5 AND priority = ?6"
			 " AND " LABELS_FIT("?7") " ORDER BY lane_rank, seq, id LIMIT 1",
	[S_LIST] = "SELECT {jobs} FROM jobs WHERE id > ?5"
		   " AND (?1 IS NULL OR state = ?1) AND (?2 IS NULL OR lane = ?2)"
		   " AND (?3 IS NULL OR team = ?3) AND (?4 IS NULL OR type = ?4)"
		   " AND (?7 = 0 OR finished_at >= ?7) AND (?8 = 0 OR finished_at < ?8)"
		   " ORDER BY id LIMIT ?6",
	[S_LEASED_ON] = "SELECT id, MAX(gpus, 1) FROM jobs WHERE state = 'leased' AND instance_id = ?1 ORDER BY id"
			" LIMIT ?2",
	[S_NEXT_DEADLINE] = "SELECT MIN(t) FROM ("
			    " SELECT MIN(run_at) AS t FROM jobs WHERE state = 'delayed'"
			    " UNION ALL SELECT MIN(lease_expires) FROM jobs WHERE state = 'leased')",
	[S_RECENT_DURATIONS] = "SELECT type, finished_at - started_at FROM jobs"
			       " WHERE state = 'succeeded' AND started_at > 0"
			       " ORDER BY finished_at DESC LIMIT ?",
	[S_INST_INSERT] = "INSERT INTO instances ({instances:fields}) VALUES ({instances:marks})",
	[S_USAGE] = "SELECT COALESCE(SUM(CASE WHEN terminated_at > 0 THEN terminated_at ELSE ?1 END"
		    " - launched_at), 0) FROM instances",
	/* ?1 to ?22: the columns; ?23: a launch worked. */
	[S_STAT_ADD] = "INSERT INTO offer_stats VALUES ({offer_stats:marks})"
		       " ON CONFLICT DO UPDATE SET runs = runs + ?3, speed_sum = speed_sum + ?4,"
		       " speed_n = speed_n + ?5, items = items + ?6, run_ms = run_ms + ?7,"
		       " boots = boots + ?8, boot_ms = boot_ms + ?9, alive_ms = alive_ms + ?10,"
		       " reclaims = reclaims + ?11, launches = launches + ?12,"
		       " launch_failures = launch_failures + ?13,"
		       " last_failure_at = MAX(last_failure_at, ?14), last_launch_at = MAX(last_launch_at, ?15),"
		       " capacity_failures = capacity_failures + ?16, last_capacity_at = MAX(last_capacity_at, ?17),"
		       " broken_streak = CASE WHEN ?23 THEN 0 ELSE broken_streak END + ?18,"
		       " last_broken_at = MAX(last_broken_at, ?19),"
		       " failing_since = CASE WHEN ?23 OR failing_since = 0 THEN ?20 ELSE failing_since END,"
		       " lost = lost + ?21, last_lost_at = MAX(last_lost_at, ?22)",
	[S_STATS] = "SELECT {offer_stats} FROM offer_stats",
	[S_LEDGER] = LEDGER_SELECT " WHERE s.id > ?2 AND s.id <= ?3 AND (s.end_at >= ?1 OR s.end_at = 0) ORDER BY s.id",
	/* segments_open, the partial index, holds these rows alone, in its
	 * order: by id, the query would walk the whole table. */
	[S_LEDGER_OPEN] = LEDGER_SELECT " WHERE s.end_at = 0 ORDER BY s.instance_id",
	[S_SUMS] = "SELECT offer, market, kind, team, SUM(ms), SUM(gpu_ms), SUM(cost), SUM(items) FROM ledger_sums"
		   " WHERE day BETWEEN ?1 AND ?2 GROUP BY offer, market, kind, team ORDER BY offer, market, kind, team",
	/* jobs_dead gives the window; a bare column beside MAX() is SQLite's
	 * value from the row of the maximum: the last job's. */
	[S_DEAD] = "SELECT lane, COUNT(*), MIN(finished_at), MAX(finished_at), id, error, SUM(cost) FROM jobs"
		   " WHERE state = 'dead' AND finished_at >= ?1 GROUP BY lane ORDER BY lane",
	[S_ALERTS] = "SELECT {alerts} FROM alerts ORDER BY key",
	[S_BUDGETS] = "SELECT {team_budgets} FROM team_budgets ORDER BY team",
	[S_TUNINGS] = "SELECT {tunings} FROM tunings ORDER BY name",
};

struct sqlite_store {
	struct store *st; /* the front end's, for its errmsg */
	sqlite3 *db;
	char *sql[S_COUNT]; /* every statement's text (sql_texts); NULL: PostgreSQL's alone */
	sqlite3_stmt *stmt[S_COUNT];
	struct sqlite_wal *wal; /* the log copied back off this thread */
};

static struct sqlite_store *impl(struct store *st) { return st->db; }

/* What failed (what, and the table named, if any) and SQLite's reason. */
static int fail(struct sqlite_store *s, const char *what, const char *table)
{
	/* SQLITE_FULL on a write that found no room; an I/O error whose
	 * system call said ENOSPC (an fsync, a truncate) is the same want. */
	if (sqlite3_errcode(s->db) == SQLITE_FULL || sqlite3_system_errno(s->db) == ENOSPC)
		s->st->full = 1;
	snprintf(s->st->errmsg, sizeof s->st->errmsg, "sqlite: %s%s%s: %s", what, table ? " " : "",
		 table ? table : "", sqlite3_errmsg(s->db));
	return -1;
}

/* An update that found no row to write. */
static int missing(struct sqlite_store *s, const char *table, int64_t id)
{
	snprintf(s->st->errmsg, sizeof s->st->errmsg, "sqlite: update %s: no row with id %lld", table, (long long)id);
	return -1;
}

/* Steps statement id, bound, which returns no rows, and resets it: 0, or
 * -1 with what failed. */
static int step(struct sqlite_store *s, enum stmt_id id, const char *what, const char *table)
{
	sqlite3_stmt *st = s->stmt[id];
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc == SQLITE_DONE ? 0 : fail(s, what, table);
}

static int run(struct sqlite_store *s, enum stmt_id id) { return step(s, id, s->sql[id], NULL); }

static int op_begin(struct store *st) { return run(impl(st), S_BEGIN); }
static int op_commit(struct store *st) { return run(impl(st), S_COMMIT); }

/* SQLite may roll a batch back by itself (a full disk, in a statement or
 * in COMMIT): there is then nothing left to roll back. */
static int op_rollback(struct store *st)
{
	return sqlite3_get_autocommit(impl(st)->db) ? 0 : run(impl(st), S_ROLLBACK);
}

/* Inside a batch SQLite lost, a savepoint would open a transaction of its
 * own, committed at its release: a request's writes would be kept while
 * the batch, and so its reply, fails. */
static int op_savepoint(struct store *st)
{
	struct sqlite_store *s = impl(st);

	if (sqlite3_get_autocommit(s->db)) {
		snprintf(st->errmsg, sizeof st->errmsg, "sqlite: the batch was rolled back by an earlier error");
		return -1;
	}
	return run(s, S_SAVEPOINT);
}
static int op_release(struct store *st) { return run(impl(st), S_RELEASE); }

static int op_rollback_savepoint(struct store *st)
{
	return run(impl(st), S_ROLLBACK_TO) || run(impl(st), S_RELEASE) ? -1 : 0;
}

/* ---- rows in and out, as store/schema.c describes them ---- */

/* NULL is SQL's NULL. */
static int bind_text(sqlite3_stmt *st, int i, const char *v)
{
	return v ? sqlite3_bind_text(st, i, v, -1, SQLITE_STATIC) : sqlite3_bind_null(st, i);
}

static int64_t column_int(void *st, int i) { return sqlite3_column_int64(st, i); }
static double column_real(void *st, int i) { return sqlite3_column_double(st, i); }

static const char *column_text(void *st, int i, size_t *len)
{
	const char *v = (const char *)sqlite3_column_text(st, i);

	*len = v ? (size_t)sqlite3_column_bytes(st, i) : 0;
	return v;
}

static const struct rows_source from_row = {column_int, column_real, column_text};

/* A statement bound from parameter i on; rc: the first bind SQLite
 * refused (a parameter past the statement's last), else SQLITE_OK. */
struct binding {
	sqlite3_stmt *st;
	int i, rc;
};

static void bound(struct binding *b, int rc)
{
	if (b->rc == SQLITE_OK)
		b->rc = rc;
	b->i++;
}

static void bind_int(void *arg, int64_t v)
{
	struct binding *b = arg;

	bound(b, sqlite3_bind_int64(b->st, b->i, v));
}

static void bind_real(void *arg, double v)
{
	struct binding *b = arg;

	bound(b, sqlite3_bind_double(b->st, b->i, v));
}

static void bind_str(void *arg, const char *v)
{
	struct binding *b = arg;

	bound(b, bind_text(b->st, b->i, v));
}

static const struct rows_sink to_params = {bind_int, bind_real, bind_str};

/* Binds row's columns of set to statement id from parameter first on. */
static int bind_row(struct sqlite_store *s, enum stmt_id id, int first, const struct schema_table *t,
		    const void *row, enum rows_set set)
{
	struct binding b = {s->stmt[id], first, SQLITE_OK};

	rows_bind(t, row, set, &to_params, &b);
	if (b.rc == SQLITE_OK)
		return 0;
	sqlite3_clear_bindings(b.st);
	snprintf(s->st->errmsg, sizeof s->st->errmsg, "sqlite: bind %s: %s", t->name, sqlite3_errstr(b.rc));
	return -1;
}

/* Inserts row into t by statement id; the id it was given into *new_id,
 * if asked. */
static int insert(struct sqlite_store *s, enum stmt_id id, const struct schema_table *t, const void *row,
		  int64_t *new_id)
{
	if (bind_row(s, id, 1, t, row, ROWS_INSERT) != 0 || step(s, id, "insert into", t->name) != 0)
		return -1;
	if (new_id)
		*new_id = sqlite3_last_insert_rowid(s->db);
	return 0;
}

/* Writes row, of this id, by update statement id: it must be there. */
static int update(struct sqlite_store *s, enum stmt_id id, const struct schema_table *t, const void *row,
		  int64_t row_id)
{
	if (bind_row(s, id, 1, t, row, ROWS_UPDATE) != 0 || step(s, id, "update", t->name) != 0)
		return -1;
	return sqlite3_changes(s->db) == 1 ? 0 : missing(s, t->name, row_id);
}

/* Steps bound statement id once: its row read as t into out, or
 * STORE_NOT_FOUND. */
static int fetch(struct sqlite_store *s, enum stmt_id id, const struct schema_table *t, void *out)
{
	sqlite3_stmt *st = s->stmt[id];
	int rc = sqlite3_step(st), ret = 0;

	if (rc == SQLITE_ROW)
		rows_read(t, out, &from_row, st);
	else
		ret = rc == SQLITE_DONE ? STORE_NOT_FOUND : fail(s, "read", t->name);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return ret;
}

/* Steps bound statement id through its rows, each read as t and handed to
 * cb, to the last or a callback's nonzero return. */
static int walk(struct sqlite_store *s, enum stmt_id id, const struct schema_table *t, union schema_cb cb, void *arg)
{
	sqlite3_stmt *st = s->stmt[id];
	_Alignas(max_align_t) char row[SCHEMA_ROW_MAX];
	int rc = SQLITE_DONE, ret = 0;

	while (ret == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		rows_read(t, row, &from_row, st);
		ret = rows_emit(t, cb, arg, row);
	}
	if (ret == 0 && rc != SQLITE_DONE)
		ret = fail(s, "read", t->name);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return ret;
}

/* Steps bound statement id through up to max rows, read as t into the
 * array out; *n of them. */
static int read_array(struct sqlite_store *s, enum stmt_id id, const struct schema_table *t, void *out, int max,
		      int *n)
{
	sqlite3_stmt *st = s->stmt[id];
	int rc = SQLITE_DONE;

	for (*n = 0; *n < max && (rc = sqlite3_step(st)) == SQLITE_ROW; (*n)++)
		rows_read(t, (char *)out + (size_t)*n * t->size, &from_row, st);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : fail(s, "read", t->name);
}

/* ---- jobs ---- */

static int op_job_insert(struct store *base, struct job *j)
{
	return insert(impl(base), S_INSERT, &schema_jobs, j, &j->id);
}

static int op_job_update(struct store *base, const struct job *j)
{
	return update(impl(base), S_UPDATE, &schema_jobs, j, j->id);
}

static int op_job_get(struct store *base, int64_t id, struct job *out)
{
	sqlite3_bind_int64(impl(base)->stmt[S_GET], 1, id);
	return fetch(impl(base), S_GET, &schema_jobs, out);
}

static int op_job_get_by_key(struct store *base, const char *team, const char *key, struct job *out)
{
	bind_text(impl(base)->stmt[S_GET_BY_KEY], 1, team);
	bind_text(impl(base)->stmt[S_GET_BY_KEY], 2, key);
	return fetch(impl(base), S_GET_BY_KEY, &schema_jobs, out);
}

/* The head of each queued class the offer fits, in the tallies (exact:
 * one writer), and the first of them in lease order. */
struct class_heads {
	struct sqlite_store *s;
	const struct lease_offer *offer;
	const char *labels;
	struct job *best;
	int found;
};

static int class_head(void *arg, const struct job_count *c, int64_t *oldest_ms)
{
	struct class_heads *w = arg;
	sqlite3_stmt *st = w->s->stmt[S_CLASS_HEAD];
	struct job head;
	int rc;

	(void)oldest_ms;
	if (!offer_fits_class(w->offer, c))
		return 0;
	bind_text(st, 1, c->lane);
	bind_text(st, 2, c->type);
	bind_text(st, 3, c->team);
	sqlite3_bind_int(st, 4, c->gpus);
	sqlite3_bind_int(st, 5, c->min_vram_gb);
	sqlite3_bind_int(st, 6, c->priority);
	bind_text(st, 7, w->labels);
	if ((rc = fetch(w->s, S_CLASS_HEAD, &schema_jobs, &head)) == STORE_NOT_FOUND)
		return 0; /* its jobs all ask for labels the offer lacks */
	if (rc != 0)
		return -1;
	if (w->found && !job_leases_before(&head, w->best)) {
		job_free(&head);
		return 0;
	}
	if (w->found)
		job_free(w->best);
	*w->best = head;
	w->found = 1;
	return 0;
}

static int op_job_next_ready(struct store *base, const struct lease_offer *o, struct job *out)
{
	struct sqlite_store *s = impl(base);
	sqlite3_stmt *st = s->stmt[S_NEXT_READY];
	struct offer_filters f;
	struct class_heads w = {s, o, NULL, out, 0};
	int rc;

	offer_filters_make(o, &f);
	sqlite3_bind_int(st, 1, o->gpus);
	sqlite3_bind_int(st, 2, o->vram_gb);
	bind_text(st, 3, f.full_types);
	bind_text(st, 4, f.labels);
	bind_text(st, 5, f.rooms);
	sqlite3_bind_int(st, 6, LEASE_WINDOW);
	rc = fetch(s, S_NEXT_READY, &schema_jobs, out);
	/* The window held every queued job, or one that fits. */
	if (rc == STORE_NOT_FOUND && counts_in_state(base->counts, JOB_QUEUED) > LEASE_WINDOW) {
		w.labels = f.labels;
		rc = counts_queued(base->counts, class_head, &w);
		if (rc != 0 && w.found)
			job_free(out);
		rc = rc != 0 ? -1 : w.found ? 0 : STORE_NOT_FOUND;
	}
	offer_filters_free(&f);
	return rc;
}

static int op_job_list(struct store *base, const struct job_filter *f, job_cb cb, void *arg)
{
	sqlite3_stmt *st = impl(base)->stmt[S_LIST];

	bind_text(st, 1, f->state >= 0 ? job_state_name((enum job_state)f->state) : NULL);
	bind_text(st, 2, f->lane);
	bind_text(st, 3, f->team);
	bind_text(st, 4, f->type);
	sqlite3_bind_int64(st, 5, f->after_id);
	sqlite3_bind_int(st, 6, f->limit);
	sqlite3_bind_int64(st, 7, f->finished_from_ms);
	sqlite3_bind_int64(st, 8, f->finished_to_ms);
	return walk(impl(base), S_LIST, &schema_jobs, (union schema_cb){.job = cb}, arg);
}

static int op_job_due(struct store *base, int64_t now_ms, int64_t *ids, int max, int *n)
{
	sqlite3_bind_int64(impl(base)->stmt[S_DUE], 1, now_ms);
	sqlite3_bind_int(impl(base)->stmt[S_DUE], 2, max);
	return read_array(impl(base), S_DUE, &schema_int64s, ids, max, n);
}

static int op_job_leased_on(struct store *base, int64_t instance, struct job_on *out, int max, int *n)
{
	sqlite3_bind_int64(impl(base)->stmt[S_LEASED_ON], 1, instance);
	sqlite3_bind_int(impl(base)->stmt[S_LEASED_ON], 2, max);
	return read_array(impl(base), S_LEASED_ON, &schema_jobs_on, out, max, n);
}

/* 0 when there is none: MIN() of no rows is NULL, which reads as 0. */
static int op_next_deadline(struct store *base, int64_t *out_ms)
{
	int n;

	*out_ms = 0;
	return read_array(impl(base), S_NEXT_DEADLINE, &schema_int64s, out_ms, 1, &n);
}

/* SQLite keeps no tallies: one process writes it, and counts them in
 * memory from these. */
static int op_job_count_rows(struct store *base, count_cb cb, void *arg)
{
	return walk(impl(base), S_COUNT_ROWS, &schema_job_counts, (union schema_cb){.count_row = cb}, arg);
}

static int op_queued_oldest(struct store *base, const struct job_count *k, int64_t *ms)
{
	sqlite3_stmt *st = impl(base)->stmt[S_QUEUED_OLDEST];
	int n, rc;

	bind_text(st, 1, k->lane);
	bind_text(st, 2, k->type);
	bind_text(st, 3, k->team);
	sqlite3_bind_int(st, 4, k->gpus);
	sqlite3_bind_int(st, 5, k->min_vram_gb);
	sqlite3_bind_int(st, 6, k->priority);
	*ms = 0;
	rc = read_array(impl(base), S_QUEUED_OLDEST, &schema_int64s, ms, 1, &n);
	return rc == 0 && *ms == 0 ? STORE_NOT_FOUND : rc;
}

static int op_recent_submits(struct store *base, int limit, time_cb cb, void *arg)
{
	sqlite3_bind_int(impl(base)->stmt[S_RECENT_SUBMITS], 1, limit);
	return walk(impl(base), S_RECENT_SUBMITS, &schema_submits, (union schema_cb){.time = cb}, arg);
}

static int op_arrivals(struct store *base, int limit, arrival_cb cb, void *arg)
{
	sqlite3_bind_int(impl(base)->stmt[S_ARRIVALS], 1, limit);
	return walk(impl(base), S_ARRIVALS, &schema_arrivals, (union schema_cb){.arrival = cb}, arg);
}

static int op_recent_durations(struct store *base, int limit, duration_cb cb, void *arg)
{
	sqlite3_bind_int(impl(base)->stmt[S_RECENT_DURATIONS], 1, limit);
	return walk(impl(base), S_RECENT_DURATIONS, &schema_durations, (union schema_cb){.duration = cb}, arg);
}

static int op_usage(struct store *base, int64_t now_ms, int64_t *instance_ms)
{
	struct sqlite_store *s = impl(base);
	sqlite3_stmt *st = s->stmt[S_USAGE];
	int rc;

	sqlite3_bind_int64(st, 1, now_ms);
	rc = sqlite3_step(st);
	*instance_ms = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
	sqlite3_reset(st);
	return rc == SQLITE_ROW ? 0 : fail(s, "usage", NULL);
}

static int op_dead_letters(struct store *base, int64_t since_ms, dead_letters_cb cb, void *arg)
{
	sqlite3_bind_int64(impl(base)->stmt[S_DEAD], 1, since_ms);
	return walk(impl(base), S_DEAD, &schema_dead_letters, (union schema_cb){.dead_letters = cb}, arg);
}

static int op_job_add_cost(struct store *base, int64_t job, double usd)
{
	sqlite3_bind_int64(impl(base)->stmt[S_JOB_COST], 1, job);
	sqlite3_bind_double(impl(base)->stmt[S_JOB_COST], 2, usd);
	return step(impl(base), S_JOB_COST, "job cost", NULL);
}

/* ---- the fleet and the decisions ---- */

static int op_instance_get(struct store *base, int64_t id, struct instance *out)
{
	sqlite3_bind_int64(impl(base)->stmt[S_INST_GET], 1, id);
	return fetch(impl(base), S_INST_GET, &schema_instances, out);
}

static int op_instance_by_token(struct store *base, const char *token, struct instance *out)
{
	bind_text(impl(base)->stmt[S_INST_BY_TOKEN], 1, token);
	return fetch(impl(base), S_INST_BY_TOKEN, &schema_instances, out);
}

static int op_instance_insert(struct store *base, struct instance *i)
{
	return insert(impl(base), S_INST_INSERT, &schema_instances, i, &i->id);
}

static int op_instance_update(struct store *base, const struct instance *i)
{
	return update(impl(base), S_INST_UPDATE, &schema_instances, i, i->id);
}

static int op_instance_data_set(struct store *base, int64_t id, const char *data)
{
	struct sqlite_store *s = impl(base);

	sqlite3_bind_int64(s->stmt[S_DATA_SET], 1, id);
	bind_text(s->stmt[S_DATA_SET], 2, data);
	if (step(s, S_DATA_SET, "instance data", NULL) != 0)
		return -1;
	return sqlite3_changes(s->db) == 1 ? 0 : missing(s, "instances", id);
}

static int op_instance_data(struct store *base, int64_t id, char *buf, size_t size)
{
	struct sqlite_store *s = impl(base);
	sqlite3_stmt *st = s->stmt[S_DATA_GET];
	int rc, ret = 0;

	sqlite3_bind_int64(st, 1, id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		snprintf(buf, size, "%s", (const char *)sqlite3_column_text(st, 0));
	else
		ret = rc == SQLITE_DONE ? STORE_NOT_FOUND : fail(s, "instance data", NULL);
	sqlite3_reset(st);
	return ret;
}

static int op_instance_list(struct store *base, instance_cb cb, void *arg)
{
	return walk(impl(base), S_INST_LIVE, &schema_instances, (union schema_cb){.instance = cb}, arg);
}

static int op_instance_page(struct store *base, int64_t after_id, int limit, instance_cb cb, void *arg)
{
	sqlite3_stmt *st = impl(base)->stmt[S_INST_PAGE];

	sqlite3_bind_int64(st, 1, after_id);
	sqlite3_bind_int(st, 2, limit);
	return walk(impl(base), S_INST_PAGE, &schema_instances, (union schema_cb){.instance = cb}, arg);
}

static int op_decision_insert(struct store *base, const struct decision *d)
{
	return insert(impl(base), S_DEC_INSERT, &schema_decisions, d, NULL);
}

static int op_decision_list(struct store *base, int64_t before_id, int limit, decision_cb cb, void *arg)
{
	sqlite3_bind_int64(impl(base)->stmt[S_DEC_LIST], 1, before_id);
	sqlite3_bind_int(impl(base)->stmt[S_DEC_LIST], 2, limit);
	return walk(impl(base), S_DEC_LIST, &schema_decisions, (union schema_cb){.decision = cb}, arg);
}

/* ---- the ledger and the offers' statistics ---- */

static int op_segment_open(struct store *base, const struct segment *g)
{
	return insert(impl(base), S_SEG_OPEN, &schema_segments, g, NULL);
}

static int op_segment_find(struct store *base, int64_t instance, struct segment_found *out)
{
	sqlite3_bind_int64(impl(base)->stmt[S_SEG_FIND], 1, instance);
	return fetch(impl(base), S_SEG_FIND, &schema_segment_found, out);
}

static int op_segment_end(struct store *base, int64_t id, int64_t end_ms, double cost)
{
	sqlite3_stmt *st = impl(base)->stmt[S_SEG_CLOSE];

	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_int64(st, 2, end_ms);
	sqlite3_bind_double(st, 3, cost);
	return step(impl(base), S_SEG_CLOSE, "close segment", NULL);
}

static int op_offer_stat_add(struct store *base, const struct offer_stat *d)
{
	sqlite3_bind_int(impl(base)->stmt[S_STAT_ADD], 23, d->launched_ok);
	return insert(impl(base), S_STAT_ADD, &schema_offer_stats, d, NULL);
}

static int op_offer_stats(struct store *base, offer_stat_cb cb, void *arg)
{
	return walk(impl(base), S_STATS, &schema_offer_stats, (union schema_cb){.offer_stat = cb}, arg);
}

static int op_ledger(struct store *base, int64_t since_ms, int64_t after_id, int64_t upto_id, ledger_cb cb, void *arg)
{
	sqlite3_bind_int64(impl(base)->stmt[S_LEDGER], 1, since_ms);
	sqlite3_bind_int64(impl(base)->stmt[S_LEDGER], 2, after_id);
	sqlite3_bind_int64(impl(base)->stmt[S_LEDGER], 3, upto_id);
	return walk(impl(base), S_LEDGER, &schema_ledger, (union schema_cb){.ledger = cb}, arg);
}

static int op_segment_last_id(struct store *base, int64_t *id)
{
	int n;

	*id = 0;
	return read_array(impl(base), S_SEG_LAST, &schema_int64s, id, 1, &n);
}

static int op_ledger_open(struct store *base, ledger_cb cb, void *arg)
{
	return walk(impl(base), S_LEDGER_OPEN, &schema_ledger, (union schema_cb){.ledger = cb}, arg);
}

/* The day first, the sums after it. */
static int op_ledger_add(struct store *base, int64_t day, const struct ledger_sum *d)
{
	struct sqlite_store *s = impl(base);

	sqlite3_bind_int64(s->stmt[S_SUM_ADD], 1, day);
	if (bind_row(s, S_SUM_ADD, 2, &schema_ledger_sums, d, ROWS_INSERT) != 0)
		return -1;
	return step(s, S_SUM_ADD, "add to", schema_ledger_sums.name);
}

static int op_ledger_sums(struct store *base, int64_t first_day, int64_t last_day, ledger_sum_cb cb, void *arg)
{
	sqlite3_bind_int64(impl(base)->stmt[S_SUMS], 1, first_day);
	sqlite3_bind_int64(impl(base)->stmt[S_SUMS], 2, last_day);
	return walk(impl(base), S_SUMS, &schema_ledger_sums, (union schema_cb){.ledger_sum = cb}, arg);
}

/* ---- alerts and team budgets ---- */

static int op_alert_put(struct store *base, const struct alert_row *a)
{
	return insert(impl(base), S_ALERT_PUT, &schema_alerts, a, NULL);
}

static int op_alert_delete(struct store *base, const char *key)
{
	bind_text(impl(base)->stmt[S_ALERT_DELETE], 1, key);
	return run(impl(base), S_ALERT_DELETE);
}

static int op_alerts(struct store *base, alert_cb cb, void *arg)
{
	return walk(impl(base), S_ALERTS, &schema_alerts, (union schema_cb){.alert = cb}, arg);
}

static int op_team_budget_set(struct store *base, const struct team_budget *b)
{
	return insert(impl(base), S_BUDGET_SET, &schema_team_budgets, b, NULL);
}

static int op_team_budgets(struct store *base, team_budget_cb cb, void *arg)
{
	return walk(impl(base), S_BUDGETS, &schema_team_budgets, (union schema_cb){.team_budget = cb}, arg);
}

/* ---- a job's attempts ---- */

static int op_attempt_put(struct store *base, const struct attempt *a)
{
	return insert(impl(base), S_ATTEMPT_PUT, &schema_attempts, a, NULL);
}

static int op_attempts(struct store *base, int64_t job, attempt_cb cb, void *arg)
{
	sqlite3_bind_int64(impl(base)->stmt[S_ATTEMPTS], 1, job);
	return walk(impl(base), S_ATTEMPTS, &schema_attempts, (union schema_cb){.attempt = cb}, arg);
}

static int op_tuning_set(struct store *base, const struct tuning_row *t)
{
	return insert(impl(base), S_TUNING_SET, &schema_tunings, t, NULL);
}

static int op_tunings(struct store *base, tuning_cb cb, void *arg)
{
	return walk(impl(base), S_TUNINGS, &schema_tunings, (union schema_cb){.tuning = cb}, arg);
}

/* ---- open and close ---- */

static void op_close(struct store *base)
{
	struct sqlite_store *s = impl(base);

	sqlite_wal_stop(s->wal);
	for (int i = 0; i < S_COUNT; i++) {
		sqlite3_finalize(s->stmt[i]);
		free(s->sql[i]);
	}
	sqlite3_close(s->db);
	free(s);
	base->db = NULL;
}

static int exec(struct sqlite_store *s, const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(s->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		snprintf(s->st->errmsg, sizeof s->st->errmsg, "sqlite: %s", msg ? msg : "error");
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

static int schema_version(struct sqlite_store *s, int *version)
{
	sqlite3_stmt *st;
	int rc;

	if (exec(s, "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)") != 0)
		return -1;
	if (sqlite3_prepare_v2(s->db, "SELECT MAX(version) FROM schema_version", -1, &st, NULL) != SQLITE_OK)
		return fail(s, "schema version", NULL);
	rc = sqlite3_step(st);
	*version = rc == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : fail(s, "schema version", NULL);
}

static int migrate(struct sqlite_store *s)
{
	char sql[128];
	int version;

	if (schema_version(s, &version) != 0)
		return -1;
	if (version > NMIGRATIONS) {
		snprintf(s->st->errmsg, sizeof s->st->errmsg,
			 "database schema version %d is newer than this ebb knows (%d)", version,
			 NMIGRATIONS);
		return -1;
	}
	for (; version < NMIGRATIONS; version++) {
		snprintf(sql, sizeof sql, "INSERT INTO schema_version VALUES (%d)", version + 1);
		if (exec(s, "BEGIN") != 0)
			return -1;
		if (exec(s, migrations[version]) != 0 || exec(s, sql) != 0 || exec(s, "COMMIT") != 0) {
			char why[400];
			snprintf(why, sizeof why, "%.399s", s->st->errmsg);
			exec(s, "ROLLBACK");
			snprintf(s->st->errmsg, sizeof s->st->errmsg, "migration %d: %s", version + 1, why);
			return -1;
		}
	}
	return 0;
}

/* Every statement, its columns filled in, prepared once. */
static int prepare(struct sqlite_store *s)
{
	if (sql_texts(stmt_sql, '?', s->sql, s->st->errmsg, sizeof s->st->errmsg) != 0)
		return -1;
	for (int i = 0; i < S_COUNT; i++) {
		if (s->sql[i] && sqlite3_prepare_v3(s->db, s->sql[i], -1, SQLITE_PREPARE_PERSISTENT, &s->stmt[i],
						    NULL) != SQLITE_OK)
			return fail(s, s->sql[i], NULL);
	}
	return 0;
}

static int op_open(struct store *base, const struct config *cfg)
{
	struct sqlite_store *s = mem_calloc(1, sizeof *s);
	char path[4200];

	if (!s) {
		snprintf(base->errmsg, sizeof base->errmsg, "sqlite: out of memory");
		return -1;
	}
	s->st = base;
	base->db = s;
	if (mkdir(cfg->data_dir, 0750) != 0 && errno != EEXIST) {
		snprintf(base->errmsg, sizeof base->errmsg, "%.250s: cannot create: %s", cfg->data_dir,
			 strerror(errno));
		return -1;
	}
	snprintf(path, sizeof path, "%s/ebb.db", cfg->data_dir);
	/* NOMUTEX: one thread uses the store (store.h), and the connection's
	 * mutex cost a lock and an unlock per bound value and column read. */
	if (sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
			    NULL) != SQLITE_OK) {
		snprintf(base->errmsg, sizeof base->errmsg, "%.250s: %.250s", path, sqlite3_errmsg(s->db));
		return -1;
	}
	/* FULL makes every commit durable; WAL makes that one fsync of the
	 * log per commit, which the server's batching amortises. */
	if (exec(s, "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;"
		    " PRAGMA busy_timeout = 5000;") != 0 ||
	    migrate(s) != 0 || prepare(s) != 0 ||
	    !(s->wal = sqlite_wal_start(s->db, path, base->errmsg, sizeof base->errmsg))) {
		char why[sizeof base->errmsg];
		snprintf(why, sizeof why, "%s", base->errmsg);
		snprintf(base->errmsg, sizeof base->errmsg, "%.250s: %.250s", path, why);
		return -1;
	}
	return 0;
}
/* ---- the jobs' logs ---- */

static int op_log_meta(struct store *base, int64_t job, int attempt, struct log_meta *out)
{
	sqlite3_bind_int64(impl(base)->stmt[S_LOG_META], 1, job);
	sqlite3_bind_int(impl(base)->stmt[S_LOG_META], 2, attempt);
	return fetch(impl(base), S_LOG_META, &schema_job_log_meta, out);
}

static int op_log_meta_put(struct store *base, const struct log_meta *m)
{
	return insert(impl(base), S_LOG_META_PUT, &schema_job_log_meta, m, NULL);
}

static int op_log_metas_oldest(struct store *base, int64_t before_ms, int limit, log_meta_cb cb, void *arg)
{
	sqlite3_bind_int64(impl(base)->stmt[S_LOG_METAS_OLDEST], 1, before_ms);
	sqlite3_bind_int(impl(base)->stmt[S_LOG_METAS_OLDEST], 2, limit);
	return walk(impl(base), S_LOG_METAS_OLDEST, &schema_job_log_meta, (union schema_cb){.log_meta = cb}, arg);
}

static int op_log_meta_delete(struct store *base, int64_t job, int attempt)
{
	sqlite3_bind_int64(impl(base)->stmt[S_LOG_META_DELETE], 1, job);
	sqlite3_bind_int(impl(base)->stmt[S_LOG_META_DELETE], 2, attempt);
	return step(impl(base), S_LOG_META_DELETE, "delete", "job_log_meta");
}

static int op_log_total(struct store *base, int64_t *bytes)
{
	int n;

	*bytes = 0;
	return read_array(impl(base), S_LOG_TOTAL, &schema_int64s, bytes, 1, &n);
}

static int op_log_insert(struct store *base, const struct log_line *l)
{
	return insert(impl(base), S_LOG_INSERT, &schema_job_logs, l, NULL);
}

static int op_log_lines(struct store *base, int64_t job, int attempt, int64_t after, int limit, int last,
			log_line_cb cb, void *arg)
{
	enum stmt_id id = last ? S_LOG_LAST : S_LOG_LINES;
	sqlite3_stmt *st = impl(base)->stmt[id];

	sqlite3_bind_int64(st, 1, job);
	sqlite3_bind_int(st, 2, attempt);
	sqlite3_bind_int64(st, 3, after);
	sqlite3_bind_int(st, 4, limit);
	return walk(impl(base), id, &schema_job_logs, (union schema_cb){.log_line = cb}, arg);
}

static int op_log_delete(struct store *base, int64_t job, int attempt, int64_t after, int64_t upto)
{
	sqlite3_stmt *st = impl(base)->stmt[S_LOG_DELETE];

	sqlite3_bind_int64(st, 1, job);
	sqlite3_bind_int(st, 2, attempt);
	sqlite3_bind_int64(st, 3, after);
	sqlite3_bind_int64(st, 4, upto);
	return step(impl(base), S_LOG_DELETE, "delete", "job_logs");
}


const struct store_engine store_engine_sqlite = {
	.conf = {.name = "sqlite", .help = "The SQLite store: DATA_DIR/ebb.db."},
	STORE_ENGINE_OPS,
};

