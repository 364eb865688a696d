/* POST /v1/jobs with an array: many jobs in one request, so a client with
 * many small jobs pays one round trip and one commit for all of them
 * rather than one each (docs/API.md). The jobs are checked and queued one
 * by one, each in a savepoint of its own inside the request's: a bad job
 * is left out and answered with its error, the others are queued. The
 * reply is 200 with one result per job, in the order given, each with the
 * status a submit of that job alone would have had. */
#include "serve/api_internal.h"

static void write_result(struct jsonout *o, int status, const struct job *job, const struct ebb_error *err)
{
	jsonout_open(o, NULL, '{');
	jsonout_int(o, "status", status);
	if (job) {
		jsonout_int(o, "id", job->id);
		jsonout_string(o, "state", job_state_name(job->state));
	} else {
		json_t *e = error_to_json(err);
		jsonout_json(o, "error", json_incref(json_object_get(e, "error")));
		json_decref(e);
	}
	jsonout_close(o, '}');
}

/* One job of the array: 201 (queued), 200 (its idempotency key was seen)
 * or its error's status; -1 when the store failed under the step. */
static int submit_one(struct api_call *c, size_t i, json_t *body, struct jsonout *o, int *counts)
{
	struct ebb_error err;
	struct job job;
	int existed, rc;

	if (batch_begin(c->api->batch) != 0)
		return -1;
	if (!json_is_object(body))
		rc = error_set(&err, 400, "bad_json", NULL, "jobs[%zu]: expected a JSON object", i);
	else
		rc = api_submit_job(c, body, &job, &existed, &err);
	batch_end(c->api->batch, rc == 0);
	if (rc != 0) {
		write_result(o, err.status, NULL, &err);
		counts[2]++;
		return 0;
	}
	write_result(o, existed ? 200 : 201, &job, NULL);
	counts[existed]++;
	job_free(&job);
	return 0;
}

int api_submit_array(struct api_call *c)
{
	size_t n = json_array_size(c->body), i;
	struct ebb_error err;
	struct jsonout o = {0};
	int counts[3] = {0}; /* created, existing, failed */
	json_t *body;

	if (n == 0 || n > API_SUBMIT_ARRAY_MAX) {
		error_set(&err, n ? 413 : 400, n ? "too_many_jobs" : "bad_value", NULL,
			  "an array of jobs holds 1 to %d job objects, not %zu", API_SUBMIT_ARRAY_MAX, n);
		return api_fail(c, &err);
	}
	jsonout_open(&o, NULL, '{');
	jsonout_open(&o, "jobs", '[');
	json_array_foreach(c->body, i, body) {
		if (submit_one(c, i, body, &o, counts) != 0) {
			free(jsonout_finish(&o));
			return api_store_failed(c);
		}
	}
	jsonout_close(&o, ']');
	jsonout_int(&o, "created", counts[0]);
	jsonout_int(&o, "existing", counts[1]);
	jsonout_int(&o, "failed", counts[2]);
	jsonout_close(&o, '}');
	request_reply_json(c->req, 200, jsonout_finish(&o));
	return 0;
}
