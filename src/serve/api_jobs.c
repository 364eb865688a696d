/* Client calls: submit, list, get, cancel, stats (see docs/API.md). */
#include <stdlib.h>
#include <string.h>

#include "serve/api_internal.h"
#include "serve/attempts.h"
#include "common/fnv.h"
#include "common/log.h"
#include "common/mem.h"
#include "policy/placeable.h"
#include "serve/longpoll.h"
#include "serve/team_state.h"
#include "store/store.h"

#define DAY_S (86400LL)

const struct field api_submit_fields[] = {
	{"type", F_NAME, 0, 0},
	{"lane", F_NAME, 0, 0},
	{"priority", F_INT, -1000, 1000},
	{"team", F_NAME, 0, 0},
	{"command", F_ANY, 0, 0},
	{"payload", F_ANY, 0, 0},
	{"labels", F_STRINGS, 0, 32},
	{"gpus", F_INT, 0, 64},
	{"min_vram_gb", F_INT, 0, 4096},
	{"items", F_INT, 1, 1000000000000LL},
	{"timeout_s", F_INT, 1, 30 * DAY_S},
	{"est_s", F_INT, 1, JOB_EST_MAX_S},
	{"max_attempts", F_INT, 1, 100},
	{"delay_s", F_INT, 0, 365 * DAY_S},
	{"run_at", F_INT, 0, 4102444800LL}, /* Unix seconds, before 2100 */
	{"idempotency_key", F_STRING, 1, JOB_KEY_MAX},
	{"allow_unplaceable", F_BOOL, 0, 0},
	{NULL, 0, 0, 0},
};

/* A command is argv: 1 to 256 strings, the first a program name. */
static int check_command(json_t *cmd, struct ebb_error *err)
{
	size_t i;
	json_t *arg;

	if (!json_is_array(cmd) || json_array_size(cmd) == 0 || json_array_size(cmd) > 256)
		return error_set(err, 400, "bad_value", "command",
				 "command: expected an array of 1 to 256 strings (argv)");
	json_array_foreach(cmd, i, arg) {
		if (!json_is_string(arg) || json_string_length(arg) > 65536 ||
		    (i == 0 && json_string_length(arg) == 0))
			return error_set(err, 400, "bad_value", "command",
					 "command[%zu]: expected a string of up to 64 KiB, a program name first", i);
	}
	return 0;
}

/* FNV-1a over the canonical body and team: the same key with a different
 * body is a conflict, not a silent duplicate. -1 when out of memory. */
static int body_hash(json_t *body, const char *team, int64_t *out)
{
	char *text = json_dumps(body, JSON_SORT_KEYS | JSON_COMPACT);

	if (!text)
		return -1;
	*out = (int64_t)fnv1a(fnv1a(FNV1A_START, text), team);
	free(text);
	return 0;
}

/* Was v, which is in the body, lost to an allocation? */
static int lost(const json_t *v, const char *stored)
{
	return v && !json_is_null(v) && !stored;
}

/* The job a valid body b describes, with the configured defaults filled in. */
static int job_from_body(struct api_call *c, json_t *b, const char *team, struct job *job, struct ebb_error *err)
{
	const struct config *cfg = c->api->cfg;
	json_t *cmd = json_object_get(b, "command"), *payload = json_object_get(b, "payload");
	const char *lane = json_get_str(b, "lane", cfg->default_lane);

	if (json_has(b, "command") && check_command(cmd, err) != 0)
		return -1;
	if (!json_has(b, "command") && !json_has(b, "payload"))
		return error_set(err, 400, "missing_field", "command", "a job needs a command or a payload");
	/* A payload alone goes to its type's handler: without one, no worker
	 * would know what to run. */
	if (!json_has(b, "command") && !config_handler(cfg, json_get_str(b, "type", "default")))
		return error_set(err, 400, "missing_field", "command",
				 "a job needs a command, or a type with a handler ([type.%s] handler in serve's config)",
				 json_get_str(b, "type", "default"));
	if (config_lane_rank(cfg, lane) < 0)
		return error_set(err, 400, "bad_value", "lane", "lane '%s' is not one of [queue] lanes (%s)",
				 lane, cfg->lanes);
	if (json_has(b, "delay_s") && json_has(b, "run_at"))
		return error_set(err, 400, "bad_value", "run_at", "give delay_s or run_at, not both");
	snprintf(job->type, sizeof job->type, "%s", json_get_str(b, "type", "default"));
	snprintf(job->lane, sizeof job->lane, "%s", lane);
	snprintf(job->team, sizeof job->team, "%s", team);
	job->priority = (int)json_get_int(b, "priority", 0);
	job->command = job_stored_json(cmd);
	job->payload = job_stored_json(payload);
	job->labels = job_stored_json(json_object_get(b, "labels"));
	job->gpus = (int)json_get_int(b, "gpus", 1);
	job->min_vram_gb = (int)json_get_int(b, "min_vram_gb", 0);
	job->items = json_get_int(b, "items", 1);
	job->timeout_s = json_get_int(b, "timeout_s", cfg->default_timeout_ms / 1000);
	job->est_s = json_get_int(b, "est_s", 0);
	job->max_attempts = (int)json_get_int(b, "max_attempts", cfg->max_attempts);
	job->run_at_ms = json_get_int(b, "run_at", 0) * 1000;
	if (json_get_str(b, "idempotency_key", NULL)) {
		if (body_hash(b, team, &job->idem_hash) != 0)
			return error_set(err, 500, "out_of_memory", NULL, ERROR_OUT_OF_MEMORY);
		job->idem_key = mem_strdup(json_get_str(b, "idempotency_key", NULL));
	}
	/* All of it or nothing: a job stored without its command, or with a
	 * key's hash and no key (a retry would make a second job). */
	if (lost(cmd, job->command) || lost(payload, job->payload) || lost(json_object_get(b, "labels"), job->labels) ||
	    lost(json_object_get(b, "idempotency_key"), job->idem_key))
		return error_set(err, 500, "out_of_memory", NULL, ERROR_OUT_OF_MEMORY);
	return 0;
}

struct live {
	struct instance *v;
	int n, cap, nomem;
};

static int add_live(void *arg, const struct instance *inst)
{
	struct live *l = arg;

	if (l->n == l->cap) {
		int cap = l->cap ? l->cap * 2 : 16;
		struct instance *v = mem_realloc(l->v, (size_t)cap * sizeof *v);
		if (!v)
			return l->nomem = -1;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = *inst;
	return 0;
}

/* Refuses a job that no offer and no worker registered now can hold
 * (policy/placeable.h), unless the body allows it for workers to come.
 * Only where the config has offers: without, workers started by hand are
 * what runs jobs, and serve does not know them before they ask. The
 * fleet is read only when no offer holds the job. */
static int check_placeable(struct api_call *c, json_t *body, const struct job *job, struct ebb_error *err)
{
	const struct api *a = c->api;
	struct live live = {0};
	char why[300];
	int rc;

	if (a->cfg->noffers == 0 || json_get_bool(body, "allow_unplaceable", 0) ||
	    placeable(a->offers, a->noffers, NULL, 0, job->gpus, job->min_vram_gb, why, sizeof why))
		return 0;
	if (store_instance_list(a->store, add_live, &live) != 0) {
		free(live.v);
		return live.nomem ? error_set(err, 500, "out_of_memory", NULL, ERROR_OUT_OF_MEMORY)
				  : store_failure(a->store, err);
	}
	rc = placeable(a->offers, a->noffers, live.v, live.n, job->gpus, job->min_vram_gb, why, sizeof why);
	free(live.v);
	if (rc)
		return 0;
	return error_set(err, 422, "unplaceable", job->min_vram_gb > 0 ? "min_vram_gb" : "gpus",
			 "%s, nor does any worker registered now; allow_unplaceable queues it for workers to come", why);
}

int api_submit_job(struct api_call *c, json_t *body, struct job *job, int *existed, struct ebb_error *err)
{
	const char *team = json_get_str(body, "team", NULL);

	*job = (struct job){0};
	if (json_check_fields(body, api_submit_fields, err) != 0)
		return -1;
	if (c->team && team && strcmp(team, c->team) != 0)
		return error_set(err, 403, "forbidden", "team", "token '%s' submits for team '%s', not '%s'",
				 c->token->name, c->team, team);
	team = c->team ? c->team : team ? team : "default";
	if (job_from_body(c, body, team, job, err) != 0 || check_placeable(c, body, job, err) != 0 ||
	    queue_submit(c->api->queue, job, json_get_int(body, "delay_s", 0) * 1000, existed, err) != 0) {
		job_free(job);
		return -1;
	}
	log_debug("job submitted", "job=%lld lane=%s team=%s existed=%d", (long long)job->id, job->lane,
		  job->team, *existed);
	return 0;
}

int api_submit(struct api_call *c)
{
	struct ebb_error err;
	struct job job;
	int existed;

	if (json_is_array(c->body))
		return api_submit_array(c);
	if (api_submit_job(c, c->body, &job, &existed, &err) != 0)
		return api_fail(c, &err);
	request_reply_json(c->req, existed ? 200 : 201, job_json_text(&job));
	job_free(&job);
	return 0;
}

struct list_ctx {
	struct jsonout out;
	int n;
	int64_t last_id;
	const struct team_state *teams; /* NULL: teams are off */
};

static int add_job(void *arg, const struct job *job)
{
	struct list_ctx *l = arg;
	char why[400];
	int held = l->teams && job->state == JOB_QUEUED && team_state_held(l->teams, job->team, job->gpus, why, sizeof why);

	job_write_json_held(&l->out, NULL, job, held ? why : NULL);
	l->n++;
	l->last_id = job->id;
	return 0;
}

int api_list(struct api_call *c)
{
	const char *state = request_query(c->req, "state");
	struct job_filter f = {.state = -1};
	struct list_ctx l = {0};
	struct team_state ts;
	struct ebb_error err;
	int rc;

	f.lane = request_query(c->req, "lane");
	f.type = request_query(c->req, "type");
	f.team = c->team ? c->team : request_query(c->req, "team");
	if (state && (f.state = job_state_parse(state)) < 0) {
		error_set(&err, 400, "bad_value", "state",
			  "state: expected queued, delayed, leased, succeeded, failed, dead or cancelled");
		return api_fail(c, &err);
	}
	if (api_query_page(c, 100, &f.after_id, &f.limit) != 0)
		return -1;
	/* Read once for the page: why its queued jobs wait for their team. */
	if ((rc = team_state_read(&ts, c->api->store, c->api->cfg, clock_now(c->api->clock))) != 0) {
		team_state_free(&ts);
		if (rc != TEAM_STATE_NOMEM)
			return api_store_failed(c);
		error_set(&err, 500, "out_of_memory", NULL, ERROR_OUT_OF_MEMORY);
		return api_fail(c, &err);
	}
	l.teams = ts.n ? &ts : NULL;
	jsonout_open(&l.out, NULL, '{');
	jsonout_open(&l.out, "jobs", '[');
	rc = store_job_list(c->api->store, &f, add_job, &l);
	team_state_free(&ts);
	if (rc != 0) {
		free(l.out.text);
		return api_store_failed(c);
	}
	jsonout_close(&l.out, ']');
	if (l.n == f.limit)
		jsonout_int(&l.out, "next_after", l.last_id);
	else
		jsonout_null(&l.out, "next_after");
	jsonout_close(&l.out, '}');
	request_reply_json(c->req, 200, jsonout_finish(&l.out));
	return 0;
}

/* Whether the job's team holds it back (docs/TEAMS.md): 1 with why, 0,
 * or -1 on a store error. */
static int why_held(struct api *api, const struct job *job, char *why, size_t size)
{
	struct team_state ts;
	int rc = team_state_read(&ts, api->store, api->cfg, clock_now(api->clock));

	if (rc == 0)
		rc = team_state_held(&ts, job->team, job->gpus, why, size);
	team_state_free(&ts);
	return rc < 0 ? -1 : rc;
}

int api_job_read(struct api_call *c, struct job *job)
{
	struct ebb_error err;

	if (queue_get(c->api->queue, c->id, c->team, job, &err) != 0)
		return api_fail(c, &err);
	if (c->instance && job->instance != c->instance) {
		job_free(job);
		error_set(&err, 403, "forbidden", NULL, "the token of instance %lld reads only the jobs leased on it",
			  (long long)c->instance);
		return api_fail(c, &err);
	}
	return 0;
}

/* Replies to req with the job (freed) and every lease of it, as GET
 * /v1/jobs/ID gives it, or with the store's failure. */
static void reply_job_runs(struct api *api, struct request *req, struct job *job)
{
	struct jsonout o = {0};
	struct ebb_error err;
	char why[400] = "", *text;
	int held = 0, rc = -1;

	if (job->state == JOB_QUEUED && api->cfg->nteams > 0)
		held = why_held(api, job, why, sizeof why);
	if (held >= 0) { /* the job and every lease of it */
		job_write_json_held(&o, NULL, job, held ? why : NULL);
		jsonout_reopen(&o);
		rc = attempts_write_json(api->store, job->id, &o, "runs");
		jsonout_close(&o, '}');
	}
	job_free(job);
	text = jsonout_finish(&o);
	if (rc != 0) {
		free(text);
		store_failure(api->store, &err);
		request_reply(req, err.status, error_to_json(&err));
		return;
	}
	request_reply_json(req, 200, text);
}

/* A read that waits for the job's end (GET /v1/jobs/ID?wait=). */
struct end_query {
	int64_t job;
	int has_team;
	char team[CONF_NAME_MAX + 1];
};

int api_job_end_try(void *ctx, struct request *req, const void *query, int last)
{
	struct api *api = ctx;
	const struct end_query *q = query;
	struct ebb_error err;
	struct job job;

	if (queue_get(api->queue, q->job, q->has_team ? q->team : NULL, &job, &err) != 0) {
		request_reply(req, err.status, error_to_json(&err));
		return 1;
	}
	if (!job_state_terminal(job.state) && !last) {
		job_free(&job);
		return 0;
	}
	reply_job_runs(api, req, &job);
	return 1;
}

int api_get(struct api_call *c)
{
	struct end_query q = {.job = c->id};
	struct ebb_error err;
	struct job job;
	int64_t wait_ms;

	if (api_query_wait(c, JOB_WAIT_MAX_MS, &wait_ms) != 0 || api_job_read(c, &job) != 0)
		return -1;
	if (wait_ms == 0 || job_state_terminal(job.state)) {
		reply_job_runs(c->api, c->req, &job);
		return 0;
	}
	job_free(&job);
	if (c->team) {
		q.has_team = 1;
		snprintf(q.team, sizeof q.team, "%s", c->team);
	}
	if (jobwait_park(c->api->endwait, c->req, c->id, &q, sizeof q, wait_ms) != 0) {
		error_set(&err, 500, "out_of_memory", NULL, ERROR_OUT_OF_MEMORY);
		return api_fail(c, &err);
	}
	return 0;
}

int api_cancel(struct api_call *c)
{
	struct ebb_error err;
	struct job job;

	if (api_body(c, api_no_fields) != 0)
		return -1;
	if (queue_cancel(c->api->queue, c->id, c->team, &job, &err) != 0)
		return api_fail(c, &err);
	request_reply_json(c->req, 200, job_json_text(&job));
	job_free(&job);
	return 0;
}

static const struct field requeue_fields[] = {{"fresh", F_BOOL, 0, 0}, {NULL, 0, 0, 0}};

int api_requeue(struct api_call *c)
{
	struct ebb_error err;
	struct job job;

	if (api_body(c, requeue_fields) != 0)
		return -1;
	if (queue_requeue(c->api->queue, c->id, c->team, json_get_bool(c->body, "fresh", 0), &job, &err) != 0)
		return api_fail(c, &err);
	request_reply_json(c->req, 200, job_json_text(&job));
	job_free(&job);
	return 0;
}

struct stats_ctx {
	const char *team;
	json_t *states, *lanes;
};

static int add_count(void *arg, const struct job_count *n)
{
	struct stats_ctx *s = arg;
	const char *state = job_state_name(n->state);
	json_t *lane;

	if (s->team && strcmp(s->team, n->team) != 0)
		return 0;
	json_object_set_new(s->states, state,
			    json_integer(json_integer_value(json_object_get(s->states, state)) + n->n));
	if (!(lane = json_object_get(s->lanes, n->lane))) {
		lane = json_object();
		json_object_set_new(s->lanes, n->lane, lane);
	}
	json_object_set_new(lane, state, json_integer(json_integer_value(json_object_get(lane, state)) + n->n));
	return 0;
}

int api_stats(struct api_call *c)
{
	struct api *a = c->api;
	struct stats_ctx ctx = {.team = c->team, .states = json_object(), .lanes = json_object()};

	for (int i = 0; i < JOB_NSTATES; i++)
		json_object_set_new(ctx.states, job_state_name((enum job_state)i), json_integer(0));
	for (int i = 0; i < a->cfg->nlanes; i++)
		json_object_set_new(ctx.lanes, a->cfg->lane_names[i], json_object());
	if (store_job_counts(a->store, add_count, &ctx) != 0) {
		json_decref(ctx.states);
		json_decref(ctx.lanes);
		return api_store_failed(c);
	}
	request_reply(c->req, 200,
		      json_pack("{s:o, s:o, s:i, s:I}", "states", ctx.states, "lanes", ctx.lanes,
				"waiting_workers", longpoll_waiting(a->longpoll), "uptime_s",
				(json_int_t)((clock_now(a->clock) - a->started_ms) / 1000)));
	return 0;
}
