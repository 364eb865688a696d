/* The store's tables, and the rows of its other queries (see schema.h).
 * Each table lists its columns in the database's order, and each column
 * the member of the struct it is read into and written from: the
 * member's C type is checked against the column's kind when this file
 * is compiled. */
#include "store/schema.h"

#include <string.h>

/* The C type a kind's member has, as a pointer to it. */
#define KIND_PTR_INT64(T, m) int64_t *
#define KIND_PTR_INT(T, m) int *
#define KIND_PTR_REAL(T, m) double *
#define KIND_PTR_TEXT(T, m) char **
#define KIND_PTR_BORROWED(T, m) const char **
#define KIND_PTR_CHARS(T, m) char (*)[sizeof(((T *)0)->m)]
#define KIND_PTR_JOB_STATE(T, m) enum job_state *
#define KIND_PTR_INST_STATE(T, m) enum instance_state *
#define KIND_PTR_MARKET(T, m) enum market *

/* Column `name` of kind K, read into member m of struct T: an array of
 * negative size, which does not compile, when m is not of K's type. */
#define COLUMN(T, name, K, m, flags)                                                                   \
	{name, SCHEMA_##K, flags,                                                                      \
	 offsetof(T, m) + 0 * sizeof(char[_Generic(&((T *)0)->m, KIND_PTR_##K(T, m): 1, default: -1)]), \
	 sizeof(((T *)0)->m)}
/* A column that no member holds. */
#define APART(name, K, flags) {name, SCHEMA_##K, (flags) | SCHEMA_APART, 0, 0}
/* A table's columns, and its struct, which must fit a walk's buffer. */
#define NCOLS(cols) cols, (int)(sizeof cols / sizeof *cols)
#define COLUMNS(cols, T) NCOLS(cols), sizeof(T) + 0 * sizeof(char[sizeof(T) <= SCHEMA_ROW_MAX ? 1 : -1])

/* ---- jobs ---- */

#define JOB(name, K, m, flags) COLUMN(struct job, name, K, m, flags)
static const struct schema_column job_columns[] = {
	JOB("id", INT64, id, SCHEMA_ID),
	JOB("state", JOB_STATE, state, 0),
	JOB("type", CHARS, type, SCHEMA_FIXED),
	JOB("lane", CHARS, lane, SCHEMA_FIXED),
	JOB("lane_rank", INT, lane_rank, SCHEMA_FIXED),
	JOB("priority", INT, priority, 0),
	JOB("team", CHARS, team, SCHEMA_FIXED),
	JOB("command", TEXT, command, SCHEMA_FIXED | SCHEMA_NULL),
	JOB("payload", TEXT, payload, SCHEMA_FIXED | SCHEMA_NULL),
	JOB("labels", TEXT, labels, SCHEMA_FIXED | SCHEMA_NULL),
	JOB("gpus", INT, gpus, SCHEMA_FIXED),
	JOB("min_vram_gb", INT, min_vram_gb, SCHEMA_FIXED),
	JOB("items", INT64, items, SCHEMA_FIXED),
	JOB("timeout_s", INT64, timeout_s, SCHEMA_FIXED),
	JOB("max_attempts", INT, max_attempts, SCHEMA_FIXED),
	JOB("attempts", INT, attempts, 0),
	JOB("run_at", INT64, run_at_ms, 0),
	JOB("created_at", INT64, created_ms, SCHEMA_FIXED),
	JOB("updated_at", INT64, updated_ms, 0),
	JOB("finished_at", INT64, finished_ms, 0),
	JOB("idem_key", TEXT, idem_key, SCHEMA_FIXED | SCHEMA_NULL),
	JOB("idem_hash", INT64, idem_hash, SCHEMA_FIXED),
	JOB("lease_token", INT64, lease_token, 0),
	JOB("worker", CHARS, worker, 0),
	JOB("lease_expires", INT64, lease_expires_ms, 0),
	JOB("lease_ms", INT64, lease_ms, 0),
	JOB("checkpoint", TEXT, checkpoint, SCHEMA_NULL),
	JOB("items_done", INT64, items_done, 0),
	JOB("error", TEXT, error, SCHEMA_NULL),
	JOB("result", TEXT, result, SCHEMA_NULL),
	JOB("seq", INT64, seq, 0),
	JOB("est_s", INT64, est_s, SCHEMA_FIXED),
	JOB("started_at", INT64, started_ms, 0),
	JOB("cost", REAL, cost, 0),
	JOB("items_start", INT64, items_start, 0),
	JOB("items_lost", INT64, items_lost, 0),
	JOB("interruptions", INT, interruptions, 0),
	JOB("instance_id", INT64, instance, 0),
};

static int emit_job(union schema_cb cb, void *arg, void *row) { return cb.job(arg, row); }

const struct schema_table schema_jobs = {
	"jobs", COLUMNS(job_columns, struct job), emit_job,
	"COUNT(*), COALESCE(SUM(id), 0), COALESCE(SUM(attempts), 0), COALESCE(SUM(items_done), 0), COALESCE(SUM(cost), 0)",
};

/* Every lease of a job, the run it began and how that ended: written
 * whole at the lease, then again at its end (store_attempt_put). */
#define ATTEMPT(name, K, m, flags) COLUMN(struct attempt, name, K, m, flags)
static const struct schema_column attempt_columns[] = {
	ATTEMPT("job_id", INT64, job, 0),
	ATTEMPT("attempt", INT, attempt, 0),
	ATTEMPT("instance_id", INT64, instance, 0),
	ATTEMPT("offer", CHARS, offer, 0),
	ATTEMPT("market", MARKET, market, 0),
	ATTEMPT("worker", CHARS, worker, 0),
	ATTEMPT("started_at", INT64, started_ms, 0),
	ATTEMPT("ended_at", INT64, ended_ms, 0),
	ATTEMPT("outcome", CHARS, outcome, 0),
	ATTEMPT("exit", INT, exit, 0),
	ATTEMPT("items_done", INT64, items_done, 0),
	ATTEMPT("checkpoint", TEXT, checkpoint, SCHEMA_NULL),
	ATTEMPT("reason", TEXT, reason, SCHEMA_NULL),
};

static int emit_attempt(union schema_cb cb, void *arg, void *row) { return cb.attempt(arg, row); }

const struct schema_table schema_attempts = {
	"job_attempts", COLUMNS(attempt_columns, struct attempt), emit_attempt,
	"COUNT(*), COALESCE(SUM(job_id), 0), COALESCE(SUM(attempt), 0), COALESCE(SUM(ended_at), 0)",
};

/* ---- the fleet and the decisions ---- */

#define INST(name, K, m) COLUMN(struct instance, name, K, m, 0)
static const struct schema_column instance_columns[] = {
	COLUMN(struct instance, "id", INT64, id, SCHEMA_ID),
	INST("offer", CHARS, offer),
	INST("market", MARKET, market),
	INST("state", INST_STATE, state),
	INST("gpus", INT, gpus),
	INST("vram_gb", INT, vram_gb),
	INST("gpu_ids", CHARS, gpu_ids),
	INST("provider_ref", CHARS, provider_ref),
	INST("launched_at", INT64, launched_ms),
	INST("registered_at", INT64, registered_ms),
	INST("idle_since", INT64, idle_since_ms),
	INST("terminated_at", INT64, terminated_ms),
	INST("updated_at", INT64, updated_ms),
	INST("job_id", INT64, job_id),
	INST("reason", CHARS, reason),
	INST("billed_ms", INT64, billed_ms),
	INST("cost", REAL, cost),
	INST("reclaim_at", INT64, reclaim_at_ms),
	INST("token", CHARS, token),
	/* What its provider wants back at terminate: store_instance_data. */
	APART("provider_data", TEXT, 0),
	INST("team", CHARS, team),
};

static int emit_instance(union schema_cb cb, void *arg, void *row) { return cb.instance(arg, row); }

const struct schema_table schema_instances = {
	"instances", COLUMNS(instance_columns, struct instance), emit_instance,
	"COUNT(*), COALESCE(SUM(id), 0), COALESCE(SUM(billed_ms), 0), COALESCE(SUM(cost), 0)",
};

/* Every state an instance went through: written by triggers alone. */
static const struct schema_column instance_event_columns[] = {
	APART("instance_id", INT64, 0),
	APART("at", INT64, 0),
	APART("state", TEXT, 0),
	APART("reason", TEXT, 0),
};

const struct schema_table schema_instance_events = {
	"instance_events", NCOLS(instance_event_columns), 0, NULL,
	"COUNT(*), COALESCE(SUM(instance_id), 0), COALESCE(SUM(at), 0)",
};

#define DECISION(name, K, m, flags) COLUMN(struct decision, name, K, m, flags)
static const struct schema_column decision_columns[] = {
	DECISION("id", INT64, id, SCHEMA_ID),
	DECISION("at", INT64, at_ms, 0),
	DECISION("kind", BORROWED, kind, 0),
	DECISION("offer", BORROWED, offer, 0),
	DECISION("count", INT, count, 0),
	DECISION("instance_id", INT64, instance, 0),
	DECISION("reason", BORROWED, reason, 0),
};

static int emit_decision(union schema_cb cb, void *arg, void *row) { return cb.decision(arg, row); }

const struct schema_table schema_decisions = {
	"decisions", COLUMNS(decision_columns, struct decision), emit_decision,
	"COUNT(*), COALESCE(SUM(id), 0), COALESCE(SUM(count), 0)",
};

/* ---- the ledger and the offers' statistics ---- */

/* A segment is walked in the ledger's join alone (schema_ledger). */
#define SEGMENT(name, K, m) COLUMN(struct segment, name, K, m, 0)
static const struct schema_column segment_columns[] = {
	APART("id", INT64, SCHEMA_ID),
	SEGMENT("instance_id", INT64, instance),
	SEGMENT("kind", CHARS, kind),
	SEGMENT("job_id", INT64, job),
	SEGMENT("start_at", INT64, start_ms),
	SEGMENT("end_at", INT64, end_ms),
	SEGMENT("cost", REAL, cost),
	SEGMENT("gpus", INT, gpus),
	SEGMENT("gpu_part", REAL, gpu_part),
};

const struct schema_table schema_segments = {
	"segments", COLUMNS(segment_columns, struct segment), NULL,
	"COUNT(*), COALESCE(SUM(id), 0), COALESCE(SUM(end_at - start_at), 0), COALESCE(SUM(cost), 0)",
};

#define STAT(name, K, m) COLUMN(struct offer_stat, name, K, m, 0)
static const struct schema_column offer_stat_columns[] = {
	STAT("offer", BORROWED, offer),
	STAT("market", MARKET, market),
	STAT("runs", INT64, runs),
	STAT("speed_sum", REAL, speed_sum),
	STAT("speed_n", INT64, speed_n),
	STAT("items", INT64, items),
	STAT("run_ms", INT64, run_ms),
	STAT("boots", INT64, boots),
	STAT("boot_ms", INT64, boot_ms),
	STAT("alive_ms", INT64, alive_ms),
	STAT("reclaims", INT64, reclaims),
	STAT("launches", INT64, launches),
	STAT("launch_failures", INT64, launch_failures),
	STAT("last_failure_at", INT64, last_failure_ms),
	STAT("last_launch_at", INT64, last_launch_ms),
	STAT("capacity_failures", INT64, capacity_failures),
	STAT("last_capacity_at", INT64, last_capacity_ms),
	STAT("broken_streak", INT64, broken_streak),
	STAT("last_broken_at", INT64, last_broken_ms),
	STAT("failing_since", INT64, failing_since_ms),
	STAT("lost", INT64, lost),
	STAT("last_lost_at", INT64, last_lost_ms),
};

static int emit_offer_stat(union schema_cb cb, void *arg, void *row) { return cb.offer_stat(arg, row); }

const struct schema_table schema_offer_stats = {
	"offer_stats", COLUMNS(offer_stat_columns, struct offer_stat), emit_offer_stat,
	"COUNT(*), COALESCE(SUM(runs), 0), COALESCE(SUM(launches), 0), COALESCE(SUM(alive_ms), 0)",
};

/* The day is the engine's argument beside the sums (ledger_add); a walk
 * reads the sums of several days added up, in this order. */
#define SUM(name, K, m) COLUMN(struct ledger_sum, name, K, m, 0)
static const struct schema_column ledger_sum_columns[] = {
	APART("day", INT64, 0),
	SUM("offer", BORROWED, offer),
	SUM("market", MARKET, market),
	SUM("kind", BORROWED, kind),
	SUM("team", BORROWED, team),
	SUM("ms", INT64, ms),
	SUM("gpu_ms", REAL, gpu_ms),
	SUM("cost", REAL, cost),
	SUM("items", INT64, items),
};

static int emit_ledger_sum(union schema_cb cb, void *arg, void *row) { return cb.ledger_sum(arg, row); }

const struct schema_table schema_ledger_sums = {
	"ledger_sums", COLUMNS(ledger_sum_columns, struct ledger_sum), emit_ledger_sum,
	"COUNT(*), COALESCE(SUM(ms), 0), COALESCE(SUM(cost), 0), COALESCE(SUM(items), 0)",
};

/* ---- alerts and team budgets ---- */

#define ALERT(name, K, m) COLUMN(struct alert_row, name, K, m, 0)
static const struct schema_column alert_columns[] = {
	ALERT("key", BORROWED, key),
	ALERT("name", BORROWED, name),
	ALERT("labels", BORROWED, labels),
	ALERT("firing", INT, firing),
	ALERT("since", INT64, since_ms),
	ALERT("fired_at", INT64, fired_ms),
	ALERT("value", REAL, value),
	ALERT("summary", BORROWED, summary),
};

static int emit_alert(union schema_cb cb, void *arg, void *row) { return cb.alert(arg, row); }

const struct schema_table schema_alerts = {"alerts", COLUMNS(alert_columns, struct alert_row), emit_alert, "COUNT(*)"};

static const struct schema_column team_budget_columns[] = {
	COLUMN(struct team_budget, "team", BORROWED, team, 0),
	COLUMN(struct team_budget, "budget", REAL, budget, 0),
	COLUMN(struct team_budget, "set_at", INT64, set_ms, 0),
};

static int emit_team_budget(union schema_cb cb, void *arg, void *row) { return cb.team_budget(arg, row); }

const struct schema_table schema_team_budgets = {
	"team_budgets", COLUMNS(team_budget_columns, struct team_budget), emit_team_budget,
	"COUNT(*), COALESCE(SUM(budget), 0)",
};

/* ---- the jobs' logs ---- */

#define LOG_LINE(name, K, m) COLUMN(struct log_line, name, K, m, 0)
static const struct schema_column job_log_columns[] = {
	LOG_LINE("job_id", INT64, job),
	LOG_LINE("attempt", INT, attempt),
	LOG_LINE("seq", INT64, seq),
	LOG_LINE("at", INT64, at_ms),
	LOG_LINE("stream", BORROWED, stream),
	LOG_LINE("text", BORROWED, text),
};

static int emit_log_line(union schema_cb cb, void *arg, void *row) { return cb.log_line(arg, row); }

const struct schema_table schema_job_logs = {
	"job_logs", COLUMNS(job_log_columns, struct log_line), emit_log_line,
	"COUNT(*), COALESCE(SUM(job_id), 0), COALESCE(SUM(seq), 0)",
};

#define LOG_META(name, K, m) COLUMN(struct log_meta, name, K, m, 0)
static const struct schema_column job_log_meta_columns[] = {
	LOG_META("job_id", INT64, job),
	LOG_META("attempt", INT, attempt),
	LOG_META("next_seq", INT64, next),
	LOG_META("dropped", INT64, dropped),
	LOG_META("trimmed", INT64, trimmed),
	LOG_META("bytes", INT64, bytes),
	LOG_META("head_end", INT64, head_end),
	LOG_META("updated_at", INT64, updated_ms),
};

static int emit_log_meta(union schema_cb cb, void *arg, void *row) { return cb.log_meta(arg, row); }

const struct schema_table schema_job_log_meta = {
	"job_log_meta", COLUMNS(job_log_meta_columns, struct log_meta), emit_log_meta,
	"COUNT(*), COALESCE(SUM(next_seq), 0), COALESCE(SUM(bytes), 0), COALESCE(SUM(dropped + trimmed), 0)",
};

static const struct schema_column tuning_columns[] = {
	COLUMN(struct tuning_row, "name", BORROWED, name, 0),
	COLUMN(struct tuning_row, "body", BORROWED, body, 0),
	COLUMN(struct tuning_row, "published_at", INT64, published_ms, 0),
};

static int emit_tuning(union schema_cb cb, void *arg, void *row) { return cb.tuning(arg, row); }

const struct schema_table schema_tunings = {
	"tunings", COLUMNS(tuning_columns, struct tuning_row), emit_tuning, "COUNT(*)",
};

/* More entries than SCHEMA_NTABLES do not compile. */
const struct schema_table *const schema_tables[] = {
	&schema_jobs, &schema_attempts, &schema_instances, &schema_instance_events, &schema_decisions,
	&schema_segments, &schema_offer_stats, &schema_ledger_sums, &schema_alerts, &schema_team_budgets,
	&schema_job_logs, &schema_job_log_meta, &schema_tunings, NULL,
};

/* PostgreSQL's tallies of the jobs (store/counts.h): derived from the
 * jobs, kept by its writers, made again by `ebb store copy` rather than
 * copied; SQLite keeps them in memory only. */
struct tally_row {
	int shard;
	struct job_count c;
};

#define TALLY(name, K, m) COLUMN(struct tally_row, name, K, m, 0)
static const struct schema_column tally_columns[] = {
	TALLY("shard", INT, shard),
	TALLY("state", JOB_STATE, c.state),
	TALLY("lane", BORROWED, c.lane),
	TALLY("type", BORROWED, c.type),
	TALLY("team", BORROWED, c.team),
	TALLY("gpus", INT, c.gpus),
	TALLY("min_vram_gb", INT, c.min_vram_gb),
	TALLY("priority", INT, c.priority),
	TALLY("n", INT64, c.n),
	TALLY("items", INT64, c.items),
	TALLY("no_est", INT64, c.no_est),
	TALLY("est_s", INT64, c.est_s),
	TALLY("run_ms", INT64, c.run_ms),
};

const struct schema_table schema_job_tallies = {"job_tallies", COLUMNS(tally_columns, struct tally_row), NULL, NULL};

/* ---- the rows of the other queries ---- */

#define ARRIVAL(name, K, m) COLUMN(struct arrival_row, name, K, m, 0)
static const struct schema_column arrival_columns[] = {
	ARRIVAL("gpus", INT, gpus),
	ARRIVAL("min_vram_gb", INT, min_vram_gb),
	ARRIVAL("lane", BORROWED, lane),
	ARRIVAL("type", BORROWED, type),
	ARRIVAL("est_s", INT64, est_s),
	ARRIVAL("created_at", INT64, created_ms),
	ARRIVAL("team", BORROWED, team),
};

static int emit_arrival(union schema_cb cb, void *arg, void *row) { return cb.arrival(arg, row); }

const struct schema_table schema_arrivals = {"arrivals", COLUMNS(arrival_columns, struct arrival_row), emit_arrival,
					     NULL};

#define DEAD(name, K, m, flags) COLUMN(struct dead_letters, name, K, m, flags)
static const struct schema_column dead_letter_columns[] = {
	DEAD("lane", BORROWED, lane, 0),
	DEAD("jobs", INT64, jobs, 0),
	DEAD("first", INT64, first_ms, 0),
	DEAD("last", INT64, last_ms, 0),
	DEAD("last job", INT64, last_job, 0),
	DEAD("last error", BORROWED, last_error, SCHEMA_NULL),
	DEAD("cost", REAL, cost, 0),
};

static int emit_dead_letters(union schema_cb cb, void *arg, void *row) { return cb.dead_letters(arg, row); }

const struct schema_table schema_dead_letters = {
	"dead letters", COLUMNS(dead_letter_columns, struct dead_letters), emit_dead_letters, NULL};

/* A segment with its instance and, for a job's run, its job (NULL and 0
 * for the others). */
struct ledger_read {
	struct ledger_row row;
	struct segment seg;
};

#define LEDGER(name, K, m, flags) COLUMN(struct ledger_read, name, K, m, flags)
static const struct schema_column ledger_columns[] = {
	LEDGER("instance_id", INT64, seg.instance, 0),
	LEDGER("kind", CHARS, seg.kind, 0),
	LEDGER("job_id", INT64, seg.job, 0),
	LEDGER("start_at", INT64, seg.start_ms, 0),
	LEDGER("end_at", INT64, seg.end_ms, 0),
	LEDGER("cost", REAL, seg.cost, 0),
	LEDGER("offer", BORROWED, row.offer, 0),
	LEDGER("market", MARKET, row.market, 0),
	LEDGER("instance gpus", INT, row.gpus, 0),
	LEDGER("team", BORROWED, row.team, SCHEMA_NULL),
	LEDGER("type", BORROWED, row.type, SCHEMA_NULL),
	LEDGER("items_done", INT64, row.items_done, SCHEMA_NULL),
	LEDGER("items_lost", INT64, row.items_lost, SCHEMA_NULL),
	LEDGER("reclaimed", INT, row.reclaimed, 0),
	LEDGER("gpus", INT, seg.gpus, 0),
	LEDGER("launch team", BORROWED, row.launch_team, 0),
	LEDGER("gpu_part", REAL, seg.gpu_part, 0),
};

static int emit_ledger(union schema_cb cb, void *arg, void *row)
{
	struct ledger_read *r = row;

	r->row.seg = &r->seg;
	return cb.ledger(arg, &r->row);
}

const struct schema_table schema_ledger = {"ledger", COLUMNS(ledger_columns, struct ledger_read), emit_ledger, NULL};

#define COUNT(name, K, m) COLUMN(struct job_count, name, K, m, 0)
static const struct schema_column job_count_columns[] = {
	COUNT("state", JOB_STATE, state),
	COUNT("lane", BORROWED, lane),
	COUNT("type", BORROWED, type),
	COUNT("team", BORROWED, team),
	COUNT("gpus", INT, gpus),
	COUNT("min_vram_gb", INT, min_vram_gb),
	COUNT("priority", INT, priority),
	COUNT("n", INT64, n),
	COUNT("items", INT64, items),
	COUNT("no_est", INT64, no_est),
	COUNT("est_s", INT64, est_s),
	COUNT("run_ms", INT64, run_ms),
	COUNT("oldest", INT64, oldest_ms),
};

static int emit_job_count(union schema_cb cb, void *arg, void *row) { return cb.count_row(arg, row); }

const struct schema_table schema_job_counts = {
	"job counts", COLUMNS(job_count_columns, struct job_count), emit_job_count, NULL};

struct duration_read {
	const char *type;
	int64_t ms;
};

static const struct schema_column duration_columns[] = {
	COLUMN(struct duration_read, "type", BORROWED, type, 0),
	COLUMN(struct duration_read, "run time", INT64, ms, 0),
};

static int emit_duration(union schema_cb cb, void *arg, void *row)
{
	const struct duration_read *d = row;

	return cb.duration(arg, d->type, d->ms);
}

const struct schema_table schema_durations = {
	"recent durations", COLUMNS(duration_columns, struct duration_read), emit_duration, NULL};

struct submit_read {
	int64_t ms;
};

static const struct schema_column submit_columns[] = {COLUMN(struct submit_read, "created_at", INT64, ms, 0)};

static int emit_submit(union schema_cb cb, void *arg, void *row)
{
	return cb.time(arg, ((const struct submit_read *)row)->ms);
}

const struct schema_table schema_submits = {
	"recent submits", COLUMNS(submit_columns, struct submit_read), emit_submit, NULL};

/* Read into arrays: integers (ids, a time), the jobs on an instance. */
struct int64_read {
	int64_t v;
};
_Static_assert(sizeof(struct int64_read) == sizeof(int64_t), "an array of them is one of int64_t");

static const struct schema_column int64_columns[] = {COLUMN(struct int64_read, "value", INT64, v, 0)};

const struct schema_table schema_int64s = {"integers", COLUMNS(int64_columns, struct int64_read), NULL, NULL};

static const struct schema_column job_on_columns[] = {
	COLUMN(struct job_on, "id", INT64, id, 0),
	COLUMN(struct job_on, "gpus", INT, gpus, 0),
};

const struct schema_table schema_jobs_on = {"jobs on an instance", COLUMNS(job_on_columns, struct job_on), NULL,
					    NULL};

#define FOUND(name, K, m) COLUMN(struct segment_found, name, K, m, 0)
static const struct schema_column segment_found_columns[] = {
	FOUND("id", INT64, id),
	FOUND("kind", CHARS, seg.kind),
	FOUND("job_id", INT64, seg.job),
	FOUND("start_at", INT64, seg.start_ms),
	FOUND("gpus", INT, seg.gpus),
	FOUND("gpu_part", REAL, seg.gpu_part),
};

const struct schema_table schema_segment_found = {
	"open segment", COLUMNS(segment_found_columns, struct segment_found), NULL, NULL};

/* ---- the SQL types ---- */

/* Each kind's type in each engine, as its catalog names it
 * (PRAGMA table_info, information_schema.columns). */
static const struct {
	const char *sqlite, *postgres;
} sql_types[] = {
	[SCHEMA_INT64] = {"INTEGER", "bigint"},
	[SCHEMA_INT] = {"INTEGER", "integer"},
	[SCHEMA_REAL] = {"REAL", "double precision"},
	[SCHEMA_TEXT] = {"TEXT", "text"},
	[SCHEMA_BORROWED] = {"TEXT", "text"},
	[SCHEMA_CHARS] = {"TEXT", "text"},
	[SCHEMA_JOB_STATE] = {"TEXT", "text"},
	[SCHEMA_INST_STATE] = {"TEXT", "text"},
	[SCHEMA_MARKET] = {"TEXT", "text"},
};

const char *schema_sql_type(const struct schema_column *c, const char *engine)
{
	if (strcmp(engine, "sqlite") == 0)
		return sql_types[c->kind].sqlite;
	if (strcmp(engine, "postgres") == 0)
		return sql_types[c->kind].postgres;
	return NULL;
}

const struct schema_table *schema_table(const char *name)
{
	for (const struct schema_table *const *t = schema_tables; *t; t++) {
		if (strcmp((*t)->name, name) == 0)
			return *t;
	}
	return NULL;
}
