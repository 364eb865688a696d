/* The calls that shorten the job cycle, against a real serve: a batch of
 * jobs in one POST /v1/jobs, a complete or a fail that brings the
 * worker's next job back (fenced like any report: a stale one leases
 * nothing), a lease of several jobs (max_jobs), the old shapes for the
 * clients that ask for none of it, `ebb submit --jobs`, and `ebb worker`
 * taking its next job with its report. */
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* POST body to path, which must answer want: the reply. */
/* The payload jobs these tests submit are for the test itself, the
 * worker here: their type needs a handler all the same, or serve refuses
 * them (nothing would know what to run). */
#define PAYLOADS "[type.default]\nhandler = the-test\n"

static json_t *post(struct harness_server *s, const char *path, const char *body, int want)
{
	return harness_call_ok(s, "POST", path, body, want);
}

static const char *job_path(int64_t id, const char *what)
{
	return harness_fmt("/v1/jobs/%lld/%s", (long long)id, what);
}

/* A lease for worker w now: the reply's job, which must be there. */
static void lease_one(struct harness_server *s, int64_t *id, int64_t *token)
{
	json_t *r = post(s, "/v1/lease", "{\"worker\": \"w\", \"lease_s\": 60}", 200);

	*id = JINT(r, "job.id");
	*token = JINT(r, "job.lease.token");
	json_decref(r);
}

static void assert_state(struct harness_server *s, int64_t id, const char *want)
{
	json_t *j = harness_get_job(s, id);

	assert_string_equal(JSTR(j, "state"), want);
	json_decref(j);
}

/* ---- POST /v1/jobs with an array ---- */

static void batch_submit_mixed(void **state)
{
	struct harness_server *s = harness_serve(PAYLOADS, 0);
	json_t *r, *jobs;

	(void)state;
	r = post(s, "/v1/jobs",
		 "[{\"command\": [\"true\"]},"
		 " {\"command\": []},"
		 " {\"payload\": 1, \"idempotency_key\": \"k\"},"
		 " {\"payload\": 1, \"idempotency_key\": \"k\"},"
		 " {\"payload\": 2, \"idempotency_key\": \"k\"},"
		 " 7,"
		 " {\"command\": [\"true\"], \"colour\": \"red\"},"
		 " {\"command\": [\"true\"], \"lane\": \"batch\", \"priority\": 5}]",
		 200);
	jobs = harness_jget(r, "jobs");
	assert_int(json_array_size(jobs), 8);
	assert_int(JINT(json_array_get(jobs, 0), "status"), 201);
	assert_string_equal(JSTR(json_array_get(jobs, 0), "state"), "queued");
	assert_int(JINT(json_array_get(jobs, 1), "status"), 400);
	assert_string_equal(JSTR(json_array_get(jobs, 1), "error.field"), "command");
	/* The key is honoured within the batch: the same body is the same job,
	 * another body a conflict. */
	assert_int(JINT(json_array_get(jobs, 2), "status"), 201);
	assert_int(JINT(json_array_get(jobs, 3), "status"), 200);
	assert_int(JINT(json_array_get(jobs, 3), "id"), JINT(json_array_get(jobs, 2), "id"));
	assert_int(JINT(json_array_get(jobs, 4), "status"), 409);
	assert_string_equal(JSTR(json_array_get(jobs, 4), "error.code"), "idempotency_conflict");
	assert_int(JINT(json_array_get(jobs, 5), "status"), 400);
	assert_contains(JSTR(json_array_get(jobs, 5), "error.message"), "jobs[5]: expected a JSON object");
	assert_int(JINT(json_array_get(jobs, 6), "status"), 400);
	assert_string_equal(JSTR(json_array_get(jobs, 6), "error.field"), "colour");
	assert_int(JINT(json_array_get(jobs, 7), "status"), 201);
	assert_int(JINT(r, "created"), 3);
	assert_int(JINT(r, "existing"), 1);
	assert_int(JINT(r, "failed"), 4);
	/* The bad ones left nothing behind; the good ones are what was asked. */
	assert_int(harness_stat(s, "states.queued"), 3);
	assert_int(JINT(json_array_get(jobs, 7), "id"), 3);
	json_decref(r);
	r = harness_get_job(s, 3);
	assert_string_equal(JSTR(r, "lane"), "batch");
	assert_int(JINT(r, "priority"), 5);
	json_decref(r);
	/* The same key in a later batch, or alone, finds the same job. */
	r = post(s, "/v1/jobs", "{\"payload\": 1, \"idempotency_key\": \"k\"}", 200);
	assert_int(JINT(r, "id"), 2);
	json_decref(r);
	assert_int(harness_server_stop(s), 0);
	harness_server_free(s);
}

static void batch_submit_limits(void **state)
{
	struct harness_server *s = harness_serve(PAYLOADS, 0);
	char *big = malloc(1001 * 20 + 3), *p = big;
	json_t *r = NULL;
	int st;

	(void)state;
	st = harness_call(s, "POST", "/v1/jobs", "[]", &r);
	assert_error(st, r, 400, "bad_value", NULL);
	json_decref(r);
	*p++ = '[';
	for (int i = 0; i < 1001; i++)
		p += sprintf(p, "%s{\"payload\": %d}", i ? "," : "", i);
	strcpy(p, "]");
	st = harness_call(s, "POST", "/v1/jobs", big, &r);
	assert_error(st, r, 413, "too_many_jobs", NULL);
	assert_contains(JSTR(r, "error.message"), "1 to 1000 job objects, not 1001");
	json_decref(r);
	free(big);
	assert_int(harness_stat(s, "states.queued"), 0);
	/* Only the submit takes an array. */
	st = harness_call(s, "POST", "/v1/lease", "[{\"worker\": \"w\"}]", &r);
	assert_error(st, r, 400, "bad_json", NULL);
	json_decref(r);
	assert_int(harness_server_stop(s), 0);
	harness_server_free(s);
}

/* A submit token submits for its own team, job by job. */
static void batch_submit_per_job_team(void **state)
{
	struct harness_server *s = harness_serve(PAYLOADS "[team.a]\n[team.b]\n"
						 "[token.asub]\nsecret = team-a-secret-0123456789\nteam = a\n",
						 HARNESS_TOKENS);
	json_t *r = NULL;
	int st;

	(void)state;
	st = harness_call_as(s, "team-a-secret-0123456789", "POST", "/v1/jobs",
			     "[{\"payload\": 1}, {\"payload\": 2, \"team\": \"b\"}, {\"payload\": 3, \"team\": \"a\"}]", &r);
	assert_int(st, 200);
	assert_int(JINT(r, "jobs.0.status"), 201);
	assert_int(JINT(r, "jobs.1.status"), 403);
	assert_string_equal(JSTR(r, "jobs.1.error.field"), "team");
	assert_int(JINT(r, "jobs.2.status"), 201);
	json_decref(r);
	r = harness_get(s, "/v1/jobs?team=a");
	assert_int(json_array_size(harness_jget(r, "jobs")), 2);
	json_decref(r);
	assert_int(harness_stat(s, "states.queued"), 2);
	assert_int(harness_server_stop(s), 0);
	harness_server_free(s);
}

/* ---- complete and fail with "next" ---- */

static void complete_with_next(void **state)
{
	struct harness_server *s = harness_serve(PAYLOADS, 0);
	int64_t a, b, id, token;
	json_t *r;

	(void)state;
	a = harness_submit(s, "{\"payload\": \"a\"}");
	b = harness_submit(s, "{\"payload\": \"b\", \"gpus\": 2}");
	lease_one(s, &id, &token);
	assert_int(id, a);
	/* One GPU offered: b does not fit, and the next is none. */
	r = post(s, job_path(a, "complete"),
		 harness_fmt("{\"lease_token\": %lld, \"next\": {\"worker\": \"w\", \"gpus\": 1}}", (long long)token),
		 200);
	assert_int(JINT(r, "id"), a);
	assert_string_equal(JSTR(r, "state"), "succeeded");
	assert_true(json_is_null(harness_jget(r, "next.job")));
	json_decref(r);
	assert_state(s, b, "queued");
	/* Two do, and the next lease is fenced like any: a token of its own. */
	a = harness_submit(s, "{\"payload\": \"c\", \"priority\": -5}");
	r = post(s, "/v1/lease", "{\"worker\": \"w\", \"gpus\": 2}", 200);
	assert_int(JINT(r, "job.id"), b);
	token = JINT(r, "job.lease.token");
	json_decref(r);
	id = harness_submit(s, "{\"payload\": \"d\", \"priority\": 5}");
	r = post(s, job_path(b, "complete"),
		 harness_fmt("{\"lease_token\": %lld, \"result\": {\"ok\": 1}, "
			     "\"next\": {\"worker\": \"w2\", \"gpus\": 2, \"lease_s\": 90}}",
			     (long long)token),
		 200);
	assert_string_equal(JSTR(r, "state"), "succeeded");
	assert_int(JINT(r, "result.ok"), 1);
	/* The higher priority first, as a lease would have it. */
	assert_int(JINT(r, "next.job.id"), id);
	assert_string_equal(JSTR(r, "next.job.state"), "leased");
	assert_string_equal(JSTR(r, "next.job.lease.worker"), "w2");
	token = JINT(r, "next.job.lease.token");
	json_decref(r);
	assert_state(s, id, "leased");
	assert_state(s, a, "queued");
	r = post(s, job_path(id, "complete"), harness_fmt("{\"lease_token\": %lld}", (long long)token), 200);
	assert_string_equal(JSTR(r, "state"), "succeeded");
	json_decref(r);
	assert_int(harness_server_stop(s), 0);
	harness_server_free(s);
}

/* A stale token's complete is refused and leases nothing; a bad "next"
 * is refused before the complete is done. */
static void stale_complete_leases_nothing(void **state)
{
	struct harness_server *s = harness_serve(PAYLOADS, HARNESS_TEST_CLOCK);
	int64_t a, b, id, token, token2;
	json_t *r = NULL;
	int st;

	(void)state;
	a = harness_submit(s, "{\"payload\": \"a\"}");
	r = post(s, "/v1/lease", "{\"worker\": \"w\", \"lease_s\": 10}", 200);
	token = JINT(r, "job.lease.token");
	json_decref(r);
	harness_advance(s, 11000); /* the lease expires; a is queued again */
	lease_one(s, &id, &token2);
	assert_int(id, a);
	assert_true(token2 != token);
	b = harness_submit(s, "{\"payload\": \"b\"}");
	st = harness_call(s, "POST", job_path(a, "complete"),
			  harness_fmt("{\"lease_token\": %lld, \"next\": {\"worker\": \"w\"}}", (long long)token), &r);
	assert_error(st, r, 409, "stale_lease", "lease_token");
	json_decref(r);
	assert_state(s, b, "queued");
	st = harness_call(s, "POST", job_path(a, "fail"),
			  harness_fmt("{\"lease_token\": %lld, \"next\": {\"worker\": \"w\"}}", (long long)token), &r);
	assert_error(st, r, 409, "stale_lease", "lease_token");
	json_decref(r);
	assert_state(s, b, "queued");
	/* A next without its worker: nothing done, the job still leased. */
	st = harness_call(s, "POST", job_path(a, "complete"),
			  harness_fmt("{\"lease_token\": %lld, \"next\": {\"gpus\": 1}}", (long long)token2), &r);
	assert_error(st, r, 400, "missing_field", "worker");
	json_decref(r);
	st = harness_call(s, "POST", job_path(a, "complete"),
			  harness_fmt("{\"lease_token\": %lld, \"next\": [1]}", (long long)token2), &r);
	assert_error(st, r, 400, "bad_value", "next");
	json_decref(r);
	assert_state(s, a, "leased");
	assert_state(s, b, "queued");
	/* The current token does both. */
	r = post(s, job_path(a, "complete"),
		 harness_fmt("{\"lease_token\": %lld, \"next\": {\"worker\": \"w\"}}", (long long)token2), 200);
	assert_int(JINT(r, "next.job.id"), b);
	json_decref(r);
	assert_state(s, a, "succeeded");
	assert_state(s, b, "leased");
	assert_int(harness_server_stop(s), 0);
	harness_server_free(s);
}

/* A fail with next: the job goes back to wait out its retry (not handed
 * straight back), and the reply's next is a batch when max_jobs asks. */
static void fail_with_next_jobs(void **state)
{
	struct harness_server *s = harness_serve(PAYLOADS, 0);
	int64_t a, id, token;
	json_t *r;

	(void)state;
	a = harness_submit(s, "{\"payload\": \"a\"}");
	lease_one(s, &id, &token);
	harness_submit(s, "{\"payload\": \"b\"}");
	harness_submit(s, "{\"payload\": \"c\"}");
	r = post(s, job_path(a, "fail"),
		 harness_fmt("{\"lease_token\": %lld, \"error\": \"boom\", "
			     "\"next\": {\"worker\": \"w\", \"max_jobs\": 5}}",
			     (long long)token),
		 200);
	assert_int(JINT(r, "id"), a);
	assert_string_equal(JSTR(r, "error"), "boom");
	assert_string_equal(JSTR(r, "state"), "delayed");
	assert_int(json_array_size(harness_jget(r, "next.jobs")), 2);
	assert_null(harness_jget(r, "next.job"));
	assert_string_equal(JSTR(r, "next.jobs.0.state"), "leased");
	json_decref(r);
	assert_int(harness_stat(s, "states.leased"), 2);
	assert_int(harness_server_stop(s), 0);
	harness_server_free(s);
}

/* ---- max_jobs ---- */

static void lease_max_jobs(void **state)
{
	struct harness_server *s = harness_serve(PAYLOADS, 0);
	struct harness_async a;
	json_t *r = NULL, *jobs;
	int st;

	(void)state;
	json_decref(post(s, "/v1/jobs", "[{\"payload\": 1}, {\"payload\": 2}, {\"payload\": 3}]", 200));
	r = post(s, "/v1/lease", "{\"worker\": \"w\", \"max_jobs\": 2}", 200);
	jobs = harness_jget(r, "jobs");
	assert_int(json_array_size(jobs), 2);
	assert_int(JINT(json_array_get(jobs, 0), "id"), 1);
	assert_int(JINT(json_array_get(jobs, 1), "id"), 2);
	assert_string_equal(JSTR(json_array_get(jobs, 1), "lease.worker"), "w");
	assert_null(harness_jget(r, "job"));
	json_decref(r);
	r = post(s, "/v1/lease", "{\"worker\": \"w\", \"max_jobs\": 100}", 200);
	assert_int(json_array_size(harness_jget(r, "jobs")), 1);
	json_decref(r);
	r = post(s, "/v1/lease", "{\"worker\": \"w\", \"max_jobs\": 3}", 200);
	assert_true(json_is_array(harness_jget(r, "jobs")));
	assert_int(json_array_size(harness_jget(r, "jobs")), 0);
	json_decref(r);
	/* Each job its own lease, each reported on its own. */
	for (int64_t id = 1; id <= 3; id++) {
		json_t *j = harness_get_job(s, id);
		r = post(s, job_path(id, "complete"), harness_fmt("{\"lease_token\": %lld}", (long long)JINT(j, "lease.token")),
			 200);
		json_decref(j);
		json_decref(r);
	}
	assert_int(harness_stat(s, "states.succeeded"), 3);
	/* A parked request takes up to its max from one batch of submits. */
	harness_async_start(&a, s, "POST", "/v1/lease", "{\"worker\": \"w\", \"wait_s\": 10, \"max_jobs\": 2}");
	harness_wait_waiting(s, 1);
	json_decref(post(s, "/v1/jobs", "[{\"payload\": 4}, {\"payload\": 5}, {\"payload\": 6}]", 200));
	assert_int(harness_async_join(&a, &r), 200);
	assert_int(json_array_size(harness_jget(r, "jobs")), 2);
	json_decref(r);
	assert_int(harness_stat(s, "states.queued"), 1);
	/* The bounds, and an instance's one job at a time. */
	st = harness_call(s, "POST", "/v1/lease", "{\"worker\": \"w\", \"max_jobs\": 0}", &r);
	assert_error(st, r, 400, "out_of_range", "max_jobs");
	json_decref(r);
	st = harness_call(s, "POST", "/v1/lease", "{\"worker\": \"w\", \"max_jobs\": 101}", &r);
	assert_error(st, r, 400, "out_of_range", "max_jobs");
	json_decref(r);
	st = harness_call(s, "POST", "/v1/lease", "{\"worker\": \"w\", \"instance\": 4, \"max_jobs\": 2}", &r);
	assert_error(st, r, 400, "bad_value", "max_jobs");
	json_decref(r);
	assert_int(harness_stat(s, "states.queued"), 1);
	assert_int(harness_server_stop(s), 0);
	harness_server_free(s);
}

/* The clients that know none of it get what they always did. */
static void old_shapes_unchanged(void **state)
{
	struct harness_server *s = harness_serve(PAYLOADS, 0);
	int64_t id, token;
	json_t *r;

	(void)state;
	r = post(s, "/v1/jobs", "{\"payload\": 1}", 201);
	assert_int(JINT(r, "id"), 1);
	assert_string_equal(JSTR(r, "state"), "queued");
	assert_null(harness_jget(r, "jobs"));
	json_decref(r);
	harness_submit(s, "{\"payload\": 2}");
	r = post(s, "/v1/lease", "{\"worker\": \"w\"}", 200);
	assert_int(json_object_size(r), 1);
	assert_int(JINT(r, "job.id"), 1);
	token = JINT(r, "job.lease.token");
	json_decref(r);
	r = post(s, job_path(1, "complete"), harness_fmt("{\"lease_token\": %lld}", (long long)token), 200);
	assert_string_equal(JSTR(r, "state"), "succeeded");
	assert_null(harness_jget(r, "next"));
	json_decref(r);
	assert_state(s, 2, "queued"); /* no next asked: none leased */
	lease_one(s, &id, &token);
	r = post(s, job_path(id, "fail"), harness_fmt("{\"lease_token\": %lld, \"retry\": false}", (long long)token), 200);
	assert_string_equal(JSTR(r, "state"), "failed");
	assert_null(harness_jget(r, "next"));
	json_decref(r);
	assert_int(harness_server_stop(s), 0);
	harness_server_free(s);
}

/* ---- the CLI and the worker ---- */

static void cli_submit_jobs(void **state)
{
	struct harness_server *s = harness_serve(PAYLOADS, 0);
	struct harness_run r;
	const char *argv[] = {harness_ebb_bin(), "submit", "--jobs", "-", "--lane", "batch", "--", "echo", "hi", NULL};
	const char *env[] = {harness_fmt("EBB_SERVER=%s", s->url), NULL};
	json_t *j;

	(void)state;
	/* A line that is not JSON: nothing is sent. */
	harness_exec(&r, argv, "{\"payload\": 1}\n{oops\n", env);
	assert_int(r.status, 2);
	assert_contains(r.err, "-:2: expected a job (a JSON object) a line");
	harness_run_free(&r);
	assert_int(harness_stat(s, "states.queued"), 0);
	/* A job the server refuses is named by its line; the others go in. */
	harness_exec(&r, argv, "{\"payload\": 1}\n\n{\"gpus\": 99}\n{\"lane\": \"standard\", \"command\": [\"true\"]}\n",
		     env);
	assert_int(r.status, 1);
	assert_string_equal(r.out, "1\n2\n");
	assert_contains(r.err, "ebb submit: -:3: gpus: expected");
	harness_run_free(&r);
	/* The flags and the command are each line's defaults. */
	j = harness_get_job(s, 1);
	assert_string_equal(JSTR(j, "lane"), "batch");
	assert_string_equal(JSTR(j, "command.0"), "echo");
	assert_int(JINT(j, "payload"), 1);
	json_decref(j);
	j = harness_get_job(s, 2);
	assert_string_equal(JSTR(j, "lane"), "standard");
	assert_string_equal(JSTR(j, "command.0"), "true");
	json_decref(j);
	assert_int(harness_server_stop(s), 0);
	harness_server_free(s);
}

/* The 200 replies serve has sent so far (a scrape counts in the next). */
static int64_t replies_200(struct harness_server *s)
{
	char *body = NULL, *p;
	int64_t n;

	assert_int(harness_get_text(s, NULL, "/metrics", &body, NULL, 0), 200);
	p = strstr(body, "ebb_http_requests_total{code=\"200\"} ");
	n = p ? strtoll(p + strlen("ebb_http_requests_total{code=\"200\"} "), NULL, 10) : 0;
	free(body);
	return n;
}

/* `ebb worker` takes each next job with the report of the last: five jobs
 * cost one lease call and five reports, not ten calls. */
static void worker_takes_next_with_report(void **state)
{
	struct harness_server *s = harness_serve(PAYLOADS, 0);
	struct harness_run r;
	int64_t before, after;
	json_t *reply;

	(void)state;
	reply = post(s, "/v1/jobs",
		     "[{\"command\": [\"true\"]}, {\"command\": [\"true\"]}, {\"command\": [\"false\"], \"max_attempts\": 1},"
		     " {\"command\": [\"true\"]}, {\"command\": [\"true\"]}]",
		     200);
	json_decref(reply);
	before = replies_200(s);
	harness_ebb(&r, s, "worker", "--name", "w1", "--idle-timeout", "1s", NULL);
	assert_int(r.status, 0);
	harness_run_free(&r);
	after = replies_200(s);
	assert_int(harness_stat(s, "states.succeeded"), 4);
	assert_int(harness_stat(s, "states.dead"), 1);
	/* The scrape before, one lease, five reports, the idle long-poll(s)
	 * (one a second at most: up to three on a loaded machine, where the
	 * worker's idle second can span three). Without next: five more
	 * leases, twelve at least. */
	assert_between(after - before, 1 + 1 + 5 + 1, 1 + 1 + 5 + 3);
	assert_int(harness_server_stop(s), 0);
	harness_server_free(s);
}

#define T(fn) cmocka_unit_test_teardown(fn, harness_cleanup)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(batch_submit_mixed),
		T(batch_submit_limits),
		T(batch_submit_per_job_team),
		T(complete_with_next),
		T(stale_complete_leases_nothing),
		T(fail_with_next_jobs),
		T(lease_max_jobs),
		T(old_shapes_unchanged),
		T(cli_submit_jobs),
		T(worker_takes_next_with_report),
	};

	return cmocka_run_group_tests(tests, NULL, harness_cleanup);
}
