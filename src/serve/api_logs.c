/* The jobs' logs: a worker ships the lines of a run (POST), a client
 * reads or follows them (GET, which may wait for lines: logwait.h). Same
 * auth as the job: a team's token reads only its team's. */
#include <stdlib.h>
#include <string.h>

#include "serve/api_internal.h"
#include "serve/joblog.h"
#include "serve/jobwait.h"

/* The most lines one POST may carry, and the longest line. */
#define SHIP_LINES_MAX 20000
#define LINE_MAX_BYTES 65536
/* The longest wait=S. */
#define WAIT_MAX_S 300

const struct field api_logs_fields[] = {
	{"token", F_INT, 1, INT64_MAX},
	{"attempt", F_INT, 1, INT32_MAX},
	{"seq", F_INT, 0, INT64_MAX},
	{"lines", F_ANY, 0, 0},
	{"dropped", F_INT, 0, INT64_MAX},
	{NULL, 0, 0, 0},
};

/* Each line {"at": T, "stream": "stdout" | "stderr", "text": "..."}. */
static int check_lines(json_t *lines, struct ebb_error *err)
{
	size_t i;
	json_t *l;

	if (!json_is_array(lines) || json_array_size(lines) > SHIP_LINES_MAX)
		return error_set(err, 400, "bad_value", "lines", "lines: expected an array of up to %d lines",
				 SHIP_LINES_MAX);
	json_array_foreach(lines, i, l) {
		const char *stream = json_string_value(json_object_get(l, "stream"));
		json_t *text = json_object_get(l, "text");

		if (!json_is_number(json_object_get(l, "at")) || !stream ||
		    (strcmp(stream, "stdout") != 0 && strcmp(stream, "stderr") != 0) || !json_is_string(text) ||
		    json_string_length(text) > LINE_MAX_BYTES)
			return error_set(err, 400, "bad_value", "lines",
					 "lines[%zu]: expected {\"at\": seconds, \"stream\": \"stdout\" or \"stderr\","
					 " \"text\": a string of up to 64 KiB}",
					 i);
		if (strlen(json_string_value(text)) != json_string_length(text))
			return error_set(err, 400, "bad_value", "lines", "lines[%zu]: text has a NUL byte", i);
	}
	return 0;
}

int api_logs_ship(struct api_call *c)
{
	struct ebb_error err = {0};
	struct job job;
	int64_t token, attempt, next;
	json_t *lines = json_object_get(c->body, "lines");

	if (api_body(c, api_logs_fields) != 0)
		return -1;
	token = json_get_int(c->body, "token", 0);
	attempt = json_get_int(c->body, "attempt", 0);
	if (!token || !attempt || !json_has(c->body, "seq") || !lines) {
		error_set(&err, 400, "missing_field", !token ? "token" : !attempt ? "attempt" : !lines ? "lines" : "seq",
			  "token, attempt, seq and lines are required");
		return api_fail(c, &err);
	}
	if (check_lines(lines, &err) != 0)
		return api_fail(c, &err);
	if (queue_get(c->api->queue, c->id, NULL, &job, &err) != 0)
		return api_fail(c, &err);
	if (attempt != token || token > job.lease_token)
		error_set(&err, 409, "stale_lease", "token",
			  "attempt %lld with token %lld: job %lld has had %lld leases, and an attempt is its lease's token",
			  (long long)attempt, (long long)token, (long long)c->id, (long long)job.lease_token);
	else
		api_check_own_instance(c, job.instance, "ship the log of a job leased on instance", &err);
	job_free(&job);
	if (err.status)
		return api_fail(c, &err);
	if (joblog_append(c->api->store, c->api->cfg, clock_now(c->api->clock), c->id, (int)attempt,
			  json_get_int(c->body, "seq", 0), lines, json_get_int(c->body, "dropped", 0), &next) != 0)
		return api_store_failed(c);
	jobwait_wake(c->api->logwait, c->id);
	request_reply(c->req, 200, json_pack("{s:I}", "next", (json_int_t)next));
	return 0;
}

/* A read, as asked and as it waits. */
struct log_query {
	int64_t job, after;
	int attempt; /* 0: the latest */
	int tail;
	int has_team;
	char team[CONF_NAME_MAX + 1];
};

/* Has the attempt ended? A later lease, or the job is leased no more. */
static int attempt_done(const struct job *job, int attempt)
{
	if (attempt < job->lease_token)
		return 1;
	return job->state != JOB_LEASED && (job->lease_token > 0 || job_state_terminal(job->state));
}

int api_logs_try(void *ctx, struct request *req, const void *query, int last)
{
	struct api *api = ctx;
	const struct log_query *q = query;
	struct jsonout o = {0};
	struct ebb_error err;
	struct job job;
	int attempt, done;
	int n;

	if (queue_get(api->queue, q->job, q->has_team ? q->team : NULL, &job, &err) != 0) {
		request_reply(req, err.status, error_to_json(&err));
		return 1;
	}
	attempt = q->attempt ? q->attempt : (int)job.lease_token;
	done = attempt_done(&job, attempt);
	job_free(&job);
	jsonout_open(&o, NULL, '{');
	jsonout_int(&o, "job", q->job);
	jsonout_int(&o, "attempt", attempt);
	if ((n = joblog_read(api->store, &o, q->job, attempt, q->after, q->tail)) < 0) {
		free(o.text);
		store_failure(api->store, &err);
		request_reply(req, err.status, error_to_json(&err));
		return 1;
	}
	/* Nothing past after and the attempt goes on: wait, unless it is time. */
	if (n == 0 && !done && !last) {
		free(o.text);
		return 0;
	}
	jsonout_text(&o, "done", done ? "true" : "false");
	jsonout_close(&o, '}');
	request_reply_json(req, 200, jsonout_finish(&o));
	return 1;
}

int api_logs_read(struct api_call *c)
{
	struct log_query q = {.job = c->id};
	struct ebb_error err;
	struct job job;
	int64_t attempt, tail, wait_s;

	if (api_query_int(c, "attempt", 1, INT32_MAX, 0, &attempt) != 0 ||
	    api_query_int(c, "after", -1, INT64_MAX, -1, &q.after) != 0 ||
	    api_query_int(c, "tail", 0, JOBLOG_READ_MAX, 0, &tail) != 0 ||
	    api_query_int(c, "wait", 0, WAIT_MAX_S, 0, &wait_s) != 0)
		return -1;
	if (api_job_read(c, &job) != 0)
		return -1;
	if (attempt > job.lease_token) {
		error_set(&err, 404, "not_found", "attempt", "job %lld has had %lld attempts, not %lld", (long long)c->id,
			  (long long)job.lease_token, (long long)attempt);
		job_free(&job);
		return api_fail(c, &err);
	}
	/* A wait follows the attempt it began on, even when another begins. */
	q.attempt = (int)(attempt ? attempt : job.lease_token);
	job_free(&job);
	q.tail = (int)tail;
	if (c->team) {
		q.has_team = 1;
		snprintf(q.team, sizeof q.team, "%s", c->team);
	}
	if (api_logs_try(c->api, c->req, &q, wait_s == 0))
		return 0;
	if (jobwait_park(c->api->logwait, c->req, c->id, &q, sizeof q, wait_s * 1000) != 0) {
		error_set(&err, 500, "out_of_memory", NULL, ERROR_OUT_OF_MEMORY);
		return api_fail(c, &err);
	}
	return 0;
}
