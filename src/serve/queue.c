/* Queue semantics (see queue.h). */
#include "serve/queue.h"

#include <stdlib.h>
#include <string.h>

#include "common/instance.h"
#include "common/log.h"
#include "common/rng.h"
#include "policy/lease_order.h"
#include "serve/metrics.h"
#include "serve/share.h"
#include "serve/team_state.h"

void queue_init(struct queue *q, struct store *store, const struct config *cfg,
		const struct clock *clock, uint64_t seed)
{
	memset(q, 0, sizeof *q);
	q->store = store;
	q->cfg = cfg;
	q->clock = clock;
	q->rng = rng_seed(seed);
}

void queue_subscribe(struct queue *q, job_hook fn, void *arg)
{
	if (q->nhooks < QUEUE_MAX_HOOKS) {
		q->hooks[q->nhooks].fn = fn;
		q->hooks[q->nhooks++].arg = arg;
	}
}

void queue_ready_changed(struct queue *q)
{
	q->ready_changed = 1;
	store_wake_others(q->store);
}

static int failed(struct queue *q, struct ebb_error *err)
{
	log_error("store failed", "error=\"%s\"", store_error(q->store));
	return store_failure(q->store, err);
}

/* Writes job and tells the subscribers when its state changed. */
static int write_job(struct queue *q, struct job *job, const struct job_change *how,
		     struct ebb_error *err)
{
	struct job_change c = how ? *how : (struct job_change){0};

	c.from = job->stored_state;
	c.job = job;
	if (store_job_update(q->store, job) != 0)
		return failed(q, err);
	/* Its attempts follow each lease's begin and end. */
	if (c.from != JOB_LEASED && job->state == JOB_LEASED && attempts_begin(q->store, job) != 0)
		return failed(q, err);
	if (c.from == JOB_LEASED && job->state != JOB_LEASED &&
	    attempts_end(q->store, job, &c.ended, job->updated_ms) != 0)
		return failed(q, err);
	for (int i = 0; c.from != job->state && i < q->nhooks; i++) {
		if (q->hooks[i].fn(q->hooks[i].arg, &c) != 0)
			return store_failure(q->store, err);
	}
	return 0;
}

int64_t queue_backoff_ms(struct queue *q, int attempts)
{
	int64_t d = q->cfg->retry_base_ms;

	for (int i = 1; i < attempts && d < q->cfg->retry_max_ms; i++)
		d *= 2;
	if (d > q->cfg->retry_max_ms)
		d = q->cfg->retry_max_ms;
	/* "Equal jitter": half fixed, half random, so retries of a burst spread
	 * out but none comes back sooner than half the backoff. */
	if (d > 1)
		d = d / 2 + (int64_t)(rng_next(&q->rng) % (uint64_t)(d / 2 + 1));
	return d;
}

int queue_submit(struct queue *q, struct job *job, int64_t delay_ms, int *existed,
		 struct ebb_error *err)
{
	int64_t now = clock_now(q->clock), waiting = 0, delayed = 0;
	int rc;

	*existed = 0;
	if (job->idem_key) {
		struct job prior;
		rc = store_job_get_by_key(q->store, job->team, job->idem_key, &prior);
		if (rc < 0)
			return failed(q, err);
		if (rc == 0) {
			if (prior.idem_hash != job->idem_hash) {
				int64_t id = prior.id;
				job_free(&prior);
				return error_set(err, 409, "idempotency_conflict", "idempotency_key",
						 "idempotency key '%s' was used for job %lld with a different body",
						 job->idem_key, (long long)id);
			}
			job_free(job);
			*job = prior;
			*existed = 1;
			return 0;
		}
	}
	waiting = store_count_in_state(q->store, JOB_QUEUED);
	delayed = store_count_in_state(q->store, JOB_DELAYED);
	if (waiting + delayed >= q->cfg->max_queued)
		return error_set(err, 429, "queue_full", NULL,
				 "the queue holds %lld jobs, its limit ([queue] max_queued)",
				 (long long)(waiting + delayed));

	job->lane_rank = config_lane_rank(q->cfg, job->lane);
	job->created_ms = job->updated_ms = now;
	job->run_at_ms = job->run_at_ms ? job->run_at_ms : now + delay_ms;
	job->state = job->run_at_ms > now ? JOB_DELAYED : JOB_QUEUED;
	if (store_job_insert(q->store, job) != 0)
		return failed(q, err);
	if (job->state == JOB_QUEUED)
		queue_ready_changed(q);
	return 0;
}

/* Types at their max_running, for the lease query to skip. */
struct full_types {
	const struct config *cfg;
	const char *names[64];
	int64_t running[64];
	int n;
};

static int add_running(void *arg, const struct job_count *c)
{
	struct full_types *f = arg;
	const struct type_conf *t;

	if (c->state != JOB_LEASED || !(t = config_type(f->cfg, c->type)) || t->max_running == 0)
		return 0;
	for (int i = 0; i < f->n; i++) {
		if (strcmp(f->names[i], t->name) == 0) {
			f->running[i] += c->n;
			return 0;
		}
	}
	if (f->n < 64) {
		f->names[f->n] = t->name;
		f->running[f->n++] = c->n;
	}
	return 0;
}

int lease_types_has(const struct lease_types *t, const char *type)
{
	for (int k = 0; k < t->n; k++)
		if (strcmp(type, t->names[k]) == 0)
			return 1;
	return 0;
}

int queue_lease(struct queue *q, const struct lease_offer *offer, const struct lease_types *only, const char *worker,
		int64_t instance, int64_t lease_ms, struct job *out, struct ebb_error *err)
{
	struct lease_offer o = *offer;
	struct full_types full = {.cfg = q->cfg};
	struct share_refused refused;
	const char *names[64];
	int64_t now = clock_now(q->clock), ready_ms;
	int rc;

	if (q->cfg->ntypes > 0) {
		if (store_job_counts(q->store, add_running, &full) != 0)
			return failed(q, err);
		o.nfull_types = 0;
		for (int i = 0; i < full.n; i++) {
			if (full.running[i] >= config_type(q->cfg, full.names[i])->max_running)
				names[o.nfull_types++] = full.names[i];
		}
		o.full_types = names;
	}
	if (share_refused_read(q->store, &o, o.full_types, o.nfull_types, &refused) != 0) {
		rc = refused.nomem;
		share_refused_free(&refused);
		return rc ? error_set(err, 500, "out_of_memory", NULL, ERROR_OUT_OF_MEMORY) : failed(q, err);
	}
	if (o.gpus == 0 && o.nshare_types > 0) {
		/* Only a partly used GPU: a one-GPU job of a type that fits it. */
		o.gpus = 1;
		o.full_types = (const char *const *)refused.names;
		o.nfull_types = refused.n;
	}
	if (q->cfg->nteams > 0) {
		/* Each team's job only within its share (docs/TEAMS.md). */
		struct team_state ts;
		if ((rc = team_state_read(&ts, q->store, q->cfg, now)) != 0) {
			team_state_free(&ts);
			share_refused_free(&refused);
			return rc == TEAM_STATE_NOMEM ? error_set(err, 500, "out_of_memory", NULL, ERROR_OUT_OF_MEMORY)
						      : failed(q, err);
		}
		o.teams = (const char *const *)ts.names;
		o.team_rooms = ts.rooms;
		o.nteams = ts.nnames;
		rc = store_job_next_ready(q->store, &o, out);
		team_state_free(&ts);
	} else {
		rc = store_job_next_ready(q->store, &o, out);
	}
	share_refused_free(&refused);
	if (rc == STORE_NOT_FOUND)
		return 0;
	if (rc != 0)
		return failed(q, err);
	if (only->n > 0 && !lease_types_has(only, out->type)) {
		job_free(out);
		return 0;
	}
	ready_ms = out->updated_ms; /* it became ready then: queued, due or requeued */
	out->state = JOB_LEASED;
	out->attempts++;
	out->lease_token++;
	snprintf(out->worker, sizeof out->worker, "%s", worker);
	out->instance = instance;
	out->lease_ms = lease_ms;
	out->lease_expires_ms = now + lease_ms;
	out->started_ms = now;
	out->items_start = out->items_done; /* the run resumes from here */
	out->updated_ms = now;
	/* The error is the last run's: its attempt keeps it. */
	job_set_str(&out->error, NULL);
	if (write_job(q, out, NULL, err) != 0) {
		job_free(out);
		return -1;
	}
	if (q->lease_latency)
		histogram_observe(q->lease_latency, now > ready_ms ? (double)(now - ready_ms) / 1000.0 : 0);
	log_info("job leased", "job=%lld worker=%s attempt=%d token=%lld", (long long)out->id,
		 worker, out->attempts, (long long)out->lease_token);
	return 1;
}

int queue_get(struct queue *q, int64_t id, const char *team, struct job *out,
	      struct ebb_error *err)
{
	int rc = store_job_get(q->store, id, out);

	if (rc < 0)
		return failed(q, err);
	if (rc == STORE_NOT_FOUND || (team && strcmp(out->team, team) != 0)) {
		if (rc == 0)
			job_free(out);
		return error_set(err, 404, "not_found", NULL, "no job %lld", (long long)id);
	}
	return 0;
}

/* Loads a job and checks that token is its current lease. */
static int get_leased(struct queue *q, int64_t id, int64_t token, struct job *out,
		      struct ebb_error *err)
{
	if (queue_get(q, id, NULL, out, err) != 0)
		return -1;
	if (out->state != JOB_LEASED || out->lease_token != token) {
		if (out->state == JOB_LEASED)
			error_set(err, 409, "stale_lease", "lease_token",
				  "lease token %lld of job %lld is stale: the job was leased again (token %lld)",
				  (long long)token, (long long)id, (long long)out->lease_token);
		else
			error_set(err, 409, "stale_lease", "lease_token",
				  "job %lld is %s, no longer leased with token %lld", (long long)id,
				  job_state_name(out->state), (long long)token);
		job_free(out);
		return -1;
	}
	return 0;
}

/* The end of every change after the lease: on failure the job is freed. */
static int save(struct queue *q, struct job *job, const struct job_change *how, struct ebb_error *err)
{
	job->updated_ms = clock_now(q->clock);
	if (job_state_terminal(job->state))
		job->finished_ms = job->updated_ms;
	if (write_job(q, job, how, err) != 0) {
		job_free(job);
		return -1;
	}
	return 0;
}

int queue_heartbeat(struct queue *q, int64_t id, int64_t token, struct job *out,
		    struct ebb_error *err)
{
	if (get_leased(q, id, token, out, err) != 0)
		return -1;
	out->lease_expires_ms = clock_now(q->clock) + out->lease_ms;
	return save(q, out, NULL, err);
}

int queue_checkpoint(struct queue *q, int64_t id, int64_t token, const char *checkpoint,
		     int64_t items_done, struct job *out, struct ebb_error *err)
{
	if (get_leased(q, id, token, out, err) != 0)
		return -1;
	job_set_str(&out->checkpoint, checkpoint);
	if (items_done >= 0)
		out->items_done = items_done;
	out->lease_expires_ms = clock_now(q->clock) + out->lease_ms;
	return save(q, out, NULL, err);
}

int queue_complete(struct queue *q, int64_t id, int64_t token, int64_t items_done,
		   const char *result, struct job *out, struct ebb_error *err)
{
	if (get_leased(q, id, token, out, err) != 0)
		return -1;
	out->state = JOB_SUCCEEDED;
	out->items_done = items_done >= 0 ? items_done : out->items;
	job_set_str(&out->result, result);
	job_set_str(&out->error, NULL);
	/* A finished job may free a slot of its type for a waiting worker. */
	queue_ready_changed(q);
	log_info("job succeeded", "job=%lld worker=%s attempt=%d", (long long)id, out->worker,
		 out->attempts);
	return save(q, out, NULL, err);
}

/* The retry decision shared by a failed attempt and an expired lease. */
static void retry_or_bury(struct queue *q, struct job *job, const char *reason, int backoff)
{
	char quoted[600];

	job_set_str(&job->error, reason);
	if (job->attempts >= job->max_attempts) {
		job->state = JOB_DEAD;
	} else if (backoff) {
		job->state = JOB_DELAYED;
		job->run_at_ms = clock_now(q->clock) + queue_backoff_ms(q, job->attempts);
	} else {
		job->state = JOB_QUEUED;
	}
	/* Leaving the leased state frees a slot of the job's type. */
	queue_ready_changed(q);
	log_info(job->state == JOB_DEAD ? "job dead" : "job will retry",
		 "job=%lld attempt=%d max_attempts=%d reason=%s", (long long)job->id, job->attempts,
		 job->max_attempts, log_quote(quoted, sizeof quoted, reason));
}

int queue_fail(struct queue *q, int64_t id, int64_t token, const char *reason, int retry, int exit,
	       struct job *out, struct ebb_error *err)
{
	struct job_change how = {.ended = {.has_exit = exit >= 0, .exit = exit}};

	if (get_leased(q, id, token, out, err) != 0)
		return -1;
	if (retry) {
		retry_or_bury(q, out, reason, 1);
	} else {
		out->state = JOB_FAILED;
		job_set_str(&out->error, reason);
		queue_ready_changed(q);
	}
	return save(q, out, &how, err);
}

int queue_interrupt(struct queue *q, int64_t id, int64_t token, const char *checkpoint,
		    int64_t checkpoint_items, int64_t items_done, const char *reason, int reclaimed,
		    struct job *out, struct ebb_error *err)
{
	const char *preempted = preempt_reason(&q->preempts, id, token);
	struct job_change how = {.interrupted = 1, .reclaimed = reclaimed,
				 .ended.outcome = preempted ? "preempted" : "interrupted"};
	char quoted[600], why[sizeof PREEMPTED_ERROR + sizeof q->preempts.at[0].reason], last[16] = "";
	int64_t lost = 0;
	int again;

	if (get_leased(q, id, token, out, err) != 0)
		return -1;
	/* Its last run ended by a preemption too. */
	if (preempted && attempts_last_outcome(q->store, id, last, sizeof last) != 0) {
		job_free(out);
		return failed(q, err);
	}
	again = preempted && strcmp(last, "preempted") == 0;
	if (preempted) {
		snprintf(why, sizeof why, PREEMPTED_ERROR "%s", preempted);
		reason = why;
	}
	if (checkpoint) {
		job_set_str(&out->checkpoint, checkpoint);
		if (checkpoint_items >= 0)
			out->items_done = checkpoint_items;
	}
	/* items_done is the checkpoint's count: what the run did past it is
	 * done again by the next run. */
	if (items_done > out->items_done)
		lost = items_done - out->items_done;
	out->items_lost += lost;
	out->interruptions++;
	if (out->attempts > 0)
		out->attempts--;
	out->state = JOB_QUEUED;
	/* Preempted twice in a row: it waits [scaler] preempt_backoff before
	 * it is leased (and so preempted) again, lest a loop of admissions
	 * and reclaims take all its time. */
	if (again && q->cfg->preempt_backoff_ms > 0) {
		out->state = JOB_DELAYED;
		out->run_at_ms = clock_now(q->clock) + q->cfg->preempt_backoff_ms;
	}
	/* Before every job queued the usual way (policy/lease_order.h). */
	out->seq = lease_seq(out->id, 1);
	job_set_str(&out->error, reason);
	queue_ready_changed(q);
	log_info("job interrupted", "job=%lld worker=%s items_done=%lld items_lost=%lld reason=%s",
		 (long long)id, out->worker, (long long)out->items_done, (long long)lost,
		 log_quote(quoted, sizeof quoted, reason ? reason : ""));
	return save(q, out, &how, err);
}

int queue_cancel(struct queue *q, int64_t id, const char *team, struct job *out,
		 struct ebb_error *err)
{
	if (queue_get(q, id, team, out, err) != 0)
		return -1;
	if (job_state_terminal(out->state)) {
		error_set(err, 409, "already_finished", NULL, "job %lld is already %s", (long long)id,
			  job_state_name(out->state));
		job_free(out);
		return -1;
	}
	if (out->state == JOB_LEASED)
		queue_ready_changed(q);
	out->state = JOB_CANCELLED;
	log_info("job cancelled", "job=%lld", (long long)id);
	return save(q, out, NULL, err);
}

int queue_requeue(struct queue *q, int64_t id, const char *team, int fresh, struct job *out,
		  struct ebb_error *err)
{
	if (queue_get(q, id, team, out, err) != 0)
		return -1;
	if (out->state != JOB_FAILED && out->state != JOB_DEAD) {
		error_set(err, 409, "not_failed", NULL, "job %lld is %s: only a failed or dead job is requeued",
			  (long long)id, job_state_name(out->state));
		job_free(out);
		return -1;
	}
	out->state = JOB_QUEUED;
	out->attempts = 0;
	out->finished_ms = 0;
	out->run_at_ms = clock_now(q->clock);
	job_set_str(&out->error, NULL);
	if (fresh) {
		job_set_str(&out->checkpoint, NULL);
		out->items_done = 0;
	}
	queue_ready_changed(q);
	log_info("job requeued", "job=%lld fresh=%d", (long long)id, fresh);
	return save(q, out, NULL, err);
}

/* The leased job back in the queue, its attempt not counted; freed. */
static int unlease(struct queue *q, struct job *job, struct ebb_error *err)
{
	struct job_change how = {.ended = {"interrupted", "the lease's reply never reached its worker"}};

	job->state = JOB_QUEUED;
	job->attempts--;
	queue_ready_changed(q);
	log_warn("lease reply lost, job queued again", "job=%lld worker=%s", (long long)job->id, job->worker);
	if (save(q, job, &how, err) != 0)
		return -1;
	job_free(job);
	return 0;
}

int queue_unlease(struct queue *q, int64_t id, int64_t token, struct ebb_error *err)
{
	struct job job;

	if (get_leased(q, id, token, &job, err) != 0)
		return -1;
	return unlease(q, &job, err);
}

int queue_unlease_instance(struct queue *q, int64_t id, int64_t instance, struct ebb_error *err)
{
	struct job job;

	if (queue_get(q, id, NULL, &job, err) != 0)
		return err->status == 404 ? 0 : -1;
	if (job.state != JOB_LEASED || job.instance != instance) {
		job_free(&job);
		return 0;
	}
	return unlease(q, &job, err);
}

int queue_expire_instance(struct queue *q, int64_t instance, struct ebb_error *err)
{
	struct job_on on[INSTANCE_GPUS_MAX];
	int n, rc = 0;

	if (store_job_leased_on(q->store, instance, on, INSTANCE_GPUS_MAX, &n) != 0)
		return store_failure(q->store, err);
	for (int k = 0; k < n && rc == 0; k++) {
		struct job job;
		if (queue_get(q, on[k].id, NULL, &job, err) != 0)
			return -1;
		job.lease_expires_ms = clock_now(q->clock);
		rc = write_job(q, &job, NULL, err);
		job_free(&job);
	}
	return rc;
}

int queue_process_due(struct queue *q, struct ebb_error *err)
{
	int64_t now = clock_now(q->clock), ids[256];
	int n;

	do {
		if (store_job_due(q->store, now, ids, 256, &n) != 0)
			return failed(q, err);
		for (int i = 0; i < n; i++) {
			struct job_change how = {0};
			struct job job;
			if (queue_get(q, ids[i], NULL, &job, err) != 0)
				return -1;
			/* Another serve's batch may have moved it since the
			 * list was read: it waited for that batch's end. */
			if (!(job.state == JOB_DELAYED && job.run_at_ms <= now) &&
			    !(job.state == JOB_LEASED && job.lease_expires_ms <= now)) {
				job_free(&job);
				continue;
			}
			if (job.state == JOB_DELAYED) {
				job.state = JOB_QUEUED;
				queue_ready_changed(q);
			} else {
				char why[200];
				snprintf(why, sizeof why, "lease expired on worker %s", job.worker);
				retry_or_bury(q, &job, why, 0);
				how.ended.outcome = "expired";
			}
			if (save(q, &job, &how, err) != 0)
				return -1;
			job_free(&job);
		}
	} while (n == 256);
	return 0;
}

int queue_next_deadline(struct queue *q, int64_t *out_ms)
{
	if (store_next_deadline(q->store, out_ms) == 0)
		return 0;
	log_error("store failed", "error=\"%s\"", store_error(q->store));
	return -1;
}
