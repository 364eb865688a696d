/* What the PostgreSQL engine adds to serve: one serve per database, held
 * by an advisory lock that a crash gives up at once, so that a second
 * serve can start on the same database, or a standby waiting for it take
 * over (measured); a lost connection made again, and a serve that lost
 * its lock to a standby exiting; the password read from [postgres]
 * password_file, never written to the log; ebb store copy from SQLite.
 * Every test skips itself with another engine (EBB_TEST_STORE). */
#include <libpq-fe.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

static void postgres_only(void)
{
	if (strcmp(harness_store_kind(), "postgres") == 0)
		return;
	print_message("skipped: a test of the postgres engine (EBB_TEST_STORE=postgres)\n");
	skip();
}

/* Runs sql on the test server's database dbname as its superuser. */
static void psql(const char *dbname, const char *sql)
{
	PGconn *c = PQconnectdb(harness_fmt("%s dbname=%s", getenv("EBB_TEST_PG"), dbname));
	PGresult *r;

	if (PQstatus(c) != CONNECTION_OK)
		fail_msg("connect: %s", PQerrorMessage(c));
	r = PQexec(c, sql);
	if (PQresultStatus(r) != PGRES_COMMAND_OK && PQresultStatus(r) != PGRES_TUPLES_OK)
		fail_msg("%s: %s", sql, PQresultErrorMessage(r));
	PQclear(r);
	PQfinish(c);
}

/* The value of key in a libpq connection string of key=value words. */
static const char *conn_value(const char *conn, const char *key)
{
	const char *p = strstr(conn, harness_fmt("%s=", key));

	if (!p)
		fail_msg("no %s in '%s'", key, conn);
	p += strlen(key) + 1;
	return harness_fmt("%.*s", (int)strcspn(p, " "), p);
}

/* A second serve on the database of a first is refused, naming the
 * database; once the first is killed with -9, the server drops its lock
 * with its connection and the second starts, on the same jobs. */
static void one_serve_per_database(void **state)
{
	struct harness_server *a, *b;
	struct harness_run r;
	char url[2048];
	const char *dir;
	int64_t id, t0;

	(void)state;
	postgres_only();
	a = harness_serve(NULL, 0);
	snprintf(url, sizeof url, "%s", harness_store_url(a->data));
	id = harness_submit(a, "{\"command\": [\"true\"]}");
	dir = harness_tmpdir();
	harness_write_file(harness_fmt("%s/b.conf", dir),
			   harness_fmt("[server]\nlisten = 127.0.0.1:0\ndata_dir = %s/data\n[store]\nkind = postgres\n"
				       "[postgres]\nurl = %s\n", dir, url));
	harness_ebb(&r, NULL, "serve", "-c", harness_fmt("%s/b.conf", dir), NULL);
	assert_int(r.status, 1);
	assert_contains(r.err, "is in use by another ebb serve");
	assert_contains(r.err, conn_value(url, "dbname"));
	harness_run_free(&r);
	assert_int(harness_call(a, "GET", "/healthz", NULL, NULL), 200);

	harness_server_kill(a);
	t0 = harness_now_ms();
	/* The same database under another data dir: the url given again
	 * after the harness's own, the later one standing. */
	b = harness_serve(harness_fmt("[postgres]\nurl = %s\n", url), 0);
	print_message("second serve listening %lld ms after kill -9 of the first\n",
		      (long long)(harness_now_ms() - t0));
	assert_true(harness_job_is(b, id, "queued"));
	assert_int(harness_server_stop(b), 0);
}

/* A standby (standby = on) started while another serve holds the
 * database waits without listening; kill -9 of the first, and it takes
 * over within a second or so (printed), with the first one's jobs. */
static void standby_takes_over(void **state)
{
	struct harness_server *a, *b;
	char url[2048], *log;
	int64_t id, t0, until;

	(void)state;
	postgres_only();
	a = harness_serve(NULL, 0);
	snprintf(url, sizeof url, "%s", harness_store_url(a->data));
	id = harness_submit(a, "{\"command\": [\"true\"]}");
	b = harness_serve(harness_fmt("[postgres]\nurl = %s\nstandby = on\n", url), HARNESS_NO_WAIT);
	until = harness_now_ms() + 15000;
	while (!(log = harness_read_file(b->log, NULL)) || !strstr(log, "msg=\"standby: the database is in use")) {
		free(log);
		if (harness_now_ms() > until)
			harness_fail_with_log(b, "the standby did not say it waits");
		harness_sleep_ms(10);
	}
	assert_null(strstr(log, "msg=listening"));
	free(log);
	assert_int(harness_call(a, "GET", "/healthz", NULL, NULL), 200);

	harness_server_kill(a);
	t0 = harness_now_ms();
	harness_server_wait(b, 15000);
	print_message("standby listening %lld ms after kill -9 of the serve it stood by for\n",
		      (long long)(harness_now_ms() - t0));
	assert_true(harness_job_is(b, id, "queued"));
	assert_int(harness_server_stop(b), 0);
}

/* The database ends serve's connection (a restart, a failover): the
 * batch that meets it fails with a JSON 500, the next one connects again,
 * takes the lock again, and nothing acknowledged is lost. */
static void connection_lost_and_made_again(void **state)
{
	struct harness_server *s;
	char db[64];
	int64_t first, second = 0;
	int code = 0, tries;

	(void)state;
	postgres_only();
	s = harness_serve("[server]\nname = lost\n", 0);
	snprintf(db, sizeof db, "%s", conn_value(harness_store_url(s->data), "dbname"));
	first = harness_submit(s, "{\"command\": [\"true\"]}");
	/* Its session goes by its name (application_name). */
	psql("postgres", harness_fmt("SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
				     " WHERE datname = '%s' AND application_name = 'lost'", db));
	for (tries = 0; tries < 3 && code != 201; tries++) {
		json_t *reply = NULL;
		code = harness_call(s, "POST", "/v1/jobs", "{\"command\": [\"true\"]}", &reply);
		if (code == 201)
			second = JINT(reply, "id");
		else
			assert_int(code, 500);
		json_decref(reply);
	}
	print_message("submits after the connection was ended: %d (the last 201)\n", tries);
	assert_int(code, 201);
	assert_true(tries >= 2); /* the first met the connection ended */
	assert_true(second > first);
	assert_true(harness_job_is(s, first, "queued"));
	assert_int(harness_stat(s, "states.queued"), 2);
	assert_int(harness_server_stop(s), 0);
}

/* The serve that runs loses its connection and its standby takes the
 * lock meanwhile: at its next batch it finds the database taken and
 * exits, saying so, rather than answer 500 for ever; the standby has the
 * queue. */
static void serve_that_lost_the_lock_exits(void **state)
{
	struct harness_server *a, *b;
	char url[2048], db[64], *log;
	int64_t id, until;
	int st;

	(void)state;
	postgres_only();
	a = harness_serve(NULL, 0);
	snprintf(url, sizeof url, "%s", harness_store_url(a->data));
	snprintf(db, sizeof db, "%s", conn_value(url, "dbname"));
	id = harness_submit(a, "{\"command\": [\"true\"]}");
	b = harness_serve(harness_fmt("[postgres]\nurl = %s\nstandby = on\n", url), HARNESS_NO_WAIT);
	until = harness_now_ms() + 15000;
	while (!(log = harness_read_file(b->log, NULL)) || !strstr(log, "msg=\"standby: the database is in use")) {
		free(log);
		if (harness_now_ms() > until)
			harness_fail_with_log(b, "the standby did not say it waits");
		harness_sleep_ms(10);
	}
	free(log);
	/* a's connection, not b's, found by the lock it holds. a is stopped meanwhile: a serve that lost
	 * its connection takes the lock again at its next store call if it
	 * is still free (docs/HA.md), and a's timers would race the
	 * standby's next try for it. */
	assert_int(kill(a->pid, SIGSTOP), 0);
	psql("postgres", harness_fmt("SELECT pg_terminate_backend(l.pid) FROM pg_locks l JOIN pg_database d"
				     " ON d.oid = l.database WHERE l.locktype = 'advisory' AND l.objid = 7402"
				     " AND l.granted AND d.datname = '%s'", db));
	harness_server_wait(b, 15000);
	assert_int(kill(a->pid, SIGCONT), 0);
	/* The call that meets the lost connection answers 500; the next
	 * connects again, finds the lock taken, and gets no reply. */
	for (int tries = 0; tries < 3 && (st = harness_call(a, "GET", "/v1/jobs", NULL, NULL)) >= 0; tries++)
		assert_int(st, 500);
	assert_true(st < 0);
	until = harness_now_ms() + 15000;
	while ((st = harness_server_exited(a)) < 0) {
		if (harness_now_ms() > until)
			harness_fail_with_log(a, "the serve that lost the lock did not exit");
		harness_sleep_ms(10);
	}
	assert_int(st, 1);
	log = harness_read_file(a->log, NULL);
	assert_non_null(strstr(log, "another ebb serve took over the database"));
	free(log);
	assert_true(harness_job_is(b, id, "queued"));
	assert_int(harness_server_stop(b), 0);
}

/* The scaler's run meets the store failing (here: the connection ended
 * by the database, as at a failover): it says so, decides nothing this
 * run, and serve goes on. (A run that
 * failed before it decided once freed what it had never filled.) */
static void scaler_run_that_meets_a_store_error(void **state)
{
	const char *src = getenv("EBB_SRC");
	struct harness_server *s;
	char db[64];

	(void)state;
	postgres_only();
	setenv("EBB_TEST_PROVIDER_DIR", harness_tmpdir(), 1);
	s = harness_serve(harness_fmt("[server]\nname = sc\n[provider]\nkind = exec\n[exec]\n"
				      "command = %s/tests/exec/provider\nlist_interval = 1s\n"
				      "[offer.g1]\nprice_ondemand = 1.37\n[scaler]\ninterval = 200ms\n",
				      src && *src ? src : "."),
			  0);
	harness_own_workers(s);
	snprintf(db, sizeof db, "%s", conn_value(harness_store_url(s->data), "dbname"));
	WAIT_FOR(s, 15000, harness_file_lines(s->log, "msg=\"scaler started\"") == 1, "no scaler");
	psql("postgres", harness_fmt("SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
				     " WHERE datname = '%s' AND application_name = 'sc'", db));
	WAIT_FOR(s, 15000, harness_file_lines(s->log, "scaler: store failed") >= 1,
		 "the scaler never met the ended connection");
	/* One thread: an answer comes after the failed run is over. */
	assert_int(harness_call(s, "GET", "/healthz", NULL, NULL), 200);
	assert_int(harness_server_exited(s), -1);
	assert_int(harness_server_stop(s), 0);
}

/* ebb store copy: a SQLite store that ran jobs on a local worker (jobs
 * in several states, an instance, its ledger, the scaler's decisions)
 * into an empty database. Refused while a serve runs on the source; a
 * serve on the copy answers the same jobs and decisions as one on the
 * source; a second copy into it is refused. */
static void store_copy_from_sqlite(void **state)
{
	const char *quiet = "[provider]\nkind = none\n";
	struct harness_server *a, *b;
	struct harness_run r;
	char url[2048], from[4300], to[2100];
	json_t *jobs, *decisions, *copied;
	int64_t id;

	(void)state;
	postgres_only();
	snprintf(url, sizeof url, "%s", harness_store_url(harness_fmt("%s/pg", harness_tmpdir())));
	setenv("EBB_TEST_STORE", "sqlite", 1);
	a = harness_serve("[provider]\nkind = local\n[local]\ngpus = 0\n[scaler]\ninterval = 200ms\n"
			  "[offer.one]\nprice_ondemand = 1.0\nmax_instances = 1\n",
			  0);
	setenv("EBB_TEST_STORE", "postgres", 1);
	harness_own_workers(a);
	snprintf(from, sizeof from, "sqlite:%s", a->data);
	snprintf(to, sizeof to, "postgres:%s", url);
	for (int k = 0; k < 3; k++)
		harness_submit(a, "{\"command\": [\"true\"], \"items\": 4}");
	WAIT_FOR(a, 60000, harness_stat(a, "states.succeeded") == 3, "the jobs did not run");
	id = harness_submit(a, "{\"command\": [\"true\"], \"delay_s\": 86400}");
	json_decref(harness_call_ok(a, "POST", harness_fmt("/v1/jobs/%lld/cancel", (long long)id), "{}", 200));
	harness_submit(a, "{\"command\": [\"true\"], \"delay_s\": 86400}");

	harness_ebb(&r, NULL, "store", "copy", "--from", from, "--to", to, NULL);
	assert_int(r.status, 1);
	assert_contains(r.err, "in use by a running ebb serve");
	harness_run_free(&r);

	/* The source again, with nothing that writes: what the copy must
	 * answer the same. */
	assert_int(harness_server_stop(a), 0);
	harness_write_file(a->conf, harness_fmt("[server]\nlisten = 127.0.0.1:0\ndata_dir = %s\n%s", a->data, quiet));
	harness_server_start(a);
	jobs = harness_get(a, "/v1/jobs");
	decisions = harness_get(a, "/v1/decisions");
	assert_true(json_array_size(harness_jget(decisions, "decisions")) > 0);
	assert_int(harness_server_stop(a), 0);

	harness_ebb(&r, NULL, "store", "copy", "--from", from, "--to", to, NULL);
	if (r.status != 0)
		fail_msg("ebb store copy: %d: %s", r.status, r.err);
	assert_contains(r.out, "jobs                      5 rows");
	assert_contains(r.out, "instances                 1 rows");
	harness_run_free(&r);

	b = harness_serve(harness_fmt("[postgres]\nurl = %s\n%s", url, quiet), 0);
	copied = harness_get(b, "/v1/jobs");
	assert_true(json_equal(copied, jobs));
	json_decref(copied);
	copied = harness_get(b, "/v1/decisions");
	assert_true(json_equal(copied, decisions));
	json_decref(copied);
	/* New ids follow the copied ones; the tallies are the copied jobs'. */
	assert_int(harness_submit(b, "{\"command\": [\"true\"]}"), 6);
	copied = harness_get(b, "/v1/store/check");
	assert_true(json_is_true(harness_jget(copied, "ok")));
	assert_true(harness_jint(copied, "keys", __FILE__, __LINE__) >= 3);
	json_decref(copied);
	assert_int(harness_server_stop(b), 0);

	harness_ebb(&r, NULL, "store", "copy", "--from", from, "--to", to, NULL);
	assert_int(r.status, 1);
	assert_contains(r.err, "is not empty");
	harness_run_free(&r);
	json_decref(jobs);
	json_decref(decisions);
}

/* A role that logs in with a password over TCP: serve reads it from
 * password_file, and neither its log nor `ebb config` shows it; without
 * the file, serve does not start and says why. */
static void password_from_file(void **state)
{
	struct harness_server *s;
	struct harness_run r;
	char password[64], role[32], db[64], url[512], pwfile[4200], conf[4200], *log;
	const char *dir;

	(void)state;
	postgres_only();
	dir = harness_tmpdir();
	snprintf(password, sizeof password, "pw-%lld-%d", (long long)harness_now_ms(), rand());
	snprintf(role, sizeof role, "ebb_pw_%d", (int)getpid());
	snprintf(db, sizeof db, "%s", conn_value(harness_store_url(harness_fmt("%s/pw", dir)), "dbname"));
	psql("postgres", harness_fmt("CREATE ROLE %s LOGIN PASSWORD '%s'", role, password));
	psql("postgres", harness_fmt("ALTER DATABASE %s OWNER TO %s", db, role));
	snprintf(pwfile, sizeof pwfile, "%s/password", dir);
	harness_write_file(pwfile, harness_fmt("%s\n", password));
	snprintf(url, sizeof url, "host=127.0.0.1 port=%s user=%s dbname=%s",
		 conn_value(getenv("EBB_TEST_PG"), "port"), role, db);

	s = harness_serve(harness_fmt("[postgres]\nurl = %s\npassword_file = %s\n", url, pwfile), 0);
	assert_true(harness_submit(s, "{\"command\": [\"true\"]}") > 0);
	harness_ebb(&r, NULL, "config", "-c", s->conf, NULL);
	assert_int(r.status, 0);
	assert_null(strstr(r.out, password));
	harness_run_free(&r);
	assert_int(harness_server_stop(s), 0);
	log = harness_read_file(s->log, NULL);
	assert_non_null(log);
	assert_null(strstr(log, password));
	free(log);

	/* No password: a clear refusal. */
	snprintf(conf, sizeof conf, "%s/nopw.conf", dir);
	harness_write_file(conf, harness_fmt("[server]\nlisten = 127.0.0.1:0\ndata_dir = %s/data2\n[store]\n"
					     "kind = postgres\n[postgres]\nurl = %s\n", dir, url));
	harness_ebb(&r, NULL, "serve", "-c", conf, NULL);
	assert_int(r.status, 1);
	assert_contains(r.err, "postgres: connect:");
	assert_contains(r.err, "password");
	harness_run_free(&r);
}

#define T(fn) cmocka_unit_test_teardown(fn, harness_cleanup)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(scaler_run_that_meets_a_store_error),
		T(one_serve_per_database),
		T(standby_takes_over),
		T(connection_lost_and_made_again),
		T(serve_that_lost_the_lock_exits),
		T(store_copy_from_sqlite),
		T(password_from_file),
	};

	return cmocka_run_group_tests(tests, NULL, harness_cleanup);
}
