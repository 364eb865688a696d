/* The store's front end (see store.h): the registry of engines, and what
 * every engine shares, so that no engine can differ in it: the job counts
 * follow each batch and savepoint, each job remembers the state the store
 * holds for it, and every write of a job or an instance moves the change
 * counter. */
#include "store/store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/lease_key.h"
#include "common/mem.h"
#include "store/engine.h"

/* Every call to the engine goes through here, so that a failure counts
 * (store_errors()) whatever the engine: one it reports, with its reason in
 * errmsg, as the contract says; a walk's callback may return -1 too, with
 * no reason, which is not one. */
#define ENGINE(st, call) counted((st), ((st)->errmsg[0] = '\0', (st)->engine->call))

static int counted(struct store *st, int rc)
{
	if (rc < 0 && st->errmsg[0]) {
		st->errors++;
		memcpy(st->lasterr, st->errmsg, sizeof st->lasterr);
	}
	return rc;
}

/* The registry: [store] kind = NAME opens the engine of that name. Each
 * entry is an engine's share of the configuration, the first member of
 * its struct store_engine, so the configuration reads the same list. */
extern const struct store_engine store_engine_sqlite, store_engine_postgres;
const struct conf_plugin *const store_plugins[] = {&store_engine_sqlite.conf, &store_engine_postgres.conf, NULL};

/* Why the tallies failed when nothing else said why. */
#define COUNTS_NOMEM "store: out of memory for the job counts"

static int add_count_row(void *arg, const struct job_count *row)
{
	return counts_add(arg, row) == 0 ? 0 : -1;
}

struct store *store_open(const struct config *cfg, char *err, size_t errsize)
{
	const struct conf_plugin *e = config_plugin_named(store_plugins, cfg->store_kind);
	struct store *st;

	if (!e) {
		snprintf(err, errsize, "[store] kind: no engine named '%s'", cfg->store_kind);
		return NULL;
	}
	if (!(st = mem_calloc(1, sizeof *st)) || !(st->counts = counts_new())) {
		snprintf(err, errsize, "store: out of memory");
		free(st);
		return NULL;
	}
	st->engine = (const struct store_engine *)e;
	st->counts_read_ms = clock_monotonic_ms();
	if (st->engine->open(st, cfg) != 0 ||
	    st->engine->job_count_rows(st, add_count_row, st->counts) != 0) {
		snprintf(err, errsize, "%s", st->errmsg[0] ? st->errmsg : COUNTS_NOMEM);
		store_close(st);
		return NULL;
	}
	return st;
}

void store_close(struct store *st)
{
	if (!st)
		return;
	if (st->db)
		st->engine->close(st);
	counts_free(st->counts);
	free(st);
}

const char *store_kind(const struct store *st) { return st->engine->conf.name; }
const char *store_error(const struct store *st) { return st->errmsg; }
uint64_t store_changes(const struct store *st) { return st->changes; }
uint64_t store_errors(const struct store *st) { return st->errors; }
const char *store_last_error(const struct store *st) { return st->lasterr; }

/* ---- several serves on one store ---- */

int store_shared(const struct store *st) { return st->shared; }

int store_lead(struct store *st) { return st->engine->lead ? ENGINE(st, lead(st)) : 1; }

void store_wake_others(struct store *st)
{
	if (st->shared && st->engine->notify)
		st->engine->notify(st);
}

int store_wake_fd(struct store *st) { return st->shared && st->engine->wake_fd ? ENGINE(st, wake_fd(st)) : -1; }

int store_woken(struct store *st) { return st->engine->woken ? ENGINE(st, woken(st)) : 0; }

int store_leader(struct store *st, char *name, size_t size)
{
	return st->engine->leader ? ENGINE(st, leader(st, name, size)) : STORE_NOT_FOUND;
}

int store_now_ms(struct store *st, int64_t *ms)
{
	return st->engine->now_ms ? ENGINE(st, now_ms(st, ms)) : STORE_NOT_FOUND;
}

/* ---- transactions: the counts follow every boundary ---- */

int store_failure(const struct store *st, struct ebb_error *e)
{
	if (st->full)
		return error_set(e, 507, "storage_full", NULL,
				 "the store is out of space (%s): nothing was saved; retry once space is freed",
				 st->errmsg[0] ? st->errmsg : st->lasterr);
	if (st->contended)
		return error_set(e, 503, "contended", NULL,
				 "another serve's batch held what this request needed (%s): nothing was saved; retry",
				 st->errmsg[0] ? st->errmsg : st->lasterr);
	return error_set(e, 500, "store", NULL, "store: %s", st->errmsg[0] ? st->errmsg : st->lasterr);
}

/* How old the tallies of a shared store may grow before a batch reads
 * them again: other serves' changes show within COUNTS_FRESH_MS. The
 * engine reads them from the rows its writers keep (O(keys)). */
#define COUNTS_FRESH_MS 1000

/* The tallies as the engine has them now, between batches. */
static int recount(struct store *st)
{
	struct counts *fresh = counts_new();

	if (!fresh || st->engine->job_count_rows(st, add_count_row, fresh) != 0) {
		counts_free(fresh);
		return -1;
	}
	counts_free(st->counts);
	st->counts = fresh;
	st->counts_read_ms = clock_monotonic_ms();
	return 0;
}

int store_begin(struct store *st)
{
	st->full = 0;
	if (st->shared && clock_monotonic_ms() - st->counts_read_ms >= COUNTS_FRESH_MS)
		(void)recount(st); /* on failure the batch runs on the counts it has */
	counts_begin(st->counts);
	return ENGINE(st, begin(st));
}

/* A shared engine keeps the tallies in rows that its writers change in
 * the batch that changes the jobs: the batch's deltas, key by key. */
static int flush_tally(void *arg, const struct job_count *delta)
{
	struct store *st = arg;

	return ENGINE(st, tallies_add(st, delta));
}

int store_commit(struct store *st)
{
	if (st->engine->tallies_add && counts_changes(st->counts, flush_tally, st) != 0)
		return -1;
	if (ENGINE(st, commit(st)) != 0)
		return -1; /* the caller rolls back, and the counts with it */
	counts_commit(st->counts);
	return 0;
}

int store_rollback(struct store *st)
{
	counts_rollback(st->counts);
	return ENGINE(st, rollback(st));
}

int store_savepoint(struct store *st)
{
	st->contended = 0;
	counts_savepoint(st->counts);
	return ENGINE(st, savepoint(st));
}

int store_release(struct store *st)
{
	counts_release(st->counts);
	return ENGINE(st, release(st));
}

int store_rollback_savepoint(struct store *st)
{
	counts_rollback_savepoint(st->counts);
	return ENGINE(st, rollback_savepoint(st));
}

/* ---- jobs ---- */

/* The job as the store holds it now, read or written: what its next
 * update moves its tallies from. */
static void stored(struct job *job)
{
	job->stored_state = job->state;
	job->stored_run_ms = job_run_ms(job);
}

/* A job read from an engine knows what the store holds for it. */
static int read_job(int rc, struct job *job)
{
	if (rc == 0)
		stored(job);
	return rc;
}

/* The engine wrote, the tallies could not follow: the caller rolls the
 * batch back, and the write with it. */
static int out_of_memory(struct store *st)
{
	snprintf(st->errmsg, sizeof st->errmsg, "%s", COUNTS_NOMEM);
	return counted(st, -1);
}

int store_job_insert(struct store *st, struct job *job)
{
	if (ENGINE(st, job_insert(st, job)) != 0)
		return -1;
	if (counts_move(st->counts, job, -1, job->state) != 0)
		return out_of_memory(st);
	stored(job);
	st->changes++;
	return 0;
}

int store_job_update(struct store *st, struct job *job)
{
	if (ENGINE(st, job_update(st, job)) != 0)
		return -1;
	if (job->stored_state != job->state || job->stored_run_ms != job_run_ms(job)) {
		if (counts_move(st->counts, job, (int)job->stored_state, job->state) != 0)
			return out_of_memory(st);
		stored(job);
	}
	st->changes++;
	return 0;
}

int store_job_get(struct store *st, int64_t id, struct job *out)
{
	return read_job(ENGINE(st, job_get(st, id, out)), out);
}

int store_job_get_by_key(struct store *st, const char *team, const char *key, struct job *out)
{
	return read_job(ENGINE(st, job_get_by_key(st, team, key, out)), out);
}

void offer_filters_make(const struct lease_offer *o, struct offer_filters *f)
{
	*f = (struct offer_filters){0};
	if (o->nfull_types > 0) {
		json_t *a = json_array();
		for (int i = 0; i < o->nfull_types; i++)
			json_array_append_new(a, json_string(o->full_types[i]));
		f->full_types = json_dumps(a, JSON_COMPACT);
		json_decref(a);
	}
	if (o->labels)
		f->labels = json_dumps(o->labels, JSON_COMPACT);
	if (o->nteams > 0) {
		json_t *r = json_object();
		for (int i = 0; i < o->nteams; i++)
			json_object_set_new(r, o->teams[i], json_integer(o->team_rooms[i]));
		f->rooms = json_dumps(r, JSON_COMPACT);
		json_decref(r);
	}
}

void offer_filters_free(struct offer_filters *f)
{
	free(f->full_types);
	free(f->labels);
	free(f->rooms);
}

static int share_type(const struct lease_offer *o, const char *type)
{
	for (int i = 0; i < o->nshare_types; i++)
		if (strcmp(o->share_types[i], type) == 0)
			return 1;
	return 0;
}

int offer_fits_class(const struct lease_offer *o, const struct job_count *c)
{
	if ((c->gpus > o->gpus && !(c->gpus <= 1 && share_type(o, c->type))) || c->min_vram_gb > o->vram_gb)
		return 0;
	for (int i = 0; i < o->nfull_types; i++)
		if (strcmp(o->full_types[i], c->type) == 0)
			return 0;
	for (int i = 0; i < o->nteams; i++)
		if (strcmp(o->teams[i], c->team) == 0)
			return o->team_rooms[i] >= (c->gpus > 1 ? c->gpus : 1);
	return 1;
}

struct fitting {
	const struct lease_offer *offer;
	json_t *classes;
};

static int add_fitting(void *arg, const struct job_count *c)
{
	struct fitting *f = arg;

	if (c->state != JOB_QUEUED || !offer_fits_class(f->offer, c))
		return 0;
	return json_array_append_new(f->classes, json_pack("{s:s,s:s,s:s,s:i,s:i,s:i}", "lane", c->lane, "type",
							   c->type, "team", c->team, "gpus", c->gpus,
							   "min_vram_gb", c->min_vram_gb, "priority", c->priority));
}

char *offer_classes_json(struct store *st, const struct lease_offer *o)
{
	struct fitting f = {o, json_array()};
	char *text = f.classes && counts_each(st->counts, add_fitting, &f) == 0 ? json_dumps(f.classes, JSON_COMPACT)
										: NULL;

	json_decref(f.classes);
	if (!text)
		out_of_memory(st);
	return text;
}

int job_leases_before(const struct job *a, const struct job *b)
{
	struct lease_key ka = {a->lane_rank, a->priority, a->seq, a->id};
	struct lease_key kb = {b->lane_rank, b->priority, b->seq, b->id};

	return lease_before(&ka, &kb);
}

/* A queued class the offer fits stops the walk. */
static int queued_class_fits(void *arg, const struct job_count *c)
{
	return c->state == JOB_QUEUED && offer_fits_class(arg, c);
}

/* Unsorted, and done at the first that fits: a commit asks this of every
 * parked lease request (a thousand workers behind a backlog that fits
 * none of them took 3 ms a commit through counts_queued()'s sort). */
int store_offer_may_fit(struct store *st, const struct lease_offer *offer)
{
	return counts_each(st->counts, queued_class_fits, (void *)offer) != 0;
}

void store_counts_stale(struct store *st) { st->counts_read_ms = 0; }

int store_job_next_ready(struct store *st, const struct lease_offer *offer, struct job *out)
{
	/* Another serve's jobs show in the tallies a second late: with
	 * several, any may fit. */
	if (!st->shared && !store_offer_may_fit(st, offer))
		return STORE_NOT_FOUND;
	return read_job(ENGINE(st, job_next_ready(st, offer, out)), out);
}

/* A list's rows know the stored state too: a copy of each row, whose
 * texts stay the engine's, with it set. */
struct list_walk {
	job_cb cb;
	void *arg;
};

static int list_row(void *arg, const struct job *row)
{
	const struct list_walk *w = arg;
	struct job job = *row;

	stored(&job);
	return w->cb(w->arg, &job);
}

int store_job_list(struct store *st, const struct job_filter *filter, job_cb cb, void *arg)
{
	struct list_walk w = {cb, arg};

	return ENGINE(st, job_list(st, filter, list_row, &w));
}

int store_job_due(struct store *st, int64_t now_ms, int64_t *ids, int max, int *n)
{
	return ENGINE(st, job_due(st, now_ms, ids, max, n));
}

int store_job_leased_on(struct store *st, int64_t instance, struct job_on *out, int max, int *n)
{
	return ENGINE(st, job_leased_on(st, instance, out, max, n));
}

int store_next_deadline(struct store *st, int64_t *out_ms)
{
	return ENGINE(st, next_deadline(st, out_ms));
}

int store_job_counts(struct store *st, count_cb cb, void *arg)
{
	return counts_each(st->counts, cb, arg);
}

int64_t store_count_in_state(const struct store *st, enum job_state state)
{
	return counts_in_state(st->counts, state);
}

/* A queued class as the scaler reads it: its oldest submission, where
 * the tallies lost it, from the engine (an index seek). */
struct demand_walk {
	struct store *st;
	demand_cb cb;
	void *arg;
};

static int demand_of(void *arg, const struct job_count *c, int64_t *oldest_ms)
{
	struct demand_walk *w = arg;
	struct demand_row row = {.gpus = c->gpus, .min_vram_gb = c->min_vram_gb, .lane = c->lane, .type = c->type,
				 .team = c->team, .priority = c->priority, .jobs = c->n, .items = c->items,
				 .jobs_without_est = c->no_est, .est_s = c->est_s};
	int rc;

	if (*oldest_ms == 0 && (rc = ENGINE(w->st, queued_oldest(w->st, c, oldest_ms))) != 0)
		return rc == STORE_NOT_FOUND ? 0 : rc; /* another serve leased them all */
	row.oldest_ms = *oldest_ms;
	return w->cb(w->arg, &row);
}

int store_demand(struct store *st, demand_cb cb, void *arg)
{
	struct demand_walk w = {st, cb, arg};

	return counts_queued(st->counts, demand_of, &w);
}

int store_check(struct store *st, count_diff_cb cb, void *arg, int64_t *keys)
{
	struct counts *fresh = counts_new(), *kept = NULL;
	int rc = -1;

	/* Counted first: a shared engine takes its lock on the tallies there,
	 * so that the rows read next are those of the same jobs. */
	if (!fresh || (st->engine->job_recount ? ENGINE(st, job_recount(st, add_count_row, fresh))
						 : ENGINE(st, job_count_rows(st, add_count_row, fresh))) != 0)
		goto done;
	if (st->engine->job_recount &&
	    (!(kept = counts_new()) || ENGINE(st, job_count_rows(st, add_count_row, kept)) != 0))
		goto done;
	rc = counts_compare(kept ? kept : st->counts, fresh, cb, arg, keys);
done:
	if (rc < 0 && !st->errmsg[0])
		snprintf(st->errmsg, sizeof st->errmsg, "%s", COUNTS_NOMEM);
	counts_free(fresh);
	counts_free(kept);
	return rc;
}

int store_recent_submits(struct store *st, int limit, time_cb cb, void *arg)
{
	return ENGINE(st, recent_submits(st, limit, cb, arg));
}

int store_recent_durations(struct store *st, int limit, duration_cb cb, void *arg)
{
	return ENGINE(st, recent_durations(st, limit, cb, arg));
}

/* The engine walks the newest jobs first: the walk ends at the first
 * before the window. */
struct arrivals_walk {
	arrival_cb cb;
	void *arg;
	int64_t since_ms;
	int ended;
};

static int arrival_since(void *arg, const struct arrival_row *row)
{
	struct arrivals_walk *w = arg;

	if (row->created_ms < w->since_ms) {
		w->ended = 1;
		return 1;
	}
	return w->cb(w->arg, row);
}

int store_arrivals(struct store *st, int64_t since_ms, int limit, arrival_cb cb, void *arg)
{
	struct arrivals_walk w = {cb, arg, since_ms, 0};
	int rc = ENGINE(st, arrivals(st, limit, arrival_since, &w));

	return w.ended ? 0 : rc;
}

int store_usage(struct store *st, int64_t now_ms, int64_t *instance_ms, int64_t *job_ms)
{
	*job_ms = counts_run_ms(st->counts);
	return ENGINE(st, usage(st, now_ms, instance_ms));
}

/* ---- the fleet and the decisions ---- */

int store_instance_insert(struct store *st, struct instance *inst)
{
	if (ENGINE(st, instance_insert(st, inst)) != 0)
		return -1;
	st->changes++;
	return 0;
}

int store_instance_update(struct store *st, const struct instance *inst)
{
	if (ENGINE(st, instance_update(st, inst)) != 0)
		return -1;
	st->changes++;
	return 0;
}

int store_instance_get(struct store *st, int64_t id, struct instance *out)
{
	return ENGINE(st, instance_get(st, id, out));
}

int store_instance_by_token(struct store *st, const char *token, struct instance *out)
{
	return ENGINE(st, instance_by_token(st, token, out));
}

int store_instance_data_set(struct store *st, int64_t id, const char *data)
{
	return ENGINE(st, instance_data_set(st, id, data));
}

int store_instance_data(struct store *st, int64_t id, char *buf, size_t size)
{
	return ENGINE(st, instance_data(st, id, buf, size));
}

int store_instance_list(struct store *st, instance_cb cb, void *arg)
{
	return ENGINE(st, instance_list(st, cb, arg));
}

int store_instance_page(struct store *st, int64_t after_id, int limit, instance_cb cb, void *arg)
{
	return ENGINE(st, instance_page(st, after_id, limit, cb, arg));
}

int store_decision_insert(struct store *st, const struct decision *d)
{
	return ENGINE(st, decision_insert(st, d));
}

int store_decision_list(struct store *st, int64_t before_id, int limit, decision_cb cb, void *arg)
{
	return ENGINE(st, decision_list(st, before_id, limit, cb, arg));
}

/* ---- the ledger and the offers' statistics ---- */

int store_segment_open(struct store *st, const struct segment *seg)
{
	return ENGINE(st, segment_open(st, seg));
}

int store_segment_close(struct store *st, int64_t instance, int64_t end_ms, double usd_per_ms, int instance_gpus,
			struct segment *closed)
{
	struct segment_found f;
	int rc = ENGINE(st, segment_find(st, instance, &f));

	if (rc != 0)
		return rc;
	*closed = f.seg;
	closed->instance = instance;
	closed->end_ms = end_ms;
	closed->cost = (double)(end_ms - closed->start_ms) * usd_per_ms * segment_share(closed, instance_gpus);
	return ENGINE(st, segment_end(st, f.id, end_ms, closed->cost));
}

double segment_share(const struct segment *g, int instance_gpus)
{
	if (g->gpu_part > 0)
		return g->gpu_part < instance_gpus ? g->gpu_part / instance_gpus : 1.0;
	return g->gpus > 0 && g->gpus < instance_gpus ? (double)g->gpus / instance_gpus : 1.0;
}

/* A write of the job, so it moves the change counter. */
int store_job_add_cost(struct store *st, int64_t job, double usd)
{
	int rc = ENGINE(st, job_add_cost(st, job, usd));

	if (rc == 0)
		st->changes++;
	return rc;
}

int store_offer_stat_add(struct store *st, const struct offer_stat *delta)
{
	return ENGINE(st, offer_stat_add(st, delta));
}

int store_offer_stats(struct store *st, offer_stat_cb cb, void *arg)
{
	return ENGINE(st, offer_stats(st, cb, arg));
}

int store_ledger(struct store *st, int64_t since_ms, int64_t after_id, int64_t upto_id, ledger_cb cb, void *arg)
{
	return ENGINE(st, ledger(st, since_ms, after_id, upto_id, cb, arg));
}

int store_segment_last_id(struct store *st, int64_t *id)
{
	return ENGINE(st, segment_last_id(st, id));
}

int store_ledger_open(struct store *st, ledger_cb cb, void *arg)
{
	return ENGINE(st, ledger_open(st, cb, arg));
}

/* The sums of all time are one more day to the engine, before the first. */
int store_ledger_add(struct store *st, int64_t day, const struct ledger_sum *delta)
{
	if (ENGINE(st, ledger_add(st, day, delta)) != 0)
		return -1;
	return ENGINE(st, ledger_add(st, STORE_ALL_TIME, delta));
}

int store_ledger_sums(struct store *st, int64_t since_day, ledger_sum_cb cb, void *arg)
{
	if (since_day < 0)
		return ENGINE(st, ledger_sums(st, STORE_ALL_TIME, STORE_ALL_TIME, cb, arg));
	return ENGINE(st, ledger_sums(st, since_day, INT64_MAX, cb, arg));
}

int store_dead_letters(struct store *st, int64_t since_ms, dead_letters_cb cb, void *arg)
{
	return ENGINE(st, dead_letters(st, since_ms, cb, arg));
}

/* ---- alerts ---- */

int store_alert_put(struct store *st, const struct alert_row *a)
{
	return ENGINE(st, alert_put(st, a));
}

int store_alert_delete(struct store *st, const char *key)
{
	return ENGINE(st, alert_delete(st, key));
}

int store_alerts(struct store *st, alert_cb cb, void *arg)
{
	return ENGINE(st, alerts(st, cb, arg));
}

/* ---- a job's attempts ---- */

int store_attempt_put(struct store *st, const struct attempt *a) { return ENGINE(st, attempt_put(st, a)); }

int store_attempts(struct store *st, int64_t job, attempt_cb cb, void *arg)
{
	return ENGINE(st, attempts(st, job, cb, arg));
}

/* ---- team budgets set at run time ---- */

int store_team_budget_set(struct store *st, const struct team_budget *b)
{
	if (ENGINE(st, team_budget_set(st, b)) != 0)
		return -1;
	/* The plan reads it: a scaler that waits for a change wakes. */
	st->changes++;
	return 0;
}

int store_team_budgets(struct store *st, team_budget_cb cb, void *arg)
{
	return ENGINE(st, team_budgets(st, cb, arg));
}

/* ---- the jobs' logs ---- */

int store_log_meta(struct store *st, int64_t job, int attempt, struct log_meta *out)
{
	return ENGINE(st, log_meta(st, job, attempt, out));
}

int store_log_meta_put(struct store *st, const struct log_meta *m)
{
	return ENGINE(st, log_meta_put(st, m));
}

int store_log_metas_oldest(struct store *st, int64_t before_ms, int limit, log_meta_cb cb, void *arg)
{
	return ENGINE(st, log_metas_oldest(st, before_ms, limit, cb, arg));
}

int store_log_meta_delete(struct store *st, int64_t job, int attempt)
{
	return ENGINE(st, log_meta_delete(st, job, attempt));
}

int store_log_total(struct store *st, int64_t *bytes)
{
	return ENGINE(st, log_total(st, bytes));
}

int store_log_insert(struct store *st, const struct log_line *l)
{
	return ENGINE(st, log_insert(st, l));
}

int store_log_lines(struct store *st, int64_t job, int attempt, int64_t after, int limit, int last, log_line_cb cb,
		    void *arg)
{
	return ENGINE(st, log_lines(st, job, attempt, after, limit, last, cb, arg));
}

int store_log_delete(struct store *st, int64_t job, int attempt, int64_t after, int64_t upto)
{
	return ENGINE(st, log_delete(st, job, attempt, after, upto));
}

/* ---- the published tuning ---- */

int store_tuning_set(struct store *st, const struct tuning_row *t)
{
	return ENGINE(st, tuning_set(st, t));
}

int store_tunings(struct store *st, tuning_cb cb, void *arg)
{
	return ENGINE(st, tunings(st, cb, arg));
}
