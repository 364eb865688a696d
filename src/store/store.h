/* The store's front end: every caller keeps jobs, instances, decisions and
 * the ledger through these functions, never through an engine, in the way
 * git's refs.c stands in front of its ref backends. store_open() picks the
 * engine named by [store] kind from the registry (store.c); what every
 * engine shares lives here: the job counts (counts.h), each job's stored
 * state, and a change counter the scaler wakes on. The engine contract is
 * store/engine.h.
 *
 * Calls return 0 on success, STORE_NOT_FOUND where a row may be missing,
 * and -1 on an engine error, with the reason in store_error(). Every
 * result must be handled (the compiler checks). Writes are made inside a
 * batch (store_begin .. store_commit) that serve commits before it sends
 * any reply of the batch; a request's own writes sit in a savepoint inside
 * it, so that a failed request leaves no trace. Rows handed to a callback
 * live until it returns; a callback's nonzero return stops the walk and is
 * returned. A store is used by one thread (serve has only one). */
#ifndef EBB_STORE_H
#define EBB_STORE_H

#include <stdint.h>

#include <stddef.h>

#include "common/config.h"
#include "common/error.h"
#include "common/instance.h"
#include "common/job.h"
#include "store/counts.h"

#define STORE_NOT_FOUND 1
#define STORE_CHECK __attribute__((warn_unused_result))

struct store;

/* What a worker offers when it asks for a lease. */
struct lease_offer {
	int gpus;
	int vram_gb;
	json_t *labels; /* array of strings, or NULL */
	/* Types at their max_running: skipped. */
	const char *const *full_types;
	int nfull_types;
	/* With teams: the GPUs each team named may still take; a job of one
	 * of them that asks for more (its gpus, at least 1) is skipped. */
	const char *const *teams;
	const int64_t *team_rooms;
	int nteams;
};

struct job_filter {
	int state; /* -1: any */
	const char *lane, *team, *type;
	int64_t after_id; /* ids greater than this, ascending */
	int limit;
	/* Finished at or after from, before to; 0: no bound. */
	int64_t finished_from_ms, finished_to_ms;
};


/* Queued work of one requirement class, lane, type and team. */
struct demand_row {
	int gpus, min_vram_gb;
	const char *lane, *type, *team;
	int priority;
	int64_t jobs;
	int64_t items;
	int64_t jobs_without_est;
	int64_t est_s; /* summed over the jobs that have one */
	int64_t oldest_ms;
};

/* One submitted job, for the arrival rate. */
struct arrival_row {
	int gpus, min_vram_gb;
	const char *lane, *type, *team;
	int64_t est_s; /* 0: none given */
	int64_t created_ms;
};

struct decision {
	int64_t id;
	int64_t at_ms;
	const char *kind; /* launch, drain, terminate */
	const char *offer;
	int count;
	int64_t instance;
	const char *reason;
};

/* A stretch of one instance's life: boot, idle, a job's run, or the
 * billing remainder (time billed past its termination). */
struct segment {
	int64_t instance;
	char kind[8]; /* boot, idle, job, billing */
	int64_t job;
	int64_t start_ms, end_ms;
	double cost;
	/* The instance's GPUs it holds, 0: all of them. Jobs side by side
	 * on one instance each hold theirs, and idle the rest (ledger.c). */
	int gpus;
};

/* The share of its instance's time a segment holds (its GPUs over the
 * instance's): what it costs, and what it counts in instance time. */
double segment_share(const struct segment *g, int instance_gpus);

/* What ebb has observed of one offer on one market; added up in the store. */
struct offer_stat {
	const char *offer;
	enum market market;
	int64_t runs;          /* finished job runs */
	double speed_sum;      /* per run with an est_s: est_s / run time */
	int64_t speed_n;
	int64_t items, run_ms; /* items done and run time of those runs */
	int64_t boots, boot_ms; /* launch to registration */
	int64_t alive_ms;      /* instance time, for the reclaim rate */
	int64_t reclaims;
	int64_t launches, launch_failures;
	int64_t last_failure_ms, last_launch_ms;
	/* Of the failures: those for want of capacity, and the run of those
	 * of a broken setup since the last launch that worked. */
	int64_t capacity_failures, last_capacity_ms;
	int64_t broken_streak, last_broken_ms;
	/* The first failure of the launches failing now, 0 once one works;
	 * in a delta, the time of a failure (kept when a run has begun). */
	int64_t failing_since_ms;
	/* Workers lost: an instance gone while it booted or ran a job, a
	 * worker that left orphaned (serve out of its reach). */
	int64_t lost, last_lost_ms;
	/* In a delta: a launch worked, and the broken run ends (before
	 * broken_streak is added). */
	int launched_ok;
};

/* The jobs of one lane dead-lettered since a time. */
struct dead_letters {
	const char *lane;
	int64_t jobs;
	int64_t first_ms, last_ms; /* finished_at of the first and the last */
	int64_t last_job;
	const char *last_error;
	double cost; /* USD their runs cost */
};

/* A team's monthly budget as an admin set it at run time, over its
 * [team.NAME] monthly_budget (docs/TEAMS.md). */
struct team_budget {
	const char *team;
	double budget; /* USD; < 0: none (lifted) */
	int64_t set_ms;
};

/* One line a job wrote (serve/joblog.c): its attempt's seq numbers
 * count from 0 in the order the worker shipped them. */
struct log_line {
	int64_t job;
	int attempt; /* the lease's token */
	int64_t seq;
	int64_t at_ms;
	const char *stream; /* "stdout" or "stderr" */
	const char *text;
};

/* What the store keeps of one attempt's log beside its lines. */
struct log_meta {
	int64_t job;
	int attempt;
	int64_t next;       /* the seq it wants next: all before are stored or dropped */
	int64_t dropped;    /* bytes the worker dropped, as it last said */
	int64_t trimmed;    /* bytes removed to keep within [queue] log_max */
	int64_t bytes;      /* of the lines kept */
	int64_t head_end;   /* the last seq of the head, kept whole; -1 while it grows */
	int64_t updated_ms; /* the last line's arrival: retention counts from it */
};

/* One lease of a job and how its run ended (docs/API.md, a job's
 * attempts): made at the lease, written again at its end. */
struct attempt {
	int64_t job;
	int attempt;      /* 1, 2, ... in lease order, every lease: its lease token */
	int64_t instance; /* 0: a worker ebb did not launch */
	char offer[CONF_NAME_MAX + 1]; /* its instance's, "" for none */
	enum market market;
	char worker[CONF_NAME_MAX + 1];
	int64_t started_ms, ended_ms; /* ended 0: running */
	char outcome[16]; /* running, succeeded, failed, expired, interrupted, cancelled, preempted */
	int exit;         /* the process's exit status; -1: not known */
	int64_t items_done;
	char *checkpoint; /* as of its end; NULL: none */
	char *reason;     /* why it failed or ended; NULL: none */
};

/* The last comparison `ebb tune --history --publish` sent (its JSON
 * text), for the dashboard (docs/SIMULATION.md). */
struct tuning_row {
	const char *name; /* "last": the one row */
	const char *body;
	int64_t published_ms;
};

/* An alert that is pending or firing (serve/alerts.c), kept so that it
 * outlives a restart of serve. */
struct alert_row {
	const char *key;    /* its name and labels: its identity */
	const char *name;   /* the rule's */
	const char *labels; /* a JSON object's text */
	int firing;         /* 0: pending, waiting out its rule's for */
	int64_t since_ms, fired_ms;
	double value;
	const char *summary;
};

/* One row of the ledger for reports: a segment with what it belongs to. */
struct ledger_row {
	const struct segment *seg;
	const char *offer;
	enum market market;
	int gpus; /* the instance's */
	const char *team, *type; /* of the job; NULL for boot, idle, billing */
	int64_t items_done, items_lost; /* of the job, when the segment ended it */
	int reclaimed;         /* the instance ended by a reclaim */
	const char *launch_team; /* its instance's (struct instance team): "" for none */
};

/* What the ledger adds up as its segments close, for the figures that
 * must not cost a walk of every segment ever recorded (GET /metrics): the
 * time, GPU time, cost and items of one offer on one market, one kind of
 * segment and one team. */
struct ledger_sum {
	const char *offer;
	enum market market;
	const char *kind; /* boot, idle, job, billing */
	/* Of the job a "job" segment ran; for the others, the team whose
	 * work the instance was launched for, "" for none (shared). */
	const char *team;
	int64_t ms;
	double gpu_ms;
	double cost;
	int64_t items; /* done by the job runs that succeeded */
};

/* store_ledger_sums' since_day for the sums of all time. */
#define STORE_ALL_TIME (-1)

typedef int (*job_cb)(void *arg, const struct job *job);
typedef int (*demand_cb)(void *arg, const struct demand_row *row);
typedef int (*arrival_cb)(void *arg, const struct arrival_row *row);
typedef int (*instance_cb)(void *arg, const struct instance *inst);
typedef int (*decision_cb)(void *arg, const struct decision *d);
/* One finished job: its type and run time, newest first. */
typedef int (*duration_cb)(void *arg, const char *type, int64_t run_ms);
typedef int (*time_cb)(void *arg, int64_t ms);
typedef int (*offer_stat_cb)(void *arg, const struct offer_stat *stat);
typedef int (*ledger_cb)(void *arg, const struct ledger_row *row);
typedef int (*ledger_sum_cb)(void *arg, const struct ledger_sum *sum);
typedef int (*dead_letters_cb)(void *arg, const struct dead_letters *d);
typedef int (*alert_cb)(void *arg, const struct alert_row *a);
typedef int (*team_budget_cb)(void *arg, const struct team_budget *b);
typedef int (*log_line_cb)(void *arg, const struct log_line *l);
typedef int (*log_meta_cb)(void *arg, const struct log_meta *m);
typedef int (*attempt_cb)(void *arg, const struct attempt *a);
typedef int (*tuning_cb)(void *arg, const struct tuning_row *t);

/* The engines' shares of the configuration, for struct conf_plugins. */
extern const struct conf_plugin *const store_plugins[];

/* Opens the engine [store] kind names (creating and migrating its data
 * as needed). NULL on error, with the reason in err. */
struct store *store_open(const struct config *cfg, char *err, size_t errsize);
void store_close(struct store *st);
/* The engine's name ([store] kind). */
const char *store_kind(const struct store *st);
/* Why the last call failed. */
const char *store_error(const struct store *st);
/* What a client is told of the failure (returns -1): 507 storage_full
 * when a call of this batch failed for want of space on disk (nothing
 * was kept, and a retry works once space is freed), 503 contended when
 * another serve's batch held what it needed (a retry works), else 500
 * store with the reason. */
int store_failure(const struct store *st, struct ebb_error *e);
/* Grows with every call that failed: serve's alerts watch it. */
uint64_t store_errors(const struct store *st);
/* The reason of the last call that failed, whatever came after it. */
const char *store_last_error(const struct store *st);
/* Grows with every write of a job, an instance or a team's budget,
 * committed or not: a reader that saw the same value has seen every
 * change since. */
uint64_t store_changes(const struct store *st);

/* ---- several serves on one store ([postgres] active, docs/HA.md) ---- */
/* Other serves write this store at once: reads in a batch lock their
 * rows, and the counts are read again every second. */
int store_shared(const struct store *st);
/* Asks for the leader's lock without waiting (never inside a batch): 1
 * this serve leads (runs the scaler), 0 another does, -1 an error. The
 * leader calls it too, to keep its lock: one that has lost it to another
 * serve exits (a lock lost while it is free is taken again). A store no
 * one shares always leads. */
int store_lead(struct store *st);
/* Once this batch has committed, tell the other serves that a job may
 * have become ready: their waiting workers look. */
void store_wake_others(struct store *st);
/* A descriptor that turns readable when another serve's word comes
 * (made again after it broke); -1: none, or it cannot be made now. */
int store_wake_fd(struct store *st);
/* Reads what came on it: 1 a word, 0 none, -1 it broke. */
int store_woken(struct store *st);
/* The name of the serve that leads ([server] name, else HOST:PID): 0,
 * STORE_NOT_FOUND when none does (or the store is not shared), -1 on an
 * error. */
int store_leader(struct store *st, char *name, size_t size) STORE_CHECK;
/* The time by the store's clock: 0, STORE_NOT_FOUND when the store has
 * none of its own, -1 on an error. */
int store_now_ms(struct store *st, int64_t *ms) STORE_CHECK;

/* ---- transactions ---- */
int store_begin(struct store *st) STORE_CHECK;
/* Durable when it returns 0; on -1 the caller rolls back. */
int store_commit(struct store *st) STORE_CHECK;
int store_rollback(struct store *st) STORE_CHECK;
/* One savepoint at a time inside a batch: a request's writes. */
int store_savepoint(struct store *st) STORE_CHECK;
int store_release(struct store *st) STORE_CHECK;
/* Undoes the writes since the savepoint and ends it. */
int store_rollback_savepoint(struct store *st) STORE_CHECK;

/* ---- jobs ---- */
/* Assigns job->id. */
int store_job_insert(struct store *st, struct job *job) STORE_CHECK;
/* Writes every mutable field of the job with this id. */
int store_job_update(struct store *st, struct job *job) STORE_CHECK;
int store_job_get(struct store *st, int64_t id, struct job *out) STORE_CHECK;
int store_job_get_by_key(struct store *st, const char *team, const char *key,
			 struct job *out) STORE_CHECK;
/* Whether a queued job may fit the offer: 0 when the tallies say that
 * none does. Reads no job. Exact with one writer; with several, as of
 * the last read of the tallies, which another serve's word that a job is
 * ready makes stale (store_counts_stale(): the next batch reads them),
 * so that a waiting lease woken by the word sees that job's class. */
int store_offer_may_fit(struct store *st, const struct lease_offer *offer);
/* The next batch reads the tallies again, whatever their age. */
void store_counts_stale(struct store *st);
/* The first queued job the offer fits, in lane, priority, seq order. */
int store_job_next_ready(struct store *st, const struct lease_offer *offer,
			 struct job *out) STORE_CHECK;
int store_job_list(struct store *st, const struct job_filter *filter, job_cb cb,
		   void *arg) STORE_CHECK;
/* Ids of delayed jobs due and leases expired at now_ms, up to max. */
int store_job_due(struct store *st, int64_t now_ms, int64_t *ids, int max, int *n) STORE_CHECK;
/* A job leased on an instance, and the GPUs it holds there: what it
 * asks, at least one. */
struct job_on {
	int64_t id;
	int gpus;
};
/* The jobs leased on an instance, up to max, smallest id first. */
int store_job_leased_on(struct store *st, int64_t instance, struct job_on *out, int max, int *n) STORE_CHECK;
/* The earliest run_at of a delayed job or expiry of a lease; 0 if none. */
int store_next_deadline(struct store *st, int64_t *out_ms) STORE_CHECK;
/* The jobs' tallies per state and class (kept in memory: O(keys)). */
int store_job_counts(struct store *st, count_cb cb, void *arg) STORE_CHECK;
/* Jobs in one state, all lanes, types and teams. */
int64_t store_count_in_state(const struct store *st, enum job_state state);
/* Queued work per (GPUs, VRAM, lane, type, team, priority), from the
 * tallies: O(classes), whatever the backlog. */
int store_demand(struct store *st, demand_cb cb, void *arg) STORE_CHECK;
/* Counts the jobs again and compares them with the tallies the store
 * keeps: each key that differs to cb; *keys, the keys compared. Inside a
 * batch: on a shared engine it holds the other serves' writes of the
 * tallies until the batch ends (docs/ARCHITECTURE.md, "The tallies"). */
int store_check(struct store *st, count_diff_cb cb, void *arg, int64_t *keys) STORE_CHECK;
/* Submit times of the newest `limit` jobs, newest first. */
int store_recent_submits(struct store *st, int limit, time_cb cb, void *arg) STORE_CHECK;
/* Run times of the newest `limit` succeeded jobs, newest first. */
int store_recent_durations(struct store *st, int limit, duration_cb cb, void *arg) STORE_CHECK;
/* The newest `limit` jobs submitted since since_ms, newest first. */
int store_arrivals(struct store *st, int64_t since_ms, int limit, arrival_cb cb,
		   void *arg) STORE_CHECK;
/* The jobs dead-lettered since since_ms, per lane. */
int store_dead_letters(struct store *st, int64_t since_ms, dead_letters_cb cb, void *arg) STORE_CHECK;
/* Instance time billed (launch to termination, or now) and the run time
 * of the finished jobs (from the tallies), of all time. */
int store_usage(struct store *st, int64_t now_ms, int64_t *instance_ms, int64_t *job_ms) STORE_CHECK;

/* ---- a job's attempts ---- */
/* Writes the attempt (job, attempt): made at its lease, and at its end
 * the end's columns (ended, outcome, exit, items, checkpoint, reason). */
int store_attempt_put(struct store *st, const struct attempt *a) STORE_CHECK;
/* The job's attempts, oldest first. */
int store_attempts(struct store *st, int64_t job, attempt_cb cb, void *arg) STORE_CHECK;

/* ---- the fleet and the scaler's decisions ---- */
/* Assigns inst->id. */
int store_instance_insert(struct store *st, struct instance *inst) STORE_CHECK;
int store_instance_update(struct store *st, const struct instance *inst) STORE_CHECK;
int store_instance_get(struct store *st, int64_t id, struct instance *out) STORE_CHECK;
/* The instance whose worker token this is (token not empty). */
int store_instance_by_token(struct store *st, const char *token, struct instance *out) STORE_CHECK;
/* What its provider wants back at terminate (a JSON object's text, or
 * ""): set once its launch answered, read into buf. */
int store_instance_data_set(struct store *st, int64_t id, const char *data) STORE_CHECK;
int store_instance_data(struct store *st, int64_t id, char *buf, size_t size) STORE_CHECK;
/* All instances but the terminated ones, by id: the live fleet, which
 * [scaler] max_instances bounds. */
int store_instance_list(struct store *st, instance_cb cb, void *arg) STORE_CHECK;
/* A page of every instance, the terminated ones too, which grow without
 * end: at most limit, those with ids above after_id, by id. */
int store_instance_page(struct store *st, int64_t after_id, int limit, instance_cb cb,
			void *arg) STORE_CHECK;
int store_decision_insert(struct store *st, const struct decision *d) STORE_CHECK;
/* A page of the decisions, newest first: at most limit, those with ids
 * below before_id (INT64_MAX: from the newest). */
int store_decision_list(struct store *st, int64_t before_id, int limit, decision_cb cb,
			void *arg) STORE_CHECK;

/* ---- the ledger and what was measured of the offers ---- */
int store_segment_open(struct store *st, const struct segment *seg) STORE_CHECK;
/* Ends one of the instance's open segments at end_ms, costed at its
 * share (segment_share) of usd_per_ms, the instance's price; *closed gets
 * it. STORE_NOT_FOUND if none is open. */
int store_segment_close(struct store *st, int64_t instance, int64_t end_ms, double usd_per_ms, int instance_gpus,
			struct segment *closed) STORE_CHECK;
int store_job_add_cost(struct store *st, int64_t job, double usd) STORE_CHECK;
/* Adds delta's counts to the offer's; the last_* times are replaced when
 * later. */
int store_offer_stat_add(struct store *st, const struct offer_stat *delta) STORE_CHECK;
int store_offer_stats(struct store *st, offer_stat_cb cb, void *arg) STORE_CHECK;
/* Segments that ended at or after since_ms, and the open ones, of those
 * whose ids are in (after_id, upto_id], in id order: a slice of the
 * ledger, so that a walk of its history can stop between slices. */
int store_ledger(struct store *st, int64_t since_ms, int64_t after_id, int64_t upto_id, ledger_cb cb,
		 void *arg) STORE_CHECK;
/* The largest segment id, 0 when there is none. */
int store_segment_last_id(struct store *st, int64_t *id) STORE_CHECK;
/* The open segments alone, as store_ledger gives them: what the sums do
 * not hold yet. Bounded by the live instances, not by history. */
int store_ledger_open(struct store *st, ledger_cb cb, void *arg) STORE_CHECK;
/* Adds delta to the sums of UTC day `day` (days since 1970-01-01) and to
 * those of all time. */
int store_ledger_add(struct store *st, int64_t day, const struct ledger_sum *delta) STORE_CHECK;
/* The sums of the days from since_day on, or of all time with
 * STORE_ALL_TIME: a row per offer, market, kind and team. */
int store_ledger_sums(struct store *st, int64_t since_day, ledger_sum_cb cb, void *arg) STORE_CHECK;

/* ---- alerts ---- */
/* Writes the alert of a->key, made if new. */
int store_alert_put(struct store *st, const struct alert_row *a) STORE_CHECK;
int store_alert_delete(struct store *st, const char *key) STORE_CHECK;
/* Every alert kept, by key. */
int store_alerts(struct store *st, alert_cb cb, void *arg) STORE_CHECK;

/* ---- team budgets set at run time ---- */
/* Writes the team's, made if new. */
int store_team_budget_set(struct store *st, const struct team_budget *b) STORE_CHECK;
/* Every team's, by name. */
int store_team_budgets(struct store *st, team_budget_cb cb, void *arg) STORE_CHECK;

/* ---- the jobs' logs (serve/joblog.c) ---- */
/* The attempt's meta, STORE_NOT_FOUND when it has no log. */
int store_log_meta(struct store *st, int64_t job, int attempt, struct log_meta *out) STORE_CHECK;
/* Writes m, made if new. */
int store_log_meta_put(struct store *st, const struct log_meta *m) STORE_CHECK;
/* Up to limit metas last written before before_ms, oldest first. */
int store_log_metas_oldest(struct store *st, int64_t before_ms, int limit, log_meta_cb cb, void *arg) STORE_CHECK;
int store_log_meta_delete(struct store *st, int64_t job, int attempt) STORE_CHECK;
/* The bytes of every log kept. */
int store_log_total(struct store *st, int64_t *bytes) STORE_CHECK;
int store_log_insert(struct store *st, const struct log_line *l) STORE_CHECK;
/* Up to limit lines of the attempt past seq after, in order; with last,
 * the last limit of them, newest first. */
int store_log_lines(struct store *st, int64_t job, int attempt, int64_t after, int limit, int last, log_line_cb cb,
		    void *arg) STORE_CHECK;
/* Deletes the attempt's lines with seq in (after, upto]. */
int store_log_delete(struct store *st, int64_t job, int attempt, int64_t after, int64_t upto) STORE_CHECK;
/* ---- the published tuning ---- */
/* Writes the row of its name, made if new. */
int store_tuning_set(struct store *st, const struct tuning_row *t) STORE_CHECK;
/* The rows, by name (none before a publish). */
int store_tunings(struct store *st, tuning_cb cb, void *arg) STORE_CHECK;

#endif
