/* Several serves answering at once on one PostgreSQL database
 * ([postgres] active = on, docs/HA.md): the first to start leads (runs
 * the scaler), the others follow and name it; a worker waiting on one
 * serve is woken by a submit on another (LISTEN/NOTIFY); workers leasing
 * from every serve at once never get the same job twice; a lease taken
 * on a serve killed with -9 expires on another; the leader killed with
 * -9, a follower leads (measured) and starts the scaler; a follower
 * waits for the lock in the server, and a leader whose lock's session
 * ends leads on or, with another serve leading, exits; the same
 * idempotency key submitted at once on two is refused as contended, to
 * retry. Every test skips itself with another engine. */
#include <libpq-fe.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static void postgres_only(void)
{
	if (strcmp(harness_store_kind(), "postgres") == 0)
		return;
	print_message("skipped: several serves share a PostgreSQL store (EBB_TEST_STORE=postgres)\n");
	skip();
}

/* A serve on the database of first (NULL: a new database), active. */
static struct harness_server *active_serve(struct harness_server *first, const char *extra)
{
	if (!first)
		return harness_serve(harness_fmt("[postgres]\nactive = on\n%s", extra ? extra : ""), 0);
	return harness_serve(harness_fmt("[postgres]\nurl = %s\nactive = on\n%s", harness_store_url(first->data),
					 extra ? extra : ""),
			     0);
}

static const char *role(struct harness_server *s)
{
	json_t *r = harness_get(s, "/healthz");
	const char *v = harness_fmt("%s", JSTR(r, "role"));

	json_decref(r);
	return v;
}

/* ebb_serve_leader in s's /metrics. */
static int leader_gauge(struct harness_server *s)
{
	char *text = NULL, *at;
	int v;

	assert_int(harness_get_text(s, NULL, "/metrics", &text, NULL, 0), 200);
	at = strstr(text, "\nebb_serve_leader ");
	assert_non_null(at);
	v = atoi(at + strlen("\nebb_serve_leader "));
	free(text);
	return v;
}

/* A and B both answer, B naming A as the leader (GET /healthz, ebb
 * status). A worker on B long-polls; the job is submitted on A: B hears of it
 * from the database at A's commit, well before the long-poll's end, and
 * the lease B gave is completed through A, with a result, which a read
 * waiting on B for the job's end gets long before its wait is over. Each
 * serve's counts of the jobs not finished show the other's work within
 * a second or so. */
static void a_submit_on_one_wakes_a_worker_on_another(void **state)
{
	struct harness_server *a, *b;
	struct harness_async w, end;
	struct harness_run run;
	json_t *r = NULL, *h;
	int64_t id, token;

	(void)state;
	postgres_only();

	a = active_serve(NULL, "[server]\nname = a\n");
	b = active_serve(a, "[server]\nname = b\n");
	assert_string_equal(role(a), "leader");
	assert_string_equal(role(b), "follower");
	h = harness_get(b, "/healthz");
	assert_string_equal(JSTR(h, "serve"), "b");
	assert_string_equal(JSTR(h, "leader"), "a");
	json_decref(h);
	assert_int(harness_ebb(&run, b, "status", NULL), 0);
	assert_string_equal(run.out, harness_fmt("serve b at %s: follower of a, store postgres\n", b->url));
	harness_run_free(&run);
	assert_true(leader_gauge(a) == 1 && leader_gauge(b) == 0);

	harness_async_start(&w, b, "POST", "/v1/lease", "{\"worker\": \"w1\", \"wait_s\": 20}");
	harness_wait_waiting(b, 1);
	id = harness_submit(a, "{\"command\": [\"true\"]}");
	assert_int(harness_async_join(&w, &r), 200);
	assert_int(JINT(r, "job.id"), id);
	print_message("a worker waiting on B leased A's job %lld ms after it began to wait\n",
		      (long long)w.elapsed_ms);
	assert_between(w.elapsed_ms, 0, 10000); /* woken, not timed out at 20 s */
	token = JINT(r, "job.lease.token");
	json_decref(r);
	harness_async_start(&end, b, "GET", harness_fmt("/v1/jobs/%lld?wait=60s", (long long)id), NULL);
	/* B's own lease counts at once; A sees it at its next read. */
	assert_int(harness_stat(b, "states.leased"), 1);
	WAIT_FOR(a, 10000, harness_stat(a, "states.leased") == 1, "A's counts never showed B's lease");

	json_decref(harness_call_ok(a, "POST", harness_fmt("/v1/jobs/%lld/complete", (long long)id),
				    harness_fmt("{\"lease_token\": %lld, \"result\": {\"n\": 3}}", (long long)token),
				    200));
	assert_int(harness_async_join(&end, &r), 200);
	assert_string_equal(JSTR(r, "state"), "succeeded");
	assert_int(JINT(r, "result.n"), 3);
	print_message("a read waiting on B for the job's end was answered after %lld ms\n", (long long)end.elapsed_ms);
	assert_between(end.elapsed_ms, 0, 30000); /* woken, not timed out at 60 s */
	json_decref(r);
	assert_true(harness_job_is(b, id, "succeeded"));
	assert_int(harness_stat(a, "states.leased"), 0);
	WAIT_FOR(b, 10000, harness_stat(b, "states.leased") == 0, "B's counts never showed A's complete");
	assert_int(harness_server_stop(b), 0);
	assert_int(harness_server_stop(a), 0);
}

/* The leader plans for a job submitted on a follower at the follower's
 * word, with the job in its counts: its launch comes within a second or
 * two of the submit, not at its look every 10 s (the word alone, with
 * counts a second old, found no job and launched nothing). */
static void a_submit_on_a_follower_is_planned_at_once(void **state)
{
	const char *scale = "[provider]\nkind = local\n[local]\ngpus = 0\n[scaler]\ninterval = 200ms\n"
			    "[offer.one]\ngpus = 1\nprice_ondemand = 1.0\n";
	struct harness_server *a, *b;
	json_t *job, *d, *first;
	double created, at;
	int64_t id;

	(void)state;
	postgres_only();
	a = active_serve(NULL, scale);
	harness_own_workers(a);
	b = active_serve(a, scale);
	harness_own_workers(b);
	assert_string_equal(role(a), "leader");
	/* The leader's first runs are behind it. */
	WAIT_FOR(a, 10000, harness_stat(a, "states.queued") == 0, "no stats");
	id = harness_submit(b, "{\"command\": [\"true\"]}");
	WAIT_FOR(a, 30000, harness_job_is(a, id, "succeeded"), "the job did not run");
	job = harness_get_job(a, id);
	created = JNUM(job, "created_at");
	json_decref(job);
	d = harness_get(a, "/v1/decisions?limit=1000");
	first = json_array_get(harness_jget(d, "decisions"), json_array_size(harness_jget(d, "decisions")) - 1);
	assert_non_null(first);
	assert_string_equal(JSTR(first, "kind"), "launch");
	at = JNUM(first, "at");
	json_decref(d);
	print_message("the leader launched %.3f s after the submit on the follower\n", at - created);
	assert_true(at - created < 2.0);
	assert_int(harness_server_stop(b), 0);
	assert_int(harness_server_stop(a), 0);
}

/* ---- many workers on every serve ---- */

#define NJOBS 300
#define NLEASERS 4
#define NBIG 40 /* more than LEASE_WINDOW */

struct leaser {
	const char *url;
	char name[16];
	int n;
	int64_t ids[NJOBS];
	int bad; /* a call answered what it must not */
	char why[256];
};

/* Leases and completes until the queue is empty. */
static void *lease_all(void *arg)
{
	struct leaser *l = arg;
	struct client c;

	if (client_init(&c, l->url, NULL, NULL) != 0) {
		snprintf(l->why, sizeof l->why, "client: %.200s", c.err);
		l->bad = 1;
		return NULL;
	}
	for (;;) {
		json_t *body = json_pack("{s:s, s:i}", "worker", l->name, "wait_s", 0), *r = NULL, *job;
		int st = client_call(&c, "POST", "/v1/lease", body, &r);
		char path[128];
		json_decref(body);
		job = json_object_get(r, "job");
		if (st != 200 || !job) {
			if (st != 200) {
				char *text = json_dumps(r, JSON_COMPACT);
				snprintf(l->why, sizeof l->why, "lease answered %d: %.200s", st, text ? text : "");
				free(text);
				l->bad = 1;
			}
			json_decref(r);
			break;
		}
		if (json_is_null(job)) {
			json_decref(r);
			break;
		}
		l->ids[l->n++] = json_integer_value(json_object_get(job, "id"));
		snprintf(path, sizeof path, "/v1/jobs/%lld/complete",
			 (long long)json_integer_value(json_object_get(job, "id")));
		body = json_pack("{s:I}", "lease_token",
				 (json_int_t)json_integer_value(json_object_get(json_object_get(job, "lease"), "token")));
		json_decref(r);
		r = NULL;
		st = client_call(&c, "POST", path, body, &r);
		json_decref(body);
		json_decref(r);
		if (st != 200) {
			snprintf(l->why, sizeof l->why, "complete %s answered %d", path, st);
			l->bad = 1;
			break;
		}
		if (l->n == NJOBS)
			break;
	}
	client_free(&c);
	return NULL;
}

/* 300 jobs, two serves, two workers on each leasing and completing as
 * fast as they can: every job is leased exactly once (SKIP LOCKED across
 * the serves' open batches), on its first attempt, and succeeds. Ahead
 * of them in the lease order, more eight-GPU jobs than a lease's window,
 * which no worker fits: every lease seeks the heads of the classes, and
 * passes over a head another serve's batch holds. */
static void no_job_is_leased_twice(void **state)
{
	struct harness_server *a, *b;
	static struct leaser l[NLEASERS];
	pthread_t t[NLEASERS];
	static int seen[NJOBS + 1];
	json_t *jobs, *r;
	char *text;
	int64_t first = 0, total = 0;

	(void)state;
	postgres_only();
	a = active_serve(NULL, NULL);
	b = active_serve(a, NULL);
	jobs = json_array();
	for (int i = 0; i < NBIG; i++)
		json_array_append_new(jobs, json_pack("{s:[s], s:i, s:i}", "command", "true", "gpus", 8, "priority", 5));
	text = json_dumps(jobs, JSON_COMPACT);
	json_decref(harness_call_ok(a, "POST", "/v1/jobs", text, 200));
	free(text);
	json_decref(jobs);
	jobs = json_array();
	for (int i = 0; i < NJOBS; i++)
		json_array_append_new(jobs, json_pack("{s:[s]}", "command", "true"));
	text = json_dumps(jobs, JSON_COMPACT);
	r = harness_call_ok(b, "POST", "/v1/jobs", text, 200);
	free(text);
	json_decref(jobs);
	first = JINT(r, "jobs.0.id");
	json_decref(r);

	memset(l, 0, sizeof l);
	memset(seen, 0, sizeof seen);
	for (int i = 0; i < NLEASERS; i++) {
		l[i].url = i % 2 ? b->url : a->url;
		snprintf(l[i].name, sizeof l[i].name, "w%d", i);
		assert_int(pthread_create(&t[i], NULL, lease_all, &l[i]), 0);
	}
	for (int i = 0; i < NLEASERS; i++) {
		pthread_join(t[i], NULL);
		if (l[i].bad)
			harness_fail_with_log(i % 2 ? b : a, "leaser %d: %s", i, l[i].why);
		print_message("leaser %d on %s: %d jobs\n", i, i % 2 ? "B" : "A", l[i].n);
		for (int k = 0; k < l[i].n; k++) {
			int64_t j = l[i].ids[k] - first;
			assert_between(j, 0, NJOBS - 1);
			if (seen[j]++)
				fail_msg("job %lld leased twice", (long long)l[i].ids[k]);
			total++;
		}
	}
	assert_int(total, NJOBS);
	for (int i = 0; i < NJOBS; i += 37) {
		json_t *job = harness_get_job(i % 2 ? a : b, first + i);
		assert_string_equal(JSTR(job, "state"), "succeeded");
		assert_int(JINT(job, "attempts"), 1);
		json_decref(job);
	}
	WAIT_FOR(a, 10000, harness_stat(a, "states.queued") == NBIG && harness_stat(a, "states.leased") == 0,
		 "A's counts never showed the queue empty but for the big jobs");
	WAIT_FOR(b, 10000, harness_stat(b, "states.queued") == NBIG && harness_stat(b, "states.leased") == 0,
		 "B's counts never showed the queue empty but for the big jobs");
	/* The tallies both kept in their transactions at once equal a
	 * count of the jobs. */
	r = harness_get(b, "/v1/store/check");
	if (!json_is_true(harness_jget(r, "ok")))
		fail_msg("the tallies differ: %s", json_dumps(r, 0));
	json_decref(r);
	assert_int(harness_server_stop(b), 0);
	assert_int(harness_server_stop(a), 0);
}

/* A lease taken on B, B killed with -9: A puts the job back when the
 * lease runs out, by the deadline B set (A learns of it from the
 * database), and a worker on A gets it, its second attempt. */
static void a_lease_of_a_dead_serve_expires_on_another(void **state)
{
	struct harness_server *a, *b;
	json_t *r;
	int64_t id;

	(void)state;
	postgres_only();
	a = active_serve(NULL, NULL);
	b = active_serve(a, NULL);
	id = harness_submit(a, "{\"command\": [\"true\"]}");
	r = harness_call_ok(b, "POST", "/v1/lease", "{\"worker\": \"w1\", \"lease_s\": 1}", 200);
	assert_int(JINT(r, "job.id"), id);
	json_decref(r);
	harness_server_kill(b);
	WAIT_FOR(a, 15000, harness_job_is(a, id, "queued"), "A never expired the lease B gave");
	r = harness_call_ok(a, "POST", "/v1/lease", "{\"worker\": \"w2\"}", 200);
	assert_int(JINT(r, "job.id"), id);
	assert_int(JINT(r, "job.attempts"), 2);
	json_decref(r);
	assert_int(harness_server_stop(a), 0);
}

/* Only the leader runs the scaler; killed with -9, the follower takes
 * the lock within a second or so (printed), says it leads, and starts
 * its scaler, which reads the fleet back from the store as a restarted
 * serve's does (docs/HA.md). */
static void a_follower_leads_when_the_leader_dies(void **state)
{
	struct harness_server *a, *b;
	json_t *r;
	int64_t t0;
	const char *prov = "[provider]\nkind = local\n[local]\ngpus = 0\n";

	(void)state;
	postgres_only();
	a = active_serve(NULL, prov);
	b = active_serve(a, prov);
	harness_own_workers(a);
	harness_own_workers(b);
	assert_string_equal(role(b), "follower");
	assert_int(harness_file_lines(a->log, "msg=\"scaler started\""), 1);
	assert_int(harness_file_lines(b->log, "msg=\"scaler started\""), 0);
	r = harness_call_ok(b, "POST", "/v1/fleet/1/reclaim", NULL, 409);
	assert_contains(JSTR(r, "error.message"), "this serve follows");
	json_decref(r);
	harness_server_kill(a);
	t0 = harness_now_ms();
	WAIT_FOR(b, 15000, strcmp(role(b), "leader") == 0, "B never came to lead");
	print_message("the follower leads %lld ms after kill -9 of the leader\n", (long long)(harness_now_ms() - t0));
	assert_int(harness_file_lines(b->log, "msg=\"scaler started\""), 1);
	assert_int(harness_call(b, "GET", "/v1/scale", NULL, NULL), 200);
	assert_int(harness_server_stop(b), 0);
}

/* The first column of the first row of sql on conn, as an integer. */
static long long sql_int(PGconn *conn, const char *sql)
{
	PGresult *r = PQexec(conn, sql);
	long long v;

	if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) < 1)
		fail_msg("%s: %s", sql, PQresultErrorMessage(r));
	v = atoll(PQgetvalue(r, 0, 0));
	PQclear(r);
	return v;
}

/* Ends the session that holds the leader's lock, as a server restart or a
 * network cut would; 1 if there was one. */
static int cut_the_leaders_lock(PGconn *conn)
{
	return sql_int(conn, "SELECT count(pg_terminate_backend(pid)) FROM pg_locks WHERE locktype = 'advisory'"
			     " AND classid = 0 AND objid = 7402 AND objsubid = 1 AND granted") == 1;
}

/* A follower waits for the leader's lock inside the server, asking
 * nothing meanwhile (its session is seen waiting on the lock). The
 * leader whose lock's session ends takes it again while it is free and
 * goes on leading; when a follower got it first, that one leads and the
 * old leader exits (docs/HA.md). */
static void the_lock_is_waited_for_in_the_server(void **state)
{
	struct harness_server *a, *b;
	PGconn *conn;
	int st;

	(void)state;
	postgres_only();
	a = active_serve(NULL, NULL);
	conn = PQconnectdb(harness_store_url(a->data));
	if (PQstatus(conn) != CONNECTION_OK)
		fail_msg("connect: %s", PQerrorMessage(conn));
	assert_true(cut_the_leaders_lock(conn));
	WAIT_FOR(a, 15000, harness_file_lines(a->log, "asking again") == 1, "A never asked for its lock again");
	WAIT_FOR(a, 15000, sql_int(conn, "SELECT count(*) FROM pg_locks WHERE objid = 7402 AND granted") == 1,
		 "A never took its lock again");
	assert_string_equal(role(a), "leader");
	assert_int(harness_server_exited(a), -1);

	b = active_serve(a, NULL);
	assert_string_equal(role(b), "follower");
	WAIT_FOR(b, 15000,
		 sql_int(conn, "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
			       " AND query LIKE '%pg_advisory_lock(7402)%'") == 1,
		 "B's session never waited for the lock in the server");
	assert_true(cut_the_leaders_lock(conn));
	WAIT_FOR(b, 15000, strcmp(role(b), "leader") == 0, "B never came to lead");
	for (int64_t until = harness_now_ms() + 15000; (st = harness_server_exited(a)) < 0;) {
		if (harness_now_ms() > until)
			harness_fail_with_log(a, "A led on with another serve holding the lock");
		harness_sleep_ms(20);
	}
	assert_int(st, 1);
	assert_int(harness_file_lines(a->log, "another ebb serve leads now: exiting"), 1);
	PQfinish(conn);
	assert_int(harness_server_stop(b), 0);
}

/* Runs sql on conn; fails the test unless it worked. */
static void sql_ok(PGconn *conn, const char *sql)
{
	PGresult *r = PQexec(conn, sql);

	if (PQresultStatus(r) != PGRES_COMMAND_OK && PQresultStatus(r) != PGRES_TUPLES_OK)
		fail_msg("%s: %s", sql, PQresultErrorMessage(r));
	PQclear(r);
}

/* The same idempotency key submitted on another serve at once (here: a
 * transaction of the test's own, open, that holds a job with the key):
 * the serve's insert waits for it, and once it commits, the request is
 * answered 503 contended, nothing kept; a retry finds the other's job. */
static void a_key_submitted_twice_at_once_is_contended(void **state)
{
	struct harness_server *a;
	struct harness_async w;
	PGconn *conn;
	json_t *r = NULL;
	int64_t id, until;

	(void)state;
	postgres_only();
	a = active_serve(NULL, NULL);
	id = harness_submit(a, "{\"command\": [\"true\"]}");
	conn = PQconnectdb(harness_store_url(a->data));
	if (PQstatus(conn) != CONNECTION_OK)
		fail_msg("connect: %s", PQerrorMessage(conn));
	sql_ok(conn, harness_fmt("BEGIN; CREATE TEMP TABLE t AS SELECT * FROM jobs WHERE id = %lld;"
				 " UPDATE t SET id = id + 1000000, idem_key = 'race';"
				 " INSERT INTO jobs OVERRIDING SYSTEM VALUE SELECT * FROM t",
				 (long long)id));
	harness_async_start(&w, a, "POST", "/v1/jobs", "{\"command\": [\"true\"], \"idempotency_key\": \"race\"}");
	/* The serve's insert waits for the test's transaction. */
	for (until = harness_now_ms() + 15000;;) {
		PGresult *q = PQexec(conn, "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'");
		int waiting = PQresultStatus(q) == PGRES_TUPLES_OK && atoi(PQgetvalue(q, 0, 0)) > 0;
		PQclear(q);
		if (waiting)
			break;
		if (harness_now_ms() > until)
			harness_fail_with_log(a, "the serve's insert never waited for the other transaction");
		harness_sleep_ms(20);
	}
	sql_ok(conn, "COMMIT");
	PQfinish(conn);
	assert_int(harness_async_join(&w, &r), 503);
	assert_string_equal(JSTR(r, "error.code"), "contended");
	assert_contains(JSTR(r, "error.message"), "jobs_idem");
	json_decref(r);
	/* The retry meets the other's job (of another body here: a conflict). */
	r = harness_call_ok(a, "POST", "/v1/jobs", "{\"command\": [\"true\"], \"idempotency_key\": \"race\"}", 409);
	assert_string_equal(JSTR(r, "error.code"), "idempotency_conflict");
	json_decref(r);
	assert_int(harness_server_stop(a), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(a_submit_on_one_wakes_a_worker_on_another, harness_cleanup),
		cmocka_unit_test_teardown(a_submit_on_a_follower_is_planned_at_once, harness_cleanup),
		cmocka_unit_test_teardown(no_job_is_leased_twice, harness_cleanup),
		cmocka_unit_test_teardown(a_lease_of_a_dead_serve_expires_on_another, harness_cleanup),
		cmocka_unit_test_teardown(a_follower_leads_when_the_leader_dies, harness_cleanup),
		cmocka_unit_test_teardown(a_key_submitted_twice_at_once_is_contended, harness_cleanup),
		cmocka_unit_test_teardown(the_lock_is_waited_for_in_the_server, harness_cleanup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
