/* The PostgreSQL store engine: one connection (libpq) to the database
 * [postgres] url names, its schema made and migrated at open under an
 * advisory lock, every statement prepared once. A commit returns once
 * the server says COMMIT with synchronous_commit on: durable on the
 * server's disk. The next ready job is read FOR UPDATE SKIP LOCKED, so
 * that a job another writer holds in its open batch is passed over, not
 * waited for. Values travel as text, the protocol's plainest form. The
 * contract it keeps is store/engine.h. */
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/config.h"
#include "common/fnv.h"
#include "common/log.h"
#include "common/mem.h"
#include "common/textfile.h"
#include "store/counts.h"
#include "store/engine.h"
#include "store/pg_args.h"
#include "store/pq_lazy.h"
#include "store/rows.h"
#include "store/sql.h"

struct pg_conf {
	char *url;
	char *password_file;
	int64_t standby;
	int64_t active;
};

#define PGC(field) offsetof(struct pg_conf, field)
static const struct conf_key pg_keys[] = {
	{"url", CONF_STRING, PGC(url), 0, 4095, "", NULL,
	 "The database: a libpq connection string (host=db.internal dbname=ebb user=ebb) or URI. Required with "
	 "kind = postgres. Keep the password out of it (password_file).",
	 .secret = 1},
	{"password_file", CONF_STRING, PGC(password_file), 0, 4095, "", NULL,
	 "A file whose first line is the database password, never logged. Empty: libpq's own (PGPASSWORD, "
	 "~/.pgpass)."},
	{"standby", CONF_BOOL, PGC(standby), 0, 1, "off", NULL,
	 "on: a serve that finds the database in use by another waits, and takes over when that one is gone; "
	 "off: it does not start."},
	{"active", CONF_BOOL, PGC(active), 0, 1, "off", NULL,
	 "on: every serve on this database answers the API at once; the one that holds the lock runs the scaler "
	 "(docs/HA.md)."},
	{0},
};

/* Each entry takes the schema one version further; never edit a shipped
 * one, append a new one. The first is SQLite's eight migrations, whole:
 * the same tables, columns and indexes, in PostgreSQL's types. */
/* LEASE_WINDOW (engine.h) in the text of migration 10's function. */
#define TEXT_OF(n) #n
#define EXPANDED_TEXT_OF(n) TEXT_OF(n)
#define WINDOW_TEXT EXPANDED_TEXT_OF(LEASE_WINDOW)

/* The two statements of the lease function of migrations 12 and 13
 * (their text is the same in both; 13 changed only how the job found is
 * locked). The window: the fitting ids of the first LEASE_WINDOW queued
 * jobs past the point, in lease order, and how many it read. */
#define NEXT_READY_WINDOW \
	" SELECT array_agg(w.id ORDER BY w.lane_rank, -w.priority, w.seq, w.id) FILTER (WHERE w.gpus <= $1" \
	"   AND w.min_vram_gb <= $2 AND ($3 IS NULL OR NOT $3 ? w.type)" \
	"   AND (w.labels IS NULL OR w.labels::jsonb <@ COALESCE($4, '[]'::jsonb))" \
	"   AND ($5 IS NULL OR NOT EXISTS (SELECT 1 FROM jsonb_each_text($5) r" \
	"    WHERE r.key = w.team AND r.value::bigint < GREATEST(w.gpus, 1)))), count(*)" \
	"  INTO fit, seen FROM (SELECT id, lane_rank, priority, seq, gpus, min_vram_gb, type, labels, team FROM jobs" \
	"   WHERE state = 'queued' AND (lane_rank, -priority, seq, id) > ($7, $8, $9, $10)" \
	"   ORDER BY lane_rank, -priority, seq, id LIMIT " WINDOW_TEXT ") w;"
/* The head of each queued class the offer fits ($6), the first of them
 * in lease order: what follows the statement's SELECT ... INTO. */
#define NEXT_READY_HEADS \
	" FROM jsonb_to_recordset($6)" \
	"   AS c(lane text, type text, team text, gpus int, min_vram_gb int, priority int)," \
	"  LATERAL (SELECT * FROM jobs q WHERE q.state = 'queued' AND q.lane = c.lane AND q.type = c.type" \
	"   AND q.team = c.team AND q.gpus = c.gpus AND q.min_vram_gb = c.min_vram_gb AND q.priority = c.priority" \
	"   AND (q.labels IS NULL OR q.labels::jsonb <@ COALESCE($4, '[]'::jsonb))" \
	"   AND (q.lane_rank, -q.priority, q.seq, q.id) > ($7, $8, $9, $10) AND q.id <> ALL (skipped)" \
	"   ORDER BY q.lane_rank, q.seq, q.id LIMIT 1) j" \
	"  ORDER BY j.lane_rank, -j.priority, j.seq, j.id LIMIT 1;"

static const char *const migrations[] = {
	"CREATE TABLE jobs ("
	" id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
	" state TEXT NOT NULL, type TEXT NOT NULL, lane TEXT NOT NULL,"
	" lane_rank INTEGER NOT NULL, priority INTEGER NOT NULL, team TEXT NOT NULL,"
	" command TEXT, payload TEXT, labels TEXT,"
	" gpus INTEGER NOT NULL, min_vram_gb INTEGER NOT NULL, items BIGINT NOT NULL,"
	" timeout_s BIGINT NOT NULL, max_attempts INTEGER NOT NULL, attempts INTEGER NOT NULL,"
	" run_at BIGINT NOT NULL, created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL,"
	" finished_at BIGINT NOT NULL, idem_key TEXT, idem_hash BIGINT NOT NULL,"
	" lease_token BIGINT NOT NULL, worker TEXT NOT NULL, lease_expires BIGINT NOT NULL,"
	" lease_ms BIGINT NOT NULL, checkpoint TEXT, items_done BIGINT NOT NULL,"
	" error TEXT, result TEXT, seq BIGINT NOT NULL, est_s BIGINT NOT NULL, started_at BIGINT NOT NULL,"
	" cost DOUBLE PRECISION NOT NULL, items_start BIGINT NOT NULL, items_lost BIGINT NOT NULL,"
	" interruptions INTEGER NOT NULL, instance_id BIGINT NOT NULL);"
	"CREATE INDEX jobs_ready ON jobs(lane_rank, priority DESC, seq, id) WHERE state = 'queued';"
	"CREATE INDEX jobs_delayed ON jobs(run_at) WHERE state = 'delayed';"
	"CREATE INDEX jobs_leased ON jobs(lease_expires) WHERE state = 'leased';"
	"CREATE UNIQUE INDEX jobs_idem ON jobs(team, idem_key) WHERE idem_key IS NOT NULL;"
	"CREATE INDEX jobs_finished ON jobs(finished_at) WHERE state = 'succeeded';"
	"CREATE INDEX jobs_dead ON jobs(finished_at) WHERE state = 'dead';"
	"CREATE TABLE instances ("
	" id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, offer TEXT NOT NULL, market TEXT NOT NULL,"
	" state TEXT NOT NULL, gpus INTEGER NOT NULL, vram_gb INTEGER NOT NULL, gpu_ids TEXT NOT NULL,"
	" provider_ref TEXT NOT NULL, launched_at BIGINT NOT NULL, registered_at BIGINT NOT NULL,"
	" idle_since BIGINT NOT NULL, terminated_at BIGINT NOT NULL, updated_at BIGINT NOT NULL,"
	" job_id BIGINT NOT NULL, reason TEXT NOT NULL, billed_ms BIGINT NOT NULL,"
	" cost DOUBLE PRECISION NOT NULL, reclaim_at BIGINT NOT NULL, token TEXT NOT NULL,"
	" provider_data TEXT NOT NULL DEFAULT '');"
	"CREATE INDEX instances_live ON instances(id) WHERE state <> 'terminated';"
	"CREATE INDEX instances_token ON instances(token) WHERE token <> '';"
	"CREATE TABLE instance_events (instance_id BIGINT NOT NULL, at BIGINT NOT NULL,"
	" state TEXT NOT NULL, reason TEXT NOT NULL);"
	"CREATE FUNCTION instance_event() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
	" INSERT INTO instance_events VALUES (NEW.id, NEW.updated_at, NEW.state, NEW.reason);"
	" RETURN NULL; END $$;"
	"CREATE TRIGGER instances_history_insert AFTER INSERT ON instances"
	" FOR EACH ROW EXECUTE FUNCTION instance_event();"
	"CREATE TRIGGER instances_history_update AFTER UPDATE OF state ON instances"
	" FOR EACH ROW WHEN (OLD.state IS DISTINCT FROM NEW.state) EXECUTE FUNCTION instance_event();"
	"CREATE TABLE decisions (id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, at BIGINT NOT NULL,"
	" kind TEXT NOT NULL, offer TEXT NOT NULL, count INTEGER NOT NULL, instance_id BIGINT NOT NULL,"
	" reason TEXT NOT NULL);"
	"CREATE TABLE segments (id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
	" instance_id BIGINT NOT NULL, kind TEXT NOT NULL, job_id BIGINT NOT NULL, start_at BIGINT NOT NULL,"
	" end_at BIGINT NOT NULL, cost DOUBLE PRECISION NOT NULL);"
	"CREATE INDEX segments_open ON segments(instance_id) WHERE end_at = 0;"
	"CREATE INDEX segments_instance ON segments(instance_id);"
	"CREATE TABLE offer_stats (offer TEXT NOT NULL, market TEXT NOT NULL,"
	" runs BIGINT NOT NULL, speed_sum DOUBLE PRECISION NOT NULL, speed_n BIGINT NOT NULL,"
	" items BIGINT NOT NULL, run_ms BIGINT NOT NULL, boots BIGINT NOT NULL, boot_ms BIGINT NOT NULL,"
	" alive_ms BIGINT NOT NULL, reclaims BIGINT NOT NULL, launches BIGINT NOT NULL,"
	" launch_failures BIGINT NOT NULL, last_failure_at BIGINT NOT NULL, last_launch_at BIGINT NOT NULL,"
	" capacity_failures BIGINT NOT NULL, last_capacity_at BIGINT NOT NULL,"
	" broken_streak BIGINT NOT NULL, last_broken_at BIGINT NOT NULL, failing_since BIGINT NOT NULL,"
	" lost BIGINT NOT NULL, last_lost_at BIGINT NOT NULL, PRIMARY KEY (offer, market));"
	"CREATE TABLE ledger_sums (day BIGINT NOT NULL, offer TEXT NOT NULL, market TEXT NOT NULL,"
	" kind TEXT NOT NULL, team TEXT NOT NULL, ms BIGINT NOT NULL, gpu_ms DOUBLE PRECISION NOT NULL,"
	" cost DOUBLE PRECISION NOT NULL, items BIGINT NOT NULL, PRIMARY KEY (day, offer, market, kind, team));"
	"CREATE TABLE alerts (key TEXT PRIMARY KEY, name TEXT NOT NULL, labels TEXT NOT NULL,"
	" firing INTEGER NOT NULL, since BIGINT NOT NULL, fired_at BIGINT NOT NULL,"
	" value DOUBLE PRECISION NOT NULL, summary TEXT NOT NULL);",
	/* 2: several jobs per instance, each segment the GPUs it holds (0:
	 * all of them, as every segment before) */
	"ALTER TABLE segments ADD COLUMN gpus INTEGER NOT NULL DEFAULT 0;",
	/* 3: SQLite's 10: the monthly budgets an admin set at run time; the
	 * team whose work an instance was launched for */
	"CREATE TABLE team_budgets (team TEXT PRIMARY KEY, budget DOUBLE PRECISION NOT NULL,"
	" set_at BIGINT NOT NULL);"
	"ALTER TABLE instances ADD COLUMN team TEXT NOT NULL DEFAULT '';",
	/* 4: the ready jobs in lease order with every key ascending, so that
	 * a lease may start past a point of it (S_NEXT_READY_AFTER) */
	("CREATE INDEX jobs_ready_order ON jobs(lane_rank, (-priority), seq, id) WHERE state = 'queued';"
	 "DROP INDEX jobs_ready;"),
	/* 5: SQLite's 11: what the jobs wrote, per attempt (serve/joblog.c) */
	"CREATE TABLE job_logs (job_id BIGINT NOT NULL, attempt INTEGER NOT NULL, seq BIGINT NOT NULL,"
	" at BIGINT NOT NULL, stream TEXT NOT NULL, text TEXT NOT NULL, PRIMARY KEY (job_id, attempt, seq));"
	"CREATE TABLE job_log_meta (job_id BIGINT NOT NULL, attempt INTEGER NOT NULL, next_seq BIGINT NOT NULL,"
	" dropped BIGINT NOT NULL, trimmed BIGINT NOT NULL, bytes BIGINT NOT NULL,"
	" head_end BIGINT NOT NULL, updated_at BIGINT NOT NULL,"
	" PRIMARY KEY (job_id, attempt));"
	"CREATE INDEX job_log_meta_updated ON job_log_meta(updated_at);",
	/* 6: SQLite's 12: every lease of a job and how its run ended */
	"CREATE TABLE job_attempts (job_id BIGINT NOT NULL, attempt INTEGER NOT NULL, instance_id BIGINT NOT NULL,"
	" offer TEXT NOT NULL, market TEXT NOT NULL, worker TEXT NOT NULL, started_at BIGINT NOT NULL,"
	" ended_at BIGINT NOT NULL, outcome TEXT NOT NULL, exit INTEGER NOT NULL, items_done BIGINT NOT NULL,"
	" checkpoint TEXT, reason TEXT, PRIMARY KEY (job_id, attempt));",
	/* 7: SQLite's 13: the last comparison `ebb tune --history --publish`
	 * sent, for the dashboard */
	"CREATE TABLE tunings (name TEXT PRIMARY KEY, body TEXT NOT NULL, published_at BIGINT NOT NULL);",
	/* 8: the jobs' tallies (store/counts.h), kept by every writer in the
	 * batch that changes the jobs, one set of rows per shard of serves,
	 * so that the counts and the scaler's demand read O(classes) rows;
	 * SQLite's 14, the seeks for a class's oldest queued job and for the
	 * jobs leased on an instance */
	"CREATE TABLE job_tallies (shard INTEGER NOT NULL, state TEXT NOT NULL, lane TEXT NOT NULL,"
	" type TEXT NOT NULL, team TEXT NOT NULL, gpus INTEGER NOT NULL, min_vram_gb INTEGER NOT NULL,"
	" priority INTEGER NOT NULL, n BIGINT NOT NULL, items BIGINT NOT NULL, no_est BIGINT NOT NULL,"
	" est_s BIGINT NOT NULL, run_ms BIGINT NOT NULL, PRIMARY KEY (shard, state, lane, type, team, gpus, min_vram_gb, priority));"
	PG_TALLIES_FILL ";"
	"CREATE INDEX jobs_queued_class ON jobs(lane, type, team, gpus, min_vram_gb, priority, created_at)"
	" WHERE state = 'queued';"
	"CREATE INDEX jobs_leased_on ON jobs(instance_id) WHERE state = 'leased';",
	/* 9: the next ready job that fits an offer past a point of the lease
	 * order, read from jobs_ready_order in that order whatever the
	 * statistics say (NEXT_READY below). What fits changes by a new
	 * migration that replaces it. */
	"CREATE FUNCTION ebb_next_ready(int, int, jsonb, jsonb, jsonb, int, int, bigint, bigint)"
	" RETURNS SETOF jobs LANGUAGE plpgsql ROWS 1 SET enable_sort = off AS $$ BEGIN RETURN QUERY"
	" SELECT * FROM jobs WHERE state = 'queued' AND gpus <= $1 AND min_vram_gb <= $2"
	" AND ($3 IS NULL OR NOT $3 ? type)"
	" AND (labels IS NULL OR labels::jsonb <@ COALESCE($4, '[]'::jsonb))"
	" AND ($5 IS NULL OR NOT EXISTS (SELECT 1 FROM jsonb_each_text($5) r"
	"  WHERE r.key = jobs.team AND r.value::bigint < GREATEST(jobs.gpus, 1)))"
	" AND (lane_rank, -priority, seq, id) > ($6, $7, $8, $9)"
	" ORDER BY lane_rank, -priority, seq, id LIMIT 1 FOR UPDATE SKIP LOCKED; END $$;",
	/* 10: SQLite's 15, each queued class in lease order; and the next
	 * ready job read without walking a backlog the offer cannot take:
	 * first the window of the lease order past the point, its first
	 * LEASE_WINDOW jobs, each that fits locked in turn (a loop over
	 * them, not a second query bounded by the last: a bound on a row of
	 * the index's keys ends a scan on its first column only, and the
	 * scan read the whole backlog, 13 ms behind 100,000); when none
	 * fits, the queued classes, found in jobs_class_order by a loose
	 * index scan (other serves' new classes show in the tallies a second
	 * late), and the head of each that fits, by a seek; the first head in
	 * lease order is locked, or, when another batch holds it (or leased
	 * it since), passed over and the heads read again. The heads are
	 * sorted, which enable_sort = off prices so high that the server
	 * would compile the query (JIT: a second a lease): jit = off. */
	"CREATE INDEX jobs_class_order ON jobs(lane, type, team, gpus, min_vram_gb, priority, lane_rank, seq, id)"
	" WHERE state = 'queued';"
	"CREATE OR REPLACE FUNCTION ebb_next_ready(int, int, jsonb, jsonb, jsonb, int, int, bigint, bigint)"
	" RETURNS SETOF jobs LANGUAGE plpgsql ROWS 1 SET enable_sort = off SET jit = off AS $$"
	" DECLARE w jobs; head jobs; seen int := 0; skipped bigint[] := '{}'; BEGIN"
	" FOR w IN SELECT * FROM jobs WHERE state = 'queued' AND (lane_rank, -priority, seq, id) > ($6, $7, $8, $9)"
	"  ORDER BY lane_rank, -priority, seq, id LIMIT " WINDOW_TEXT " LOOP"
	"  seen := seen + 1;"
	"  IF w.gpus <= $1 AND w.min_vram_gb <= $2 AND ($3 IS NULL OR NOT $3 ? w.type)"
	"   AND (w.labels IS NULL OR w.labels::jsonb <@ COALESCE($4, '[]'::jsonb))"
	"   AND ($5 IS NULL OR NOT EXISTS (SELECT 1 FROM jsonb_each_text($5) r"
	"    WHERE r.key = w.team AND r.value::bigint < GREATEST(w.gpus, 1))) THEN"
	"   RETURN QUERY SELECT * FROM jobs WHERE id = w.id AND state = 'queued' FOR UPDATE SKIP LOCKED;"
	"   IF FOUND THEN RETURN; END IF;"
	"  END IF;"
	" END LOOP;"
	" IF seen < " WINDOW_TEXT " THEN RETURN; END IF;"
	" LOOP"
	"  SELECT j.* INTO head FROM (WITH RECURSIVE c AS ("
	"   (SELECT q.lane, q.type, q.team, q.gpus, q.min_vram_gb, q.priority FROM jobs q WHERE q.state = 'queued'"
	"    ORDER BY q.lane, q.type, q.team, q.gpus, q.min_vram_gb, q.priority LIMIT 1)"
	"   UNION ALL SELECT n.* FROM c, LATERAL (SELECT q.lane, q.type, q.team, q.gpus, q.min_vram_gb, q.priority"
	"    FROM jobs q WHERE q.state = 'queued' AND (q.lane, q.type, q.team, q.gpus, q.min_vram_gb, q.priority)"
	"     > (c.lane, c.type, c.team, c.gpus, c.min_vram_gb, c.priority)"
	"    ORDER BY q.lane, q.type, q.team, q.gpus, q.min_vram_gb, q.priority LIMIT 1) n)"
	"   SELECT * FROM c) c,"
	"  LATERAL (SELECT * FROM jobs q WHERE q.state = 'queued' AND q.lane = c.lane AND q.type = c.type"
	"   AND q.team = c.team AND q.gpus = c.gpus AND q.min_vram_gb = c.min_vram_gb AND q.priority = c.priority"
	"   AND (q.labels IS NULL OR q.labels::jsonb <@ COALESCE($4, '[]'::jsonb))"
	"   AND (q.lane_rank, -q.priority, q.seq, q.id) > ($6, $7, $8, $9) AND q.id <> ALL (skipped)"
	"   ORDER BY q.lane_rank, q.seq, q.id LIMIT 1) j"
	"  WHERE c.gpus <= $1 AND c.min_vram_gb <= $2 AND ($3 IS NULL OR NOT $3 ? c.type)"
	"   AND ($5 IS NULL OR NOT EXISTS (SELECT 1 FROM jsonb_each_text($5) r"
	"    WHERE r.key = c.team AND r.value::bigint < GREATEST(c.gpus, 1)))"
	"  ORDER BY j.lane_rank, -j.priority, j.seq, j.id LIMIT 1;"
	"  IF NOT FOUND THEN RETURN; END IF;"
	"  RETURN QUERY SELECT * FROM jobs WHERE id = head.id AND state = 'queued' FOR UPDATE SKIP LOCKED;"
	"  IF FOUND THEN RETURN; END IF;"
	"  skipped := skipped || head.id;"
	" END LOOP; END $$;",
	/* 11: SQLite's 16, a segment the part of a GPU it holds */
	"ALTER TABLE segments ADD COLUMN gpu_part DOUBLE PRECISION NOT NULL DEFAULT 0;",
	/* 12: migration 10's lease, cheaper behind a backlog the offer
	 * cannot take (1.6 ms a lease behind a million, 0.3 now; SQLite's
	 * lease reads the same way: engine.h):
	 * - the queued classes the offer fits come from the serve's tallies
	 *   ($6, offer_classes_json), as SQLite's class heads do, instead of
	 *   a loose index scan over every class in the index;
	 * - the window is one statement that returns its fitting jobs' ids
	 *   and its length, not a loop that tests its rows one by one;
	 * - its statements keep one plan: every call planned each of them
	 *   again (PostgreSQL's plan cache prefers a plan made for the
	 *   call's values), half a millisecond; with enable_sort = off their
	 *   only plans are the ordered index scans, so a generic one loses
	 *   nothing.
	 * Migration 10's function (nine arguments) stays for the serves of
	 * the version before, which run on during an upgrade. */
	"CREATE FUNCTION ebb_next_ready(int, int, jsonb, jsonb, jsonb, jsonb, int, int, bigint, bigint)"
	" RETURNS SETOF jobs LANGUAGE plpgsql ROWS 1"
	" SET enable_sort = off SET jit = off SET plan_cache_mode = force_generic_plan AS $$"
	" DECLARE fit bigint[]; seen int; i bigint; head jobs; skipped bigint[] := '{}'; BEGIN"
	NEXT_READY_WINDOW
	" FOREACH i IN ARRAY COALESCE(fit, '{}') LOOP"
	"  RETURN QUERY SELECT * FROM jobs WHERE id = i AND state = 'queued' FOR UPDATE SKIP LOCKED;"
	"  IF FOUND THEN RETURN; END IF;"
	" END LOOP;"
	" IF seen < " WINDOW_TEXT " THEN RETURN; END IF;"
	" LOOP"
	"  SELECT j.* INTO head" NEXT_READY_HEADS
	"  IF NOT FOUND THEN RETURN; END IF;"
	"  RETURN QUERY SELECT * FROM jobs WHERE id = head.id AND state = 'queued' FOR UPDATE SKIP LOCKED;"
	"  IF FOUND THEN RETURN; END IF;"
	"  skipped := skipped || head.id;"
	" END LOOP; END $$;",
	/* 13: migration 12's lease, its job locked by its key whatever the
	 * statistics. A serve's connection keeps the plans the function made
	 * at its first leases; made on a table of a few hundred jobs never
	 * analyzed, the lock's (WHERE id = i AND state = 'queued') read the
	 * whole partial index of queued jobs, which the state names, as
	 * cheap there as the key: behind a burst of 100,000, 15 ms a lease
	 * until the next analyze. Now the lock names the id alone, which
	 * only the primary key serves (every other index of jobs is
	 * partial), and enable_seqscan = off keeps a table analyzed small
	 * from a sequential scan; the state is tested on the row locked. */
	"CREATE OR REPLACE FUNCTION ebb_next_ready(int, int, jsonb, jsonb, jsonb, jsonb, int, int, bigint, bigint)"
	" RETURNS SETOF jobs LANGUAGE plpgsql ROWS 1"
	" SET enable_sort = off SET enable_seqscan = off SET jit = off SET plan_cache_mode = force_generic_plan AS $$"
	" DECLARE fit bigint[]; seen int; i bigint; head jobs; skipped bigint[] := '{}'; BEGIN"
	NEXT_READY_WINDOW
	" FOREACH i IN ARRAY COALESCE(fit, '{}') LOOP"
	"  SELECT * INTO head FROM jobs WHERE id = i FOR UPDATE SKIP LOCKED;"
	"  IF FOUND AND head.state = 'queued' THEN RETURN NEXT head; RETURN; END IF;"
	" END LOOP;"
	" IF seen < " WINDOW_TEXT " THEN RETURN; END IF;"
	" LOOP"
	"  SELECT j.id INTO i" NEXT_READY_HEADS
	"  IF NOT FOUND THEN RETURN; END IF;"
	"  SELECT * INTO head FROM jobs WHERE id = i FOR UPDATE SKIP LOCKED;"
	"  IF FOUND AND head.state = 'queued' THEN RETURN NEXT head; RETURN; END IF;"
	"  skipped := skipped || i;"
	" END LOOP; END $$;",
};

#define NMIGRATIONS ((int)(sizeof migrations / sizeof *migrations))

/* The lock a serve holds on its database for as long as its connection
 * lives. Without [postgres] active, the front end keeps the job counts in
 * memory and the scaler assumes it is alone (engine.h: one writer), so a
 * second serve on the same database is refused, or waits as a standby,
 * as a second one on the same data directory is refused. With it, every
 * serve answers, and the lock says which one leads: runs the scaler and
 * calls the provider. The server drops it when the connection ends, a
 * crash's too. MIGRATE_LOCK keeps two serves starting at once from
 * migrating the schema together. */
#define SERVE_LOCK "7402"
#define MIGRATE_LOCK "7403"

#define LEDGER_SELECT                                                                             \
	"SELECT s.instance_id, s.kind, s.job_id, s.start_at, s.end_at, s.cost, i.offer, i.market," \
	" i.gpus, j.team, j.type, j.items_done, j.items_lost, (i.reclaim_at > 0)::int, s.gpus,"     \
	" i.team, s.gpu_part"                                                                       \
	" FROM segments s JOIN instances i ON i.id = s.instance_id"                                 \
	" LEFT JOIN jobs j ON j.id = s.job_id AND s.kind = 'job'"

/* The next ready job that fits the offer of a lease ($1 to $5: its
 * GPUs, its VRAM, the types it refuses, its labels, the teams' room; $6
 * the queued classes it fits) past a point of the lease order (key),
 * ebb_next_ready (migration 13's, which reads the window of the lease
 * order, then the heads of those classes, as SQLite's lease does:
 * engine.h). With several active serves the classes are the tallies as
 * last read: a class that another serve's submit made new is found in
 * the window, or once they are read again (its word makes them stale;
 * a parked lease is tried again then). A
 * job's labels must all be among the worker's: jsonb containment of
 * string arrays. SKIP LOCKED: a job another serve's open batch holds is
 * not waited for, and never leased twice.
 *
 * The lease order, lane rank, then priority (higher first), seq, id, is
 * jobs_ready_order's with every key ascending, (lane_rank, -priority,
 * seq, id), so that a lease may start past where the batch's last one
 * stopped (S_NEXT_READY_AFTER), and the first from below any job's key
 * (ranks start at 0). Read in that order, a lease stops at the first job
 * that fits. The planner would rather read every queued job and sort
 * them when it expects few to fit, as it does on a fresh database or
 * after a burst of submits, until the next analyze: 200 ms a lease with
 * 70,000 queued, against a tenth of a millisecond. The function's
 * enable_sort = off leaves it no other plan than the ordered index scan,
 * whatever the statistics say; a statement cannot carry a setting of its
 * own, a function can. */
#define NEXT_READY(key) \
	"SELECT {jobs} FROM ebb_next_ready($1::int, $2::int, $3::jsonb, $4::jsonb, $5::jsonb, $6::jsonb, " key ")"

/* Texts sort as bytes, as SQLite sorts them, whatever the database's
 * locale. */
#define C_ORDER(col) col " COLLATE \"C\""

/* The statements in this engine's dialect; the others are store/sql.c's. */
static const char *const stmt_sql[S_COUNT] = {
	[S_INSERT] = "INSERT INTO jobs ({jobs:fields}) VALUES ({jobs:marks}) RETURNING id",
	[S_NEXT_READY] = NEXT_READY("-1, 0, 0, 0"),
	[S_NEXT_READY_AFTER] = NEXT_READY("$7::int, $8::int, $9::bigint, $10::bigint"),
	[S_LIST] = "SELECT {jobs} FROM jobs WHERE id > $5"
		   " AND ($1::text IS NULL OR state = $1) AND ($2::text IS NULL OR lane = $2)"
		   " AND ($3::text IS NULL OR team = $3) AND ($4::text IS NULL OR type = $4)"
		   " AND ($7::bigint = 0 OR finished_at >= $7) AND ($8::bigint = 0 OR finished_at < $8)"
		   " ORDER BY id LIMIT $6",
	[S_LEASED_ON] = "SELECT id, GREATEST(gpus, 1) FROM jobs WHERE state = 'leased' AND instance_id = $1"
			" ORDER BY id LIMIT $2",
	/* LEAST passes over a NULL: no job delayed, or none leased. */
	[S_NEXT_DEADLINE] = "SELECT LEAST((SELECT MIN(run_at) FROM jobs WHERE state = 'delayed'),"
			    " (SELECT MIN(lease_expires) FROM jobs WHERE state = 'leased'))",
	/* The tallies of every shard, summed: O(classes). */
	[S_TALLIES] = "SELECT state, lane, type, team, gpus, min_vram_gb, priority, SUM(n), SUM(items), SUM(no_est),"
		      " SUM(est_s), SUM(run_ms), 0 FROM job_tallies GROUP BY 1, 2, 3, 4, 5, 6, 7"
		      " HAVING SUM(n) <> 0 OR SUM(items) <> 0 OR SUM(no_est) <> 0 OR SUM(est_s) <> 0 OR SUM(run_ms) <> 0",
	[S_TALLY_ADD] = "INSERT INTO job_tallies VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)"
			" ON CONFLICT (shard, state, lane, type, team, gpus, min_vram_gb, priority) DO UPDATE"
			" SET n = job_tallies.n + EXCLUDED.n, items = job_tallies.items + EXCLUDED.items,"
			" no_est = job_tallies.no_est + EXCLUDED.no_est, est_s = job_tallies.est_s + EXCLUDED.est_s,"
			" run_ms = job_tallies.run_ms + EXCLUDED.run_ms",
	/* Writers change the tallies in the batch that changes the jobs:
	 * while this is held, the jobs counted and the tallies read agree. */
	[S_TALLY_LOCK] = "LOCK TABLE job_tallies IN SHARE MODE",
	[S_RECENT_DURATIONS] = "SELECT type, finished_at - started_at FROM jobs"
			       " WHERE state = 'succeeded' AND started_at > 0"
			       " ORDER BY finished_at DESC, id DESC LIMIT $1",
	[S_INST_INSERT] = "INSERT INTO instances ({instances:fields}) VALUES ({instances:marks}) RETURNING id",
	[S_USAGE] = "SELECT COALESCE(SUM(CASE WHEN terminated_at > 0 THEN terminated_at ELSE $1::bigint END"
		    " - launched_at), 0) FROM instances",
	/* $1 to $22: the columns; $23: a launch worked. */
	[S_STAT_ADD] = "INSERT INTO offer_stats AS o ({offer_stats:fields}) VALUES ({offer_stats:marks})"
		       " ON CONFLICT (offer, market) DO UPDATE SET runs = o.runs + $3, speed_sum = o.speed_sum + $4,"
		       " speed_n = o.speed_n + $5, items = o.items + $6, run_ms = o.run_ms + $7,"
		       " boots = o.boots + $8, boot_ms = o.boot_ms + $9, alive_ms = o.alive_ms + $10,"
		       " reclaims = o.reclaims + $11, launches = o.launches + $12,"
		       " launch_failures = o.launch_failures + $13,"
		       " last_failure_at = GREATEST(o.last_failure_at, $14),"
		       " last_launch_at = GREATEST(o.last_launch_at, $15),"
		       " capacity_failures = o.capacity_failures + $16,"
		       " last_capacity_at = GREATEST(o.last_capacity_at, $17),"
		       " broken_streak = CASE WHEN $23::int <> 0 THEN 0 ELSE o.broken_streak END + $18,"
		       " last_broken_at = GREATEST(o.last_broken_at, $19),"
		       " failing_since = CASE WHEN $23::int <> 0 OR o.failing_since = 0 THEN $20"
		       "  ELSE o.failing_since END,"
		       " lost = o.lost + $21, last_lost_at = GREATEST(o.last_lost_at, $22)",
	[S_STATS] = "SELECT {offer_stats} FROM offer_stats ORDER BY " C_ORDER("offer") ", " C_ORDER("market"),
	[S_LEDGER] = LEDGER_SELECT " WHERE s.id > $2 AND s.id <= $3 AND (s.end_at >= $1 OR s.end_at = 0) ORDER BY s.id",
	[S_LEDGER_OPEN] = LEDGER_SELECT " WHERE s.end_at = 0 ORDER BY s.instance_id",
	[S_SUMS] = "SELECT offer, market, kind, team, SUM(ms), SUM(gpu_ms), SUM(cost), SUM(items) FROM ledger_sums"
		   " WHERE day BETWEEN $1 AND $2 GROUP BY offer, market, kind, team"
		   " ORDER BY " C_ORDER("offer") ", " C_ORDER("market") ", " C_ORDER("kind") ", " C_ORDER("team"),
	/* The last job of each lane: the one that died last (the highest id
	 * among those of the same time). */
	[S_DEAD] = "SELECT lane, COUNT(*), MIN(finished_at), MAX(finished_at),"
		   " (array_agg(id ORDER BY finished_at DESC, id DESC))[1],"
		   " (array_agg(error ORDER BY finished_at DESC, id DESC))[1], SUM(cost) FROM jobs"
		   " WHERE state = 'dead' AND finished_at >= $1 GROUP BY lane ORDER BY " C_ORDER("lane"),
	[S_ALERTS] = "SELECT {alerts} FROM alerts ORDER BY " C_ORDER("key"),
	[S_BUDGETS] = "SELECT {team_budgets} FROM team_budgets ORDER BY " C_ORDER("team"),
	/* SUM of bigints is numeric. */
	[S_LOG_TOTAL] = "SELECT COALESCE(SUM(bytes), 0)::bigint FROM job_log_meta",
	[S_TUNINGS] = "SELECT {tunings} FROM tunings ORDER BY " C_ORDER("name"),
	/* The database's clock, and who leads: what several serves share. */
	[S_NOW] = "SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint",
	/* The session that holds SERVE_LOCK (one key of 64 bits: its low
	 * half in objid), by the name it connected with. */
	[S_LEADER] = "SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid"
		     " WHERE l.locktype = 'advisory' AND l.classid = 0 AND l.objid = " SERVE_LOCK
		     " AND l.objsubid = 1 AND l.granted LIMIT 1",
	/* With several serves active, a batch locks what it reads before it
	 * writes it, until it ends: another serve's batch waits for the row,
	 * and reads it as this one left it. Due jobs another batch holds are
	 * passed over: that one puts them back. */
	[S_GET_LOCKED] = "SELECT {jobs} FROM jobs WHERE id = $1 FOR UPDATE",
	[S_INST_GET_LOCKED] = "SELECT {instances} FROM instances WHERE id = $1 FOR UPDATE",
	[S_DUE_LOCKED] = "SELECT id FROM jobs WHERE (state = 'delayed' AND run_at <= $1)"
			 " OR (state = 'leased' AND lease_expires <= $1) LIMIT $2 FOR UPDATE SKIP LOCKED",
};

struct pg_store {
	struct store *st; /* the front end's, for its errmsg */
	char *sql[S_COUNT]; /* every statement's text (sql_texts); NULL: SQLite's alone */
	PGconn *conn;
	int ready;         /* start_session() done on this connection */
	int in_batch;      /* between BEGIN and COMMIT or ROLLBACK */
	unsigned deferred; /* DEFER_* bits: the commands not sent yet */
	int piping;        /* in pipeline mode, with queries sent ahead */
	int unread;        /* the queries whose results are not read yet */
	int doomed;        /* one of them failed: the batch must not commit */
	int64_t last_job;  /* the job this batch read or wrote last */
	int64_t planned_for; /* the jobs in the store when this session's plans were last dropped */
	int shard;         /* of the tallies' rows this serve writes */
	const struct pg_conf *conf;
	const struct config *cfg;
	/* [postgres] active: several serves write at once. leads: this one
	 * holds SERVE_LOCK. The listener is a second connection that waits
	 * for the others' word that a job became ready (READY_CHANNEL);
	 * notify: this batch tells them once it has committed. */
	int shared, leads, notify;
	PGconn *listener;
	/* With several serves, SERVE_LOCK lives on a connection of its own,
	 * on which a follower waits for it inside the server: it leads the
	 * moment the leader's session ends and asks nothing meanwhile
	 * (asking four times a second was most of what idle followers cost
	 * the server). asked: pg_advisory_lock sent, its answer not read. */
	PGconn *locker;
	int asked;
	/* Where the last lease of each offer in this batch stopped, in lease
	 * order: a job before it that fits that offer was leased by this
	 * batch or is held by another's, so the next lease of the same offer
	 * starts past it rather than step over them again (leases of a
	 * batch would cost its square). Forgotten when a job may have become
	 * ready before it: a write of a queued job, a step undone. */
	struct lease_point {
		uint64_t offer;  /* a hash of the query's arguments */
		int64_t key[4]; /* the lease order's, as ebb_next_ready reads it */
	} points[8];
	int npoints;
};

#define READY_CHANNEL "ebb_ready"

/* Within a batch, what needs no answer of its own goes out with the
 * batch's next statement, in one pipeline: one round trip for all. The
 * commands that frame the batch and its steps wait here, in this order,
 * and are sent ahead of the next statement: a step that runs no statement
 * (a request refused before it reads) sends none of them, a batch that
 * runs none not even BEGIN and COMMIT. An update of the job the batch
 * read last (a lease's or a complete's) is sent at once and its answer
 * read with the next statement's or the COMMIT's: it cannot miss its
 * row, as jobs are never deleted and only this serve writes them. A
 * failure of any of them fails the batch's commit: the server skipped
 * what followed it, a RELEASE among them, which a later ROLLBACK TO would
 * take back; the batch that sent them one by one would have failed too. */
enum { DEFER_BEGIN = 1, DEFER_RELEASE = 2, DEFER_SAVEPOINT = 4 };
static const char *const deferred_sql[] = {"BEGIN", "RELEASE SAVEPOINT request", "SAVEPOINT request"};
#define NDEFERRED 3

static struct pg_store *impl(struct store *st) { return st->db; }

/* Reads inside a batch lock their rows when other serves write too. */
static int locking(const struct pg_store *s) { return s->shared && s->in_batch; }

/* libpq's messages end in a newline, and may run on several lines, the
 * later ones indented with a tab: one line, for the log. */
static void one_line(char *s)
{
	char *out = s;

	for (const char *p = s; *p; p++) {
		if (*p == '\n' || *p == '\t') {
			if (out > s && out[-1] != ' ')
				*out++ = ' ';
		} else {
			*out++ = *p;
		}
	}
	while (out > s && out[-1] == ' ')
		out--;
	*out = '\0';
}

static int fail(struct pg_store *s, const char *what, const PGresult *r)
{
	const char *why = r ? PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY) : NULL;
	const char *state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;

	/* Class 53, insufficient resources: 53100 disk_full, 53200
	 * out_of_memory, 53300 too_many_connections. The database's disk is
	 * full: the client is told to retry later, as with SQLite's. */
	if (state && strcmp(state, "53100") == 0)
		s->st->full = 1;
	/* Another serve's batch held what this one needed: a second submit
	 * of the same idempotency key at once (23505 unique_violation), two
	 * batches that each waited for the other (40P01 deadlock_detected),
	 * or a wait past lock_timeout (55P03). Nothing was kept; a retry
	 * finds the other batch done. */
	if (state && (strcmp(state, "23505") == 0 || strcmp(state, "40P01") == 0 || strcmp(state, "55P03") == 0))
		s->st->contended = 1;

	snprintf(s->st->errmsg, sizeof s->st->errmsg, "postgres: %s: %s", what,
		 why ? why : PQerrorMessage(s->conn));
	one_line(s->st->errmsg);
	return -1;
}

/* A connection of this store's that failed (the main one, or the
 * listener), with libpq's reason. */
static int conn_failed(struct pg_store *s, PGconn *conn, const char *what)
{
	snprintf(s->st->errmsg, sizeof s->st->errmsg, "postgres: %s: %s", what, PQerrorMessage(conn));
	one_line(s->st->errmsg);
	return -1;
}

static int missing(struct pg_store *s, const char *table, int64_t id)
{
	snprintf(s->st->errmsg, sizeof s->st->errmsg, "postgres: update %s: no row with id %lld", table,
		 (long long)id);
	return -1;
}

static int reconnect_if_lost(struct pg_store *s);

/* The results of a query sent in a pipeline, up to its end (NULL): the
 * first, freeing any other. */
static PGresult *pipeline_result(PGconn *conn)
{
	PGresult *first = PQgetResult(conn), *r;

	if (first)
		while ((r = PQgetResult(conn)))
			PQclear(r);
	return first;
}

/* Enters pipeline mode if not yet, and sends the deferred commands: 0,
 * or -1 when the connection failed. */
static int pipe_open(struct pg_store *s)
{
	if (!s->piping && !(s->piping = PQenterPipelineMode(s->conn)))
		return -1;
	for (int i = 0; i < NDEFERRED; i++) {
		if (!(s->deferred & (1u << i)))
			continue;
		if (!PQsendQueryParams(s->conn, deferred_sql[i], 0, NULL, NULL, NULL, NULL, 0))
			return -1;
		s->unread++;
	}
	s->deferred = 0;
	return 0;
}

/* Ends the pipeline with a sync and reads back all that was sent. Each
 * query before the last one (when last is given, whose result it gets)
 * must have done its work: a command, or an update of a row (the count
 * of a command is "", of an update that found none "0"). 0, or -1 with
 * the reason in errmsg. */
static int pipe_close(struct pg_store *s, const char *what, PGresult **last)
{
	int n = s->unread, synced = PQpipelineSync(s->conn), rc = synced ? 0 : fail(s, what, NULL);

	s->unread = 0;
	for (int i = 0; synced && i < n; i++) {
		PGresult *r = pipeline_result(s->conn);
		if (last && i == n - 1 && rc == 0) {
			*last = r;
			continue;
		}
		if (rc == 0 && (PQresultStatus(r) != PGRES_COMMAND_OK || strcmp(PQcmdTuples(r), "0") == 0)) {
			rc = fail(s, what, PQresultStatus(r) == PGRES_COMMAND_OK ? NULL : r);
			s->doomed = 1;
		}
		PQclear(r);
	}
	if (synced)
		PQclear(PQgetResult(s->conn)); /* the sync's */
	if (!PQexitPipelineMode(s->conn) && rc == 0)
		rc = fail(s, what, NULL);
	s->piping = 0;
	if (rc != 0 && last) {
		PQclear(*last);
		*last = NULL;
	}
	return rc;
}

static void stmt_name(char name[16], enum stmt_id id) { snprintf(name, 16, "s%d", (int)id); }

/* A statement whose parameters did not all fit (store/pg_args.h) is not
 * sent. */
static int args_fit(struct pg_store *s, const struct pg_args *a, const char *what)
{
	char why[128];

	if (!a || pg_args_check(a, why, sizeof why) == 0)
		return 0;
	snprintf(s->st->errmsg, sizeof s->st->errmsg, "postgres: %s: %s", what, why);
	return -1;
}

/* Runs prepared statement id; its result when it has the status wanted,
 * else NULL with the reason in errmsg. */
static PGresult *run(struct pg_store *s, enum stmt_id id, const struct pg_args *a, const char *what)
{
	char name[16];
	PGresult *r = NULL;
	ExecStatusType want;

	if (args_fit(s, a, what) != 0 || reconnect_if_lost(s) != 0)
		return NULL;
	stmt_name(name, id);
	if (s->deferred || s->piping) {
		if (pipe_open(s) == 0 && PQsendQueryPrepared(s->conn, name, a ? a->n : 0, a ? a->v : NULL, NULL, NULL, 0))
			s->unread++;
		if (pipe_close(s, what, &r) != 0)
			return NULL;
	} else {
		r = PQexecPrepared(s->conn, name, a ? a->n : 0, a ? a->v : NULL, NULL, NULL, 0);
	}
	want = strncmp(s->sql[id], "SELECT", 6) == 0 || strstr(s->sql[id], "RETURNING") ? PGRES_TUPLES_OK
											   : PGRES_COMMAND_OK;
	if (PQresultStatus(r) != want) {
		fail(s, what, r);
		PQclear(r);
		return NULL;
	}
	return r;
}

/* Sends prepared statement id into the pipeline, its answer read with
 * the next statement's (see above); flushed, so that the server works on
 * it while serve goes on. */
static int run_ahead(struct pg_store *s, enum stmt_id id, const struct pg_args *a, const char *what)
{
	char name[16];

	if (args_fit(s, a, what) != 0)
		return -1;
	stmt_name(name, id);
	if (pipe_open(s) == 0 && PQsendQueryPrepared(s->conn, name, a->n, a->v, NULL, NULL, 0)) {
		s->unread++;
		return PQflush(s->conn) == 0 ? 0 : fail(s, what, NULL);
	}
	pipe_close(s, what, NULL);
	return fail(s, what, NULL);
}

/* Runs a statement that returns no rows. */
static int run_cmd(struct pg_store *s, enum stmt_id id, const struct pg_args *a, const char *what)
{
	PGresult *r = run(s, id, a, what);

	PQclear(r);
	return r ? 0 : -1;
}

/* Runs an UPDATE of the row of table with this id, which must be there. */
static int run_update(struct pg_store *s, enum stmt_id id, const struct pg_args *a, const char *table, int64_t row)
{
	PGresult *r = run(s, id, a, table);
	int one;

	if (!r)
		return -1;
	one = strcmp(PQcmdTuples(r), "1") == 0;
	PQclear(r);
	return one ? 0 : missing(s, table, row);
}

/* A plain SQL command, outside the prepared ones. */
static int exec(struct pg_store *s, const char *sql, const char *what)
{
	PGresult *r = PQexec(s->conn, sql);
	int ok = PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK;

	if (!ok)
		fail(s, what, r);
	PQclear(r);
	return ok ? 0 : -1;
}

/* ---- rows in and out, as store/schema.c describes them ---- */

static int64_t c_int(const PGresult *r, int row, int col) { return strtoll(PQgetvalue(r, row, col), NULL, 10); }

/* A row of a result. */
struct pg_row {
	const PGresult *r;
	int row;
};

static int64_t column_int(void *src, int col)
{
	const struct pg_row *p = src;

	return c_int(p->r, p->row, col);
}

static double column_real(void *src, int col)
{
	const struct pg_row *p = src;

	return strtod(PQgetvalue(p->r, p->row, col), NULL);
}

static const char *column_text(void *src, int col, size_t *len)
{
	const struct pg_row *p = src;

	*len = (size_t)PQgetlength(p->r, p->row, col);
	return PQgetisnull(p->r, p->row, col) ? NULL : PQgetvalue(p->r, p->row, col);
}

static const struct rows_source from_row = {column_int, column_real, column_text};

static void param_int(void *a, int64_t v) { pg_args_int(a, v); }
static void param_real(void *a, double v) { pg_args_num(a, v); }
static void param_text(void *a, const char *v) { pg_args_text(a, v); }

static const struct rows_sink to_args = {param_int, param_real, param_text};

/* Inserts row into t by statement id; the id it was given into *new_id,
 * if asked (a statement RETURNING id). */
static int insert(struct pg_store *s, enum stmt_id id, const struct schema_table *t, const void *row,
		  int64_t *new_id)
{
	struct pg_args a = {0};
	PGresult *r;

	rows_bind(t, row, ROWS_INSERT, &to_args, &a);
	if (!new_id)
		return run_cmd(s, id, &a, t->name);
	if (!(r = run(s, id, &a, t->name)))
		return -1;
	*new_id = c_int(r, 0, 0);
	PQclear(r);
	return 0;
}

/* Runs a SELECT and reads its one row as t into out, or STORE_NOT_FOUND. */
static int fetch(struct pg_store *s, enum stmt_id id, const struct pg_args *a, const struct schema_table *t,
		 void *out)
{
	PGresult *r = run(s, id, a, t->name);
	int ret = STORE_NOT_FOUND;

	if (!r)
		return -1;
	if (PQntuples(r) > 0) {
		rows_read(t, out, &from_row, &(struct pg_row){r, 0});
		ret = 0;
	}
	PQclear(r);
	return ret;
}

/* Runs a SELECT and hands each row, read as t, to cb, to the last or a
 * callback's nonzero return. */
static int walk(struct pg_store *s, enum stmt_id id, const struct pg_args *a, const struct schema_table *t,
		union schema_cb cb, void *arg)
{
	PGresult *r = run(s, id, a, t->name);
	_Alignas(max_align_t) char row[SCHEMA_ROW_MAX];
	int ret = 0;

	if (!r)
		return -1;
	for (int i = 0; i < PQntuples(r) && ret == 0; i++) {
		rows_read(t, row, &from_row, &(struct pg_row){r, i});
		ret = rows_emit(t, cb, arg, row);
	}
	PQclear(r);
	return ret;
}

/* Runs a SELECT and reads up to max rows as t into the array out; *n of
 * them. */
static int read_array(struct pg_store *s, enum stmt_id id, const struct pg_args *a, const struct schema_table *t,
		      void *out, int max, int *n)
{
	PGresult *r = run(s, id, a, t->name);

	*n = 0;
	if (!r)
		return -1;
	for (; *n < max && *n < PQntuples(r); (*n)++)
		rows_read(t, (char *)out + (size_t)*n * t->size, &from_row, &(struct pg_row){r, *n});
	PQclear(r);
	return 0;
}


/* How often a standby asks for the lock: its takeover comes this long
 * after the lock is free, at most. */
#define STANDBY_POLL_MS 250

/* Tries SERVE_LOCK once on conn: 1 taken, 0 held by another, -1 error. */
static int try_lock(struct pg_store *s, PGconn *conn)
{
	PGresult *r = PQexec(conn, "SELECT pg_try_advisory_lock(" SERVE_LOCK ")");
	int ret = -1;

	if (PQresultStatus(r) == PGRES_TUPLES_OK)
		ret = strcmp(PQgetvalue(r, 0, 0), "t") == 0;
	else
		conn_failed(s, conn, "lock the database");
	PQclear(r);
	return ret;
}

/* A serve killed a moment ago may hold the lock still: its server process
 * drops it once it sees the connection closed, a moment after the kill
 * on a busy server. So a serve that is no standby asks again for this
 * long before it says another one runs (a restart right after a crash,
 * by hand or by systemd, would fail otherwise). */
#define RESTART_GRACE_MS 3000

static int lead_asked(struct pg_store *s);

/* Takes SERVE_LOCK (0), or says that another serve holds it (1, the
 * reason in errmsg); a standby waits for it. With several serves, asks
 * for it on the locker. -1: an error. */
static int lock_database(struct pg_store *s, int standby)
{
	int rc;

	if (s->shared) /* whoever holds it, this one starts: the lock is the locker's */
		return s->leads || s->locker || lead_asked(s) >= 0 ? 0 : -1;
	rc = try_lock(s, s->conn);
	for (int waited = 0; rc == 0 && !standby && waited < RESTART_GRACE_MS; waited += STANDBY_POLL_MS) {
		nanosleep(&(struct timespec){0, STANDBY_POLL_MS * 1000000L}, NULL);
		rc = try_lock(s, s->conn);
	}

	if (rc == 0 && standby) {
		log_info("standby: the database is in use by another ebb serve; waiting to take over",
			 "database=%s host=%s", PQdb(s->conn), PQhost(s->conn));
		while ((rc = try_lock(s, s->conn)) == 0)
			nanosleep(&(struct timespec){0, STANDBY_POLL_MS * 1000000L}, NULL);
		if (rc == 1)
			log_info("standby: the database is free; taking over", "database=%s", PQdb(s->conn));
	}
	if (rc == 0)
		snprintf(s->st->errmsg, sizeof s->st->errmsg,
			 "postgres: database %.100s on %.200s is in use by another ebb serve (it holds advisory lock "
			 SERVE_LOCK ")", PQdb(s->conn), PQhost(s->conn));
	s->leads = rc == 1;
	return rc == 1 ? 0 : rc == 0 ? 1 : -1;
}

/* What a connection needs before its first batch, at open and after a
 * reconnect: its settings, the lock, the schema, the prepared statements.
 * 0, 1 when another serve holds the lock, -1 on an error. A commit
 * is durable when it returns (engine.h), whatever the server's or the
 * role's default. A lock another client holds is waited for 5 s, as
 * SQLite's busy_timeout, then fails the batch: serve's one thread never
 * hangs on it. */
static int migrate(struct pg_store *s);

static int start_session(struct pg_store *s, int standby)
{
	int rc;

	s->ready = 0;
	if (exec(s, "SET synchronous_commit = on; SET lock_timeout = '5s'", "settings") != 0)
		return -1;
	if ((rc = lock_database(s, standby)) != 0)
		return rc;
	if (migrate(s) != 0)
		return -1;
	for (int i = 0; i < S_COUNT; i++) {
		char name[16];
		PGresult *r;
		if (!s->sql[i])
			continue;
		stmt_name(name, (enum stmt_id)i);
		r = PQprepare(s->conn, name, s->sql[i], 0, NULL);
		if (PQresultStatus(r) != PGRES_COMMAND_OK) {
			fail(s, s->sql[i], r);
			PQclear(r);
			return -1;
		}
		PQclear(r);
	}
	s->ready = 1;
	return 0;
}

/* ---- transactions ---- */

/* A connection lost is made again before the next statement outside a
 * batch (a server restarted, or a failover behind one address), with
 * the lock taken again; never inside a batch, whose transaction died
 * with it: its statements would run outside it. If another serve has
 * taken the lock meanwhile (a standby, when the connection was lost long
 * enough for it to see the lock free), that one runs the queue and the
 * fleet now: this one exits, the only way out that leaves no batch half
 * done, and its supervisor may start it again, as a standby. */
static int reconnect_if_lost(struct pg_store *s)
{
	int led = s->leads, rc;

	if (s->in_batch || (s->ready && PQstatus(s->conn) == CONNECTION_OK))
		return 0;
	if (PQstatus(s->conn) != CONNECTION_OK) {
		PQreset(s->conn);
		s->ready = 0;
		if (PQstatus(s->conn) != CONNECTION_OK)
			return fail(s, "reconnect", NULL);
	}
	if ((rc = start_session(s, 0)) == 1 || (rc == 0 && led && !s->leads)) {
		log_error("another ebb serve took over the database while the connection was lost: exiting",
			  "database=%s host=%s", PQdb(s->conn), PQhost(s->conn));
		exit(1);
	}
	return rc;
}

/* The session's plans dropped, to be made again on the table as it is,
 * once the jobs are PLANS_GROWTH times what they were when they last
 * were (and PLANS_FLOOR at least). A prepared statement keeps a generic
 * plan after five runs, and the function's statements keep one from the
 * first (migration 12); the server makes them again after an analyze,
 * not after a burst of submits. Made on a few hundred jobs, the open
 * segments' join to their jobs read every job (a hash join), 7 ms a
 * scrape behind 100,000 until the next analyze; made on 1,000 or more,
 * each plan reads the indexes (test_postgres,
 * plans_made_again_after_a_burst). A few times in a database's life,
 * a round trip each. */
#define PLANS_GROWTH 4
#define PLANS_FLOOR 1000

static void replan_after_growth(struct pg_store *s)
{
	int64_t jobs = 0;

	for (int k = 0; k < JOB_NSTATES; k++)
		jobs += counts_in_state(s->st->counts, (enum job_state)k);
	if (jobs >= PLANS_FLOOR && jobs >= PLANS_GROWTH * s->planned_for && exec(s, "DISCARD PLANS", "plans") == 0)
		s->planned_for = jobs;
}

static int op_begin(struct store *base)
{
	struct pg_store *s = impl(base);

	if (reconnect_if_lost(s) != 0)
		return -1;
	replan_after_growth(s);
	s->in_batch = 1;
	s->deferred = DEFER_BEGIN;
	s->doomed = 0;
	s->last_job = 0;
	s->npoints = 0;
	return 0;
}

/* A COMMIT of a transaction an error has aborted answers ROLLBACK, with
 * no error: the status says which; a doomed one is rolled back alike. A
 * batch that sent nothing has nothing to commit; a step's release still
 * deferred is the COMMIT's. The COMMIT goes out with what was sent ahead
 * of it. */
static int op_commit(struct store *base)
{
	struct pg_store *s = impl(base);
	const char *sql;
	PGresult *r = NULL;
	int ok;

	s->in_batch = 0;
	if (s->deferred & DEFER_BEGIN) {
		s->deferred = 0;
		s->notify = 0;
		return 0;
	}
	s->deferred = 0;
	sql = s->doomed ? "ROLLBACK" : "COMMIT";
	if (s->piping) {
		if (PQsendQueryParams(s->conn, sql, 0, NULL, NULL, NULL, NULL, 0))
			s->unread++;
		if (pipe_close(s, "commit", &r) != 0)
			return -1;
	} else {
		r = PQexec(s->conn, sql);
	}
	ok = PQresultStatus(r) == PGRES_COMMAND_OK && strcmp(PQcmdStatus(r), "COMMIT") == 0;
	if (!ok) {
		if (PQresultStatus(r) == PGRES_COMMAND_OK)
			snprintf(s->st->errmsg, sizeof s->st->errmsg,
				 "postgres: commit: the transaction was aborted by an earlier error");
		else
			fail(s, "commit", r);
	}
	PQclear(r);
	/* The word to the other serves, once the batch is theirs to see, in
	 * a transaction of its own: a commit that notifies holds a lock of
	 * the whole database until it is flushed, which would queue every
	 * serve's commit behind this one's fsync; this one writes nothing to
	 * flush. A word lost with the connection costs a waiting worker its
	 * wait, not a job. */
	if (ok && s->notify)
		(void)exec(s, "NOTIFY " READY_CHANNEL, "notify the other serves");
	s->notify = 0;
	return ok ? 0 : -1;
}

static int op_rollback(struct store *base)
{
	struct pg_store *s = impl(base);
	int sent = !(s->deferred & DEFER_BEGIN);

	s->in_batch = 0;
	s->deferred = 0;
	s->notify = 0;
	if (s->piping)
		pipe_close(s, "rollback", NULL); /* whatever it says, all of it is undone */
	return sent ? exec(s, "ROLLBACK", "rollback") : 0;
}

static int op_savepoint(struct store *base)
{
	impl(base)->deferred |= DEFER_SAVEPOINT;
	return 0;
}

/* A savepoint never sent needs no release. */
static int op_release(struct store *base)
{
	struct pg_store *s = impl(base);

	if (s->deferred & DEFER_SAVEPOINT)
		s->deferred &= ~DEFER_SAVEPOINT;
	else
		s->deferred |= DEFER_RELEASE;
	return 0;
}

/* A step that sent no statement has nothing to undo. What the step sent
 * ahead is read first: its failure dooms the batch. */
static int op_rollback_savepoint(struct store *base)
{
	struct pg_store *s = impl(base);
	int rc = 0;

	if (s->deferred & DEFER_SAVEPOINT) {
		s->deferred &= ~DEFER_SAVEPOINT;
		return 0;
	}
	s->last_job = 0; /* it may have been inserted by the step */
	s->npoints = 0;  /* a lease undone makes its job ready again */
	if (s->piping)
		rc = pipe_close(s, "rollback to savepoint", NULL);
	if (exec(s, "ROLLBACK TO SAVEPOINT request; RELEASE SAVEPOINT request", "rollback to savepoint") != 0)
		return -1;
	return rc;
}

/* ---- jobs ---- */

static int op_job_insert(struct store *base, struct job *j)
{
	struct pg_store *s = impl(base);

	if (j->state == JOB_QUEUED)
		s->npoints = 0;
	if (insert(s, S_INSERT, &schema_jobs, j, &j->id) != 0)
		return -1;
	s->last_job = j->id;
	return 0;
}

static int op_job_update(struct store *base, const struct job *j)
{
	struct pg_store *s = impl(base);
	struct pg_args a = {0};

	if (j->state == JOB_QUEUED)
		s->npoints = 0;
	rows_bind(&schema_jobs, j, ROWS_UPDATE, &to_args, &a);
	if (s->in_batch && j->id == s->last_job)
		return run_ahead(s, S_UPDATE, &a, "update job");
	return run_update(s, S_UPDATE, &a, schema_jobs.name, j->id);
}

/* A job read is the batch's last (see run_ahead). */
static int fetch_job(struct pg_store *s, enum stmt_id id, const struct pg_args *a, struct job *out)
{
	int rc = fetch(s, id, a, &schema_jobs, out);

	if (rc == 0)
		s->last_job = out->id;
	return rc;
}

static int op_job_get(struct store *base, int64_t id, struct job *out)
{
	struct pg_args a = {0};

	pg_args_int(&a, id);
	return fetch_job(impl(base), locking(impl(base)) ? S_GET_LOCKED : S_GET, &a, out);
}

static int op_job_get_by_key(struct store *base, const char *team, const char *key, struct job *out)
{
	struct pg_args a = {0};

	pg_args_text(&a, team);
	pg_args_text(&a, key);
	return fetch_job(impl(base), S_GET_BY_KEY, &a, out);
}

/* The hash of the arguments, a NULL apart from any text. */
static uint64_t args_hash(const struct pg_args *a)
{
	uint64_t h = FNV1A_START;

	for (int i = 0; i < a->n; i++)
		h = fnv1a_byte(fnv1a(h, a->v[i] ? a->v[i] : ""), a->v[i] ? 0x1f : 0x1e);
	return h;
}

/* The next ready job that fits the offer in a, among the queued
 * classes it fits, from where the batch's last lease of the same offer
 * stopped (lease_point). */
static int next_ready(struct pg_store *s, struct pg_args *a, const char *classes, struct job *out)
{
	uint64_t offer = args_hash(a);
	struct lease_point *p = NULL;
	int rc;

	for (int i = 0; i < s->npoints && !p; i++)
		p = s->points[i].offer == offer ? &s->points[i] : NULL;
	pg_args_text(a, classes);
	for (int k = 0; p && k < 4; k++)
		pg_args_int(a, p->key[k]);
	if ((rc = fetch_job(s, p ? S_NEXT_READY_AFTER : S_NEXT_READY, a, out)) != 0 || !s->in_batch)
		return rc;
	if (!p) {
		p = &s->points[s->npoints < 8 ? s->npoints++ : (int)(offer % 8)];
		p->offer = offer;
	}
	p->key[0] = out->lane_rank;
	p->key[1] = -(int64_t)out->priority;
	p->key[2] = out->seq;
	p->key[3] = out->id;
	return 0;
}

static int op_job_next_ready(struct store *base, const struct lease_offer *o, struct job *out)
{
	struct offer_filters f;
	struct pg_args a = {0};
	char *classes = offer_classes_json(base, o);
	int rc;

	if (!classes)
		return -1;
	offer_filters_make(o, &f);
	pg_args_int(&a, o->gpus);
	pg_args_int(&a, o->vram_gb);
	pg_args_text(&a, f.full_types);
	pg_args_text(&a, f.labels);
	pg_args_text(&a, f.rooms);
	rc = next_ready(impl(base), &a, classes, out);
	offer_filters_free(&f);
	free(classes);
	return rc;
}

static int op_job_list(struct store *base, const struct job_filter *f, job_cb cb, void *arg)
{
	struct pg_args a = {0};

	pg_args_text(&a, f->state >= 0 ? job_state_name((enum job_state)f->state) : NULL);
	pg_args_text(&a, f->lane);
	pg_args_text(&a, f->team);
	pg_args_text(&a, f->type);
	pg_args_int(&a, f->after_id);
	pg_args_limit(&a, f->limit);
	pg_args_int(&a, f->finished_from_ms);
	pg_args_int(&a, f->finished_to_ms);
	return walk(impl(base), S_LIST, &a, &schema_jobs, (union schema_cb){.job = cb}, arg);
}

static int op_job_due(struct store *base, int64_t now_ms, int64_t *ids, int max, int *n)
{
	struct pg_args a = {0};

	pg_args_int(&a, now_ms);
	pg_args_int(&a, max);
	return read_array(impl(base), locking(impl(base)) ? S_DUE_LOCKED : S_DUE, &a, &schema_int64s, ids, max, n);
}

static int op_job_leased_on(struct store *base, int64_t instance, struct job_on *out, int max, int *n)
{
	struct pg_args a = {0};

	pg_args_int(&a, instance);
	pg_args_int(&a, max);
	return read_array(impl(base), S_LEASED_ON, &a, &schema_jobs_on, out, max, n);
}

/* NULL, no deadline, reads as 0. */
static int op_next_deadline(struct store *base, int64_t *out_ms)
{
	int n;

	*out_ms = 0;
	return read_array(impl(base), S_NEXT_DEADLINE, NULL, &schema_int64s, out_ms, 1, &n);
}

static int op_job_count_rows(struct store *base, count_cb cb, void *arg)
{
	return walk(impl(base), S_TALLIES, NULL, &schema_job_counts, (union schema_cb){.count_row = cb}, arg);
}

static int op_job_recount(struct store *base, count_cb cb, void *arg)
{
	if (run_cmd(impl(base), S_TALLY_LOCK, NULL, "lock the tallies") != 0)
		return -1;
	return walk(impl(base), S_COUNT_ROWS, NULL, &schema_job_counts, (union schema_cb){.count_row = cb}, arg);
}

/* Serves apart write rows apart: two that share a shard only wait for
 * each other's commit (counts_changes() orders the keys, so never in a
 * cycle). */
#define TALLY_SHARDS 16

static int op_tallies_add(struct store *base, const struct job_count *d)
{
	struct pg_args a = {0};

	pg_args_int(&a, impl(base)->shard);
	pg_args_text(&a, job_state_name(d->state));
	pg_args_text(&a, d->lane);
	pg_args_text(&a, d->type);
	pg_args_text(&a, d->team);
	pg_args_int(&a, d->gpus);
	pg_args_int(&a, d->min_vram_gb);
	pg_args_int(&a, d->priority);
	pg_args_int(&a, d->n);
	pg_args_int(&a, d->items);
	pg_args_int(&a, d->no_est);
	pg_args_int(&a, d->est_s);
	pg_args_int(&a, d->run_ms);
	return run_cmd(impl(base), S_TALLY_ADD, &a, "add to the tallies");
}

static int op_queued_oldest(struct store *base, const struct job_count *k, int64_t *ms)
{
	struct pg_args a = {0};
	int n, rc;

	pg_args_text(&a, k->lane);
	pg_args_text(&a, k->type);
	pg_args_text(&a, k->team);
	pg_args_int(&a, k->gpus);
	pg_args_int(&a, k->min_vram_gb);
	pg_args_int(&a, k->priority);
	*ms = 0;
	rc = read_array(impl(base), S_QUEUED_OLDEST, &a, &schema_int64s, ms, 1, &n);
	return rc == 0 && *ms == 0 ? STORE_NOT_FOUND : rc;
}

static int op_recent_submits(struct store *base, int limit, time_cb cb, void *arg)
{
	struct pg_args a = {0};

	pg_args_limit(&a, limit);
	return walk(impl(base), S_RECENT_SUBMITS, &a, &schema_submits, (union schema_cb){.time = cb}, arg);
}

static int op_arrivals(struct store *base, int limit, arrival_cb cb, void *arg)
{
	struct pg_args a = {0};

	pg_args_limit(&a, limit);
	return walk(impl(base), S_ARRIVALS, &a, &schema_arrivals, (union schema_cb){.arrival = cb}, arg);
}

static int op_recent_durations(struct store *base, int limit, duration_cb cb, void *arg)
{
	struct pg_args a = {0};

	pg_args_limit(&a, limit);
	return walk(impl(base), S_RECENT_DURATIONS, &a, &schema_durations, (union schema_cb){.duration = cb}, arg);
}

static int op_usage(struct store *base, int64_t now_ms, int64_t *instance_ms)
{
	struct pg_args a = {0};
	PGresult *r;

	pg_args_int(&a, now_ms);
	if (!(r = run(impl(base), S_USAGE, &a, "usage")))
		return -1;
	*instance_ms = c_int(r, 0, 0);
	PQclear(r);
	return 0;
}

static int op_dead_letters(struct store *base, int64_t since_ms, dead_letters_cb cb, void *arg)
{
	struct pg_args a = {0};

	pg_args_int(&a, since_ms);
	return walk(impl(base), S_DEAD, &a, &schema_dead_letters, (union schema_cb){.dead_letters = cb}, arg);
}

static int op_job_add_cost(struct store *base, int64_t job, double usd)
{
	struct pg_args a = {0};

	pg_args_int(&a, job);
	pg_args_num(&a, usd);
	return run_cmd(impl(base), S_JOB_COST, &a, "job cost");
}

/* ---- the fleet and the decisions ---- */

static int op_instance_insert(struct store *base, struct instance *i)
{
	return insert(impl(base), S_INST_INSERT, &schema_instances, i, &i->id);
}

static int op_instance_update(struct store *base, const struct instance *i)
{
	struct pg_args a = {0};

	rows_bind(&schema_instances, i, ROWS_UPDATE, &to_args, &a);
	return run_update(impl(base), S_INST_UPDATE, &a, schema_instances.name, i->id);
}

static int op_instance_get(struct store *base, int64_t id, struct instance *out)
{
	struct pg_args a = {0};

	pg_args_int(&a, id);
	return fetch(impl(base), locking(impl(base)) ? S_INST_GET_LOCKED : S_INST_GET, &a, &schema_instances, out);
}

static int op_instance_by_token(struct store *base, const char *token, struct instance *out)
{
	struct pg_args a = {0};

	pg_args_text(&a, token);
	return fetch(impl(base), S_INST_BY_TOKEN, &a, &schema_instances, out);
}

static int op_instance_data_set(struct store *base, int64_t id, const char *data)
{
	struct pg_args a = {0};

	pg_args_int(&a, id);
	pg_args_text(&a, data);
	return run_update(impl(base), S_DATA_SET, &a, schema_instances.name, id);
}

static int op_instance_data(struct store *base, int64_t id, char *buf, size_t size)
{
	struct pg_args a = {0};
	PGresult *r;
	int ret = 0;

	pg_args_int(&a, id);
	if (!(r = run(impl(base), S_DATA_GET, &a, "instance data")))
		return -1;
	if (PQntuples(r) > 0)
		snprintf(buf, size, "%s", PQgetvalue(r, 0, 0));
	else
		ret = STORE_NOT_FOUND;
	PQclear(r);
	return ret;
}

static int op_instance_list(struct store *base, instance_cb cb, void *arg)
{
	return walk(impl(base), S_INST_LIVE, NULL, &schema_instances, (union schema_cb){.instance = cb}, arg);
}

static int op_instance_page(struct store *base, int64_t after_id, int limit, instance_cb cb, void *arg)
{
	struct pg_args a = {0};

	pg_args_int(&a, after_id);
	pg_args_limit(&a, limit);
	return walk(impl(base), S_INST_PAGE, &a, &schema_instances, (union schema_cb){.instance = cb}, arg);
}

static int op_decision_insert(struct store *base, const struct decision *d)
{
	return insert(impl(base), S_DEC_INSERT, &schema_decisions, d, NULL);
}

static int op_decision_list(struct store *base, int64_t before_id, int limit, decision_cb cb, void *arg)
{
	struct pg_args a = {0};

	pg_args_int(&a, before_id);
	pg_args_limit(&a, limit);
	return walk(impl(base), S_DEC_LIST, &a, &schema_decisions, (union schema_cb){.decision = cb}, arg);
}

/* ---- the ledger and the offers' statistics ---- */

static int op_segment_open(struct store *base, const struct segment *g)
{
	return insert(impl(base), S_SEG_OPEN, &schema_segments, g, NULL);
}

static int op_segment_find(struct store *base, int64_t instance, struct segment_found *out)
{
	struct pg_args a = {0};

	pg_args_int(&a, instance);
	return fetch(impl(base), S_SEG_FIND, &a, &schema_segment_found, out);
}

static int op_segment_end(struct store *base, int64_t id, int64_t end_ms, double cost)
{
	struct pg_args a = {0};

	pg_args_int(&a, id);
	pg_args_int(&a, end_ms);
	pg_args_num(&a, cost);
	return run_cmd(impl(base), S_SEG_CLOSE, &a, "close segment");
}

static int op_offer_stats(struct store *base, offer_stat_cb cb, void *arg)
{
	return walk(impl(base), S_STATS, NULL, &schema_offer_stats, (union schema_cb){.offer_stat = cb}, arg);
}

static int op_offer_stat_add(struct store *base, const struct offer_stat *d)
{
	struct pg_args a = {0};

	rows_bind(&schema_offer_stats, d, ROWS_INSERT, &to_args, &a);
	pg_args_int(&a, d->launched_ok);
	return run_cmd(impl(base), S_STAT_ADD, &a, schema_offer_stats.name);
}

static int op_ledger(struct store *base, int64_t since_ms, int64_t after_id, int64_t upto_id, ledger_cb cb, void *arg)
{
	struct pg_args a = {0};

	pg_args_int(&a, since_ms);
	pg_args_int(&a, after_id);
	pg_args_int(&a, upto_id);
	return walk(impl(base), S_LEDGER, &a, &schema_ledger, (union schema_cb){.ledger = cb}, arg);
}

static int op_segment_last_id(struct store *base, int64_t *id)
{
	int n;

	*id = 0;
	return read_array(impl(base), S_SEG_LAST, NULL, &schema_int64s, id, 1, &n);
}

static int op_ledger_open(struct store *base, ledger_cb cb, void *arg)
{
	return walk(impl(base), S_LEDGER_OPEN, NULL, &schema_ledger, (union schema_cb){.ledger = cb}, arg);
}

/* The day first, the sums after it. */
static int op_ledger_add(struct store *base, int64_t day, const struct ledger_sum *d)
{
	struct pg_args a = {0};

	pg_args_int(&a, day);
	rows_bind(&schema_ledger_sums, d, ROWS_INSERT, &to_args, &a);
	return run_cmd(impl(base), S_SUM_ADD, &a, schema_ledger_sums.name);
}

static int op_ledger_sums(struct store *base, int64_t first_day, int64_t last_day, ledger_sum_cb cb, void *arg)
{
	struct pg_args a = {0};

	pg_args_int(&a, first_day);
	pg_args_int(&a, last_day);
	return walk(impl(base), S_SUMS, &a, &schema_ledger_sums, (union schema_cb){.ledger_sum = cb}, arg);
}

/* ---- alerts and team budgets ---- */

static int op_alert_put(struct store *base, const struct alert_row *al)
{
	return insert(impl(base), S_ALERT_PUT, &schema_alerts, al, NULL);
}

static int op_alert_delete(struct store *base, const char *key)
{
	struct pg_args a = {0};

	pg_args_text(&a, key);
	return run_cmd(impl(base), S_ALERT_DELETE, &a, "delete alert");
}

static int op_alerts(struct store *base, alert_cb cb, void *arg)
{
	return walk(impl(base), S_ALERTS, NULL, &schema_alerts, (union schema_cb){.alert = cb}, arg);
}

/* ---- a job's attempts ---- */

static int op_attempt_put(struct store *base, const struct attempt *at)
{
	return insert(impl(base), S_ATTEMPT_PUT, &schema_attempts, at, NULL);
}

static int op_attempts(struct store *base, int64_t job, attempt_cb cb, void *arg)
{
	struct pg_args a = {0};

	pg_args_int(&a, job);
	return walk(impl(base), S_ATTEMPTS, &a, &schema_attempts, (union schema_cb){.attempt = cb}, arg);
}

static int op_team_budget_set(struct store *base, const struct team_budget *b)
{
	return insert(impl(base), S_BUDGET_SET, &schema_team_budgets, b, NULL);
}

static int op_team_budgets(struct store *base, team_budget_cb cb, void *arg)
{
	return walk(impl(base), S_BUDGETS, NULL, &schema_team_budgets, (union schema_cb){.team_budget = cb}, arg);
}

static int op_tuning_set(struct store *base, const struct tuning_row *t)
{
	return insert(impl(base), S_TUNING_SET, &schema_tunings, t, NULL);
}

static int op_tunings(struct store *base, tuning_cb cb, void *arg)
{
	return walk(impl(base), S_TUNINGS, NULL, &schema_tunings, (union schema_cb){.tuning = cb}, arg);
}

/* ---- open and close ---- */

/* In one transaction, under MIGRATE_LOCK: one serve at a time. */
static int migrate(struct pg_store *s)
{
	PGresult *r;
	int version;
	char sql[128];

	if (exec(s, "BEGIN", "migrate") != 0)
		return -1;
	if (exec(s, "SELECT pg_advisory_xact_lock(" MIGRATE_LOCK ")", "migrate") != 0)
		goto fail;
	if (exec(s, "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)", "schema version") != 0)
		goto fail;
	r = PQexec(s->conn, "SELECT COALESCE(MAX(version), 0) FROM schema_version");
	if (PQresultStatus(r) != PGRES_TUPLES_OK) {
		fail(s, "schema version", r);
		PQclear(r);
		goto fail;
	}
	version = (int)c_int(r, 0, 0);
	PQclear(r);
	if (version > NMIGRATIONS) {
		snprintf(s->st->errmsg, sizeof s->st->errmsg,
			 "postgres: database schema version %d is newer than this ebb knows (%d)", version,
			 NMIGRATIONS);
		goto fail;
	}
	for (; version < NMIGRATIONS; version++) {
		char what[32];
		snprintf(what, sizeof what, "migration %d", version + 1);
		snprintf(sql, sizeof sql, "INSERT INTO schema_version VALUES (%d)", version + 1);
		if (exec(s, migrations[version], what) != 0 || exec(s, sql, what) != 0)
			goto fail;
	}
	return exec(s, "COMMIT", "migrate");
fail: {
	char why[sizeof s->st->errmsg];
	snprintf(why, sizeof why, "%s", s->st->errmsg);
	PQclear(PQexec(s->conn, "ROLLBACK"));
	snprintf(s->st->errmsg, sizeof s->st->errmsg, "%s", why);
	return -1;
}
}

/* The password of password_file: its first line. */
static int read_password(struct pg_store *s, const char *path, char *buf, size_t size)
{
	char *text = textfile_read(path, 4096, NULL, s->st->errmsg, sizeof s->st->errmsg);

	if (!text)
		return -1;
	text[strcspn(text, "\r\n")] = '\0';
	snprintf(buf, size, "%s", text);
	memset(text, 0, strlen(text));
	free(text);
	return 0;
}

/* Notices (a CREATE ... IF NOT EXISTS that found it) are not errors:
 * libpq would print them on stderr. */
static void quiet(void *arg, const char *message)
{
	(void)arg;
	(void)message;
}

/* A connection to the database: 0 with it in *conn, or -1 with the
 * reason in errmsg (and *conn, if made, to be finished). */
static int connect_db(struct pg_store *s, const struct pg_conf *conf, PGconn **conn)
{
	/* Defaults before the url, whose keys override them: a connection
	 * (and a reconnect, from the loop) waits 10 s at most. */
	char password[1024] = "", name[300];
	const char *keys[5] = {"connect_timeout", "application_name", "dbname"},
		   *values[5] = {"10", name, conf->url};

	/* The other serves read the leader's name from its session. */
	config_serve_id(s->cfg, name, sizeof name);

	if (pq_lib_ready(s->st->errmsg, sizeof s->st->errmsg) != 0)
		return -1;
	if (conf->password_file[0]) {
		if (read_password(s, conf->password_file, password, sizeof password) != 0)
			return -1;
		keys[3] = "password";
		values[3] = password;
	}
	/* expand_dbname: the url is a whole connection string or URI. */
	*conn = PQconnectdbParams(keys, values, 1);
	memset(password, 0, sizeof password);
	if (!*conn) {
		snprintf(s->st->errmsg, sizeof s->st->errmsg, "postgres: out of memory");
		return -1;
	}
	if (PQstatus(*conn) != CONNECTION_OK)
		return conn_failed(s, *conn, "connect");
	PQsetNoticeProcessor(*conn, quiet, NULL);
	return 0;
}

static void op_close(struct store *base)
{
	struct pg_store *s = impl(base);

	if (s->conn) /* else libpq may not even be loaded */
		PQfinish(s->conn);
	if (s->listener)
		PQfinish(s->listener);
	if (s->locker)
		PQfinish(s->locker);
	for (int i = 0; i < S_COUNT; i++)
		free(s->sql[i]);
	free(s);
	base->db = NULL;
}

static int op_open(struct store *base, const struct config *cfg)
{
	const struct pg_conf *conf = config_plugin(cfg, "postgres");
	struct pg_store *s = mem_calloc(1, sizeof *s);

	if (!s) {
		snprintf(base->errmsg, sizeof base->errmsg, "postgres: out of memory");
		return -1;
	}
	s->st = base;
	base->db = s;
	if (!conf || !conf->url[0]) {
		snprintf(base->errmsg, sizeof base->errmsg,
			 "[postgres] url: required with [store] kind = postgres (a libpq connection string)");
		return -1;
	}
	s->conf = conf;
	s->cfg = cfg;
	s->shard = (int)(getpid() % TALLY_SHARDS);
	s->shared = conf->active != 0;
	base->shared = s->shared;
	if (sql_texts(stmt_sql, '$', s->sql, base->errmsg, sizeof base->errmsg) != 0)
		return -1;
	if (connect_db(s, conf, &s->conn) != 0 || start_session(s, conf->standby != 0) != 0)
		return -1;
	return 0;
}

/* ---- several serves at once ---- */

static int locker_lost(struct pg_store *s);

/* A locker connected, with no time limit on the wait for the lock
 * whatever the role's defaults; -1 with the reason in errmsg. */
static int locker_open(struct pg_store *s)
{
	PGresult *r;
	int ok;

	if (connect_db(s, s->conf, &s->locker) != 0) {
		if (s->locker)
			PQfinish(s->locker);
		s->locker = NULL;
		return -1;
	}
	r = PQexec(s->locker, "SET lock_timeout = 0; SET statement_timeout = 0");
	ok = PQresultStatus(r) == PGRES_COMMAND_OK;
	PQclear(r);
	s->asked = 0;
	/* Closed if not set up: a locker kept would be taken for the lock. */
	return ok ? 0 : locker_lost(s);
}

static int locker_lost(struct pg_store *s)
{
	int rc = conn_failed(s, s->locker, "lock the database");

	PQfinish(s->locker);
	s->locker = NULL;
	return rc;
}

/* Takes SERVE_LOCK on the locker if it is free, else asks the server
 * for it once and reads its answer later, without waiting: 1 this serve
 * leads, 0 not yet, -1 an error (the locker is made again next time). */
static int lead_asked(struct pg_store *s)
{
	PGresult *r;
	int rc;

	if (!s->locker && locker_open(s) != 0)
		return -1;
	if (!s->asked) {
		if ((rc = try_lock(s, s->locker)) != 0)
			return rc < 0 ? locker_lost(s) : (s->leads = 1);
		if (!PQsendQueryParams(s->locker, "SELECT pg_advisory_lock(" SERVE_LOCK ")", 0, NULL, NULL, NULL, NULL, 0))
			return locker_lost(s);
		s->asked = 1;
	}
	if (!PQconsumeInput(s->locker))
		return locker_lost(s);
	if (PQisBusy(s->locker))
		return 0;
	r = PQgetResult(s->locker);
	rc = PQresultStatus(r) == PGRES_TUPLES_OK ? 1 : -1;
	PQclear(r);
	while ((r = PQgetResult(s->locker)))
		PQclear(r);
	s->asked = 0;
	if (rc < 0)
		return locker_lost(s);
	return s->leads = 1;
}

/* The leader's lock is its locker's session: lost with it (the server
 * restarted, a network cut). Taken again if still free; if another
 * serve has it, that one leads now, and this one exits, as when its own
 * connection is lost (reconnect_if_lost). */
static int lead_kept(struct pg_store *s)
{
	int rc;

	if (s->locker) {
		if (PQconsumeInput(s->locker) && PQstatus(s->locker) == CONNECTION_OK)
			return 1;
		locker_lost(s);
		log_warn("lost the connection that holds the leader's lock: asking again", "error=\"%s\"",
			 s->st->errmsg);
	}
	if (locker_open(s) != 0) /* the server is away: asked again at the next tick */
		return -1;
	if ((rc = try_lock(s, s->locker)) < 0)
		return locker_lost(s);
	if (rc == 0) {
		log_error("another ebb serve leads now: exiting", "database=%s host=%s", PQdb(s->conn),
			  PQhost(s->conn));
		exit(1);
	}
	return 1;
}

/* Between batches: 1 this serve leads. */
static int op_lead(struct store *base)
{
	struct pg_store *s = impl(base);

	if (s->in_batch)
		return s->leads;
	return s->leads ? lead_kept(s) : lead_asked(s);
}

static void op_notify(struct store *base) { impl(base)->notify = 1; }

/* The listener's socket, (re)connected and listening: -1 without one. */
static int op_wake_fd(struct store *base)
{
	struct pg_store *s = impl(base);
	PGresult *r;
	int ok;

	if (s->listener && PQstatus(s->listener) == CONNECTION_OK)
		return PQsocket(s->listener);
	if (s->listener)
		PQfinish(s->listener);
	s->listener = NULL;
	if (connect_db(s, s->conf, &s->listener) != 0)
		return -1;
	r = PQexec(s->listener, "LISTEN " READY_CHANNEL);
	ok = PQresultStatus(r) == PGRES_COMMAND_OK;
	if (!ok)
		fail(s, "listen", r);
	PQclear(r);
	return ok ? PQsocket(s->listener) : -1;
}

/* What came on the listener: 1 a word, 0 none, -1 it broke. */
static int op_woken(struct store *base)
{
	struct pg_store *s = impl(base);
	PGnotify *n;
	int got = 0;

	if (!s->listener)
		return -1;
	if (!PQconsumeInput(s->listener) || PQstatus(s->listener) != CONNECTION_OK)
		return conn_failed(s, s->listener, "listen");
	while ((n = PQnotifies(s->listener))) {
		got = 1;
		PQfreemem(n);
	}
	return got;
}

static int op_leader(struct store *base, char *name, size_t size)
{
	PGresult *r = run(impl(base), S_LEADER, NULL, "who leads");
	int rc = STORE_NOT_FOUND;

	if (!r)
		return -1;
	if (PQntuples(r) > 0) {
		snprintf(name, size, "%s", PQgetvalue(r, 0, 0));
		rc = 0;
	}
	PQclear(r);
	return rc;
}

/* The database server's clock. */
static int op_now_ms(struct store *base, int64_t *ms)
{
	int n;

	return read_array(impl(base), S_NOW, NULL, &schema_int64s, ms, 1, &n);
}
/* ---- the jobs' logs ---- */

/* The first parameters of most: the attempt's. */
static void attempt_args(struct pg_args *a, int64_t job, int attempt)
{
	pg_args_int(a, job);
	pg_args_int(a, attempt);
}

static int op_log_meta(struct store *base, int64_t job, int attempt, struct log_meta *out)
{
	struct pg_args a = {0};

	attempt_args(&a, job, attempt);
	return fetch(impl(base), S_LOG_META, &a, &schema_job_log_meta, out);
}

static int op_log_meta_put(struct store *base, const struct log_meta *m)
{
	return insert(impl(base), S_LOG_META_PUT, &schema_job_log_meta, m, NULL);
}

static int op_log_metas_oldest(struct store *base, int64_t before_ms, int limit, log_meta_cb cb, void *arg)
{
	struct pg_args a = {0};

	pg_args_int(&a, before_ms);
	pg_args_limit(&a, limit);
	return walk(impl(base), S_LOG_METAS_OLDEST, &a, &schema_job_log_meta, (union schema_cb){.log_meta = cb}, arg);
}

static int op_log_meta_delete(struct store *base, int64_t job, int attempt)
{
	struct pg_args a = {0};

	attempt_args(&a, job, attempt);
	return run_cmd(impl(base), S_LOG_META_DELETE, &a, "delete job_log_meta");
}

static int op_log_total(struct store *base, int64_t *bytes)
{
	int n;

	*bytes = 0;
	return read_array(impl(base), S_LOG_TOTAL, NULL, &schema_int64s, bytes, 1, &n);
}

static int op_log_insert(struct store *base, const struct log_line *l)
{
	return insert(impl(base), S_LOG_INSERT, &schema_job_logs, l, NULL);
}

static int op_log_lines(struct store *base, int64_t job, int attempt, int64_t after, int limit, int last,
			log_line_cb cb, void *arg)
{
	struct pg_args a = {0};

	attempt_args(&a, job, attempt);
	pg_args_int(&a, after);
	pg_args_limit(&a, limit);
	return walk(impl(base), last ? S_LOG_LAST : S_LOG_LINES, &a, &schema_job_logs,
		    (union schema_cb){.log_line = cb}, arg);
}

static int op_log_delete(struct store *base, int64_t job, int attempt, int64_t after, int64_t upto)
{
	struct pg_args a = {0};

	attempt_args(&a, job, attempt);
	pg_args_int(&a, after);
	pg_args_int(&a, upto);
	return run_cmd(impl(base), S_LOG_DELETE, &a, "delete job_logs");
}


const struct store_engine store_engine_postgres = {
	.conf = {.name = "postgres",
		 .help = "The PostgreSQL store: one database, shared by every serve that names it (docs/DEPLOY.md).",
		 .keys = pg_keys,
		 .size = sizeof(struct pg_conf)},
	STORE_ENGINE_OPS,
	.tallies_add = op_tallies_add,
	.job_recount = op_job_recount,
	.lead = op_lead,
	.notify = op_notify,
	.wake_fd = op_wake_fd,
	.woken = op_woken,
	.now_ms = op_now_ms,
	.leader = op_leader,
};

