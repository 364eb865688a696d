/* Several jobs per instance, end to end: a real `ebb serve` with the local
 * provider launches one instance of 4 GPUs, whose real `ebb worker` runs
 * 1-GPU jobs side by side, each on a GPU of its own (CUDA_VISIBLE_DEVICES).
 *
 * - Four 1-GPU jobs run at once on the one instance: each writes that it
 *   started and then waits for a file the test writes only once all four
 *   have started, so none can end before the four run together.
 * - The ledger still adds up: the report's total is the instance's bill to
 *   the cent, each job paid for its GPU's share of the instance while it
 *   ran, and the rest is idle.
 * - An instance with one job left of two is busy, not idle: it is not
 *   released past its idle timeout while that job runs.
 * - A reclaim notice stops every job side by side: each is interrupted,
 *   queued again and ends on the next instance.
 * - A worker started by hand packs too, on the GPUs its own
 *   CUDA_VISIBLE_DEVICES names, and SIGTERM stops every job it runs.
 * - A worker killed -9 leaves none of its jobs running.
 *
 * Workers run in real time; every wait polls with a deadline. */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

static struct harness_server *serve(const char *extra, int flags)
{
	struct harness_server *s = harness_serve(harness_fmt("[provider]\n"
							     "kind = local\n"
							     "orphan_timeout = 20s\n"
							     "[local]\n"
							     "gpus = 0,1,2,3\n"
							     "[lane.standard]\n"
							     "wait_target = 1s\n"
							     "[offer.quad]\n"
							     "gpus = 4\n"
							     "price_ondemand = 3.6\n"
							     "billing = per-second\n"
							     "billing_minimum = 1s\n"
							     "[scaler]\n"
							     "interval = 200ms\n"
							     "max_instances = 1\n"
							     "%s",
							     extra),
						 flags);
	harness_own_workers(s);
	return s;
}

/* A job of `gpus` GPUs that writes its pid to dir/pid.ID and the GPUs it
 * sees to dir/started.ID (whole: written aside, then renamed, so that a
 * test that finds the file finds what it says), then waits for dir/end.ID or dir/end (all). */
static int64_t submit_gpus(struct harness_server *s, const char *dir, int gpus)
{
	return harness_submit(s, harness_fmt("{\"command\": [\"sh\", \"-c\", \"echo $$ > %s/pid.$EBB_JOB_ID;"
					     " echo $CUDA_VISIBLE_DEVICES > %s/seen.$EBB_JOB_ID;"
					     " mv %s/seen.$EBB_JOB_ID %s/started.$EBB_JOB_ID;"
					     " until [ -e %s/end ] || [ -e %s/end.$EBB_JOB_ID ]; do sleep 0.05; done\"],"
					     " \"gpus\": %d, \"est_s\": 30}",
					     dir, dir, dir, dir, dir, dir, gpus));
}

/* The pid job id wrote. */
static pid_t job_pid(const char *dir, int64_t id)
{
	pid_t pid = harness_read_pid(harness_fmt("%s/pid.%lld", dir, (long long)id));

	if (!pid)
		fail_msg("job %lld wrote no pid", (long long)id);
	return pid;
}

static int64_t submit_waiting(struct harness_server *s, const char *dir) { return submit_gpus(s, dir, 1); }

static int started(const char *dir, int64_t id) { return access(harness_fmt("%s/started.%lld", dir, (long long)id), F_OK) == 0; }

/* The one live instance's member at path, as a string. */
static const char *instance_str(struct harness_server *s, const char *path, char *buf, size_t size)
{
	json_t *f = harness_get(s, "/v1/fleet");
	json_t *i = json_array_get(harness_jget(f, "instances"), 0);

	snprintf(buf, size, "%s", i ? JSTR(i, path) : "(no instance)");
	json_decref(f);
	return buf;
}

/* The job the one live instance is shown to run. */
static int64_t instance_job(struct harness_server *s)
{
	json_t *f = harness_get(s, "/v1/fleet");
	int64_t id = JINT(json_array_get(harness_jget(f, "instances"), 0), "job");

	json_decref(f);
	return id;
}

/* The cost of the report's (idle) row. */
static double idle_cost(json_t *report)
{
	json_t *g = harness_find(report, "groups", "name", "(idle)");

	if (!g)
		fail_msg("no (idle) row in the report");
	return JNUM(g, "cost_usd");
}

static void test_four_jobs_at_once_on_four_gpus(void **state)
{
	struct harness_server *s = serve("idle_timeout = 1s\n", 0);
	const char *dir = harness_tmpdir();
	int64_t ids[4];
	int seen[4] = {0};
	char buf[64];
	json_t *f, *r, *i;
	double jobs_cost = 0;

	(void)state;
	for (int k = 0; k < 4; k++)
		ids[k] = submit_waiting(s, dir);
	WAIT_FOR(s, 30000, started(dir, ids[0]) && started(dir, ids[1]) && started(dir, ids[2]) && started(dir, ids[3]),
		 "the four jobs have not all started after 30 s");
	/* None can have ended: all four run at once, on one instance. */
	for (int k = 0; k < 4; k++) {
		char *text = harness_read_file(harness_fmt("%s/started.%lld", dir, (long long)ids[k]), NULL);
		int gpu = text ? atoi(text) : -1;
		if (!text || strchr(text, ',') || gpu < 0 || gpu > 3 || seen[gpu]++)
			harness_fail_with_log(s, "job %lld sees CUDA_VISIBLE_DEVICES=%s: not a GPU of its own",
					      (long long)ids[k], text ? text : "(unread)");
		free(text);
		assert_true(harness_job_is(s, ids[k], "leased"));
	}
	assert_int(harness_live_instances(s, NULL), 1);
	assert_string_equal(instance_str(s, "state", buf, sizeof buf), "busy");

	harness_write_file(harness_fmt("%s/end", dir), "");
	WAIT_FOR(s, 20000, harness_stat(s, "states.succeeded") == 4, "%lld of 4 jobs succeeded",
		 (long long)harness_stat(s, "states.succeeded"));
	WAIT_FOR(s, 20000, harness_live_instances(s, NULL) == 0, "the instance is still up after its jobs (idle_timeout 1s)");

	/* The ledger: the report's total is the instance's bill, to the cent. */
	f = harness_get(s, "/v1/fleet?all=1");
	i = json_array_get(harness_jget(f, "instances"), 0);
	assert_int(json_array_size(harness_jget(f, "instances")), 1);
	r = harness_get(s, "/v1/report?by=type"); /* by team, idle is its launching team's */
	if (fabs(JNUM(r, "total.cost_usd") - JNUM(i, "cost_usd")) > 0.005 ||
	    fabs(JNUM(r, "total.seconds.billed") - JNUM(i, "billed_s")) > 0.0005)
		harness_fail_with_log(s, "report: $%.6f for %.3f s; the instance was billed $%.6f for %.3f s",
				      JNUM(r, "total.cost_usd"), JNUM(r, "total.seconds.billed"), JNUM(i, "cost_usd"),
				      JNUM(i, "billed_s"));
	/* Each job paid for its one GPU of four while it ran, by hand:
	 * $3.6/h is $0.00025 a GPU-second; what is left is the report's
	 * (idle) row: boot, the GPUs no job held, the billing remainder. */
	for (int k = 0; k < 4; k++) {
		json_t *j = harness_get_job(s, ids[k]);
		double ran_s = JNUM(j, "finished_at") - JNUM(j, "started_at"), want = ran_s * 3.6 / 3600 / 4;
		jobs_cost += JNUM(j, "cost_usd");
		if (fabs(JNUM(j, "cost_usd") - want) > 1e-5)
			harness_fail_with_log(s, "job %lld ran %.3f s on 1 GPU of 4: cost $%.6f, expected $%.6f",
					      (long long)ids[k], ran_s, JNUM(j, "cost_usd"), want);
		json_decref(j);
	}
	if (fabs(jobs_cost + idle_cost(r) - JNUM(r, "total.cost_usd")) > 1e-6)
		harness_fail_with_log(s, "the jobs' $%.6f and (idle)'s $%.6f are not the total $%.6f", jobs_cost,
				      idle_cost(r), JNUM(r, "total.cost_usd"));
	json_decref(r);
	json_decref(f);
	assert_int(harness_server_stop(s), 0);
}

/* Two jobs on the instance; the first ends, the second runs on: the
 * instance is busy with it, and an hour past the idle timeout (serve's
 * test clock) it is still up and the job still leased. */
static void test_one_busy_gpu_keeps_the_instance(void **state)
{
	struct harness_server *s = serve("idle_timeout = 1m\n", HARNESS_TEST_CLOCK);
	const char *dir = harness_tmpdir();
	int64_t first, second;
	char buf[64];

	(void)state;
	first = submit_waiting(s, dir);
	second = submit_waiting(s, dir);
	WAIT_FOR(s, 30000, started(dir, first) && started(dir, second), "the two jobs have not both started after 30 s");
	harness_write_file(harness_fmt("%s/end.%lld", dir, (long long)first), "");
	WAIT_FOR(s, 10000, harness_job_is(s, first, "succeeded"), "job %lld did not succeed", (long long)first);
	assert_true(harness_job_is(s, second, "leased"));
	assert_string_equal(instance_str(s, "state", buf, sizeof buf), "busy");
	assert_int(instance_job(s), second);

	harness_advance(s, 60 * 60 * 1000);
	/* Ten scaler intervals past the advance: still busy, still up. */
	for (int k = 0; k < 10; k++) {
		if (harness_live_instances(s, NULL) != 1 || strcmp(instance_str(s, "state", buf, sizeof buf), "busy") != 0)
			harness_fail_with_log(s, "the instance is %s with job %lld still running on it", buf,
					      (long long)second);
		harness_sleep_ms(200);
	}
	assert_true(harness_job_is(s, second, "leased"));
	harness_write_file(harness_fmt("%s/end", dir), "");
	WAIT_FOR(s, 10000, harness_job_is(s, second, "succeeded"), "job %lld did not succeed", (long long)second);
	assert_int(harness_server_stop(s), 0);
}

/* Is job id interrupted `times` times, and queued or leased again? */
static int interrupted(struct harness_server *s, int64_t id, int times)
{
	json_t *j = harness_get_job(s, id);
	int yes = JINT(j, "interruptions") == times &&
		  (strcmp(JSTR(j, "state"), "queued") == 0 || strcmp(JSTR(j, "state"), "leased") == 0);

	json_decref(j);
	return yes;
}

/* A reclaim notice on an instance running two jobs side by side: its
 * runners stop both, which are interrupted (no attempt spent) and queued
 * again; the worker leaves once both are reported, and they run to their
 * end on the next instance. */
static void test_reclaim_interrupts_every_job_beside(void **state)
{
	struct harness_server *s = serve("idle_timeout = 1m\n[provider]\nreclaim_grace = 2s\n[local]\nreclaim_notice = 5s\n",
					 0);
	const char *dir = harness_tmpdir();
	struct harness_run run;
	int64_t first, second, inst = 0, next = 0;

	(void)state;
	first = submit_waiting(s, dir);
	second = submit_waiting(s, dir);
	WAIT_FOR(s, 30000, started(dir, first) && started(dir, second), "the two jobs have not both started after 30 s");
	assert_int(harness_live_instances(s, &inst), 1);
	unlink(harness_fmt("%s/started.%lld", dir, (long long)first));
	unlink(harness_fmt("%s/started.%lld", dir, (long long)second));
	if (harness_ebb(&run, s, "reclaim", harness_fmt("%lld", (long long)inst), (char *)NULL) != 0)
		harness_fail_with_log(s, "ebb reclaim %lld: %s%s", (long long)inst, run.out, run.err);
	harness_run_free(&run);
	WAIT_FOR(s, 30000, interrupted(s, first, 1) && interrupted(s, second, 1),
		 "the jobs of reclaimed instance %lld were not both interrupted", (long long)inst);
	/* Both run again, on the next instance, and end there. */
	WAIT_FOR(s, 30000, started(dir, first) && started(dir, second), "the two jobs did not start again after 30 s");
	harness_live_instances(s, &next);
	assert_true(next != inst);
	harness_write_file(harness_fmt("%s/end", dir), "");
	WAIT_FOR(s, 20000, harness_job_is(s, first, "succeeded") && harness_job_is(s, second, "succeeded"),
		 "jobs %lld and %lld did not both succeed", (long long)first, (long long)second);
	for (int k = 0; k < 2; k++) {
		json_t *j = harness_get_job(s, k ? second : first);
		assert_int(JINT(j, "attempts"), 1);
		assert_int(JINT(j, "interruptions"), 1);
		json_decref(j);
	}
	assert_int(harness_server_stop(s), 0);
}

/* The GPUs job id saw, sorted, in buf ("" when it has not written them). */
static const char *seen_gpus(const char *dir, int64_t id, char *buf, size_t size)
{
	char *text = harness_read_file(harness_fmt("%s/started.%lld", dir, (long long)id), NULL);

	snprintf(buf, size, "%s", text ? text : "");
	buf[strcspn(buf, "\n")] = '\0';
	free(text);
	return buf;
}

/* A worker started by hand (no instance) with --gpus 3, on the GPUs its
 * CUDA_VISIBLE_DEVICES names: a 2-GPU and a 1-GPU job run at once, each
 * on GPUs of its own, the three between them; SIGTERM stops both, each
 * reported interrupted (queued again, no attempt spent), and the worker
 * exits once both are. */
static void test_hand_started_worker_packs_and_stops_all(void **state)
{
	struct harness_server *s = harness_serve(NULL, 0);
	const char *dir = harness_tmpdir();
	char two[64], one[64], all[160];
	int64_t pair, single;
	pid_t pid;
	int st = -1;

	(void)state;
	pair = submit_gpus(s, dir, 2);
	single = submit_gpus(s, dir, 1);
	pid = harness_hand_worker(s, harness_fmt("%s/worker.log", dir), "4,6,9", "--gpus", "3", NULL);
	WAIT_FOR(s, 20000, started(dir, pair) && started(dir, single), "the two jobs have not both started after 20 s");
	seen_gpus(dir, pair, two, sizeof two);
	seen_gpus(dir, single, one, sizeof one);
	snprintf(all, sizeof all, ",%s,%s,", two, one);
	if (strlen(two) != 3 || strlen(one) != 1 || !strstr(all, ",4") || !strstr(all, ",6") || !strstr(all, ",9"))
		harness_fail_with_log(s, "the 2-GPU job saw '%s', the 1-GPU job '%s': not 4, 6 and 9 between them", two,
				      one);
	st = harness_stop_hand_worker(s, pid, 15000);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	for (int k = 0; k < 2; k++) {
		json_t *j = harness_get_job(s, k ? single : pair);
		assert_string_equal(JSTR(j, "state"), "queued");
		assert_int(JINT(j, "attempts"), 0);
		assert_int(JINT(j, "interruptions"), 1);
		json_decref(j);
	}
	assert_int(harness_server_stop(s), 0);
}

/* The worker of an instance running two jobs side by side killed -9: its
 * runners die with it and their jobs with them (nothing runs twice once
 * the leases expire), the instance is gone, and both jobs run again on the
 * next one. */
static void test_kill_9_leaves_no_job_behind(void **state)
{
	struct harness_server *s = serve("idle_timeout = 1m\n", 0);
	const char *dir = harness_tmpdir();
	int64_t first, second, inst = 0;
	pid_t worker = 0, jobs[2];
	json_t *f;

	(void)state;
	first = submit_waiting(s, dir);
	second = submit_waiting(s, dir);
	WAIT_FOR(s, 30000, started(dir, first) && started(dir, second), "the two jobs have not both started after 30 s");
	jobs[0] = job_pid(dir, first);
	jobs[1] = job_pid(dir, second);
	harness_live_instances(s, &inst);
	f = harness_get(s, "/v1/fleet");
	sscanf(JSTR(json_array_get(harness_jget(f, "instances"), 0), "provider_ref"), "pid:%d", &worker);
	json_decref(f);
	assert_true(worker > 0 && harness_alive(worker, NULL));
	unlink(harness_fmt("%s/started.%lld", dir, (long long)first));
	unlink(harness_fmt("%s/started.%lld", dir, (long long)second));
	kill(worker, SIGKILL);
	WAIT_FOR(s, 10000, !harness_alive(jobs[0], NULL) && !harness_alive(jobs[1], NULL),
		 "a job of the worker killed -9 still runs (pids %d, %d)", (int)jobs[0], (int)jobs[1]);
	WAIT_FOR(s, 30000, started(dir, first) && started(dir, second), "the two jobs did not start again after 30 s");
	assert_true(harness_live_instances(s, NULL) == 1 && !harness_alive(worker, NULL));
	harness_write_file(harness_fmt("%s/end", dir), "");
	WAIT_FOR(s, 20000, harness_job_is(s, first, "succeeded") && harness_job_is(s, second, "succeeded"),
		 "jobs %lld and %lld did not both succeed", (long long)first, (long long)second);
	assert_int(harness_server_stop(s), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_four_jobs_at_once_on_four_gpus, harness_cleanup),
		cmocka_unit_test_teardown(test_one_busy_gpu_keeps_the_instance, harness_cleanup),
		cmocka_unit_test_teardown(test_reclaim_interrupts_every_job_beside, harness_cleanup),
		cmocka_unit_test_teardown(test_hand_started_worker_packs_and_stops_all, harness_cleanup),
		cmocka_unit_test_teardown(test_kill_9_leaves_no_job_behind, harness_cleanup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
