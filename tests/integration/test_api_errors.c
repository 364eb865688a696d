/* Every error a client can get from a real `ebb serve`, each with the
 * body {"error": {"code", "message", "field"}}, and a server that is still
 * healthy after all of them. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

#define ML "ml-submit-secret-0001"
#define VISION "vision-submit-secret-1"
#define WORKER "worker-secret-0000001"

static const char tokens[] = "[token.ml]\nsecret = " ML "\nrole = submit\nteam = ml\n"
			     "[token.vision]\nsecret = " VISION "\nrole = submit\nteam = vision\n"
			     "[token.worker]\nsecret = " WORKER "\nrole = worker\n"
			     "[type.embed]\ngpu_share = 1/2\n";

static struct harness_server *srv; /* shared by the tests, in order */

static int start(void **state)
{
	(void)state;
	srv = harness_serve(tokens, HARNESS_TOKENS);
	return 0;
}

static int stop(void **state)
{
	(void)state;
	return harness_cleanup(NULL);
}

static const char job[] = "{\"command\": [\"echo\", \"hi\"]}";

/* Submits body as token; the new job's id (fails unless 201). */
static int64_t submit_as(const char *token, const char *body)
{
	json_t *r = NULL;
	int st = harness_call_as(srv, token, "POST", "/v1/jobs", body, &r);
	int64_t id;

	if (st != 201) {
		json_decref(r);
		fail_msg("submit %s: status %d, expected 201", body, st);
	}
	id = JINT(r, "id");
	json_decref(r);
	return id;
}

/* A raw body as admin: status, reply in *r. */
static int raw(const char *path, const char *body, json_t **r)
{
	return harness_raw(srv, HARNESS_ADMIN, "POST", path, body, strlen(body), 0, r);
}

static void malformed_json(void **state)
{
	json_t *r = NULL;
	int st;

	(void)state;
	st = raw("/v1/jobs", "{\n  \"command\": [\"echo\", ]\n}", &r);
	assert_error(st, r, 400, "bad_json", NULL);
	assert_contains(JSTR(r, "error.message"), "line 2, column");
	json_decref(r);
	st = raw("/v1/lease", "[\"not\", \"an object\"]", &r);
	assert_error(st, r, 400, "bad_json", NULL);
	json_decref(r);
	/* The submit takes an array of jobs too (test_cycle_calls.c), no other value. */
	st = raw("/v1/jobs", "\"not an object\"", &r);
	assert_error(st, r, 400, "bad_json", NULL);
	assert_contains(JSTR(r, "error.message"), "'[' or '{' expected");
	json_decref(r);
	st = raw("/v1/jobs", "{\"command\": [\"a\"], \"command\": [\"b\"]}", &r);
	assert_error(st, r, 400, "bad_json", NULL);
	json_decref(r);
}

static void unknown_field(void **state)
{
	json_t *r = NULL;
	int64_t id;
	int st;

	(void)state;
	st = harness_call(srv, "POST", "/v1/jobs", "{\"command\": [\"true\"], \"colour\": \"red\"}", &r);
	assert_error(st, r, 400, "unknown_field", "colour");
	assert_contains(JSTR(r, "error.message"), "colour");
	json_decref(r);
	st = harness_call(srv, "POST", "/v1/lease", "{\"worker\": \"w\", \"gpu\": 1}", &r);
	assert_error(st, r, 400, "unknown_field", "gpu");
	json_decref(r);
	/* Calls that take no field refuse one, and do nothing. */
	id = submit_as(HARNESS_ADMIN, job);
	st = harness_call(srv, "POST", harness_fmt("/v1/jobs/%lld/cancel", (long long)id),
			  "{\"reason\": \"not needed\"}", &r);
	assert_error(st, r, 400, "unknown_field", "reason");
	json_decref(r);
	assert_true(harness_job_is(srv, id, "queued"));
	st = harness_call(srv, "POST", "/v1/fleet/1/drain", "{\"force\": true}", &r);
	assert_error(st, r, 400, "unknown_field", "force");
	json_decref(r);
	json_decref(harness_call_ok(srv, "POST", harness_fmt("/v1/jobs/%lld/cancel", (long long)id), NULL, 200));
}

/* One body that must be refused with the code and field. */
static void refused(const char *body, const char *code, const char *field)
{
	json_t *r = NULL;
	int st = harness_call(srv, "POST", "/v1/jobs", body, &r);

	if (st != 400)
		print_error("body: %s\n", body);
	assert_error(st, r, 400, code, field);
	json_decref(r);
}

static void bad_values(void **state)
{
	(void)state;
	refused("{\"command\": [\"true\"], \"gpus\": 1000}", "out_of_range", "gpus");
	refused("{\"command\": [\"true\"], \"priority\": -5000}", "out_of_range", "priority");
	refused("{\"command\": [\"true\"], \"items\": 0}", "out_of_range", "items");
	refused("{\"command\": [\"true\"], \"delay_s\": -1}", "out_of_range", "delay_s");
	refused("{\"command\": [\"true\"], \"idempotency_key\": \"\"}", "out_of_range", "idempotency_key");
	refused("{\"command\": [\"true\"], \"priority\": \"high\"}", "bad_value", "priority");
	refused("{\"command\": [\"true\"], \"priority\": 1.5}", "bad_value", "priority");
	refused("{\"command\": [\"true\"], \"lane\": \"warp\"}", "bad_value", "lane");
	refused("{\"command\": [\"true\"], \"lane\": \"no spaces\"}", "bad_value", "lane");
	refused("{\"command\": [\"true\"], \"labels\": [\"ok\", \"not ok\"]}", "bad_value", "labels");
	refused("{\"command\": []}", "bad_value", "command");
	refused("{\"command\": [\"\"]}", "bad_value", "command");
	refused("{\"command\": \"echo hi\"}", "bad_value", "command");
	refused("{\"command\": [\"echo\", 5]}", "bad_value", "command");
	refused("{\"priority\": 1}", "missing_field", "command");
	refused("{\"command\": [\"true\"], \"delay_s\": 5, \"run_at\": 4000000000}", "bad_value", "run_at");
	/* A shared type's jobs take part of one GPU, never several. */
	refused("{\"command\": [\"true\"], \"type\": \"embed\", \"gpus\": 2}", "bad_value", "gpus");
}

/* A field set to null counts as absent: delay_s null beside run_at is
 * not "both". */
static void null_is_absent(void **state)
{
	json_t *r;
	int64_t id;

	(void)state;
	id = submit_as(HARNESS_ADMIN, "{\"command\": [\"true\"], \"delay_s\": null, \"run_at\": 1}");
	r = harness_get_job(srv, id);
	assert_string_equal(JSTR(r, "state"), "queued");
	json_decref(r);
	id = submit_as(HARNESS_ADMIN, "{\"command\": [\"true\"], \"delay_s\": 60, \"run_at\": null}");
	r = harness_get_job(srv, id);
	assert_string_equal(JSTR(r, "state"), "delayed");
	json_decref(r);
}

/* A GET takes no body: one that comes with it, JSON or not, is ignored. */
static void get_ignores_body(void **state)
{
	static const char *const paths[] = {"/healthz", "/v1/jobs?limit=1", "/v1/stats", "/v1/fleet", NULL};
	json_t *r = NULL;
	int st;

	(void)state;
	for (int i = 0; paths[i]; i++) {
		st = harness_raw(srv, HARNESS_ADMIN, "GET", paths[i], "{not json", 9, 0, &r);
		if (st != 200)
			print_error("GET %s\n", paths[i]);
		assert_int(st, 200);
		json_decref(r);
	}
}

static void bad_queries_and_worker_bodies(void **state)
{
	json_t *r = NULL;
	int st;

	(void)state;
	st = harness_call(srv, "GET", "/v1/jobs?limit=0", NULL, &r);
	assert_error(st, r, 400, "out_of_range", "limit");
	json_decref(r);
	st = harness_call(srv, "GET", "/v1/jobs?limit=ten", NULL, &r);
	assert_error(st, r, 400, "out_of_range", "limit");
	json_decref(r);
	/* Past 2^63-1 is out of range, not the largest id. */
	st = harness_call(srv, "GET", "/v1/jobs?after=99999999999999999999", NULL, &r);
	assert_error(st, r, 400, "out_of_range", "after");
	json_decref(r);
	st = harness_call(srv, "GET", "/v1/decisions?limit=5abc", NULL, &r);
	assert_error(st, r, 400, "out_of_range", "limit");
	json_decref(r);
	st = harness_call(srv, "GET", "/v1/jobs?state=running", NULL, &r);
	assert_error(st, r, 400, "bad_value", "state");
	json_decref(r);
	st = harness_call(srv, "POST", "/v1/lease", "{\"wait_s\": 0}", &r);
	assert_error(st, r, 400, "missing_field", "worker");
	json_decref(r);
	st = harness_call(srv, "POST", "/v1/lease", "{\"worker\": \"w\", \"wait_s\": 601}", &r);
	assert_error(st, r, 400, "out_of_range", "wait_s");
	json_decref(r);
	st = harness_call(srv, "POST", "/v1/jobs/1/complete", "{}", &r);
	assert_error(st, r, 400, "missing_field", "lease_token");
	json_decref(r);
	st = harness_call(srv, "POST", "/v1/jobs/1/checkpoint", "{\"lease_token\": 1}", &r);
	assert_error(st, r, 400, "missing_field", "checkpoint");
	json_decref(r);
	st = harness_call(srv, "POST", "/v1/jobs/1/fail", "{\"lease_token\": 1, \"retry\": \"yes\"}", &r);
	assert_error(st, r, 400, "bad_value", "retry");
	json_decref(r);
}

static void authentication(void **state)
{
	json_t *r = NULL;
	int st;

	(void)state;
	st = harness_call_as(srv, "", "POST", "/v1/jobs", job, &r);
	assert_error(st, r, 401, "unauthorized", NULL);
	assert_contains(JSTR(r, "error.message"), "missing bearer token");
	json_decref(r);
	st = harness_call_as(srv, "not-a-token-of-this-server", "GET", "/v1/jobs", NULL, &r);
	assert_error(st, r, 401, "unauthorized", NULL);
	assert_contains(JSTR(r, "error.message"), "unknown token");
	json_decref(r);
	/* A prefix of a real secret is no secret. */
	st = harness_call_as(srv, "ml-submit-secret", "GET", "/v1/jobs", NULL, &r);
	assert_error(st, r, 401, "unauthorized", NULL);
	json_decref(r);
	/* Health is open to anyone. */
	st = harness_call_as(srv, "", "GET", "/healthz", NULL, &r);
	assert_int(st, 200);
	assert_string_equal(JSTR(r, "status"), "ok");
	json_decref(r);
}

static void roles(void **state)
{
	json_t *r = NULL;
	int st;

	(void)state;
	st = harness_call_as(srv, WORKER, "POST", "/v1/jobs", job, &r);
	assert_error(st, r, 403, "forbidden", NULL);
	assert_contains(JSTR(r, "error.message"), "worker");
	json_decref(r);
	st = harness_call_as(srv, ML, "POST", "/v1/lease", "{\"worker\": \"w\"}", &r);
	assert_error(st, r, 403, "forbidden", NULL);
	json_decref(r);
	st = harness_call_as(srv, ML, "POST", "/v1/admin/clock", "{\"advance_ms\": 1}", &r);
	assert_error(st, r, 403, "forbidden", NULL);
	json_decref(r);
	/* A submit token submits for its own team only. */
	st = harness_call_as(srv, ML, "POST", "/v1/jobs",
			     "{\"command\": [\"true\"], \"team\": \"vision\"}", &r);
	assert_error(st, r, 403, "forbidden", "team");
	json_decref(r);
	/* The worker may read a job, and the admin anything. */
	st = harness_call_as(srv, WORKER, "GET", "/v1/stats", NULL, &r);
	assert_int(st, 200);
	json_decref(r);
	/* Without --test-clock the clock cannot move, even for the admin. */
	st = harness_call(srv, "POST", "/v1/admin/clock", "{\"advance_ms\": 1}", &r);
	assert_error(st, r, 404, "not_found", NULL);
	json_decref(r);
}

/* Ids of the jobs in a GET /v1/jobs reply. */
static int listed(json_t *r, int64_t id)
{
	size_t i;
	json_t *j;

	json_array_foreach(json_object_get(r, "jobs"), i, j) {
		if (json_integer_value(json_object_get(j, "id")) == id)
			return 1;
	}
	return 0;
}

static void team_scope(void **state)
{
	int64_t ml = submit_as(ML, job), vision = submit_as(VISION, job);
	json_t *r = NULL;
	int st;

	(void)state;
	st = harness_call_as(srv, ML, "GET", harness_fmt("/v1/jobs/%lld", (long long)ml), NULL, &r);
	assert_int(st, 200);
	assert_string_equal(JSTR(r, "team"), "ml");
	json_decref(r);
	st = harness_call_as(srv, VISION, "GET", harness_fmt("/v1/jobs/%lld", (long long)ml), NULL, &r);
	assert_error(st, r, 404, "not_found", NULL);
	json_decref(r);
	st = harness_call_as(srv, VISION, "POST", harness_fmt("/v1/jobs/%lld/cancel", (long long)ml),
			     NULL, &r);
	assert_error(st, r, 404, "not_found", NULL);
	json_decref(r);

	/* The list holds the caller's team only, whatever the query says. */
	st = harness_call_as(srv, VISION, "GET", "/v1/jobs?team=ml", NULL, &r);
	assert_int(st, 200);
	assert_true(listed(r, vision));
	assert_false(listed(r, ml));
	for (size_t i = 0; i < json_array_size(json_object_get(r, "jobs")); i++)
		assert_string_equal(JSTR(r, harness_fmt("jobs.%zu.team", i)), "vision");
	json_decref(r);
	st = harness_call(srv, "GET", "/v1/jobs", NULL, &r);
	assert_int(st, 200);
	assert_true(listed(r, vision));
	assert_true(listed(r, ml));
	json_decref(r);

	/* So do the stats. */
	st = harness_call_as(srv, ML, "GET", "/v1/stats", NULL, &r);
	assert_int(st, 200);
	assert_int(JINT(r, "states.queued"), 1);
	json_decref(r);

	/* The other team's job is untouched. */
	st = harness_call_as(srv, ML, "GET", harness_fmt("/v1/jobs/%lld", (long long)ml), NULL, &r);
	assert_string_equal(JSTR(r, "state"), "queued");
	json_decref(r);
}

static void not_found(void **state)
{
	static const char *const paths[] = {"/v1/nope", "/v1/jobs/abc", "/v1/jobs/0", "/v1/jobs/-1",
					     "/v1/jobs/1/explode", "//", "/index.html", "/v1/jobs/", "/v1/jobs/%201",
					     "/v1/jobs/99999999999999999999", "/v1/fleet/+1/drain", NULL};
	json_t *r = NULL;
	int st;

	(void)state;
	for (int i = 0; paths[i]; i++) {
		st = harness_call(srv, "GET", paths[i], NULL, &r);
		if (st != 404)
			print_error("path %s\n", paths[i]);
		assert_error(st, r, 404, "not_found", NULL);
		assert_contains(JSTR(r, "error.message"), "no such path");
		json_decref(r);
	}
	st = harness_call(srv, "GET", "/v1/jobs/999999", NULL, &r);
	assert_error(st, r, 404, "not_found", NULL);
	assert_contains(JSTR(r, "error.message"), "999999");
	json_decref(r);
	st = harness_call(srv, "POST", "/v1/jobs/999999/cancel", NULL, &r);
	assert_error(st, r, 404, "not_found", NULL);
	json_decref(r);
	st = harness_call(srv, "POST", "/v1/jobs/999999/complete", "{\"lease_token\": 1}", &r);
	assert_error(st, r, 404, "not_found", NULL);
	json_decref(r);
}

/* JSON strings are UTF-8: an error quoting bytes that are not (a path, a
 * query value), or cut inside a character (a long field name), still has
 * the error body, with '?' for the bytes that cannot be written. */
static void not_utf8(void **state)
{
	char body[200], field[64];
	json_t *r = NULL;
	int st;

	(void)state;
	st = harness_call(srv, "GET", "/v1/%ff%fe", NULL, &r);
	assert_error(st, r, 404, "not_found", NULL);
	assert_string_equal(JSTR(r, "error.message"), "no such path: /v1/??");
	json_decref(r);
	st = harness_call(srv, "GET", "/v1/report?since=1%ff", NULL, &r);
	assert_error(st, r, 400, "out_of_range", "since");
	assert_contains(JSTR(r, "error.message"), "got '1?'");
	json_decref(r);
	/* 40 two-byte characters: the 64-byte field keeps 31 and half of one. */
	strcpy(body, "{\"command\": [\"true\"], \"");
	strcpy(field, "");
	for (int i = 0; i < 40; i++)
		strcat(body, "\xc3\xa9");
	for (int i = 0; i < 31; i++)
		strcat(field, "\xc3\xa9");
	strcat(body, "\": 1}");
	strcat(field, "?");
	st = harness_call(srv, "POST", "/v1/jobs", body, &r);
	assert_error(st, r, 400, "unknown_field", field);
	json_decref(r);
	/* jansson's own message quotes the first byte of a character after a
	 * backslash (found by fuzzing json_parse_object). */
	st = raw("/v1/jobs", "{\"=\\\xc3\xa9\": 1}", &r);
	assert_error(st, r, 400, "bad_json", NULL);
	assert_contains(JSTR(r, "error.message"), "invalid escape");
	json_decref(r);
}

static void wrong_method(void **state)
{
	static const char *const calls[][2] = {
		{"DELETE", "/v1/jobs"}, {"GET", "/v1/lease"}, {"PUT", "/v1/jobs/1"},
		{"GET", "/v1/jobs/1/cancel"}, {"POST", "/healthz"}, {NULL, NULL},
	};
	json_t *r = NULL;
	int st;

	(void)state;
	for (int i = 0; calls[i][0]; i++) {
		st = harness_call(srv, calls[i][0], calls[i][1], NULL, &r);
		if (st != 405)
			print_error("%s %s\n", calls[i][0], calls[i][1]);
		assert_error(st, r, 405, "method_not_allowed", NULL);
		json_decref(r);
	}
}

static void conflicts(void **state)
{
	const char *body = "{\"command\": [\"true\"], \"idempotency_key\": \"run-7\"}";
	json_t *r = NULL;
	int64_t id, token;
	int st;

	(void)state;
	id = submit_as(HARNESS_ADMIN, body);
	st = harness_call(srv, "POST", "/v1/jobs", body, &r);
	assert_int(st, 200); /* the same job again, not a new one */
	assert_int(JINT(r, "id"), id);
	json_decref(r);
	st = harness_call(srv, "POST", "/v1/jobs",
			  "{\"command\": [\"false\"], \"idempotency_key\": \"run-7\"}", &r);
	assert_error(st, r, 409, "idempotency_conflict", "idempotency_key");
	json_decref(r);

	/* Lease whatever is first, then answer with a wrong token. */
	st = harness_call_as(srv, WORKER, "POST", "/v1/lease", "{\"worker\": \"w1\"}", &r);
	assert_int(st, 200);
	id = JINT(r, "job.id");
	token = JINT(r, "job.lease.token");
	json_decref(r);
	st = harness_call_as(srv, WORKER, "POST", harness_fmt("/v1/jobs/%lld/complete", (long long)id),
			     harness_fmt("{\"lease_token\": %lld}", (long long)token + 1), &r);
	assert_error(st, r, 409, "stale_lease", "lease_token");
	json_decref(r);
	st = harness_call_as(srv, WORKER, "POST", harness_fmt("/v1/jobs/%lld/complete", (long long)id),
			     harness_fmt("{\"lease_token\": %lld}", (long long)token), &r);
	assert_int(st, 200);
	assert_string_equal(JSTR(r, "state"), "succeeded");
	json_decref(r);
	/* Done is done: neither the worker nor a cancel changes it. */
	st = harness_call_as(srv, WORKER, "POST", harness_fmt("/v1/jobs/%lld/heartbeat", (long long)id),
			     harness_fmt("{\"lease_token\": %lld}", (long long)token), &r);
	assert_error(st, r, 409, "stale_lease", "lease_token");
	json_decref(r);
	st = harness_call(srv, "POST", harness_fmt("/v1/jobs/%lld/cancel", (long long)id), NULL, &r);
	assert_error(st, r, 409, "already_finished", NULL);
	json_decref(r);
}

/* A body of n bytes: a valid job padded with spaces. */
static char *padded_job(size_t n)
{
	char *b = malloc(n + 1);

	memset(b, ' ', n);
	memcpy(b, job, strlen(job));
	b[n] = '\0';
	return b;
}

static void too_large(void **state)
{
	const size_t max = 1 << 20; /* [server] max_body's default */
	char *big = padded_job(10 << 20), *over = padded_job(max + 1), *exact = padded_job(max);
	json_t *r = NULL;
	int st;

	(void)state;
	st = harness_raw(srv, HARNESS_ADMIN, "POST", "/v1/jobs", big, 10 << 20, 0, &r);
	assert_error(st, r, 413, "too_large", NULL);
	json_decref(r);
	st = harness_raw(srv, HARNESS_ADMIN, "POST", "/v1/jobs", over, max + 1, 0, &r);
	assert_error(st, r, 413, "too_large", NULL);
	json_decref(r);
	/* The project's client sends no "Expect: 100-continue": the server
	 * still answers 413, and the connection serves the next call. */
	{
		json_t *body = json_pack("{s:[s], s:s}", "command", "true", "payload", big + strlen(job));
		st = client_call(&srv->client, "POST", "/v1/jobs", body, &r);
		json_decref(body);
	}
	assert_error(st, r, 413, "too_large", NULL);
	json_decref(r);
	assert_int(harness_call(srv, "GET", "/healthz", NULL, NULL), 200);
	/* Without a Content-Length the server counts as the body comes. */
	st = harness_raw(srv, HARNESS_ADMIN, "POST", "/v1/jobs", over, max + 1, 1, &r);
	assert_error(st, r, 413, "too_large", NULL);
	json_decref(r);
	/* The limit itself is allowed. */
	st = harness_raw(srv, HARNESS_ADMIN, "POST", "/v1/jobs", exact, max, 0, &r);
	assert_int(st, 201);
	json_decref(r);
	st = harness_raw(srv, HARNESS_ADMIN, "POST", "/v1/jobs", exact, max, 1, &r);
	assert_int(st, 201);
	json_decref(r);
	free(big);
	free(over);
	free(exact);
}

static void deep_nesting(void **state)
{
	const int depth = 10000;
	char *body = malloc(2 * depth + 16), *p = body;
	json_t *r = NULL;
	int st;

	(void)state;
	p += sprintf(p, "{\"payload\":");
	for (int i = 0; i < depth; i++)
		*p++ = '[';
	for (int i = 0; i < depth; i++)
		*p++ = ']';
	*p++ = '}';
	*p = '\0';
	st = raw("/v1/jobs", body, &r);
	assert_error(st, r, 400, "bad_json", NULL);
	json_decref(r);
	free(body);
}

static void queue_full(void **state)
{
	struct harness_server *s = harness_serve("[queue]\nmax_queued = 5\n", 0);
	json_t *r = NULL;
	int st;

	(void)state;
	for (int i = 0; i < 5; i++) {
		st = harness_call(s, "POST", "/v1/jobs", job, NULL);
		assert_int(st, 201);
	}
	st = harness_call(s, "POST", "/v1/jobs", job, &r);
	assert_error(st, r, 429, "queue_full", NULL);
	json_decref(r);
	assert_int(harness_server_stop(s), 0);
	harness_server_free(s);
}

/* ---- the request's head, sent as raw bytes ---- */

static const char healthz[] = "GET /healthz HTTP/1.1\r\nHost: ebb\r\n\r\n";
static const char padded[] = "GET /healthz HTTP/1.1\r\nHost: ebb\r\nX-Pad: ";

/* before, n times rep, then after: a request too long to write out (free
 * it). */
static char *repeat(const char *before, const char *rep, size_t n, const char *after)
{
	size_t lb = strlen(before), lr = strlen(rep), la = strlen(after);
	char *s = malloc(lb + n * lr + la + 1), *p = s;

	memcpy(p, before, lb);
	p += lb;
	for (size_t i = 0; i < n; i++, p += lr)
		memcpy(p, rep, lr);
	memcpy(p, after, la + 1);
	return s;
}

/* req on a new connection to s (after a request served on it when second
 * is set), whose reply must have status: the connection, and the reply in
 * r. */
static int exchange_expecting(struct harness_server *s, const char *req, int second, int status,
			      struct harness_reply *r)
{
	int fd = harness_connect(s);

	if (second) {
		assert_int(harness_exchange(fd, healthz, strlen(healthz), r), 200);
		harness_reply_free(r);
	}
	harness_exchange(fd, req, strlen(req), r);
	if (r->status != status)
		print_error("request: %.200s\n", req);
	assert_int(r->status, status);
	return fd;
}

/* A request on a connection of its own (after a request served on it
 * when second is set) that gets status from ebb, in JSON with code when
 * code is not NULL; the connection then serves the next request (a body
 * was read and dropped), and so does another. Frees req. */
static void raw_reply(char *req, int second, int status, const char *code)
{
	struct harness_reply r;
	int fd = exchange_expecting(srv, req, second, status, &r);

	assert_string_equal(r.content_type, "application/json");
	assert_non_null(r.json);
	if (code)
		assert_error(r.status, r.json, status, code, NULL);
	assert_false(r.close);
	harness_reply_free(&r);
	assert_int(harness_exchange(fd, healthz, strlen(healthz), &r), 200);
	harness_reply_free(&r);
	close(fd);
	assert_int(harness_call(srv, "GET", "/healthz", NULL, NULL), 200);
	free(req);
}

/* ebb's limits on the head (docs/API.md, "Request limits"): the limit
 * itself is served, one more is ebb's JSON error, and so is far more, as
 * long as it fits in the connection's memory (a URL or a header of 36,000
 * bytes, 450 header fields), the connection kept. */
static void head_limits(void **state)
{
	const char *v11 = " HTTP/1.1\r\nHost: ebb\r\n\r\n";
	size_t pad = 8192 - strlen(padded) - 4;

	(void)state;
	/* The request target as sent: 4096 bytes. */
	raw_reply(repeat("GET /", "a", 4095, v11), 0, 404, "not_found");
	raw_reply(repeat("GET /", "a", 4096, v11), 0, 414, "uri_too_long");
	raw_reply(repeat("GET /", "a", 16 << 10, v11), 0, 414, "uri_too_long");
	raw_reply(repeat("GET /", "a", 36000, v11), 0, 414, "uri_too_long");
	/* 100 query parameters. */
	raw_reply(repeat("GET /healthz?", "p=1&", 99, "p=1 HTTP/1.1\r\nHost: ebb\r\n\r\n"), 0, 200, NULL);
	raw_reply(repeat("GET /healthz?", "p=1&", 100, "p=1 HTTP/1.1\r\nHost: ebb\r\n\r\n"), 0, 414,
		  "uri_too_long");
	/* The request line and header lines: 8192 bytes. */
	raw_reply(repeat(padded, "p", pad, "\r\n\r\n"), 0, 200, NULL);
	raw_reply(repeat(padded, "p", pad + 1, "\r\n\r\n"), 0, 431, "headers_too_large");
	raw_reply(repeat(padded, "p", 30 << 10, "\r\n\r\n"), 0, 431, "headers_too_large");
	raw_reply(repeat(padded, "p", 30 << 10, "\r\n\r\n"), 1, 431, "headers_too_large");
	raw_reply(repeat(padded, "p", 36000, "\r\n\r\n"), 0, 431, "headers_too_large");
	/* 100 header fields, Host among them, and each cookie counts. */
	raw_reply(repeat("GET /healthz HTTP/1.1\r\nHost: ebb\r\n", "X-A: 1\r\n", 99, "\r\n"), 0, 200, NULL);
	raw_reply(repeat("GET /healthz HTTP/1.1\r\nHost: ebb\r\n", "X-A: 1\r\n", 100, "\r\n"), 0, 431,
		  "headers_too_large");
	raw_reply(repeat("GET /healthz HTTP/1.1\r\nHost: ebb\r\n", "X-A: 1\r\n", 450, "\r\n"), 0, 431,
		  "headers_too_large");
	raw_reply(repeat("GET /healthz HTTP/1.1\r\nHost: ebb\r\nCookie: c=1", "; c=1", 97, "\r\n\r\n"), 0, 200,
		  NULL);
	raw_reply(repeat("GET /healthz HTTP/1.1\r\nHost: ebb\r\nCookie: c=1", "; c=1", 98, "\r\n\r\n"), 1, 431,
		  "headers_too_large");
}

/* A query of more parameters than the connection's memory holds, some
 * 550 in a short URL, is refused as any over the limit is, at once, and
 * the connection goes on: they are never read (serve/target.h), where
 * libmicrohttpd would have run out of memory reading them and left the
 * request unanswered until the connection timed out. So are those of a
 * target over its length with 100 parameters, too many to fit with it. */
static void parameters_past_memory(void **state)
{
	int64_t queued = harness_stat(srv, "states.queued");
	const char *cl = harness_fmt("\r\nContent-Length: %zu\r\n\r\n%s", strlen(job), job);
	char *long_path = repeat("GET /", "a", 33000, "?");

	(void)state;
	raw_reply(repeat("GET /healthz?", "p&", 1000, "p HTTP/1.1\r\nHost: ebb\r\n\r\n"), 0, 414, "uri_too_long");
	raw_reply(repeat("GET /healthz?", "&", 3000, " HTTP/1.1\r\nHost: ebb\r\n\r\n"), 1, 414, "uri_too_long");
	raw_reply(repeat("POST /v1/jobs?", "a=1&", 4999, harness_fmt("a=1 HTTP/1.1\r\nHost: ebb%s", cl)), 0, 414,
		  "uri_too_long");
	raw_reply(repeat(long_path, "p&", 99, "p HTTP/1.1\r\nHost: ebb\r\n\r\n"), 0, 414, "uri_too_long");
	free(long_path);
	assert_int(harness_stat(srv, "states.queued"), queued);
}

/* A refused request's body is read and dropped, so that the client gets
 * the reply and the connection goes on; it is never handled. Unless the
 * client waits for a 100 Continue, or sends a body whose end cannot be
 * found: then the reply comes first and the connection is closed. */
static void head_refused_with_body(void **state)
{
	int64_t queued = harness_stat(srv, "states.queued");
	const char *cl = harness_fmt("\r\nContent-Length: %zu\r\n\r\n%s", strlen(job), job);
	const char *gzip = "POST /v1/jobs HTTP/1.1\r\nHost: ebb\r\nTransfer-Encoding: gzip\r\n\r\n{}";
	char *req;
	struct harness_reply r;
	int fd;

	(void)state;
	raw_reply(repeat("POST /v1/jobs HTTP/1.1\r\nHost: ebb\r\nX-Pad: ", "p", 20 << 10, cl), 0, 431,
		  "headers_too_large");
	raw_reply(repeat("POST /v1/jobs HTTP/1.1\r\nHost: ebb\r\nTransfer-Encoding: chunked\r\nX-Pad: ", "p",
			 20 << 10, harness_fmt("\r\n\r\n%zx\r\n%s\r\n0\r\n\r\n", strlen(job), job)),
		  1, 431, "headers_too_large");
	assert_int(harness_stat(srv, "states.queued"), queued);

	req = repeat("POST /v1/jobs HTTP/1.1\r\nHost: ebb\r\nExpect: 100-continue\r\nX-Pad: ", "p", 20 << 10,
		     harness_fmt("\r\nContent-Length: %zu\r\n\r\n", strlen(job)));
	fd = harness_connect(srv);
	harness_exchange(fd, req, strlen(req), &r);
	assert_error(r.status, r.json, 431, "headers_too_large", NULL);
	assert_string_equal(r.content_type, "application/json");
	assert_true(r.close);
	assert_true(harness_wait_closed(fd));
	harness_reply_free(&r);
	close(fd);
	free(req);

	/* MHD would read a body in another transfer coding until the client
	 * closes. */
	fd = harness_connect(srv);
	harness_exchange(fd, gzip, strlen(gzip), &r);
	assert_error(r.status, r.json, 501, "not_implemented", NULL);
	assert_string_equal(r.content_type, "application/json");
	assert_true(r.close);
	assert_true(harness_wait_closed(fd));
	harness_reply_free(&r);
	close(fd);
	assert_int(harness_call(srv, "GET", "/healthz", NULL, NULL), 200);
}

/* libmicrohttpd 0.9.75's own replies, word for word (docs/API.md). */
#define MALFORMED                                                                \
	"<html><head><title>Request malformed</title></head><body>Your HTTP request " \
	"was syntactically incorrect.</body></html>"
#define CHUNKED_MALFORMED                                                          \
	"<html><head><title>Request malformed</title></head><body>Your HTTP chunked " \
	"encoding was syntactically incorrect.</body></html>"
#define CHUNK_TOO_LARGE                                                                  \
	"<html><head><title>Request content too large</title></head><body>The chunk size " \
	"used in your HTTP chunked encoded request is too large.</body></html>"
#define LENGTH_MALFORMED                                                                 \
	"<html><head><title>Request malformed</title></head><body>Your HTTP request has " \
	"wrong value for <b>Content-Length</b> header.</body></html>"
#define LENGTH_TOO_LARGE                                                                        \
	"<html><head><title>Request content too large</title></head><body>Your HTTP request has " \
	"too large value for <b>Content-Length</b> header.</body></html>"
#define VERSION_UNSUPPORTED                                                                  \
	"<html><head><title>Requested HTTP version is not supported</title></head><body>Requested " \
	"HTTP version is not supported.</body></html>"
#define VERSION_TOO_OLD                                                                      \
	"<html><head><title>Requested HTTP version is not supported</title></head><body>Requested " \
	"HTTP version is too old and not supported.</body></html>"
#define TOO_BIG                                                                              \
	"<html><head><title>Request too big</title></head><body>Your HTTP header was too big for " \
	"the memory constraints of this webserver.</body></html>"

/* A request the library answers itself, on s: exactly status with the
 * html body, no Content-Type, the connection closed after it. html NULL:
 * no reply at all, the connection closed. twice: the library sends its
 * status line and headers twice, so what a client reads as the body is
 * the second copy, cut to the HTML's length. second: sent after a request
 * served on the same connection. Another client is served afterwards.
 * Frees req when it is not const. */
static void library_reply(struct harness_server *s, const char *req, int second, int status,
			  const char *html, int twice)
{
	struct harness_reply r;
	int fd = exchange_expecting(s, req, second, status, &r);

	if (html) {
		assert_string_equal(r.content_type, "");
		assert_true(r.close);
		if (twice) {
			const char *line = harness_fmt("HTTP/1.1 %d ", status);
			assert_int(r.len, strlen(html));
			assert_true(strncmp(r.body, line, strlen(line)) == 0);
		} else {
			assert_string_equal(r.body, html);
		}
		assert_true(harness_wait_closed(fd));
	}
	harness_reply_free(&r);
	close(fd);
	assert_int(harness_call(s, "GET", "/healthz", NULL, NULL), 200);
}

/* The same, for a request built with repeat(). */
static void library_reply_free(struct harness_server *s, char *req, int second, int status, const char *html,
			       int twice)
{
	library_reply(s, req, second, status, html, twice);
	free(req);
}

static void library_replies(void **state)
{
	const char *v11 = " HTTP/1.1\r\nHost: ebb\r\n\r\n";
	const char *chunked = "POST /v1/jobs HTTP/1.1\r\nHost: ebb\r\nTransfer-Encoding: chunked\r\n\r\n";

	(void)state;
	/* The request line. */
	library_reply(srv, "GARBAGE\r\n\r\n", 0, -1, NULL, 0);
	library_reply(srv, " /healthz HTTP/1.1\r\nHost: ebb\r\n\r\n", 0, -1, NULL, 0);
	library_reply(srv, "GET /healthz\r\nHost: ebb\r\n\r\n", 0, 400, MALFORMED, 0);
	library_reply(srv, "GET /healthz HTTX/1.1\r\nHost: ebb\r\n\r\n", 0, 400, MALFORMED, 0);
	library_reply(srv, "GET /healthz HTTP/1.10\r\nHost: ebb\r\n\r\n", 0, 400, MALFORMED, 0);
	library_reply(srv, "GET /healthz HTTP/9.9\r\nHost: ebb\r\n\r\n", 0, 505, VERSION_UNSUPPORTED, 0);
	library_reply(srv, "GET /healthz HTTP/0.9\r\nHost: ebb\r\n\r\n", 0, 505, VERSION_TOO_OLD, 0);
	/* Header lines. */
	library_reply(srv, "GET /healthz HTTP/1.1\r\nHost: ebb\r\nNoColon\r\n\r\n", 0, 400, MALFORMED, 0);
	library_reply(srv, "GET /healthz HTTP/1.1\r\nHost: ebb\r\nNoColon\r\n\r\n", 1, 400, MALFORMED, 0);
	library_reply(srv, "POST /v1/jobs HTTP/1.1\r\nHost: ebb\r\nContent-Length: -1\r\n\r\n", 0, 400,
		      LENGTH_MALFORMED, 1);
	library_reply(srv, "POST /v1/jobs HTTP/1.1\r\nHost: ebb\r\nContent-Length: 99999999999999999999\r\n\r\n", 0,
		      413, LENGTH_TOO_LARGE, 1);
	/* Chunks. */
	library_reply_free(srv, repeat(chunked, "", 0, "zz\r\n"), 0, 400, CHUNKED_MALFORMED, 0);
	library_reply_free(srv, repeat(chunked, "", 0, "2\r\n{}XX0\r\n\r\n"), 0, 400, CHUNKED_MALFORMED, 0);
	library_reply_free(srv, repeat(chunked, "", 0, "FFFFFFFFFFFFFFFFF\r\n"), 0, 413, CHUNK_TOO_LARGE, 0);
	library_reply_free(srv, repeat(chunked, "", 0, "2\r\n{}\r\n0\r\nNoColon\r\n\r\n"), 0, 400, MALFORMED, 0);
	/* A head that does not fit in the connection's 36 KiB: a URL of
	 * 40,000 bytes or 100,000, answered at once. */
	library_reply_free(srv, repeat("GET /", "a", 40000, v11), 0, 414, TOO_BIG, 0);
	library_reply_free(srv, repeat("GET /", "a", 100000, v11), 0, 414, TOO_BIG, 0);
	library_reply_free(srv, repeat(padded, "p", 40000, "\r\n\r\n"), 0, 431, TOO_BIG, 0);
	library_reply_free(srv, repeat(padded, "p", 40000, "\r\n\r\n"), 1, 431, TOO_BIG, 0);
	library_reply_free(srv, repeat("GET /healthz HTTP/1.1\r\nHost: ebb\r\n", "X-A: 1\r\n", 600, "\r\n"), 0, 431,
			   TOO_BIG, 0);
	library_reply_free(srv, repeat("GET /healthz HTTP/1.1\r\nHost: ebb\r\nCookie: c=1", "; c=1", 600, "\r\n\r\n"),
			   0, 431, TOO_BIG, 1);
	/* One that fits, with too little room left for ebb's reply: a head
	 * of 36,708 bytes, in the middle of the 120 bytes where that is so. */
	library_reply_free(srv, repeat("GET /", "a", 36708 - 5 - strlen(v11), v11), 0, -1, NULL, 0);
}

/* What the library lets through that HTTP/1.1 would not (docs/API.md):
 * each is served by ebb. */
static void library_leniencies(void **state)
{
	const char *auth = "Authorization: Bearer " HARNESS_ADMIN "\r\n";
	const char *post = harness_fmt("POST /v1/jobs HTTP/1.1\r\nHost: ebb\r\n%s", auth);
	const char *req = "GET /healthz HTTP/1.0\r\n\r\n";
	struct harness_reply r;
	int fd = harness_connect(srv);

	(void)state;
	/* HTTP/1.0 closes after the reply, unless asked to keep the
	 * connection. */
	harness_exchange(fd, req, strlen(req), &r);
	assert_int(r.status, 200);
	assert_true(r.close);
	assert_true(harness_wait_closed(fd));
	harness_reply_free(&r);
	close(fd);
	fd = harness_connect(srv);
	req = "GET /healthz HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n";
	assert_int(harness_exchange(fd, req, strlen(req), &r), 200);
	harness_reply_free(&r);
	/* HTTP/1.2 is 1.1; no Host, bare LF line ends, a folded line. */
	req = "GET /healthz HTTP/1.2\nX-Folded: a\n b\n\n";
	assert_int(harness_exchange(fd, req, strlen(req), &r), 200);
	harness_reply_free(&r);
	/* Of two Content-Length headers the first counts; with chunked, a
	 * Content-Length is ignored. */
	req = harness_fmt("%sContent-Length: %zu\r\nContent-Length: 2\r\n\r\n%s", post, strlen(job), job);
	assert_int(harness_exchange(fd, req, strlen(req), &r), 201);
	harness_reply_free(&r);
	req = harness_fmt("%sTransfer-Encoding: chunked\r\nContent-Length: 2\r\n\r\n%zx\r\n%s\r\n0\r\n\r\n", post,
			  strlen(job), job);
	assert_int(harness_exchange(fd, req, strlen(req), &r), 201);
	harness_reply_free(&r);
	close(fd);
}

/* A request the library neither answers nor closes until the connection
 * times out: a chunk-size line longer than the memory left. */
static void library_silences(void **state)
{
	struct harness_server *s = harness_serve("[server]\nconnection_timeout = 1s\n", 0);

	(void)state;
	library_reply_free(s,
			   repeat("POST /v1/jobs HTTP/1.1\r\nHost: ebb\r\nTransfer-Encoding: chunked\r\n\r\n", "0",
				  50000, "2\r\n{}\r\n0\r\n\r\n"),
			   0, -1, NULL, 0);
	assert_int(harness_server_stop(s), 0);
	harness_server_free(s);
}

/* After all of the above the server still answers, and exits cleanly. */
static void still_healthy(void **state)
{
	json_t *r = NULL;
	int st;

	(void)state;
	st = harness_call(srv, "GET", "/healthz", NULL, &r);
	assert_int(st, 200);
	assert_string_equal(JSTR(r, "status"), "ok");
	json_decref(r);
	submit_as(ML, job);
	assert_int(harness_server_stop(srv), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(malformed_json),
		cmocka_unit_test(unknown_field),
		cmocka_unit_test(bad_values),
		cmocka_unit_test(null_is_absent),
		cmocka_unit_test(get_ignores_body),
		cmocka_unit_test(bad_queries_and_worker_bodies),
		cmocka_unit_test(authentication),
		cmocka_unit_test(roles),
		cmocka_unit_test(team_scope),
		cmocka_unit_test(not_found),
		cmocka_unit_test(not_utf8),
		cmocka_unit_test(wrong_method),
		cmocka_unit_test(conflicts),
		cmocka_unit_test(too_large),
		cmocka_unit_test(deep_nesting),
		cmocka_unit_test(queue_full),
		cmocka_unit_test(head_limits),
		cmocka_unit_test(parameters_past_memory),
		cmocka_unit_test(head_refused_with_body),
		cmocka_unit_test(library_replies),
		cmocka_unit_test(library_leniencies),
		cmocka_unit_test(library_silences),
		cmocka_unit_test(still_healthy),
	};
	return cmocka_run_group_tests(tests, start, stop);
}
