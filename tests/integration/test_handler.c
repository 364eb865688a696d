/* Resident handlers end to end (docs/JOBS.md): a real serve, a real `ebb
 * worker` and python3 handlers, one of them docs/JOBS.md's example.
 * Twenty payload jobs behind a 2 s setup take the handler started once
 * and far less than twenty setups; each job's log holds its own lines
 * and its result is stored. A handler killed -9 mid-job fails that
 * attempt (counted, with why) and the job is retried on a handler
 * started again; a cancel reaches the handler as `cancel ID` and the
 * handler is kept, one that ignores it is killed after the grace; one
 * silent past the job's timeout is killed; a worker stopped mid-job
 * interrupts it with the handler's last checkpoint; a payload job of a
 * type with no handler is refused at submit. Serve is told each
 * handler's setup time. A job goes first to a waiting worker whose
 * handler of its type is ready. The bar: 200 jobs behind a 3 s
 * setup on one local instance, the handler started once. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

#include "harness.h"

/* A directory of the test's own (harness_tmpdir is the process's), in
 * a buffer of its own (harness_fmt's are reused). */
static const char *test_dir(void)
{
	static char dir[4096];
	static int n;

	snprintf(dir, sizeof dir, "%s/handler-%d", harness_tmpdir(), ++n);
	if (mkdir(dir, 0755) != 0)
		fail_msg("mkdir %s", dir);
	return dir;
}

static void write_script(const char *path, const char *text)
{
	harness_write_file(path, text);
	if (chmod(path, 0755) != 0)
		fail_msg("chmod %s", path);
}

/* docs/JOBS.md's example handler as the page shows it, into dir. */
static const char *doc_handler(const char *dir)
{
	const char *src = getenv("EBB_SRC");
	char *page = harness_read_file(harness_fmt("%s/docs/JOBS.md", src ? src : "."), NULL);
	const char *open = "```python\n#!/usr/bin/python3\n# handler.py", *body, *end;
	const char *path = harness_fmt("%s/handler.py", dir);

	if (!page)
		fail_msg("docs/JOBS.md not found (EBB_SRC is the source tree; make test sets it)");
	if (!(body = strstr(page, open)))
		fail_msg("docs/JOBS.md has no example starting %s", open);
	body += strlen("```python\n");
	if (!(end = strstr(body, "\n```\n")))
		fail_msg("docs/JOBS.md: the handler example never ends");
	write_script(path, harness_fmt("%.*s\n", (int)(end - body), body));
	free(page);
	return path;
}

/* A handler for the ways a job ends badly: payload "sleep" sleeps an hour
 * at its first attempt (and succeeds at the next), "wait" waits for the
 * cancel, writes it to DIR/cancels and fails the job; any other succeeds.
 * On SIGTERM it writes a last checkpoint and exits. */
static const char *faulty_handler(const char *dir)
{
	const char *path = harness_fmt("%s/faulty.py", dir);

	write_script(path, "#!/usr/bin/python3\n"
			   "import json, os, signal, sys, time\n"
			   "control = os.fdopen(int(os.environ['EBB_CONTROL_FD']), 'w', buffering=1)\n"
			   "def on_term(sig, frame):\n"
			   "    control.write('checkpoint at-term 1\\n')\n"
			   "    sys.exit(0)\n"
			   "signal.signal(signal.SIGTERM, on_term)\n"
			   "control.write('ready\\n')\n"
			   "for line in sys.stdin:\n"
			   "    if line.startswith('cancel '):\n"
			   "        continue\n"
			   "    job = json.loads(line)\n"
			   "    if job['payload'] == 'sleep' and job['attempt'] == 1:\n"
			   "        print('sleeping', flush=True)\n"
			   "        time.sleep(3600)\n"
			   "    if job['payload'] == 'wait':\n"
			   "        print('waiting for a cancel', flush=True)\n"
			   "        with open(sys.argv[1] + '/cancels', 'a') as f:\n"
			   "            f.write(sys.stdin.readline())\n"
			   "        control.write('failed cancelled\\n')\n"
			   "        continue\n"
			   "    control.write('done\\n')\n");
	return path;
}

/* A serve whose type "echo" has handler as its handler (argument dir). */
static struct harness_server *serve_with(const char *handler, const char *dir)
{
	return harness_serve(harness_fmt("[queue]\nretry_base = 0s\n[type.echo]\nhandler = '%s' '%s'\n", handler, dir),
			     0);
}

static pid_t worker(struct harness_server *s)
{
	return harness_hand_worker(s, harness_fmt("%s/worker.log", s->dir), NULL, NULL);
}

/* The handlers the worker started, as its log tells. */
static int starts(struct harness_server *s)
{
	return harness_file_lines(harness_fmt("%s/worker.log", s->dir), "msg=\"handler started\"");
}

/* The pid of the last handler started. */
static pid_t last_handler(struct harness_server *s)
{
	char *text = harness_read_file(harness_fmt("%s/worker.log", s->dir), NULL), *p, *last = NULL;
	pid_t pid;

	assert_non_null(text);
	for (p = text; (p = strstr(p, "msg=\"handler started\"")); p++)
		last = p;
	assert_non_null(last);
	assert_non_null((p = strstr(last, " pid=")));
	pid = (pid_t)atoi(p + 5);
	free(text);
	return pid;
}

/* Whether the job's latest attempt's log has a line holding has. */
static int log_has(struct harness_server *s, int64_t id, const char *has)
{
	json_t *r = harness_get(s, harness_fmt("/v1/jobs/%lld/logs", (long long)id)), *line;
	size_t i;
	int found = 0;

	json_array_foreach(harness_jget(r, "lines"), i, line)
		found |= strstr(JSTR(line, "text"), has) != NULL;
	json_decref(r);
	return found;
}

static int64_t attempts(struct harness_server *s, int64_t id)
{
	json_t *j = harness_get_job(s, id);
	int64_t n = JINT(j, "attempts");

	json_decref(j);
	return n;
}

static int64_t submit_payload(struct harness_server *s, const char *payload, const char *more)
{
	return harness_submit(s, harness_fmt("{\"type\": \"echo\", \"payload\": %s%s}", payload, more));
}

/* Whether serve shows the worker's echo handler ready, with a setup of
 * at least the example's 2 s, in GET /v1/workers and in /metrics. */
static int handler_told(struct harness_server *s)
{
	json_t *r = harness_get(s, "/v1/workers"), *h = json_array_get(harness_jget(r, "workers.0.handlers"), 0);
	int told = h && strcmp(JSTR(h, "type"), "echo") == 0 && strcmp(JSTR(h, "state"), "ready") == 0 &&
		   JNUM(h, "setup_s") >= 2.0;
	char *text = NULL, ctype[128];
	const char *line;

	json_decref(r);
	if (told && harness_get_text(s, NULL, "/metrics", &text, ctype, sizeof ctype) == 200 &&
	    (line = strstr(text, "\nebb_handler_setup_seconds{type=\"echo\"} ")))
		told = strtod(line + strlen("\nebb_handler_setup_seconds{type=\"echo\"} "), NULL) >= 2.0 &&
		       strstr(text, "ebb_handlers{type=\"echo\",state=\"ready\"} 1\n") != NULL;
	else
		told = 0;
	free(text);
	return told;
}

/* The bar: 20 jobs behind a 2 s setup, the handler started once. */
static void twenty_jobs_one_setup(void **state)
{
	const char *dir = test_dir();
	struct harness_server *s = serve_with(doc_handler(dir), dir);
	int64_t ids[20];
	struct timespec t0, t1;
	struct harness_run run;
	json_t *r, *j;
	int status;
	double took;

	(void)state;
	status = harness_call(s, "POST", "/v1/jobs", "{\"type\": \"plain\", \"payload\": 1}", &r);
	assert_error(status, r, 400, "missing_field", "command");
	json_decref(r);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < 20; i++)
		ids[i] = submit_payload(s, harness_fmt("%d", i), "");
	worker(s);
	for (int i = 0; i < 20; i++)
		WAIT_FOR(s, 120000, harness_job_is(s, ids[i], "succeeded"), "job %d did not succeed", i);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	took = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	assert_int(starts(s), 1);
	/* 20 setups would be 40 s; one setup and the jobs, a few. */
	if (took >= 20)
		harness_fail_with_log(s, "20 jobs took %.1f s, expected well under 40 s", took);
	/* The setup measured, told serve with the worker's next lease request. */
	WAIT_FOR(s, 30000, handler_told(s), "serve was not told the handler and its setup");
	harness_ebb(&run, s, "workers", NULL);
	assert_int(run.status, 0);
	assert_contains(run.out, "HANDLERS");
	assert_contains(run.out, "echo ready 2s");
	harness_run_free(&run);
	for (int i = 0; i < 20; i++) {
		j = harness_get_job(s, ids[i]);
		assert_int(JINT(j, "attempts"), 1);
		assert_int(JINT(j, "result.echo"), i);
		json_decref(j);
		WAIT_FOR(s, 30000, log_has(s, ids[i], harness_fmt("job %lld payload %d", (long long)ids[i], i)),
			 "job %lld's log lacks its line", (long long)ids[i]);
		/* Only its own: the job before it is another log. */
		if (i > 0)
			assert_false(log_has(s, ids[i], harness_fmt("job %lld payload", (long long)ids[i - 1])));
	}
}

/* kill -9 of the handler mid-job: the attempt fails (counted, with why),
 * the job is retried on a handler started again. */
static void handler_killed_mid_job(void **state)
{
	const char *dir = test_dir();
	struct harness_server *s = serve_with(faulty_handler(dir), dir);
	int64_t id;
	json_t *j;

	(void)state;
	worker(s);
	id = submit_payload(s, "\"sleep\"", ", \"max_attempts\": 3");
	WAIT_FOR(s, 60000, log_has(s, id, "sleeping"), "the handler never began the job");
	assert_int(kill(last_handler(s), SIGKILL), 0);
	WAIT_FOR(s, 60000, harness_job_is(s, id, "succeeded"), "the job did not succeed at its next attempt");
	assert_int(starts(s), 2);
	j = harness_get_job(s, id);
	assert_int(attempts(s, id), 2);
	assert_string_equal(JSTR(json_array_get(harness_jget(j, "runs"), 0), "outcome"), "failed");
	/* With the last line it wrote, as a job's failure. */
	assert_string_equal(JSTR(json_array_get(harness_jget(j, "runs"), 0), "reason"),
			    "the handler died: killed by signal 9: sleeping");
	json_decref(j);
}

/* A cancel reaches the handler, which ends the job and is kept. */
static void cancel_reaches_handler(void **state)
{
	const char *dir = test_dir();
	struct harness_server *s = serve_with(faulty_handler(dir), dir);
	struct harness_run run;
	int64_t id, next;

	(void)state;
	worker(s);
	id = submit_payload(s, "\"wait\"", "");
	WAIT_FOR(s, 60000, log_has(s, id, "waiting for a cancel"), "the handler never began the job");
	harness_ebb(&run, s, "cancel", harness_fmt("%lld", (long long)id), NULL);
	assert_int(run.status, 0);
	harness_run_free(&run);
	WAIT_FOR(s, 30000, harness_job_is(s, id, "cancelled"), "the job was not cancelled");
	next = submit_payload(s, "7", "");
	WAIT_FOR(s, 60000, harness_job_is(s, next, "succeeded"), "the next job did not succeed");
	assert_int(harness_file_lines(harness_fmt("%s/cancels", dir), harness_fmt("cancel %lld", (long long)id)), 1);
	assert_int(starts(s), 1);
}

/* A handler that ignores the cancel is killed after the grace, and the
 * next job starts another. */
static void ignored_cancel_kills(void **state)
{
	const char *dir = test_dir();
	struct harness_server *s = serve_with(faulty_handler(dir), dir);
	struct harness_run run;
	int64_t id, next;
	pid_t first;

	(void)state;
	worker(s);
	id = submit_payload(s, "\"sleep\"", "");
	WAIT_FOR(s, 60000, log_has(s, id, "sleeping"), "the handler never began the job");
	first = last_handler(s);
	harness_ebb(&run, s, "cancel", harness_fmt("%lld", (long long)id), NULL);
	assert_int(run.status, 0);
	harness_run_free(&run);
	WAIT_FOR(s, 30000, !harness_alive(first, NULL), "the handler that ignored the cancel still runs");
	next = submit_payload(s, "8", "");
	WAIT_FOR(s, 60000, harness_job_is(s, next, "succeeded"), "the next job did not succeed");
	assert_int(starts(s), 2);
	assert_true(harness_job_is(s, id, "cancelled"));
}

/* Silent past the job's timeout: killed, and the job fails timed out. */
static void timeout_kills(void **state)
{
	const char *dir = test_dir();
	struct harness_server *s = serve_with(faulty_handler(dir), dir);
	int64_t id;
	json_t *j;

	(void)state;
	worker(s);
	id = submit_payload(s, "\"sleep\"", ", \"timeout_s\": 2, \"max_attempts\": 1");
	WAIT_FOR(s, 60000, harness_job_is(s, id, "dead"), "the job did not time out");
	j = harness_get_job(s, id);
	assert_non_null(strstr(JSTR(j, "error"), "timed out"));
	json_decref(j);
	WAIT_FOR(s, 30000, !harness_alive(last_handler(s), NULL), "the silent handler still runs");
}

/* The worker stopped mid-job: after its grace the handler gets SIGTERM,
 * writes a last checkpoint, and the job is interrupted with it (queued
 * again, the attempt not counted). */
static void worker_stop_interrupts(void **state)
{
	const char *dir = test_dir();
	struct harness_server *s = serve_with(faulty_handler(dir), dir);
	pid_t w, handler;
	int64_t id;
	json_t *j;

	(void)state;
	w = worker(s);
	id = submit_payload(s, "\"sleep\"", ", \"items\": 2");
	WAIT_FOR(s, 60000, log_has(s, id, "sleeping"), "the handler never began the job");
	handler = last_handler(s);
	harness_stop_hand_worker(s, w, 30000);
	assert_false(harness_alive(handler, NULL));
	j = harness_get_job(s, id);
	assert_string_equal(JSTR(j, "state"), "queued");
	assert_string_equal(JSTR(j, "checkpoint"), "at-term");
	assert_int(JINT(j, "interruptions"), 1);
	assert_int(JINT(j, "attempts"), 0);
	json_decref(j);
}

/* An instance's handler in GET /v1/fleet and `ebb fleet`: the local
 * provider's worker keeps it after the job. */
static int fleet_shows(struct harness_server *s)
{
	json_t *r = harness_get(s, "/v1/fleet"), *h = harness_jget(r, "instances.0.handlers.0");
	int shown = h && strcmp(JSTR(h, "type"), "echo") == 0 && strcmp(JSTR(h, "state"), "ready") == 0 &&
		    json_is_number(json_object_get(h, "setup_s"));

	json_decref(r);
	return shown;
}

static void fleet_shows_handlers(void **state)
{
	const char *dir = test_dir();
	struct harness_server *s = harness_serve(
		harness_fmt("[provider]\nkind = local\n[scaler]\ninterval = 200ms\nidle_timeout = 10m\n"
			    "[lane.standard]\nwait_target = 1s\n[type.echo]\nhandler = '%s' '%s'\n",
			    faulty_handler(dir), dir),
		0);
	struct harness_run run;
	int64_t id;

	(void)state;
	harness_own_workers(s);
	id = submit_payload(s, "5", "");
	WAIT_FOR(s, 60000, harness_job_is(s, id, "succeeded"), "the job did not succeed");
	WAIT_FOR(s, 30000, fleet_shows(s), "the fleet does not show the instance's handler");
	harness_ebb(&run, s, "fleet", NULL);
	assert_int(run.status, 0);
	assert_contains(run.out, "HANDLERS");
	assert_contains(run.out, "echo ready 0s");
	harness_run_free(&run);
}

/* Workers waiting for a job now, as GET /v1/stats tells. */
static int64_t waiting(struct harness_server *s)
{
	json_t *r = harness_get(s, "/v1/stats");
	int64_t n = JINT(r, "waiting_workers");

	json_decref(r);
	return n;
}

/* The worker that ran job id, as the workers' logs tell. */
static const char *worker_of(struct harness_server *s, int64_t id)
{
	const char *line = harness_fmt("msg=\"job started\" worker=%%s job=%lld ", (long long)id);
	int warm = harness_file_lines(harness_fmt("%s/warm.log", s->dir), harness_fmt(line, "warm"));
	int cold = harness_file_lines(harness_fmt("%s/cold.log", s->dir), harness_fmt(line, "cold"));

	return warm + cold != 1 ? "(not one)" : warm ? "warm" : "cold";
}

/* The warm preference (docs/SCALING.md, "Warm handlers"): two workers
 * wait, the one with no handler asked first (the first job, which asks
 * for a label only the other has, passed it over); each job of the type
 * goes to the one whose handler is ready, though it asked later. Two
 * jobs at once: the cold one takes the second rather than let it wait. */
static void warm_handler_takes_its_type_first(void **state)
{
	const char *dir = test_dir(), *handler = harness_fmt("%s/sleepy.py", dir);
	struct harness_server *s;
	int64_t id, two[2];

	(void)state;
	write_script(handler, "#!/usr/bin/python3\n"
			      "import json, os, sys, time\n"
			      "control = os.fdopen(int(os.environ['EBB_CONTROL_FD']), 'w', buffering=1)\n"
			      "time.sleep(1)\n"
			      "control.write('ready\\n')\n"
			      "for line in sys.stdin:\n"
			      "    if line.startswith('cancel '):\n"
			      "        continue\n"
			      "    time.sleep(json.loads(line)['payload'])\n"
			      "    control.write('done\\n')\n");
	s = serve_with(handler, dir);
	harness_hand_worker(s, harness_fmt("%s/cold.log", s->dir), NULL, "--name", "cold", NULL);
	WAIT_FOR(s, 60000, waiting(s) == 1, "the first worker does not wait");
	harness_hand_worker(s, harness_fmt("%s/warm.log", s->dir), NULL, "--name", "warm", "--labels", "first", NULL);
	WAIT_FOR(s, 60000, waiting(s) == 2, "the second worker does not wait");
	id = submit_payload(s, "0", ", \"labels\": [\"first\"]");
	WAIT_FOR(s, 60000, harness_job_is(s, id, "succeeded"), "the first job did not succeed");
	assert_string_equal(worker_of(s, id), "warm");
	for (int i = 0; i < 5; i++) {
		WAIT_FOR(s, 60000, waiting(s) == 2, "both workers do not wait");
		id = submit_payload(s, "0", "");
		WAIT_FOR(s, 60000, harness_job_is(s, id, "succeeded"), "job %d did not succeed", i);
		assert_string_equal(worker_of(s, id), "warm");
	}
	assert_int(harness_file_lines(harness_fmt("%s/cold.log", s->dir), "msg=\"handler started\""), 0);
	WAIT_FOR(s, 60000, waiting(s) == 2, "both workers do not wait");
	two[0] = submit_payload(s, "2", "");
	two[1] = submit_payload(s, "2", "");
	for (int i = 0; i < 2; i++)
		WAIT_FOR(s, 60000, harness_job_is(s, two[i], "succeeded"), "job %lld did not succeed", (long long)two[i]);
	assert_string_equal(worker_of(s, two[0]), "warm");
	assert_string_equal(worker_of(s, two[1]), "cold");
}

/* The state of the worker's first handler in GET /v1/workers ("" for
 * none), and its setup_s (-1 for null). */
static const char *handler_state(struct harness_server *s, double *setup_s)
{
	static char state[16];
	json_t *r = harness_get(s, "/v1/workers"), *h = harness_jget(r, "workers.0.handlers.0"), *setup;

	snprintf(state, sizeof state, "%s", h ? JSTR(h, "state") : "");
	setup = h ? json_object_get(h, "setup_s") : NULL;
	*setup_s = json_is_number(setup) ? json_number_value(setup) : -1;
	json_decref(r);
	return state;
}

/* A handler's setup shows while its first job waits for it: the job's
 * heartbeats carry it, "starting" and then "ready" with its time, before
 * the job ends (a worker running its only job sends no lease request).
 * A worker started by hand heartbeats at serve's pace (a third of a
 * lease_timeout of 3 s here, not its own 10 s). */
static void setup_shown_while_its_job_waits(void **state)
{
	const char *dir = test_dir(), *handler = harness_fmt("%s/gated.py", dir);
	struct harness_server *s;
	double setup_s;
	int64_t id;

	(void)state;
	write_script(handler, "#!/usr/bin/python3\n"
			      "import os, sys, time\n"
			      "control = os.fdopen(int(os.environ['EBB_CONTROL_FD']), 'w', buffering=1)\n"
			      "while not os.path.exists(sys.argv[1] + '/go'):\n"
			      "    time.sleep(0.05)\n"
			      "control.write('ready\\n')\n"
			      "for line in sys.stdin:\n"
			      "    while not os.path.exists(sys.argv[1] + '/end'):\n"
			      "        time.sleep(0.05)\n"
			      "    control.write('done\\n')\n");
	s = harness_serve(harness_fmt("[queue]\nlease_timeout = 3s\n[type.echo]\nhandler = '%s' '%s'\n", handler, dir),
			  0);
	worker(s);
	id = submit_payload(s, "1", "");
	WAIT_FOR(s, 60000, strcmp(handler_state(s, &setup_s), "starting") == 0 && setup_s < 0,
		 "the handler is not shown starting while it sets up");
	harness_write_file(harness_fmt("%s/go", dir), "");
	WAIT_FOR(s, 60000, strcmp(handler_state(s, &setup_s), "ready") == 0 && setup_s > 0,
		 "the handler is not shown ready with its setup while its job runs");
	assert_true(harness_job_is(s, id, "leased"));
	harness_write_file(harness_fmt("%s/end", dir), "");
	WAIT_FOR(s, 60000, harness_job_is(s, id, "succeeded"), "the job did not succeed");
	/* Its heartbeats, at serve's pace, kept its 3 s lease throughout. */
	assert_int(attempts(s, id), 1);
}

/* A handler that tells which GPU it was started on: it appends
 * "CUDA_VISIBLE_DEVICES PID" to DIR/starts, sets up for a second, then
 * sleeps each job's payload seconds and returns {"gpu", "pid"}. */
static const char *gpu_handler(const char *dir)
{
	const char *path = harness_fmt("%s/gpus.py", dir);

	write_script(path, "#!/usr/bin/python3\n"
			   "import json, os, sys, time\n"
			   "gpu = os.environ.get('CUDA_VISIBLE_DEVICES', '')\n"
			   "with open(sys.argv[1] + '/starts', 'a') as f:\n"
			   "    f.write('%s %d\\n' % (gpu, os.getpid()))\n"
			   "control = os.fdopen(int(os.environ['EBB_CONTROL_FD']), 'w', buffering=1)\n"
			   "time.sleep(1)\n"
			   "control.write('ready\\n')\n"
			   "for line in sys.stdin:\n"
			   "    if line.startswith('cancel '):\n"
			   "        continue\n"
			   "    time.sleep(json.loads(line)['payload'])\n"
			   "    control.write('result %s\\n' % json.dumps({'gpu': gpu, 'pid': os.getpid()}))\n"
			   "    control.write('done\\n')\n");
	return path;
}

/* The handlers DIR/starts lists, and the pid of the one on line k. */
static int handler_starts(const char *dir, int k, pid_t *pid)
{
	char *text = harness_read_file(harness_fmt("%s/starts", dir), NULL), *line = text;
	int n = 0;

	for (; line && *line; line = strchr(line, '\n') + 1, n++)
		if (n == k && pid)
			*pid = (pid_t)atoi(strchr(line, ' ') + 1);
	free(text);
	return n;
}

/* Runs n jobs of type with payload (a JSON number of seconds) at once and
 * waits for them; the pids of the handlers that ran them into pids. */
static void run_payloads(struct harness_server *s, const char *type, int n, const char *payload, pid_t *pids,
			 char gpus[][8])
{
	int64_t ids[8];

	for (int i = 0; i < n; i++)
		ids[i] = harness_submit(s, harness_fmt("{\"type\": \"%s\", \"payload\": %s}", type, payload));
	for (int i = 0; i < n; i++) {
		json_t *j;
		WAIT_FOR(s, 120000, harness_job_is(s, ids[i], "succeeded"), "job %lld did not succeed", (long long)ids[i]);
		j = harness_get_job(s, ids[i]);
		pids[i] = (pid_t)JINT(j, "result.pid");
		if (gpus)
			snprintf(gpus[i], sizeof gpus[i], "%s", JSTR(j, "result.gpu"));
		json_decref(j);
	}
}

/* On an instance of two GPUs jobs run side by side in runners, and each
 * runner keeps its handler: two jobs at once start one handler on each
 * GPU, the next jobs of the type go to those two; serve is told they are
 * ready; a plain job of both GPUs stops them first (and their GPUs were
 * offered for it); the next job starts one again; the worker's stop
 * stops it. */
static void each_runner_keeps_its_handler(void **state)
{
	const char *dir = test_dir();
	struct harness_server *s = serve_with(gpu_handler(dir), dir);
	pid_t worker, first[2], more[6], handlers[2], last;
	char gpus[2][8], log[4200];
	double setup_s;
	int64_t plain;

	(void)state;
	snprintf(log, sizeof log, "%s/worker.log", s->dir);
	worker = harness_hand_worker(s, log, "0,1", "--gpus", "2", NULL);
	run_payloads(s, "echo", 2, "1", first, gpus);
	assert_int(handler_starts(dir, 0, &handlers[0]), 2);
	handler_starts(dir, 1, &handlers[1]);
	assert_true(strcmp(gpus[0], gpus[1]) != 0);
	assert_true(first[0] != first[1]);
	run_payloads(s, "echo", 6, "0.2", more, NULL);
	assert_int(handler_starts(dir, 0, NULL), 2);
	for (int i = 0; i < 6; i++)
		assert_true(more[i] == handlers[0] || more[i] == handlers[1]);
	assert_int(harness_file_lines(log, "msg=\"job handed to a waiting handler\""), 6);
	WAIT_FOR(s, 30000, strcmp(handler_state(s, &setup_s), "ready") == 0 && setup_s >= 1,
		 "serve was not told the runners' handlers are ready");
	plain = harness_submit(s, "{\"command\": [\"true\"], \"gpus\": 2}");
	WAIT_FOR(s, 60000, harness_job_is(s, plain, "succeeded"), "the job of two GPUs did not succeed");
	assert_int(harness_file_lines(log, "msg=\"stopping a waiting handler\""), 2);
	assert_false(harness_alive(handlers[0], NULL));
	assert_false(harness_alive(handlers[1], NULL));
	run_payloads(s, "echo", 1, "0", &last, NULL);
	assert_int(handler_starts(dir, 2, &handlers[0]), 3);
	assert_int(last, handlers[0]);
	assert_int(harness_stop_hand_worker(s, worker, 30000), 0);
	assert_false(harness_alive(last, NULL));
}

/* A handler that takes its time to unload: told to stop (its stdin at
 * its end; SIGTERM ignored), it writes DIR/stopping.PID, waits up to 4 s
 * for as many such files as there are handlers (DIR/starts' lines), then
 * writes in DIR/saw.PID how many it saw, and exits. */
static const char *unloading_handler(const char *dir)
{
	const char *path = harness_fmt("%s/unload.py", dir);

	write_script(path, "#!/usr/bin/python3\n"
			   "import glob, json, os, signal, sys, time\n"
			   "signal.signal(signal.SIGTERM, lambda *a: None)\n"
			   "d = sys.argv[1]\n"
			   "with open(d + '/starts', 'a') as f:\n"
			   "    f.write('%s %d\\n' % (os.environ.get('CUDA_VISIBLE_DEVICES', ''), os.getpid()))\n"
			   "control = os.fdopen(int(os.environ['EBB_CONTROL_FD']), 'w', buffering=1)\n"
			   "control.write('ready\\n')\n"
			   "for line in sys.stdin:\n"
			   "    time.sleep(json.loads(line)['payload'])\n"
			   "    control.write('result %s\\n' % json.dumps({'pid': os.getpid()}))\n"
			   "    control.write('done\\n')\n"
			   "open('%s/stopping.%d' % (d, os.getpid()), 'w').close()\n"
			   "handlers = len(open(d + '/starts').readlines())\n"
			   "until = time.time() + 4\n"
			   "while len(glob.glob(d + '/stopping.*')) < handlers and time.time() < until:\n"
			   "    time.sleep(0.05)\n"
			   "with open('%s/saw.%d' % (d, os.getpid()), 'w') as f:\n"
			   "    f.write('%d\\n' % len(glob.glob(d + '/stopping.*')))\n");
	return path;
}

/* Two waiting handlers that a job of both GPUs needs gone are told to
 * stop together, not one after the other: each, unloading, sees the
 * other unload too. (One at a time, the first waits out its 4 s alone.) */
static void waiting_handlers_stop_side_by_side(void **state)
{
	const char *dir = test_dir();
	struct harness_server *s = serve_with(unloading_handler(dir), dir);
	pid_t handlers[2], ran[2];
	int64_t plain;

	(void)state;
	harness_hand_worker(s, harness_fmt("%s/worker.log", s->dir), "0,1", "--gpus", "2", NULL);
	run_payloads(s, "echo", 2, "1", ran, NULL);
	assert_int(handler_starts(dir, 0, &handlers[0]), 2);
	handler_starts(dir, 1, &handlers[1]);
	plain = harness_submit(s, "{\"command\": [\"true\"], \"gpus\": 2}");
	WAIT_FOR(s, 60000, harness_job_is(s, plain, "succeeded"), "the job of two GPUs did not succeed");
	for (int k = 0; k < 2; k++) {
		char *saw = harness_read_file(harness_fmt("%s/saw.%d", dir, (int)handlers[k]), NULL);
		if (!saw || atoi(saw) != 2)
			harness_fail_with_log(s, "handler %d saw %d of the two unload (-1: it wrote nothing): they were"
					      " not stopped together", (int)handlers[k], saw ? atoi(saw) : -1);
		free(saw);
	}
}

/* Handlers of a type that takes half a GPU stay too: two side by side
 * on the one GPU, told the same CUDA_VISIBLE_DEVICES, and the next jobs
 * go to them; a job of the whole GPU stops both first. */
static void shared_handlers_stay(void **state)
{
	const char *dir = test_dir();
	struct harness_server *s = harness_serve(
		harness_fmt("[queue]\nretry_base = 0s\n[type.half]\nhandler = '%s' '%s'\ngpu_share = 1/2\n",
			    gpu_handler(dir), dir),
		0);
	pid_t first[2], more[4], handlers[2];
	char gpus[2][8], log[4200];
	int64_t whole;

	(void)state;
	snprintf(log, sizeof log, "%s/worker.log", s->dir);
	harness_hand_worker(s, log, "0", NULL);
	run_payloads(s, "half", 2, "1", first, gpus);
	assert_int(handler_starts(dir, 0, &handlers[0]), 2);
	handler_starts(dir, 1, &handlers[1]);
	assert_string_equal(gpus[0], "0");
	assert_string_equal(gpus[1], "0");
	run_payloads(s, "half", 4, "0.2", more, NULL);
	assert_int(handler_starts(dir, 0, NULL), 2);
	for (int i = 0; i < 4; i++)
		assert_true(more[i] == handlers[0] || more[i] == handlers[1]);
	whole = harness_submit(s, "{\"command\": [\"true\"]}");
	WAIT_FOR(s, 60000, harness_job_is(s, whole, "succeeded"), "the job of the whole GPU did not succeed");
	assert_int(harness_file_lines(log, "msg=\"stopping a waiting handler\""), 2);
	assert_false(harness_alive(handlers[0], NULL));
	assert_false(harness_alive(handlers[1], NULL));
}

/* Issue 24's bar: 200 payload jobs of 50 ms behind a setup of 3 s, on
 * one local instance: the handler started once, the whole far less than
 * 200 setups (600 s), each job's result shown by `ebb job`. */
static void two_hundred_jobs_on_a_local_instance(void **state)
{
	const char *dir = test_dir(), *handler = harness_fmt("%s/slow.py", dir);
	struct harness_server *s;
	struct harness_run run;
	int64_t ids[200];
	int64_t t0;
	double took;

	(void)state;
	write_script(handler, "#!/usr/bin/python3\n"
			      "import json, os, sys, time\n"
			      "with open(sys.argv[1] + '/starts', 'a') as f:\n"
			      "    f.write('x')\n"
			      "control = os.fdopen(int(os.environ['EBB_CONTROL_FD']), 'w', buffering=1)\n"
			      "time.sleep(3)\n"
			      "control.write('ready\\n')\n"
			      "for line in sys.stdin:\n"
			      "    if line.startswith('cancel '):\n"
			      "        continue\n"
			      "    job = json.loads(line)\n"
			      "    time.sleep(0.05)\n"
			      "    control.write('result %s\\n' % json.dumps({'echo': job['payload']}))\n"
			      "    control.write('done\\n')\n");
	s = harness_serve(harness_fmt("[provider]\nkind = local\n[scaler]\ninterval = 200ms\nmax_instances = 1\n"
				      "idle_timeout = 10m\n[lane.standard]\nwait_target = 1s\n"
				      "[type.echo]\nhandler = '%s' '%s'\n",
				      handler, dir),
			  0);
	harness_own_workers(s);
	t0 = harness_now_ms();
	for (int i = 0; i < 200; i++)
		ids[i] = submit_payload(s, harness_fmt("%d", i), "");
	for (int i = 0; i < 200; i++)
		WAIT_FOR(s, 300000, harness_job_is(s, ids[i], "succeeded"), "job %d did not succeed", i);
	took = (double)(harness_now_ms() - t0) / 1000;
	print_message("200 jobs behind a 3 s setup on one local instance: %.1f s\n", took);
	{
		char *marks = harness_read_file(harness_fmt("%s/starts", dir), NULL);
		assert_non_null(marks);
		assert_string_equal(marks, "x"); /* started once */
		free(marks);
	}
	if (took >= 300)
		harness_fail_with_log(s, "200 jobs took %.1f s: 200 setups would be 600 s", took);
	for (int i = 0; i < 200; i += 199) {
		harness_ebb(&run, s, "job", harness_fmt("%lld", (long long)ids[i]), NULL);
		assert_int(run.status, 0);
		assert_contains(run.out, harness_fmt("result:          {\"echo\":%d}", i));
		harness_run_free(&run);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(twenty_jobs_one_setup, harness_cleanup),
		cmocka_unit_test_teardown(handler_killed_mid_job, harness_cleanup),
		cmocka_unit_test_teardown(cancel_reaches_handler, harness_cleanup),
		cmocka_unit_test_teardown(ignored_cancel_kills, harness_cleanup),
		cmocka_unit_test_teardown(timeout_kills, harness_cleanup),
		cmocka_unit_test_teardown(worker_stop_interrupts, harness_cleanup),
		cmocka_unit_test_teardown(fleet_shows_handlers, harness_cleanup),
		cmocka_unit_test_teardown(warm_handler_takes_its_type_first, harness_cleanup),
		cmocka_unit_test_teardown(setup_shown_while_its_job_waits, harness_cleanup),
		cmocka_unit_test_teardown(two_hundred_jobs_on_a_local_instance, harness_cleanup),
		cmocka_unit_test_teardown(each_runner_keeps_its_handler, harness_cleanup),
		cmocka_unit_test_teardown(shared_handlers_stay, harness_cleanup),
		cmocka_unit_test_teardown(waiting_handlers_stop_side_by_side, harness_cleanup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
