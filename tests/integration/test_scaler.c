/* The scaler end to end: a real `ebb serve` with `[provider] kind = local`
 * starting real `ebb worker` processes, which run real shell jobs. The
 * tests watch the fleet (GET /v1/fleet), the decisions (GET
 * /v1/decisions) and the worker processes themselves (/proc). They run in
 * real time, since the workers are real processes; every wait polls with
 * a deadline. Each test kills the workers it started when it ends. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

#define MAX_PIDS 64

/* ---- worker processes ---- */

static int count_workers(const struct harness_server *s, pid_t parent)
{
	pid_t pids[MAX_PIDS];
	return harness_worker_pids(s->url, parent, pids, MAX_PIDS);
}

/* ---- serve and its API ---- */

/* The local provider with four GPU indices, workers that append
 * "$EBB_WORKER $EBB_EXIT_REASON" to exits_path when they exit by
 * themselves, a 1 s wait target, a fast scaler; then extra, which starts
 * in [scaler]. */
static struct harness_server *serve(const char *exits_path, const char *extra, int flags)
{
	struct harness_server *s = harness_serve(
		harness_fmt("[provider]\n"
			    "kind = local\n"
			    "orphan_timeout = 10s\n"
			    "on_exit = echo \"$EBB_WORKER $EBB_EXIT_REASON\" >> %s\n"
			    "[local]\n"
			    "gpus = 0,1,2,3\n"
			    "[lane.standard]\n"
			    "wait_target = 1s\n"
			    "[scaler]\n"
			    "interval = 200ms\n"
			    "%s",
			    exits_path, extra),
		flags);
	harness_own_workers(s);
	return s;
}

/* A new file path for on_exit's lines (kept: harness_fmt's buffers rotate). */
static const char *exits_file(void)
{
	static char path[4200];

	snprintf(path, sizeof path, "%s/exits", harness_tmpdir());
	return path;
}

static int64_t submit(struct harness_server *s, const char *script, int est_s)
{
	return harness_submit(s, harness_fmt("{\"command\": [\"sh\", \"-c\", \"%s\"], \"est_s\": %d}", script, est_s));
}

/* GET /v1/fleet (?all=1 with all); the reply, to json_decref. */
static json_t *fleet(struct harness_server *s, int all)
{
	json_t *r = NULL;

	if (harness_call(s, "GET", all ? "/v1/fleet?all=1" : "/v1/fleet", NULL, &r) != 200 ||
	    !json_is_array(harness_jget(r, "instances")))
		harness_fail_with_log(s, "GET /v1/fleet failed");
	return r;
}

/* Instances of the fleet reply in state (NULL: not terminated). */
static int count_state(json_t *f, const char *state)
{
	json_t *list = harness_jget(f, "instances"), *i;
	size_t k;
	int n = 0;

	json_array_foreach(list, k, i) {
		const char *st = JSTR(i, "state");
		n += state ? strcmp(st, state) == 0 : strcmp(st, "terminated") != 0;
	}
	return n;
}

static int idle_instances(struct harness_server *s)
{
	json_t *f = fleet(s, 0);
	int n = count_state(f, "idle");

	json_decref(f);
	return n;
}

/* The decisions, oldest last; the reply, to json_decref. */
static json_t *decisions(struct harness_server *s)
{
	json_t *r = NULL;

	if (harness_call(s, "GET", "/v1/decisions?limit=1000", NULL, &r) != 200 ||
	    !json_is_array(harness_jget(r, "decisions")))
		harness_fail_with_log(s, "GET /v1/decisions failed");
	return r;
}

/* How many decisions of kind there are whose reason has reason_has (NULL:
 * any); with kind NULL, the instances launched by "launch" decisions. */
static int64_t count_decisions(struct harness_server *s, const char *kind, const char *reason_has)
{
	json_t *r = decisions(s), *d;
	size_t k;
	int64_t n = 0;

	json_array_foreach(harness_jget(r, "decisions"), k, d) {
		if (reason_has && !strstr(JSTR(d, "reason"), reason_has))
			continue;
		if (!kind)
			n += strcmp(JSTR(d, "kind"), "launch") == 0 ? JINT(d, "count") : 0;
		else
			n += strcmp(JSTR(d, "kind"), kind) == 0;
	}
	json_decref(r);
	return n;
}


/* ---- the tests ---- */

/* 12 jobs of 1 s, at most 3 instances: never more than 3 up (in the fleet
 * and as processes), all 12 done, and the fleet empty again a few seconds
 * after the last one with a 3 s idle timeout. */
static void test_scale_up_within_max_and_back_to_zero(void **state)
{
	const char *exits = exits_file();
	struct harness_server *s = serve(exits, "max_instances = 3\nidle_timeout = 3s\n", 0);
	int64_t until, done_at;
	int most = 0, most_procs = 0;

	(void)state;
	for (int k = 0; k < 12; k++)
		submit(s, "sleep 1", 1);
	until = harness_now_ms() + 30000;
	for (;;) {
		int live = harness_live_instances(s, NULL), procs = count_workers(s, s->pid);
		if (live > 3 || procs > 3)
			harness_fail_with_log(s, "%d instances up and %d worker processes; max_instances is 3", live, procs);
		most = live > most ? live : most;
		most_procs = procs > most_procs ? procs : most_procs;
		if (harness_stat(s, "states.succeeded") == 12)
			break;
		if (harness_now_ms() > until)
			harness_fail_with_log(s, "%lld of 12 jobs succeeded after 30 s", (long long)harness_stat(s, "states.succeeded"));
		harness_sleep_ms(100);
	}
	done_at = harness_now_ms();
	/* 12 s of work for a 1 s target: the scaler went to the limit. */
	assert_int(most, 3);
	assert_between(most_procs, 1, 3);
	assert_between(count_decisions(s, NULL, NULL), 3, 12);

	/* Idle for 3 s: released, and the processes are gone. */
	WAIT_FOR(s, 12000, harness_live_instances(s, NULL) == 0 && count_workers(s, 0) == 0,
		 "12 s after the last job: %d instances up, %d worker processes (idle_timeout 3s)",
		 harness_live_instances(s, NULL), count_workers(s, 0));
	print_message("fleet empty %lld ms after the last job\n", (long long)(harness_now_ms() - done_at));
	assert_true(harness_now_ms() - done_at >= 2500); /* not before the idle timeout */
	{
		json_t *f = fleet(s, 1);
		assert_between(count_state(f, "terminated"), 3, 12);
		assert_int(count_state(f, NULL), 0);
		json_decref(f);
	}
}

/* A busy worker survives a serve restart that shrinks max_instances to 0:
 * its instance is drained, not terminated, while its job runs; the job
 * succeeds on its first attempt, and only then is the instance
 * terminated. */
static void test_busy_instance_drained_never_terminated(void **state)
{
	const char *exits = exits_file();
	int port = harness_free_port();
	struct harness_server *s = serve(
		exits,
		harness_fmt("max_instances = 1\nidle_timeout = 60s\n[server]\nlisten = 127.0.0.1:%d\n", port), 0);
	int64_t id = submit(s, "sleep 4", 4), until;
	int64_t inst_id = 0;
	int worker = 0, saw_draining = 0;
	char *conf, *at;
	json_t *f, *j;

	(void)state;
	/* Wait until it runs on an instance that is busy. */
	until = harness_now_ms() + 15000;
	while (!inst_id) {
		json_t *i;
		size_t k;
		f = fleet(s, 0);
		json_array_foreach(harness_jget(f, "instances"), k, i) {
			if (strcmp(JSTR(i, "state"), "busy") == 0 && json_integer_value(harness_jget(i, "job")) == id) {
				inst_id = JINT(i, "id");
				sscanf(JSTR(i, "provider_ref"), "pid:%d", &worker);
			}
		}
		json_decref(f);
		if (harness_now_ms() > until)
			harness_fail_with_log(s, "job %lld was not running on a busy instance after 15 s", (long long)id);
		harness_sleep_ms(20);
	}
	assert_true(worker > 0);

	/* Restart serve with no instance allowed. */
	assert_int(harness_server_stop(s), 0);
	if (!harness_alive(worker, NULL))
		harness_fail_with_log(s, "the worker (pid %d) died with serve", worker);
	conf = harness_read_file(s->conf, NULL);
	if (!conf || !(at = strstr(conf, "max_instances = 1")))
		fail_msg("max_instances = 1 not in %s", s->conf);
	at[strlen("max_instances = ")] = '0';
	harness_write_file(s->conf, conf);
	free(conf);
	harness_server_start(s);
	assert_int(strcmp(s->url, harness_fmt("http://127.0.0.1:%d", port)), 0);

	/* Draining while the job runs; terminated only once it is done. */
	until = harness_now_ms() + 20000;
	for (;;) {
		const char *st = "(missing)", *job_state;
		json_t *i;
		size_t k;
		f = fleet(s, 1);
		json_array_foreach(harness_jget(f, "instances"), k, i) {
			if (JINT(i, "id") == inst_id)
				st = JSTR(i, "state");
		}
		j = harness_get_job(s, id); /* after the fleet: a job seen running was running then */
		job_state = JSTR(j, "state");
		saw_draining |= strcmp(st, "draining") == 0;
		if (strcmp(st, "terminated") == 0 && strcmp(job_state, "succeeded") != 0)
			harness_fail_with_log(s, "instance %lld terminated while its job %lld is %s", (long long)inst_id,
				      (long long)id, job_state);
		if (strcmp(st, "busy") != 0 && strcmp(st, "draining") != 0 && strcmp(st, "terminated") != 0)
			harness_fail_with_log(s, "instance %lld is %s, expected busy, draining or terminated",
				      (long long)inst_id, st);
		if (strcmp(st, "terminated") == 0) {
			assert_int(JINT(j, "attempts"), 1);
			json_decref(j);
			json_decref(f);
			break;
		}
		json_decref(j);
		json_decref(f);
		if (harness_now_ms() > until)
			harness_fail_with_log(s, "instance %lld still %s, job %s, after 20 s", (long long)inst_id, st,
				      job_state);
		harness_sleep_ms(50);
	}
	if (!saw_draining)
		harness_fail_with_log(s, "instance %lld was never seen draining", (long long)inst_id);
	assert_int(count_decisions(s, "drain", NULL), 1);
	assert_int(count_decisions(s, "terminate", "drained"), 1);
	assert_int(count_decisions(s, NULL, NULL), 1); /* the one launch, before the restart */
	WAIT_FOR(s, 10000, !harness_alive(worker, NULL), "the worker (pid %d) still runs after its instance was terminated",
		 worker);
}

/* The worker of an idle instance waits in a long-poll; the instance is
 * drained: the job submitted next is not leased to it, whose instance is
 * going away (docs/API.md: while the instance drains, its lease requests
 * get no job), but to another. The drain and the submit are two calls in
 * a row, so the worker is still parked when the job arrives. The job runs
 * until the test lets it end, so that its lease is there to be read. */
static void test_drained_instance_waiting_worker_gets_no_job(void **state)
{
	const char *exits = exits_file();
	struct harness_server *s = serve(exits, "max_instances = 2\nidle_timeout = 60s\n", 0);
	int64_t drained = 0, id;
	char go[4200];
	json_t *j;

	(void)state;
	snprintf(go, sizeof go, "%s/go", harness_tmpdir());
	submit(s, "true", 1);
	WAIT_FOR(s, 20000, harness_stat(s, "states.succeeded") == 1, "the first job is not done after 20 s");
	WAIT_FOR(s, 5000, idle_instances(s) == 1, "no idle instance after the first job");
	assert_int(harness_live_instances(s, &drained), 1);
	harness_wait_waiting(s, 1);
	json_decref(harness_call_ok(s, "POST", harness_fmt("/v1/fleet/%lld/drain", (long long)drained), NULL, 200));
	id = submit(s, harness_fmt("until [ -e %s ]; do sleep 0.05; done", go), 1);
	WAIT_FOR(s, 20000, harness_job_is(s, id, "leased"), "job %lld is not leased 20 s after instance %lld was drained",
		 (long long)id, (long long)drained);
	j = harness_get_job(s, id);
	if (JINT(j, "lease.instance") == drained)
		harness_fail_with_log(s, "job %lld was leased to instance %lld, drained before it was submitted",
				      (long long)id, (long long)drained);
	json_decref(j);
	harness_write_file(go, "");
	WAIT_FOR(s, 20000, harness_job_is(s, id, "succeeded"), "job %lld is not done 20 s after it was let go",
		 (long long)id);
}

/* serve killed with -9 while its workers idle: each exits by itself within
 * orphan_timeout (plus its retry backoff) and runs on_exit, "orphaned". */
static void test_orphaned_workers_exit(void **state)
{
	const char *exits = exits_file();
	struct harness_server *s =
		serve(exits, "max_instances = 2\nidle_timeout = 60s\nwarm = * * 2\n[provider]\norphan_timeout = 3s\n", 0);
	pid_t pids[2];
	int64_t killed_at, took;
	json_t *f, *i;
	size_t k;
	int n = 0;

	(void)state;
	WAIT_FOR(s, 15000, idle_instances(s) == 2, "two warm instances are not idle after 15 s");
	f = fleet(s, 0);
	json_array_foreach(harness_jget(f, "instances"), k, i) {
		int pid = 0;
		if (n < 2 && sscanf(JSTR(i, "provider_ref"), "pid:%d", &pid) == 1)
			pids[n++] = pid;
	}
	json_decref(f);
	assert_int(n, 2);
	assert_int(count_workers(s, 0), 2);

	harness_server_kill(s);
	killed_at = harness_now_ms();
	WAIT_FOR(s, 3000 + 8000, !harness_alive(pids[0], NULL) && !harness_alive(pids[1], NULL),
		 "workers %d (%s) and %d (%s) still run %lld ms after serve was killed (orphan_timeout 3s)",
		 (int)pids[0], harness_alive(pids[0], NULL) ? "alive" : "gone", (int)pids[1],
		 harness_alive(pids[1], NULL) ? "alive" : "gone", (long long)(harness_now_ms() - killed_at));
	took = harness_now_ms() - killed_at;
	print_message("workers gone %lld ms after serve was killed\n", (long long)took);
	assert_int(count_workers(s, 0), 0);
	/* One line per worker, each orphaned. */
	assert_int(harness_file_lines(exits, NULL), 2);
	assert_int(harness_file_lines(exits, "orphaned"), 2);
	{
		char *text = harness_read_file(exits, NULL);
		assert_contains(text, "i-");
		free(text);
	}
}

/* Two bursts with a gap shorter than the idle timeout: the second finds
 * the first's instances and launches none. After a gap longer than it,
 * they are gone and the third burst launches again. The gaps are on
 * serve's test clock; the jobs run in real time. */
static void test_burst_gap_burst_reuses_instances(void **state)
{
	const char *exits = exits_file();
	struct harness_server *s =
		serve(exits, "max_instances = 3\nidle_timeout = 5m\n", HARNESS_TEST_CLOCK);
	int64_t first;

	(void)state;
	for (int k = 0; k < 3; k++)
		submit(s, "sleep 1", 1);
	WAIT_FOR(s, 20000, harness_stat(s, "states.succeeded") == 3, "first burst: %lld of 3 jobs succeeded after 20 s",
		 (long long)harness_stat(s, "states.succeeded"));
	first = count_decisions(s, NULL, NULL);
	assert_between(first, 1, 3);
	WAIT_FOR(s, 5000, idle_instances(s) == first, "the %lld instances are not all idle after the first burst",
		 (long long)first);

	/* 2 minutes later, within the 5 minute idle timeout. */
	harness_advance(s, 2 * 60 * 1000);
	for (int k = 0; k < 3; k++)
		submit(s, "sleep 1", 1);
	WAIT_FOR(s, 20000, harness_stat(s, "states.succeeded") == 6, "second burst: %lld of 6 jobs succeeded after 20 s",
		 (long long)harness_stat(s, "states.succeeded"));
	if (count_decisions(s, NULL, NULL) != first)
		harness_fail_with_log(s, "the second burst launched: %lld instances launched in all, %lld after the first burst",
			      (long long)count_decisions(s, NULL, NULL), (long long)first);
	assert_int(count_decisions(s, "terminate", NULL), 0);
	assert_int(harness_live_instances(s, NULL), first);

	/* 6 minutes later, past it: released, without any new submission. */
	harness_advance(s, 6 * 60 * 1000);
	WAIT_FOR(s, 10000, harness_live_instances(s, NULL) == 0,
		 "%d instances still up 6 minutes (test clock) after the second burst, idle_timeout 5m",
		 harness_live_instances(s, NULL));
	assert_int(count_decisions(s, "terminate", "idle"), first);
	/* The local provider has their GPU indices back only once their
	 * workers have exited; a burst before that would see launches
	 * refused for capacity, and every retry counted as one more launch. */
	WAIT_FOR(s, 10000, count_workers(s, s->pid) == 0, "%d workers still run 10 s after their instances were released",
		 count_workers(s, s->pid));
	for (int k = 0; k < 3; k++)
		submit(s, "sleep 1", 1);
	WAIT_FOR(s, 20000, harness_stat(s, "states.succeeded") == 9, "third burst: %lld of 9 jobs succeeded after 20 s",
		 (long long)harness_stat(s, "states.succeeded"));
	assert_between(count_decisions(s, NULL, NULL), first + 1, first + 3);
}

/* The arrival rate holds capacity for the work it expects: three jobs in
 * the batch lane (60 s wait target; the local offer boots in 0 s, so the
 * horizon is 60 s) arriving at once, with a 1 minute arrival window, make
 * 3 jobs expected within it. With idle_timeout 0 s nothing else keeps an
 * idle instance; the one launched is kept while the expectation lasts and
 * released once the rate has decayed (2 minutes on: 3 e^-2 = 0.4 jobs). */
static void test_arrival_rate_holds_an_instance(void **state)
{
	const char *exits = exits_file();
	struct harness_server *s = serve(exits,
					 "max_instances = 4\nidle_timeout = 0s\narrival_window = 1m\n"
					 "[lane.batch]\nwait_target = 60s\n",
					 HARNESS_TEST_CLOCK);

	(void)state;
	for (int k = 0; k < 3; k++)
		harness_submit(s, "{\"command\": [\"true\"], \"lane\": \"batch\", \"est_s\": 1}");
	WAIT_FOR(s, 20000, harness_stat(s, "states.succeeded") == 3, "%lld of 3 jobs succeeded after 20 s",
		 (long long)harness_stat(s, "states.succeeded"));
	WAIT_FOR(s, 5000, idle_instances(s) >= 1, "no idle instance after the jobs");
	/* The launch counted the arrivals: all three, or those committed by
	 * its run (a commit that takes longer, on PostgreSQL or a busy disk,
	 * lets the scaler run between two submits). */
	assert_int(count_decisions(s, "launch", " expected,"), 1);
	/* Ten scaler intervals, idle past the 0 s timeout: still there. */
	for (int k = 0; k < 10; k++) {
		if (harness_live_instances(s, NULL) < 1)
			harness_fail_with_log(s, "the idle instance went while 3 jobs were expected");
		harness_sleep_ms(200);
	}
	assert_int(count_decisions(s, "terminate", NULL), 0);

	harness_advance(s, 2 * 60 * 1000);
	WAIT_FOR(s, 10000, harness_live_instances(s, NULL) == 0,
		 "%d instances still up 2 minutes (test clock) after the arrivals, arrival_window 1m",
		 harness_live_instances(s, NULL));
	assert_int(count_decisions(s, "terminate", "idle"), count_decisions(s, NULL, NULL));
}

/* The warm floor: none before its hour, two ready instances inside it,
 * kept while idle past the idle timeout, released after the hour. serve's
 * test clock jumps to the hours. */
static void test_warm_pool_floor_by_the_hour(void **state)
{
	const char *exits = exits_file();
	time_t now = time(NULL);
	int64_t boundary = ((int64_t)now / 3600 + 1) * 3600, advance_ms;
	int hour;
	struct harness_server *s;
	json_t *f;

	(void)state;
	if (boundary - now < 30)
		boundary += 3600; /* too close to the hour to be sure of "before" */
	hour = (int)((boundary / 3600) % 24);
	s = serve(exits, harness_fmt("max_instances = 4\nidle_timeout = 10m\nwarm = * %02d-%02d 2\n", hour, hour + 1),
		  HARNESS_TEST_CLOCK);

	/* Before the hour: none, for five scaler intervals. */
	for (int k = 0; k < 10; k++) {
		int live = harness_live_instances(s, NULL);
		if (live != 0)
			harness_fail_with_log(s, "%d instances before the warm hour %02d:00 UTC", live, hour);
		harness_sleep_ms(100);
	}

	/* A minute into the hour: two launched, and they register. */
	advance_ms = (boundary - (int64_t)time(NULL) + 60) * 1000;
	harness_advance(s, advance_ms);
	WAIT_FOR(s, 15000, idle_instances(s) == 2, "warm hour: %d instances up, expected 2 idle ones",
		 harness_live_instances(s, NULL));
	assert_int(count_decisions(s, NULL, "warm pool floor"), 2);
	assert_int(harness_live_instances(s, NULL), 2);

	/* 20 minutes on, idle past the 10 minute timeout: the floor keeps them. */
	harness_advance(s, 20 * 60 * 1000);
	for (int k = 0; k < 10; k++) {
		f = fleet(s, 0);
		if (count_state(f, "idle") != 2 || count_state(f, NULL) != 2)
			harness_fail_with_log(s, "inside the warm hour, idle past the timeout: %d up, %d idle, expected 2",
				      count_state(f, NULL), count_state(f, "idle"));
		json_decref(f);
		harness_sleep_ms(100);
	}
	assert_int(count_decisions(s, "terminate", NULL), 0);
	assert_int(count_decisions(s, NULL, NULL), 2);

	/* After the hour: released. */
	harness_advance(s, 60 * 60 * 1000);
	WAIT_FOR(s, 10000, harness_live_instances(s, NULL) == 0 && count_workers(s, 0) == 0,
		 "after the warm hour: %d instances up, %d worker processes", harness_live_instances(s, NULL), count_workers(s, 0));
	assert_int(count_decisions(s, "terminate", "idle"), 2);
	assert_int(count_decisions(s, NULL, NULL), 2);
}

/* The idle timeout of an offer in the fleet's reply (key: idle_timeout_s
 * or idle_surplus_timeout_s): its seconds and why. */
static double timeout_of(json_t *fleet, const char *offer, const char *key, const char **why)
{
	json_t *t = harness_find(fleet, "idle_timeouts", "offer", offer);

	if (!t)
		fail_msg("no idle timeout for offer %s", offer);
	*why = JSTR(t, "why");
	return JNUM(t, key);
}

/* idle_timeout = auto: submissions with known gaps (2, 3, ..., 21 minutes
 * on the test clock, each pair of submissions a few ms apart, which is
 * below idle_timeout_min and not counted), and two offers. The one that
 * boots at once is released at the minimum: a release costs nothing. The
 * one that boots in 20 minutes, for a lane with a 1 s wait target, costs
 * 2 x 1200 s a release, more than holding any of the gaps: it is held for
 * the longest, 21 minutes. With idle_surplus_timeout = auto, the other
 * idle instances are held over two gaps in a row (a few ms and one of 2 to
 * 21 minutes each), at most the offer's idle timeout: the quick one at the
 * minimum; the slow one for 20 or 21 minutes and a few ms: the pairs of
 * 21 minutes are at most its 21 (bridged) when the two submits came in the
 * same millisecond, else just past it, and the pairs of 20 are the
 * longest it may bridge. */
static void test_auto_idle_timeout_from_gaps(void **state)
{
	const char *exits = exits_file(), *why;
	struct harness_server *s = serve(exits,
					  "max_instances = 0\nidle_timeout = auto\nidle_surplus_timeout = auto\n"
					  "idle_timeout_min = 1m\n"
					  "idle_timeout_max = 30m\n"
					  "[offer.quick]\ngpus = 1\nboot = 0s\nprice_ondemand = 1\n"
					  "[offer.slow]\ngpus = 1\nboot = 20m\nprice_ondemand = 1\n",
					  HARNESS_TEST_CLOCK);
	json_t *f;
	double got;

	(void)state;
	f = fleet(s, 0);
	assert_int((int64_t)(timeout_of(f, "slow", "idle_timeout_s", &why) + 0.5), 60);
	assert_contains(why, "auto");
	assert_contains(why, "no gap"); /* nothing submitted yet: the minimum */
	json_decref(f);

	for (int gap = 2; gap <= 22; gap++) {
		submit(s, "true", 1);
		submit(s, "true", 1);
		if (gap <= 21)
			harness_advance(s, (int64_t)gap * 60 * 1000);
	}
	f = fleet(s, 0);
	assert_int((int64_t)(timeout_of(f, "quick", "idle_timeout_s", &why) + 0.5), 60);
	assert_contains(why, "bridges 0 of the 20 gaps");
	got = timeout_of(f, "slow", "idle_timeout_s", &why);
	if (got < 1260 || got > 1262) {
		char *text = json_dumps(f, JSON_COMPACT);
		fail_msg("slow's idle_timeout_s is %.3f, expected 1260 (21 min) to 1262; fleet: %s", got, text);
	}
	assert_contains(why, "bridges 20 of the 20 gaps");
	assert_contains(why, "a 1200s boot");
	assert_contains(why, "the other idle ones");
	assert_between((int64_t)timeout_of(f, "slow", "idle_surplus_timeout_s", &why), 1200, 1262);
	assert_int((int64_t)(timeout_of(f, "quick", "idle_surplus_timeout_s", &why) + 0.5), 60);
	json_decref(f);
	assert_int(count_workers(s, 0), 0); /* max_instances = 0 */
}

/* A worker adopted by a restarted serve that then dies (kill -9) is found
 * gone at the next look, although it is not serve's child and, where
 * nobody reaps it, stays a zombie: its instance is terminated and a new
 * job gets a new instance, not a wait for the dead one's idle timeout. */
static void test_adopted_worker_that_dies_is_gone(void **state)
{
	const char *exits = exits_file();
	int port = harness_free_port();
	struct harness_server *s = serve(
		exits, harness_fmt("max_instances = 1\nidle_timeout = 60s\n[server]\nlisten = 127.0.0.1:%d\n", port), 0);
	int64_t first = submit(s, "true", 1), second, old_id = 0;
	int worker = 0;
	json_t *f, *i;
	size_t k;

	(void)state;
	WAIT_FOR(s, 15000, harness_job_is(s, first, "succeeded") && idle_instances(s) == 1,
		 "the first job did not succeed on an instance that is now idle");
	f = fleet(s, 0);
	json_array_foreach(harness_jget(f, "instances"), k, i) {
		old_id = JINT(i, "id");
		sscanf(JSTR(i, "provider_ref"), "pid:%d", &worker);
	}
	json_decref(f);
	assert_true(worker > 0);

	assert_int(harness_server_stop(s), 0);
	harness_server_start(s); /* adopts the worker */
	assert_int(idle_instances(s), 1);
	kill(worker, SIGKILL);
	WAIT_FOR(s, 5000, !harness_alive(worker, NULL), "worker %d still runs after kill -9", worker);

	second = submit(s, "true", 1);
	WAIT_FOR(s, 10000, harness_job_is(s, second, "succeeded"),
		 "a job submitted after the adopted worker died has not run within 10 s (idle_timeout 60s)");
	f = fleet(s, 1);
	json_array_foreach(harness_jget(f, "instances"), k, i) {
		if (JINT(i, "id") == old_id && strcmp(JSTR(i, "state"), "terminated") != 0)
			harness_fail_with_log(s, "instance %lld of the dead worker is %s", (long long)old_id, JSTR(i, "state"));
		if (JINT(i, "id") == old_id)
			assert_contains(JSTR(i, "reason"), "gone");
	}
	json_decref(f);
}

/* A worker killed -9 takes its job along: left running, the job would
 * run again elsewhere once its lease expired, twice at once. */
static void test_job_dies_with_its_worker(void **state)
{
	const char *exits = exits_file();
	struct harness_server *s = serve(exits, "max_instances = 1\nidle_timeout = 60s\n", 0);
	const char *pidfile = harness_fmt("%s/job.pid", harness_tmpdir());
	char pidpath[4200], *text = NULL;
	int64_t id;
	pid_t worker = 0, job;
	json_t *f, *i;
	size_t k;

	(void)state;
	snprintf(pidpath, sizeof pidpath, "%s", pidfile);
	id = submit(s, harness_fmt("echo $$ > %s; exec sleep 60", pidpath), 60);
	WAIT_FOR(s, 15000, harness_job_is(s, id, "leased") && (text = harness_read_file(pidpath, NULL)) && *text,
		 "job %lld did not start within 15 s", (long long)id);
	job = atoi(text);
	free(text);
	f = fleet(s, 0);
	json_array_foreach(harness_jget(f, "instances"), k, i)
		sscanf(JSTR(i, "provider_ref"), "pid:%d", &worker);
	json_decref(f);
	assert_true(worker > 0 && job > 0 && harness_alive(job, NULL));
	kill(worker, SIGKILL);
	WAIT_FOR(s, 5000, !harness_alive(job, NULL), "job %d still runs 5 s after its worker %d was killed -9", job,
		 worker);
}

/* A job longer than orphan_timeout on a worker that can reach serve runs to
 * its end: the worker's heartbeats are its contact, so they come often
 * enough, even with the 60 s lease's default heartbeat of 20 s. */
static void test_long_job_is_not_an_orphan(void **state)
{
	const char *exits = exits_file();
	struct harness_server *s =
		serve(exits, "max_instances = 1\nidle_timeout = 60s\n[provider]\norphan_timeout = 2s\n", 0);
	int64_t id = submit(s, "sleep 4", 4);
	json_t *j;

	(void)state;
	WAIT_FOR(s, 20000, harness_job_is(s, id, "succeeded"),
		 "a 4 s job with orphan_timeout 2s did not succeed on its first attempt within 20 s; exits: %d lines,"
		 " %d orphaned", harness_file_lines(exits, NULL), harness_file_lines(exits, "orphaned"));
	j = harness_get_job(s, id);
	assert_int(JINT(j, "attempts"), 1);
	json_decref(j);
	assert_int(harness_file_lines(exits, "orphaned"), 0);
	assert_int(harness_live_instances(s, NULL), 1);
}

/* A provider that takes 5 s to answer a launch, as a cloud's API may,
 * does not hold serve up: while the launch is under way (its instance
 * still "requested") the API answers submits and reads at once; then the
 * answer comes, the instance boots and the job runs. */
static void test_slow_launch_leaves_the_api_free(void **state)
{
	const char *exits = exits_file();
	struct harness_server *s = serve(exits, "max_instances = 1\n[local]\nlaunch_latency = 5s\n", 0);
	int64_t id, t0;
	json_t *f, *inst;

	(void)state;
	id = submit(s, "true", 1);
	WAIT_FOR(s, 10000, harness_live_instances(s, NULL) == 1, "no launch 10 s after a submit");
	f = fleet(s, 0);
	assert_int(count_state(f, "requested"), 1);
	json_decref(f);
	for (int k = 0; k < 3; k++) {
		t0 = harness_now_ms();
		json_decref(harness_get(s, k == 0 ? "/healthz" : k == 1 ? "/v1/stats" : "/v1/jobs"));
		harness_submit(s, "{\"command\": [\"true\"], \"delay_s\": 3600}");
		assert_between(harness_now_ms() - t0, 0, 2000);
	}
	f = fleet(s, 0);
	if (count_state(f, "requested") != 1)
		harness_fail_with_log(s, "the launch answered before the calls made while it was pending returned");
	json_decref(f);
	WAIT_FOR(s, 30000, harness_job_is(s, id, "succeeded"), "job %lld not done 30 s after its slow launch",
		 (long long)id);
	f = fleet(s, 1);
	inst = json_array_get(harness_jget(f, "instances"), 0);
	/* Its worker started once the answer came, no sooner. */
	assert_true(json_real_value(harness_jget(inst, "registered_at")) -
		    json_real_value(harness_jget(inst, "launched_at")) >= 5.0);
	json_decref(f);
}

/* Two instances of the warm floor wait for work: one job after another
 * goes to the one launched first every time (policy/placement.h), so
 * that the other stays idle, as the simulator's dispatch has it. Served
 * to the request that had waited longest, they took turns. */
static void test_jobs_go_to_the_instance_launched_first(void **state)
{
	const char *exits = exits_file();
	struct harness_server *s = serve(exits, "max_instances = 2\nidle_timeout = 5m\nwarm = * * 2\n", HARNESS_TEST_CLOCK);
	int64_t first = 0;
	json_t *f;

	(void)state;
	WAIT_FOR(s, 20000, idle_instances(s) == 2 && harness_stat(s, "waiting_workers") == 2,
		 "the warm floor's two workers are not both waiting for work after 20 s");
	f = fleet(s, 0);
	for (int k = 0; k < 2; k++) {
		int64_t id = JINT(json_array_get(harness_jget(f, "instances"), (size_t)k), "id");
		first = first && first < id ? first : id;
	}
	json_decref(f);
	for (int k = 0; k < 4; k++) {
		int64_t id = submit(s, "true", 1), ran;
		WAIT_FOR(s, 20000, harness_job_is(s, id, "succeeded"), "job %d has not succeeded after 20 s", k + 1);
		f = harness_get_job(s, id);
		ran = JINT(json_array_get(harness_jget(f, "runs"), 0), "instance");
		json_decref(f);
		if (ran != first)
			harness_fail_with_log(s, "job %d ran on instance %lld, not on %lld, launched first", k + 1,
					      (long long)ran, (long long)first);
		/* Its worker asks again before the next job comes. */
		WAIT_FOR(s, 20000, harness_stat(s, "waiting_workers") == 2, "the worker of job %d has not asked again",
			 k + 1);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_scale_up_within_max_and_back_to_zero, harness_cleanup),
		cmocka_unit_test_teardown(test_busy_instance_drained_never_terminated, harness_cleanup),
		cmocka_unit_test_teardown(test_drained_instance_waiting_worker_gets_no_job, harness_cleanup),
		cmocka_unit_test_teardown(test_orphaned_workers_exit, harness_cleanup),
		cmocka_unit_test_teardown(test_burst_gap_burst_reuses_instances, harness_cleanup),
		cmocka_unit_test_teardown(test_warm_pool_floor_by_the_hour, harness_cleanup),
		cmocka_unit_test_teardown(test_auto_idle_timeout_from_gaps, harness_cleanup),
		cmocka_unit_test_teardown(test_arrival_rate_holds_an_instance, harness_cleanup),
		cmocka_unit_test_teardown(test_adopted_worker_that_dies_is_gone, harness_cleanup),
		cmocka_unit_test_teardown(test_job_dies_with_its_worker, harness_cleanup),
		cmocka_unit_test_teardown(test_long_job_is_not_an_orphan, harness_cleanup),
		cmocka_unit_test_teardown(test_slow_launch_leaves_the_api_free, harness_cleanup),
		cmocka_unit_test_teardown(test_jobs_go_to_the_instance_launched_first, harness_cleanup),
	};
	return cmocka_run_group_tests(tests, NULL, harness_cleanup);
}
