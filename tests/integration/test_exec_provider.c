/* The exec provider end to end: a real `ebb serve` with `[provider] kind =
 * exec` running tests/exec/provider, a program of the contract of
 * docs/PROVIDERS.md whose "cloud" is this machine: its launch starts a
 * real, detached `ebb worker`, its terminate kills it, its list reports
 * the live ones. The tests steer it through files in its directory (see
 * the program's header) and read back each call it was given. Every wait
 * polls with a deadline; each test kills the workers it started. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

/* The program's directory of the running test. */
static char pdir[4200];

/* A file of the program's directory. */
static const char *pfile(const char *name)
{
	return harness_fmt("%s/%s", pdir, name);
}

/* Sets how the program ends its calls: "mode.launch" and the like. */
static void steer(const char *name, const char *value)
{
	harness_write_file(pfile(name), value);
}

/* The calls the program was given whose line starts with prefix. */
static int calls(const char *prefix)
{
	char *text = harness_read_file(pfile("calls"), NULL), *line, *save = NULL;
	int n = 0;

	for (line = text ? strtok_r(text, "\n", &save) : NULL; line; line = strtok_r(NULL, "\n", &save))
		n += strncmp(line, prefix, strlen(prefix)) == 0;
	free(text);
	return n;
}

/* serve with the exec provider running the test program: one offer of 1
 * GPU sold on both markets (spot cheaper), a 1 s wait target, a fast
 * scaler; exec's keys (in [exec]), then extra (in [scaler]). */
static struct harness_server *serve(const char *exec, const char *extra, int flags)
{
	const char *src = getenv("EBB_SRC");
	struct harness_server *s;

	snprintf(pdir, sizeof pdir, "%s", harness_tmpdir());
	setenv("EBB_TEST_PROVIDER_DIR", pdir, 1);
	s = harness_serve(harness_fmt("[provider]\n"
				      "kind = exec\n"
				      "orphan_timeout = 10s\n"
				      "[exec]\n"
				      "command = %s/tests/exec/provider\n"
				      "timeout = 10s\n"
				      "%s"
				      "[offer.a10g]\n"
				      "machine = test.a10g\n"
				      "gpus = 1\n"
				      "vram_gb = 24\n"
				      "price_ondemand = 1.00\n"
				      "price_spot = 0.30\n"
				      "[lane.standard]\n"
				      "wait_target = 1s\n"
				      "[scaler]\n"
				      "interval = 200ms\n"
				      "%s",
				      src && *src ? src : ".", exec, extra),
			  flags);
	harness_own_workers(s);
	return s;
}

static int64_t submit(struct harness_server *s, const char *script)
{
	return harness_submit(s, harness_fmt("{\"command\": [\"sh\", \"-c\", \"%s\"], \"est_s\": 1}", script));
}

/* GET /v1/fleet?all=1: the reply, to json_decref. */
static json_t *fleet(struct harness_server *s)
{
	json_t *r = harness_get(s, "/v1/fleet?all=1");

	if (!json_is_array(harness_jget(r, "instances")))
		harness_fail_with_log(s, "GET /v1/fleet: no instances");
	return r;
}

/* The instance id of the fleet, or 0. */
static json_t *instance(json_t *f, int64_t id)
{
	json_t *i;
	size_t k;

	json_array_foreach(harness_jget(f, "instances"), k, i) {
		if (JINT(i, "id") == id)
			return i;
	}
	return NULL;
}

/* Is instance id in state (its reason in *reason, kept until the next
 * call)? */
static int instance_is(struct harness_server *s, int64_t id, const char *state, char *reason, size_t size)
{
	json_t *f = fleet(s), *i = instance(f, id);
	int is = i && strcmp(JSTR(i, "state"), state) == 0;

	if (i && reason)
		snprintf(reason, size, "%s", JSTR(i, "reason"));
	json_decref(f);
	return is;
}

/* Instances of the fleet in state. */
static int count_state(struct harness_server *s, const char *state)
{
	json_t *f = fleet(s), *i;
	size_t k;
	int n = 0;

	json_array_foreach(harness_jget(f, "instances"), k, i)
		n += strcmp(JSTR(i, "state"), state) == 0;
	json_decref(f);
	return n;
}

/* How many decisions of kind have reason_has in their reason. */
static int count_decisions(struct harness_server *s, const char *kind, const char *reason_has)
{
	json_t *r = harness_get(s, "/v1/decisions?limit=1000"), *d;
	size_t k;
	int n = 0;

	json_array_foreach(harness_jget(r, "decisions"), k, d)
		n += strcmp(JSTR(d, "kind"), kind) == 0 && strstr(JSTR(d, "reason"), reason_has) != NULL;
	json_decref(r);
	return n;
}

/* The pid of the worker the program started for instance id, or 0. */
static pid_t worker_pid(int64_t id)
{
	FILE *f = popen(harness_fmt("cat %s/w-%lld-* 2>/dev/null", pfile("inst"), (long long)id), "r");
	long long inst = 0;
	int pid = 0;

	if (f && (fscanf(f, "%lld %d", &inst, &pid) != 2 || inst != id))
		pid = 0;
	if (f)
		pclose(f);
	return pid;
}

/* A burst on the exec provider: instances launched through the program,
 * each a real worker that runs its jobs; the worker's token only in its
 * environment; idle workers leave by themselves, the next list finds them
 * gone, and nothing is left running. */
static void test_scale_up_run_and_leave(void **state)
{
	struct harness_server *s = serve("", "max_instances = 2\nidle_timeout = 2s\n", HARNESS_TOKENS);
	int64_t ids[4];
	char cmdline[8192], reason[512], *text;
	pid_t pid;
	json_t *msg;

	(void)state;
	for (int k = 0; k < 4; k++)
		ids[k] = submit(s, "sleep 0.5");
	for (int k = 0; k < 4; k++)
		WAIT_FOR(s, 30000, harness_job_is(s, ids[k], "succeeded"), "job %lld did not succeed on the exec"
			 " provider's instances within 30 s", (long long)ids[k]);
	assert_between(calls("launch "), 1, 2);

	/* The message: the offer's section, the worker's
	 * command, its own token in its environment alone. */
	text = harness_read_file(pfile("launch.1.json"), NULL);
	assert_non_null(text);
	msg = harness_json(text);
	free(text);
	assert_int(JINT(msg, "version"), 1);
	assert_string_equal(JSTR(msg, "offer.machine"), "test.a10g");
	assert_int(strlen(JSTR(msg, "worker.env.EBB_TOKEN")), 64);
	pid = worker_pid(1);
	if (pid > 0) {
		size_t len = 0;
		char *raw = harness_read_file(harness_fmt("/proc/%d/cmdline", (int)pid), &len);
		for (size_t k = 0; raw && k < len && k < sizeof cmdline - 1; k++)
			cmdline[k] = raw[k] ? raw[k] : ' ';
		cmdline[raw ? (len < sizeof cmdline - 1 ? len : sizeof cmdline - 1) : 0] = '\0';
		free(raw);
		assert_null(strstr(cmdline, JSTR(msg, "worker.env.EBB_TOKEN")));
		assert_contains(cmdline, "worker");
	}
	json_decref(msg);

	/* Idle, they go: the scaler terminates them or they leave by
	 * themselves and say so, whichever comes first; either way they are
	 * gone at once, not at the next list (a minute away), and no process
	 * is left. */
	WAIT_FOR(s, 30000, count_state(s, "terminated") == calls("launch ") && harness_live_instances(s, NULL) == 0,
		 "the idle instances were not gone within 30 s");
	assert_true(instance_is(s, 1, "terminated", reason, sizeof reason));
	assert_contains(reason, "idle");
	assert_int(calls("list"), 1);
	WAIT_FOR(s, 10000, harness_worker_pids(s->url, 0, (pid_t[8]){0}, 8) == 0, "workers still run 10 s after they left");
}

/* Exit 75 on spot: no capacity. The instance ends with the program's
 * words, spot rests on that offer, and the scaler falls back to on
 * demand at once, saying why; the job runs there. */
static void test_no_capacity_falls_back_to_on_demand(void **state)
{
	struct harness_server *s = serve("", "max_instances = 2\nidle_timeout = 60s\n", 0);
	int64_t id;
	char reason[512] = "";
	json_t *o;

	(void)state;
	steer("mode.launch.spot", "tempfail");
	/* A lane whose wait target (5 m) a busy machine cannot come near:
	 * on demand must come from the failure, not from the wait. */
	id = harness_submit(s, "{\"command\": [\"true\"], \"est_s\": 1, \"lane\": \"batch\"}");
	WAIT_FOR(s, 30000, harness_job_is(s, id, "succeeded"), "job %lld did not run on demand after spot found no"
		 " capacity", (long long)id);
	assert_int(calls("launch 1 spot a10g"), 1);
	assert_int(calls("launch 2 on-demand a10g"), 1);
	assert_true(instance_is(s, 1, "terminated", reason, sizeof reason));
	assert_contains(reason, "launch failed: capacity: InsufficientInstanceCapacity");
	assert_int(count_decisions(s, "launch", "spot launches of every fitting offer failed, so on demand"), 1);
	assert_int(count_decisions(s, "launch_failed", "launch failed: capacity: InsufficientInstanceCapacity"), 1);
	o = harness_get(s, "/v1/offers");
	assert_true(json_is_true(harness_jget(json_array_get(harness_jget(o, "offers"), 0), "markets.spot.resting")));
	json_decref(o);
}

/* The instance's offer in GET /v1/offers: is market resting? */
static int resting(struct harness_server *s, const char *market)
{
	json_t *o = harness_get(s, "/v1/offers");
	int r = json_is_true(harness_jget(json_array_get(harness_jget(o, "offers"), 0),
					  harness_fmt("markets.%s.resting", market)));

	json_decref(o);
	return r;
}

/* The pid of the launch that hangs, once the program has written it: the
 * file is empty for a moment between the shell's truncation and its
 * write, and kill(-0) would reach the test's own process group. */
static pid_t hung_pid(struct harness_server *s)
{
	pid_t pid;

	WAIT_FOR(s, 10000, (pid = harness_read_pid(pfile("hang.pid"))) > 1, "no launch hangs");
	return pid;
}

/* A launch that hangs past [exec] timeout: the API answers throughout;
 * the call's whole process group is killed; the instance ends with why,
 * and what the call may have started is terminated by its tag. The next
 * launch, which answers, runs the job. */
static void test_launch_that_hangs_is_killed(void **state)
{
	struct harness_server *s = serve("timeout = 2s\n", "max_instances = 1\nidle_timeout = 60s\n", 0);
	char reason[512] = "";
	int64_t id, t0;
	pid_t hung;

	(void)state;
	steer("mode.launch", "hang");
	id = submit(s, "true");
	hung = hung_pid(s);
	for (int k = 0; k < 3; k++) {
		t0 = harness_now_ms();
		json_decref(harness_get(s, k == 0 ? "/healthz" : k == 1 ? "/v1/stats" : "/v1/fleet"));
		assert_between(harness_now_ms() - t0, 0, 1500);
	}
	assert_true(instance_is(s, 1, "requested", NULL, 0));
	steer("mode.launch", "ok");
	WAIT_FOR(s, 20000, instance_is(s, 1, "terminated", reason, sizeof reason), "the hung launch was not ended");
	assert_contains(reason, "killed after [exec] timeout");
	WAIT_FOR(s, 10000, !harness_alive(hung, NULL), "the hung program %d still runs", (int)hung);
	WAIT_FOR(s, 10000, calls("terminate null 1") == 1, "what the hung launch may have started was not terminated");
	WAIT_FOR(s, 30000, harness_job_is(s, id, "succeeded"), "job %lld did not run after the hung launch",
		 (long long)id);
}

/* A lease whose reply never reached its worker (serve killed between the
 * commit and the reply): when the worker of that instance asks for work,
 * it runs none, so the job is queued again at once, its attempt not
 * counted, not left leased until its lease expires. The worker is played
 * by the test, on an instance whose launch hangs. */
static void test_lost_lease_reply_is_taken_back(void **state)
{
	struct harness_server *s = serve("timeout = 120s\n", "max_instances = 1\nidle_timeout = 60s\n", 0);
	const char *ask = "{\"worker\": \"i-1\", \"instance\": 1}";
	json_t *first, *second, *reply = NULL;
	int64_t id, token1, token2;
	pid_t hung;
	int st;

	(void)state;
	steer("mode.launch", "hang");
	id = submit(s, "true");
	hung = hung_pid(s);
	json_decref(harness_call_ok(s, "POST", "/v1/workers/register", "{\"instance\": 1}", 200));
	first = harness_call_ok(s, "POST", "/v1/lease", ask, 200);
	assert_int(JINT(first, "job.id"), id);
	token1 = JINT(first, "job.lease.token");
	assert_true(instance_is(s, 1, "busy", NULL, 0));

	second = harness_call_ok(s, "POST", "/v1/lease", ask, 200);
	assert_int(JINT(second, "job.id"), id);
	assert_int(JINT(second, "job.attempts"), 1);
	token2 = JINT(second, "job.lease.token");
	assert_true(token2 != token1);
	st = harness_call(s, "POST", harness_fmt("/v1/jobs/%lld/complete", (long long)id),
			  harness_fmt("{\"lease_token\": %lld}", (long long)token1), &reply);
	assert_error(st, reply, 409, "stale_lease", "lease_token");
	json_decref(reply);
	json_decref(harness_call_ok(s, "POST", harness_fmt("/v1/jobs/%lld/complete", (long long)id),
				    harness_fmt("{\"lease_token\": %lld}", (long long)token2), 200));
	assert_true(harness_job_is(s, id, "succeeded"));
	json_decref(first);
	json_decref(second);
	kill(hung, SIGKILL);
}

/* Exit 0 with no JSON: a broken program. What it may have started is
 * terminated by its tag (here a worker it did start), the instance ends
 * with the reason, and the offer backs off on both markets. */
static void test_launch_garbage_is_a_broken_setup(void **state)
{
	struct harness_server *s = serve("", "max_instances = 1\nidle_timeout = 60s\ninterval = 1s\n", 0);
	char reason[512] = "";
	pid_t started;

	(void)state;
	steer("mode.launch", "garbage");
	submit(s, "true");
	WAIT_FOR(s, 10000, (started = worker_pid(1)) > 0, "the garbage launch started no worker");
	WAIT_FOR(s, 10000, instance_is(s, 1, "terminated", reason, sizeof reason), "the garbage launch was not ended");
	assert_contains(reason, "standard output is not a JSON object");
	WAIT_FOR(s, 10000, calls("terminate null 1") == 1, "what the launch started was not terminated by its tag");
	/* The program's terminate found it by its id and ended it. */
	WAIT_FOR(s, 10000, !harness_alive(started, NULL), "the worker the garbage launch started still runs");
	assert_true(resting(s, "spot") && resting(s, "on-demand"));
}

/* Any other exit: the last line of standard error is the reason, and
 * the offer's launches back off, the wait doubling. */
static void test_launch_broken_backs_off(void **state)
{
	struct harness_server *s = serve("", "max_instances = 1\nidle_timeout = 60s\ninterval = 1s\n", HARNESS_TEST_CLOCK);
	char reason[512] = "";

	(void)state;
	steer("mode.launch", "broken");
	submit(s, "true");
	WAIT_FOR(s, 10000, instance_is(s, 1, "terminated", reason, sizeof reason), "the broken launch was not ended");
	assert_contains(reason, "launch failed: ");
	assert_contains(reason, "exit 1: AuthFailure: the test's credentials are not valid");
	assert_int(count_decisions(s, "launch_failed", "exit 1: AuthFailure: the test's credentials are not valid"), 1);
	assert_true(resting(s, "spot") && resting(s, "on-demand"));
	/* Resting for the interval (1 s) after the first failure: no launch
	 * until the clock passes it; then one, which fails again and rests 2 s. */
	harness_advance(s, 900);
	assert_int(calls("launch "), 1);
	harness_advance(s, 200);
	WAIT_FOR(s, 10000, calls("launch ") == 2 && instance_is(s, 2, "terminated", NULL, 0), "no second launch after 1 s");
	harness_advance(s, 1500);
	assert_int(calls("launch "), 2);
	harness_advance(s, 600);
	WAIT_FOR(s, 10000, calls("launch ") == 3, "no third launch 2 s after the second failure");
	/* A launch that works ends the back-off. */
	steer("mode.launch", "ok");
	harness_advance(s, 4100);
	WAIT_FOR(s, 10000, calls("launch ") == 4 && !resting(s, "spot"), "the back-off did not end with a launch that worked");
}

/* A list that leaves out an instance whose worker runs a job: the
 * instance is gone, its job's lease ends and the job runs again
 * elsewhere. A list that fails or prints garbage marks nothing gone. */
static void test_list_that_omits_an_instance(void **state)
{
	struct harness_server *s = serve("list_interval = 1s\n", "max_instances = 2\nidle_timeout = 60s\n", 0);
	char reason[512] = "";
	int64_t id = submit(s, "sleep 6");
	int lists;
	json_t *j;

	(void)state;
	WAIT_FOR(s, 20000, harness_job_is(s, id, "leased") && instance_is(s, 1, "busy", NULL, 0),
		 "job %lld is not running on instance 1", (long long)id);
	steer("mode.list", "broken");
	lists = calls("list");
	WAIT_FOR(s, 10000, calls("list") >= lists + 2, "no list within 10 s at list_interval = 1s");
	steer("mode.list", "garbage");
	lists = calls("list");
	WAIT_FOR(s, 10000, calls("list") >= lists + 2, "no list within 10 s at list_interval = 1s");
	steer("list.omit", "1\n");
	assert_false(instance_is(s, 1, "terminated", NULL, 0)); /* failed lists marked nothing gone */
	steer("mode.list", "ok");
	WAIT_FOR(s, 10000, instance_is(s, 1, "terminated", reason, sizeof reason),
		 "instance 1, left out of the list, is not gone");
	assert_contains(reason, "gone: the provider lost it");
	WAIT_FOR(s, 30000, harness_job_is(s, id, "succeeded"), "job %lld did not run again", (long long)id);
	j = harness_get_job(s, id);
	assert_int(JINT(j, "attempts"), 2);
	json_decref(j);
}

/* Instances the provider has that ebb does not run are leaks: ended,
 * and said in the decisions; one on its way out is not. */
static void test_list_with_leaks(void **state)
{
	struct harness_server *s = serve("list_interval = 1s\n", "max_instances = 2\n", 0);

	(void)state;
	steer("list.extra", "i-leaked 0 running\ni-stranger 4242 pending\ni-leaving 0 terminating\n");
	WAIT_FOR(s, 10000, calls("terminate i-leaked 0") >= 1 && calls("terminate i-stranger 4242") >= 1,
		 "the leaked instances were not terminated");
	/* Each list that still has them ends them again (this program's
	 * terminate leaves them listed): a decision each time. */
	assert_true(count_decisions(s, "terminate", "leak i-leaked: the provider has it and ebb never launched it") >= 1);
	assert_true(count_decisions(s, "terminate", "leak i-stranger") >= 1);
	assert_int(calls("terminate i-leaving"), 0);
	assert_int(calls("launch "), 0);
}

/* A machine that ended by itself and is listed stopped (a GCE VM its
 * worker powered off keeps its disk, billed, until it is deleted) is
 * terminated at the next list, not a minute later, and that is no leak;
 * one still listed running within that minute is left alone, on its way
 * out. */
static void test_stopped_after_it_ended_is_terminated_at_once(void **state)
{
	struct harness_server *s = serve("list_interval = 1s\n", "max_instances = 1\nidle_timeout = 1s\n", 0);
	int64_t id = submit(s, "true");

	(void)state;
	WAIT_FOR(s, 30000, harness_job_is(s, id, "succeeded"), "job %lld did not succeed", (long long)id);
	WAIT_FOR(s, 30000, count_state(s, "terminated") == 1, "instance 1 did not end once idle");
	steer("list.extra", "w-1-stopped 1 stopped\nw-1-running 1 running\n");
	WAIT_FOR(s, 10000, calls("terminate w-1-stopped 1") >= 1, "the stopped machine was not terminated");
	assert_true(count_decisions(s, "terminate", "terminate w-1-stopped: stopped at the provider after it ended") >= 1);
	assert_int(count_decisions(s, "terminate", "leak"), 0);
	assert_int(calls("terminate w-1-running"), 0);
}

/* serve killed with kill -9, with instances busy and one launch under
 * way (its program started the worker, and is killed before it answers):
 * restarted on the same data, it loses track of none (the busy ones go on,
 * the unanswered one is adopted from the list by its id), launches none
 * twice, and terminates none as a leak. */
static void test_kill_9_loses_and_leaks_nothing(void **state)
{
	/* The workers know serve by its port: it keeps it across the restart. */
	struct harness_server *s = serve("list_interval = 1s\n",
					 harness_fmt("max_instances = 3\nidle_timeout = 60s\n[server]\nlisten = 127.0.0.1:%d\n",
						     harness_free_port()),
					 0);
	int64_t a = submit(s, "sleep 4"), b = submit(s, "sleep 4"), c;
	char reason[512];

	(void)state;
	WAIT_FOR(s, 20000, harness_job_is(s, a, "leased") && harness_job_is(s, b, "leased"), "the two jobs did not start");
	steer("mode.launch", "slow");
	c = submit(s, "sleep 1");
	WAIT_FOR(s, 20000, calls("launch ") == 3 && worker_pid(3) > 0, "the third launch did not start its worker");
	harness_server_kill(s);
	steer("mode.launch", "ok");
	harness_server_start(s);
	WAIT_FOR(s, 30000, harness_job_is(s, a, "succeeded") && harness_job_is(s, b, "succeeded") &&
		 harness_job_is(s, c, "succeeded"), "the jobs did not all succeed after the restart");
	WAIT_FOR(s, 10000, calls("list") >= 3, "no list after the restart");
	assert_int(calls("launch "), 3);
	assert_int(calls("terminate "), 0);
	assert_int(count_decisions(s, "terminate", "leak"), 0);
	for (int64_t id = 1; id <= 3; id++) {
		if (!instance_is(s, id, "idle", reason, sizeof reason))
			harness_fail_with_log(s, "instance %lld is not idle after the restart: %s", (long long)id, reason);
	}
}

/* serve killed while a launch hangs: no answer will come. The provider
 * does not list the instance, so the first list after the restart ends
 * it as a failed launch, not boot_timeout (10 minutes) later, and the job
 * runs on another. */
static void test_launch_lost_with_serve_is_failed(void **state)
{
	struct harness_server *s = serve("list_interval = 1s\n", "max_instances = 1\nidle_timeout = 60s\n", 0);
	char reason[512] = "";
	int64_t id;
	pid_t hung;

	(void)state;
	steer("mode.launch", "hang");
	id = submit(s, "true");
	hung = hung_pid(s);
	harness_server_kill(s);
	kill(-hung, SIGKILL); /* the call's process group: the program and its sleep */
	steer("mode.launch", "ok");
	harness_server_start(s);
	WAIT_FOR(s, 15000, instance_is(s, 1, "terminated", reason, sizeof reason),
		 "the launch lost with serve was not ended by the list");
	assert_contains(reason, "serve stopped before its answer");
	assert_int(count_decisions(s, "launch_failed", "serve stopped"), 1);
	WAIT_FOR(s, 30000, harness_job_is(s, id, "succeeded"), "job %lld did not run after the lost launch",
		 (long long)id);
}

/* Is job id leased on an instance other than instance? */
static int leased_elsewhere(struct harness_server *s, int64_t id, int64_t instance)
{
	json_t *j = harness_get_job(s, id);
	int yes = strcmp(JSTR(j, "state"), "leased") == 0 && json_integer_value(harness_jget(j, "lease.instance")) != instance;

	json_decref(j);
	return yes;
}

/* A call as token that must be refused with status and code. */
static void refused(struct harness_server *s, const char *token, const char *method, const char *path,
		    const char *body, int status, const char *code)
{
	json_t *reply = NULL;
	int st = harness_call_as(s, token, method, path, body, &reply);

	assert_error(st, reply, status, code, NULL);
	json_decref(reply);
}

/* Each instance's worker token: its own calls, while it lives. Another
 * instance's job or lease is 403; a call no worker makes is 403; once the
 * instance has left, 401. */
static void test_instance_tokens(void **state)
{
	struct harness_server *s = serve("", "max_instances = 3\nidle_timeout = 60s\n", HARNESS_TOKENS);
	int64_t a = submit(s, "sleep 30"), b = submit(s, "sleep 30"), on2;
	char token1[128], *text;
	json_t *msg, *reply = NULL, *job;
	int st;

	(void)state;
	WAIT_FOR(s, 20000, harness_job_is(s, a, "leased") && harness_job_is(s, b, "leased"), "the two jobs did not start");
	text = harness_read_file(pfile("launch.1.json"), NULL);
	msg = harness_json(text);
	free(text);
	snprintf(token1, sizeof token1, "%s", JSTR(msg, "worker.env.EBB_TOKEN"));
	json_decref(msg);
	job = harness_get_job(s, a);
	on2 = JINT(job, "lease.instance") == 2 ? a : b;
	json_decref(job);

	refused(s, token1, "GET", harness_fmt("/v1/jobs/%lld", (long long)on2), NULL, 403, "forbidden");
	refused(s, token1, "POST", harness_fmt("/v1/jobs/%lld/heartbeat", (long long)on2), "{\"lease_token\": 1}", 403,
		"forbidden");
	refused(s, token1, "POST", "/v1/lease", "{\"worker\": \"x\", \"instance\": 2, \"wait_s\": 0}", 403, "forbidden");
	refused(s, token1, "POST", "/v1/workers/leave", "{\"instance\": 2}", 403, "forbidden");
	refused(s, token1, "POST", "/v1/jobs", "{\"command\": [\"true\"]}", 403, "forbidden");
	st = harness_call_as(s, token1, "GET", "/v1/stats", NULL, &reply);
	assert_int(st, 200);
	json_decref(reply);

	/* Instance 1 leaves: its job runs again elsewhere, its token is dead. */
	st = harness_call_as(s, token1, "POST", "/v1/workers/leave", "{\"instance\": 1, \"reason\": \"a test\"}", &reply);
	assert_int(st, 200);
	assert_string_equal(JSTR(reply, "state"), "terminated");
	assert_contains(JSTR(reply, "reason"), "gone: the worker left (a test)");
	json_decref(reply);
	refused(s, token1, "GET", "/v1/stats", NULL, 401, "unauthorized");
	WAIT_FOR(s, 20000, leased_elsewhere(s, on2 == a ? b : a, 1), "the job of the instance that left did not run again");
	refused(s, "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", "GET", "/v1/stats", NULL, 401,
		"unauthorized");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_scale_up_run_and_leave, harness_cleanup),
		cmocka_unit_test_teardown(test_no_capacity_falls_back_to_on_demand, harness_cleanup),
		cmocka_unit_test_teardown(test_launch_that_hangs_is_killed, harness_cleanup),
		cmocka_unit_test_teardown(test_lost_lease_reply_is_taken_back, harness_cleanup),
		cmocka_unit_test_teardown(test_launch_garbage_is_a_broken_setup, harness_cleanup),
		cmocka_unit_test_teardown(test_launch_broken_backs_off, harness_cleanup),
		cmocka_unit_test_teardown(test_list_that_omits_an_instance, harness_cleanup),
		cmocka_unit_test_teardown(test_list_with_leaks, harness_cleanup),
		cmocka_unit_test_teardown(test_stopped_after_it_ended_is_terminated_at_once, harness_cleanup),
		cmocka_unit_test_teardown(test_kill_9_loses_and_leaks_nothing, harness_cleanup),
		cmocka_unit_test_teardown(test_launch_lost_with_serve_is_failed, harness_cleanup),
		cmocka_unit_test_teardown(test_instance_tokens, harness_cleanup),
	};
	return cmocka_run_group_tests(tests, NULL, harness_cleanup);
}
