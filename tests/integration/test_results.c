/* A job's result end to end: real serve, a real `ebb worker` and the
 * CLI. A job writes `result JSON` on its control fd: GET /v1/jobs/ID,
 * `ebb job` and `ebb submit --wait` show it; one over [queue] result_max
 * or not JSON fails the attempt with the reason, and serve refuses an
 * over-size result on complete. GET /v1/jobs/ID?wait= answers at the
 * job's end, long before its wait, or with the job as it is when the wait
 * ends, and refuses a bad wait. */
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static pid_t worker(struct harness_server *s)
{
	return harness_hand_worker(s, harness_fmt("%s/worker.log", s->dir), NULL, NULL);
}

/* The job's state once it has ended (polled, with a generous bound). */
static json_t *ended(struct harness_server *s, int64_t id)
{
	WAIT_FOR(s, 60000,
		 harness_job_is(s, id, "succeeded") || harness_job_is(s, id, "failed") || harness_job_is(s, id, "dead"),
		 "job %lld did not end", (long long)id);
	return harness_get_job(s, id);
}

static void result_returned(void **state)
{
	struct harness_server *s = harness_serve(NULL, 0);
	struct harness_run run;
	json_t *job;
	int64_t id;
	pid_t w = worker(s);

	(void)state;
	/* The last result written counts. */
	harness_ebb(&run, s, "submit", "--wait", "--", "sh", "-c",
		    "echo 'result \"first\"' >&$EBB_CONTROL_FD; echo 'result {\"n\": 3}' >&$EBB_CONTROL_FD", NULL);
	if (run.status != 0)
		harness_fail_with_log(s, "submit --wait exited %d: %s %s", run.status, run.out, run.err);
	id = strtoll(run.out, NULL, 10);
	assert_true(id > 0);
	assert_string_equal(strchr(run.out, '\n') + 1, "{\"n\":3}\n");
	harness_run_free(&run);

	job = harness_get_job(s, id);
	assert_string_equal(JSTR(job, "state"), "succeeded");
	assert_int(JINT(job, "result.n"), 3);
	json_decref(job);

	harness_ebb(&run, s, "job", harness_fmt("%lld", (long long)id), NULL);
	assert_int(run.status, 0);
	assert_contains(run.out, "result:          {\"n\":3}\n");
	harness_run_free(&run);

	/* A job with no result: --wait prints its id alone. */
	harness_ebb(&run, s, "submit", "--wait", "--", "true", NULL);
	assert_int(run.status, 0);
	assert_string_equal(strchr(run.out, '\n') + 1, "");
	harness_run_free(&run);
	assert_int(WEXITSTATUS(harness_stop_hand_worker(s, w, 10000)), 0);
}

/* A job whose result is a JSON string of n letters (n + 2 bytes), with
 * one attempt. */
static int64_t submit_letters(struct harness_server *s, int n)
{
	return harness_submit(s, harness_fmt("{\"command\": [\"sh\", \"-c\", \"s=$(head -c %d /dev/zero | tr '\\\\0' a); "
					     "echo \\\"result \\\\\\\"$s\\\\\\\"\\\" >&$EBB_CONTROL_FD\"], "
					     "\"max_attempts\": 1}",
					     n));
}

static void bad_results_fail_the_attempt(void **state)
{
	struct harness_server *s = harness_serve(NULL, 0);
	struct harness_run run;
	json_t *job;
	int64_t big, bad;
	pid_t w = worker(s);

	(void)state;
	/* 70,000 bytes with its quotes. */
	big = submit_letters(s, 69998);
	bad = harness_submit(s, "{\"command\": [\"sh\", \"-c\", \"echo 'result {oops' >&$EBB_CONTROL_FD\"]}");
	job = ended(s, big);
	assert_string_equal(JSTR(job, "state"), "failed");
	assert_string_equal(JSTR(job, "error"), "result is 70000 bytes, over [queue] result_max (65536)");
	assert_null(harness_jget(job, "result"));
	json_decref(job);
	/* Not retried: the same run would write the same result. */
	job = ended(s, bad);
	assert_string_equal(JSTR(job, "state"), "failed");
	assert_int(JINT(job, "attempts"), 1);
	assert_contains(JSTR(job, "error"), "result is not JSON: ");
	json_decref(job);

	/* Longer than any result_max, a line the worker does not keep, and
	 * one with a NUL byte: neither is dropped unsaid. */
	big = submit_letters(s, 1100000);
	bad = harness_submit(s, "{\"command\": [\"sh\", \"-c\", \"printf 'result \\\"a\\\\0b\\\"\\\\n' >&$EBB_CONTROL_FD\"]}");
	job = ended(s, big);
	assert_string_equal(JSTR(job, "error"), "result is 1100002 bytes, over [queue] result_max (65536)");
	json_decref(job);
	job = ended(s, bad);
	assert_string_equal(JSTR(job, "error"), "result is not JSON: it holds a NUL byte");
	json_decref(job);

	/* --wait says why, and exits 1. */
	harness_ebb(&run, s, "submit", "--wait", "--", "sh", "-c", "echo 'result [1,' >&$EBB_CONTROL_FD", NULL);
	assert_int(run.status, 1);
	assert_contains(run.err, "failed: result is not JSON: ");
	harness_run_free(&run);
	assert_int(WEXITSTATUS(harness_stop_hand_worker(s, w, 10000)), 0);
}

/* The API is public: serve refuses an over-size result itself, naming
 * the limit, and the lease stays as it was. */
static void complete_over_result_max_refused(void **state)
{
	struct harness_server *s = harness_serve("[queue]\nresult_max = 1KiB\n", 0);
	json_t *r = NULL, *lease;
	char *body = malloc(2000);
	int64_t id, token;

	(void)state;
	assert_non_null(body);
	/* The limit, which a worker learns when it registers. */
	lease = harness_call_ok(s, "POST", "/v1/workers/register", "{\"name\": \"by-hand\"}", 200);
	assert_int(JINT(lease, "result_max"), 1024);
	json_decref(lease);
	id = harness_submit(s, "{\"command\": [\"true\"]}");
	lease = harness_call_ok(s, "POST", "/v1/lease", "{\"worker\": \"by-hand\"}", 200);
	token = JINT(lease, "job.lease.token");
	json_decref(lease);
	snprintf(body, 2000, "{\"lease_token\": %lld, \"result\": \"%01030d\"}", (long long)token, 0);
	assert_int(harness_call(s, "POST", harness_fmt("/v1/jobs/%lld/complete", (long long)id), body, &r), 413);
	assert_error(413, r, 413, "too_large", "result");
	assert_string_equal(JSTR(r, "error.message"), "result is 1032 bytes, over [queue] result_max (1024)");
	json_decref(r);
	assert_true(harness_job_is(s, id, "leased"));
	snprintf(body, 2000, "{\"lease_token\": %lld, \"result\": \"%01020d\"}", (long long)token, 0);
	r = harness_call_ok(s, "POST", harness_fmt("/v1/jobs/%lld/complete", (long long)id), body, 200);
	assert_int(strlen(JSTR(r, "result")), 1020);
	json_decref(r);
	free(body);
}

/* A worker that learnt a larger limit than serve's now (serve restarted
 * with a lower result_max under it): the complete serve refuses becomes a
 * failed run with serve's reason, not retried, rather than a job left
 * leased until its lease expires. */
static void limit_lowered_under_the_worker(void **state)
{
	int port = harness_free_port();
	struct harness_server *s = harness_serve(harness_fmt("[server]\nlisten = 127.0.0.1:%d\n", port), 0);
	const char *go = harness_fmt("%s/go", s->dir);
	pid_t w = worker(s);
	json_t *job;
	int64_t id;
	FILE *f;

	(void)state;
	id = harness_submit(s, harness_fmt("{\"command\": [\"sh\", \"-c\", \"while [ ! -e '%s' ]; do sleep 0.1; done; "
					   "echo result '\\\"'$(head -c 1500 /dev/zero | tr '\\\\0' a)'\\\"' >&$EBB_CONTROL_FD\"]}",
					   go));
	WAIT_FOR(s, 60000, harness_job_is(s, id, "leased"), "the job was not leased");
	assert_int(harness_server_stop(s), 0);
	assert_non_null((f = fopen(s->conf, "a")));
	fputs("[queue]\nresult_max = 1KiB\n", f);
	fclose(f);
	harness_server_start(s);
	harness_write_file(go, "");
	job = ended(s, id);
	assert_string_equal(JSTR(job, "state"), "failed");
	assert_int(JINT(job, "attempts"), 1);
	assert_string_equal(JSTR(job, "error"), "result is 1502 bytes, over [queue] result_max (1024)");
	json_decref(job);
	assert_int(WEXITSTATUS(harness_stop_hand_worker(s, w, 10000)), 0);
}

static void wait_answers_at_the_end(void **state)
{
	struct harness_server *s = harness_serve(NULL, 0);
	struct harness_async a;
	json_t *r = NULL;
	int64_t id;
	pid_t w;

	(void)state;
	/* No worker: the wait ends with the job queued. */
	id = harness_submit(s, "{\"command\": [\"sh\", \"-c\", \"echo 'result 7' >&$EBB_CONTROL_FD\"]}");
	harness_async_start(&a, s, "GET", harness_fmt("/v1/jobs/%lld?wait=1s", (long long)id), NULL);
	assert_int(harness_async_join(&a, &r), 200);
	assert_string_equal(JSTR(r, "state"), "queued");
	assert_true(a.elapsed_ms >= 900);
	json_decref(r);

	/* Waiting for 60 s, answered when the job ends, with its result. */
	harness_async_start(&a, s, "GET", harness_fmt("/v1/jobs/%lld?wait=60", (long long)id), NULL);
	w = worker(s);
	assert_int(harness_async_join(&a, &r), 200);
	assert_string_equal(JSTR(r, "state"), "succeeded");
	assert_int(JINT(r, "result"), 7);
	assert_int(json_array_size(harness_jget(r, "runs")), 1);
	if (a.elapsed_ms >= 30000)
		harness_fail_with_log(s, "the wait took %lld ms: answered on its timeout, not on the job's end",
				      (long long)a.elapsed_ms);
	json_decref(r);
	/* Ended already: at once. */
	r = harness_get(s, harness_fmt("/v1/jobs/%lld?wait=60s", (long long)id));
	assert_string_equal(JSTR(r, "state"), "succeeded");
	json_decref(r);

	/* A bad wait: 400, naming it. */
	static const char *const bad[] = {"abc", "61s", "-1", "2m", "10x", "61"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		assert_int(harness_call(s, "GET", harness_fmt("/v1/jobs/%lld?wait=%s", (long long)id, bad[i]), NULL, &r),
			   400);
		assert_error(400, r, 400, "out_of_range", "wait");
		json_decref(r);
		r = NULL;
	}
	assert_int(harness_call(s, "GET", "/v1/jobs/999?wait=1s", NULL, &r), 404);
	json_decref(r);
	assert_int(WEXITSTATUS(harness_stop_hand_worker(s, w, 10000)), 0);
}

/* A team's token waits only on its team's jobs, as it reads them. */
static void wait_sees_only_the_team(void **state)
{
	struct harness_server *s = harness_serve("[token.asub]\nsecret = team-a-secret-0123456789\nteam = a\n"
						 "[token.bsub]\nsecret = team-b-secret-0123456789\nteam = b\n",
						 HARNESS_TOKENS);
	json_t *r = NULL;
	int64_t id;

	(void)state;
	id = harness_submit(s, "{\"command\": [\"true\"], \"team\": \"a\"}");
	assert_int(harness_call_as(s, "team-b-secret-0123456789", "GET",
				   harness_fmt("/v1/jobs/%lld?wait=1s", (long long)id), NULL, &r),
		   404);
	json_decref(r);
	r = NULL;
	assert_int(harness_call_as(s, "team-a-secret-0123456789", "GET",
				   harness_fmt("/v1/jobs/%lld?wait=1s", (long long)id), NULL, &r),
		   200);
	assert_string_equal(JSTR(r, "state"), "queued");
	json_decref(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(result_returned, harness_cleanup),
		cmocka_unit_test_teardown(bad_results_fail_the_attempt, harness_cleanup),
		cmocka_unit_test_teardown(complete_over_result_max_refused, harness_cleanup),
		cmocka_unit_test_teardown(limit_lowered_under_the_worker, harness_cleanup),
		cmocka_unit_test_teardown(wait_answers_at_the_end, harness_cleanup),
		cmocka_unit_test_teardown(wait_sees_only_the_team, harness_cleanup),
	};
	return cmocka_run_group_tests(tests, NULL, harness_cleanup);
}
