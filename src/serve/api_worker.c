/* Worker calls: lease (long-poll), heartbeat, checkpoint, complete, fail.
 * Every call after the lease carries the lease's fencing token; a stale one
 * is refused with 409 so that a worker that lost its lease cannot finish a
 * job another worker now runs. */
#include <stdlib.h>
#include <string.h>

#include "common/mem.h"

#include "serve/api_internal.h"
#include "serve/share.h"
#include "serve/workers.h"

#define ITEMS_MAX 1000000000000LL

const struct field api_lease_fields[] = {
	{"worker", F_NAME, 0, 0},
	{"instance", F_INT, 1, INT64_MAX},
	{"gpus", F_INT, 0, 64},
	{"vram_gb", F_INT, 0, 4096},
	{"labels", F_STRINGS, 0, 64},
	{"wait_s", F_INT, 0, 600},
	{"lease_s", F_INT, 1, 3600},
	{"running", F_IDS, 0, INSTANCE_GPUS_MAX},
	{"max_jobs", F_INT, 1, LEASE_MAX_JOBS},
	{"share_free", F_NUMBER, 0, 1},
	{"share_vram_gb", F_INT, 0, 4096},
	{"handlers", F_ANY, 0, 0},
	{NULL, 0, 0, 0},
};

/* The resident handlers the worker keeps: [{"type", "state": "starting"
 * or "ready", "setup_s": seconds or null}], at most WORKER_HANDLERS_MAX,
 * into out[*n]; none (list NULL): *n is 0. */
static int read_handlers(json_t *list, struct handler_seen *out, int *n, struct ebb_error *err)
{
	json_t *h;
	size_t i;

	if (!list)
		return 0;
	if (!json_is_array(list) || json_array_size(list) > WORKER_HANDLERS_MAX)
		return error_set(err, 400, "bad_value", "handlers", "handlers: expected an array of at most %d handlers",
				 WORKER_HANDLERS_MAX);
	json_array_foreach(list, i, h) {
		const char *type = json_string_value(json_object_get(h, "type"));
		const char *state = json_string_value(json_object_get(h, "state"));
		json_t *setup = json_object_get(h, "setup_s");
		struct handler_seen *s = &out[i];

		if (!type || !config_name_ok(type) || !state || (strcmp(state, "starting") != 0 && strcmp(state, "ready") != 0) ||
		    (setup && !json_is_null(setup) && (!json_is_number(setup) || json_number_value(setup) < 0 ||
							json_number_value(setup) > 1e9)))
			return error_set(err, 400, "bad_value", "handlers",
					 "handlers[%zu]: expected {\"type\": a type name, \"state\": \"starting\" or \"ready\", "
					 "\"setup_s\": seconds or null}", i);
		snprintf(s->type, sizeof s->type, "%s", type);
		s->ready = state[0] == 'r';
		s->setup_ms = json_is_number(setup) ? (int64_t)(json_number_value(setup) * 1000.0) : -1;
	}
	*n = (int)json_array_size(list);
	return 0;
}

/* Reads the lease request in body (a lease's, or the "next" of a complete
 * or a fail) into r, which holds its labels when it succeeds: no write
 * yet, so that a bad request changes nothing. what names the body in
 * errors. */
static int read_lease_request(struct api_call *c, json_t *body, const char *what, struct lease_request *r,
			      struct ebb_error *err)
{
	const struct config *cfg = c->api->cfg;
	json_t *id;
	size_t i;

	*r = (struct lease_request){0};
	if (!json_is_object(body))
		return error_set(err, 400, "bad_value", what, "%s: expected a lease request (an object)", what);
	if (json_check_fields(body, api_lease_fields, err) != 0 ||
	    read_handlers(json_object_get(body, "handlers"), r->handlers, &r->nhandlers, err) != 0)
		return -1;
	if (!json_get_str(body, "worker", NULL))
		return error_set(err, 400, "missing_field", "worker", "worker: required, the worker's name");
	snprintf(r->worker, sizeof r->worker, "%s", json_get_str(body, "worker", ""));
	/* An instance's own token leases for that instance, named or not. */
	r->instance = json_get_int(body, "instance", c->instance);
	if (api_check_own_instance(c, r->instance, "lease for instance", err) != 0)
		return -1;
	r->max_jobs = (int)json_get_int(body, "max_jobs", 0);
	/* An instance's worker asks for one job at a time, with its free
	 * GPUs and the jobs it runs (fleet.h). */
	if (r->instance && r->max_jobs > 1)
		return error_set(err, 400, "bad_value", "max_jobs",
				 "max_jobs: an instance's worker asks for one job at a time, with its free GPUs; "
				 "above 1 only for a worker without instance");
	r->offer.gpus = (int)json_get_int(body, "gpus", 1);
	r->offer.vram_gb = (int)json_get_int(body, "vram_gb", 0);
	r->lease_ms = json_get_int(body, "lease_s", cfg->lease_timeout_ms / 1000) * 1000;
	r->wait_ms = json_get_int(body, "wait_s", 0) * 1000;
	if (r->wait_ms > cfg->max_lease_wait_ms)
		r->wait_ms = cfg->max_lease_wait_ms;
	json_array_foreach(json_object_get(body, "running"), i, id)
		r->running[i] = json_integer_value(id);
	r->nrunning = (int)json_array_size(json_object_get(body, "running"));
	r->names_running = json_object_get(body, "running") != NULL;
	/* Its partly used GPU's room, for the shared types that fit it. */
	if (share_offer_read(cfg, body, &r->offer, err) != 0)
		return -1;
	r->offer.labels = json_incref(json_object_get(body, "labels"));
	return 0;
}

/* A worker started by hand names the jobs it runs: a lease of its last
 * reply that it does not name never reached it (workers.h), and goes
 * back to the queue now, its attempt not counted. One it ended since is
 * no longer leased with that token, and stays as it is. */
static int take_back_unread(struct api_call *c, const struct lease_request *r, struct ebb_error *err)
{
	int64_t id[WORKER_GRANTED_MAX], token[WORKER_GRANTED_MAX];
	int n = workers_not_running(c->api->workers, r->worker, r->running, r->nrunning, id, token);

	for (int k = 0; k < n; k++)
		if (queue_unlease(c->api->queue, id[k], token[k], err) != 0 && err->status >= 500)
			return -1;
	return 0;
}

/* Leases for r, now or when a job comes: the reply is the lease's. */
static int lease(struct api_call *c, struct lease_request *r)
{
	struct ebb_error err;
	int64_t held[INSTANCE_GPUS_MAX];
	int nheld = 0, rc = 0;

	workers_seen(c->api->workers, r->worker, r->instance, r->offer.gpus, clock_now(c->api->clock), 0);
	workers_handlers(c->api->workers, r->worker, r->handlers, r->nhandlers);
	/* A worker that asks for work runs only the jobs it names ("running",
	 * beside which its free GPUs take more): without them its instance is
	 * idle, or drains and gets no job. A job still leased on it that it
	 * does not run goes back to the queue now, not when its lease expires. */
	if ((r->may_lease = fleet_worker_asks(c->api->fleet, r->instance, r->running, r->nrunning, held, &nheld,
					      &err)) < 0)
		rc = -1;
	for (int k = 0; k < nheld && rc == 0; k++)
		rc = queue_unlease_instance(c->api->queue, held[k], r->instance, &err);
	if (!r->instance && r->names_running && rc == 0)
		rc = take_back_unread(c, r, &err);
	if (rc != 0) {
		lease_request_free(r);
		return api_fail(c, &err);
	}
	longpoll_lease(c->api->longpoll, c->req, r);
	return 0;
}

int api_lease(struct api_call *c)
{
	struct lease_request r;
	struct ebb_error err;

	if (read_lease_request(c, c->body, "body", &r, &err) != 0)
		return api_fail(c, &err);
	return lease(c, &r);
}

const struct field api_heartbeat_fields[] = {
	{"lease_token", F_INT, 1, INT64_MAX},
	{"handlers", F_ANY, 0, 0},
	{NULL, 0, 0, 0},
};

/* A caller with an instance's own token acts only on the jobs leased on
 * that instance: 0, or replies and returns -1. what names the call. */
static int own_job(struct api_call *c, const char *what)
{
	struct ebb_error err;
	struct job job;
	int64_t on;

	if (!c->instance)
		return 0;
	if (queue_get(c->api->queue, c->id, NULL, &job, &err) != 0)
		return api_fail(c, &err);
	on = job.instance;
	job_free(&job);
	return on == c->instance ? 0 : api_own_instance(c, on, what);
}

/* Reads the lease token every worker call must carry. A caller with an
 * instance's own token reports only the jobs leased on that instance. */
static int lease_token(struct api_call *c, const struct field *fields, int64_t *token)
{
	struct ebb_error err;

	if (api_body(c, fields) != 0)
		return -1;
	*token = json_get_int(c->body, "lease_token", 0);
	if (*token == 0) {
		error_set(&err, 400, "missing_field", "lease_token", "lease_token: required, from the lease");
		return api_fail(c, &err);
	}
	return own_job(c, "report a job leased on instance");
}

/* Replies with the job after a successful call, or with the error. */
static int reply(struct api_call *c, int rc, struct job *job, const struct ebb_error *err)
{
	if (rc != 0)
		return api_fail(c, err);
	request_reply_json(c->req, 200, job_json_text(job));
	job_free(job);
	return 0;
}

/* The worker's lease request that may come with its complete or fail
 * ("next"), read before the call writes anything: 0 with *next set when
 * there is one, else replies with the error and returns -1. */
static int read_next(struct api_call *c, struct lease_request *r, int *next)
{
	struct ebb_error err;

	*r = (struct lease_request){0};
	*next = json_has(c->body, "next");
	if (*next && read_lease_request(c, json_object_get(c->body, "next"), "next", r, &err) != 0)
		return api_fail(c, &err);
	return 0;
}

/* After the call: its job alone, or with the next lease, the reply of
 * which it becomes. A refused call (a stale token) leases nothing. */
static int reply_next(struct api_call *c, int rc, struct job *job, const struct ebb_error *err, int next,
		      struct lease_request *r)
{
	if (!next)
		return reply(c, rc, job, err);
	if (rc == 0 && (r->done = mem_alloc(sizeof *r->done))) {
		*r->done = *job; /* moved: the lease frees it */
		return lease(c, r);
	}
	lease_request_free(r);
	if (rc == 0) {
		job_free(job);
		return api_fail(c, &(struct ebb_error){500, "out_of_memory", "", ERROR_OUT_OF_MEMORY});
	}
	return api_fail(c, err);
}

int api_heartbeat(struct api_call *c)
{
	struct ebb_error err;
	struct job job;
	struct handler_seen handlers[WORKER_HANDLERS_MAX];
	int64_t token;
	int nhandlers = 0;
	json_t *list;
	const char *preempt;

	if (lease_token(c, api_heartbeat_fields, &token) != 0)
		return -1;
	/* Read before the heartbeat writes: a bad list changes nothing. */
	if ((list = json_object_get(c->body, "handlers")) && read_handlers(list, handlers, &nhandlers, &err) != 0)
		return api_fail(c, &err);
	if (queue_heartbeat(c->api->queue, c->id, token, &job, &err) != 0)
		return api_fail(c, &err);
	workers_seen(c->api->workers, job.worker, job.instance, -1, clock_now(c->api->clock), 0);
	if (list)
		workers_handlers(c->api->workers, job.worker, handlers, nhandlers);
	/* The worker stops the job at its checkpoint when told "preempt". */
	if (!(preempt = preempt_reason(&c->api->queue->preempts, c->id, token)))
		return reply(c, 0, &job, &err);
	api_reply_job(c, &job, "preempt", preempt);
	job_free(&job);
	return 0;
}

/* The running job's wake-up (watch.h): ?token= the lease's, &wait= up to
 * 600 seconds. */
int api_watch(struct api_call *c)
{
	struct ebb_error err;
	int64_t token, wait_s;

	if (api_query_int(c, "token", 1, INT64_MAX, 0, &token) != 0 ||
	    api_query_int(c, "wait", 0, 600, 0, &wait_s) != 0)
		return -1;
	if (token == 0) {
		error_set(&err, 400, "missing_field", "token", "token: required, the lease's token");
		return api_fail(c, &err);
	}
	if (own_job(c, "watch a job leased on instance") != 0)
		return -1;
	watch_lease(c->api->watch, c->req, c->id, token, wait_s * 1000);
	return 0;
}

const struct field api_checkpoint_fields[] = {
	{"lease_token", F_INT, 1, INT64_MAX},
	{"checkpoint", F_STRING, 0, JOB_CHECKPOINT_MAX},
	{"items_done", F_INT, 0, ITEMS_MAX},
	{NULL, 0, 0, 0},
};

int api_checkpoint(struct api_call *c)
{
	struct ebb_error err;
	struct job job;
	int64_t token;

	if (lease_token(c, api_checkpoint_fields, &token) != 0)
		return -1;
	if (!json_get_str(c->body, "checkpoint", NULL)) {
		error_set(&err, 400, "missing_field", "checkpoint", "checkpoint: required, up to 64 KiB");
		return api_fail(c, &err);
	}
	return reply(c, queue_checkpoint(c->api->queue, c->id, token, json_get_str(c->body, "checkpoint", ""),
					 json_get_int(c->body, "items_done", -1), &job, &err),
		     &job, &err);
}

const struct field api_complete_fields[] = {
	{"lease_token", F_INT, 1, INT64_MAX},
	{"items_done", F_INT, 0, ITEMS_MAX},
	{"result", F_ANY, 0, 0},
	{"next", F_ANY, 0, 0},
	{NULL, 0, 0, 0},
};

int api_complete(struct api_call *c)
{
	struct lease_request r;
	char *text;
	struct ebb_error err;
	struct job job;
	int64_t token;
	int rc, next;

	if (lease_token(c, api_complete_fields, &token) != 0)
		return -1;
	text = job_stored_json(json_object_get(c->body, "result"));
	if (text && (int64_t)strlen(text) > c->api->cfg->result_max) {
		error_set(&err, 413, "too_large", "result", "result is %zu bytes, over [queue] result_max (%lld)",
			  strlen(text), (long long)c->api->cfg->result_max);
		free(text);
		return api_fail(c, &err);
	}
	if (read_next(c, &r, &next) != 0) {
		free(text);
		return -1;
	}
	rc = queue_complete(c->api->queue, c->id, token, json_get_int(c->body, "items_done", -1), text,
			    &job, &err);
	free(text);
	return reply_next(c, rc, &job, &err, next, &r);
}

const struct field api_fail_fields[] = {
	{"lease_token", F_INT, 1, INT64_MAX},
	{"error", F_STRING, 0, 4096},
	{"retry", F_BOOL, 0, 0},
	{"exit", F_INT, 0, 255},
	{"next", F_ANY, 0, 0},
	{NULL, 0, 0, 0},
};

int api_fail_job(struct api_call *c)
{
	struct lease_request r;
	struct ebb_error err;
	struct job job;
	int64_t token;
	int rc, next;

	if (lease_token(c, api_fail_fields, &token) != 0 || read_next(c, &r, &next) != 0)
		return -1;
	rc = queue_fail(c->api->queue, c->id, token, json_get_str(c->body, "error", "failed"),
			json_get_bool(c->body, "retry", 1), (int)json_get_int(c->body, "exit", -1), &job, &err);
	return reply_next(c, rc, &job, &err, next, &r);
}

/* The run was stopped from outside: a spot reclaim, or its worker was
 * stopped. The job resumes from its checkpoint, at the head of its lane,
 * and the attempt is not counted. Its instance is going away: it takes no
 * new job. */
const struct field api_interrupt_fields[] = {
	{"lease_token", F_INT, 1, INT64_MAX},
	{"checkpoint", F_STRING, 0, JOB_CHECKPOINT_MAX},
	{"checkpoint_items", F_INT, 0, ITEMS_MAX},
	{"items_done", F_INT, 0, ITEMS_MAX},
	{"reason", F_STRING, 0, 4096},
	{"reclaim", F_BOOL, 0, 0},
	{NULL, 0, 0, 0},
};

int api_interrupt(struct api_call *c)
{
	struct ebb_error err;
	struct job job;
	int64_t token;
	char why[4200];
	int rc;

	if (lease_token(c, api_interrupt_fields, &token) != 0)
		return -1;
	snprintf(why, sizeof why, "interrupted: %s", json_get_str(c->body, "reason", "no reason given"));
	rc = queue_interrupt(c->api->queue, c->id, token, json_get_str(c->body, "checkpoint", NULL),
			     json_get_int(c->body, "checkpoint_items", -1), json_get_int(c->body, "items_done", -1),
			     why, json_get_bool(c->body, "reclaim", 0), &job, &err);
	return reply(c, rc, &job, &err);
}
