/* What the PostgreSQL engine adds to serve: one serve per database, held
 * by an advisory lock that a crash gives up at once, so that a second
 * serve can start on the same database, or a standby waiting for it take
 * over (measured); a lost connection made again, and a serve that lost
 * its lock to a standby exiting; the password read from [postgres]
 * password_file, never written to the log; ebb store copy from SQLite;
 * the lease read in lease order from its index before the database has
 * any statistics. Every test skips itself with another engine
 * (EBB_TEST_STORE). */
#include <libpq-fe.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "policy/lease_order.h"
#include "store/engine.h"
#include "store/store.h"

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

/* What auto_explain said, NOTICEs appended. */
static void collect_notice(void *arg, const char *message)
{
	char *buf = arg;
	size_t n = strlen(buf);

	snprintf(buf + n, 65536 - n, "%s", message);
}

/* A connection to db whose plans auto_explain tells it as NOTICEs. */
static PGconn *explaining(const char *db)
{
	PGconn *c = PQconnectdb(harness_fmt("%s dbname=%s", getenv("EBB_TEST_PG"), db));

	if (PQstatus(c) != CONNECTION_OK)
		fail_msg("connect: %s", PQerrorMessage(c));
	PQclear(PQexec(c, "LOAD 'auto_explain'; SET auto_explain.log_min_duration = 0;"
			  " SET auto_explain.log_nested_statements = on; SET auto_explain.log_level = notice"));
	return c;
}

/* The plans of ebb_next_ready's query, the one the store runs for a
 * lease (S_NEXT_READY, S_NEXT_READY_AFTER), for the offer whose
 * parameters args are, as the server ran them on connection c (from
 * explaining()): auto_explain logs the nested query's plan to this
 * client. Ten calls, rolled back, so that the plan the function caches
 * after five (a generic one) is among them. */
static const char *session_plans(PGconn *c, const char *args)
{
	static char notices[65536];
	char sql[8192];
	PGresult *r;

	notices[0] = '\0';
	PQsetNoticeProcessor(c, collect_notice, notices);
	PQclear(PQexec(c, "BEGIN"));
	snprintf(sql, sizeof sql, "SELECT id FROM ebb_next_ready(%s)", args);
	for (int k = 0; k < 10; k++) {
		r = PQexec(c, sql);
		if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1)
			fail_msg("ebb_next_ready(%s): %s (%d rows)", args, PQresultErrorMessage(r), PQntuples(r));
		PQclear(r);
	}
	PQclear(PQexec(c, "ROLLBACK"));
	return notices;
}

/* The same on a connection of their own. */
static const char *next_ready_plans(const char *db, const char *args)
{
	PGconn *c = explaining(db);
	const char *plans = session_plans(c, args);

	PQfinish(c);
	return plans;
}

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

/* Leases the next n jobs, in one batch or in a batch each, as the queue
 * does (each read, then written back leased), and checks that they are
 * the next n of want, the lease order; prints how long the reads took,
 * the slowest too. */
static void lease_in_order(struct harness_store *h, const struct lease_offer *o, const struct lease_key *want,
			   int n, int one_batch)
{
	double total = 0, slowest = 0;

	for (int k = 0; k < n; k++) {
		struct job j;
		double t0, us;
		if (k == 0 || !one_batch)
			STORE_OK(h, store_begin(h->st));
		t0 = now_us();
		STORE_OK(h, store_job_next_ready(h->st, o, &j));
		us = now_us() - t0;
		total += us;
		slowest = us > slowest ? us : slowest;
		if (j.id != want[k].id)
			fail_msg("lease %d: job %lld, where the lease order has %lld", k, (long long)j.id,
				 (long long)want[k].id);
		j.state = JOB_LEASED;
		STORE_OK(h, store_job_update(h->st, &j));
		job_free(&j);
		if (k == n - 1 || !one_batch)
			STORE_OK(h, store_commit(h->st));
	}
	print_message("%d leases in %s: %.0f us each on average, the slowest %.0f us\n", n,
		      one_batch ? "one batch" : "a batch each", total / n, slowest);
}

/* A burst of 50,000 queued jobs, submitted through the store into a fresh
 * database whose jobs table no analyze may visit (autovacuum off for it):
 * the planner knows nothing of them, and would sort them all for each
 * lease (it did: 200 ms a lease, until autovacuum's first analyze).
 * Each lease's query reads jobs_ready_order in lease order and stops at
 * the first row, with every offer's parameters and in the plan the
 * function caches, and leases come out in the policy's order; a lease
 * whose offer fits none of the burst, only a few jobs behind it, seeks
 * the heads of the classes instead (jobs_class_order). The
 * leases' times are printed, not held to a bound: this machine's load is
 * not the store's. */
static void lease_reads_the_index_before_any_analyze(void **state)
{
	enum { NJOBS = 50000, PER_BATCH = 1000, NLEASES = 100 };
	struct harness_store *h = *state;
	struct lease_offer plain = {.gpus = 1, .vram_gb = 80};
	struct lease_key *keys;
	const char *plans;
	char db[64], *classes;
	PGconn *c;
	PGresult *r;
	double t0;

	postgres_only(); /* before the allocation: a skip returns from here */
	keys = calloc(NJOBS, sizeof *keys);
	snprintf(db, sizeof db, "%s", conn_value(harness_store_url(h->dir), "dbname"));
	psql(db, "ALTER TABLE jobs SET (autovacuum_enabled = false)");
	t0 = now_us();
	for (int b = 0; b < NJOBS / PER_BATCH; b++) {
		STORE_OK(h, store_begin(h->st));
		for (int k = b * PER_BATCH; k < (b + 1) * PER_BATCH; k++) {
			struct job j = {.gpus = 1, .items = 1, .max_attempts = 3, .created_ms = 1, .updated_ms = 1};
			snprintf(j.lane, sizeof j.lane, "%s", k % 3 ? "batch" : "express");
			snprintf(j.type, sizeof j.type, "%s", k % 4 ? "train" : "infer");
			snprintf(j.team, sizeof j.team, "t%d", k % 2);
			j.lane_rank = k % 3 ? 1 : 0;
			j.priority = (k * 7) % 5;
			j.labels = k % 5 ? NULL : strdup("[\"a\"]");
			STORE_OK(h, store_job_insert(h->st, &j));
			keys[k] = (struct lease_key){.lane_rank = j.lane_rank, .priority = j.priority, .id = j.id};
			job_free(&j);
		}
		STORE_OK(h, store_commit(h->st));
	}
	/* Behind them all, a few of a type the burst has none of. */
	STORE_OK(h, store_begin(h->st));
	for (int k = 0; k < 5; k++) {
		struct job j = {.gpus = 1, .items = 1, .max_attempts = 3, .created_ms = 1, .updated_ms = 1,
				.lane_rank = 1};
		snprintf(j.lane, sizeof j.lane, "batch");
		snprintf(j.type, sizeof j.type, "embed");
		snprintf(j.team, sizeof j.team, "t0");
		STORE_OK(h, store_job_insert(h->st, &j));
		job_free(&j);
	}
	STORE_OK(h, store_commit(h->st));
	print_message("%d jobs submitted in %.1f s\n", NJOBS, (now_us() - t0) / 1e6);
	qsort(keys, NJOBS, sizeof *keys, lease_compare);

	/* Never analyzed, nor vacuumed: no statistics at all. */
	c = PQconnectdb(harness_fmt("%s dbname=%s", getenv("EBB_TEST_PG"), db));
	r = PQexec(c, "SELECT reltuples FROM pg_class WHERE relname = 'jobs'");
	assert_int(PQresultStatus(r), PGRES_TUPLES_OK);
	assert_string_equal(PQgetvalue(r, 0, 0), "-1");
	PQclear(r);
	PQfinish(c);

	/* The offers' parameters as the store sends them: gpus, VRAM, the
	 * types at their limit, the labels, the teams' room, the queued
	 * classes the offer fits; then the point of the lease order to
	 * start past (from below every job's, or past the first job's). */
	classes = offer_classes_json(h->st, &plain);
	for (int k = 0; k < 4; k++) {
		const char *offer = k % 2 ? "1, 80, NULL, NULL, NULL"
					  : "1, 80, '[\"infer\"]', '[\"a\"]', '{\"t1\": \"8\"}'";
		const char *from = k < 2 ? "-1, 0, 0, 0"
					 : harness_fmt("%d, %d, 0, %lld", keys[0].lane_rank, -keys[0].priority,
						       (long long)keys[0].id);
		char args[8192];
		snprintf(args, sizeof args, "%s, '%s', %s", offer, classes, from);
		plans = next_ready_plans(db, args);
		assert_contains(plans, "Index Scan using jobs_ready_order on jobs");
		assert_contains(plans, "Limit");
		if (strstr(plans, "Sort") || strstr(plans, "Bitmap") || strstr(plans, "Seq Scan"))
			fail_msg("a lease's plan reads more than the index in order:\n%s", plans);
	}

	free(classes);

	/* An offer that refuses every type of the burst: the window holds
	 * none it fits, and the lease seeks the heads of the classes it
	 * fits, the one of the five, never reading the burst. */
	{
		const char *refused[] = {"train", "infer"};
		struct lease_offer behind = {.gpus = 1, .vram_gb = 80, .full_types = refused, .nfull_types = 2};
		struct job j;
		classes = offer_classes_json(h->st, &behind);
		assert_string_equal(classes, "[{\"lane\":\"batch\",\"type\":\"embed\",\"team\":\"t0\",\"gpus\":1,"
					     "\"min_vram_gb\":0,\"priority\":0}]");
		plans = next_ready_plans(db, harness_fmt("1, 80, '[\"train\", \"infer\"]', NULL, NULL, '%s', -1, 0, 0, 0",
							 classes));
		free(classes);
		assert_contains(plans, "Index Scan using jobs_class_order on jobs");
		if (strstr(plans, "Bitmap") || strstr(plans, "Seq Scan"))
			fail_msg("a lease past the burst reads more than index seeks:\n%s", plans);
		STORE_OK(h, store_begin(h->st));
		t0 = now_us();
		STORE_OK(h, store_job_next_ready(h->st, &behind, &j));
		print_message("a lease behind %d jobs it cannot take: %.0f us\n", NJOBS, now_us() - t0);
		assert_string_equal(j.type, "embed");
		job_free(&j);
		STORE_OK(h, store_commit(h->st));
	}

	lease_in_order(h, &plain, keys, NLEASES, 1);
	lease_in_order(h, &plain, keys + NLEASES, NLEASES, 0);
	free(keys);
}

/* n queued one-GPU jobs of three lanes and two types, in batches of
 * 1,000 as submits come: the id of the first. */
static int64_t insert_jobs(struct harness_store *h, int n)
{
	static const char *const lanes[] = {"express", "standard", "batch"};
	int64_t first = 0;

	for (int b = 0; b < (n + 999) / 1000; b++) {
		STORE_OK(h, store_begin(h->st));
		for (int k = b * 1000; k < n && k < (b + 1) * 1000; k++) {
			struct job j = {.gpus = 1, .items = 1, .max_attempts = 3, .created_ms = 1, .updated_ms = 1,
					.lane_rank = k % 3};
			snprintf(j.lane, sizeof j.lane, "%s", lanes[k % 3]);
			snprintf(j.type, sizeof j.type, "%s", k % 2 ? "infer" : "embed");
			snprintf(j.team, sizeof j.team, "default");
			STORE_OK(h, store_job_insert(h->st, &j));
			first = first ? first : j.id;
			job_free(&j);
		}
		STORE_OK(h, store_commit(h->st));
	}
	return first;
}

/* A serve's connection keeps the plans ebb_next_ready made at its first
 * leases (generic ones: the function says so), and a database is often
 * small then: a few hundred jobs, analyzed or not yet. A burst that
 * comes later must not find a plan that suited the small table: one made
 * on 200 jobs never analyzed read the whole partial index of queued jobs
 * to lock each job by its id, 15 ms a lease behind 100,000 until the
 * next analyze (bench/backlog.c, 2026-11-29). The lock reads the job by
 * its key whatever the statistics. */
static void plans_made_small_hold_after_a_burst(struct harness_store *h, int analyzed)
{
	struct lease_offer plain = {.gpus = 1, .vram_gb = 80};
	char db[64], *classes, args[4096];
	const char *plans;
	PGconn *c;

	snprintf(db, sizeof db, "%s", conn_value(harness_store_url(h->dir), "dbname"));
	psql(db, "ALTER TABLE jobs SET (autovacuum_enabled = false)");
	insert_jobs(h, 200);
	/* The session's plans, made on the small table. */
	if (analyzed)
		psql(db, "ANALYZE jobs");
	c = explaining(db);
	classes = offer_classes_json(h->st, &plain);
	snprintf(args, sizeof args, "1, 80, NULL, NULL, NULL, '%s', -1, 0, 0, 0", classes);
	free(classes);
	session_plans(c, args);
	insert_jobs(h, 50000);
	plans = session_plans(c, args);
	PQfinish(c);
	assert_contains(plans, "Index Scan using jobs_ready_order on jobs");
	assert_contains(plans, "Index Scan using jobs_pkey on jobs");
	if (strstr(plans, "Seq Scan") || strstr(plans, "jobs_queued_class") || strstr(plans, "Bitmap"))
		fail_msg("a plan made on 200 jobs reads more than the index behind 50,200:\n%s", plans);
}

static void lease_plans_made_before_any_analyze_hold_after_a_burst(void **state)
{
	postgres_only();
	plans_made_small_hold_after_a_burst(*state, 0);
}

static void lease_plans_made_on_a_small_analyzed_table_hold_after_a_burst(void **state)
{
	postgres_only();
	plans_made_small_hold_after_a_burst(*state, 1);
}

/* The last plan the test server logged (auto_explain, in its log:
 * scripts/pg.sh's DIR/server.log) for backend pid of a query whose text
 * has `has`; "" for none. */
static const char *last_logged_plan(int pid, const char *has)
{
	static char plan[16384], entry[16384];
	const char *url = getenv("EBB_TEST_PG"), *host = strstr(url, "host=");
	char *log, *p, tag[32];
	size_t len;

	assert_non_null(host);
	host += 5;
	log = harness_read_file(harness_fmt("%.*s/../server.log", (int)strcspn(host, " "), host), &len);
	assert_non_null(log);
	snprintf(tag, sizeof tag, "[%d] LOG:  duration:", pid);
	plan[0] = '\0';
	for (p = strstr(log, tag); p; p = strstr(p + 1, tag)) {
		/* The entry runs on over the lines that begin with a tab. */
		const char *end = strchr(p, '\n');
		while (end && end[1] == '\t')
			end = strchr(end + 1, '\n');
		len = end ? (size_t)(end - p) : strlen(p);
		snprintf(entry, sizeof entry, "%.*s", (int)len, p);
		if (strstr(entry, "plan:") && strstr(entry, has))
			memcpy(plan, entry, sizeof plan);
	}
	free(log);
	return plan;
}

static int count_segment(void *arg, const struct ledger_row *row)
{
	(void)row;
	++*(int *)arg;
	return 0;
}

/* The open segments' query (a scrape's, a decision's) as the store's
 * own session plans it: made on five jobs, kept (a prepared statement
 * keeps a generic plan after five runs), it joins them by a hash over
 * every job, 7 ms behind 100,000 until the next analyze. The store
 * drops its plans once the jobs have grown fourfold, so that after a
 * burst the join reads each segment's job by its key. */
static void plans_made_again_after_a_burst(void **state)
{
	struct harness_store *h = *state;
	struct instance inst = {.market = MARKET_ONDEMAND, .state = INST_BUSY, .gpus = 1, .launched_ms = 1};
	struct segment seg = {.kind = "job", .start_ms = 1};
	char db[64];
	const char *plan;
	PGconn *c;
	PGresult *r;
	int pid;

	postgres_only();
	snprintf(db, sizeof db, "%s", conn_value(harness_store_url(h->dir), "dbname"));
	psql(db, "ALTER TABLE jobs SET (autovacuum_enabled = false)");
	psql(db, harness_fmt("ALTER DATABASE %s SET session_preload_libraries = 'auto_explain'", db));
	psql(db, harness_fmt("ALTER DATABASE %s SET auto_explain.log_min_duration = 0", db));
	harness_store_reopen(h);
	snprintf(inst.offer, sizeof inst.offer, "one");
	seg.job = insert_jobs(h, 5);
	STORE_OK(h, store_begin(h->st));
	STORE_OK(h, store_instance_insert(h->st, &inst));
	seg.instance = inst.id;
	STORE_OK(h, store_segment_open(h->st, &seg));
	STORE_OK(h, store_commit(h->st));
	for (int round = 0; round < 2; round++) {
		if (round)
			insert_jobs(h, 50000);
		/* Ten runs in a batch of their own each, as scrapes are. */
		for (int k = 0; k < 10; k++) {
			int segments = 0;
			STORE_OK(h, store_begin(h->st));
			STORE_OK(h, store_ledger_open(h->st, count_segment, &segments));
			STORE_OK(h, store_commit(h->st));
			assert_int_equal(segments, 1);
		}
	}
	/* The store's session: the one on this database besides ours. */
	c = PQconnectdb(harness_fmt("%s dbname=%s", getenv("EBB_TEST_PG"), db));
	r = PQexec(c, harness_fmt("SELECT pid FROM pg_stat_activity WHERE datname = '%s' AND pid <> pg_backend_pid()", db));
	assert_int_equal(PQntuples(r), 1);
	pid = atoi(PQgetvalue(r, 0, 0));
	PQclear(r);
	PQfinish(c);
	plan = last_logged_plan(pid, "WHERE s.end_at = 0");
	assert_contains(plan, "Index Scan using jobs_pkey on jobs");
	if (strstr(plan, "Seq Scan on jobs"))
		fail_msg("behind 50,005 jobs the open segments' plan reads them all:\n%s", plan);
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
		cmocka_unit_test_setup_teardown(lease_reads_the_index_before_any_analyze, harness_store_setup,
						harness_store_teardown),
		cmocka_unit_test_setup_teardown(plans_made_again_after_a_burst, harness_store_setup,
						harness_store_teardown),
		cmocka_unit_test_setup_teardown(lease_plans_made_before_any_analyze_hold_after_a_burst,
						harness_store_setup, harness_store_teardown),
		cmocka_unit_test_setup_teardown(lease_plans_made_on_a_small_analyzed_table_hold_after_a_burst,
						harness_store_setup, harness_store_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, harness_cleanup);
}
