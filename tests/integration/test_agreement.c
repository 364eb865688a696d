/* serve and the simulator agree (issue 25): one scenario, a small trace
 * of several lanes, priorities, job types and teams, under a warm floor,
 * with a spot reclaim, run through a real `ebb serve` (the local provider
 * starting real `ebb worker` processes, serve on its test clock) and
 * through `ebb sim` with the same config. They must make the same
 * launches and terminations, start the jobs in the same order, each at
 * the same time (`ebb sim --jobs`), restart the reclaimed job at the same
 * time, and wait and cost the same, within the tolerances below.
 *
 * The reclaim: at a chosen moment the spot instance running a chosen job
 * is reclaimed, in serve by the admin route `ebb reclaim` calls (its
 * notice served, the worker interrupts the job and leaves, the local
 * provider kills what is left [local] reclaim_notice later), in the
 * replay by `ebb sim --reclaims` (the instance stops then). Serve's job
 * and instance take the worker's few seconds more, which the tolerances
 * absorb. A job that arrives while two instances are idle goes to the
 * same one in both (below).
 *
 * How serve is driven: the test is the trace's clock. Each job is a shell
 * command that ends when the test creates its file, which it does when
 * serve's clock reaches the job's start plus its duration; between events
 * the clock is moved (POST /v1/admin/clock) to the next one: an arrival,
 * a job's end, an idle instance's timeout. serve's clock runs on with the
 * real time besides, a few seconds over the whole run on a busy machine:
 * what the tolerances absorb. The scenario spans 40 minutes of serve's
 * time, within a lease (lease_timeout = 1h), so that no clock move ends a
 * lease a worker holds. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "policy/plan.h"

/* What real time adds to serve's clock at each step (a submit, a job's
 * end reported, a worker up) is well under this on a busy machine. */
#define WAIT_TOLERANCE_S 20.0
/* Of the cost, about 32 instance minutes in all: 3% is 58 s, for the
 * real time and the workers' 5 s to leave after their idle timeout
 * (PLAN_LEAVE_GRACE_MS), which the replay does not wait. */
#define COST_TOLERANCE 0.03

/* The reclaim: the instance running job RECLAIM_JOB, RECLAIM_S into the
 * trace. */
#define RECLAIM_JOB 0
#define RECLAIM_S 200

/* Local instances of one GPU that boot at once; idle ones go after 5 min
 * (serve: and its workers' 5 s to leave, PLAN_LEAVE_GRACE_MS), one kept
 * warm at all times; two instances at most. Teams without quotas, so that
 * no job is preempted. Spot at a third of the on-demand price, with no
 * reclaim expected (reliability 1: the replay draws none, plan() prices
 * none), and a reclaimed worker killed 2 s after its notice. Three GPU
 * indices for two instances: the reclaimed one's replacement starts
 * while its worker is still leaving (with two, its launch may find no
 * index free, fail, and launch again: a launch the replay does not
 * make). */
static const char scenario_conf[] = "[provider]\n"
				    "kind = local\n"
				    "orphan_timeout = 1d\n"
				    "[local]\n"
				    "gpus = 0,1,2\n"
				    "reclaim_notice = 2s\n"
				    "[queue]\n"
				    "lanes = express,standard,batch\n"
				    "lease_timeout = 1h\n"
				    "[lane.express]\n"
				    "wait_target = 10s\n"
				    "[lane.standard]\n"
				    "wait_target = 60s\n"
				    "[lane.batch]\n"
				    "wait_target = 30m\n"
				    "[scaler]\n"
				    "interval = 200ms\n"
				    "max_instances = 2\n"
				    "max_gpus = 2\n"
				    "idle_timeout = 5m\n"
				    "boot_timeout = 1d\n"
				    "warm = * * 1\n"
				    "[team.ml]\n"
				    "weight = 2\n"
				    "[team.web]\n"
				    "weight = 1\n"
				    "[offer.gpu]\n"
				    "gpus = 1\n"
				    "price_ondemand = 3.6\n"
				    "price_spot = 1.2\n"
				    "reliability = 1\n"
				    "boot = 0s\n";

struct sjob {
	int submit_s, duration_s;
	const char *lane;
	int priority;
	const char *team, *type;
};

/* Worked through: the warm instance (spot) runs ml's job 0; web's
 * express job 1 is past its 10 s target at once, so a second instance
 * (spot, of two at most), busy until 310 s, while four more of web's jobs
 * queue behind it. At 200 s the warm instance is reclaimed: job 0 goes
 * back to the head of its queue, and plan() launches a replacement (on
 * demand: job 0 waited from its submission at 0 s, past its lane's
 * target, and plan() takes spot only for work not near it), where job 0
 * starts again, from nothing (no checkpoint), until 800 s. web's jobs
 * leave the second instance in lease order, not in arrival order: the
 * express job 5, the standard job 4 (priority 10), the standard job 3
 * (priority 0), the batch job 2 at 610 s; ml's batch job 6, at 605 s,
 * waits for it, at 710 s (two instances at most). Job 7 arrives at
 * 1000 s with both instances idle: both give it to the instance launched
 * first (policy/placement.h: serve offers jobs to its parked lease
 * requests in that order, the replay to its instances), and release the
 * replacement, idle since 800 s, at 1100 s. */
static const struct sjob scenario[] = {
	{0, 600, "standard", 0, "ml", "train"},
	{10, 300, "express", 0, "web", "infer"},
	{20, 100, "batch", 0, "web", "encode"},
	{30, 100, "standard", 0, "web", "train"},
	{40, 100, "standard", 10, "web", "infer"},
	{50, 100, "express", 0, "web", "infer"},
	{605, 60, "batch", 3, "ml", "encode"},
	{1000, 30, "express", 0, "web", "infer"},
};
#define NJOBS ((int)(sizeof scenario / sizeof *scenario))

/* ---- serve ---- */

/* serve's clock moved on by ms (0: not moved): its time now, in ms. */
static int64_t clock_advance(struct harness_server *s, int64_t ms)
{
	json_t *r = NULL;
	int st = harness_call(s, "POST", "/v1/admin/clock", harness_fmt("{\"advance_ms\": %lld}", (long long)ms), &r);
	int64_t now;

	if (st != 200 || !json_is_number(harness_jget(r, "now")))
		harness_fail_with_log(s, "POST /v1/admin/clock: status %d", st);
	now = (int64_t)llround(JNUM(r, "now") * 1000);
	json_decref(r);
	return now;
}

static int64_t ms_of(json_t *v, const char *path)
{
	json_t *t = harness_jget(v, path);

	return json_is_number(t) ? (int64_t)llround(json_number_value(t) * 1000) : -1;
}

/* What the jobs and the fleet are now, as one text: a state that holds
 * still over several looks has settled. Each job's first start and its
 * last (they differ once it was interrupted), and its time back in the
 * queue after its interrupted runs; -1: none yet. */
struct look {
	char text[4096];
	int queued, booting, idle;
	int64_t first_ms[NJOBS], started_ms[NJOBS], requeued_ms[NJOBS], finished_ms[NJOBS];
	int64_t instance[NJOBS]; /* the instance a leased job runs on, 0: none */
};

/* From a job's runs (GET /v1/jobs/ID): its first start, and its time
 * queued between each run's end and the next's start. */
static void runs_of(json_t *job, int64_t *first_ms, int64_t *requeued_ms)
{
	json_t *runs = harness_jget(job, "runs"), *r;
	int64_t ended = -1;
	size_t k;

	*first_ms = -1;
	*requeued_ms = 0;
	json_array_foreach(runs, k, r) {
		if (k == 0)
			*first_ms = ms_of(r, "started_at");
		else if (ended >= 0)
			*requeued_ms += ms_of(r, "started_at") - ended;
		ended = ms_of(r, "ended_at");
	}
}

static void look(struct harness_server *s, const int64_t *ids, int n, struct look *l)
{
	json_t *f = harness_get(s, "/v1/fleet?all=1"), *i;
	size_t k, len = 0;

	memset(l, 0, sizeof *l);
	for (int j = 0; j < n; j++) {
		json_t *v = harness_get_job(s, ids[j]);
		const char *st = JSTR(v, "state");
		l->queued += strcmp(st, "queued") == 0;
		l->started_ms[j] = ms_of(v, "started_at");
		runs_of(v, &l->first_ms[j], &l->requeued_ms[j]);
		l->instance[j] = json_is_integer(harness_jget(v, "lease.instance")) ? JINT(v, "lease.instance") : 0;
		l->finished_ms[j] = strcmp(st, "succeeded") == 0 ? ms_of(v, "finished_at") : -1;
		len += (size_t)snprintf(l->text + len, sizeof l->text - len, "%s ", st);
		json_decref(v);
	}
	json_array_foreach(harness_jget(f, "instances"), k, i) {
		const char *st = JSTR(i, "state");
		l->booting += strcmp(st, "booting") == 0;
		l->idle += strcmp(st, "idle") == 0;
		if (len < sizeof l->text)
			len += (size_t)snprintf(l->text + len, sizeof l->text - len, "i%lld:%s ",
						(long long)JINT(i, "id"), st);
	}
	json_decref(f);
}

/* Waits until serve has done what the last event asks: no instance
 * booting, no job queued while an instance idles, and the same state
 * over three looks a scaler interval or more apart. */
static void settle(struct harness_server *s, const int64_t *ids, int n, struct look *l)
{
	char prev[sizeof l->text] = "";
	int same = 0;
	int64_t until = harness_now_ms() + 60000;

	for (;;) {
		look(s, ids, n, l);
		if (strcmp(prev, l->text) == 0 && l->booting == 0 && !(l->queued && l->idle))
			same++;
		else
			same = 0;
		if (same >= 2)
			return;
		if (harness_now_ms() > until)
			harness_fail_with_log(s, "serve did not settle: %s", l->text);
		snprintf(prev, sizeof prev, "%s", l->text);
		harness_sleep_ms(300);
	}
}

/* The earliest idle timeout to come of the instances idle now (and
 * their workers' grace), -1: none. An instance past it that stays is the
 * warm floor's. */
static int64_t idle_due(struct harness_server *s, int64_t now)
{
	json_t *f = harness_get(s, "/v1/fleet"), *i;
	int64_t due = -1;
	size_t k;

	json_array_foreach(harness_jget(f, "instances"), k, i) {
		json_t *idle = harness_jget(i, "idle_s");
		int64_t at;
		if (strcmp(JSTR(i, "state"), "idle") != 0 || !json_is_number(idle))
			continue;
		at = now + 5 * 60 * 1000 + 5000 - (int64_t)llround(json_number_value(idle) * 1000);
		if (at > now && (due < 0 || at < due))
			due = at;
	}
	json_decref(f);
	return due;
}

struct outcome {
	int launches, terminations;
	int64_t kept_launched_ms; /* the instance up at the end: its launch, from t0; -1: none */
	double waits_s[NJOBS]; /* sorted */
	double cost_usd;       /* of the instances from t0 to end_ms */
};

/* The scenario's prices by market (scenario_conf). */
static double price_of(const char *market) { return strcmp(market, "spot") == 0 ? 1.2 : 3.6; }

/* The instances' cost between from and to (ms), and the launches and
 * terminations after from. */
static void fleet_outcome(struct harness_server *s, int64_t from, int64_t to, struct outcome *o)
{
	json_t *f = harness_get(s, "/v1/fleet?all=1"), *i;
	size_t k;

	o->kept_launched_ms = -1;
	json_array_foreach(harness_jget(f, "instances"), k, i) {
		int64_t launched = ms_of(i, "launched_at"), ended = ms_of(i, "terminated_at");
		int64_t a = launched > from ? launched : from, b = ended >= 0 && ended < to ? ended : to;
		print_message("instance %lld (%s): launched %.1f s, ended %.1f s\n", (long long)JINT(i, "id"),
			      JSTR(i, "market"), (double)(launched - from) / 1000.0,
			      ended >= 0 ? (double)(ended - from) / 1000.0 : -1.0);
		o->launches += launched > from;
		/* serve ends an idle instance its workers' time to leave after
		 * the replay does (PLAN_LEAVE_GRACE_MS). */
		o->terminations += ended >= 0 && ended <= to + PLAN_LEAVE_GRACE_MS + (int64_t)(WAIT_TOLERANCE_S * 1000);
		if (ended < 0)
			o->kept_launched_ms = launched - from;
		if (b > a)
			o->cost_usd += (double)(b - a) / 3600e3 * price_of(JSTR(i, "market"));
	}
	json_decref(f);
}

static int by_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static int64_t interruptions(struct harness_server *s, int64_t id)
{
	json_t *v = harness_get_job(s, id);
	int64_t n = JINT(v, "interruptions");

	json_decref(v);
	return n;
}

/* The spot reclaim of the instance running job j, as `ebb reclaim`
 * makes it; back once serve has the job interrupted. */
static void reclaim(struct harness_server *s, const int64_t *ids, int j, const struct look *l)
{
	json_t *r;

	if (l->instance[j] <= 0)
		harness_fail_with_log(s, "job %d runs on no instance at the reclaim", j);
	r = harness_call_ok(s, "POST", harness_fmt("/v1/fleet/%lld/reclaim", (long long)l->instance[j]), NULL, 200);
	assert_string_equal(JSTR(r, "market"), "spot");
	json_decref(r);
	WAIT_FOR(s, 30000, interruptions(s, ids[j]) == 1, "job %d was not interrupted by the reclaim of instance %lld",
		 j, (long long)l->instance[j]);
}

/* Runs the scenario through serve. t0: serve's time of the trace's 0. */
static void run_serve(struct harness_server *s, const char *dir, int64_t *t0_out, int64_t *end_out,
		      int64_t *ids, struct look *l)
{
	int next = 0, n = 0, reclaimed = 0;
	int64_t t0, now;

	/* The warm floor's instance up and idle first, as the replay starts
	 * with it. */
	WAIT_FOR(s, 60000, harness_live_instances(s, NULL) == 1 && (look(s, ids, 0, l), l->idle == 1),
		 "the warm floor's instance did not come up");
	t0 = clock_advance(s, 0);
	for (;;) {
		int64_t due = -1, at;
		if (next < NJOBS)
			due = t0 + scenario[next].submit_s * 1000LL;
		if (!reclaimed && (due < 0 || t0 + RECLAIM_S * 1000LL < due))
			due = t0 + RECLAIM_S * 1000LL;
		for (int j = 0; j < n; j++) {
			at = l->started_ms[j] + scenario[j].duration_s * 1000LL;
			if (l->started_ms[j] >= 0 && l->finished_ms[j] < 0 && (due < 0 || at < due))
				due = at;
		}
		now = clock_advance(s, 0);
		at = idle_due(s, now);
		if (at >= 0 && (due < 0 || at < due))
			due = at;
		if (due < 0)
			break;
		now = clock_advance(s, due > now ? due - now : 0);
		while (next < NJOBS && t0 + scenario[next].submit_s * 1000LL <= now) {
			const struct sjob *j = &scenario[next];
			ids[n++] = harness_submit(
				s, harness_fmt("{\"command\": [\"sh\", \"-c\", \"while [ ! -e %s/end%d ]; do sleep 0.05;"
					       " done\"], \"lane\": \"%s\", \"priority\": %d, \"team\": \"%s\", \"type\":"
					       " \"%s\", \"est_s\": %d}",
					       dir, next, j->lane, j->priority, j->team, j->type, j->duration_s));
			next++;
		}
		if (!reclaimed && t0 + RECLAIM_S * 1000LL <= now) {
			reclaim(s, ids, RECLAIM_JOB, l);
			reclaimed = 1;
		}
		for (int j = 0; j < n; j++) {
			if (l->started_ms[j] >= 0 && l->finished_ms[j] < 0 &&
			    l->started_ms[j] + scenario[j].duration_s * 1000LL <= now) {
				harness_write_file(harness_fmt("%s/end%d", dir, j), "");
				WAIT_FOR(s, 30000, harness_job_is(s, ids[j], "succeeded"), "job %d did not end", j);
			}
		}
		settle(s, ids, n, l);
	}
	*t0_out = t0;
	*end_out = now;
}

/* A job's wait is all its time in the queue, as the replay counts it:
 * to its first start, and from each interrupted run's end to the next
 * start. */
static void serve_outcome(struct harness_server *s, const struct look *l, int64_t t0, int64_t end,
			  struct outcome *o)
{
	memset(o, 0, sizeof *o);
	for (int j = 0; j < NJOBS; j++) {
		if (l->finished_ms[j] < 0)
			harness_fail_with_log(s, "job %d did not end in serve", j);
		o->waits_s[j] =
			(double)(l->first_ms[j] - (t0 + scenario[j].submit_s * 1000LL) + l->requeued_ms[j]) / 1000.0;
	}
	qsort(o->waits_s, NJOBS, sizeof *o->waits_s, by_double);
	fleet_outcome(s, t0, end, o);
}

/* The jobs by at[] (insertion sort: eight jobs), those at the same
 * instant by then[]. */
static void order_by(const int64_t *at, const int64_t *then, int *order)
{
	for (int j = 0; j < NJOBS; j++)
		order[j] = j;
	for (int a = 1; a < NJOBS; a++) {
		for (int b = a; b > 0; b--) {
			int x = order[b], y = order[b - 1];
			if (at[x] > at[y] || (at[x] == at[y] && then[x] >= then[y]))
				break;
			order[b] = y;
			order[b - 1] = x;
		}
	}
}

/* The same order in serve and the replay (at[] each), the replay's
 * jobs that started at the same instant taken in serve's order. */
static void assert_same_order(const char *what, const int64_t *serve_at, const int64_t *sim_at)
{
	int serve[NJOBS], sim[NJOBS];

	order_by(serve_at, serve_at, serve);
	order_by(sim_at, serve_at, sim);
	for (int j = 0; j < NJOBS; j++) {
		if (serve[j] != sim[j])
			fail_msg("the %dth job by %s: job %d in serve, job %d in the simulator", j + 1, what, serve[j],
				 sim[j]);
	}
}

/* ---- the simulator ---- */

/* The replay of the same trace, config and reclaim: its JSON, and each
 * job's first and last start (ms from the trace's 0) from --jobs. */
static json_t *run_sim(const char *dir, int64_t *start_ms, int64_t *last_ms)
{
	char trace[4200], conf[4200], jobs[4200], reclaims[4200];
	size_t len = 0, cap = 4096;
	char *csv = malloc(cap), *line, *save = NULL;
	struct harness_run r;
	json_t *all, *v;
	int n = 0;

	len += (size_t)snprintf(csv, cap, "submit_time_s,duration_s,gpus,lane,priority,team,job_class,est_s\n");
	for (int j = 0; j < NJOBS; j++)
		len += (size_t)snprintf(csv + len, cap - len, "%d,%d,1,%s,%d,%s,%s,%d\n", scenario[j].submit_s,
					scenario[j].duration_s, scenario[j].lane, scenario[j].priority,
					scenario[j].team, scenario[j].type, scenario[j].duration_s);
	snprintf(trace, sizeof trace, "%s/trace.csv", dir);
	snprintf(conf, sizeof conf, "%s/sim.conf", dir);
	snprintf(jobs, sizeof jobs, "%s/jobs.csv", dir);
	snprintf(reclaims, sizeof reclaims, "%s/reclaims.csv", dir);
	harness_write_file(trace, csv);
	harness_write_file(conf, scenario_conf);
	harness_write_file(reclaims, harness_fmt("time_s,job\n%d,%d\n", RECLAIM_S, RECLAIM_JOB));
	free(csv);
	harness_ebb(&r, NULL, "sim", trace, "--offers", conf, "--policy", "ebb", "--json", "--jobs", jobs, "--reclaims",
		    reclaims, NULL);
	if (r.status != 0)
		fail_msg("ebb sim: status %d: %s", r.status, r.err);
	all = harness_json(r.out);
	v = json_incref(json_array_get(all, 0));
	json_decref(all);
	harness_run_free(&r);
	/* "ebb",JOB,SUBMIT_S,START_S,WAIT_S,LAST_START_S */
	csv = harness_read_file(jobs, NULL);
	assert_non_null(csv);
	for (line = strtok_r(csv, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		int job;
		double submit_s, start_s, wait_s, last_s;
		if (sscanf(line, "\"ebb\",%d,%lf,%lf,%lf,%lf", &job, &submit_s, &start_s, &wait_s, &last_s) != 5)
			continue; /* the header */
		assert_true(job >= 0 && job < NJOBS);
		start_ms[job] = (int64_t)llround(start_s * 1000);
		last_ms[job] = (int64_t)llround(last_s * 1000);
		n++;
	}
	free(csv);
	assert_int(n, NJOBS);
	return v;
}

static void assert_near(const char *what, double serve, double sim, double tolerance)
{
	if (fabs(serve - sim) > tolerance)
		fail_msg("%s: serve %.3f, the simulator %.3f (tolerance %.3f)", what, serve, sim, tolerance);
}

static void serve_and_sim_agree(void **state)
{
	struct harness_server *s = harness_serve(scenario_conf, HARNESS_TEST_CLOCK);
	const char *dir = harness_tmpdir();
	int64_t ids[NJOBS] = {0}, sim_start[NJOBS], sim_last[NJOBS], serve_start[NJOBS], serve_last[NJOBS], t0, end;
	double mean = 0;
	struct look l;
	struct outcome o;
	json_t *sim;

	(void)state;
	harness_own_workers(s);
	run_serve(s, dir, &t0, &end, ids, &l);
	sim = run_sim(dir, sim_start, sim_last);
	assert_int(JINT(sim, "jobs"), NJOBS);
	assert_false(json_is_true(harness_jget(sim, "stalled")));
	/* The reclaim found its instance in both. */
	assert_int(JINT(sim, "reclaims"), 1);
	assert_null(json_object_get(sim, "reclaims_missed"));
	assert_int(interruptions(s, ids[RECLAIM_JOB]), 1);
	/* Up to the replay's end: the last job's end, the warm floor left. */
	serve_outcome(s, &l, t0, t0 + JINT(sim, "end_s") * 1000, &o);
	for (int j = 0; j < NJOBS; j++) {
		serve_start[j] = l.first_ms[j] - t0;
		serve_last[j] = l.started_ms[j] - t0;
		print_message("job %d (%s, priority %d, %s): serve started it at %.1f s (last at %.1f s), the simulator"
			      " at %.1f s (last at %.1f s)\n",
			      j, scenario[j].lane, scenario[j].priority, scenario[j].team, (double)serve_start[j] / 1000.0,
			      (double)serve_last[j] / 1000.0, (double)sim_start[j] / 1000.0, (double)sim_last[j] / 1000.0);
		assert_near(harness_fmt("job %d's start (s)", j), (double)serve_start[j] / 1000.0,
			    (double)sim_start[j] / 1000.0, WAIT_TOLERANCE_S);
		/* The reclaimed job's restart; the others' one start again. */
		assert_near(harness_fmt("job %d's last start (s)", j), (double)serve_last[j] / 1000.0,
			    (double)sim_last[j] / 1000.0, WAIT_TOLERANCE_S);
	}
	assert_true(sim_last[RECLAIM_JOB] >= RECLAIM_S * 1000LL);
	/* The same order of first starts, and of last ones: where the
	 * reclaimed job's restart falls among the others' starts. */
	assert_same_order("first start", serve_start, sim_start);
	assert_same_order("last start", serve_last, sim_last);
	/* The launches past the warm floor (the reclaimed instance's
	 * replacement among them), the instances at most. */
	print_message("serve: %d launches, %d terminations, $%.4f; the simulator: %lld launches, %.4f GPU hours,"
		      " %lld instances at most, $%.4f\n",
		      o.launches, o.terminations, o.cost_usd, (long long)JINT(sim, "cold_starts"),
		      JNUM(sim, "gpu_hours_billed"), (long long)JINT(sim, "max_instances"), JNUM(sim, "cost_usd"));
	assert_int(o.launches, JINT(sim, "cold_starts"));
	/* The replay ends with the fleet down to its warm floor: every launch
	 * past it was ended (or the instance it replaced), in serve too by
	 * then. */
	assert_int(o.terminations, JINT(sim, "cold_starts"));
	/* Job 7 went to the instance launched first of the two idle: the
	 * replacement, idle since 800 s, was released at 1100 s in the
	 * replay, and in serve the one kept is the one launched before the
	 * reclaim. */
	assert_int(JINT(sim, "end_s"), 1100);
	if (o.kept_launched_ms < 0 || o.kept_launched_ms >= RECLAIM_S * 1000LL)
		fail_msg("serve kept the instance launched at %.1f s, not the one launched before the reclaim",
			 (double)o.kept_launched_ms / 1000.0);
	assert_int(JINT(sim, "max_instances"), 2);
	assert_near("wait p50 (s)", o.waits_s[(NJOBS + 1) / 2 - 1], JNUM(sim, "wait_p50_s"), WAIT_TOLERANCE_S);
	assert_near("wait p95 (s)", o.waits_s[NJOBS - 1], JNUM(sim, "wait_p95_s"), WAIT_TOLERANCE_S);
	for (int j = 0; j < NJOBS; j++)
		mean += o.waits_s[j] / NJOBS;
	assert_near("wait mean (s)", mean, JNUM(sim, "wait_mean_s"), WAIT_TOLERANCE_S);
	assert_near("cost (USD)", o.cost_usd, JNUM(sim, "cost_usd"), COST_TOLERANCE * JNUM(sim, "cost_usd"));
	json_decref(sim);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(serve_and_sim_agree, harness_cleanup),
	};
	return cmocka_run_group_tests(tests, NULL, harness_cleanup);
}
