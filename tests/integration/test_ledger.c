/* The cost ledger end to end: a real `ebb serve` with `[provider] kind =
 * local` runs real jobs on real `ebb worker` processes, on offers with a
 * price and each billing rule (per second with a minimum, per minute, per
 * hour). Once the instances are gone the tests check, from the API alone:
 *
 * - each instance's billed time and cost (GET /v1/fleet?all=1) are its
 *   lifetime under its offer's rule, at its price, computed here anew;
 * - GET /v1/report's total is the sum of those, to the cent, by offer,
 *   team and type alike, and its attributed seconds (busy, boot, idle,
 *   billing remainder) add up to the billed seconds of the instances;
 * - with the test clock, lifetimes of an hour and more, and a report
 *   since a time inside them counts only what lies after it;
 * - the scaler changes its choice when the measured throughput of an
 *   offer contradicts its declared speed. The local provider runs every
 *   offer on the same machine, so the job itself is slow on the declared
 *   fast offer: that offer has two GPUs, and the job sleeps long when
 *   its worker has two. The speed is measured for real from
 *   the runs (est_s over run time), not seeded.
 *
 * Workers run in real time; every wait polls with a deadline. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

/* ---- serve and its API ---- */

/* Three offers, one instance each, one per billing rule; the spot one is
 * the dearest per item, so that the scaler uses all three only when it
 * needs three instances. */
#define OFFERS                                          \
	"[offer.hourly]\n"                              \
	"price_ondemand = 0.5\n"                        \
	"billing = per-hour\n"                          \
	"max_instances = 1\n"                           \
	"[offer.minutely]\n"                            \
	"price_ondemand = 1.2\n"                        \
	"billing = per-minute\n"                        \
	"max_instances = 1\n"                           \
	"[offer.secondly]\n"                            \
	"price_spot = 3.6\n"                            \
	"reliability = 0.99\n"                          \
	"billing = per-second\n"                        \
	"billing_minimum = %s\n"                        \
	"max_instances = 1\n"

struct rule {
	const char *offer;
	const char *market;
	double price;
	int64_t unit_ms, minimum_ms;
};

static struct rule rules[3];

static void set_rules(int64_t secondly_minimum_ms)
{
	rules[0] = (struct rule){"hourly", "on-demand", 0.5, 3600000, 60000};
	rules[1] = (struct rule){"minutely", "on-demand", 1.2, 60000, 60000};
	rules[2] = (struct rule){"secondly", "spot", 3.6, 1000, secondly_minimum_ms};
}

static const struct rule *rule_of(const char *offer)
{
	for (int k = 0; k < 3; k++) {
		if (strcmp(rules[k].offer, offer) == 0)
			return &rules[k];
	}
	fail_msg("an instance of offer '%s', which is not configured", offer);
	return NULL;
}

/* The billing rule, written out again here: up to the unit, at least the
 * minimum. */
static int64_t billed_ms(const struct rule *r, int64_t lifetime_ms)
{
	int64_t b = (lifetime_ms + r->unit_ms - 1) / r->unit_ms * r->unit_ms;
	return b < r->minimum_ms ? r->minimum_ms : b;
}

static struct harness_server *serve(const char *extra, int flags)
{
	struct harness_server *s = harness_serve(harness_fmt("[provider]\n"
							     "kind = local\n"
							     "orphan_timeout = 20s\n"
							     "[local]\n"
							     "gpus = 0,1,2,3\n"
							     "[lane.standard]\n"
							     "wait_target = 1s\n"
							     "[scaler]\n"
							     "interval = 200ms\n"
							     "%s",
							     extra),
						 flags);
	harness_own_workers(s);
	return s;
}

static int64_t submit(struct harness_server *s, const char *script, int est_s, int items, const char *team,
		      const char *type)
{
	return harness_submit(s, harness_fmt("{\"command\": [\"sh\", \"-c\", \"%s\"], \"est_s\": %d, \"items\": %d,"
					     " \"team\": \"%s\", \"type\": \"%s\"}",
					     script, est_s, items, team, type));
}

static int64_t count_jobs(struct harness_server *s, const char *state)
{
	json_t *r = harness_get(s, "/v1/stats");
	json_t *n = harness_jget(r, harness_fmt("states.%s", state));
	int64_t v = json_is_integer(n) ? json_integer_value(n) : 0;

	json_decref(r);
	return v;
}

static int64_t ms_of(json_t *v, const char *path) { return llround(JNUM(v, path) * 1000.0); }

#define assert_near(got, want, eps, what)                                                                   \
	do {                                                                                                \
		double got_ = (got), want_ = (want);                                                        \
		if (!(fabs(got_ - want_) <= (eps)))                                                         \
			fail_msg("%s:%d: %s is %.9f, expected %.9f (within %g)", __FILE__, __LINE__, what, got_, \
				 want_, (double)(eps));                                                     \
	} while (0)

/* What the fleet says of its terminated instances, checked one by one
 * against the billing rules; the sums, and per offer. */
struct billed {
	int n, per_offer[3];
	double cost, per_offer_cost[3];
	int64_t billed_ms, spot_billed_ms;
	/* In [since_ms, ...): what lies after since_ms of each billed span. */
	double cost_since;
	int64_t billed_since_ms;
};

static void check_fleet(struct harness_server *s, int64_t since_ms, struct billed *b)
{
	json_t *f = harness_get(s, "/v1/fleet?all=1"), *i;
	size_t k;

	memset(b, 0, sizeof *b);
	json_array_foreach(harness_jget(f, "instances"), k, i) {
		const struct rule *r = rule_of(JSTR(i, "offer"));
		int64_t launched = ms_of(i, "launched_at"), ended, lifetime, want, start;
		double cost;

		if (strcmp(JSTR(i, "state"), "terminated") != 0)
			harness_fail_with_log(s, "instance %lld is %s", (long long)JINT(i, "id"), JSTR(i, "state"));
		assert_string_equal(JSTR(i, "market"), r->market);
		ended = ms_of(i, "terminated_at");
		lifetime = ended - launched;
		want = billed_ms(r, lifetime);
		if (ms_of(i, "billed_s") != want)
			harness_fail_with_log(s, "instance %lld (%s) lived %lld ms: billed %lld ms, expected %lld", (long long)JINT(i, "id"),
				      r->offer, (long long)lifetime, (long long)ms_of(i, "billed_s"), (long long)want);
		cost = r->price * (double)want / 3600000.0;
		assert_near(JNUM(i, "cost_usd"), cost, 1e-9, "cost_usd");
		if (since_ms == 0)
			print_message("instance %lld: %s %s, lived %.3f s, billed %.0f s, $%.6f\n", (long long)JINT(i, "id"),
			      r->offer, r->market, (double)lifetime / 1000.0, (double)want / 1000.0, cost);
		b->n++;
		b->per_offer[r - rules]++;
		b->per_offer_cost[r - rules] += cost;
		b->cost += cost;
		b->billed_ms += want;
		if (strcmp(r->market, "spot") == 0)
			b->spot_billed_ms += want;
		start = launched > since_ms ? launched : since_ms;
		if (launched + want > start) {
			b->billed_since_ms += launched + want - start;
			b->cost_since += r->price * (double)(launched + want - start) / 3600000.0;
		}
	}
	json_decref(f);
}

/* The report's total and rows against the fleet: cost to the cent, every
 * billed second attributed to busy, boot, idle or billing. */
static void check_report(struct harness_server *s, const char *by, const struct billed *b, int64_t items)
{
	json_t *r = harness_get(s, harness_fmt("/v1/report?by=%s", by)), *g, *t = harness_jget(r, "total");
	double cost = 0, attributed, billed_s = (double)b->billed_ms / 1000.0;
	/* By team, with teams off, no instance was launched for a team: what
	 * no job used is the shared row. */
	const char *not_busy = strcmp(by, "team") == 0 ? "(shared)" : "(idle)";
	size_t k;
	int idle_row = 0;

	assert_string_equal(JSTR(r, "by"), by);
	/* To the cent; in fact to rounding. */
	assert_near(JNUM(t, "cost_usd"), b->cost, 0.005, "report total cost_usd");
	assert_near(JNUM(t, "cost_usd"), b->cost, 1e-6, "report total cost_usd (to rounding)");
	attributed = JNUM(t, "seconds.busy") + JNUM(t, "seconds.boot") + JNUM(t, "seconds.idle") + JNUM(t, "seconds.billing");
	assert_near(attributed, billed_s, 0.0005, "busy + boot + idle + billing seconds");
	assert_near(JNUM(t, "seconds.billed"), billed_s, 0.0005, "seconds.billed");
	assert_near(JNUM(t, "gpu_hours.billed"), billed_s / 3600.0, 1e-9, "gpu_hours.billed (1 GPU each)");
	assert_near(JNUM(t, "spot_share"), (double)b->spot_billed_ms / (double)b->billed_ms, 1e-9, "spot_share");
	assert_near(JNUM(t, "efficiency"), JNUM(t, "seconds.busy") / billed_s, 1e-9, "efficiency");
	assert_near(JNUM(t, "cost_usd_by_kind.busy") + JNUM(t, "cost_usd_by_kind.not_busy"), b->cost, 1e-6, "busy + not busy cost");
	assert_int(JINT(t, "items"), items);
	assert_near(JNUM(t, "cost_per_item"), b->cost / (double)items, 1e-6, "cost_per_item");
	assert_int(JINT(t, "instances"), b->n);
	assert_int(JINT(t, "reclaims"), 0);
	assert_int(JINT(t, "items_lost"), 0);

	json_array_foreach(harness_jget(r, "groups"), k, g) {
		const char *name = JSTR(g, "name");
		cost += JNUM(g, "cost_usd");
		if (strcmp(by, "offer") == 0) {
			const struct rule *rl = rule_of(name);
			assert_near(JNUM(g, "cost_usd"), b->per_offer_cost[rl - rules], 1e-6, name);
			assert_int(JINT(g, "instances"), b->per_offer[rl - rules]);
		} else if (strcmp(name, not_busy) == 0) {
			/* What no job used: boot, idle, billing; no items, no job. */
			idle_row = 1;
			assert_int(JINT(g, "items"), 0);
			assert_near(JNUM(g, "seconds.busy"), 0, 0, "(idle) busy seconds");
			assert_near(JNUM(g, "seconds.boot") + JNUM(g, "seconds.idle") + JNUM(g, "seconds.billing"),
				    billed_s - JNUM(t, "seconds.busy"), 0.0005, "(idle) seconds");
		} else {
			/* A team's or type's row is its jobs' runs, nothing else. */
			assert_near(JNUM(g, "seconds.billed"), JNUM(g, "seconds.busy"), 0.0005, name);
			assert_near(JNUM(g, "efficiency"), 1, 1e-9, name);
		}
	}
	assert_near(cost, b->cost, 1e-6, "sum of the rows' cost_usd");
	if (strcmp(by, "offer") != 0 && !idle_row)
		fail_msg("report by %s: no %s row", by, not_busy);
	json_decref(r);
}

static double group_num(json_t *r, const char *group, const char *path)
{
	json_t *g = harness_find(r, "groups", "name", group);

	if (!g)
		fail_msg("no row '%s' in the report", group);
	return JNUM(g, path);
}

/* Three jobs at once, two teams, two types: 5, 7 and 9 items. Their
 * est_s (30 s) against a 1 s wait target asks for one instance each. */
static void run_three_jobs(struct harness_server *s)
{
	submit(s, "sleep 1", 30, 5, "red", "encode");
	submit(s, "sleep 1", 30, 7, "blue", "encode");
	submit(s, "sleep 1", 30, 9, "blue", "embed");
	WAIT_FOR(s, 30000, count_jobs(s, "succeeded") == 3, "%lld of 3 jobs succeeded after 30 s",
		 (long long)count_jobs(s, "succeeded"));
}

static void check_by_team_and_type(struct harness_server *s)
{
	json_t *r = harness_get(s, "/v1/report?by=team");

	assert_int(group_num(r, "red", "items"), 5);
	assert_int(group_num(r, "blue", "items"), 16);
	assert_int(group_num(r, "(shared)", "items"), 0);
	assert_near(group_num(r, "red", "cost_per_item"), group_num(r, "red", "cost_usd") / 5, 1e-12, "red cost_per_item");
	json_decref(r);
	r = harness_get(s, "/v1/report?by=type");
	assert_int(group_num(r, "encode", "items"), 12);
	assert_int(group_num(r, "embed", "items"), 9);
	assert_int(group_num(r, "encode", "jobs"), 2);
	json_decref(r);
}

/* ---- the tests ---- */

/* Real time: lives of a few seconds, so each rule bills its least: an
 * hour, a minute, and the 10 s minimum of the per-second offer. */
static void test_ledger_adds_up_short_lives(void **state)
{
	struct harness_server *s = serve(harness_fmt("max_instances = 3\nidle_timeout = 2s\n" OFFERS, "10s"), 0);
	struct billed b;

	(void)state;
	set_rules(10000);
	run_three_jobs(s);
	WAIT_FOR(s, 20000, harness_live_instances(s, NULL) == 0, "instances still up 20 s after the jobs (idle_timeout 2s)");
	check_fleet(s, 0, &b);
	for (int k = 0; k < 3; k++) {
		if (b.per_offer[k] == 0)
			harness_fail_with_log(s, "no instance of %s: the three billing rules were not all used", rules[k].offer);
	}
	check_report(s, "offer", &b, 21);
	check_report(s, "team", &b, 21);
	check_report(s, "type", &b, 21);
	check_by_team_and_type(s);

	/* The CLI shows the same. */
	{
		struct harness_run run;
		json_t *j;
		json_error_t je;
		assert_int(harness_ebb(&run, s, "report", "--by", "team", NULL), 0);
		assert_contains(run.out, "(shared)");
		assert_contains(run.out, "total");
		assert_contains(run.out, "blue");
		harness_run_free(&run);
		assert_int(harness_ebb(&run, s, "report", "--json", NULL), 0);
		if (!(j = json_loads(run.out, 0, &je)))
			fail_msg("ebb report --json: not JSON: %s", je.text);
		assert_near(JNUM(j, "total.cost_usd"), b.cost, 1e-6, "ebb report --json total");
		json_decref(j);
		harness_run_free(&run);
		assert_int(harness_ebb(&run, s, "report", "--since", "yesterday", NULL), 2);
		assert_contains(run.err, "--since");
		harness_run_free(&run);
		assert_int(harness_ebb(&run, s, "offers", NULL), 0);
		assert_contains(run.out, "per-hour");
		assert_contains(run.out, "secondly");
		harness_run_free(&run);
	}
	/* Bad queries are 400s naming the parameter. */
	{
		json_t *r = NULL;
		int st = harness_call(s, "GET", "/v1/report?by=color", NULL, &r);
		assert_error(st, r, 400, "out_of_range", "by");
		json_decref(r);
		st = harness_call(s, "GET", "/v1/report?since=soon", NULL, &r);
		assert_error(st, r, 400, "out_of_range", "since");
		json_decref(r);
	}
	assert_int(harness_server_stop(s), 0); /* a clean exit: no leak, no sanitizer report */
}

/* The test clock: after the jobs, an hour and 17.5 s go by in one step;
 * the instances, idle past their 30-minute timeout, are terminated. Lives
 * of an hour and more: 2 hours billed per hour, 62 minutes per minute,
 * every started second per second (10 s minimum, not binding). A report
 * since ten minutes before the end counts what lies after that only. */
static void test_ledger_adds_up_long_lives(void **state)
{
	struct harness_server *s =
		serve(harness_fmt("max_instances = 3\nidle_timeout = 30m\n" OFFERS, "10s"), HARNESS_TEST_CLOCK);
	struct billed b;
	int64_t first_end = 0, since_ms;
	json_t *r, *f, *i;
	size_t k;

	(void)state;
	set_rules(10000);
	run_three_jobs(s);
	harness_advance(s, 3600 * 1000 + 17500);
	WAIT_FOR(s, 20000, harness_live_instances(s, NULL) == 0, "instances still up after the clock passed their idle timeout");
	check_fleet(s, 0, &b);
	for (int k2 = 0; k2 < 3; k2++) {
		if (b.per_offer[k2] == 0)
			harness_fail_with_log(s, "no instance of %s: the three billing rules were not all used", rules[k2].offer);
	}
	assert_true(b.billed_ms >= 2 * 3600000LL + 61 * 60000LL + 3618000LL);
	check_report(s, "offer", &b, 21);
	check_report(s, "team", &b, 21);
	check_by_team_and_type(s);

	/* Since ten minutes before the first termination: what is billed
	 * after it, the idle end of each life and its billing remainder. */
	f = harness_get(s, "/v1/fleet?all=1");
	json_array_foreach(harness_jget(f, "instances"), k, i) {
		int64_t end = ms_of(i, "terminated_at");
		first_end = !first_end || end < first_end ? end : first_end;
	}
	json_decref(f);
	since_ms = first_end - 600000;
	check_fleet(s, since_ms, &b);
	r = harness_get(s, harness_fmt("/v1/report?since=%.3f", (double)since_ms / 1000.0));
	assert_near(JNUM(r, "total.seconds.billed"), (double)b.billed_since_ms / 1000.0, 0.0005, "billed seconds since");
	assert_near(JNUM(r, "total.cost_usd"), b.cost_since, 1e-6, "cost since");
	assert_near(JNUM(r, "total.seconds.busy"), 0, 0, "busy seconds since (the jobs ran an hour before)");
	assert_near(JNUM(r, "total.efficiency"), 0, 0, "efficiency since");
	json_decref(r);
	assert_int(harness_server_stop(s), 0);
}

/* The offer declared 4x fast is slow for real: after three timed runs on
 * it the speed in force is the measured one (about 1), GET /v1/offers says
 * so, and the next launch goes to the other offer, which now costs less
 * per item. (The fast one runs two of these 1-GPU jobs at once: $2.4/h
 * for two is $1.2/h a job at speed 1, against $1/h, and $0.3 at the
 * declared 4.) */
static void test_measured_speed_changes_the_choice(void **state)
{
	struct harness_server *s = serve("max_instances = 1\nidle_timeout = 1s\n"
					 "[local]\ngpus = 0,1,2\n"
					 "[offer.fast]\ngpus = 2\nspeed = 4\nprice_ondemand = 2.4\n"
					 "[offer.slow]\ngpus = 1\nspeed = 1\nprice_ondemand = 1.0\n",
					 0);
	/* Slow on the worker of fast's two GPUs, whichever of them the job
	 * runs on: its parent is that worker (or a runner of it, with the
	 * same command line). */
	const char *job = "case $(tr '\\\\0' ' ' < /proc/$PPID/cmdline) in *'--gpus 2 '*) sleep 2;; *) sleep 0.2;; esac";
	json_t *r, *o, *d;
	size_t k;
	int64_t last;
	double fast_speed = 0, fast_cost = 0, slow_cost = 0;

	(void)state;
	for (int n = 0; n < 3; n++)
		submit(s, job, 2, 1, "red", "infer");
	WAIT_FOR(s, 30000, count_jobs(s, "succeeded") == 3, "%lld of 3 jobs succeeded after 30 s",
		 (long long)count_jobs(s, "succeeded"));
	WAIT_FOR(s, 15000, harness_live_instances(s, NULL) == 0, "the instance is still up after the jobs (idle_timeout 1s)");

	r = harness_get(s, "/v1/decisions?limit=100");
	json_array_foreach(harness_jget(r, "decisions"), k, d) {
		if (strcmp(JSTR(d, "kind"), "launch") == 0 && strcmp(JSTR(d, "offer"), "fast") != 0)
			harness_fail_with_log(s, "before any measurement, a launch of %s: %s", JSTR(d, "offer"), JSTR(d, "reason"));
	}
	json_decref(r);

	r = harness_get(s, "/v1/offers");
	json_array_foreach(harness_jget(r, "offers"), k, o) {
		if (strcmp(JSTR(o, "name"), "fast") == 0) {
			assert_int(JINT(o, "measured.speed_n"), 3);
			assert_string_equal(JSTR(o, "in_force.speed_from"), "measured");
			assert_near(JNUM(o, "declared.speed"), 4, 0, "fast declared speed");
			fast_speed = JNUM(o, "in_force.speed");
			fast_cost = JNUM(o, "markets.on-demand.usd_per_work_hour");
			assert_near(JNUM(o, "measured.items_per_s"), 3.0 / JNUM(o, "measured.run_s"), 1e-9, "items_per_s");
		} else {
			assert_string_equal(JSTR(o, "in_force.speed_from"), "declared");
			slow_cost = JNUM(o, "markets.on-demand.usd_per_work_hour");
		}
	}
	json_decref(r);
	print_message("fast: speed in force %.3f, $%.4f per work-hour; slow: $%.4f\n", fast_speed, fast_cost, slow_cost);
	if (!(fast_speed > 0.5 && fast_speed < 1.5))
		harness_fail_with_log(s, "fast's speed in force is %.3f; its runs took about 2 s for est_s 2", fast_speed);
	if (!(fast_cost > slow_cost))
		harness_fail_with_log(s, "fast costs $%.4f per work-hour, slow $%.4f: expected fast dearer", fast_cost, slow_cost);

	/* The next job: the scaler launches slow now. */
	last = submit(s, job, 2, 1, "red", "infer");
	WAIT_FOR(s, 15000, count_jobs(s, "succeeded") == 4, "job %lld did not succeed", (long long)last);
	r = harness_get(s, "/v1/decisions?limit=1");
	d = json_array_get(harness_jget(r, "decisions"), 0);
	if (!d || strcmp(JSTR(d, "kind"), "launch") != 0 || strcmp(JSTR(d, "offer"), "slow") != 0)
		harness_fail_with_log(s, "the last decision is not a launch of slow: %s", d ? JSTR(d, "reason") : "(none)");
	/* slow first in the list of costs per item, fast after it; priced
	 * over the work the launches before did (serve's offer statistics) */
	assert_contains(JSTR(d, "reason"), "cheapest per item (a boot shared by the ");
	assert_contains(JSTR(d, "reason"), " s of work a launch did so far)");
	assert_true(strstr(JSTR(d, "reason"), ": slow on-demand $") &&
		    strstr(JSTR(d, "reason"), ": slow on-demand $") < strstr(JSTR(d, "reason"), ", fast on-demand $"));
	json_decref(r);
	assert_int(harness_server_stop(s), 0);
}

/* Before any instance has run, the ledger is empty: the report is all
 * zeros and no group, not a crash (serve sorted a null array of groups). */
static void test_empty_ledger(void **state)
{
	static const char *const by[] = {"offer", "team", "type"};
	struct harness_server *s = harness_serve("", 0);
	json_t *r;

	(void)state;
	harness_submit(s, "{\"command\": [\"true\"]}");
	for (int i = 0; i < 3; i++) {
		r = harness_get(s, harness_fmt("/v1/report?by=%s", by[i]));
		assert_int(json_array_size(json_object_get(r, "groups")), 0);
		assert_int(JINT(r, "total.instances"), 0);
		assert_true(json_real_value(harness_jget(r, "total.cost_usd")) == 0.0);
		json_decref(r);
	}
	assert_int(harness_server_stop(s), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_empty_ledger, harness_cleanup),
		cmocka_unit_test_teardown(test_ledger_adds_up_short_lives, harness_cleanup),
		cmocka_unit_test_teardown(test_ledger_adds_up_long_lives, harness_cleanup),
		cmocka_unit_test_teardown(test_measured_speed_changes_the_choice, harness_cleanup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
