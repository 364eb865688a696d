/* A running job's wake-up, end to end: a real `ebb serve` with the local
 * provider and its real `ebb worker`. A cancel, and a preemption for a
 * team owed its GPUs, stop the running job's process within seconds,
 * through the worker's watch of the lease; the heartbeats come every
 * 30 s here (lease_timeout = 90s), so they cannot be what told it. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define WORKER_SECRET "worker-secret-0123456789"
/* From the moment serve decided to the job's process gone: well under the
 * 30 s between heartbeats, generous for a busy machine. */
#define STOP_BOUND_MS 5000

static struct harness_server *serve_local(const char *gpus, const char *teams)
{
	struct harness_server *s = harness_serve(
		harness_fmt("[token.worker]\nsecret = " WORKER_SECRET "\nrole = worker\n"
			    "[queue]\nlease_timeout = 90s\n"
			    "[provider]\nkind = local\n"
			    "[local]\ngpus = %s\n"
			    "[lane.standard]\nwait_target = 1s\n"
			    "[scaler]\ninterval = 200ms\nmax_gpus = %d\nidle_timeout = 1m\n%s",
			    gpus, gpus[1] ? 2 : 1, teams),
		HARNESS_TOKENS);

	harness_own_workers(s);
	return s;
}

/* A job that writes its pid into DIR/NAME.pid and sleeps (SIGTERM ends it). */
static int64_t submit_sleeper(struct harness_server *s, const char *dir, const char *name, const char *extra)
{
	return harness_submit(s, harness_fmt("{%s\"command\": [\"sh\", \"-c\", \"echo $$ > $0.tmp && mv $0.tmp $0"
					     " && exec sleep 600\", \"%s/%s.pid\"]}",
					     extra, dir, name));
}

/* The pid the job wrote, once it runs. */
static pid_t running_pid(struct harness_server *s, const char *dir, const char *name)
{
	const char *path = harness_fmt("%s/%s.pid", dir, name);
	pid_t pid = 0;

	WAIT_FOR(s, 60000, (pid = harness_read_pid(path)) > 0, "job %s did not start within 60 s", name);
	return pid;
}

static int gone(pid_t pid) { return kill(pid, 0) != 0 && errno == ESRCH; }

/* Waits until pid is gone: fails past bound_ms from since_ms. */
static void assert_stopped_within(struct harness_server *s, pid_t pid, int64_t since_ms, int64_t bound_ms,
				  const char *what)
{
	while (!gone(pid)) {
		if (harness_now_ms() - since_ms > bound_ms)
			harness_fail_with_log(s, "%s: the job's process %d still runs %lld ms later", what, (int)pid,
					      (long long)bound_ms);
		harness_sleep_ms(20);
	}
}

/* ebb cancel of a running job: its process is gone within seconds of the
 * reply, and the job stays cancelled; the worker takes the next job. */
static void test_cancel_stops_the_running_job(void **state)
{
	const char *dir = harness_tmpdir();
	struct harness_server *s = serve_local("0", "");
	struct harness_run run;
	int64_t id, next, at;
	pid_t pid;

	(void)state;
	id = submit_sleeper(s, dir, "long", "");
	pid = running_pid(s, dir, "long");
	assert_true(harness_job_is(s, id, "leased"));
	harness_ebb(&run, s, "cancel", harness_fmt("%lld", (long long)id), NULL);
	at = harness_now_ms();
	assert_int(run.status, 0);
	assert_contains(run.out, "cancelled");
	harness_run_free(&run);
	assert_stopped_within(s, pid, at, STOP_BOUND_MS, "cancel");
	assert_true(harness_job_is(s, id, "cancelled"));
	/* The worker is free again: a new job runs on it. */
	next = harness_submit(s, "{\"command\": [\"true\"]}");
	WAIT_FOR(s, 60000, harness_job_is(s, next, "succeeded"), "the next job did not run within 60 s");
	assert_true(harness_job_is(s, id, "cancelled"));
}

/* serve restarts under a running job: the job runs on, and the watch,
 * asked again with backoff (at most 5 s apart), still brings a cancel
 * within seconds, well before the next heartbeat. */
static void test_the_watch_outlives_a_serve_restart(void **state)
{
	const char *dir = harness_tmpdir();
	struct harness_server *s = serve_local("0", "");
	struct harness_run run;
	char *conf, *listen;
	int64_t id, at;
	pid_t pid;

	(void)state;
	id = submit_sleeper(s, dir, "long", "");
	pid = running_pid(s, dir, "long");
	/* On the same port, where the worker reaches it. */
	assert_int(harness_server_stop(s), 0);
	conf = harness_read_file(s->conf, NULL);
	assert_non_null(listen = strstr(conf, "listen = 127.0.0.1:0\n"));
	*listen = '\0';
	harness_write_file(s->conf, harness_fmt("%slisten = 127.0.0.1:%d\n%s", conf, s->port,
						listen + strlen("listen = 127.0.0.1:0\n")));
	free(conf);
	harness_server_start(s);
	assert_false(gone(pid));
	assert_true(harness_job_is(s, id, "leased"));
	harness_ebb(&run, s, "cancel", harness_fmt("%lld", (long long)id), NULL);
	at = harness_now_ms();
	assert_int(run.status, 0);
	harness_run_free(&run);
	assert_stopped_within(s, pid, at, STOP_BOUND_MS + 5000, "cancel after a restart");
}

/* The wake-up route itself: a watch with no news answers "none" after its
 * wait; a stale token "stop" at once; the token is required. */
static void test_watch_route(void **state)
{
	const char *dir = harness_tmpdir();
	struct harness_server *s = serve_local("0", "");
	int64_t id, token, at;
	json_t *j, *r;

	(void)state;
	id = submit_sleeper(s, dir, "w", "");
	running_pid(s, dir, "w");
	j = harness_get_job(s, id);
	token = JINT(j, "lease.token");
	json_decref(j);
	at = harness_now_ms();
	r = harness_call_ok(s, "GET", harness_fmt("/v1/jobs/%lld/watch?token=%lld&wait=1", (long long)id,
						  (long long)token), NULL, 200);
	assert_true(harness_now_ms() - at >= 900);
	assert_string_equal(JSTR(r, "action"), "none");
	assert_string_equal(JSTR(r, "state"), "leased");
	json_decref(r);
	r = harness_call_ok(s, "GET", harness_fmt("/v1/jobs/%lld/watch?token=%lld&wait=30", (long long)id,
						  (long long)token + 1), NULL, 200);
	assert_string_equal(JSTR(r, "action"), "stop");
	assert_string_equal(JSTR(r, "reason"), "leased again, to another run");
	json_decref(r);
	r = harness_call_ok(s, "GET", harness_fmt("/v1/jobs/%lld/watch", (long long)id), NULL, 400);
	assert_string_equal(JSTR(r, "error.field"), "token");
	json_decref(r);
	r = harness_call_ok(s, "GET", "/v1/jobs/999/watch?token=1", NULL, 404);
	json_decref(r);
}

/* Has the scaler decided a preemption? */
static int preempt_decided(struct harness_server *s)
{
	json_t *r = harness_get(s, "/v1/decisions?limit=100");
	int found = harness_find(r, "decisions", "kind", "preempt") != NULL;

	json_decref(r);
	return found;
}

/* Team b borrows a's idle quota on the only GPU; a submits: the scaler
 * preempts b's job, whose process is gone within seconds of the decision,
 * and a's job runs. */
static void test_preemption_stops_the_running_job(void **state)
{
	const char *dir = harness_tmpdir();
	struct harness_server *s = serve_local("0,1", "preempt_min_runtime = 1s\n"
						      "[team.a]\nquota_gpus = 1\n[team.b]\nquota_gpus = 1\n");
	int64_t b[2], a, at;
	pid_t pid[2];

	(void)state;
	b[0] = submit_sleeper(s, dir, "b0", "\"team\": \"b\", ");
	b[1] = submit_sleeper(s, dir, "b1", "\"team\": \"b\", ");
	pid[0] = running_pid(s, dir, "b0");
	pid[1] = running_pid(s, dir, "b1");
	harness_sleep_ms(1000); /* past preempt_min_runtime */
	a = submit_sleeper(s, dir, "a", "\"team\": \"a\", ");
	/* The decision is recorded in the batch that asks the lease to stop. */
	WAIT_FOR(s, 30000, preempt_decided(s), "no preemption decided within 30 s");
	at = harness_now_ms();
	while (!gone(pid[0]) && !gone(pid[1])) {
		if (harness_now_ms() - at > STOP_BOUND_MS)
			harness_fail_with_log(s, "preemption: neither of b's processes stopped within %d ms",
					      STOP_BOUND_MS);
		harness_sleep_ms(20);
	}
	/* a's job runs on the GPU given back; b's other job runs on. */
	running_pid(s, dir, "a");
	assert_true(harness_job_is(s, a, "leased"));
	assert_true(gone(pid[0]) != gone(pid[1]));
	assert_true(harness_job_is(s, gone(pid[0]) ? b[1] : b[0], "leased"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_cancel_stops_the_running_job, harness_cleanup),
		cmocka_unit_test_teardown(test_the_watch_outlives_a_serve_restart, harness_cleanup),
		cmocka_unit_test_teardown(test_watch_route, harness_cleanup),
		cmocka_unit_test_teardown(test_preemption_stops_the_running_job, harness_cleanup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
