/* The tallies serve keeps of its jobs (store/counts.h), which the
 * scaler's demand, /metrics and the counts read instead of the jobs:
 * `ebb store check` (GET /v1/store/check) finds them equal to a recount
 * after jobs of many classes came and went, finds a job changed behind
 * serve's back, and finds them equal again after kill -9 and a restart.
 * Both engines: on PostgreSQL the tallies are rows the writers keep in
 * their transactions, and the change behind serve's back is one to
 * those rows. */
#include <libpq-fe.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static int postgres(void) { return strcmp(harness_store_kind(), "postgres") == 0; }

/* Jobs of several lanes, types, teams, sizes and priorities, with and
 * without estimates, some delayed, some cancelled. */
static void submit_mix(struct harness_server *s, int n)
{
	static const char *const lanes[] = {"express", "standard", "batch"};
	static const char *const types[] = {"train", "infer"};

	for (int k = 0; k < n; k++) {
		int64_t id = harness_submit(
			s, harness_fmt("{\"command\": [\"true\"], \"lane\": \"%s\", \"type\": \"%s\", \"team\": \"%s\","
				       " \"gpus\": %d, \"priority\": %d, \"items\": %d%s%s}",
				       lanes[k % 3], types[k % 2], k % 4 ? "a" : "b", 1 + k % 2, k % 5, 1 + k % 7,
				       k % 3 ? ", \"est_s\": 30" : "", k % 11 == 0 ? ", \"delay_s\": 3600" : ""));
		if (k % 6 == 0)
			json_decref(harness_call_ok(s, "POST", harness_fmt("/v1/jobs/%lld/cancel", (long long)id), "{}",
						    200));
	}
}

static struct harness_server *serve(void)
{
	return harness_serve("[provider]\nkind = none\n[queue]\nlanes = express,standard,batch\n"
			     "[team.a]\nquota_gpus = 4\n[team.b]\nquota_gpus = 4\n"
			     "[token.sub]\nsecret = submit-secret-0123456789\nrole = submit\nteam = a\n",
			     HARNESS_TOKENS);
}

/* `ebb store check` as it runs: its exit status, and what it printed. */
static int check(struct harness_server *s, struct harness_run *r)
{
	harness_ebb(r, s, "store", "check", NULL);
	return r->status;
}

static void tallies_equal_a_recount(void **state)
{
	struct harness_server *s = serve();
	struct harness_run r;
	json_t *reply;

	(void)state;
	submit_mix(s, 60);
	if (check(s, &r) != 0)
		harness_fail_with_log(s, "ebb store check: %d\n%s%s", r.status, r.out, r.err);
	assert_contains(r.out, ", 0 differ");
	harness_run_free(&r);
	reply = harness_get(s, "/v1/store/check");
	assert_true(json_is_true(harness_jget(reply, "ok")));
	assert_true(harness_jint(reply, "keys", __FILE__, __LINE__) >= 20);
	assert_int(json_array_size(harness_jget(reply, "differences")), 0);
	assert_string_equal(harness_jstr(reply, "store"), harness_store_kind());
	json_decref(reply);
	/* An admin's call. */
	assert_int(harness_call_as(s, "submit-secret-0123456789", "GET", "/v1/store/check", NULL, &reply), 403);
	json_decref(reply);
	assert_int(harness_server_stop(s), 0);
}

/* Runs sql on serve's store behind its back. */
static void behind_serve(struct harness_server *s, const char *sql)
{
	if (postgres()) {
		PGconn *c = PQconnectdb(harness_store_url(s->data));
		PGresult *res = PQexec(c, sql);
		if (PQresultStatus(res) != PGRES_COMMAND_OK)
			fail_msg("%s: %s", sql, PQresultErrorMessage(res));
		PQclear(res);
		PQfinish(c);
	} else {
		sqlite3 *db;
		char *err = NULL;
		if (sqlite3_open(harness_fmt("%s/ebb.db", s->data), &db) != SQLITE_OK)
			fail_msg("open: %s", sqlite3_errmsg(db));
		sqlite3_busy_timeout(db, 10000);
		if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK)
			fail_msg("%s: %s", sql, err);
		sqlite3_close(db);
	}
}

static void a_change_behind_serve_is_found(void **state)
{
	struct harness_server *s = serve();
	struct harness_run r;
	json_t *reply, *d;

	(void)state;
	submit_mix(s, 12);
	behind_serve(s, postgres() ? "UPDATE job_tallies SET n = n + 5 WHERE state = 'queued' AND lane = 'batch'"
				   : "UPDATE jobs SET lane = 'batch', state = 'queued' WHERE id = 1");
	assert_int(check(s, &r), 1);
	assert_contains(r.err, "the tallies differ from a count of the jobs");
	assert_contains(r.out, "queued lane=batch");
	harness_run_free(&r);
	reply = harness_get(s, "/v1/store/check");
	assert_false(json_is_true(harness_jget(reply, "ok")));
	d = harness_find(reply, "differences", "lane", "batch");
	assert_non_null(d);
	assert_string_equal(harness_jstr(d, "state"), "queued");
	assert_true(harness_jint(d, "kept.jobs", __FILE__, __LINE__) != harness_jint(d, "counted.jobs", __FILE__, __LINE__));
	json_decref(reply);
	assert_int(harness_server_stop(s), 0);
}

/* Submits and cancels under way when serve dies: what was acknowledged
 * is in the jobs and in the tallies alike. */
static void tallies_survive_kill_9(void **state)
{
	struct harness_server *s = serve();
	struct harness_async a;
	struct harness_run r;
	json_t *reply;

	(void)state;
	submit_mix(s, 30);
	harness_async_start(&a, s, "POST", "/v1/jobs",
			    "[{\"command\": [\"true\"], \"lane\": \"batch\"}, {\"command\": [\"true\"], \"gpus\": 2}]");
	harness_server_kill(s);
	(void)harness_async_join(&a, &reply);
	json_decref(reply);
	harness_server_start(s);
	if (check(s, &r) != 0)
		harness_fail_with_log(s, "ebb store check after kill -9: %d\n%s%s", r.status, r.out, r.err);
	harness_run_free(&r);
	submit_mix(s, 12);
	if (check(s, &r) != 0)
		harness_fail_with_log(s, "ebb store check after more jobs: %d\n%s%s", r.status, r.out, r.err);
	harness_run_free(&r);
	assert_int(harness_server_stop(s), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(tallies_equal_a_recount, harness_cleanup),
		cmocka_unit_test_teardown(a_change_behind_serve_is_found, harness_cleanup),
		cmocka_unit_test_teardown(tallies_survive_kill_9, harness_cleanup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
