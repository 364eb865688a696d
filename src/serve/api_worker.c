/* Worker calls: lease (long-poll), heartbeat, checkpoint, complete, fail.
 * Every call after the lease carries the lease's fencing token; a stale one
 * is refused with 409 so that a worker that lost its lease cannot finish a
 * job another worker now runs. */
#include <stdlib.h>
#include <string.h>

#include "serve/api.h"

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
	{NULL, 0, 0, 0},
};

int api_lease(struct api_call *c)
{
	const struct config *cfg = c->api->cfg;
	struct lease_request r = {0};
	struct ebb_error err;
	int64_t held[INSTANCE_GPUS_MAX], running[INSTANCE_GPUS_MAX];
	json_t *ids, *id;
	size_t nrunning;
	int nheld, rc = 0;

	if (api_body(c, api_lease_fields) != 0)
		return -1;
	if (!json_get_str(c->body, "worker", NULL)) {
		error_set(&err, 400, "missing_field", "worker", "worker: required, the worker's name");
		return api_fail(c, &err);
	}
	snprintf(r.worker, sizeof r.worker, "%s", json_get_str(c->body, "worker", ""));
	/* An instance's own token leases for that instance, named or not. */
	r.instance = json_get_int(c->body, "instance", c->instance);
	if (api_own_instance(c, r.instance, "lease for instance") != 0)
		return -1;
	r.offer.gpus = (int)json_get_int(c->body, "gpus", 1);
	r.offer.vram_gb = (int)json_get_int(c->body, "vram_gb", 0);
	r.lease_ms = json_get_int(c->body, "lease_s", cfg->lease_timeout_ms / 1000) * 1000;
	r.wait_ms = json_get_int(c->body, "wait_s", 0) * 1000;
	if (r.wait_ms > cfg->max_lease_wait_ms)
		r.wait_ms = cfg->max_lease_wait_ms;
	/* A worker that asks for work runs only the jobs it names ("running",
	 * beside which its free GPUs take more): without them its instance is
	 * idle, or drains and gets no job. A job still leased on it that it
	 * does not run goes back to the queue now, not when its lease expires. */
	ids = json_object_get(c->body, "running");
	json_array_foreach(ids, nrunning, id)
		running[nrunning] = json_integer_value(id);
	if ((r.may_lease = fleet_worker_asks(c->api->fleet, r.instance, running, (int)json_array_size(ids), held,
					     &nheld, &err)) < 0)
		return api_fail(c, &err);
	for (int k = 0; k < nheld && rc == 0; k++)
		rc = queue_unlease_instance(c->api->queue, held[k], r.instance, &err);
	if (rc != 0)
		return api_fail(c, &err);
	r.offer.labels = json_incref(json_object_get(c->body, "labels"));
	longpoll_lease(c->api->longpoll, c->req, &r);
	return 0;
}

const struct field api_heartbeat_fields[] = {
	{"lease_token", F_INT, 1, INT64_MAX},
	{NULL, 0, 0, 0},
};

/* Reads the lease token every worker call must carry. A caller with an
 * instance's own token reports only the jobs leased on that instance. */
static int lease_token(struct api_call *c, const struct field *fields, int64_t *token)
{
	struct ebb_error err;
	struct job job;
	int64_t on;

	if (api_body(c, fields) != 0)
		return -1;
	*token = json_get_int(c->body, "lease_token", 0);
	if (*token == 0) {
		error_set(&err, 400, "missing_field", "lease_token", "lease_token: required, from the lease");
		return api_fail(c, &err);
	}
	if (!c->instance)
		return 0;
	if (queue_get(c->api->queue, c->id, NULL, &job, &err) != 0)
		return api_fail(c, &err);
	on = job.instance;
	job_free(&job);
	return on == c->instance ? 0 : api_own_instance(c, on, "report a job leased on instance");
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

int api_heartbeat(struct api_call *c)
{
	struct ebb_error err;
	struct job job;
	int64_t token;
	const char *preempt;

	if (lease_token(c, api_heartbeat_fields, &token) != 0)
		return -1;
	if (queue_heartbeat(c->api->queue, c->id, token, &job, &err) != 0)
		return api_fail(c, &err);
	/* The worker stops the job at its checkpoint when told "preempt". */
	if (!(preempt = preempt_reason(&c->api->queue->preempts, c->id, token)))
		return reply(c, 0, &job, &err);
	api_reply_job(c, &job, "preempt", preempt);
	job_free(&job);
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
	{NULL, 0, 0, 0},
};

int api_complete(struct api_call *c)
{
	char *text;
	struct ebb_error err;
	struct job job;
	int64_t token;
	int rc;

	if (lease_token(c, api_complete_fields, &token) != 0)
		return -1;
	text = job_stored_json(json_object_get(c->body, "result"));
	rc = queue_complete(c->api->queue, c->id, token, json_get_int(c->body, "items_done", -1), text,
			    &job, &err);
	free(text);
	return reply(c, rc, &job, &err);
}

const struct field api_fail_fields[] = {
	{"lease_token", F_INT, 1, INT64_MAX},
	{"error", F_STRING, 0, 4096},
	{"retry", F_BOOL, 0, 0},
	{NULL, 0, 0, 0},
};

int api_fail_job(struct api_call *c)
{
	struct ebb_error err;
	struct job job;
	int64_t token;

	if (lease_token(c, api_fail_fields, &token) != 0)
		return -1;
	return reply(c, queue_fail(c->api->queue, c->id, token, json_get_str(c->body, "error", "failed"),
				   json_get_bool(c->body, "retry", 1), &job, &err),
		     &job, &err);
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
