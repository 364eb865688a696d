/* A job's attempts (see attempts.h). */
#include "serve/attempts.h"

#include <stdio.h>
#include <string.h>

#include "common/instance.h"

int attempts_begin(struct store *st, const struct job *job)
{
	struct attempt a = {
		.job = job->id,
		.attempt = (int)job->lease_token,
		.instance = job->instance,
		.started_ms = job->started_ms,
		.outcome = "running",
		.exit = -1,
		.items_done = job->items_done,
		.checkpoint = job->checkpoint,
	};
	struct instance inst;
	int rc;

	snprintf(a.worker, sizeof a.worker, "%s", job->worker);
	/* What it runs on is kept as the lease found it: the instance's
	 * row outlives it, but an attempt reads alone. */
	if (job->instance > 0) {
		if ((rc = store_instance_get(st, job->instance, &inst)) < 0)
			return -1;
		if (rc == 0) {
			snprintf(a.offer, sizeof a.offer, "%s", inst.offer);
			a.market = inst.market;
		}
	}
	return store_attempt_put(st, &a);
}

/* The outcome a change of state gives its attempt, unless told. */
static const char *outcome_of(const struct job *job, const struct attempt_end *how)
{
	if (how && how->outcome)
		return how->outcome;
	if (job->state == JOB_SUCCEEDED)
		return "succeeded";
	if (job->state == JOB_CANCELLED)
		return "cancelled";
	return "failed";
}

int attempts_end(struct store *st, const struct job *job, const struct attempt_end *how, int64_t now_ms)
{
	const char *outcome = outcome_of(job, how);
	/* A success or a cancel has no reason of its own: the job's error
	 * would be an earlier run's. */
	const char *reason = how && how->reason ? how->reason
			     : strcmp(outcome, "succeeded") == 0 || strcmp(outcome, "cancelled") == 0 ? NULL
												: job->error;
	struct attempt a = {
		.job = job->id,
		.attempt = (int)job->lease_token,
		.instance = job->instance,
		.started_ms = job->started_ms,
		.ended_ms = now_ms,
		.exit = how && how->has_exit ? how->exit : -1,
		.items_done = job->items_done,
		.checkpoint = job->checkpoint,
		.reason = (char *)reason, /* a put only reads it */
	};

	snprintf(a.worker, sizeof a.worker, "%s", job->worker);
	snprintf(a.outcome, sizeof a.outcome, "%s", outcome);
	return store_attempt_put(st, &a);
}

struct last_outcome {
	char *out;
	size_t size;
};

static int see_outcome(void *arg, const struct attempt *a)
{
	struct last_outcome *l = arg;

	if (a->ended_ms > 0)
		snprintf(l->out, l->size, "%s", a->outcome);
	return 0;
}

int attempts_last_outcome(struct store *st, int64_t job, char *out, size_t size)
{
	struct last_outcome l = {out, size};

	out[0] = '\0';
	return store_attempts(st, job, see_outcome, &l);
}

static int write_attempt(void *arg, const struct attempt *a)
{
	struct jsonout *o = arg;

	jsonout_open(o, NULL, '{');
	jsonout_int(o, "attempt", a->attempt);
	if (a->instance > 0)
		jsonout_int(o, "instance", a->instance);
	else
		jsonout_null(o, "instance");
	jsonout_string(o, "offer", a->offer[0] ? a->offer : NULL);
	jsonout_string(o, "market", a->offer[0] ? market_name(a->market) : NULL);
	jsonout_string(o, "worker", a->worker);
	jsonout_seconds(o, "started_at", a->started_ms);
	jsonout_seconds(o, "ended_at", a->ended_ms);
	jsonout_string(o, "outcome", a->outcome);
	if (a->exit >= 0)
		jsonout_int(o, "exit", a->exit);
	else
		jsonout_null(o, "exit");
	jsonout_int(o, "items_done", a->items_done);
	jsonout_string(o, "checkpoint", a->checkpoint);
	jsonout_string(o, "reason", a->reason);
	jsonout_close(o, '}');
	return 0;
}

int attempts_write_json(struct store *st, int64_t job, struct jsonout *o, const char *key)
{
	int rc;

	jsonout_open(o, key, '[');
	rc = store_attempts(st, job, write_attempt, o);
	jsonout_close(o, ']');
	return rc;
}
