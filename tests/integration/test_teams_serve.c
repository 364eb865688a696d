/* Teams end to end, with a real `ebb serve`, the local provider and its
 * real `ebb worker` processes on a 4-GPU fleet (max_gpus = 4), teams a
 * and b of quota 2 each: b alone borrows a's idle quota and runs on all
 * 4; once a has work, what b's jobs free goes to a, not to b's older
 * queued jobs, and b is held to its quota while a uses its own. Each job
 * runs until the test creates its file, so the test decides when GPUs
 * free up; every wait polls with a deadline. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"
#include "serve/chargeback.h"

#define WORKER_SECRET "worker-secret-0123456789"

/* Jobs of team in state, from GET /v1/jobs. */
static int jobs_in(struct harness_server *s, const char *team, const char *state)
{
	json_t *r = harness_get(s, harness_fmt("/v1/jobs?team=%s&state=%s&limit=1000", team, state));
	int n = (int)json_array_size(harness_jget(r, "jobs"));

	json_decref(r);
	return n;
}

/* The team called name in a GET /v1/teams reply (borrowed). */
static json_t *team_named(json_t *reply, const char *name)
{
	json_t *t = harness_find(reply, "teams", "name", name);

	if (!t)
		fail_msg("no team %s in GET /v1/teams", name);
	return t;
}

/* A job of team that runs until the file DIR/go-NAME exists. */
static int64_t submit_waiting(struct harness_server *s, const char *dir, const char *team, const char *name)
{
	return harness_submit(s, harness_fmt("{\"team\": \"%s\", \"command\": [\"sh\", \"-c\","
					     " \"while [ ! -e \\\"$0\\\" ]; do sleep 0.05; done\", \"%s/go-%s\"]}",
					     team, dir, name));
}

static void release(const char *dir, const char *name)
{
	harness_write_file(harness_fmt("%s/go-%s", dir, name), "");
}

/* The leased jobs of b among ids (the first n of them), by name. */
static int leased_among(struct harness_server *s, const int64_t *ids, int n, int *which, int max)
{
	int found = 0;

	for (int k = 0; k < n && found < max; k++) {
		if (harness_job_is(s, ids[k], "leased"))
			which[found++] = k;
	}
	return found;
}

static void test_team_held_to_quota_and_borrowing(void **state)
{
	const char *dir = harness_tmpdir();
	struct harness_server *s;
	int64_t b[6], a[2];
	int running[4], st;
	struct harness_run run;
	json_t *r, *team;
	char *text;

	(void)state;
	s = harness_serve(harness_fmt("[token.worker]\nsecret = " WORKER_SECRET "\nrole = worker\n"
				      "[provider]\nkind = local\norphan_timeout = 20s\n"
				      "[local]\ngpus = 0,1,2,3\n"
				      "[lane.standard]\nwait_target = 1s\n"
				      "[scaler]\ninterval = 200ms\nmax_gpus = 4\nidle_timeout = 1m\n"
				      "[team.a]\nquota_gpus = 2\n"
				      "[team.b]\nquota_gpus = 2\n"
				      "[token.asub]\nsecret = team-a-secret-0123456789\nteam = a\n"),
			  HARNESS_TOKENS);
	harness_own_workers(s);

	/* b alone: it borrows a's idle quota and runs on all 4 GPUs. */
	for (int k = 0; k < 6; k++)
		b[k] = submit_waiting(s, dir, "b", harness_fmt("b%d", k));
	WAIT_FOR(s, 30000, jobs_in(s, "b", "leased") == 4, "team b did not run on 4 GPUs within 30 s (%d leased)",
		 jobs_in(s, "b", "leased"));
	assert_int(jobs_in(s, "b", "queued"), 2);
	assert_true(harness_live_instances(s, NULL) <= 4);
	r = harness_get(s, "/v1/teams");
	assert_int(json_array_size(harness_jget(r, "teams")), 3);
	team = team_named(r, "b");
	assert_int(JINT(team, "used_gpus"), 4);
	assert_int(JINT(team, "borrowed_gpus"), 2);
	assert_int(JINT(team, "queued_gpus"), 2);
	assert_int(JINT(team, "allowed_gpus"), 4);
	json_decref(r);
	/* A submit token sees its own team only. */
	st = harness_call_as(s, "team-a-secret-0123456789", "GET", "/v1/teams", NULL, &r);
	assert_int(st, 200);
	assert_int(json_array_size(harness_jget(r, "teams")), 1);
	assert_string_equal(JSTR(team_named(r, "a"), "name"), "a");
	json_decref(r);

	/* a submits 2: max_gpus binds, so a waits for b's jobs to end (no
	 * preemption here); the 2 GPUs that two of b's jobs free go to a,
	 * though b's queued jobs are older. */
	a[0] = submit_waiting(s, dir, "a", "a0");
	a[1] = submit_waiting(s, dir, "a", "a1");
	assert_int(leased_among(s, b, 6, running, 4), 4);
	release(dir, harness_fmt("b%d", running[0]));
	release(dir, harness_fmt("b%d", running[1]));
	WAIT_FOR(s, 30000, harness_job_is(s, a[0], "leased") && harness_job_is(s, a[1], "leased"),
		 "team a's jobs were not leased within 30 s of b freeing 2 GPUs");
	harness_ebb(&run, s, "teams", NULL);
	assert_int(run.status, 0);
	assert_contains(run.out, "BORROWED");
	harness_run_free(&run);
	assert_int(harness_get_text(s, NULL, "/metrics", &text, NULL, 0), 200);
	assert_contains(text, "ebb_team_quota_gpus{team=\"a\"} 2");
	assert_contains(text, "ebb_team_gpus_in_use{team=\"a\"} 2");
	free(text);
	assert_int(jobs_in(s, "b", "leased"), 2);
	assert_int(jobs_in(s, "b", "queued"), 2);
	assert_int(jobs_in(s, "b", "succeeded"), 2);
	/* b's queued jobs say why they wait; a's leased ones say nothing. */
	for (int k = 0; k < 6; k++) {
		if (!harness_job_is(s, b[k], "queued"))
			continue;
		harness_ebb(&run, s, "job", harness_fmt("%lld", (long long)b[k]), NULL);
		assert_int(run.status, 0);
		assert_contains(run.out, "team b is at its share: its jobs use 2 GPUs of the 2 it may use now (quota 2)");
		harness_run_free(&run);
	}
	/* The list says so too: each held job, and the reason once. */
	harness_ebb(&run, s, "jobs", "--team", "b", "--state", "queued", NULL);
	assert_int(run.status, 0);
	assert_contains(run.out, "queued (held)");
	assert_contains(run.err, "held: team b is at its share: its jobs use 2 GPUs of the 2 it may use now");
	assert_null(strstr(strstr(run.err, "held: ") + 1, "held: "));
	harness_run_free(&run);
	r = harness_get_job(s, a[0]);
	assert_null(harness_jget(r, "held"));
	json_decref(r);

	/* a's jobs end: b borrows again and the rest of its work runs. */
	release(dir, "a0");
	release(dir, "a1");
	WAIT_FOR(s, 30000, jobs_in(s, "b", "queued") == 0 && jobs_in(s, "b", "leased") == 4,
		 "team b did not borrow a's freed quota within 30 s");
	for (int k = 0; k < 6; k++)
		release(dir, harness_fmt("b%d", k));
	WAIT_FOR(s, 30000, jobs_in(s, "b", "succeeded") == 6 && jobs_in(s, "a", "succeeded") == 2,
		 "not every job succeeded within 30 s");
}

/* A job of team and priority of `items` items that checkpoints every 10:
 * it starts from $EBB_CHECKPOINT, and on SIGTERM checkpoints where it is
 * and exits; it writes "start POS" into DIR/NAME.log at each start. */
static int64_t submit_checkpointing(struct harness_server *s, const char *dir, const char *team, const char *name,
				    int items, int priority)
{
	return harness_submit(s, harness_fmt(
		"{\"team\": \"%s\", \"priority\": %d, \"items\": %d, \"command\": [\"sh\", \"-c\", \"pos=${EBB_CHECKPOINT:-0};"
		" echo start $pos >> $0; trap 'echo checkpoint $pos $pos >&$EBB_CONTROL_FD; exit 0' TERM;"
		" while [ $pos -lt %d ]; do pos=$((pos + 1)); echo progress $pos >&$EBB_CONTROL_FD;"
		" [ $((pos %% 10)) -eq 0 ] && echo checkpoint $pos $pos >&$EBB_CONTROL_FD; sleep 0.05; done\","
		" \"%s/%s.log\"]}", team, priority, items, items, dir, name));
}

/* The POS of the k-th (from 1) "start POS" line of DIR/NAME.log; -1: none. */
static int64_t start_pos(const char *dir, const char *name, int k)
{
	char *text = harness_read_file(harness_fmt("%s/%s.log", dir, name), NULL), *line, *save = NULL;
	int64_t pos = -1;

	for (line = text ? strtok_r(text, "\n", &save) : NULL; line; line = strtok_r(NULL, "\n", &save)) {
		long long v;
		if (sscanf(line, "start %lld", &v) == 1 && --k == 0) {
			pos = v;
			break;
		}
	}
	free(text);
	return pos;
}

static int64_t job_int(struct harness_server *s, int64_t id, const char *field)
{
	json_t *j = harness_get_job(s, id);
	int64_t v = JINT(j, field);

	json_decref(j);
	return v;
}

/* b runs on all 4 GPUs, borrowing a's 2; a submits 2 jobs: max_gpus binds,
 * so 2 of b's jobs are preempted at their checkpoint, a's jobs run, and
 * b's resume from their checkpoints. Every job succeeds once, on its first
 * attempt, with its items counted once; the preemptions are decisions. */
static void test_borrowed_jobs_preempted_through_checkpoints(void **state)
{
	const char *dir = harness_tmpdir();
	struct harness_server *s;
	struct harness_run run;
	int64_t b[4], a[2];
	int preempted = 0;
	char *text;

	(void)state;
	s = harness_serve(harness_fmt("[token.worker]\nsecret = " WORKER_SECRET "\nrole = worker\n"
				      "[queue]\nlease_timeout = 3s\n"
				      "[provider]\nkind = local\norphan_timeout = 20s\nreclaim_grace = 5s\n"
				      "[local]\ngpus = 0,1,2,3\n"
				      "[lane.standard]\nwait_target = 1s\n"
				      "[scaler]\ninterval = 200ms\nmax_gpus = 4\nidle_timeout = 1m\n"
				      "preempt_min_runtime = 1s\n"
				      "[team.a]\nquota_gpus = 2\n"
				      "[team.b]\nquota_gpus = 2\n"),
			  HARNESS_TOKENS);
	harness_own_workers(s);
	for (int k = 0; k < 4; k++)
		b[k] = submit_checkpointing(s, dir, "b", harness_fmt("b%d", k), 400, 0);
	WAIT_FOR(s, 30000, jobs_in(s, "b", "leased") == 4, "team b did not run on 4 GPUs within 30 s");
	for (int k = 0; k < 4; k++)
		WAIT_FOR(s, 30000, job_int(s, b[k], "items_done") >= 20, "b%d made no checkpoint within 30 s", k);

	a[0] = submit_checkpointing(s, dir, "a", "a0", 20, 0);
	a[1] = submit_checkpointing(s, dir, "a", "a1", 20, 0);
	WAIT_FOR(s, 30000, harness_job_is(s, a[0], "succeeded") && harness_job_is(s, a[1], "succeeded"),
		 "team a's jobs did not run within 30 s");
	WAIT_FOR(s, 60000, jobs_in(s, "b", "succeeded") == 4, "team b's jobs did not all succeed within 60 s");

	for (int k = 0; k < 4; k++) {
		json_t *j = harness_get_job(s, b[k]);
		const char *name = harness_fmt("b%d", k);
		assert_int(JINT(j, "attempts"), 1);
		assert_int(JINT(j, "items_done"), 400);
		if (JINT(j, "interruptions") > 0) {
			/* Resumed from where it stopped, not from the start. */
			assert_true(start_pos(dir, name, 2) >= 10);
			preempted++;
		} else {
			assert_int(start_pos(dir, name, 2), -1);
		}
		json_decref(j);
	}
	assert_int(preempted, 2);
	for (int k = 0; k < 2; k++)
		assert_int(job_int(s, a[k], "interruptions"), 0);

	assert_int(harness_get_text(s, NULL, "/metrics", &text, NULL, 0), 200);
	assert_contains(text, "ebb_team_preemptions_total{team=\"b\"} 2");
	assert_contains(text, "ebb_team_preemptions_total{team=\"a\"} 0");
	free(text);
	harness_ebb(&run, s, "decisions", NULL);
	assert_int(run.status, 0);
	assert_contains(run.out, "preempt");
	assert_contains(run.out, "team a is owed 2 GPUs of its quota");
	harness_run_free(&run);
}

/* preempt_within and the thrash guard: team a runs two low-priority jobs
 * on its 2 GPUs (max_gpus binds); a job of higher priority preempts the
 * one started last at its checkpoint, runs, and the preempted one resumes
 * from its checkpoint; a second high one preempts it again (it started
 * last once more): preempted twice in a row, it now waits
 * preempt_backoff, delayed, while the other jobs succeed. */
static void test_preempt_within_a_team_and_backoff(void **state)
{
	const char *dir = harness_tmpdir();
	struct harness_server *s;
	struct harness_run run;
	int64_t low[2], high[2], at;
	int first = -1;
	json_t *j;
	char *text;

	(void)state;
	s = harness_serve(harness_fmt("[token.worker]\nsecret = " WORKER_SECRET "\nrole = worker\n"
				      "[queue]\nlease_timeout = 3s\n"
				      "[provider]\nkind = local\norphan_timeout = 20s\nreclaim_grace = 5s\n"
				      "[local]\ngpus = 0,1\n"
				      "[lane.standard]\nwait_target = 1s\n"
				      "[scaler]\ninterval = 200ms\nmax_gpus = 2\nidle_timeout = 1m\n"
				      "preempt_min_runtime = 1s\npreempt_backoff = 1h\n"
				      "[team.a]\nquota_gpus = 2\npreempt_within = on\n"),
			  HARNESS_TOKENS);
	harness_own_workers(s);
	for (int k = 0; k < 2; k++)
		low[k] = submit_checkpointing(s, dir, "a", harness_fmt("low%d", k), 300, 0);
	for (int k = 0; k < 2; k++)
		WAIT_FOR(s, 30000, job_int(s, low[k], "items_done") >= 10, "low%d made no checkpoint within 30 s", k);

	high[0] = submit_checkpointing(s, dir, "a", "high0", 10, 5);
	WAIT_FOR(s, 30000, harness_job_is(s, high[0], "succeeded"), "the first high job did not run within 30 s");
	for (int k = 0; k < 2; k++)
		first = job_int(s, low[k], "interruptions") == 1 ? k : first;
	assert_true(first >= 0);
	assert_int(job_int(s, low[1 - first], "interruptions"), 0);
	/* Preempted once: queued again at once, and resumed from its checkpoint. */
	WAIT_FOR(s, 30000,
		 harness_job_is(s, low[first], "leased") && start_pos(dir, harness_fmt("low%d", first), 2) >= 10,
		 "the preempted job did not resume within 30 s");
	/* 30 items of 50 ms: past preempt_min_runtime, so that it is the
	 * one started last that the next high job takes. */
	WAIT_FOR(s, 30000, job_int(s, low[first], "items_done") >= start_pos(dir, harness_fmt("low%d", first), 2) + 30,
		 "the resumed job did not run 30 items within 30 s");

	high[1] = submit_checkpointing(s, dir, "a", "high1", 10, 5);
	WAIT_FOR(s, 30000, harness_job_is(s, high[1], "succeeded"), "the second high job did not run within 30 s");
	j = harness_get_job(s, low[first]);
	assert_string_equal(JSTR(j, "state"), "delayed");
	assert_int(JINT(j, "interruptions"), 2);
	assert_contains(JSTR(j, "error"), "interrupted: preempted: ");
	assert_contains(JSTR(j, "error"), "(preempt_within)");
	/* Both of its runs so far ended preempted. */
	assert_string_equal(JSTR(json_array_get(json_object_get(j, "runs"), 1), "outcome"), "preempted");
	at = (int64_t)json_number_value(harness_jget(j, "run_at")) - (int64_t)time(NULL);
	assert_true(at > 3500 && at <= 3600);
	json_decref(j);
	WAIT_FOR(s, 60000, harness_job_is(s, low[1 - first], "succeeded"), "the other low job did not succeed within 60 s");
	assert_int(job_int(s, low[1 - first], "interruptions"), 0);
	assert_true(harness_job_is(s, low[first], "delayed"));

	assert_int(harness_get_text(s, NULL, "/metrics", &text, NULL, 0), 200);
	assert_contains(text, "ebb_team_preemptions_total{team=\"a\"} 2");
	free(text);
	harness_ebb(&run, s, "decisions", NULL);
	assert_int(run.status, 0);
	assert_contains(run.out, "queued jobs of priority 5 outrank it (preempt_within)");
	harness_run_free(&run);
}

/* EbbTeamBudget alerts firing for team (one per mark: 80%, 100%). */
static int budget_alerts(struct harness_server *s, const char *team)
{
	json_t *r = harness_get(s, "/v1/alerts"), *al;
	size_t i;
	int n = 0;

	json_array_foreach(harness_jget(r, "alerts"), i, al) {
		const char *th = JSTR(al, "labels.threshold");
		n += strcmp(JSTR(al, "name"), "EbbTeamBudget") == 0 && strcmp(JSTR(al, "state"), "firing") == 0 &&
		     strcmp(JSTR(al, "labels.team"), team) == 0 && (strcmp(th, "80%") == 0 || strcmp(th, "100%") == 0);
	}
	json_decref(r);
	return n;
}

/* A team that spent its monthly budget gets no GPU for its queued work
 * while another team's later job runs; the month's chargeback by team
 * adds up to the fleet's total to the cent. */
static void test_budget_stops_a_team_and_chargeback_adds_up(void **state)
{
	struct harness_server *s;
	struct harness_run run;
	int64_t a1, a2, b1, lines = 0;
	json_t *r, *line;
	time_t now = time(NULL);
	char month[16];
	size_t i;

	(void)state;
	s = harness_serve("[token.worker]\nsecret = " WORKER_SECRET "\nrole = worker\n"
			  "[provider]\nkind = local\norphan_timeout = 20s\n"
			  "[local]\ngpus = 0,1\n"
			  "[lane.standard]\nwait_target = 1s\n"
			  "[scaler]\ninterval = 200ms\nmax_gpus = 2\nidle_timeout = 1m\nmax_spend_per_hour = 0\n"
			  "[offer.g]\nprice_ondemand = 360\nbilling_minimum = 0s\n"
			  "[team.a]\nquota_gpus = 1\n"
			  "[team.b]\nquota_gpus = 1\n",
			  HARNESS_TOKENS);
	harness_own_workers(s);
	a1 = harness_submit(s, "{\"team\": \"a\", \"command\": [\"sleep\", \"0.3\"]}");
	WAIT_FOR(s, 30000, harness_job_is(s, a1, "succeeded"), "a's first job did not succeed within 30 s");
	/* a1's run (and the boot of the instance launched for it) cost more
	 * than the budget a gets now: a2 waits, b1 runs. */
	json_decref(harness_call_ok(s, "POST", "/v1/teams/budget", "{\"team\": \"a\", \"monthly_budget\": 0.0001}",
				    200));
	a2 = harness_submit(s, "{\"team\": \"a\", \"command\": [\"true\"]}");
	b1 = harness_submit(s, "{\"team\": \"b\", \"command\": [\"sleep\", \"0.3\"]}");
	WAIT_FOR(s, 30000, harness_job_is(s, b1, "succeeded"), "b's job did not succeed within 30 s");
	assert_true(harness_job_is(s, a2, "queued"));
	/* Both marks told: 80% and 100% of a's budget; none for b. */
	WAIT_FOR(s, 20000, budget_alerts(s, "a") == 2, "EbbTeamBudget did not fire twice for team a within 20 s");
	assert_int(budget_alerts(s, "b"), 0);
	r = harness_get_job(s, a2);
	assert_contains(JSTR(r, "held"), "team a spent its monthly budget");
	json_decref(r);

	strftime(month, sizeof month, "%Y-%m", gmtime(&now));
	harness_ebb(&run, s, "report", "--month", month, "--by", "team", "--json", NULL);
	assert_int(run.status, 0);
	r = harness_json(run.out);
	json_array_foreach(harness_jget(r, "chargeback.teams"), i, line)
		lines += JINT(line, "total_cents");
	lines += JINT(r, "chargeback.shared_cents");
	assert_int(lines, JINT(r, "chargeback.total_cents"));
	assert_int(lines, chargeback_cents(json_number_value(harness_jget(r, "total.cost_usd"))));
	assert_true(lines > 0);
	assert_int(json_array_size(harness_jget(r, "chargeback.teams")), 2);
	json_decref(r);
	harness_run_free(&run);

	harness_ebb(&run, s, "report", "--month", month, "--by", "team", NULL);
	assert_int(run.status, 0);
	assert_contains(run.out, "Chargeback");
	assert_contains(run.out, "Chargeback: each team pays its jobs' runs (BUSY) and the boot, idle");
	assert_contains(run.out, "IDLE   TOTAL");
	harness_run_free(&run);
	harness_ebb(&run, s, "report", "--month", "2026-13", NULL);
	assert_int(run.status, 2);
	assert_contains(run.err, "--month: expected YYYY-MM");
	harness_run_free(&run);
}

/* A team's monthly budget set at run time: team a starts with a budget of
 * 0 (spent at once), so its job waits, held; `ebb team set a --budget
 * none` lifts it and the job runs; a budget of 0 again holds the next
 * one, and still does after a restart (the store keeps it). Each change
 * is a decision. Bad input is refused with the reason; a submit token
 * may not set a budget. */
static void test_budget_set_at_run_time(void **state)
{
	struct harness_server *s;
	struct harness_run run;
	int64_t a1, a2;
	json_t *r;
	int st;

	(void)state;
	s = harness_serve("[token.worker]\nsecret = " WORKER_SECRET "\nrole = worker\n"
			  "[provider]\nkind = local\norphan_timeout = 20s\n"
			  "[local]\ngpus = 0,1\n"
			  "[lane.standard]\nwait_target = 1s\n"
			  "[scaler]\ninterval = 200ms\nmax_gpus = 2\nidle_timeout = 1m\n"
			  "[team.a]\nquota_gpus = 1\nmonthly_budget = 0\n"
			  "[team.b]\nquota_gpus = 1\n"
			  "[token.asub]\nsecret = team-a-secret-0123456789\nteam = a\n",
			  HARNESS_TOKENS);
	harness_own_workers(s);
	a1 = harness_submit(s, "{\"team\": \"a\", \"command\": [\"true\"]}");
	r = harness_get_job(s, a1);
	assert_contains(JSTR(r, "held"), "team a spent its monthly budget ($0.00 of $0.00 this month)");
	json_decref(r);
	r = harness_get(s, "/v1/jobs?state=queued");
	assert_contains(JSTR(json_array_get(harness_jget(r, "jobs"), 0), "held"), "team a spent its monthly budget");
	json_decref(r);
	harness_ebb(&run, s, "jobs", NULL);
	assert_int(run.status, 0);
	assert_contains(run.out, "queued (held)");
	assert_contains(run.err, "held: team a spent its monthly budget ($0.00 of $0.00 this month)");
	harness_run_free(&run);

	harness_ebb(&run, s, "team", "set", "a", "--budget", "none", NULL);
	assert_int(run.status, 0);
	assert_contains(run.out, "team a: no monthly budget");
	harness_run_free(&run);
	WAIT_FOR(s, 30000, harness_job_is(s, a1, "succeeded"), "a's job did not run within 30 s of lifting the budget");

	harness_ebb(&run, s, "team", "set", "a", "--budget", "0", "--json", NULL);
	assert_int(run.status, 0);
	r = harness_json(run.out);
	assert_true(json_number_value(harness_jget(team_named(r, "a"), "monthly_budget_usd")) == 0);
	assert_true(json_is_true(harness_jget(team_named(r, "a"), "over_budget")));
	json_decref(r);
	harness_run_free(&run);
	a2 = harness_submit(s, "{\"team\": \"a\", \"command\": [\"true\"]}");
	r = harness_get_job(s, a2);
	assert_contains(JSTR(r, "held"), "team a spent its monthly budget");
	json_decref(r);

	harness_ebb(&run, s, "decisions", NULL);
	assert_int(run.status, 0);
	assert_contains(run.out, "team a: monthly budget none (was $0.00), set by admin");
	assert_contains(run.out, "team a: monthly budget $0.00 (was none), set by admin");
	harness_run_free(&run);

	/* Refused: a team with no section, a bad budget, a submit token. */
	harness_ebb(&run, s, "team", "set", "c", "--budget", "10", NULL);
	assert_int(run.status, 1);
	assert_contains(run.err, "no team c: the config has no [team.c] section");
	harness_run_free(&run);
	st = harness_call(s, "POST", "/v1/teams/budget", "{\"team\": \"a\", \"monthly_budget\": -1}", &r);
	assert_int(st, 400);
	assert_contains(JSTR(r, "error.message"), "monthly_budget: expected 0 to 1000000000 USD, got -1");
	json_decref(r);
	st = harness_call(s, "POST", "/v1/teams/budget", "{\"team\": \"a\"}", &r);
	assert_int(st, 400);
	assert_string_equal(JSTR(r, "error.code"), "missing_field");
	json_decref(r);
	st = harness_call_as(s, "team-a-secret-0123456789", "POST", "/v1/teams/budget",
			     "{\"team\": \"a\", \"monthly_budget\": null}", &r);
	assert_int(st, 403);
	json_decref(r);

	/* A restart keeps the budget set: a2 is still held. */
	assert_int(harness_server_stop(s), 0);
	harness_server_start(s);
	r = harness_get(s, "/v1/teams");
	assert_true(json_number_value(harness_jget(team_named(r, "a"), "monthly_budget_usd")) == 0);
	json_decref(r);
	r = harness_get_job(s, a2);
	assert_string_equal(JSTR(r, "state"), "queued");
	assert_contains(JSTR(r, "held"), "team a spent its monthly budget");
	json_decref(r);
}

/* Instances of GET /v1/fleet?all=1 in state. */
static int instances_in(struct harness_server *s, const char *state)
{
	json_t *r = harness_get(s, "/v1/fleet?all=1"), *inst;
	size_t i;
	int n = 0;

	json_array_foreach(harness_jget(r, "instances"), i, inst)
		n += strcmp(JSTR(inst, "state"), state) == 0;
	json_decref(r);
	return n;
}

/* A report group by name from a report's JSON (borrowed), NULL if none. */
static json_t *group_named(json_t *report, const char *name)
{
	return harness_find(report, "groups", "name", name);
}

/* Attribution: the warm pool's instance (launched for no team) runs a's
 * first job; b's job and a's second need launches, each recorded with the
 * team it was for. By team, a and b pay their runs and the boot and idle
 * time of the instances launched for them; the warm instance's time no job
 * used is the shared line; the lines add up to the fleet's total to the
 * cent. Once a's and b's instances are gone (their lines no longer grow),
 * a's monthly report (ebb report --team a, table, JSON and CSV) adds up to
 * a's chargeback line. */
static void test_idle_goes_to_the_launching_team_or_shared(void **state)
{
	const char *dir = harness_tmpdir();
	struct harness_server *s;
	struct harness_run run;
	int64_t a0, b0, a1, lines = 0, a_cents;
	json_t *r, *inst, *line;
	int teams_seen[3] = {0};
	time_t now = time(NULL);
	char month[16];
	size_t i;

	(void)state;
	s = harness_serve("[token.worker]\nsecret = " WORKER_SECRET "\nrole = worker\n"
			  "[provider]\nkind = local\norphan_timeout = 20s\n"
			  "[local]\ngpus = 0,1,2\n"
			  "[lane.standard]\nwait_target = 1s\n"
			  "[scaler]\ninterval = 200ms\nmax_gpus = 3\nidle_timeout = 2s\nwarm = * * 1\n"
			  "max_spend_per_hour = 0\n"
			  "[offer.g]\nprice_ondemand = 3600\nbilling_minimum = 0s\n"
			  "[team.a]\nquota_gpus = 1\n"
			  "[team.b]\nquota_gpus = 1\n",
			  HARNESS_TOKENS);
	harness_own_workers(s);
	WAIT_FOR(s, 30000, instances_in(s, "idle") == 1, "the warm instance did not come up within 30 s");
	a0 = submit_waiting(s, dir, "a", "a0");
	WAIT_FOR(s, 30000, harness_job_is(s, a0, "leased"), "a0 was not leased within 30 s");
	b0 = submit_waiting(s, dir, "b", "b0");
	WAIT_FOR(s, 30000, harness_job_is(s, b0, "leased"), "b0 was not leased within 30 s");
	a1 = submit_waiting(s, dir, "a", "a1");
	WAIT_FOR(s, 30000, harness_job_is(s, a1, "leased"), "a1 was not leased within 30 s");
	/* b0 and a1 end first: their instances idle out (the warm one, busy,
	 * holds the floor); a0 ends last, and the warm one stays. */
	release(dir, "b0");
	release(dir, "a1");
	WAIT_FOR(s, 30000, instances_in(s, "terminated") == 2, "a's and b's instances were not released within 30 s");
	release(dir, "a0");
	WAIT_FOR(s, 30000, jobs_in(s, "a", "succeeded") == 2 && jobs_in(s, "b", "succeeded") == 1,
		 "the jobs did not succeed within 30 s");

	r = harness_get(s, "/v1/fleet?all=1");
	json_array_foreach(harness_jget(r, "instances"), i, inst) {
		json_t *team = harness_jget(inst, "team");
		teams_seen[json_is_null(team) ? 0 : strcmp(json_string_value(team), "a") == 0 ? 1 : 2]++;
	}
	json_decref(r);
	assert_int(teams_seen[0], 1); /* the warm one, still up */
	assert_int(teams_seen[1], 1);
	assert_int(teams_seen[2], 1);

	strftime(month, sizeof month, "%Y-%m", gmtime(&now));
	harness_ebb(&run, s, "report", "--month", month, "--by", "team", "--json", NULL);
	assert_int(run.status, 0);
	r = harness_json(run.out);
	/* Each launching team has the boot of its instance; the warm one's is shared. */
	assert_true(json_number_value(harness_jget(group_named(r, "a"), "seconds.boot")) > 0);
	assert_true(json_number_value(harness_jget(group_named(r, "b"), "seconds.boot")) > 0);
	assert_true(json_number_value(harness_jget(group_named(r, "(shared)"), "seconds.boot")) > 0);
	assert_true(json_number_value(harness_jget(group_named(r, "(shared)"), "seconds.busy")) == 0);
	json_array_foreach(harness_jget(r, "chargeback.teams"), i, line) {
		assert_int(JINT(line, "busy_cents") + JINT(line, "idle_cents"), JINT(line, "total_cents"));
		lines += JINT(line, "total_cents");
	}
	assert_int(json_array_size(harness_jget(r, "chargeback.teams")), 2);
	assert_true(JINT(r, "chargeback.shared_cents") > 0);
	lines += JINT(r, "chargeback.shared_cents");
	assert_int(lines, JINT(r, "chargeback.total_cents"));
	assert_int(lines, chargeback_cents(json_number_value(harness_jget(r, "total.cost_usd"))));
	a_cents = JINT(r, "chargeback.teams.0.total_cents");
	if (strcmp(JSTR(r, "chargeback.teams.0.team"), "a") != 0)
		a_cents = JINT(r, "chargeback.teams.1.total_cents");
	json_decref(r);
	harness_run_free(&run);

	/* a's monthly report: its line, by offer and market and by type. */
	harness_ebb(&run, s, "report", "--team", "a", "--month", month, "--json", NULL);
	assert_int(run.status, 0);
	r = harness_json(run.out);
	assert_string_equal(JSTR(r, "by_market.team"), "a");
	assert_int(json_array_size(harness_jget(r, "by_market.groups")), 1);
	assert_string_equal(JSTR(r, "by_market.groups.0.name"), "g");
	assert_string_equal(JSTR(r, "by_market.groups.0.market"), "on-demand");
	assert_true(json_number_value(harness_jget(r, "by_market.groups.0.price_usd_per_hour")) == 3600);
	/* Its exact cost, in cents: its chargeback line, or a cent off it,
	 * where the lines were apportioned so that they add up to the fleet's
	 * total (largest remainders). */
	assert_between(chargeback_cents(json_number_value(harness_jget(r, "by_market.total.cost_usd"))), a_cents - 1,
		       a_cents + 1);
	assert_true(json_number_value(harness_jget(r, "by_market.total.gpu_hours.not_busy")) > 0);
	assert_true(json_number_value(harness_jget(r, "by_market.total.efficiency")) < 1);
	assert_int(JINT(r, "by_market.total.jobs"), 2);
	/* The jobs' type, and the time no job used of a's instance. */
	assert_int(JINT(group_named(harness_jget(r, "by_type"), "default"), "jobs"), 2);
	assert_true(json_number_value(harness_jget(group_named(harness_jget(r, "by_type"), "(idle)"), "cost_usd")) > 0);
	json_decref(r);
	harness_run_free(&run);
	harness_ebb(&run, s, "report", "--team", "a", "--month", month, "--csv", NULL);
	assert_int(run.status, 0);
	assert_contains(run.out, "section,name,market,price_usd_per_hour,gpu_hours,busy_gpu_hours,idle_gpu_hours,"
				 "cost_usd,idle_cost_usd,jobs,items\noffer,g,on-demand,3600.0000,");
	assert_contains(run.out, "\ntotal,a,,,");
	assert_contains(run.out, "\ntype,default,,,");
	harness_run_free(&run);
	harness_ebb(&run, s, "report", "--team", "a", "--month", month, NULL);
	assert_int(run.status, 0);
	assert_contains(run.out, harness_fmt("Team a, %s (UTC)", month));
	assert_contains(run.out, "OFFER  MARKET");
	assert_contains(run.out, "efficiency (busy over billed)");
	assert_contains(run.out, "Top consumers by job type:");
	harness_run_free(&run);
	harness_ebb(&run, s, "report", "--team", "a", "--by", "type", NULL);
	assert_int(run.status, 2);
	assert_contains(run.err, "--by: not with --team");
	harness_run_free(&run);
	assert_int(harness_call(s, "GET", "/v1/report?by=market&team=a%20b", NULL, &r), 400);
	assert_string_equal(JSTR(r, "error.field"), "team");
	json_decref(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_team_held_to_quota_and_borrowing, harness_cleanup),
		cmocka_unit_test_teardown(test_borrowed_jobs_preempted_through_checkpoints, harness_cleanup),
		cmocka_unit_test_teardown(test_preempt_within_a_team_and_backoff, harness_cleanup),
		cmocka_unit_test_teardown(test_budget_stops_a_team_and_chargeback_adds_up, harness_cleanup),
		cmocka_unit_test_teardown(test_budget_set_at_run_time, harness_cleanup),
		cmocka_unit_test_teardown(test_idle_goes_to_the_launching_team_or_shared, harness_cleanup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
