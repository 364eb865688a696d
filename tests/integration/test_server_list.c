/* A client given several serves (--server URL,URL,..., EBB_SERVER): a call
 * goes past a serve that refuses the connection to the next, in order,
 * and stays with the one that answered; the CLI and the worker do the
 * same. With PostgreSQL, a worker given a serve and its standby goes on
 * with the standby once it has taken over. Real serves on loopback; the
 * refused address is a port nothing listens on. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "harness.h"

/* A serve on a port of its own, kept across restarts, named name. */
static struct harness_server *named_serve(const char *name)
{
	return harness_serve(harness_fmt("[server]\nlisten = 127.0.0.1:%d\nname = %s\n", harness_free_port(), name), 0);
}

/* GET /healthz through c: the name of the serve that answered, or NULL. */
static const char *healthz_serve(struct client *c)
{
	static char name[64];
	json_t *reply;
	int status = client_call(c, "GET", "/healthz", NULL, &reply);

	if (status != 200) {
		json_decref(reply);
		return NULL;
	}
	snprintf(name, sizeof name, "%s", JSTR(reply, "serve"));
	assert_string_equal(JSTR(reply, "role"), "leader");
	json_decref(reply);
	return name;
}

static void call_skips_refused_serves_and_stays(void **state)
{
	struct harness_server *a, *b;
	struct client c;
	const char *name;

	(void)state;
	a = named_serve("a");
	b = named_serve("b");
	assert_int(client_init(&c, harness_fmt("127.0.0.1:%d,%s,%s", harness_free_port(), a->url, b->url), NULL, NULL),
		   0);
	assert_int(c.nservers, 3);
	assert_non_null(name = healthz_serve(&c));
	assert_string_equal(name, "a");
	assert_string_equal(c.server, a->url);

	harness_server_kill(a);
	assert_non_null(name = healthz_serve(&c));
	assert_string_equal(name, "b");
	/* a back on its port: the client stays with b, which answers. */
	harness_server_start(a);
	assert_non_null(name = healthz_serve(&c));
	assert_string_equal(name, "b");
	/* b gone: round the list, past the refused port, to a. */
	harness_server_kill(b);
	assert_non_null(name = healthz_serve(&c));
	assert_string_equal(name, "a");

	harness_server_kill(a);
	assert_null(healthz_serve(&c));
	assert_non_null(strstr(c.err, "none of the 3 serves answered"));
	/* None answered: the next call starts where this one did. */
	assert_string_equal(c.server, a->url);
	client_free(&c);
}

static void bad_server_lists_are_refused(void **state)
{
	struct client c;

	(void)state;
	assert_int(client_init(&c, "127.0.0.1:1,,127.0.0.1:2", NULL, NULL), -1);
	assert_non_null(strstr(c.err, "empty address"));
	assert_int(client_init(&c, "127.0.0.1:1,ftp://x:2", NULL, NULL), -1);
	assert_non_null(strstr(c.err, "server 'ftp://x:2': expected"));
	assert_int(client_init(&c, "a:1,a:2,a:3,a:4,a:5,a:6,a:7,a:8,a:9", NULL, NULL), -1);
	assert_non_null(strstr(c.err, "more than 8 serves"));
}

/* ebb status names the serve it reached, past a refused address. */
static void status_names_the_serve_reached(void **state)
{
	struct harness_server *s = named_serve("main");
	struct harness_run r;
	const char *list = harness_fmt("127.0.0.1:%d,%s", harness_free_port(), s->url);

	(void)state;
	assert_int(harness_ebb(&r, s, "status", "--server", list, NULL), 0);
	assert_string_equal(r.out, harness_fmt("serve main at %s: leader, store %s\n", s->url, harness_store_kind()));
	harness_run_free(&r);
	assert_int(harness_ebb(&r, s, "status", "--server", "127.0.0.1:1,,x", NULL), 1);
	assert_non_null(strstr(r.err, "ebb status: server list: an empty address"));
	harness_run_free(&r);
}

/* The worker leases, heartbeats and reports past a refused address. */
static void worker_runs_jobs_past_a_refused_serve(void **state)
{
	struct harness_server *s = harness_serve(NULL, 0);
	const char *log = harness_fmt("%s/worker.log", s->dir);
	pid_t w;
	int64_t id;
	json_t *job;

	(void)state;
	w = harness_hand_worker(s, log, NULL, "--server", harness_fmt("127.0.0.1:%d,%s", harness_free_port(), s->url), NULL);
	id = harness_submit(s, "{\"command\": [\"sh\", \"-c\", \"sleep 0.5\"]}");
	WAIT_FOR(s, 30000, harness_job_is(s, id, "succeeded"), "job %lld did not succeed", (long long)id);
	job = harness_get_job(s, id);
	assert_int(JINT(job, "attempts"), 1);
	json_decref(job);
	assert_int(WEXITSTATUS(harness_stop_hand_worker(s, w, 10000)), 0);
}

/* PostgreSQL: a worker given a serve and its standby runs a job of the
 * first across its kill -9: the job's heartbeats and its complete go to
 * the standby once it has taken over, so the job succeeds on its first
 * attempt (stuck on the dead serve, the worker would be orphaned after
 * 6 s, and the job run again). Then the worker's long-poll, cut by the
 * kill, has moved on too: a job submitted to the standby runs. */
static void worker_goes_on_with_the_standby(void **state)
{
	/* Heartbeats every 2 s (orphan_timeout / 3), a lease of 8 s. */
	const char *queue = "[queue]\nlease_timeout = 8s\n";
	struct harness_server *a, *b;
	const char *log, *list;
	json_t *job;
	int64_t id;
	int port;
	pid_t w;

	(void)state;
	if (strcmp(harness_store_kind(), "postgres") != 0) {
		print_message("skipped: a serve and its standby need EBB_TEST_STORE=postgres\n");
		skip();
	}
	a = harness_serve(queue, 0);
	port = harness_free_port();
	b = harness_serve(harness_fmt("%s[server]\nlisten = 127.0.0.1:%d\n[postgres]\nurl = %s\nstandby = on\n", queue,
				      port, harness_store_url(a->data)),
			  HARNESS_NO_WAIT);
	list = harness_fmt("%s,http://127.0.0.1:%d", a->url, port);
	log = harness_fmt("%s/worker.log", a->dir);
	w = harness_hand_worker(a, log, NULL, "--server", list, "--orphan-timeout", "6s", NULL);
	id = harness_submit(a, "{\"command\": [\"sleep\", \"10\"]}");
	WAIT_FOR(a, 30000, harness_job_is(a, id, "leased"), "job %lld was not leased", (long long)id);

	harness_server_kill(a);
	harness_server_wait(b, 15000);
	WAIT_FOR(b, 30000, harness_job_is(b, id, "succeeded"), "job %lld did not succeed after the takeover",
		 (long long)id);
	job = harness_get_job(b, id);
	assert_int(JINT(job, "attempts"), 1);
	json_decref(job);
	id = harness_submit(b, "{\"command\": [\"true\"]}");
	WAIT_FOR(b, 30000, harness_job_is(b, id, "succeeded"), "job %lld did not succeed on the standby",
		 (long long)id);
	assert_int(WEXITSTATUS(harness_stop_hand_worker(b, w, 10000)), 0);
}

#define T(fn) cmocka_unit_test_teardown(fn, harness_cleanup)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(call_skips_refused_serves_and_stays),
		T(bad_server_lists_are_refused),
		T(status_names_the_serve_reached),
		T(worker_runs_jobs_past_a_refused_serve),
		T(worker_goes_on_with_the_standby),
	};

	return cmocka_run_group_tests(tests, NULL, harness_cleanup);
}
