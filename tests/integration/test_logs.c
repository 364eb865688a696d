/* The jobs' logs end to end: real serve, a real `ebb worker` running real
 * jobs, and the CLI. What a job writes is read back in order, whole, its
 * stderr marked; a failed job's error ends with its last line; `ebb
 * submit --wait` exits with the job's status; 200 MB of output leaves
 * log_max stored, head and tail, the rest counted; a serve killed -9
 * mid-stream loses nothing and doubles nothing; a team reads only its
 * own; the POST is idempotent, and a read waits for lines. */
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define TEAM_A "team-a-secret-0123456789"
#define TEAM_B "team-b-secret-0123456789"

/* Every line of the attempt's log, paged with after=next: {"lines",
 * "dropped", "done"} of the last page with "lines" all of them. */
static json_t *all_lines(struct harness_server *s, int64_t id)
{
	json_t *lines = json_array(), *page = NULL;
	long long after = -1;

	for (;;) {
		json_decref(page);
		page = harness_get(s, harness_fmt("/v1/jobs/%lld/logs?after=%lld", (long long)id, after));
		if (json_array_size(harness_jget(page, "lines")) == 0)
			break;
		json_array_extend(lines, harness_jget(page, "lines"));
		after = JINT(page, "next");
	}
	json_object_set_new(page, "lines", lines);
	return page;
}

/* The lines of the first page now. */
static size_t lines_now(struct harness_server *s, int64_t id)
{
	json_t *r = harness_get(s, harness_fmt("/v1/jobs/%lld/logs", (long long)id));
	size_t n = json_array_size(harness_jget(r, "lines"));

	json_decref(r);
	return n;
}

static pid_t worker(struct harness_server *s)
{
	return harness_hand_worker(s, harness_fmt("%s/worker.log", s->dir), NULL, NULL);
}

/* The bar: 5,000 numbered lines to stdout, one to stderr, exit 3. */
static void failed_job_log_and_wait(void **state)
{
	struct harness_server *s = harness_serve(NULL, 0);
	struct harness_run run;
	json_t *job, *log;
	const char *error, *p;
	int64_t id;
	pid_t w = worker(s);
	char want[32];

	(void)state;
	harness_ebb(&run, s, "submit", "--wait", "--max-attempts", "1", "--", "sh", "-c",
		    "i=1; while [ $i -le 5000 ]; do echo \"line $i\"; i=$((i+1)); done; echo 'it broke' >&2; exit 3",
		    NULL);
	if (run.status != 3)
		harness_fail_with_log(s, "submit --wait exited %d, expected 3: %s %s", run.status, run.out, run.err);
	id = strtoll(run.out, NULL, 10);
	assert_true(id > 0);
	assert_non_null(strstr(run.err, "it broke"));
	harness_run_free(&run);

	job = harness_get_job(s, id);
	assert_string_equal(JSTR(job, "state"), "dead");
	error = JSTR(job, "error");
	assert_true(strlen(error) >= 8);
	assert_string_equal(error + strlen(error) - 8, "it broke");
	assert_true(strncmp(error, "exit status 3", 13) == 0);
	json_decref(job);

	/* ebb logs: the 5,000 lines on stdout in order, the stderr line on stderr. */
	harness_ebb(&run, s, "logs", harness_fmt("%lld", (long long)id), NULL);
	assert_int(run.status, 0);
	p = run.out;
	for (int i = 1; i <= 5000; i++) {
		snprintf(want, sizeof want, "line %d\n", i);
		if (strncmp(p, want, strlen(want)) != 0)
			fail_msg("ebb logs: line %d is not '%s'", i, want);
		p += strlen(want);
	}
	assert_string_equal(p, "");
	assert_string_equal(run.err, "it broke\n");
	harness_run_free(&run);

	/* The API marks the stream, and the attempt is done. */
	log = all_lines(s, id);
	assert_int(json_array_size(harness_jget(log, "lines")), 5001);
	assert_string_equal(JSTR(json_array_get(harness_jget(log, "lines"), 5000), "stream"), "stderr");
	assert_string_equal(JSTR(json_array_get(harness_jget(log, "lines"), 0), "stream"), "stdout");
	assert_true(json_is_true(harness_jget(log, "done")));
	assert_int(JINT(log, "dropped"), 0);
	json_decref(log);

	/* --tail, and a job that succeeds: --wait exits 0. */
	harness_ebb(&run, s, "logs", harness_fmt("%lld", (long long)id), "--tail", "2", NULL);
	assert_string_equal(run.out, "line 5000\n");
	assert_string_equal(run.err, "it broke\n");
	harness_run_free(&run);
	harness_ebb(&run, s, "submit", "--wait", "--follow", "--", "sh", "-c", "echo fine", NULL);
	assert_int(run.status, 0);
	assert_non_null(strstr(run.out, "\nfine\n"));
	harness_run_free(&run);
	assert_int(WEXITSTATUS(harness_stop_hand_worker(s, w, 10000)), 0);
}

/* 200 MB of numbered 100-byte lines with log_max = 64 KiB. */
static void big_output_keeps_head_and_tail(void **state)
{
	struct harness_server *s = harness_serve("[queue]\nlog_max = 64KiB\n", 0);
	json_t *log, *lines;
	int64_t id, stored = 0;
	size_t i, n;
	json_t *l;
	pid_t w;

	(void)state;
	w = worker(s);
	id = harness_submit(s, "{\"max_attempts\": 1, \"command\": [\"awk\","
			       " \"BEGIN{for(i=1;i<=2000000;i++) printf \\\"%08d %091d\\\\n\\\", i, 0}\"]}");
	WAIT_FOR(s, 120000, harness_job_is(s, id, "succeeded"), "job %lld did not succeed", (long long)id);
	log = all_lines(s, id);
	lines = harness_jget(log, "lines");
	n = json_array_size(lines);
	json_array_foreach(lines, i, l) stored += (int64_t)strlen(JSTR(l, "text"));
	assert_true(stored <= 64 * 1024);
	assert_true(n > 100);
	assert_true(strncmp(JSTR(json_array_get(lines, 0), "text"), "00000001 ", 9) == 0);
	assert_true(strncmp(JSTR(json_array_get(lines, n - 1), "text"), "02000000 ", 9) == 0);
	/* Every byte is either stored or counted. */
	assert_int(stored + JINT(log, "dropped"), 200000000);
	json_decref(log);
	assert_int(WEXITSTATUS(harness_stop_hand_worker(s, w, 10000)), 0);
}

/* serve killed -9 while a job writes: every line once, in order. */
static void serve_killed_mid_stream(void **state)
{
	struct harness_server *s = harness_serve(harness_fmt("[server]\nlisten = 127.0.0.1:%d\n", harness_free_port()), 0);
	json_t *log, *lines;
	int64_t id;
	size_t i;
	json_t *l;
	pid_t w;

	(void)state;
	w = worker(s);
	id = harness_submit(s, "{\"command\": [\"sh\", \"-c\","
			       " \"i=1; while [ $i -le 400 ]; do echo n $i; i=$((i+1)); sleep 0.01; done\"]}");
	WAIT_FOR(s, 30000, lines_now(s, id) >= 20, "job %lld wrote no lines", (long long)id);
	harness_server_kill(s);
	harness_sleep_ms(500);
	harness_server_start(s);
	WAIT_FOR(s, 60000, harness_job_is(s, id, "succeeded"), "job %lld did not succeed", (long long)id);
	log = all_lines(s, id);
	lines = harness_jget(log, "lines");
	assert_int(json_array_size(lines), 400);
	json_array_foreach(lines, i, l) {
		if (strcmp(JSTR(l, "text"), harness_fmt("n %zu", i + 1)) != 0)
			fail_msg("line %zu is '%s'", i, JSTR(l, "text"));
		assert_int(JINT(l, "seq"), (int64_t)i);
	}
	json_decref(log);
	assert_int(WEXITSTATUS(harness_stop_hand_worker(s, w, 10000)), 0);
}

static json_t *lease(struct harness_server *s)
{
	json_t *r = harness_call_ok(s, "POST", "/v1/lease", "{\"worker\": \"w1\", \"wait_s\": 0}", 200);
	json_t *job = json_incref(harness_jget(r, "job"));

	json_decref(r);
	assert_true(json_is_object(job));
	return job;
}

/* The worker's POST by hand: resends store nothing twice, a stale
 * attempt and a bad line are refused; a team reads only its own. */
static void ship_by_hand_and_teams(void **state)
{
	struct harness_server *s =
		harness_serve("[token.asub]\nsecret = " TEAM_A "\nteam = a\n[token.bsub]\nsecret = " TEAM_B "\nteam = b\n",
			      HARNESS_TOKENS);
	json_t *r = NULL, *job;
	const char *path;
	int64_t id;

	(void)state;
	assert_int(harness_call_as(s, TEAM_A, "POST", "/v1/jobs", "{\"command\": [\"true\"]}", &r), 201);
	id = JINT(r, "id");
	json_decref(r);
	job = lease(s);
	assert_int(JINT(job, "id"), id);
	assert_int(JINT(job, "lease.token"), 1);
	json_decref(job);
	path = harness_fmt("/v1/jobs/%lld/logs", (long long)id);

	r = harness_call_ok(s, "POST", path,
			    "{\"token\": 1, \"attempt\": 1, \"seq\": 0, \"dropped\": 0, \"lines\": ["
			    "{\"at\": 1.5, \"stream\": \"stdout\", \"text\": \"a\"},"
			    "{\"at\": 1.5, \"stream\": \"stderr\", \"text\": \"b\"}]}",
			    200);
	assert_int(JINT(r, "next"), 2);
	json_decref(r);
	/* Sent again with one more: only the new one is stored. */
	r = harness_call_ok(s, "POST", path,
			    "{\"token\": 1, \"attempt\": 1, \"seq\": 1, \"dropped\": 7, \"lines\": ["
			    "{\"at\": 1.5, \"stream\": \"stderr\", \"text\": \"b\"},"
			    "{\"at\": 1.6, \"stream\": \"stdout\", \"text\": \"c\"}]}",
			    200);
	assert_int(JINT(r, "next"), 3);
	json_decref(r);
	json_decref(harness_call_ok(s, "POST", path,
				    "{\"token\": 2, \"attempt\": 2, \"seq\": 0, \"lines\": []}", 409));
	json_decref(harness_call_ok(s, "POST", path,
				    "{\"token\": 1, \"attempt\": 1, \"seq\": 3, \"lines\": [{\"stream\": \"tty\"}]}",
				    400));

	assert_int(harness_call_as(s, TEAM_A, "GET", path, NULL, &r), 200);
	assert_int(json_array_size(harness_jget(r, "lines")), 3);
	assert_string_equal(JSTR(json_array_get(harness_jget(r, "lines"), 2), "text"), "c");
	assert_int(JINT(r, "dropped"), 7);
	assert_false(json_is_true(harness_jget(r, "done")));
	json_decref(r);
	r = NULL;
	assert_int(harness_call_as(s, TEAM_B, "GET", path, NULL, &r), 404);
	json_decref(r);
	r = NULL;
	assert_int(harness_call_as(s, TEAM_A, "GET", harness_fmt("%s?attempt=2", path), NULL, &r), 404);
	json_decref(r);
}

/* A read with wait=S returns when lines come, long before S. */
static void read_waits_for_lines(void **state)
{
	struct harness_server *s = harness_serve(NULL, 0);
	struct harness_async a;
	struct harness_run run;
	json_t *r;
	int64_t id;
	pid_t w;

	(void)state;
	w = worker(s);
	id = harness_submit(s, "{\"command\": [\"sh\", \"-c\", \"sleep 2; echo late\"]}");
	WAIT_FOR(s, 30000, harness_job_is(s, id, "leased"), "job %lld was not leased", (long long)id);
	harness_async_start(&a, s, "GET", harness_fmt("/v1/jobs/%lld/logs?wait=60", (long long)id), NULL);
	assert_int(harness_async_join(&a, &r), 200);
	assert_true(a.elapsed_ms < 30000);
	assert_string_equal(JSTR(json_array_get(harness_jget(r, "lines"), 0), "text"), "late");
	json_decref(r);
	/* -f to the job's end. */
	harness_ebb(&run, s, "logs", "-f", harness_fmt("%lld", (long long)id), NULL);
	assert_int(run.status, 0);
	assert_string_equal(run.out, "late\n");
	harness_run_free(&run);
	assert_int(WEXITSTATUS(harness_stop_hand_worker(s, w, 10000)), 0);
}

/* The text bytes of the job's log kept now. */
static int64_t bytes_now(struct harness_server *s, int64_t id)
{
	json_t *log = all_lines(s, id), *l;
	int64_t bytes = 0;
	size_t i;

	json_array_foreach(harness_jget(log, "lines"), i, l) bytes += (int64_t)strlen(JSTR(l, "text"));
	json_decref(log);
	return bytes;
}

/* The text of the first line kept. */
static const char *first_text(struct harness_server *s, int64_t id)
{
	json_t *r = harness_get(s, harness_fmt("/v1/jobs/%lld/logs", (long long)id));
	const char *text = harness_fmt("%s", JSTR(json_array_get(harness_jget(r, "lines"), 0), "text"));

	json_decref(r);
	return text;
}

/* Past logs_max_total the oldest log goes first, the newest is kept. */
static void total_bound_sweeps_oldest(void **state)
{
	struct harness_server *s = harness_serve("[queue]\nlogs_max_total = 1MiB\n", 0);
	const char *job = "{\"command\": [\"awk\", \"BEGIN{for(i=1;i<=8000;i++) printf \\\"%099d\\\\n\\\", i}\"]}";
	int64_t a, b;
	pid_t w = worker(s);

	(void)state;
	a = harness_submit(s, job);
	WAIT_FOR(s, 60000, harness_job_is(s, a, "succeeded"), "job %lld did not succeed", (long long)a);
	b = harness_submit(s, job);
	WAIT_FOR(s, 60000, harness_job_is(s, b, "succeeded"), "job %lld did not succeed", (long long)b);
	WAIT_FOR(s, 30000, bytes_now(s, a) + bytes_now(s, b) <= 1024 * 1024, "the logs were not cut to 1 MiB");
	assert_true(bytes_now(s, a) < 800000 - 200000);
	/* b, the newest, untouched: the sweep takes a log's oldest lines first. */
	assert_string_equal(first_text(s, b), harness_fmt("%099d", 1));
	assert_true(bytes_now(s, b) > 500000);
	assert_int(WEXITSTATUS(harness_stop_hand_worker(s, w, 10000)), 0);
}

/* A log past log_retention since its last line is deleted. */
static void retention_sweeps(void **state)
{
	struct harness_server *s = harness_serve("[queue]\nlog_retention = 2s\n", 0);
	const char *path;
	int64_t id;

	(void)state;
	id = harness_submit(s, "{\"command\": [\"true\"]}");
	json_decref(lease(s));
	path = harness_fmt("/v1/jobs/%lld/logs", (long long)id);
	json_decref(harness_call_ok(s, "POST", path,
				    "{\"token\": 1, \"attempt\": 1, \"seq\": 0, \"lines\": ["
				    "{\"at\": 1.5, \"stream\": \"stdout\", \"text\": \"a\"}]}",
				    200));
	assert_int(lines_now(s, id), 1);
	WAIT_FOR(s, 30000, lines_now(s, id) == 0, "job %lld's log outlived its retention", (long long)id);
}

/* Batches larger than serve's max_body go in halves: nothing is lost. */
static void batches_split_to_max_body(void **state)
{
	struct harness_server *s = harness_serve("[server]\nmax_body = 4KiB\n", 0);
	json_t *log, *lines;
	int64_t id;
	pid_t w = worker(s);

	(void)state;
	id = harness_submit(s, "{\"command\": [\"awk\", \"BEGIN{for(i=1;i<=300;i++) printf \\\"%099d\\\\n\\\", i}\"]}");
	WAIT_FOR(s, 60000, harness_job_is(s, id, "succeeded"), "job %lld did not succeed", (long long)id);
	log = all_lines(s, id);
	lines = harness_jget(log, "lines");
	assert_int(json_array_size(lines), 300);
	assert_string_equal(JSTR(json_array_get(lines, 299), "text"), harness_fmt("%099d", 300));
	assert_int(JINT(log, "dropped"), 0);
	json_decref(log);
	assert_int(WEXITSTATUS(harness_stop_hand_worker(s, w, 10000)), 0);
}

/* --wait on a job that was cancelled (the same idempotency key finds
 * it) exits 130, having printed its id. */
static void wait_on_cancelled(void **state)
{
	struct harness_server *s = harness_serve(NULL, 0);
	struct harness_run run;
	int64_t id;

	(void)state;
	id = harness_submit(s, "{\"command\": [\"true\"], \"delay_s\": 3600, \"idempotency_key\": \"k1\"}");
	json_decref(harness_call_ok(s, "POST", harness_fmt("/v1/jobs/%lld/cancel", (long long)id), NULL, 200));
	harness_ebb(&run, s, "submit", "--wait", "--delay", "3600", "--idempotency-key", "k1", "--", "true", NULL);
	assert_int(run.status, 130);
	assert_int(strtoll(run.out, NULL, 10), id);
	assert_non_null(strstr(run.err, "cancelled"));
	harness_run_free(&run);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(failed_job_log_and_wait, harness_cleanup),
		cmocka_unit_test_teardown(big_output_keeps_head_and_tail, harness_cleanup),
		cmocka_unit_test_teardown(serve_killed_mid_stream, harness_cleanup),
		cmocka_unit_test_teardown(ship_by_hand_and_teams, harness_cleanup),
		cmocka_unit_test_teardown(read_waits_for_lines, harness_cleanup),
		cmocka_unit_test_teardown(total_bound_sweeps_oldest, harness_cleanup),
		cmocka_unit_test_teardown(retention_sweeps, harness_cleanup),
		cmocka_unit_test_teardown(batches_split_to_max_body, harness_cleanup),
		cmocka_unit_test_teardown(wait_on_cancelled, harness_cleanup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
