/* serve's own jobs as a trace: a real serve with the local provider runs
 * jobs of two teams; `ebb trace export` writes them in the simulator's
 * CSV (durations on the reference GPU: the run times the offer's speed),
 * `ebb sim` loads what it wrote, --since / --until cut it, and a team's
 * token exports its own team's jobs only. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"

#define TEAM_A_SECRET "team-a-secret-0123456789"
#define SPEED 2.0

static struct harness_server *serve(void)
{
	struct harness_server *s = harness_serve("[provider]\nkind = local\norphan_timeout = 20s\n"
						 "[local]\ngpus = 0,1\n"
						 "[queue]\nlanes = express,standard\n"
						 "[lane.standard]\nwait_target = 1s\n"
						 "[scaler]\ninterval = 200ms\nidle_timeout = 1m\n"
						 "[offer.fast]\ngpus = 1\nspeed = 2\nprice_ondemand = 3.6\n"
						 "[team.a]\nquota_gpus = 2\n"
						 "[team.b]\nquota_gpus = 2\n"
						 "[token.asub]\nsecret = " TEAM_A_SECRET "\nteam = a\n",
						 HARNESS_TOKENS);
	harness_own_workers(s);
	return s;
}

static int64_t submit(struct harness_server *s, const char *team, const char *lane, int priority, const char *type,
		      int est_s)
{
	return harness_submit(s, harness_fmt("{\"command\": [\"sleep\", \"0.3\"], \"team\": \"%s\", \"lane\": \"%s\","
					     " \"priority\": %d, \"type\": \"%s\", \"est_s\": %d}",
					     team, lane, priority, type, est_s));
}

static void wait_succeeded(struct harness_server *s, const int64_t *ids, int n)
{
	for (int k = 0; k < n; k++)
		WAIT_FOR(s, 30000, harness_job_is(s, ids[k], "succeeded"), "job %lld did not succeed within 30 s",
			 (long long)ids[k]);
}

/* `ebb trace export` with the further arguments (NULL-terminated), which
 * must work: its CSV. */
static char *export(struct harness_server *s, ...)
{
	const char *argv[12] = {"trace", "export"};
	struct harness_run r;
	const char *a;
	va_list ap;
	int n = 2;
	char *out;

	va_start(ap, s);
	while ((a = va_arg(ap, const char *)) && n < 11)
		argv[n++] = a;
	va_end(ap);
	harness_ebb(&r, s, argv[0], argv[1], n > 2 ? argv[2] : NULL, n > 3 ? argv[3] : NULL, n > 4 ? argv[4] : NULL,
		    n > 5 ? argv[5] : NULL, NULL);
	if (r.status != 0)
		harness_fail_with_log(s, "ebb trace export: status %d\n%s", r.status, r.err);
	out = strdup(r.out);
	harness_run_free(&r);
	return out;
}

static int rows_of(const char *csv)
{
	int n = -1; /* the header */

	if (csv[0] == '#') /* the origin, where there are rows */
		n--;
	for (const char *p = csv; *p; p++)
		n += *p == '\n';
	return n;
}

/* The row of the CSV whose submit time is the job's, counted from origin. */
static const char *row_of(const char *csv, json_t *job, double origin)
{
	char prefix[64];
	const char *p;

	snprintf(prefix, sizeof prefix, "\n%.3f,", JNUM(job, "created_at") - origin);
	p = strstr(csv, prefix);
	if (!p)
		fail_msg("no row submitted at %.3f in\n%s", JNUM(job, "created_at") - origin, csv);
	return p + 1;
}

static void tune_on_history(struct harness_server *s, const int64_t *first, const int64_t *later);

static void test_export_loads_in_sim_and_keeps_teams_apart(void **state)
{
	struct harness_server *s = serve();
	int64_t first[1], later[2];
	double boundary, origin;
	char *csv, path[4200];
	struct harness_run r;
	json_t *job;

	(void)state;
	first[0] = submit(s, "a", "express", 7, "infer", 4);
	wait_succeeded(s, first, 1);
	/* The next jobs finish in a later second than the first. */
	job = harness_get_job(s, first[0]);
	boundary = floor(JNUM(job, "finished_at")) + 1;
	origin = floor(JNUM(job, "created_at"));
	json_decref(job);
	WAIT_FOR(s, 5000, (double)time(NULL) >= boundary, "the clock did not pass %.0f", boundary);
	later[0] = submit(s, "b", "standard", 0, "train", 9);
	later[1] = submit(s, "a", "standard", -3, "infer", 2);
	wait_succeeded(s, later, 2);

	csv = export(s, NULL);
	/* The origin first, by which the replay keeps calendar months. */
	assert_true(strncmp(csv, harness_fmt("# origin=%.0f\n", origin), strlen(harness_fmt("# origin=%.0f\n", origin))) == 0);
	assert_non_null(strstr(csv, "\nsubmit_time_s,duration_s,gpus,priority,lane,job_class,est_s,team\n"));
	assert_int(rows_of(csv), 3);
	/* Each row: the job's submission, its run times the offer's speed,
	 * and what it was submitted with. */
	for (int k = 0; k < 3; k++) {
		int64_t id = k == 0 ? first[0] : later[k - 1];
		double submit_s, duration_s;
		int gpus, priority, est;
		char lane[32], type[32], team[32];
		job = harness_get_job(s, id);
		assert_int(sscanf(row_of(csv, job, origin), "%lf,%lf,%d,%d,%31[^,],%31[^,],%d,%31[^\n]", &submit_s, &duration_s,
				  &gpus, &priority, lane, type, &est, team),
			   8);
		if (fabs(duration_s - (JNUM(job, "finished_at") - JNUM(job, "started_at")) * SPEED) > 0.0021)
			fail_msg("job %lld: duration_s %.3f, its run %.3f s at speed 2", (long long)id, duration_s,
				 JNUM(job, "finished_at") - JNUM(job, "started_at"));
		assert_true(duration_s >= 0.3 * SPEED);
		assert_int(gpus, 1);
		assert_int(priority, JINT(job, "priority"));
		assert_string_equal(lane, JSTR(job, "lane"));
		assert_string_equal(type, JSTR(job, "type"));
		assert_int(est, JINT(job, "est_s"));
		assert_string_equal(team, JSTR(job, "team"));
		json_decref(job);
	}

	/* What it wrote loads in `ebb sim`, all three jobs. */
	snprintf(path, sizeof path, "%s/trace.csv", s->dir);
	harness_write_file(path, csv);
	harness_ebb(&r, s, "sim", path, "--offers", s->conf, "--json", NULL);
	if (r.status != 0)
		fail_msg("ebb sim on the export: status %d\n%s", r.status, r.err);
	assert_contains(r.out, "\"jobs\": 3");
	harness_run_free(&r);
	free(csv);

	/* --since and --until cut at the time the jobs finished. */
	csv = export(s, "--since", harness_fmt("@%.0f", boundary), NULL);
	assert_int(rows_of(csv), 2);
	assert_null(strstr(csv, ",express,"));
	free(csv);
	csv = export(s, "--until", harness_fmt("@%.0f", boundary), NULL);
	assert_int(rows_of(csv), 1);
	assert_non_null(strstr(csv, ",express,infer,4,a\n"));
	free(csv);
	csv = export(s, "--since", "2020-01-01", "--until", "@1600000000", NULL);
	assert_int(rows_of(csv), 0);
	free(csv);

	/* Team a's token: its two jobs, none of b's. */
	csv = export(s, "--token", TEAM_A_SECRET, NULL);
	assert_int(rows_of(csv), 2);
	assert_null(strstr(csv, ",b\n"));
	free(csv);
	/* A page at a time, as a client pages. */
	job = harness_get(s, "/v1/history?limit=2");
	assert_int(json_array_size(harness_jget(job, "jobs")), 2);
	assert_true(json_is_integer(harness_jget(job, "next_after")));
	json_decref(job);

	tune_on_history(s, first, later);
}

/* `ebb tune --history`: the sweep on the same jobs, and beside it what
 * the running settings did: replayed, and in fact (the ledger's cost, the
 * p95 of the jobs' own waits, the longest of three). */
static void tune_on_history(struct harness_server *s, const int64_t *first, const int64_t *later)
{
	struct harness_run r;
	double longest = 0;
	json_t *v, *job, *report, *before, *fleet;

	for (int k = 0; k < 3; k++) {
		job = harness_get_job(s, k == 0 ? first[0] : later[k - 1]);
		longest = fmax(longest, JNUM(job, "started_at") - JNUM(job, "created_at"));
		json_decref(job);
	}
	harness_ebb(&r, s, "tune", "--history", "1d", "--offers", s->conf, "--wait-p95", "600", NULL);
	if (r.status != 0)
		harness_fail_with_log(s, "ebb tune --history: status %d\n%s", r.status, r.err);
	assert_contains(r.out, "<- recommended");
	assert_contains(r.out, "over serve's history (3 jobs finished since ");
	assert_contains(r.out, "the recommendation, replayed");
	assert_contains(r.out, "the running settings, replayed");
	assert_contains(r.out, "the running settings, in fact");
	harness_run_free(&r);

	harness_ebb(&r, s, "tune", "--history", "1d", "--offers", s->conf, "--wait-p95", "600", "--json", NULL);
	if (r.status != 0)
		harness_fail_with_log(s, "ebb tune --history --json: status %d\n%s", r.status, r.err);
	v = json_loads(r.out, 0, NULL);
	assert_non_null(v);
	assert_int(JINT(v, "history.jobs"), 3);
	assert_true(json_is_null(harness_jget(v, "history.team")));
	assert_true(JNUM(v, "history.running_actual.cost_usd") > 0);
	assert_true(JNUM(v, "history.running_actual.cost_usd") > 0);
	assert_true(JNUM(v, "history.running_replayed.cost_usd") > 0);
	if (fabs(JNUM(v, "history.running_actual.wait_p95_s") - longest) > 0.002)
		fail_msg("actual p95 wait %.3f, the longest of the three waits %.3f",
			 JNUM(v, "history.running_actual.wait_p95_s"), longest);
	assert_string_equal(JSTR(v, "history.recommended.policy"), JSTR(v, "recommendation.policy"));
	json_decref(v);
	harness_run_free(&r);

	/* --publish keeps it in serve; the dashboard's JSON carries it. */
	harness_ebb(&r, s, "tune", "--history", "1d", "--offers", s->conf, "--wait-p95", "600", "--json", "--publish",
		    NULL);
	if (r.status != 0)
		harness_fail_with_log(s, "ebb tune --history --publish: status %d\n%s", r.status, r.err);
	assert_contains(r.err, "published");
	v = json_loads(r.out, 0, NULL);
	report = harness_get(s, "/v1/dashboard");
	assert_int(JINT(report, "tuning.comparison.jobs"), 3);
	assert_int(JINT(report, "tuning.comparison.since"), JINT(v, "history.since"));
	assert_string_equal(JSTR(report, "tuning.comparison.recommended.policy"), JSTR(v, "history.recommended.policy"));
	assert_true(fabs(JNUM(report, "tuning.comparison.running_replayed.cost_usd") -
			 JNUM(v, "history.running_replayed.cost_usd")) < 1e-6);
	assert_true(fabs(JNUM(report, "tuning.comparison.running_actual.wait_p95_s") -
			 JNUM(v, "history.running_actual.wait_p95_s")) < 1e-6);
	assert_true(JNUM(report, "tuning.published_at") > (double)JINT(v, "history.since"));
	json_decref(report);
	json_decref(v);
	harness_run_free(&r);

	/* A team's token tunes on its own jobs; its cost is its chargeback
	 * line's, which grows while an instance idles: read before and after. */
	before = harness_get(s, "/v1/report?team=a");
	harness_ebb(&r, s, "tune", "--history", "1d", "--offers", s->conf, "--wait-p95", "600", "--json", "--token",
		    TEAM_A_SECRET, NULL);
	if (r.status != 0)
		harness_fail_with_log(s, "ebb tune --history as team a: status %d\n%s", r.status, r.err);
	v = json_loads(r.out, 0, NULL);
	assert_int(JINT(v, "history.jobs"), 2);
	assert_string_equal(JSTR(v, "history.team"), "a");
	report = harness_get(s, "/v1/report?team=a");
	if (!(JNUM(before, "total.cost_usd") <= JNUM(v, "history.running_actual.cost_usd") &&
	      JNUM(v, "history.running_actual.cost_usd") <= JNUM(report, "total.cost_usd")))
		fail_msg("team a's actual cost %.6f, its report's %.6f before and %.6f after",
			 JNUM(v, "history.running_actual.cost_usd"), JNUM(before, "total.cost_usd"),
			 JNUM(report, "total.cost_usd"));
	/* Less than the fleet's: b's job is not in it. */
	fleet = harness_get(s, "/v1/report");
	assert_true(JNUM(report, "total.cost_usd") < JNUM(fleet, "total.cost_usd"));
	json_decref(fleet);
	json_decref(before);
	json_decref(report);
	json_decref(v);
	harness_run_free(&r);

	/* Publishing is an admin's: a team's token is refused. */
	harness_ebb(&r, s, "tune", "--history", "1d", "--offers", s->conf, "--wait-p95", "600", "--publish", "--token",
		    TEAM_A_SECRET, NULL);
	assert_int(r.status, 1);
	assert_contains(r.err, "may not call POST /v1/admin/tuning");
	harness_run_free(&r);
}


/* Bad bounds: a clear error from the command and from the API. */
static void test_bad_bounds_are_refused(void **state)
{
	struct harness_server *s = serve();
	struct harness_run r;
	json_t *reply;

	(void)state;
	harness_ebb(&r, s, "trace", "export", "--since", "yesterday", NULL);
	assert_int(r.status, 2);
	assert_contains(r.err, "--since: expected a span before now (30d, 12h), @UNIX_SECONDS or YYYY-MM-DD");
	harness_run_free(&r);
	harness_ebb(&r, s, "trace", "export", "--since", "@200", "--until", "@100", NULL);
	assert_int(r.status, 2);
	assert_contains(r.err, "--until is not after --since");
	harness_run_free(&r);
	harness_ebb(&r, s, "trace", "import", NULL);
	assert_int(r.status, 2);
	assert_contains(r.err, "expected the subcommand export");
	harness_run_free(&r);
	reply = harness_call_ok(s, "GET", "/v1/history?since=200&until=100", NULL, 400);
	assert_string_equal(JSTR(reply, "error.field"), "until");
	json_decref(reply);
	/* Nothing published yet; a comparison that is not an object. */
	reply = harness_get(s, "/v1/dashboard");
	assert_true(json_is_null(harness_jget(reply, "tuning")));
	json_decref(reply);
	reply = harness_call_ok(s, "POST", "/v1/admin/tuning", "{\"comparison\": 3}", 400);
	assert_string_equal(JSTR(reply, "error.field"), "comparison");
	json_decref(reply);
	harness_ebb(&r, s, "tune", "t.csv", "--wait-p95", "60", "--publish", NULL);
	assert_int(r.status, 2);
	assert_contains(r.err, "--publish needs --history");
	harness_run_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_export_loads_in_sim_and_keeps_teams_apart, harness_cleanup),
		cmocka_unit_test_teardown(test_bad_bounds_are_refused, harness_cleanup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
