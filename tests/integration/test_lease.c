/* Leases against a real serve: long-polls that wake on a submit or time
 * out, and, with --test-clock, expiry, fencing, checkpoints, retries and
 * the dead-letter path without waiting for any of it. Also: one serve per
 * data dir, and a clean exit with a worker still parked. */
#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static const char job[] = "{\"command\": [\"echo\", \"hi\"]}";

/* POST as the server's token; the reply, which must have status want. */
static json_t *post(struct harness_server *s, const char *path, const char *body, int want)
{
	json_t *r = NULL;
	int st = harness_call(s, "POST", path, body, &r);

	if (st != want) {
		char *text = r ? json_dumps(r, JSON_COMPACT) : NULL;
		fail_msg("POST %s %s: status %d, expected %d: %s", path, body ? body : "", st, want,
			 text ? text : "");
	}
	return r;
}

static int64_t submit(struct harness_server *s, const char *body)
{
	json_t *r = post(s, "/v1/jobs", body, 201);
	int64_t id = JINT(r, "id");

	json_decref(r);
	return id;
}

static json_t *get_job(struct harness_server *s, int64_t id)
{
	json_t *r = NULL;

	assert_int(harness_call(s, "GET", harness_fmt("/v1/jobs/%lld", (long long)id), NULL, &r), 200);
	return r;
}

#define assert_job_state(s, id, want)                               \
	do {                                                        \
		json_t *j_ = get_job((s), (id));                    \
		assert_string_equal(JSTR(j_, "state"), (want));     \
		json_decref(j_);                                    \
	} while (0)

/* A lease of up to lease_s seconds: the reply's "job" (null if none). */
static json_t *lease(struct harness_server *s, int lease_s)
{
	return post(s, "/v1/lease",
		    harness_fmt("{\"worker\": \"w1\", \"wait_s\": 0, \"lease_s\": %d}", lease_s), 200);
}

static const char *job_path(int64_t id, const char *what)
{
	return harness_fmt("/v1/jobs/%lld/%s", (long long)id, what);
}

static const char *token_body(int64_t token)
{
	return harness_fmt("{\"lease_token\": %lld}", (long long)token);
}

/* ---- long-polls, on the real clock ---- */

static void longpoll_wakes_on_submit(void **state)
{
	struct harness_server *s = harness_serve(NULL, 0);
	struct harness_async a;
	json_t *r = NULL;
	int64_t id;

	(void)state;
	harness_async_start(&a, s, "POST", "/v1/lease", "{\"worker\": \"w1\", \"wait_s\": 5}");
	harness_wait_waiting(s, 1);
	id = submit(s, job);
	assert_int(harness_async_join(&a, &r), 200);
	assert_int(JINT(r, "job.id"), id);
	assert_string_equal(JSTR(r, "job.state"), "leased");
	assert_string_equal(JSTR(r, "job.lease.worker"), "w1");
	assert_between(a.elapsed_ms, 0, 2500); /* well before its 5 s */
	json_decref(r);
	harness_wait_waiting(s, 0);
	assert_job_state(s, id, "leased");
	assert_int(harness_server_stop(s), 0);
	harness_server_free(s);
}

static void longpoll_times_out(void **state)
{
	struct harness_server *s = harness_serve(NULL, 0);
	struct harness_async a;
	json_t *r = NULL;

	(void)state;
	harness_async_start(&a, s, "POST", "/v1/lease", "{\"worker\": \"w1\", \"wait_s\": 1}");
	assert_int(harness_async_join(&a, &r), 200);
	assert_true(json_is_null(harness_jget(r, "job")));
	assert_between(a.elapsed_ms, 900, 3000);
	json_decref(r);
	assert_int(harness_server_stop(s), 0);
	harness_server_free(s);
}

/* Parked workers are served oldest first, each with its own job. */
static void longpoll_two_waiters(void **state)
{
	struct harness_server *s = harness_serve(NULL, 0);
	struct harness_async a, b;
	json_t *ra = NULL, *rb = NULL;
	int64_t first, second;

	(void)state;
	harness_async_start(&a, s, "POST", "/v1/lease", "{\"worker\": \"a\", \"wait_s\": 5}");
	harness_wait_waiting(s, 1);
	harness_async_start(&b, s, "POST", "/v1/lease", "{\"worker\": \"b\", \"wait_s\": 5}");
	harness_wait_waiting(s, 2);
	first = submit(s, job);
	assert_int(harness_async_join(&a, &ra), 200);
	assert_int(JINT(ra, "job.id"), first);
	harness_wait_waiting(s, 1);
	second = submit(s, job);
	assert_int(harness_async_join(&b, &rb), 200);
	assert_int(JINT(rb, "job.id"), second);
	assert_string_equal(JSTR(rb, "job.lease.worker"), "b");
	json_decref(ra);
	json_decref(rb);
	assert_int(harness_server_stop(s), 0);
	harness_server_free(s);
}

/* A parked worker that a job does not fit stays parked. */
static void longpoll_waits_for_a_fit(void **state)
{
	struct harness_server *s = harness_serve(NULL, 0);
	struct harness_async a;
	json_t *r = NULL;
	int64_t big, small;

	(void)state;
	harness_async_start(&a, s, "POST", "/v1/lease", "{\"worker\": \"w1\", \"gpus\": 1, \"wait_s\": 5}");
	harness_wait_waiting(s, 1);
	big = submit(s, "{\"command\": [\"train\"], \"gpus\": 8}");
	harness_wait_waiting(s, 1);
	small = submit(s, "{\"command\": [\"eval\"], \"gpus\": 1}");
	assert_int(harness_async_join(&a, &r), 200);
	assert_int(JINT(r, "job.id"), small);
	json_decref(r);
	assert_job_state(s, big, "queued");
	assert_int(harness_server_stop(s), 0);
	harness_server_free(s);
}

/* Parked workers behind more jobs than a lease's window, none of which
 * they fit: each submit of another leaves them parked, and the one job
 * they fit, last in the lease order, goes to the first of them. */
static void longpoll_waits_behind_a_backlog_it_cannot_take(void **state)
{
	struct harness_server *s = harness_serve(NULL, 0);
	struct harness_async a, b;
	json_t *ra = NULL, *rb = NULL;
	int64_t small;

	(void)state;
	harness_async_start(&a, s, "POST", "/v1/lease", "{\"worker\": \"a\", \"gpus\": 1, \"wait_s\": 30}");
	harness_wait_waiting(s, 1);
	harness_async_start(&b, s, "POST", "/v1/lease", "{\"worker\": \"b\", \"gpus\": 1, \"wait_s\": 30}");
	harness_wait_waiting(s, 2);
	for (int k = 0; k < 40; k++)
		submit(s, "{\"command\": [\"train\"], \"gpus\": 2, \"priority\": 9}");
	harness_wait_waiting(s, 2);
	small = submit(s, "{\"command\": [\"eval\"], \"gpus\": 1, \"priority\": -9}");
	assert_int(harness_async_join(&a, &ra), 200);
	assert_int(JINT(ra, "job.id"), small);
	harness_wait_waiting(s, 1);
	assert_int(harness_server_stop(s), 0);
	assert_int(harness_async_join(&b, &rb), 200);
	assert_true(json_is_null(harness_jget(rb, "job")));
	json_decref(ra);
	json_decref(rb);
	harness_server_free(s);
}

/* SIGTERM answers a parked worker with no job and exits cleanly. */
static void shutdown_releases_waiters(void **state)
{
	struct harness_server *s = harness_serve(NULL, 0);
	struct harness_async a;
	json_t *r = NULL;

	(void)state;
	harness_async_start(&a, s, "POST", "/v1/lease", "{\"worker\": \"w1\", \"wait_s\": 30}");
	harness_wait_waiting(s, 1);
	assert_int(harness_server_stop(s), 0);
	assert_int(harness_async_join(&a, &r), 200);
	assert_true(json_is_null(harness_jget(r, "job")));
	assert_between(a.elapsed_ms, 0, 10000);
	json_decref(r);
	harness_server_free(s);
}

/* A worker that gave up its long-poll (killed, timed out) is not handed
 * the next job: it would sit leased to nobody until its lease ran out,
 * and the lost attempt would count. */
static void gone_worker_gets_no_job(void **state)
{
	struct harness_server *s = harness_serve(NULL, 0);
	CURL *curl = curl_easy_init();
	const char *url = harness_fmt("%s/v1/lease", s->url);
	json_t *j;
	int64_t id;

	(void)state;
	curl_easy_setopt(curl, CURLOPT_URL, url);
	curl_easy_setopt(curl, CURLOPT_POSTFIELDS, "{\"worker\": \"gone\", \"wait_s\": 30}");
	curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 300L);
	assert_int(curl_easy_perform(curl), CURLE_OPERATION_TIMEDOUT);
	curl_easy_cleanup(curl); /* closes the connection */

	id = submit(s, job);
	j = get_job(s, id);
	assert_string_equal(JSTR(j, "state"), "queued");
	assert_int(JINT(j, "attempts"), 0);
	json_decref(j);
	j = lease(s, 60);
	assert_int(JINT(j, "job.id"), id);
	assert_int(JINT(j, "job.attempts"), 1);
	assert_string_equal(JSTR(j, "job.lease.worker"), "w1");
	json_decref(j);
	harness_wait_waiting(s, 0);
	assert_int(harness_server_stop(s), 0);
	harness_server_free(s);
}

/* A worker started by hand that cut its long-poll short as the reply
 * came (to offer GPUs a runner freed) may never read it; its next lease
 * request names the jobs it runs, and a job of that reply it does not
 * name goes back to the queue at once, its attempt not counted, rather
 * than wait out its lease. One it names stays leased; a worker that
 * names none (one GPU, no runners) keeps what it leased. */
static void unread_reply_taken_back(void **state)
{
	struct harness_server *s = harness_serve(NULL, 0);
	int64_t a = submit(s, job), b, token;
	json_t *j, *runs;

	(void)state;
	j = post(s, "/v1/lease", "{\"worker\": \"hand\", \"gpus\": 2}", 200);
	assert_int(JINT(j, "job.id"), a);
	token = JINT(j, "job.lease.token");
	json_decref(j);
	/* Not naming "running": kept. */
	j = post(s, "/v1/lease", "{\"worker\": \"hand\", \"gpus\": 1}", 200);
	assert_true(json_is_null(json_object_get(j, "job")));
	json_decref(j);
	j = get_job(s, a);
	assert_string_equal(JSTR(j, "state"), "leased");
	assert_int(JINT(j, "lease.token"), token);
	json_decref(j);
	/* Named: kept too, and the reply's job is the next one's. */
	b = submit(s, job);
	j = post(s, "/v1/lease", harness_fmt("{\"worker\": \"hand\", \"gpus\": 1, \"running\": [%lld]}", (long long)a), 200);
	assert_int(JINT(j, "job.id"), b);
	json_decref(j);
	/* b's reply unread: the next request names a alone, and b is
	 * leased again in its reply, at its first attempt still. */
	j = post(s, "/v1/lease", harness_fmt("{\"worker\": \"hand\", \"gpus\": 1, \"running\": [%lld]}", (long long)a), 200);
	assert_int(JINT(j, "job.id"), b);
	assert_int(JINT(j, "job.attempts"), 1);
	json_decref(j);
	j = get_job(s, b);
	runs = harness_jget(j, "runs");
	assert_int(json_array_size(runs), 2);
	assert_string_equal(JSTR(json_array_get(runs, 0), "outcome"), "interrupted");
	json_decref(j);
	j = get_job(s, a);
	assert_int(JINT(j, "lease.token"), token);
	json_decref(j);
}

/* A delay or a lease runs out on serve's own timer, on the real clock,
 * and a parked worker gets the job that became ready. */
static void deadline_timer_wakes_waiter(void **state)
{
	struct harness_server *s = harness_serve(NULL, 0);
	struct harness_async a;
	json_t *r = NULL;
	int64_t id;

	(void)state;
	harness_async_start(&a, s, "POST", "/v1/lease", "{\"worker\": \"w1\", \"wait_s\": 10, \"lease_s\": 1}");
	harness_wait_waiting(s, 1);
	id = submit(s, "{\"command\": [\"soon\"], \"delay_s\": 1}");
	assert_int(harness_async_join(&a, &r), 200);
	assert_int(JINT(r, "job.id"), id);
	assert_between(a.elapsed_ms, 500, 5000);
	json_decref(r);

	/* Its 1 s lease expires on the timer too: poll, bounded. */
	harness_async_start(&a, s, "POST", "/v1/lease", "{\"worker\": \"w2\", \"wait_s\": 10}");
	assert_int(harness_async_join(&a, &r), 200);
	assert_int(JINT(r, "job.id"), id);
	assert_int(JINT(r, "job.attempts"), 2);
	assert_string_equal(JSTR(r, "job.lease.worker"), "w2");
	assert_between(a.elapsed_ms, 0, 5000);
	json_decref(r);
	assert_int(harness_server_stop(s), 0);
	harness_server_free(s);
}

/* A lease taken before kill -9 still expires after the restart. */
static void lease_expires_after_restart(void **state)
{
	struct harness_server *s = harness_serve(NULL, 0);
	struct harness_async a;
	json_t *r = NULL;
	int64_t id = submit(s, job);

	(void)state;
	json_decref(lease(s, 1));
	harness_server_kill(s);
	harness_server_start(s);
	assert_job_state(s, id, "leased");
	harness_async_start(&a, s, "POST", "/v1/lease", "{\"worker\": \"w2\", \"wait_s\": 10}");
	assert_int(harness_async_join(&a, &r), 200);
	assert_int(JINT(r, "job.id"), id);
	assert_int(JINT(r, "job.attempts"), 2);
	assert_between(a.elapsed_ms, 0, 5000);
	json_decref(r);
	assert_int(harness_server_stop(s), 0);
	harness_server_free(s);
}

/* wait_s is capped by [queue] max_lease_wait. */
static void wait_capped(void **state)
{
	struct harness_server *s = harness_serve("[queue]\nmax_lease_wait = 1s\n", 0);
	struct harness_async a;
	json_t *r = NULL;

	(void)state;
	harness_async_start(&a, s, "POST", "/v1/lease", "{\"worker\": \"w1\", \"wait_s\": 30}");
	assert_int(harness_async_join(&a, &r), 200);
	assert_true(json_is_null(harness_jget(r, "job")));
	assert_between(a.elapsed_ms, 900, 5000);
	json_decref(r);
	assert_int(harness_server_stop(s), 0);
	harness_server_free(s);
}

/* ---- on the test clock ---- */

static void expiry_and_fencing(void **state)
{
	struct harness_server *s = harness_serve(NULL, HARNESS_TEST_CLOCK);
	int64_t id = submit(s, job), t1, t2;
	json_t *j, *r = NULL;

	(void)state;
	j = lease(s, 30);
	assert_int(JINT(j, "job.id"), id);
	assert_int(JINT(j, "job.attempts"), 1);
	t1 = JINT(j, "job.lease.token");
	json_decref(j);

	harness_advance(s, 29000);
	assert_job_state(s, id, "leased");
	harness_advance(s, 2000);
	j = get_job(s, id);
	assert_string_equal(JSTR(j, "state"), "queued");
	assert_int(JINT(j, "attempts"), 1);
	assert_contains(JSTR(j, "error"), "lease expired");
	/* Its run ended so, with the same why. */
	assert_string_equal(JSTR(json_array_get(json_object_get(j, "runs"), 0), "outcome"), "expired");
	assert_contains(JSTR(json_array_get(json_object_get(j, "runs"), 0), "reason"), "lease expired");
	json_decref(j);

	assert_int(harness_call(s, "POST", job_path(id, "complete"), token_body(t1), &r), 409);
	assert_error(409, r, 409, "stale_lease", "lease_token");
	json_decref(r);

	j = lease(s, 30);
	assert_int(JINT(j, "job.id"), id);
	t2 = JINT(j, "job.lease.token");
	assert_true(t2 > t1);
	assert_int(JINT(j, "job.attempts"), 2);
	json_decref(j);
	/* The old token stays refused now that someone else holds the job. */
	assert_int(harness_call(s, "POST", job_path(id, "heartbeat"), token_body(t1), &r), 409);
	assert_error(409, r, 409, "stale_lease", "lease_token");
	json_decref(r);
	j = post(s, job_path(id, "complete"),
		 harness_fmt("{\"lease_token\": %lld, \"items_done\": 1, \"result\": [1, 2]}", (long long)t2),
		 200);
	assert_string_equal(JSTR(j, "state"), "succeeded");
	assert_int(JINT(j, "result.1"), 2);
	json_decref(j);
	assert_int(harness_server_stop(s), 0);
	harness_server_free(s);
}

static void heartbeat_extends(void **state)
{
	struct harness_server *s = harness_serve(NULL, HARNESS_TEST_CLOCK);
	int64_t id = submit(s, job), token;
	json_t *j;

	(void)state;
	j = lease(s, 30);
	token = JINT(j, "job.lease.token");
	json_decref(j);
	for (int i = 0; i < 3; i++) {
		harness_advance(s, 20000);
		json_decref(post(s, job_path(id, "heartbeat"), token_body(token), 200));
	}
	harness_advance(s, 29000);
	assert_job_state(s, id, "leased"); /* 89 s after the lease, 29 after its heartbeat */
	harness_advance(s, 1000);
	assert_job_state(s, id, "queued");
	assert_int(harness_server_stop(s), 0);
	harness_server_free(s);
}

static void checkpoint_returned_on_next_lease(void **state)
{
	struct harness_server *s = harness_serve(NULL, HARNESS_TEST_CLOCK);
	int64_t id = submit(s, "{\"command\": [\"train\"], \"items\": 100}"), token;
	json_t *j;

	(void)state;
	j = lease(s, 30);
	token = JINT(j, "job.lease.token");
	assert_null(harness_jget(j, "job.checkpoint"));
	json_decref(j);
	j = post(s, job_path(id, "checkpoint"),
		 harness_fmt("{\"lease_token\": %lld, \"checkpoint\": \"s3://ckpt/epoch-3\", \"items_done\": 30}",
			     (long long)token),
		 200);
	assert_string_equal(JSTR(j, "checkpoint"), "s3://ckpt/epoch-3");
	json_decref(j);
	harness_advance(s, 31000);
	assert_job_state(s, id, "queued");

	j = lease(s, 30);
	assert_int(JINT(j, "job.id"), id);
	assert_string_equal(JSTR(j, "job.checkpoint"), "s3://ckpt/epoch-3");
	assert_int(JINT(j, "job.items_done"), 30);
	assert_int(JINT(j, "job.items"), 100);
	json_decref(j);
	assert_int(harness_server_stop(s), 0);
	harness_server_free(s);
}

/* retry_base 10 s: the first retry comes 5 to 10 s later. */
static void retry_then_dead(void **state)
{
	struct harness_server *s = harness_serve(NULL, HARNESS_TEST_CLOCK);
	int64_t id = submit(s, "{\"command\": [\"flaky\"], \"max_attempts\": 2}"), token;
	json_t *j;

	(void)state;
	j = lease(s, 60);
	token = JINT(j, "job.lease.token");
	json_decref(j);
	j = post(s, job_path(id, "fail"),
		 harness_fmt("{\"lease_token\": %lld, \"error\": \"CUDA OOM\", \"retry\": true}",
			     (long long)token),
		 200);
	assert_string_equal(JSTR(j, "state"), "delayed");
	assert_string_equal(JSTR(j, "error"), "CUDA OOM");
	json_decref(j);

	j = lease(s, 60);
	assert_true(json_is_null(harness_jget(j, "job"))); /* not before the backoff */
	json_decref(j);
	harness_advance(s, 4000);
	assert_job_state(s, id, "delayed");
	harness_advance(s, 6001);
	assert_job_state(s, id, "queued");

	j = lease(s, 60);
	assert_int(JINT(j, "job.id"), id);
	assert_int(JINT(j, "job.attempts"), 2);
	token = JINT(j, "job.lease.token");
	json_decref(j);
	j = post(s, job_path(id, "fail"),
		 harness_fmt("{\"lease_token\": %lld, \"error\": \"CUDA OOM again\"}", (long long)token), 200);
	assert_string_equal(JSTR(j, "state"), "dead");
	assert_true(json_is_number(harness_jget(j, "finished_at")));
	json_decref(j);
	harness_advance(s, 3600000);
	assert_job_state(s, id, "dead");

	j = NULL;
	assert_int(harness_call(s, "GET", "/v1/stats", NULL, &j), 200);
	assert_int(JINT(j, "states.dead"), 1);
	json_decref(j);
	assert_int(harness_server_stop(s), 0);
	harness_server_free(s);
}

/* A lost lease on its last attempt buries the job too. */
static void expiry_on_last_attempt_is_dead(void **state)
{
	struct harness_server *s = harness_serve(NULL, HARNESS_TEST_CLOCK);
	int64_t id = submit(s, "{\"command\": [\"hang\"], \"max_attempts\": 1}");

	(void)state;
	json_decref(lease(s, 10));
	harness_advance(s, 10000);
	assert_job_state(s, id, "dead");
	assert_int(harness_server_stop(s), 0);
	harness_server_free(s);
}

/* A delayed submit waits for the test clock, and a restart keeps it. */
static void delayed_submit(void **state)
{
	struct harness_server *s = harness_serve(NULL, HARNESS_TEST_CLOCK);
	int64_t id = submit(s, "{\"command\": [\"later\"], \"delay_s\": 600}");
	json_t *j;

	(void)state;
	assert_job_state(s, id, "delayed");
	j = lease(s, 60);
	assert_true(json_is_null(harness_jget(j, "job")));
	json_decref(j);
	harness_advance(s, 600000);
	j = lease(s, 60);
	assert_int(JINT(j, "job.id"), id);
	json_decref(j);
	assert_int(harness_server_stop(s), 0);
	harness_server_free(s);
}

/* ---- one serve per data dir ---- */

static void data_dir_locked(void **state)
{
	struct harness_server *s = harness_serve(NULL, 0);
	struct harness_run r;

	(void)state;
	harness_ebb(&r, NULL, "serve", "-c", s->conf, NULL);
	assert_int(r.status, 1);
	assert_contains(r.err, "in use by another ebb serve");
	assert_contains(r.err, s->data);
	harness_run_free(&r);
	/* The first one is unharmed. */
	assert_int(harness_call(s, "GET", "/healthz", NULL, NULL), 200);
	assert_int(harness_server_stop(s), 0);
	/* And once it is gone, the lock goes with it. */
	harness_server_start(s);
	assert_int(harness_call(s, "GET", "/healthz", NULL, NULL), 200);
	assert_int(harness_server_stop(s), 0);
	harness_server_free(s);
}

#define T(fn) cmocka_unit_test_teardown(fn, harness_cleanup)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(longpoll_wakes_on_submit),
		T(longpoll_times_out),
		T(longpoll_two_waiters),
		T(longpoll_waits_for_a_fit),
		T(longpoll_waits_behind_a_backlog_it_cannot_take),
		T(shutdown_releases_waiters),
		T(gone_worker_gets_no_job),
		T(unread_reply_taken_back),
		T(deadline_timer_wakes_waiter),
		T(lease_expires_after_restart),
		T(wait_capped),
		T(expiry_and_fencing),
		T(heartbeat_extends),
		T(checkpoint_returned_on_next_lease),
		T(retry_then_dead),
		T(expiry_on_last_attempt_is_dead),
		T(delayed_submit),
		T(data_dir_locked),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
