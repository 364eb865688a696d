/* serve's alerts against a real serve and a real webhook receiver
 * (receiver.h): each rule fires, in the log, GET /v1/alerts, `ebb alerts`
 * and /metrics, and is posted in Alertmanager's webhook format; it
 * resolves, and that is posted too; a firing alert outlives a restart; a
 * receiver that fails is tried again with a growing wait, and one that
 * hangs blocks nothing; a rule switched off is silent. */
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "receiver.h"
#include "serve/alert_payload.h"

/* A serve on the test clock whose alerts go to r, with more config. */
static struct harness_server *serve_to(struct receiver *r, const char *extra, int flags)
{
	return harness_serve(harness_fmt("[webhook.oncall]\nurl = %s\ntoken = hook-secret-0123\n%s", receiver_url(r),
					 extra),
			     flags);
}

/* Waits until r has had more than n posts: the last one's body. */
static json_t *post_after(struct harness_server *s, struct receiver *r, int n)
{
	WAIT_FOR(s, 20000, receiver_count(r) > n, "no webhook post after the %d before", n);
	return receiver_body(r, receiver_count(r) - 1);
}

static int is_hex16(const char *s)
{
	return s && strlen(s) == 16 && strspn(s, "0123456789abcdef") == 16;
}

/* The whole of an Alertmanager webhook payload (version 4) of one alert. */
static void assert_payload(struct harness_server *s, json_t *p, const char *status, const char *name)
{
	json_t *a = harness_jget(p, "alerts.0");
	char fp[17];

	assert_non_null(a);
	assert_string_equal(JSTR(p, "version"), "4");
	assert_string_equal(JSTR(p, "status"), status);
	assert_string_equal(JSTR(p, "receiver"), "oncall");
	assert_string_equal(JSTR(p, "groupKey"), harness_fmt("{}:{alertname=\"%s\"}", name));
	assert_int(JINT(p, "truncatedAlerts"), 0);
	assert_string_equal(JSTR(p, "groupLabels.alertname"), name);
	assert_string_equal(JSTR(p, "commonLabels.alertname"), name);
	assert_string_equal(JSTR(p, "externalURL"), s->url);
	assert_string_equal(JSTR(a, "status"), status);
	assert_string_equal(JSTR(a, "labels.alertname"), name);
	assert_non_null(harness_jget(a, "labels.severity"));
	assert_non_null(json_string_value(harness_jget(a, "annotations.summary")));
	assert_string_equal(JSTR(a, "generatorURL"), harness_fmt("%s/v1/alerts", s->url));
	assert_true(is_hex16(JSTR(a, "fingerprint")));
	alert_fingerprint(harness_jget(a, "labels"), fp);
	assert_string_equal(JSTR(a, "fingerprint"), fp);
	/* 2026-11-24T05:19:46.934Z */
	assert_int(strlen(JSTR(a, "startsAt")), 24);
	assert_true(JSTR(a, "startsAt")[23] == 'Z');
	if (strcmp(status, "firing") == 0)
		assert_string_equal(JSTR(a, "endsAt"), "0001-01-01T00:00:00Z");
	else
		assert_int(strlen(JSTR(a, "endsAt")), 24);
}

/* Waits for the post after the n before, which must fire alert `name`:
 * its body. */
static json_t *fired(struct harness_server *s, struct receiver *r, int n, const char *name)
{
	json_t *p = post_after(s, r, n);

	assert_payload(s, p, "firing", name);
	return p;
}

/* The value of a sample of /metrics, or -1 when it has none. */
static double sample(struct harness_server *s, const char *series)
{
	char *body, *at;
	double v = -1;

	assert_int(harness_get_text(s, NULL, "/metrics", &body, NULL, 0), 200);
	if ((at = strstr(body, harness_fmt("\n%s ", series))))
		v = strtod(at + strlen(series) + 2, NULL);
	free(body);
	return v;
}

/* The alerts of GET /v1/alerts in one state. */
static int alerts_in(struct harness_server *s, const char *state)
{
	json_t *r = harness_get(s, "/v1/alerts"), *a;
	size_t i;
	int n = 0;

	json_array_foreach(json_object_get(r, "alerts"), i, a)
		n += strcmp(JSTR(a, "state"), state) == 0;
	json_decref(r);
	return n;
}

/* A lane's oldest job waits past its threshold: the alert fires, is told
 * everywhere, and resolves when the job is gone. */
static void queue_waiting_fires_and_resolves(void **state)
{
	struct receiver *r = receiver_start();
	struct harness_server *s =
		serve_to(r, "[lane.standard]\nwait_target = 1s\n[alerts]\nqueue_wait_factor = 2\n", HARNESS_TEST_CLOCK);
	struct harness_run run;
	json_t *p, *a;
	int64_t id;
	char *h;

	(void)state;
	id = harness_submit(s, "{\"command\": [\"true\"]}");
	harness_advance(s, 1500);
	harness_sleep_ms(1500);
	assert_int(receiver_count(r), 0); /* 1.5 s: under 2 x 1 s */
	harness_advance(s, 1000);
	p = fired(s, r, 0, "EbbQueueWaiting");
	assert_int(json_array_size(json_object_get(p, "alerts")), 1);
	assert_string_equal(JSTR(p, "alerts.0.labels.lane"), "standard");
	assert_string_equal(JSTR(p, "alerts.0.labels.severity"), "warning");
	assert_contains(JSTR(p, "alerts.0.annotations.summary"), "lane standard: oldest job waiting ");
	assert_contains(JSTR(p, "alerts.0.annotations.summary"), "times its wait target of 1 s; 1 queued");
	assert_string_equal(JSTR(p, "commonAnnotations.summary"), JSTR(p, "alerts.0.annotations.summary"));
	json_decref(p);
	assert_string_equal((h = receiver_header(r, 0, "Authorization")), "Bearer hook-secret-0123");
	free(h);
	assert_string_equal((h = receiver_header(r, 0, "Content-Type")), "application/json");
	free(h);

	a = harness_get(s, "/v1/alerts");
	assert_string_equal(JSTR(a, "alerts.0.name"), "EbbQueueWaiting");
	assert_string_equal(JSTR(a, "alerts.0.state"), "firing");
	assert_string_equal(JSTR(a, "alerts.0.labels.lane"), "standard");
	assert_non_null(harness_jget(a, "alerts.0.fired_at"));
	json_decref(a);
	assert_int(sample(s, "ebb_alerts_firing{alertname=\"EbbQueueWaiting\"}"), 1);
	assert_int(sample(s, "ebb_alerts_firing{alertname=\"EbbInstanceIdle\"}"), 0);
	assert_int(harness_file_lines(s->log, "msg=\"alert firing\" alert=EbbQueueWaiting"), 1);
	assert_int(harness_ebb(&run, s, "alerts", "--rules", NULL), 0);
	assert_contains(run.out, "firing");
	assert_contains(run.out, "EbbQueueWaiting");
	assert_contains(run.out, "lane=standard");
	assert_contains(run.out, "oldest job waiting");
	assert_contains(run.out, "EbbSpotShareLow");
	harness_run_free(&run);

	json_decref(harness_call_ok(s, "POST", harness_fmt("/v1/jobs/%lld/cancel", (long long)id), NULL, 200));
	p = post_after(s, r, 1);
	assert_payload(s, p, "resolved", "EbbQueueWaiting");
	json_decref(p);
	assert_int(alerts_in(s, "firing"), 0);
	assert_int(sample(s, "ebb_alerts_firing{alertname=\"EbbQueueWaiting\"}"), 0);
	assert_int(harness_file_lines(s->log, "msg=\"alert resolved\" alert=EbbQueueWaiting"), 1);
	assert_int(harness_ebb(&run, s, "alerts", NULL), 0);
	assert_contains(run.out, "no alert firing or pending");
	harness_run_free(&run);
	receiver_stop(r);
}

/* A job dead-lettered: the alert fires with what the job cost and why it
 * died, is still firing after a restart (and is not told again), and
 * resolves when the window has passed. */
static void dead_letter_outlives_a_restart(void **state)
{
	struct receiver *r = receiver_start();
	struct harness_server *s = serve_to(r, "", HARNESS_TEST_CLOCK);
	json_t *p, *lease, *a;
	double since;

	(void)state;
	harness_submit(s, "{\"command\": [\"true\"], \"max_attempts\": 1, \"lane\": \"batch\"}");
	lease = harness_call_ok(s, "POST", "/v1/lease", "{\"worker\": \"w1\", \"wait_s\": 0}", 200);
	json_decref(harness_call_ok(s, "POST", harness_fmt("/v1/jobs/%lld/fail", (long long)JINT(lease, "job.id")),
				    harness_fmt("{\"lease_token\": %lld, \"error\": \"out of memory on the GPU\", \"retry\": true}",
						(long long)JINT(lease, "job.lease.token")),
				    200));
	json_decref(lease);
	p = fired(s, r, 0, "EbbJobsDeadLettered");
	assert_string_equal(JSTR(p, "alerts.0.labels.lane"), "batch");
	assert_contains(JSTR(p, "alerts.0.annotations.summary"), "lane batch: 1 jobs dead-lettered in the last 1 h, $0.00");
	assert_contains(JSTR(p, "alerts.0.annotations.summary"), "out of memory on the GPU");
	json_decref(p);
	a = harness_get(s, "/v1/alerts");
	since = json_number_value(harness_jget(a, "alerts.0.since"));
	json_decref(a);

	assert_int(harness_server_stop(s), 0);
	harness_server_start(s);
	a = harness_get(s, "/v1/alerts");
	assert_string_equal(JSTR(a, "alerts.0.state"), "firing");
	assert_true(json_number_value(harness_jget(a, "alerts.0.since")) == since);
	json_decref(a);
	harness_sleep_ms(1500); /* an evaluation after the start */
	assert_int(alerts_in(s, "firing"), 1);
	assert_int(receiver_count(r), 1);

	harness_advance(s, 3600 * 1000);
	p = post_after(s, r, 1);
	assert_payload(s, p, "resolved", "EbbJobsDeadLettered");
	json_decref(p);
	assert_int(alerts_in(s, "firing"), 0);
	receiver_stop(r);
}

/* A receiver that fails gets the same post again after 1 s, then 2 s;
 * once it answers, the next post is the next notification. */
static void failed_posts_are_tried_again(void **state)
{
	struct receiver *r = receiver_start();
	struct harness_server *s =
		serve_to(r, "[lane.standard]\nwait_target = 1s\n[alerts]\nqueue_wait_factor = 1\n", HARNESS_TEST_CLOCK);
	int64_t t0, id;
	char *first;
	json_t *p;

	(void)state;
	receiver_answer(r, 500);
	id = harness_submit(s, "{\"command\": [\"true\"]}");
	harness_advance(s, 2000);
	WAIT_FOR(s, 10000, receiver_count(r) >= 1, "no post");
	t0 = harness_now_ms();
	WAIT_FOR(s, 10000, receiver_count(r) >= 3, "the failed post was not tried again twice");
	/* After 1 s, then after 2 s more. */
	assert_between(harness_now_ms() - t0, 2500, 6000);
	receiver_answer(r, 200);
	WAIT_FOR(s, 10000, receiver_count(r) >= 4, "not tried a third time");
	p = receiver_body(r, 0);
	first = json_dumps(p, JSON_SORT_KEYS);
	json_decref(p);
	for (int i = 1; i < 4; i++) {
		char *again;
		p = receiver_body(r, i);
		again = json_dumps(p, JSON_SORT_KEYS);
		assert_string_equal(again, first);
		json_decref(p);
		free(again);
	}
	free(first);
	assert_true(harness_file_lines(s->log, "msg=\"webhook post failed, tried again later\" webhook=oncall") >= 2);
	assert_true(harness_file_lines(s->log, "error=\"HTTP status 500\"") >= 2);
	/* Delivered: the resolution comes next, and nothing else. */
	json_decref(harness_call_ok(s, "POST", harness_fmt("/v1/jobs/%lld/cancel", (long long)id), NULL, 200));
	p = post_after(s, r, 4);
	assert_string_equal(JSTR(p, "status"), "resolved");
	json_decref(p);
	harness_sleep_ms(1500);
	assert_int(receiver_count(r), 5);
	receiver_stop(r);
}

/* A receiver that never answers: serve answers its API at once all the
 * while, and tries the post again after webhook_timeout. */
static void a_hung_webhook_blocks_nothing(void **state)
{
	struct receiver *r = receiver_start();
	struct harness_server *s = serve_to(r, "[lane.standard]\nwait_target = 1s\n[alerts]\nqueue_wait_factor = 1\n"
					       "webhook_timeout = 2s\n",
					    HARNESS_TEST_CLOCK);
	int64_t slowest = 0;

	(void)state;
	receiver_answer(r, 0);
	harness_submit(s, "{\"command\": [\"true\"]}");
	harness_advance(s, 2000);
	WAIT_FOR(s, 10000, receiver_count(r) >= 1, "no post");
	for (int i = 0; i < 20; i++) {
		int64_t t = harness_now_ms();
		harness_submit(s, "{\"command\": [\"true\"]}");
		if (harness_now_ms() - t > slowest)
			slowest = harness_now_ms() - t;
	}
	assert_true(slowest < 1000);
	WAIT_FOR(s, 10000, receiver_count(r) >= 2, "the post that timed out was not tried again");
	assert_true(harness_file_lines(s->log, "Timeout was reached") >= 1 ||
		    harness_file_lines(s->log, "timed out") >= 1);
	receiver_stop(r);
}

/* A rule switched off: no alert, no sample, said so in the rules. */
static void a_rule_switched_off_is_silent(void **state)
{
	struct receiver *r = receiver_start();
	struct harness_server *s = serve_to(r, "[lane.standard]\nwait_target = 1s\n[alerts]\nqueue_wait = off\n",
					    HARNESS_TEST_CLOCK);
	json_t *a;

	(void)state;
	harness_submit(s, "{\"command\": [\"true\"]}");
	harness_advance(s, 60 * 60 * 1000);
	harness_sleep_ms(1500);
	assert_int(receiver_count(r), 0);
	assert_int(alerts_in(s, "firing"), 0);
	assert_true(sample(s, "ebb_alerts_firing{alertname=\"EbbQueueWaiting\"}") < 0);
	a = harness_get(s, "/v1/alerts");
	assert_string_equal(JSTR(a, "rules.1.name"), "EbbQueueWaiting");
	assert_false(json_is_true(harness_jget(a, "rules.1.on")));
	json_decref(a);
	receiver_stop(r);
}

/* The alert of an offer and a market, from GET /v1/alerts; NULL if none. */
static json_t *alert_of(struct harness_server *s, const char *name, const char *market)
{
	json_t *r = harness_get(s, "/v1/alerts"), *a, *found = NULL;
	size_t i;

	json_array_foreach(json_object_get(r, "alerts"), i, a) {
		if (strcmp(JSTR(a, "name"), name) == 0 && strcmp(JSTR(a, "state"), "firing") == 0 &&
		    (!market || strcmp(JSTR(a, "labels.market"), market) == 0))
			found = json_incref(a);
	}
	json_decref(r);
	return found;
}

#define WAIT_ALERT(s, name, market) WAIT_FOR((s), 30000, (a = alert_of((s), (name), (market))) != NULL, "%s not firing", (name))

/* The fleet's rules with the local provider: spot launches fail for want
 * of capacity, the scaler falls back on demand, the spot share is 0, the
 * instance idles past its threshold, and its worker, killed while it runs
 * a job, is lost. */
static void fleet_rules(void **state)
{
	struct receiver *r = receiver_start();
	struct harness_server *s = serve_to(
		r,
		"[provider]\nkind = local\norphan_timeout = 10s\n[local]\ngpus = 0\n"
		"[offer.a10]\ngpus = 1\nprice_ondemand = 3.06\nprice_spot = 1\nlaunch_failure_rate = 1\n"
		"[lane.standard]\nwait_target = 1s\n"
		"[scaler]\ninterval = 200ms\nmax_instances = 1\ncapacity_rest = 1h\n"
		"[alerts]\nidle_ondemand = 2s\nspot_share_for = 0s\nlaunch_failures_for = 0s\n",
		0);
	json_t *a = NULL;
	pid_t pids[4];

	(void)state;
	harness_own_workers(s);
	harness_submit(s, "{\"command\": [\"true\"]}");
	WAIT_FOR(s, 30000, harness_stat(s, "states.succeeded") == 1, "the job did not run");

	WAIT_ALERT(s, "EbbLaunchesFailing", "spot");
	assert_string_equal(JSTR(a, "labels.offer"), "a10");
	assert_string_equal(JSTR(a, "labels.severity"), "critical");
	assert_contains(JSTR(a, "summary"), "a10 on spot: every launch has failed for");
	assert_contains(JSTR(a, "summary"), "for want of capacity");
	json_decref(a);
	WAIT_ALERT(s, "EbbSpotShareLow", NULL);
	assert_contains(JSTR(a, "summary"), "spot 0 of 1 instances (0%), under 50%: on demand costs $2.06/h more");
	json_decref(a);
	WAIT_ALERT(s, "EbbInstanceIdle", "on-demand");
	assert_contains(JSTR(a, "summary"), "on-demand a10 instance");
	assert_contains(JSTR(a, "summary"), ": $3.06/h");
	assert_string_equal(JSTR(a, "labels.offer"), "a10");
	assert_non_null(harness_jget(a, "labels.instance"));
	json_decref(a);

	/* Its worker killed while it runs a job: lost. */
	harness_submit(s, "{\"command\": [\"sleep\", \"30\"]}");
	WAIT_FOR(s, 30000, harness_stat(s, "states.leased") == 1, "the long job was not leased");
	/* serve's children: the job's own fork has the worker's command line. */
	assert_int(harness_worker_pids(s->url, s->pid, pids, 4), 1);
	kill(pids[0], SIGKILL);
	WAIT_ALERT(s, "EbbWorkerLost", "on-demand");
	assert_contains(JSTR(a, "summary"), "a10 on on-demand: a worker lost");
	json_decref(a);
	/* The posts follow the alerts' state on the loop: waited for. */
	WAIT_FOR(s, 10000, receiver_count(r) >= 4, "%d posts received, expected 4 or more", receiver_count(r));
	receiver_stop(r);
}

/* The store fails (another process holds its write lock past serve's
 * busy_timeout): the alert fires and is posted though the store cannot
 * keep it, and resolves once the errors are a window old. */
static void store_errors_fire(void **state)
{
	struct receiver *r;
	struct harness_server *s;
	sqlite3 *db;
	json_t *p, *reply = NULL;

	(void)state;
	harness_sqlite_only("the test holds SQLite's write lock on the store's file");
	r = receiver_start();
	s = serve_to(r, "", HARNESS_TEST_CLOCK);
	assert_int(sqlite3_open(harness_fmt("%s/ebb.db", s->data), &db), SQLITE_OK);
	assert_int(sqlite3_exec(db, "BEGIN EXCLUSIVE", NULL, NULL, NULL), SQLITE_OK);
	assert_int(harness_call(s, "POST", "/v1/jobs", "{\"command\": [\"true\"]}", &reply), 500);
	json_decref(reply);
	p = fired(s, r, 0, "EbbStoreErrors");
	assert_string_equal(JSTR(p, "alerts.0.labels.severity"), "critical");
	assert_contains(JSTR(p, "alerts.0.annotations.summary"), "store errors, the last");
	assert_contains(JSTR(p, "alerts.0.annotations.summary"), "database is locked");
	json_decref(p);
	assert_int(sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	harness_advance(s, 10 * 60 * 1000);
	p = post_after(s, r, 1);
	assert_payload(s, p, "resolved", "EbbStoreErrors");
	json_decref(p);
	assert_int(alerts_in(s, "firing"), 0);
	receiver_stop(r);
}

/* The fingerprint is Prometheus' signature of the labels, whose values
 * Alertmanager keys alerts by: these two as Prometheus computes them (the
 * empty set's is FNV-1a's start; the other is docs/ALERTS.md's example). */
static void fingerprint_is_prometheus(void **state)
{
	json_t *none = json_object();
	json_t *labels = json_pack("{s:s, s:s, s:s, s:s, s:s}", "alertname", "EbbInstanceIdle", "severity", "warning",
				   "offer", "a100", "market", "on-demand", "instance", "1");
	char fp[17];

	(void)state;
	alert_fingerprint(none, fp);
	assert_string_equal(fp, "cbf29ce484222325");
	alert_fingerprint(labels, fp);
	assert_string_equal(fp, "e8c40162e111644e");
	json_decref(none);
	json_decref(labels);
}

#define T(fn) cmocka_unit_test_teardown(fn, harness_cleanup)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(fingerprint_is_prometheus),
		T(queue_waiting_fires_and_resolves),
		T(dead_letter_outlives_a_restart),
		T(failed_posts_are_tried_again),
		T(a_hung_webhook_blocks_nothing),
		T(a_rule_switched_off_is_silent),
		T(fleet_rules),
		T(store_errors_fire),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
