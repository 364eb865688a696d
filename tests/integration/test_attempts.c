/* A job's life against a real serve and real workers: every lease of it
 * in GET /v1/jobs/ID's runs (where it ran, how it ended, its exit status,
 * its checkpoint, why), the error of the current attempt alone, requeue
 * of a failed or dead job, the workers started by hand (GET /v1/workers,
 * ebb workers), and the CLI's running state and progress. Every wait
 * polls with a deadline. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

/* The k-th run (from 0) of job id, a new reference. */
static json_t *run_of(struct harness_server *s, int64_t id, size_t k, size_t *nruns)
{
	json_t *j = harness_get_job(s, id), *r = json_incref(json_array_get(json_object_get(j, "runs"), k));

	if (nruns)
		*nruns = json_array_size(json_object_get(j, "runs"));
	json_decref(j);
	return r;
}

/* A lease for worker of the next job, which must be id: its token. */
static int64_t lease(struct harness_server *s, const char *worker, int64_t id)
{
	json_t *r = harness_call_ok(s, "POST", "/v1/lease", harness_fmt("{\"worker\": \"%s\"}", worker), 200);
	int64_t token = JINT(r, "job.lease.token");

	assert_int(JINT(r, "job.id"), id);
	json_decref(r);
	return token;
}

static void call_ok(struct harness_server *s, const char *path, const char *body)
{
	json_decref(harness_call_ok(s, "POST", path, body, 200));
}

/* A job that exits 3 on its first run and 0 on its second, run by a
 * worker started by hand: two runs, each with its exit and outcome; the
 * job's error is gone once it succeeded. ebb job shows both runs. */
static void fail_then_succeed_shows_two_runs(void **state)
{
	struct harness_server *s = harness_serve("[queue]\nretry_base = 0s\n", 0);
	const char *dir = harness_tmpdir();
	struct harness_run run = {0};
	json_t *r, *j;
	size_t n;
	int64_t id;

	(void)state;
	id = harness_submit(s, harness_fmt("{\"command\": [\"sh\", \"-c\", \"[ -e %s/mark ] && exit 0;"
					   " touch %s/mark; exit 3\"], \"max_attempts\": 3}",
					   dir, dir));
	harness_own_workers(s);
	harness_hand_worker(s, harness_fmt("%s/worker.log", dir), NULL, NULL);
	WAIT_FOR(s, 30000, harness_job_is(s, id, "succeeded"), "job %lld did not succeed", (long long)id);
	r = run_of(s, id, 0, &n);
	assert_int(n, 2);
	assert_int(JINT(r, "attempt"), 1);
	assert_string_equal(JSTR(r, "outcome"), "failed");
	assert_int(JINT(r, "exit"), 3);
	assert_string_equal(JSTR(r, "reason"), "exit status 3");
	assert_string_equal(JSTR(r, "worker"), "hand");
	assert_true(json_is_null(json_object_get(r, "instance")));
	assert_true(json_is_null(json_object_get(r, "offer")));
	assert_true(JNUM(r, "ended_at") >= JNUM(r, "started_at"));
	json_decref(r);
	r = run_of(s, id, 1, NULL);
	assert_int(JINT(r, "attempt"), 2);
	assert_string_equal(JSTR(r, "outcome"), "succeeded");
	assert_true(json_is_null(json_object_get(r, "exit")));
	assert_true(json_is_null(json_object_get(r, "reason")));
	json_decref(r);
	j = harness_get_job(s, id);
	assert_null(json_object_get(j, "error"));
	assert_int(JINT(j, "attempts"), 2);
	json_decref(j);
	/* The list has no runs: only the one job's reply. */
	j = harness_get(s, "/v1/jobs");
	assert_null(json_object_get(json_array_get(json_object_get(j, "jobs"), 0), "runs"));
	json_decref(j);
	assert_int(harness_ebb(&run, s, "job", harness_fmt("%lld", (long long)id), NULL), 0);
	assert_contains(run.out, "OUTCOME");
	assert_contains(run.out, "failed");
	assert_contains(run.out, "exit status 3");
	assert_contains(run.out, "succeeded");
	harness_run_free(&run);
}

/* An interrupted run keeps its why and its checkpoint; the job's error
 * says why it waits until it runs again, then is gone. A failed job is
 * requeued with its checkpoint, a dead one fresh; others are refused. */
static void interrupted_run_and_requeue(void **state)
{
	struct harness_server *s = harness_serve(NULL, 0);
	struct harness_run run = {0};
	int64_t id, token;
	json_t *r, *j;
	size_t n;
	int status;

	(void)state;
	id = harness_submit(s, "{\"command\": [\"true\"], \"items\": 10, \"max_attempts\": 1}");
	token = lease(s, "w1", id);
	call_ok(s, harness_fmt("/v1/jobs/%lld/checkpoint", (long long)id),
		harness_fmt("{\"lease_token\": %lld, \"checkpoint\": \"tok-5\", \"items_done\": 5}", (long long)token));
	call_ok(s, harness_fmt("/v1/jobs/%lld/interrupt", (long long)id),
		harness_fmt("{\"lease_token\": %lld, \"reason\": \"spot reclaim notice\", \"reclaim\": true}",
			    (long long)token));
	r = run_of(s, id, 0, &n);
	assert_int(n, 1);
	assert_string_equal(JSTR(r, "outcome"), "interrupted");
	assert_contains(JSTR(r, "reason"), "spot reclaim notice");
	assert_string_equal(JSTR(r, "checkpoint"), "tok-5");
	assert_int(JINT(r, "items_done"), 5);
	assert_string_equal(JSTR(r, "worker"), "w1");
	json_decref(r);
	j = harness_get_job(s, id);
	assert_contains(JSTR(j, "error"), "spot reclaim notice");
	json_decref(j);

	/* It runs again: the error was the last run's. */
	token = lease(s, "w2", id);
	j = harness_get_job(s, id);
	assert_null(json_object_get(j, "error"));
	assert_string_equal(JSTR(j, "checkpoint"), "tok-5");
	json_decref(j);
	r = run_of(s, id, 1, &n);
	assert_int(n, 2);
	assert_string_equal(JSTR(r, "outcome"), "running");
	assert_true(json_is_null(json_object_get(r, "ended_at")));
	json_decref(r);
	/* ebb jobs --state running shows it, as running, with its progress. */
	assert_int(harness_ebb(&run, s, "jobs", "--state", "running", NULL), 0);
	assert_contains(run.out, "PROGRESS");
	assert_contains(run.out, "running");
	assert_contains(run.out, "5/10");
	harness_run_free(&run);
	call_ok(s, harness_fmt("/v1/jobs/%lld/fail", (long long)id),
		harness_fmt("{\"lease_token\": %lld, \"error\": \"exit status 2\", \"exit\": 2, \"retry\": false}",
			    (long long)token));
	r = run_of(s, id, 1, NULL);
	assert_string_equal(JSTR(r, "outcome"), "failed");
	assert_int(JINT(r, "exit"), 2);
	json_decref(r);
	assert_true(harness_job_is(s, id, "failed"));

	/* Requeued: a new budget, the checkpoint kept. */
	assert_int(harness_ebb(&run, s, "requeue", harness_fmt("%lld", (long long)id), NULL), 0);
	assert_contains(run.out, "requeued");
	harness_run_free(&run);
	j = harness_get_job(s, id);
	assert_string_equal(JSTR(j, "state"), "queued");
	assert_int(JINT(j, "attempts"), 0);
	assert_string_equal(JSTR(j, "checkpoint"), "tok-5");
	assert_int(JINT(j, "items_done"), 5);
	assert_null(json_object_get(j, "error"));
	json_decref(j);
	status = harness_call(s, "POST", harness_fmt("/v1/jobs/%lld/requeue", (long long)id), NULL, &r);
	assert_error(status, r, 409, "not_failed", NULL);
	json_decref(r);

	/* Its one attempt spent: dead, then requeued fresh. */
	token = lease(s, "w1", id);
	call_ok(s, harness_fmt("/v1/jobs/%lld/fail", (long long)id),
		harness_fmt("{\"lease_token\": %lld, \"error\": \"boom\"}", (long long)token));
	assert_true(harness_job_is(s, id, "dead"));
	/* ebb requeue --fresh --json: the job, as JSON. */
	assert_int(harness_ebb(&run, s, "requeue", "--fresh", "--json", harness_fmt("%lld", (long long)id), NULL), 0);
	j = harness_json(run.out);
	assert_string_equal(JSTR(j, "state"), "queued");
	json_decref(j);
	harness_run_free(&run);
	j = harness_get_job(s, id);
	assert_string_equal(JSTR(j, "state"), "queued");
	assert_null(json_object_get(j, "checkpoint"));
	assert_int(JINT(j, "items_done"), 0);
	assert_int(json_array_size(json_object_get(j, "runs")), 3);
	json_decref(j);
	status = harness_call(s, "POST", "/v1/jobs/999/requeue", NULL, &r);
	assert_error(status, r, 404, "not_found", NULL);
	json_decref(r);
	status = harness_call(s, "POST", harness_fmt("/v1/jobs/%lld/requeue", (long long)id), "{\"fresh\": 1}", &r);
	assert_int(status, 400);
	json_decref(r);
}

/* A cancel ends the running attempt as cancelled. */
static void cancel_ends_the_run(void **state)
{
	struct harness_server *s = harness_serve(NULL, 0);
	int64_t id;
	json_t *r;

	(void)state;
	id = harness_submit(s, "{\"command\": [\"true\"]}");
	lease(s, "w1", id);
	call_ok(s, harness_fmt("/v1/jobs/%lld/cancel", (long long)id), NULL);
	r = run_of(s, id, 0, NULL);
	assert_string_equal(JSTR(r, "outcome"), "cancelled");
	assert_true(json_is_number(json_object_get(r, "ended_at")));
	json_decref(r);
}

/* The worker of that name in GET /v1/workers, a new reference, or NULL. */
static json_t *worker_named(struct harness_server *s, const char *name)
{
	json_t *w = harness_get(s, "/v1/workers"), *found = json_incref(harness_find(w, "workers", "name", name));

	json_decref(w);
	return found;
}

static int runs_job(struct harness_server *s, const char *name, int64_t id)
{
	json_t *w = worker_named(s, name);
	int yes = w && json_integer_value(json_array_get(json_object_get(w, "jobs"), 0)) == id;

	json_decref(w);
	return yes;
}

/* A worker started by hand registers by its name and is listed, with
 * its last call and its job; a register with neither an instance nor a
 * name is refused. */
static void hand_started_worker_is_listed(void **state)
{
	struct harness_server *s = harness_serve(NULL, 0);
	const char *dir = harness_tmpdir();
	struct harness_run run = {0};
	json_t *w, *r;
	int64_t id;
	pid_t pid;
	int status;

	(void)state;
	harness_own_workers(s);
	pid = harness_hand_worker(s, harness_fmt("%s/worker.log", dir), NULL, "--gpus", "2", NULL);
	WAIT_FOR(s, 15000, (w = worker_named(s, "hand")) != NULL,
		 "the worker started by hand is not listed");
	assert_true(json_is_null(json_object_get(w, "instance")));
	assert_int(JINT(w, "gpus"), 2);
	assert_true(json_is_number(json_object_get(w, "registered_at")));
	assert_true(json_is_number(json_object_get(w, "last_seen_at")));
	json_decref(w);
	id = harness_submit(s, harness_fmt("{\"command\": [\"sh\", \"-c\", \"while [ ! -e %s/go ]; do sleep 0.05;"
					   " done\"]}", dir));
	WAIT_FOR(s, 15000, runs_job(s, "hand", id), "job %lld is not listed as the worker's", (long long)id);
	assert_int(harness_ebb(&run, s, "workers", NULL), 0);
	assert_contains(run.out, "LAST SEEN");
	assert_contains(run.out, "hand");
	assert_contains(run.out, "(by hand)");
	assert_contains(run.out, harness_fmt("%lld", (long long)id));
	harness_run_free(&run);
	harness_write_file(harness_fmt("%s/go", dir), "");
	WAIT_FOR(s, 15000, harness_job_is(s, id, "succeeded"), "job %lld did not succeed", (long long)id);
	status = harness_stop_hand_worker(s, pid, 10000);
	assert_true(WIFEXITED(status));

	status = harness_call(s, "POST", "/v1/workers/register", "{}", &r);
	assert_error(status, r, 400, "missing_field", "instance");
	json_decref(r);
	r = harness_call_ok(s, "POST", "/v1/workers/register", "{\"name\": \"manual-1\"}", 200);
	assert_string_equal(JSTR(r, "worker.name"), "manual-1");
	json_decref(r);
	w = worker_named(s, "manual-1");
	assert_non_null(w);
	assert_int(json_array_size(json_object_get(w, "jobs")), 0);
	json_decref(w);
}

/* ---- ebb fleet's GPU columns ---- */

/* Field k (from 0, split on blanks) of the row of `ebb fleet` whose first
 * field is id, into buf; "" when there is none. */
static const char *fleet_field(const char *out, int64_t id, int k, char *buf, size_t size)
{
	char want[32], *copy = strdup(out), *line, *save = NULL;

	snprintf(want, sizeof want, "%lld", (long long)id);
	buf[0] = '\0';
	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *f, *fsave = NULL;
		int i = 0;
		if (!(f = strtok_r(line, " ", &fsave)) || strcmp(f, want) != 0)
			continue;
		while (f && i < k) {
			f = strtok_r(NULL, " ", &fsave);
			i++;
		}
		snprintf(buf, size, "%s", f ? f : "");
		break;
	}
	free(copy);
	return buf;
}

/* Runs a job that waits for dir/go on the fleet of s, and checks `ebb
 * fleet`'s GPUS (the count) and GPU IDS (gpu_ids) of its instance. */
static void check_fleet_columns(struct harness_server *s, const char *dir, const char *gpu_ids)
{
	struct harness_run run = {0};
	char buf[64];
	int64_t id, inst = 0;
	json_t *r;

	id = harness_submit(s, harness_fmt("{\"command\": [\"sh\", \"-c\", \"while [ ! -e %s/go ]; do sleep 0.05;"
					   " done\"], \"est_s\": 1}", dir));
	WAIT_FOR(s, 30000, harness_job_is(s, id, "leased"), "job %lld was not leased", (long long)id);
	assert_int(harness_live_instances(s, &inst), 1);
	assert_int(harness_ebb(&run, s, "fleet", NULL), 0);
	assert_contains(run.out, "GPU IDS");
	/* ID STATE OFFER MARKET GPUS GPU-IDS */
	assert_string_equal(fleet_field(run.out, inst, 4, buf, sizeof buf), "1");
	assert_string_equal(fleet_field(run.out, inst, 5, buf, sizeof buf), gpu_ids);
	harness_run_free(&run);
	harness_write_file(harness_fmt("%s/go", dir), "");
	WAIT_FOR(s, 30000, harness_job_is(s, id, "succeeded"), "job %lld did not succeed", (long long)id);
	/* Its run names the instance, its offer and its market. */
	r = run_of(s, id, 0, NULL);
	assert_int(JINT(r, "instance"), inst);
	assert_string_equal(JSTR(r, "worker"), harness_fmt("i-%lld", (long long)inst));
	assert_true(json_is_string(json_object_get(r, "offer")));
	assert_true(strcmp(JSTR(r, "market"), "spot") == 0 || strcmp(JSTR(r, "market"), "on-demand") == 0);
	assert_string_equal(JSTR(r, "outcome"), "succeeded");
	json_decref(r);
}

/* The local provider hands its instance a device: its id is shown. */
static void fleet_columns_local(void **state)
{
	struct harness_server *s = harness_serve("[provider]\nkind = local\n[local]\ngpus = 3\n"
						 "[lane.standard]\nwait_target = 1s\n[scaler]\ninterval = 200ms\n",
						 0);

	(void)state;
	harness_own_workers(s);
	check_fleet_columns(s, harness_tmpdir(), "3");
}

/* The exec provider does not say which devices: `-`, and the count. */
static void fleet_columns_exec(void **state)
{
	const char *src = getenv("EBB_SRC"), *pdir = harness_tmpdir();
	struct harness_server *s;

	(void)state;
	setenv("EBB_TEST_PROVIDER_DIR", pdir, 1);
	s = harness_serve(harness_fmt("[provider]\nkind = exec\n[exec]\ncommand = %s/tests/exec/provider\n"
				      "timeout = 10s\n[offer.a10g]\nmachine = test.a10g\ngpus = 1\nvram_gb = 24\n"
				      "price_ondemand = 1.00\n[lane.standard]\nwait_target = 1s\n"
				      "[scaler]\ninterval = 200ms\n",
				      src && *src ? src : "."),
			  0);
	harness_own_workers(s);
	check_fleet_columns(s, pdir, "-");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(fail_then_succeed_shows_two_runs, harness_cleanup),
		cmocka_unit_test_teardown(interrupted_run_and_requeue, harness_cleanup),
		cmocka_unit_test_teardown(cancel_ends_the_run, harness_cleanup),
		cmocka_unit_test_teardown(hand_started_worker_is_listed, harness_cleanup),
		cmocka_unit_test_teardown(fleet_columns_local, harness_cleanup),
		cmocka_unit_test_teardown(fleet_columns_exec, harness_cleanup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
