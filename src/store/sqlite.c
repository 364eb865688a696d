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
#include "store/engine.h"

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
};

#define NMIGRATIONS ((int)(sizeof migrations / sizeof *migrations))

#define JOB_COLUMNS                                                                          \
	"id, state, type, lane, lane_rank, priority, team, command, payload, labels, gpus,"  \
	" min_vram_gb, items, timeout_s, max_attempts, attempts, run_at, created_at,"        \
	" updated_at, finished_at, idem_key, idem_hash, lease_token, worker, lease_expires," \
	" lease_ms, checkpoint, items_done, error, result, seq, est_s, started_at, cost,"  \
	" items_start, items_lost, interruptions, instance_id"

#define INST_COLUMNS                                                                      \
	"id, offer, market, state, gpus, vram_gb, gpu_ids, provider_ref, launched_at,"    \
	" registered_at, idle_since, terminated_at, updated_at, job_id, reason, billed_ms, cost,"  \
	" reclaim_at, token, team"

/* A ledger row: the segment, its instance, and the job a run was of. */
#define LEDGER_SELECT                                                                             \
	"SELECT s.instance_id, s.kind, s.job_id, s.start_at, s.end_at, s.cost, i.offer, i.market," \
	" i.gpus, j.team, j.type, j.items_done, j.items_lost, i.reclaim_at > 0, s.gpus, i.team"     \
	" FROM segments s JOIN instances i ON i.id = s.instance_id"                                 \
	" LEFT JOIN jobs j ON j.id = s.job_id AND s.kind = 'job'"

enum stmt_id {
	S_BEGIN, S_COMMIT, S_ROLLBACK, S_SAVEPOINT, S_RELEASE, S_ROLLBACK_TO,
	S_INSERT, S_UPDATE, S_GET, S_GET_BY_KEY, S_NEXT_READY, S_LIST, S_DUE, S_LEASED_ON,
	S_NEXT_DEADLINE, S_DEMAND, S_RECENT_SUBMITS, S_ARRIVALS,
	S_RECENT_DURATIONS, S_INST_INSERT, S_INST_UPDATE, S_INST_GET, S_INST_LIVE, S_INST_ALL, S_DEC_INSERT,
	S_DEC_LIST, S_USAGE, S_SEG_OPEN, S_SEG_FIND, S_SEG_CLOSE, S_JOB_COST,
	S_STAT_ADD, S_STATS, S_LEDGER, S_LEDGER_OPEN, S_SUM_ADD, S_SUMS, S_INST_BY_TOKEN, S_DATA_SET,
	S_DATA_GET, S_DEAD, S_ALERT_PUT, S_ALERT_DELETE, S_ALERTS, S_BUDGET_SET, S_BUDGETS, S_COUNT
};

static const char *const stmt_sql[S_COUNT] = {
	[S_BEGIN] = "BEGIN",
	[S_COMMIT] = "COMMIT",
	[S_ROLLBACK] = "ROLLBACK",
	[S_SAVEPOINT] = "SAVEPOINT request",
	[S_RELEASE] = "RELEASE request",
	[S_ROLLBACK_TO] = "ROLLBACK TO request",
	[S_INSERT] = "INSERT INTO jobs (" JOB_COLUMNS ") VALUES (NULL, ?, ?, ?, ?, ?, ?, ?, ?, ?,"
		     " ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
	[S_UPDATE] = "UPDATE jobs SET state = ?2, priority = ?3, attempts = ?4, run_at = ?5,"
		     " updated_at = ?6, finished_at = ?7, lease_token = ?8, worker = ?9,"
		     " lease_expires = ?10, lease_ms = ?11, checkpoint = ?12, items_done = ?13,"
		     " error = ?14, result = ?15, seq = ?16, started_at = ?17, cost = ?18,"
		     " items_start = ?19, items_lost = ?20, interruptions = ?21, instance_id = ?22 WHERE id = ?1",
	[S_GET] = "SELECT " JOB_COLUMNS " FROM jobs WHERE id = ?",
	[S_GET_BY_KEY] = "SELECT " JOB_COLUMNS " FROM jobs WHERE team = ? AND idem_key = ?",
	/* The partial index gives the order; the filters are checked per row. */
	[S_NEXT_READY] = "SELECT " JOB_COLUMNS " FROM jobs WHERE state = 'queued'"
			 " AND gpus <= ?1 AND min_vram_gb <= ?2"
			 " AND (?3 IS NULL OR type NOT IN (SELECT value FROM json_each(?3)))"
			 " AND (labels IS NULL OR NOT EXISTS (SELECT 1 FROM json_each(jobs.labels) l"
			 "  WHERE l.value NOT IN (SELECT value FROM json_each(COALESCE(?4, '[]')))))"
			 " AND (?5 IS NULL OR NOT EXISTS (SELECT 1 FROM json_each(?5) r"
			 "  WHERE r.key = jobs.team AND r.value < MAX(jobs.gpus, 1)))"
			 " ORDER BY lane_rank, priority DESC, seq, id LIMIT 1",
	[S_LIST] = "SELECT " JOB_COLUMNS " FROM jobs WHERE id > ?5"
		   " AND (?1 IS NULL OR state = ?1) AND (?2 IS NULL OR lane = ?2)"
		   " AND (?3 IS NULL OR team = ?3) AND (?4 IS NULL OR type = ?4)"
		   " ORDER BY id LIMIT ?6",
	[S_DUE] = "SELECT id FROM jobs WHERE state = 'delayed' AND run_at <= ?1"
		  " UNION ALL SELECT id FROM jobs WHERE state = 'leased' AND lease_expires <= ?1"
		  " LIMIT ?2",
	[S_LEASED_ON] = "SELECT id, MAX(gpus, 1) FROM jobs WHERE state = 'leased' AND instance_id = ?1 ORDER BY id"
			" LIMIT ?2",
	[S_NEXT_DEADLINE] = "SELECT MIN(t) FROM ("
			    " SELECT MIN(run_at) AS t FROM jobs WHERE state = 'delayed'"
			    " UNION ALL SELECT MIN(lease_expires) FROM jobs WHERE state = 'leased')",
	[S_DEMAND] = "SELECT gpus, min_vram_gb, lane, type, COUNT(*), SUM(est_s = 0), SUM(est_s),"
		     " MIN(created_at), SUM(items), team, priority FROM jobs WHERE state = 'queued'"
		     " GROUP BY gpus, min_vram_gb, lane, type, team, priority",
	[S_RECENT_SUBMITS] = "SELECT created_at FROM jobs ORDER BY id DESC LIMIT ?",
	/* Newest first by id, the submission order: a walk back from the end
	 * of the table that stops at the window's start. */
	[S_ARRIVALS] = "SELECT gpus, min_vram_gb, lane, type, est_s, created_at, team FROM jobs"
		       " ORDER BY id DESC LIMIT ?",
	[S_RECENT_DURATIONS] = "SELECT type, finished_at - started_at FROM jobs"
			       " WHERE state = 'succeeded' AND started_at > 0"
			       " ORDER BY finished_at DESC LIMIT ?",
	[S_INST_INSERT] = "INSERT INTO instances (" INST_COLUMNS ") VALUES"
			  " (NULL, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20)",
	[S_INST_UPDATE] = "UPDATE instances SET offer = ?2, market = ?3, state = ?4, gpus = ?5,"
			  " vram_gb = ?6, gpu_ids = ?7, provider_ref = ?8, launched_at = ?9,"
			  " registered_at = ?10, idle_since = ?11, terminated_at = ?12, updated_at = ?13,"
			  " job_id = ?14, reason = ?15, billed_ms = ?16, cost = ?17, reclaim_at = ?18, token = ?19,"
			  " team = ?20 WHERE id = ?1",
	[S_INST_GET] = "SELECT " INST_COLUMNS " FROM instances WHERE id = ?",
	[S_INST_BY_TOKEN] = "SELECT " INST_COLUMNS " FROM instances WHERE token = ?1 AND token <> ''",
	[S_DATA_SET] = "UPDATE instances SET provider_data = ?2 WHERE id = ?1",
	[S_DATA_GET] = "SELECT provider_data FROM instances WHERE id = ?1",
	/* Two statements, not one with "?1 OR": the live ones' partial index
	 * serves only a WHERE that is its own. */
	[S_INST_LIVE] = "SELECT " INST_COLUMNS " FROM instances WHERE state <> 'terminated' ORDER BY id",
	[S_INST_ALL] = "SELECT " INST_COLUMNS " FROM instances ORDER BY id",
	[S_DEC_INSERT] = "INSERT INTO decisions (at, kind, offer, count, instance_id, reason)"
			 " VALUES (?, ?, ?, ?, ?, ?)",
	[S_USAGE] = "SELECT (SELECT COALESCE(SUM(CASE WHEN terminated_at > 0 THEN terminated_at ELSE ?2 END"
		    " - launched_at), 0) FROM instances WHERE launched_at >= ?1),"
		    " (SELECT COALESCE(SUM(finished_at - started_at), 0) FROM jobs"
		    "  WHERE finished_at >= ?1 AND started_at > 0 AND state IN ('succeeded', 'failed', 'dead'))",
	[S_SEG_OPEN] = "INSERT INTO segments (instance_id, kind, job_id, start_at, end_at, cost, gpus)"
		       " VALUES (?, ?, ?, ?, ?, ?, ?)",
	[S_SEG_FIND] = "SELECT id, kind, job_id, start_at, gpus FROM segments WHERE instance_id = ? AND end_at = 0"
		       " LIMIT 1",
	[S_SEG_CLOSE] = "UPDATE segments SET end_at = ?2, cost = ?3 WHERE id = ?1",
	[S_JOB_COST] = "UPDATE jobs SET cost = cost + ?2 WHERE id = ?1",
	[S_STAT_ADD] = "INSERT INTO offer_stats VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15,"
		       " ?16, ?17, ?18, ?19, ?21, ?22, ?23)"
		       " ON CONFLICT DO UPDATE SET runs = runs + ?3, speed_sum = speed_sum + ?4,"
		       " speed_n = speed_n + ?5, items = items + ?6, run_ms = run_ms + ?7,"
		       " boots = boots + ?8, boot_ms = boot_ms + ?9, alive_ms = alive_ms + ?10,"
		       " reclaims = reclaims + ?11, launches = launches + ?12,"
		       " launch_failures = launch_failures + ?13,"
		       " last_failure_at = MAX(last_failure_at, ?14), last_launch_at = MAX(last_launch_at, ?15),"
		       " capacity_failures = capacity_failures + ?16, last_capacity_at = MAX(last_capacity_at, ?17),"
		       " broken_streak = CASE WHEN ?20 THEN 0 ELSE broken_streak END + ?18,"
		       " last_broken_at = MAX(last_broken_at, ?19),"
		       " failing_since = CASE WHEN ?20 OR failing_since = 0 THEN ?21 ELSE failing_since END,"
		       " lost = lost + ?22, last_lost_at = MAX(last_lost_at, ?23)",
	[S_STATS] = "SELECT offer, market, runs, speed_sum, speed_n, items, run_ms, boots, boot_ms, alive_ms,"
		    " reclaims, launches, launch_failures, last_failure_at, last_launch_at, capacity_failures,"
		    " last_capacity_at, broken_streak, last_broken_at, failing_since, lost, last_lost_at FROM offer_stats",
	[S_LEDGER] = LEDGER_SELECT " WHERE s.end_at >= ?1 OR s.end_at = 0 ORDER BY s.id",
	/* segments_open, the partial index, holds these rows alone, in its
	 * order: by id, the query would walk the whole table. */
	[S_LEDGER_OPEN] = LEDGER_SELECT " WHERE s.end_at = 0 ORDER BY s.instance_id",
	[S_SUM_ADD] = "INSERT INTO ledger_sums VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"
		      " ON CONFLICT DO UPDATE SET ms = ms + ?6, gpu_ms = gpu_ms + ?7, cost = cost + ?8,"
		      " items = items + ?9",
	[S_SUMS] = "SELECT offer, market, kind, team, SUM(ms), SUM(gpu_ms), SUM(cost), SUM(items) FROM ledger_sums"
		   " WHERE day BETWEEN ?1 AND ?2 GROUP BY offer, market, kind, team ORDER BY offer, market, kind, team",
	/* jobs_dead gives the window; a bare column beside MAX() is SQLite's
	 * value from the row of the maximum: the last job's. */
	[S_DEAD] = "SELECT lane, COUNT(*), MIN(finished_at), MAX(finished_at), id, error, SUM(cost) FROM jobs"
		   " WHERE state = 'dead' AND finished_at >= ?1 GROUP BY lane ORDER BY lane",
	[S_ALERT_PUT] = "INSERT OR REPLACE INTO alerts VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
	[S_ALERT_DELETE] = "DELETE FROM alerts WHERE key = ?1",
	[S_ALERTS] = "SELECT key, name, labels, firing, since, fired_at, value, summary FROM alerts ORDER BY key",
	[S_DEC_LIST] = "SELECT id, at, kind, offer, count, instance_id, reason FROM decisions"
		       " ORDER BY id DESC LIMIT ?",
	[S_BUDGET_SET] = "INSERT OR REPLACE INTO team_budgets VALUES (?1, ?2, ?3)",
	[S_BUDGETS] = "SELECT team, budget, set_at FROM team_budgets ORDER BY team",
};

struct sqlite_store {
	struct store *st; /* the front end's, for its errmsg */
	sqlite3 *db;
	sqlite3_stmt *stmt[S_COUNT];
};

static struct sqlite_store *impl(struct store *st) { return st->db; }

static int fail(struct sqlite_store *s, const char *what)
{
	/* SQLITE_FULL on a write that found no room; an I/O error whose
	 * system call said ENOSPC (an fsync, a truncate) is the same want. */
	if (sqlite3_errcode(s->db) == SQLITE_FULL || sqlite3_system_errno(s->db) == ENOSPC)
		s->st->full = 1;
	snprintf(s->st->errmsg, sizeof s->st->errmsg, "sqlite: %s: %s", what, sqlite3_errmsg(s->db));
	return -1;
}

/* An update that found no row to write. */
static int missing(struct sqlite_store *s, const char *what, int64_t id)
{
	snprintf(s->st->errmsg, sizeof s->st->errmsg, "sqlite: update %s: no %s %lld", what, what, (long long)id);
	return -1;
}

/* Runs a statement that returns no rows and resets it. */
static int run(struct sqlite_store *s, enum stmt_id id)
{
	sqlite3_stmt *st = s->stmt[id];
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	if (rc != SQLITE_DONE)
		return fail(s, stmt_sql[id]);
	return 0;
}

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

static void bind_text(sqlite3_stmt *st, int i, const char *v)
{
	if (v)
		sqlite3_bind_text(st, i, v, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, i);
}

static char *column_text(sqlite3_stmt *st, int i)
{
	const unsigned char *v = sqlite3_column_text(st, i);
	return v ? strdup((const char *)v) : NULL;
}

/* A name column into a CONF_NAME_MAX buffer: a copy of known length, not
 * a snprintf per column of every job read. */
static void column_name(sqlite3_stmt *st, int i, char *dst)
{
	const unsigned char *v = sqlite3_column_text(st, i);
	size_t n = v ? (size_t)sqlite3_column_bytes(st, i) : 0;

	if (n > CONF_NAME_MAX)
		n = CONF_NAME_MAX;
	if (n)
		memcpy(dst, v, n);
	dst[n] = '\0';
}

/* Fills a job from a row of JOB_COLUMNS. */
static void read_job(sqlite3_stmt *st, struct job *j)
{
	int state;

	memset(j, 0, sizeof *j);
	j->id = sqlite3_column_int64(st, 0);
	state = job_state_parse((const char *)sqlite3_column_text(st, 1));
	j->state = state < 0 ? JOB_FAILED : (enum job_state)state;
	column_name(st, 2, j->type);
	column_name(st, 3, j->lane);
	j->lane_rank = sqlite3_column_int(st, 4);
	j->priority = sqlite3_column_int(st, 5);
	column_name(st, 6, j->team);
	j->command = column_text(st, 7);
	j->payload = column_text(st, 8);
	j->labels = column_text(st, 9);
	j->gpus = sqlite3_column_int(st, 10);
	j->min_vram_gb = sqlite3_column_int(st, 11);
	j->items = sqlite3_column_int64(st, 12);
	j->timeout_s = sqlite3_column_int64(st, 13);
	j->max_attempts = sqlite3_column_int(st, 14);
	j->attempts = sqlite3_column_int(st, 15);
	j->run_at_ms = sqlite3_column_int64(st, 16);
	j->created_ms = sqlite3_column_int64(st, 17);
	j->updated_ms = sqlite3_column_int64(st, 18);
	j->finished_ms = sqlite3_column_int64(st, 19);
	j->idem_key = column_text(st, 20);
	j->idem_hash = sqlite3_column_int64(st, 21);
	j->lease_token = sqlite3_column_int64(st, 22);
	column_name(st, 23, j->worker);
	j->lease_expires_ms = sqlite3_column_int64(st, 24);
	j->lease_ms = sqlite3_column_int64(st, 25);
	j->checkpoint = column_text(st, 26);
	j->items_done = sqlite3_column_int64(st, 27);
	j->error = column_text(st, 28);
	j->result = column_text(st, 29);
	j->seq = sqlite3_column_int64(st, 30);
	j->est_s = sqlite3_column_int64(st, 31);
	j->started_ms = sqlite3_column_int64(st, 32);
	j->cost = sqlite3_column_double(st, 33);
	j->items_start = sqlite3_column_int64(st, 34);
	j->items_lost = sqlite3_column_int64(st, 35);
	j->interruptions = sqlite3_column_int(st, 36);
	j->instance = sqlite3_column_int64(st, 37);
}

static int op_job_insert(struct store *base, struct job *j)
{
	struct sqlite_store *s = impl(base);
	sqlite3_stmt *st = s->stmt[S_INSERT];
	int rc;

	bind_text(st, 1, job_state_name(j->state));
	bind_text(st, 2, j->type);
	bind_text(st, 3, j->lane);
	sqlite3_bind_int(st, 4, j->lane_rank);
	sqlite3_bind_int(st, 5, j->priority);
	bind_text(st, 6, j->team);
	bind_text(st, 7, j->command);
	bind_text(st, 8, j->payload);
	bind_text(st, 9, j->labels);
	sqlite3_bind_int(st, 10, j->gpus);
	sqlite3_bind_int(st, 11, j->min_vram_gb);
	sqlite3_bind_int64(st, 12, j->items);
	sqlite3_bind_int64(st, 13, j->timeout_s);
	sqlite3_bind_int(st, 14, j->max_attempts);
	sqlite3_bind_int(st, 15, j->attempts);
	sqlite3_bind_int64(st, 16, j->run_at_ms);
	sqlite3_bind_int64(st, 17, j->created_ms);
	sqlite3_bind_int64(st, 18, j->updated_ms);
	sqlite3_bind_int64(st, 19, j->finished_ms);
	bind_text(st, 20, j->idem_key);
	sqlite3_bind_int64(st, 21, j->idem_hash);
	sqlite3_bind_int64(st, 22, j->lease_token);
	bind_text(st, 23, j->worker);
	sqlite3_bind_int64(st, 24, j->lease_expires_ms);
	sqlite3_bind_int64(st, 25, j->lease_ms);
	bind_text(st, 26, j->checkpoint);
	sqlite3_bind_int64(st, 27, j->items_done);
	bind_text(st, 28, j->error);
	bind_text(st, 29, j->result);
	sqlite3_bind_int64(st, 30, j->seq);
	sqlite3_bind_int64(st, 31, j->est_s);
	sqlite3_bind_int64(st, 32, j->started_ms);
	sqlite3_bind_double(st, 33, j->cost);
	sqlite3_bind_int64(st, 34, j->items_start);
	sqlite3_bind_int64(st, 35, j->items_lost);
	sqlite3_bind_int(st, 36, j->interruptions);
	sqlite3_bind_int64(st, 37, j->instance);
	rc = sqlite3_step(st);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	if (rc != SQLITE_DONE)
		return fail(s, "insert job");
	j->id = sqlite3_last_insert_rowid(s->db);
	return 0;
}

static int op_job_update(struct store *base, const struct job *j)
{
	struct sqlite_store *s = impl(base);
	sqlite3_stmt *st = s->stmt[S_UPDATE];
	int rc;

	sqlite3_bind_int64(st, 1, j->id);
	bind_text(st, 2, job_state_name(j->state));
	sqlite3_bind_int(st, 3, j->priority);
	sqlite3_bind_int(st, 4, j->attempts);
	sqlite3_bind_int64(st, 5, j->run_at_ms);
	sqlite3_bind_int64(st, 6, j->updated_ms);
	sqlite3_bind_int64(st, 7, j->finished_ms);
	sqlite3_bind_int64(st, 8, j->lease_token);
	bind_text(st, 9, j->worker);
	sqlite3_bind_int64(st, 10, j->lease_expires_ms);
	sqlite3_bind_int64(st, 11, j->lease_ms);
	bind_text(st, 12, j->checkpoint);
	sqlite3_bind_int64(st, 13, j->items_done);
	bind_text(st, 14, j->error);
	bind_text(st, 15, j->result);
	sqlite3_bind_int64(st, 16, j->seq);
	sqlite3_bind_int64(st, 17, j->started_ms);
	sqlite3_bind_double(st, 18, j->cost);
	sqlite3_bind_int64(st, 19, j->items_start);
	sqlite3_bind_int64(st, 20, j->items_lost);
	sqlite3_bind_int(st, 21, j->interruptions);
	sqlite3_bind_int64(st, 22, j->instance);
	rc = sqlite3_step(st);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	if (rc != SQLITE_DONE)
		return fail(s, "update job");
	return sqlite3_changes(s->db) == 1 ? 0 : missing(s, "job", j->id);
}

/* Steps a bound SELECT of JOB_COLUMNS once. */
static int fetch_one(struct sqlite_store *s, enum stmt_id id, struct job *out)
{
	sqlite3_stmt *st = s->stmt[id];
	int rc = sqlite3_step(st), ret = 0;

	if (rc == SQLITE_ROW)
		read_job(st, out);
	else if (rc == SQLITE_DONE)
		ret = STORE_NOT_FOUND;
	else
		ret = fail(s, stmt_sql[id]);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return ret;
}

static int op_job_get(struct store *base, int64_t id, struct job *out)
{
	struct sqlite_store *s = impl(base);

	sqlite3_bind_int64(s->stmt[S_GET], 1, id);
	return fetch_one(s, S_GET, out);
}

static int op_job_get_by_key(struct store *base, const char *team, const char *key,
			     struct job *out)
{
	struct sqlite_store *s = impl(base);

	bind_text(s->stmt[S_GET_BY_KEY], 1, team);
	bind_text(s->stmt[S_GET_BY_KEY], 2, key);
	return fetch_one(s, S_GET_BY_KEY, out);
}

static int op_job_next_ready(struct store *base, const struct lease_offer *o, struct job *out)
{
	struct sqlite_store *s = impl(base);
	sqlite3_stmt *st = s->stmt[S_NEXT_READY];
	char *full = NULL, *labels = NULL, *rooms = NULL;
	int rc;

	if (o->nfull_types > 0) {
		json_t *a = json_array();
		for (int i = 0; i < o->nfull_types; i++)
			json_array_append_new(a, json_string(o->full_types[i]));
		full = json_dumps(a, JSON_COMPACT);
		json_decref(a);
	}
	if (o->labels)
		labels = json_dumps(o->labels, JSON_COMPACT);
	if (o->nteams > 0) {
		json_t *r = json_object();
		for (int i = 0; i < o->nteams; i++)
			json_object_set_new(r, o->teams[i], json_integer(o->team_rooms[i]));
		rooms = json_dumps(r, JSON_COMPACT);
		json_decref(r);
	}
	sqlite3_bind_int(st, 1, o->gpus);
	sqlite3_bind_int(st, 2, o->vram_gb);
	bind_text(st, 3, full);
	bind_text(st, 4, labels);
	bind_text(st, 5, rooms);
	rc = fetch_one(s, S_NEXT_READY, out);
	free(full);
	free(labels);
	free(rooms);
	return rc;
}

static int op_job_list(struct store *base, const struct job_filter *f, job_cb cb, void *arg)
{
	struct sqlite_store *s = impl(base);
	sqlite3_stmt *st = s->stmt[S_LIST];
	struct job j;
	int rc, ret = 0;

	bind_text(st, 1, f->state >= 0 ? job_state_name((enum job_state)f->state) : NULL);
	bind_text(st, 2, f->lane);
	bind_text(st, 3, f->team);
	bind_text(st, 4, f->type);
	sqlite3_bind_int64(st, 5, f->after_id);
	sqlite3_bind_int(st, 6, f->limit);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		read_job(st, &j);
		ret = cb(arg, &j);
		job_free(&j);
		if (ret)
			break;
	}
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		ret = fail(s, "list jobs");
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return ret;
}

static int op_job_due(struct store *base, int64_t now_ms, int64_t *ids, int max, int *n)
{
	struct sqlite_store *s = impl(base);
	sqlite3_stmt *st = s->stmt[S_DUE];
	int rc;

	*n = 0;
	sqlite3_bind_int64(st, 1, now_ms);
	sqlite3_bind_int(st, 2, max);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		ids[(*n)++] = sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	if (rc != SQLITE_DONE)
		return fail(s, "due jobs");
	return 0;
}

static int op_job_leased_on(struct store *base, int64_t instance, struct job_on *out, int max, int *n)
{
	struct sqlite_store *s = impl(base);
	sqlite3_stmt *st = s->stmt[S_LEASED_ON];
	int rc;

	*n = 0;
	sqlite3_bind_int64(st, 1, instance);
	sqlite3_bind_int(st, 2, max);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		out[(*n)++] = (struct job_on){sqlite3_column_int64(st, 0), sqlite3_column_int(st, 1)};
	sqlite3_reset(st);
	if (rc != SQLITE_DONE)
		return fail(s, "jobs leased on an instance");
	return 0;
}

static int op_next_deadline(struct store *base, int64_t *out_ms)
{
	struct sqlite_store *s = impl(base);
	sqlite3_stmt *st = s->stmt[S_NEXT_DEADLINE];
	int rc = sqlite3_step(st);

	*out_ms = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
	sqlite3_reset(st);
	if (rc != SQLITE_ROW)
		return fail(s, "next deadline");
	return 0;
}

/* One scan at open; the front end keeps the counts from then on. */
static int op_job_count_rows(struct store *base, count_row_cb cb, void *arg)
{
	struct sqlite_store *s = impl(base);
	sqlite3_stmt *st;
	int rc, ret = 0;

	if (sqlite3_prepare_v2(s->db, "SELECT state, lane, type, team, COUNT(*) FROM jobs GROUP BY 1, 2, 3, 4", -1,
			       &st, NULL) != SQLITE_OK)
		return fail(s, "count jobs");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int state = job_state_parse((const char *)sqlite3_column_text(st, 0));
		ret = cb(arg, state < 0 ? JOB_FAILED : (enum job_state)state, (const char *)sqlite3_column_text(st, 1),
			 (const char *)sqlite3_column_text(st, 2), (const char *)sqlite3_column_text(st, 3),
			 sqlite3_column_int64(st, 4));
		if (ret)
			break;
	}
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		ret = fail(s, "count jobs");
	sqlite3_finalize(st);
	return ret;
}

static int op_demand(struct store *base, demand_cb cb, void *arg)
{
	struct sqlite_store *s = impl(base);
	sqlite3_stmt *st = s->stmt[S_DEMAND];
	int rc, ret = 0;

	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct demand_row r = {
			.gpus = sqlite3_column_int(st, 0),
			.min_vram_gb = sqlite3_column_int(st, 1),
			.lane = (const char *)sqlite3_column_text(st, 2),
			.type = (const char *)sqlite3_column_text(st, 3),
			.jobs = sqlite3_column_int64(st, 4),
			.jobs_without_est = sqlite3_column_int64(st, 5),
			.est_s = sqlite3_column_int64(st, 6),
			.oldest_ms = sqlite3_column_int64(st, 7),
			.items = sqlite3_column_int64(st, 8),
			.team = (const char *)sqlite3_column_text(st, 9),
			.priority = sqlite3_column_int(st, 10),
		};
		if ((ret = cb(arg, &r)) != 0)
			break;
	}
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		ret = fail(s, "demand");
	sqlite3_reset(st);
	return ret;
}

static int op_recent_submits(struct store *base, int limit, time_cb cb, void *arg)
{
	struct sqlite_store *s = impl(base);
	sqlite3_stmt *st = s->stmt[S_RECENT_SUBMITS];
	int rc, ret = 0;

	sqlite3_bind_int(st, 1, limit);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if ((ret = cb(arg, sqlite3_column_int64(st, 0))) != 0)
			break;
	}
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		ret = fail(s, "recent submits");
	sqlite3_reset(st);
	return ret;
}

static int op_arrivals(struct store *base, int64_t since_ms, int limit, arrival_cb cb, void *arg)
{
	struct sqlite_store *s = impl(base);
	sqlite3_stmt *st = s->stmt[S_ARRIVALS];
	int rc, ret = 0;

	sqlite3_bind_int(st, 1, limit);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct arrival_row r = {
			.gpus = sqlite3_column_int(st, 0),
			.min_vram_gb = sqlite3_column_int(st, 1),
			.lane = (const char *)sqlite3_column_text(st, 2),
			.type = (const char *)sqlite3_column_text(st, 3),
			.est_s = sqlite3_column_int64(st, 4),
			.created_ms = sqlite3_column_int64(st, 5),
			.team = (const char *)sqlite3_column_text(st, 6),
		};
		if (r.created_ms < since_ms)
			break;
		if ((ret = cb(arg, &r)) != 0)
			break;
	}
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		ret = fail(s, "arrivals");
	sqlite3_reset(st);
	return ret;
}

static int op_recent_durations(struct store *base, int limit, duration_cb cb, void *arg)
{
	struct sqlite_store *s = impl(base);
	sqlite3_stmt *st = s->stmt[S_RECENT_DURATIONS];
	int rc, ret = 0;

	sqlite3_bind_int(st, 1, limit);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if ((ret = cb(arg, (const char *)sqlite3_column_text(st, 0), sqlite3_column_int64(st, 1))) != 0)
			break;
	}
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		ret = fail(s, "recent durations");
	sqlite3_reset(st);
	return ret;
}

static void read_instance(sqlite3_stmt *st, struct instance *i)
{
	const char *v;
	int state;

	memset(i, 0, sizeof *i);
	i->id = sqlite3_column_int64(st, 0);
	column_name(st, 1, i->offer);
	v = (const char *)sqlite3_column_text(st, 2);
	i->market = v && market_parse(v) == MARKET_SPOT ? MARKET_SPOT : MARKET_ONDEMAND;
	state = instance_state_parse((const char *)sqlite3_column_text(st, 3));
	i->state = state < 0 ? INST_TERMINATED : (enum instance_state)state;
	i->gpus = sqlite3_column_int(st, 4);
	i->vram_gb = sqlite3_column_int(st, 5);
	snprintf(i->gpu_ids, sizeof i->gpu_ids, "%s", (const char *)sqlite3_column_text(st, 6));
	snprintf(i->provider_ref, sizeof i->provider_ref, "%s", (const char *)sqlite3_column_text(st, 7));
	i->launched_ms = sqlite3_column_int64(st, 8);
	i->registered_ms = sqlite3_column_int64(st, 9);
	i->idle_since_ms = sqlite3_column_int64(st, 10);
	i->terminated_ms = sqlite3_column_int64(st, 11);
	i->updated_ms = sqlite3_column_int64(st, 12);
	i->job_id = sqlite3_column_int64(st, 13);
	snprintf(i->reason, sizeof i->reason, "%s", (const char *)sqlite3_column_text(st, 14));
	i->billed_ms = sqlite3_column_int64(st, 15);
	i->cost = sqlite3_column_double(st, 16);
	i->reclaim_at_ms = sqlite3_column_int64(st, 17);
	snprintf(i->token, sizeof i->token, "%s", (const char *)sqlite3_column_text(st, 18));
	column_name(st, 19, i->team);
}

static int write_instance(struct sqlite_store *s, enum stmt_id id, const struct instance *i)
{
	sqlite3_stmt *st = s->stmt[id];
	int rc;

	if (id == S_INST_UPDATE)
		sqlite3_bind_int64(st, 1, i->id);
	bind_text(st, 2, i->offer);
	bind_text(st, 3, market_name(i->market));
	bind_text(st, 4, instance_state_name(i->state));
	sqlite3_bind_int(st, 5, i->gpus);
	sqlite3_bind_int(st, 6, i->vram_gb);
	bind_text(st, 7, i->gpu_ids);
	bind_text(st, 8, i->provider_ref);
	sqlite3_bind_int64(st, 9, i->launched_ms);
	sqlite3_bind_int64(st, 10, i->registered_ms);
	sqlite3_bind_int64(st, 11, i->idle_since_ms);
	sqlite3_bind_int64(st, 12, i->terminated_ms);
	sqlite3_bind_int64(st, 13, i->updated_ms);
	sqlite3_bind_int64(st, 14, i->job_id);
	bind_text(st, 15, i->reason);
	sqlite3_bind_int64(st, 16, i->billed_ms);
	sqlite3_bind_double(st, 17, i->cost);
	sqlite3_bind_int64(st, 18, i->reclaim_at_ms);
	bind_text(st, 19, i->token);
	bind_text(st, 20, i->team);
	rc = sqlite3_step(st);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc == SQLITE_DONE ? 0 : fail(s, "write instance");
}

static int op_instance_insert(struct store *base, struct instance *i)
{
	struct sqlite_store *s = impl(base);

	if (write_instance(s, S_INST_INSERT, i) != 0)
		return -1;
	i->id = sqlite3_last_insert_rowid(s->db);
	return 0;
}

static int op_instance_update(struct store *base, const struct instance *i)
{
	struct sqlite_store *s = impl(base);

	if (write_instance(s, S_INST_UPDATE, i) != 0)
		return -1;
	return sqlite3_changes(s->db) == 1 ? 0 : missing(s, "instance", i->id);
}

/* Steps a bound SELECT of INST_COLUMNS once. */
static int fetch_instance(struct sqlite_store *s, enum stmt_id id, struct instance *out)
{
	sqlite3_stmt *st = s->stmt[id];
	int rc, ret = 0;

	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		read_instance(st, out);
	else if (rc == SQLITE_DONE)
		ret = STORE_NOT_FOUND;
	else
		ret = fail(s, stmt_sql[id]);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return ret;
}

static int op_instance_get(struct store *base, int64_t id, struct instance *out)
{
	struct sqlite_store *s = impl(base);

	sqlite3_bind_int64(s->stmt[S_INST_GET], 1, id);
	return fetch_instance(s, S_INST_GET, out);
}

static int op_instance_by_token(struct store *base, const char *token, struct instance *out)
{
	struct sqlite_store *s = impl(base);

	bind_text(s->stmt[S_INST_BY_TOKEN], 1, token);
	return fetch_instance(s, S_INST_BY_TOKEN, out);
}

static int op_instance_data_set(struct store *base, int64_t id, const char *data)
{
	struct sqlite_store *s = impl(base);
	sqlite3_stmt *st = s->stmt[S_DATA_SET];
	int rc;

	sqlite3_bind_int64(st, 1, id);
	bind_text(st, 2, data);
	rc = sqlite3_step(st);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	if (rc != SQLITE_DONE)
		return fail(s, "instance data");
	return sqlite3_changes(s->db) == 1 ? 0 : missing(s, "instance", id);
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
		ret = rc == SQLITE_DONE ? STORE_NOT_FOUND : fail(s, "instance data");
	sqlite3_reset(st);
	return ret;
}

static int op_instance_list(struct store *base, int with_terminated, instance_cb cb, void *arg)
{
	struct sqlite_store *s = impl(base);
	sqlite3_stmt *st = s->stmt[with_terminated ? S_INST_ALL : S_INST_LIVE];
	struct instance i;
	int rc, ret = 0;

	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		read_instance(st, &i);
		if ((ret = cb(arg, &i)) != 0)
			break;
	}
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		ret = fail(s, "list instances");
	sqlite3_reset(st);
	return ret;
}

static int op_decision_insert(struct store *base, const struct decision *d)
{
	struct sqlite_store *s = impl(base);
	sqlite3_stmt *st = s->stmt[S_DEC_INSERT];
	int rc;

	sqlite3_bind_int64(st, 1, d->at_ms);
	bind_text(st, 2, d->kind);
	bind_text(st, 3, d->offer);
	sqlite3_bind_int(st, 4, d->count);
	sqlite3_bind_int64(st, 5, d->instance);
	bind_text(st, 6, d->reason);
	rc = sqlite3_step(st);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc == SQLITE_DONE ? 0 : fail(s, "insert decision");
}

static int op_decision_list(struct store *base, int limit, decision_cb cb, void *arg)
{
	struct sqlite_store *s = impl(base);
	sqlite3_stmt *st = s->stmt[S_DEC_LIST];
	int rc, ret = 0;

	sqlite3_bind_int(st, 1, limit);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct decision d = {
			.id = sqlite3_column_int64(st, 0),
			.at_ms = sqlite3_column_int64(st, 1),
			.kind = (const char *)sqlite3_column_text(st, 2),
			.offer = (const char *)sqlite3_column_text(st, 3),
			.count = sqlite3_column_int(st, 4),
			.instance = sqlite3_column_int64(st, 5),
			.reason = (const char *)sqlite3_column_text(st, 6),
		};
		if ((ret = cb(arg, &d)) != 0)
			break;
	}
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		ret = fail(s, "list decisions");
	sqlite3_reset(st);
	return ret;
}

static int op_usage(struct store *base, int64_t since_ms, int64_t now_ms, int64_t *instance_ms,
		    int64_t *job_ms)
{
	struct sqlite_store *s = impl(base);
	sqlite3_stmt *st = s->stmt[S_USAGE];
	int rc;

	sqlite3_bind_int64(st, 1, since_ms);
	sqlite3_bind_int64(st, 2, now_ms);
	rc = sqlite3_step(st);
	*instance_ms = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
	*job_ms = rc == SQLITE_ROW ? sqlite3_column_int64(st, 1) : 0;
	sqlite3_reset(st);
	return rc == SQLITE_ROW ? 0 : fail(s, "usage");
}

static int op_dead_letters(struct store *base, int64_t since_ms, dead_letters_cb cb, void *arg)
{
	struct sqlite_store *s = impl(base);
	sqlite3_stmt *st = s->stmt[S_DEAD];
	int rc, ret = 0;

	sqlite3_bind_int64(st, 1, since_ms);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct dead_letters d = {
			.lane = (const char *)sqlite3_column_text(st, 0),
			.jobs = sqlite3_column_int64(st, 1),
			.first_ms = sqlite3_column_int64(st, 2),
			.last_ms = sqlite3_column_int64(st, 3),
			.last_job = sqlite3_column_int64(st, 4),
			.last_error = (const char *)sqlite3_column_text(st, 5),
			.cost = sqlite3_column_double(st, 6),
		};
		if ((ret = cb(arg, &d)) != 0)
			break;
	}
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		ret = fail(s, "dead letters");
	sqlite3_reset(st);
	return ret;
}

static int op_alert_put(struct store *base, const struct alert_row *a)
{
	struct sqlite_store *s = impl(base);
	sqlite3_stmt *st = s->stmt[S_ALERT_PUT];

	bind_text(st, 1, a->key);
	bind_text(st, 2, a->name);
	bind_text(st, 3, a->labels);
	sqlite3_bind_int(st, 4, a->firing);
	sqlite3_bind_int64(st, 5, a->since_ms);
	sqlite3_bind_int64(st, 6, a->fired_ms);
	sqlite3_bind_double(st, 7, a->value);
	bind_text(st, 8, a->summary);
	return run(s, S_ALERT_PUT);
}

static int op_alert_delete(struct store *base, const char *key)
{
	struct sqlite_store *s = impl(base);

	bind_text(s->stmt[S_ALERT_DELETE], 1, key);
	return run(s, S_ALERT_DELETE);
}

static int op_alerts(struct store *base, alert_cb cb, void *arg)
{
	struct sqlite_store *s = impl(base);
	sqlite3_stmt *st = s->stmt[S_ALERTS];
	int rc, ret = 0;

	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct alert_row a = {
			.key = (const char *)sqlite3_column_text(st, 0),
			.name = (const char *)sqlite3_column_text(st, 1),
			.labels = (const char *)sqlite3_column_text(st, 2),
			.firing = sqlite3_column_int(st, 3),
			.since_ms = sqlite3_column_int64(st, 4),
			.fired_ms = sqlite3_column_int64(st, 5),
			.value = sqlite3_column_double(st, 6),
			.summary = (const char *)sqlite3_column_text(st, 7),
		};
		if ((ret = cb(arg, &a)) != 0)
			break;
	}
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		ret = fail(s, "alerts");
	sqlite3_reset(st);
	return ret;
}

static int op_team_budget_set(struct store *base, const struct team_budget *b)
{
	struct sqlite_store *s = impl(base);
	sqlite3_stmt *st = s->stmt[S_BUDGET_SET];

	bind_text(st, 1, b->team);
	sqlite3_bind_double(st, 2, b->budget);
	sqlite3_bind_int64(st, 3, b->set_ms);
	return run(s, S_BUDGET_SET);
}

static int op_team_budgets(struct store *base, team_budget_cb cb, void *arg)
{
	struct sqlite_store *s = impl(base);
	sqlite3_stmt *st = s->stmt[S_BUDGETS];
	int rc, ret = 0;

	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct team_budget b = {
			.team = (const char *)sqlite3_column_text(st, 0),
			.budget = sqlite3_column_double(st, 1),
			.set_ms = sqlite3_column_int64(st, 2),
		};
		if ((ret = cb(arg, &b)) != 0)
			break;
	}
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		ret = fail(s, "team budgets");
	sqlite3_reset(st);
	return ret;
}

static int op_segment_open(struct store *base, const struct segment *g)
{
	struct sqlite_store *s = impl(base);
	sqlite3_stmt *st = s->stmt[S_SEG_OPEN];
	int rc;

	sqlite3_bind_int64(st, 1, g->instance);
	bind_text(st, 2, g->kind);
	sqlite3_bind_int64(st, 3, g->job);
	sqlite3_bind_int64(st, 4, g->start_ms);
	sqlite3_bind_int64(st, 5, g->end_ms);
	sqlite3_bind_double(st, 6, g->cost);
	sqlite3_bind_int(st, 7, g->gpus);
	rc = sqlite3_step(st);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc == SQLITE_DONE ? 0 : fail(s, "open segment");
}

static int op_segment_close(struct store *base, int64_t instance, int64_t end_ms, double usd_per_ms,
			    int instance_gpus, struct segment *closed)
{
	struct sqlite_store *s = impl(base);
	sqlite3_stmt *find = s->stmt[S_SEG_FIND], *upd = s->stmt[S_SEG_CLOSE];
	int64_t id;
	int rc;

	sqlite3_bind_int64(find, 1, instance);
	rc = sqlite3_step(find);
	if (rc != SQLITE_ROW) {
		sqlite3_reset(find);
		return rc == SQLITE_DONE ? STORE_NOT_FOUND : fail(s, "find segment");
	}
	id = sqlite3_column_int64(find, 0);
	*closed = (struct segment){
		.instance = instance,
		.job = sqlite3_column_int64(find, 2),
		.start_ms = sqlite3_column_int64(find, 3),
		.end_ms = end_ms,
		.gpus = sqlite3_column_int(find, 4),
	};
	snprintf(closed->kind, sizeof closed->kind, "%s", (const char *)sqlite3_column_text(find, 1));
	sqlite3_reset(find);
	closed->cost = (double)(end_ms - closed->start_ms) * usd_per_ms * segment_share(closed, instance_gpus);
	sqlite3_bind_int64(upd, 1, id);
	sqlite3_bind_int64(upd, 2, end_ms);
	sqlite3_bind_double(upd, 3, closed->cost);
	rc = sqlite3_step(upd);
	sqlite3_reset(upd);
	return rc == SQLITE_DONE ? 0 : fail(s, "close segment");
}

static int op_job_add_cost(struct store *base, int64_t job, double usd)
{
	struct sqlite_store *s = impl(base);
	sqlite3_stmt *st = s->stmt[S_JOB_COST];
	int rc;

	sqlite3_bind_int64(st, 1, job);
	sqlite3_bind_double(st, 2, usd);
	rc = sqlite3_step(st);
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? 0 : fail(s, "job cost");
}

static int op_offer_stat_add(struct store *base, const struct offer_stat *d)
{
	struct sqlite_store *s = impl(base);
	sqlite3_stmt *st = s->stmt[S_STAT_ADD];
	int rc;

	bind_text(st, 1, d->offer);
	bind_text(st, 2, market_name(d->market));
	sqlite3_bind_int64(st, 3, d->runs);
	sqlite3_bind_double(st, 4, d->speed_sum);
	sqlite3_bind_int64(st, 5, d->speed_n);
	sqlite3_bind_int64(st, 6, d->items);
	sqlite3_bind_int64(st, 7, d->run_ms);
	sqlite3_bind_int64(st, 8, d->boots);
	sqlite3_bind_int64(st, 9, d->boot_ms);
	sqlite3_bind_int64(st, 10, d->alive_ms);
	sqlite3_bind_int64(st, 11, d->reclaims);
	sqlite3_bind_int64(st, 12, d->launches);
	sqlite3_bind_int64(st, 13, d->launch_failures);
	sqlite3_bind_int64(st, 14, d->last_failure_ms);
	sqlite3_bind_int64(st, 15, d->last_launch_ms);
	sqlite3_bind_int64(st, 16, d->capacity_failures);
	sqlite3_bind_int64(st, 17, d->last_capacity_ms);
	sqlite3_bind_int64(st, 18, d->broken_streak);
	sqlite3_bind_int64(st, 19, d->last_broken_ms);
	sqlite3_bind_int(st, 20, d->launched_ok);
	sqlite3_bind_int64(st, 21, d->failing_since_ms);
	sqlite3_bind_int64(st, 22, d->lost);
	sqlite3_bind_int64(st, 23, d->last_lost_ms);
	rc = sqlite3_step(st);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc == SQLITE_DONE ? 0 : fail(s, "offer stats");
}

static int op_offer_stats(struct store *base, offer_stat_cb cb, void *arg)
{
	struct sqlite_store *s = impl(base);
	sqlite3_stmt *st = s->stmt[S_STATS];
	int rc, ret = 0;

	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int m = market_parse((const char *)sqlite3_column_text(st, 1));
		struct offer_stat o = {
			.offer = (const char *)sqlite3_column_text(st, 0),
			.market = m < 0 ? MARKET_ONDEMAND : (enum market)m,
			.runs = sqlite3_column_int64(st, 2),
			.speed_sum = sqlite3_column_double(st, 3),
			.speed_n = sqlite3_column_int64(st, 4),
			.items = sqlite3_column_int64(st, 5),
			.run_ms = sqlite3_column_int64(st, 6),
			.boots = sqlite3_column_int64(st, 7),
			.boot_ms = sqlite3_column_int64(st, 8),
			.alive_ms = sqlite3_column_int64(st, 9),
			.reclaims = sqlite3_column_int64(st, 10),
			.launches = sqlite3_column_int64(st, 11),
			.launch_failures = sqlite3_column_int64(st, 12),
			.last_failure_ms = sqlite3_column_int64(st, 13),
			.last_launch_ms = sqlite3_column_int64(st, 14),
			.capacity_failures = sqlite3_column_int64(st, 15),
			.last_capacity_ms = sqlite3_column_int64(st, 16),
			.broken_streak = sqlite3_column_int64(st, 17),
			.last_broken_ms = sqlite3_column_int64(st, 18),
			.failing_since_ms = sqlite3_column_int64(st, 19),
			.lost = sqlite3_column_int64(st, 20),
			.last_lost_ms = sqlite3_column_int64(st, 21),
		};
		if ((ret = cb(arg, &o)) != 0)
			break;
	}
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		ret = fail(s, "offer stats");
	sqlite3_reset(st);
	return ret;
}

/* Steps a bound statement of LEDGER_SELECT through cb. */
static int walk_ledger(struct sqlite_store *s, enum stmt_id id, ledger_cb cb, void *arg)
{
	sqlite3_stmt *st = s->stmt[id];
	int rc, ret = 0;

	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int m = market_parse((const char *)sqlite3_column_text(st, 7));
		struct segment g = {
			.instance = sqlite3_column_int64(st, 0),
			.job = sqlite3_column_int64(st, 2),
			.start_ms = sqlite3_column_int64(st, 3),
			.end_ms = sqlite3_column_int64(st, 4),
			.cost = sqlite3_column_double(st, 5),
			.gpus = sqlite3_column_int(st, 14),
		};
		snprintf(g.kind, sizeof g.kind, "%s", (const char *)sqlite3_column_text(st, 1));
		struct ledger_row r = {
			.seg = &g,
			.offer = (const char *)sqlite3_column_text(st, 6),
			.market = m < 0 ? MARKET_ONDEMAND : (enum market)m,
			.gpus = sqlite3_column_int(st, 8),
			.team = (const char *)sqlite3_column_text(st, 9),
			.type = (const char *)sqlite3_column_text(st, 10),
			.items_done = sqlite3_column_int64(st, 11),
			.items_lost = sqlite3_column_int64(st, 12),
			.reclaimed = sqlite3_column_int(st, 13),
			.launch_team = (const char *)sqlite3_column_text(st, 15),
		};
		if ((ret = cb(arg, &r)) != 0)
			break;
	}
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		ret = fail(s, "ledger");
	sqlite3_reset(st);
	return ret;
}

static int op_ledger(struct store *base, int64_t since_ms, ledger_cb cb, void *arg)
{
	struct sqlite_store *s = impl(base);

	sqlite3_bind_int64(s->stmt[S_LEDGER], 1, since_ms);
	return walk_ledger(s, S_LEDGER, cb, arg);
}

static int op_ledger_open(struct store *base, ledger_cb cb, void *arg)
{
	return walk_ledger(impl(base), S_LEDGER_OPEN, cb, arg);
}

static int op_ledger_add(struct store *base, int64_t day, const struct ledger_sum *d)
{
	struct sqlite_store *s = impl(base);
	sqlite3_stmt *st = s->stmt[S_SUM_ADD];

	sqlite3_bind_int64(st, 1, day);
	bind_text(st, 2, d->offer);
	bind_text(st, 3, market_name(d->market));
	bind_text(st, 4, d->kind);
	bind_text(st, 5, d->team);
	sqlite3_bind_int64(st, 6, d->ms);
	sqlite3_bind_double(st, 7, d->gpu_ms);
	sqlite3_bind_double(st, 8, d->cost);
	sqlite3_bind_int64(st, 9, d->items);
	return run(s, S_SUM_ADD);
}

static int op_ledger_sums(struct store *base, int64_t first_day, int64_t last_day, ledger_sum_cb cb, void *arg)
{
	struct sqlite_store *s = impl(base);
	sqlite3_stmt *st = s->stmt[S_SUMS];
	int rc, ret = 0;

	sqlite3_bind_int64(st, 1, first_day);
	sqlite3_bind_int64(st, 2, last_day);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int m = market_parse((const char *)sqlite3_column_text(st, 1));
		struct ledger_sum sum = {
			.offer = (const char *)sqlite3_column_text(st, 0),
			.market = m < 0 ? MARKET_ONDEMAND : (enum market)m,
			.kind = (const char *)sqlite3_column_text(st, 2),
			.team = (const char *)sqlite3_column_text(st, 3),
			.ms = sqlite3_column_int64(st, 4),
			.gpu_ms = sqlite3_column_double(st, 5),
			.cost = sqlite3_column_double(st, 6),
			.items = sqlite3_column_int64(st, 7),
		};
		if ((ret = cb(arg, &sum)) != 0)
			break;
	}
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		ret = fail(s, "ledger sums");
	sqlite3_reset(st);
	return ret;
}

static void op_close(struct store *base)
{
	struct sqlite_store *s = impl(base);

	for (int i = 0; i < S_COUNT; i++)
		sqlite3_finalize(s->stmt[i]);
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
		return fail(s, "schema version");
	rc = sqlite3_step(st);
	*version = rc == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : fail(s, "schema version");
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

static int op_open(struct store *base, const struct config *cfg)
{
	struct sqlite_store *s = calloc(1, sizeof *s);
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
	    migrate(s) != 0)
		goto fail;
	for (int i = 0; i < S_COUNT; i++) {
		if (sqlite3_prepare_v3(s->db, stmt_sql[i], -1, SQLITE_PREPARE_PERSISTENT, &s->stmt[i],
				       NULL) != SQLITE_OK) {
			fail(s, stmt_sql[i]);
			goto fail;
		}
	}
	return 0;
fail: {
	char why[sizeof base->errmsg];
	snprintf(why, sizeof why, "%s", base->errmsg);
	snprintf(base->errmsg, sizeof base->errmsg, "%.250s: %.250s", path, why);
	return -1;
}
}

const struct store_engine store_engine_sqlite = {
	.conf = {.name = "sqlite", .help = "The SQLite store: DATA_DIR/ebb.db."},
	.open = op_open,
	.close = op_close,
	.begin = op_begin,
	.commit = op_commit,
	.rollback = op_rollback,
	.savepoint = op_savepoint,
	.release = op_release,
	.rollback_savepoint = op_rollback_savepoint,
	.job_count_rows = op_job_count_rows,
	.job_insert = op_job_insert,
	.job_update = op_job_update,
	.job_get = op_job_get,
	.job_get_by_key = op_job_get_by_key,
	.job_next_ready = op_job_next_ready,
	.job_list = op_job_list,
	.job_due = op_job_due,
	.job_leased_on = op_job_leased_on,
	.next_deadline = op_next_deadline,
	.demand = op_demand,
	.recent_submits = op_recent_submits,
	.recent_durations = op_recent_durations,
	.arrivals = op_arrivals,
	.usage = op_usage,
	.instance_insert = op_instance_insert,
	.instance_update = op_instance_update,
	.instance_get = op_instance_get,
	.instance_by_token = op_instance_by_token,
	.instance_data_set = op_instance_data_set,
	.instance_data = op_instance_data,
	.instance_list = op_instance_list,
	.decision_insert = op_decision_insert,
	.decision_list = op_decision_list,
	.segment_open = op_segment_open,
	.segment_close = op_segment_close,
	.job_add_cost = op_job_add_cost,
	.offer_stat_add = op_offer_stat_add,
	.offer_stats = op_offer_stats,
	.ledger = op_ledger,
	.ledger_open = op_ledger_open,
	.ledger_add = op_ledger_add,
	.ledger_sums = op_ledger_sums,
	.dead_letters = op_dead_letters,
	.alert_put = op_alert_put,
	.alert_delete = op_alert_delete,
	.alerts = op_alerts,
	.team_budget_set = op_team_budget_set,
	.team_budgets = op_team_budgets,
};
