/* Spot interruptions end to end: the interrupt call (the job goes back to
 * the head of its lane with its checkpoint, the attempt not counted), the
 * reclaim notice serve serves for local instances, and real `ebb worker`
 * processes started by the local provider that see the notice, stop their
 * job for a last checkpoint and report it interrupted, so that it resumes
 * on another instance. Also the local provider's simulated spot faults:
 * launches that fail for capacity (the scaler falls back to on demand)
 * and reclaims drawn at random from a fixed seed. Every wait polls with a
 * deadline; each test kills the workers it started when it ends. */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "worker/notice.h"

#define WORKER_SECRET "worker-secret-0123456789"

/* ---- worker processes ---- */

/* The workers a test started by hand (the local provider's are the
 * harness's to kill). */
static pid_t hand_workers[8];
static int nhand;

static int teardown(void **state)
{
	for (int k = 0; k < nhand; k++) {
		kill(hand_workers[k], SIGKILL);
		waitpid(hand_workers[k], NULL, 0);
	}
	nhand = 0;
	return harness_cleanup(state);
}

/* ---- serve and its API ---- */

static int64_t job_int(struct harness_server *s, int64_t id, const char *field)
{
	json_t *j = harness_get_job(s, id);
	int64_t v = JINT(j, field);

	json_decref(j);
	return v;
}

/* The instance of GET /v1/fleet?all=1 with this id (a new reference), or NULL. */
static json_t *instance(struct harness_server *s, int64_t id)
{
	json_t *f = harness_call_ok(s, "GET", "/v1/fleet?all=1", NULL, 200), *i, *found = NULL;
	size_t k;

	json_array_foreach(harness_jget(f, "instances"), k, i) {
		if (JINT(i, "id") == id)
			found = json_incref(i);
	}
	json_decref(f);
	return found;
}

static const char *instance_state(struct harness_server *s, int64_t id)
{
	static char state[32];
	json_t *i = instance(s, id);

	snprintf(state, sizeof state, "%s", i ? JSTR(i, "state") : "(none)");
	json_decref(i);
	return state;
}

/* A job of `items` items that checkpoints every `every`: it starts from
 * $EBB_CHECKPOINT, writes "progress N" per item and "checkpoint N N" every
 * `every` on $EBB_CONTROL_FD, and on SIGTERM checkpoints where it is and
 * exits. Into log it writes "start POS PPID" and "stop POS". Returns the
 * script's path. */
static const char *job_script(const char *dir, int items, int every)
{
	static char path[4300];

	snprintf(path, sizeof path, "%s/job.sh", dir);
	harness_write_file(path, harness_fmt(
		"pos=${EBB_CHECKPOINT:-0}\n"
		"log=$1\n"
		"echo \"start $pos $PPID\" >> \"$log\"\n"
		"trap 'echo \"checkpoint $pos $pos\" >&$EBB_CONTROL_FD; echo \"stop $pos\" >> \"$log\"; exit 0' TERM\n"
		"while [ \"$pos\" -lt %d ]; do\n"
		"\tpos=$((pos + 1))\n"
		"\techo \"progress $pos\" >&$EBB_CONTROL_FD\n"
		"\t[ $((pos %% %d)) -eq 0 ] && echo \"checkpoint $pos $pos\" >&$EBB_CONTROL_FD\n"
		"\tsleep 0.002\n"
		"done\n", items, every));
	return path;
}

static const char *job_body(const char *script, const char *log, int items, int est_s)
{
	return harness_fmt("{\"command\": [\"sh\", \"%s\", \"%s\"], \"items\": %d, \"est_s\": %d}", script, log,
			   items, est_s);
}

/* The N of the k-th (from 1) line "WORD N ..." of log; -1 if none. */
static int64_t nth_value(const char *log, const char *word, int k, int64_t *second)
{
	char *text = harness_read_file(log, NULL), *line, *save = NULL;
	size_t wl = strlen(word);
	int64_t v = -1;

	if (!text)
		return -1;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, word, wl) == 0 && line[wl] == ' ' && --k == 0) {
			long long a = -1, b = -1;
			sscanf(line + wl, " %lld %lld", &a, &b);
			v = a;
			if (second)
				*second = b;
			break;
		}
	}
	free(text);
	return v;
}

/* ---- the interrupt call, on a serve without a provider ---- */

/* Interrupted after a checkpoint at 100 with 150 done: queued at the head
 * of its lane (before an older job), its checkpoint kept, no attempt
 * counted, 50 items lost; a stale token is refused; a checkpoint carried
 * by the interrupt replaces the stored one; the final items_done is the
 * job's total. */
static void test_interrupt_call(void **state)
{
	struct harness_server *s = harness_serve(NULL, 0);
	struct harness_run run;
	int64_t older, id, token;
	json_t *r;
	int st;

	(void)state;
	/* older can only go to a worker that offers label x. */
	older = harness_submit(s, "{\"command\": [\"true\"], \"labels\": [\"x\"]}");
	id = harness_submit(s, "{\"command\": [\"true\"], \"items\": 1000}");
	r = harness_call_ok(s, "POST", "/v1/lease", "{\"worker\": \"w1\"}", 200);
	assert_int(JINT(r, "job.id"), id);
	token = JINT(r, "job.lease.token");
	json_decref(r);
	json_decref(harness_call_ok(s, "POST", harness_fmt("/v1/jobs/%lld/checkpoint", (long long)id),
			    harness_fmt("{\"lease_token\": %lld, \"checkpoint\": \"c100\", \"items_done\": 100}",
					(long long)token), 200));

	st = harness_call(s, "POST", harness_fmt("/v1/jobs/%lld/interrupt", (long long)id), "{}", &r);
	assert_error(st, r, 400, "missing_field", "lease_token");
	json_decref(r);
	r = harness_call_ok(s, "POST", harness_fmt("/v1/jobs/%lld/interrupt", (long long)id),
		    harness_fmt("{\"lease_token\": %lld, \"items_done\": 150, \"reason\": \"spot reclaim notice\"}",
				(long long)token), 200);
	assert_string_equal(JSTR(r, "state"), "queued");
	assert_int(JINT(r, "attempts"), 0);
	assert_int(JINT(r, "interruptions"), 1);
	assert_int(JINT(r, "items_done"), 100);
	assert_int(JINT(r, "items_lost"), 50);
	assert_string_equal(JSTR(r, "checkpoint"), "c100");
	assert_contains(JSTR(r, "error"), "interrupted: spot reclaim notice");
	json_decref(r);

	/* The same token again: the lease is gone. */
	st = harness_call(s, "POST", harness_fmt("/v1/jobs/%lld/interrupt", (long long)id),
			  harness_fmt("{\"lease_token\": %lld}", (long long)token), &r);
	assert_error(st, r, 409, "stale_lease", "lease_token");
	json_decref(r);

	/* Head of the lane: before the older job, for a worker both fit. */
	r = harness_call_ok(s, "POST", "/v1/lease", "{\"worker\": \"w2\", \"labels\": [\"x\"]}", 200);
	assert_int(JINT(r, "job.id"), id);
	assert_int(JINT(r, "job.attempts"), 1);
	assert_string_equal(JSTR(r, "job.checkpoint"), "c100");
	token = JINT(r, "job.lease.token");
	json_decref(r);

	/* A last checkpoint carried by the interrupt itself. */
	r = harness_call_ok(s, "POST", harness_fmt("/v1/jobs/%lld/interrupt", (long long)id),
		    harness_fmt("{\"lease_token\": %lld, \"checkpoint\": \"c300\", \"checkpoint_items\": 300,"
				" \"items_done\": 320}", (long long)token), 200);
	assert_int(JINT(r, "attempts"), 0);
	assert_int(JINT(r, "interruptions"), 2);
	assert_int(JINT(r, "items_done"), 300);
	assert_int(JINT(r, "items_lost"), 70);
	assert_string_equal(JSTR(r, "checkpoint"), "c300");
	json_decref(r);
	/* `ebb job` says so to people too. */
	harness_ebb(&run, s, "job", harness_fmt("%lld", (long long)id), NULL);
	assert_int(run.status, 0);
	assert_contains(run.out, "interruptions:   2 (items lost: 70)");
	harness_run_free(&run);

	r = harness_call_ok(s, "POST", "/v1/lease", "{\"worker\": \"w3\", \"labels\": [\"x\"]}", 200);
	assert_int(JINT(r, "job.id"), id);
	token = JINT(r, "job.lease.token");
	json_decref(r);
	r = harness_call_ok(s, "POST", harness_fmt("/v1/jobs/%lld/complete", (long long)id),
		    harness_fmt("{\"lease_token\": %lld, \"items_done\": 1000}", (long long)token), 200);
	assert_string_equal(JSTR(r, "state"), "succeeded");
	assert_int(JINT(r, "attempts"), 1);
	assert_int(JINT(r, "items_done"), 1000);
	assert_int(JINT(r, "interruptions"), 2);
	json_decref(r);
	assert_true(harness_job_is(s, older, "queued"));

	/* Without a provider there is nothing to reclaim. */
	st = harness_call(s, "POST", "/v1/fleet/1/reclaim", NULL, &r);
	assert_error(st, r, 409, "not_supported", NULL);
	json_decref(r);
}

/* A worker started by hand and stopped with SIGTERM: past its grace the
 * job is stopped, checkpoints and is reported interrupted, not failed. */
static void test_worker_stopped_reports_interrupt(void **state)
{
	struct harness_server *s = harness_serve(NULL, 0);
	const char *dir = harness_tmpdir(), *script = job_script(dir, 1000, 100);
	char log[4300];
	int64_t id, stop_pos;
	pid_t pid;
	int st = -1;
	json_t *j;

	(void)state;
	snprintf(log, sizeof log, "%s/job.log", dir);
	id = harness_submit(s, job_body(script, log, 1000, 7));
	pid = harness_hand_worker(s, harness_fmt("%s/worker.log", dir), NULL, NULL);
	hand_workers[nhand++] = pid;
	WAIT_FOR(s, 15000, job_int(s, id, "items_done") >= 100, "job %lld made no checkpoint within 15 s",
		 (long long)id);
	st = harness_stop_hand_worker(s, pid, 10000);
	nhand--;
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	j = harness_get_job(s, id);
	assert_string_equal(JSTR(j, "state"), "queued");
	assert_int(JINT(j, "attempts"), 0);
	assert_int(JINT(j, "interruptions"), 1);
	assert_contains(JSTR(j, "error"), "interrupted");
	stop_pos = nth_value(log, "stop", 1, NULL);
	assert_true(stop_pos >= 100);
	/* Its last checkpoint is where it stopped. */
	assert_string_equal(JSTR(j, "checkpoint"), harness_fmt("%lld", (long long)stop_pos));
	assert_int(JINT(j, "items_done"), stop_pos);
	json_decref(j);
}

/* ---- the local provider ---- */

/* The local provider with four GPU indices, a worker token, on_exit lines
 * into exits, a 1 s wait target and a fast scaler; then extra. */
static struct harness_server *serve_local(const char *exits, const char *extra)
{
	struct harness_server *s = harness_serve(
		harness_fmt("[token.worker]\n"
			    "secret = " WORKER_SECRET "\n"
			    "role = worker\n"
			    "[provider]\n"
			    "kind = local\n"
			    "orphan_timeout = 20s\n"
			    "on_exit = echo \"$EBB_WORKER $EBB_EXIT_REASON\" >> %s\n"
			    "[local]\n"
			    "gpus = 0,1,2,3\n"
			    "[lane.standard]\n"
			    "wait_target = 1s\n"
			    "[scaler]\n"
			    "interval = 200ms\n"
			    "%s",
			    exits, extra),
		HARNESS_TOKENS);
	harness_own_workers(s);
	return s;
}

/* (a) A job that checkpoints every 100 items is reclaimed mid-run with
 * `ebb reclaim`: its worker sees the notice, the job writes a last
 * checkpoint and is reported interrupted, and it resumes on another
 * instance from that checkpoint. Items are counted once; no attempt is
 * spent. */
static void test_reclaim_resumes_elsewhere(void **state)
{
	const char *dir = harness_tmpdir(), *script = job_script(dir, 1000, 100);
	char log[4300], exits[4300];
	struct harness_server *s;
	struct harness_run run;
	int64_t id, inst = 0, ppid1 = -1, ppid2 = -1, stop_pos, start2;
	json_t *j, *r;
	int st;

	(void)state;
	snprintf(log, sizeof log, "%s/job.log", dir);
	snprintf(exits, sizeof exits, "%s/exits", dir);
	s = serve_local(exits, "max_instances = 2\n[provider]\nreclaim_grace = 3s\n[local]\nreclaim_notice = 5s\n"
			       "[offer.a10]\nprice_spot = 0.30\nprice_ondemand = 1.00\n");
	id = harness_submit(s, job_body(script, log, 1000, 7));

	/* Mid-run: leased, and past its second checkpoint. */
	WAIT_FOR(s, 20000, job_int(s, id, "items_done") >= 200, "job %lld did not reach 200 items within 20 s",
		 (long long)id);
	j = harness_get_job(s, id);
	assert_string_equal(JSTR(j, "state"), "leased");
	sscanf(JSTR(j, "lease.worker"), "i-%lld", (long long *)&inst);
	json_decref(j);
	assert_true(inst > 0);

	/* No notice yet; then ebb reclaim serves one. */
	st = harness_call(s, "GET", harness_fmt("/v1/fleet/%lld/notice", (long long)inst), NULL, &r);
	assert_error(st, r, 404, "not_found", NULL);
	json_decref(r);
	st = harness_ebb(&run, s, "reclaim", harness_fmt("%lld", (long long)inst), (char *)NULL);
	if (st != 0)
		harness_fail_with_log(s, "ebb reclaim %lld: status %d: %s%s", (long long)inst, st, run.out, run.err);
	assert_contains(run.out, "reclaim notice served");
	harness_run_free(&run);
	r = harness_call_ok(s, "GET", harness_fmt("/v1/fleet/%lld/notice", (long long)inst), NULL, 200);
	assert_string_equal(JSTR(r, "action"), "terminate");
	assert_int(strlen(JSTR(r, "time")), 24); /* 2026-11-21T23:40:00.250Z */
	json_decref(r);
	/* The notice is for workers: a request without a token is refused. */
	st = harness_call_as(s, "", "GET", harness_fmt("/v1/fleet/%lld/notice", (long long)inst), NULL, &r);
	assert_int(st, 401);
	json_decref(r);

	WAIT_FOR(s, 30000, harness_job_is(s, id, "succeeded"), "job %lld did not succeed within 30 s of the reclaim",
		 (long long)id);
	j = harness_get_job(s, id);
	assert_int(JINT(j, "items_done"), 1000);
	assert_int(JINT(j, "attempts"), 1);
	assert_int(JINT(j, "interruptions"), 1);
	assert_between(JINT(j, "items_lost"), 0, 99);
	json_decref(j);

	/* Two runs: the second from where the first stopped, under another worker. */
	assert_int(harness_file_lines(log, "start "), 2);
	assert_int(nth_value(log, "start", 1, &ppid1), 0);
	stop_pos = nth_value(log, "stop", 1, NULL);
	start2 = nth_value(log, "start", 2, &ppid2);
	print_message("first run stopped at %lld, second started at %lld\n", (long long)stop_pos, (long long)start2);
	assert_true(stop_pos >= 200);
	assert_int(start2, stop_pos);
	assert_true(ppid1 > 0 && ppid2 > 0 && ppid1 != ppid2);

	/* The reclaimed instance is gone, marked reclaimed; its worker exited
	 * by itself, running on_exit. */
	WAIT_FOR(s, 10000, strcmp(instance_state(s, inst), "terminated") == 0,
		 "instance %lld is %s, expected terminated", (long long)inst, instance_state(s, inst));
	r = instance(s, inst);
	assert_true(json_is_true(harness_jget(r, "reclaim_notice")));
	json_decref(r);
	assert_int(harness_file_lines(exits, harness_fmt("i-%lld spot reclaim notice", (long long)inst)), 1);
}

/* (b) Two spot offers whose launches all fail for capacity: after one
 * failed launch on each, the scaler launches on demand, and says why. */
static void test_spot_failures_fall_back_to_on_demand(void **state)
{
	const char *dir = harness_tmpdir();
	char exits[4300];
	struct harness_server *s;
	json_t *d, *f, *i;
	size_t k;
	int64_t id, failed = 0, spot_failed = 0, ondemand = 0;
	int fallback = 0;

	(void)state;
	snprintf(exits, sizeof exits, "%s/exits", dir);
	/* A long wait target: spot stays allowed, only its failures rule it out. */
	s = serve_local(exits, "max_instances = 2\n[lane.standard]\nwait_target = 5m\n"
			       "[offer.t4]\nprice_spot = 0.16\nprice_ondemand = 0.59\nlaunch_failure_rate = 1\n"
			       "[offer.a10]\nprice_spot = 0.35\nprice_ondemand = 1.01\nlaunch_failure_rate = 1\n");
	id = harness_submit(s, "{\"command\": [\"true\"], \"est_s\": 30}");
	WAIT_FOR(s, 20000, harness_job_is(s, id, "succeeded"), "job %lld did not succeed within 20 s", (long long)id);

	d = harness_call_ok(s, "GET", "/v1/decisions?limit=100", NULL, 200);
	json_array_foreach(harness_jget(d, "decisions"), k, i) {
		if (strcmp(JSTR(i, "kind"), "launch") == 0 && strstr(JSTR(i, "reason"), "(on-demand") &&
		    strstr(JSTR(i, "reason"), "spot launches of every fitting offer failed, so on demand"))
			fallback++;
	}
	json_decref(d);
	f = harness_call_ok(s, "GET", "/v1/fleet?all=1", NULL, 200);
	json_array_foreach(harness_jget(f, "instances"), k, i) {
		if (strcmp(JSTR(i, "market"), "spot") == 0) {
			failed += strstr(JSTR(i, "reason"), "launch failed: capacity") != NULL;
			spot_failed += strstr(JSTR(i, "reason"), "launch_failure_rate") != NULL;
		} else {
			ondemand++;
		}
	}
	json_decref(f);
	if (fallback != 1 || failed != 2 || spot_failed != 2 || ondemand != 1)
		harness_fail_with_log(s, "%d on-demand fallback decisions (expected 1), %lld failed spot launches (expected 2),"
			      " %lld on-demand instances (expected 1)", fallback, (long long)failed, (long long)ondemand);
}

/* (c) Spot instances reclaimed at random, seconds apart, from a fixed
 * seed: every job still succeeds, each counting its items once. */
static void test_random_reclaims_jobs_succeed(void **state)
{
	const char *dir = harness_tmpdir(), *script = job_script(dir, 300, 30);
	char log[4300], exits[4300];
	struct harness_server *s;
	int64_t ids[4], interruptions = 0, reclaimed = 0;
	json_t *f, *i;
	size_t k;

	(void)state;
	snprintf(log, sizeof log, "%s/job.log", dir);
	snprintf(exits, sizeof exits, "%s/exits", dir);
	/* 1800 reclaims an hour: one every 2 s on average. */
	s = serve_local(exits, "max_instances = 3\n[provider]\nreclaim_grace = 2s\n"
			       "[local]\nreclaim_notice = 3s\nseed = 42\n"
			       "[offer.g4]\nprice_spot = 0.10\nprice_ondemand = 1.00\nspot_reclaim_rate = 1800\n");
	for (int n = 0; n < 4; n++)
		ids[n] = harness_submit(s, job_body(script, log, 300, 2));
	WAIT_FOR(s, 90000, harness_stat(s, "states.succeeded") == 4, "%lld of 4 jobs succeeded within 90 s", (long long)harness_stat(s, "states.succeeded"));
	for (int n = 0; n < 4; n++) {
		json_t *j = harness_get_job(s, ids[n]);
		assert_int(JINT(j, "items_done"), 300);
		assert_int(JINT(j, "attempts"), 1); /* a reclaim spends no attempt */
		interruptions += JINT(j, "interruptions");
		json_decref(j);
	}
	f = harness_call_ok(s, "GET", "/v1/fleet?all=1", NULL, 200);
	json_array_foreach(harness_jget(f, "instances"), k, i)
		reclaimed += json_is_true(harness_jget(i, "reclaim_notice"));
	json_decref(f);
	print_message("%lld instances reclaimed, %lld interruptions, %d runs\n", (long long)reclaimed,
		      (long long)interruptions, harness_file_lines(log, "start "));
	if (reclaimed < 1)
		harness_fail_with_log(s, "no instance was reclaimed");
	/* Every run after a job's first follows an interruption (one may
	 * come before the script wrote its start line). */
	assert_between(harness_file_lines(log, "start "), 4, 4 + interruptions);
}

/* The notice watch's aliases and its refusal of what is not a URL; no
 * request is made. */
static void test_notice_aliases(void **state)
{
	char err[300];
	struct notice *n;

	(void)state;
	n = notice_new("aws", NULL, NULL, 5000, err, sizeof err);
	assert_non_null(n);
	assert_string_equal(notice_url(n), "http://169.254.169.254/latest/meta-data/spot/instance-action");
	notice_free(n);
	n = notice_new("gcp", NULL, NULL, 5000, err, sizeof err);
	assert_non_null(n);
	assert_string_equal(notice_url(n), "http://169.254.169.254/computeMetadata/v1/instance/preempted");
	notice_free(n);
	assert_null(notice_new("ftp://example/notice", NULL, NULL, 5000, err, sizeof err));
	assert_contains(err, "expected aws, gcp or an http");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_notice_aliases, teardown),
		cmocka_unit_test_teardown(test_interrupt_call, teardown),
		cmocka_unit_test_teardown(test_worker_stopped_reports_interrupt, teardown),
		cmocka_unit_test_teardown(test_reclaim_resumes_elsewhere, teardown),
		cmocka_unit_test_teardown(test_spot_failures_fall_back_to_on_demand, teardown),
		cmocka_unit_test_teardown(test_random_reclaims_jobs_succeed, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, teardown);
}
