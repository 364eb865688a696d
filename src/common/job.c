/* Job states and the job's JSON form (see job.h). */
#include "common/job.h"

#include <stdlib.h>
#include <string.h>

#include "common/mem.h"

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

int64_t job_run_ms(const struct job *job)
{
	int counted = job->state == JOB_SUCCEEDED || job->state == JOB_FAILED || job->state == JOB_DEAD;

	return counted && job->started_ms > 0 ? job->finished_ms - job->started_ms : 0;
}

void job_set_str(char **dst, const char *src)
{
	free(*dst);
	*dst = src ? mem_strdup(src) : NULL;
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

char *job_stored_json(json_t *v)
{
	return v && !json_is_null(v) ? json_dumps(v, JSON_REPLY_FLAGS | JSON_ENCODE_ANY) : NULL;
}

/* The command, payload, labels and result go out as the text they are
 * stored in (job_stored_json), without parsing them again. */
void job_write_json(struct jsonout *o, const char *key, const struct job *j)
{
	job_write_json_held(o, key, j, NULL);
}

void job_write_json_held(struct jsonout *o, const char *key, const struct job *j, const char *held)
{
	jsonout_open(o, key, '{');
	jsonout_int(o, "id", j->id);
	jsonout_string(o, "state", state_names[j->state]);
	jsonout_string(o, "type", j->type);
	jsonout_string(o, "lane", j->lane);
	jsonout_int(o, "priority", j->priority);
	jsonout_string(o, "team", j->team);
	if (j->command)
		jsonout_text(o, "command", j->command);
	if (j->payload)
		jsonout_text(o, "payload", j->payload);
	if (j->labels)
		jsonout_text(o, "labels", j->labels);
	jsonout_int(o, "gpus", j->gpus);
	jsonout_int(o, "min_vram_gb", j->min_vram_gb);
	jsonout_int(o, "items", j->items);
	jsonout_int(o, "items_done", j->items_done);
	jsonout_int(o, "timeout_s", j->timeout_s);
	if (j->est_s)
		jsonout_int(o, "est_s", j->est_s);
	jsonout_int(o, "max_attempts", j->max_attempts);
	jsonout_int(o, "attempts", j->attempts);
	jsonout_seconds(o, "created_at", j->created_ms);
	jsonout_seconds(o, "updated_at", j->updated_ms);
	jsonout_seconds(o, "run_at", j->run_at_ms);
	jsonout_seconds(o, "started_at", j->started_ms);
	jsonout_seconds(o, "finished_at", j->finished_ms);
	if (j->idem_key)
		jsonout_string(o, "idempotency_key", j->idem_key);
	if (j->state == JOB_LEASED) {
		jsonout_open(o, "lease", '{');
		jsonout_int(o, "token", j->lease_token);
		jsonout_string(o, "worker", j->worker);
		if (j->instance)
			jsonout_int(o, "instance", j->instance);
		else
			jsonout_null(o, "instance");
		jsonout_seconds(o, "expires_at", j->lease_expires_ms);
		jsonout_close(o, '}');
	}
	if (j->checkpoint)
		jsonout_string(o, "checkpoint", j->checkpoint);
	jsonout_real(o, "cost_usd", j->cost);
	if (j->items_done > 0)
		jsonout_real(o, "cost_per_item_usd", j->cost / (double)j->items_done);
	else
		jsonout_null(o, "cost_per_item_usd");
	jsonout_int(o, "interruptions", j->interruptions);
	jsonout_int(o, "items_lost", j->items_lost);
	if (j->error)
		jsonout_string(o, "error", j->error);
	if (j->result)
		jsonout_text(o, "result", j->result);
	if (held)
		jsonout_string(o, "held", held);
	jsonout_close(o, '}');
}

char *job_json_text(const struct job *j)
{
	struct jsonout o = {0};

	job_write_json(&o, NULL, j);
	return jsonout_finish(&o);
}
