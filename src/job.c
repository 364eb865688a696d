/* Job states and the job's JSON form (see job.h). */
#include "job.h"

#include <stdlib.h>
#include <string.h>

#include "jsonin.h"

static const char *const state_names[JOB_NSTATES] = {
	"queued", "delayed", "leased", "succeeded", "failed", "dead", "cancelled",
};

const char *job_state_name(enum job_state s) { return state_names[s]; }

int job_state_parse(const char *name)
{
	for (int i = 0; i < JOB_NSTATES; i++) {
		if (strcmp(name, state_names[i]) == 0)
			return i;
	}
	return -1;
}

int job_state_terminal(enum job_state s)
{
	return s == JOB_SUCCEEDED || s == JOB_FAILED || s == JOB_DEAD || s == JOB_CANCELLED;
}

void job_set_str(char **dst, const char *src)
{
	free(*dst);
	*dst = src ? strdup(src) : NULL;
}

void job_free(struct job *job)
{
	free(job->command);
	free(job->payload);
	free(job->labels);
	free(job->idem_key);
	free(job->checkpoint);
	free(job->error);
	free(job->result);
	memset(job, 0, sizeof *job);
}

/* Stored JSON text back into a value; the store only ever holds what
 * jansson itself wrote, so a failure here means a damaged row. */
static json_t *stored_json(const char *text)
{
	json_t *v;

	if (!text)
		return json_null();
	v = json_loads(text, JSON_DECODE_ANY, NULL);
	return v ? v : json_string(text);
}

json_t *job_to_json(const struct job *j)
{
	json_t *o = json_object();

	json_object_set_new(o, "id", json_integer(j->id));
	json_object_set_new(o, "state", json_string(state_names[j->state]));
	json_object_set_new(o, "type", json_string(j->type));
	json_object_set_new(o, "lane", json_string(j->lane));
	json_object_set_new(o, "priority", json_integer(j->priority));
	json_object_set_new(o, "team", json_string(j->team));
	if (j->command)
		json_object_set_new(o, "command", stored_json(j->command));
	if (j->payload)
		json_object_set_new(o, "payload", stored_json(j->payload));
	if (j->labels)
		json_object_set_new(o, "labels", stored_json(j->labels));
	json_object_set_new(o, "gpus", json_integer(j->gpus));
	json_object_set_new(o, "min_vram_gb", json_integer(j->min_vram_gb));
	json_object_set_new(o, "items", json_integer(j->items));
	json_object_set_new(o, "items_done", json_integer(j->items_done));
	json_object_set_new(o, "timeout_s", json_integer(j->timeout_s));
	if (j->est_s)
		json_object_set_new(o, "est_s", json_integer(j->est_s));
	json_object_set_new(o, "max_attempts", json_integer(j->max_attempts));
	json_object_set_new(o, "attempts", json_integer(j->attempts));
	json_object_set_new(o, "created_at", json_seconds(j->created_ms));
	json_object_set_new(o, "updated_at", json_seconds(j->updated_ms));
	json_object_set_new(o, "run_at", json_seconds(j->run_at_ms));
	json_object_set_new(o, "started_at", json_seconds(j->started_ms));
	json_object_set_new(o, "finished_at", json_seconds(j->finished_ms));
	if (j->idem_key)
		json_object_set_new(o, "idempotency_key", json_string(j->idem_key));
	if (j->state == JOB_LEASED) {
		json_object_set_new(o, "lease", json_pack("{s:I, s:s, s:o}", "token", (json_int_t)j->lease_token,
							  "worker", j->worker, "expires_at",
							  json_seconds(j->lease_expires_ms)));
	}
	if (j->checkpoint)
		json_object_set_new(o, "checkpoint", json_string(j->checkpoint));
	json_object_set_new(o, "cost_usd", json_real(j->cost));
	json_object_set_new(o, "cost_per_item_usd",
			    j->items_done > 0 ? json_real(j->cost / (double)j->items_done) : json_null());
	json_object_set_new(o, "interruptions", json_integer(j->interruptions));
	json_object_set_new(o, "items_lost", json_integer(j->items_lost));
	if (j->error)
		json_object_set_new(o, "error", json_string(j->error));
	if (j->result)
		json_object_set_new(o, "result", stored_json(j->result));
	return o;
}
