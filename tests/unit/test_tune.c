/* The sweep behind `ebb tune` (src/sim/tune.c): the ratios the project holds
 * itself to, worked out by hand on points made here; then a real sweep
 * over a small bursty trace, whose frontiers must hold no dominated point
 * and leave out only dominated ones, and whose recommendation must be the
 * cheapest ebb setting within the wait and, pasted into a config, replay
 * to the very same cost and wait; the same points on one thread and on
 * several; and the search against the whole grid on samples of the
 * shared traces: the same answers for far fewer replays. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "sim/spec.h"
#include "sim/tune.h"

static const char offers[] = "[scaler]\nmax_instances = 12\nmax_gpus = 12\nmax_spend_per_hour = 0\n"
			     "[offer.a]\ngpus = 1\nprice_ondemand = 1.0\nboot = 120s\n"
			     "billing = per-second\nbilling_minimum = 60s\n";

#define assert_near(got, want) assert_true(fabs((got) - (want)) < 1e-12)

static struct tune_point point(const char *family, const char *spec, double cost, double wait)
{
	struct tune_point p;

	memset(&p, 0, sizeof p);
	snprintf(p.spec, sizeof p.spec, "%s", spec);
	snprintf(p.family, sizeof p.family, "%s", family);
	p.cost_usd = cost;
	p.wait_p95_s = wait;
	p.on_frontier = 1;
	return p;
}

/* At each wait, ebb's cheapest point and the best baseline's, both at
 * that p95 or shorter; the references apart; and the baseline points ebb
 * has nothing as cheap and as quick against. */
static void test_ratios_by_hand(void **state)
{
	struct tune_point pts[] = {
		point("ebb", "ebb:a", 100, 50), point("ebb", "ebb:b", 80, 120), point("ebb", "ebb:c", 60, 300),
		point("keda", "keda", 150, 60),     /* ebb within 60 s: $100, below keda */
		point("keda", "keda:x=1", 90, 100), /* ebb within 100 s: $100, above: below ebb's frontier */
		point("min1", "min1:idle=1", 200, 10), /* ebb has nothing within 10 s */
		point("util", "util", 80, 120),     /* a tie with ebb:b is not below it */
		point("keda+karpenter", "keda:placement=cheapest", 70, 250), /* ebb within 250 s: $80: below */
		point("clairvoyant", "clairvoyant", 95, 0), /* references: not baselines */
		point("bound", "bound", 40, 0),
		point("clairvoyant:wait", "clairvoyant:wait=100", 70, 95), /* at the target */
	};
	struct tune t = {.points = pts, .n = sizeof pts / sizeof *pts, .recommended = -1, .wait_p95_s = 100};
	struct tune_ratios r;
	double share;

	(void)state;
	tune_ratios(&t, 120, &r);
	assert_ptr_equal(r.keda, &pts[3]);
	assert_ptr_equal(r.clairvoyant, &pts[8]);
	assert_ptr_equal(r.bound, &pts[9]);
	/* keda's p95, 60 s: ebb $100 (ebb:a); the best baseline within 60 s is
	 * keda's defaults, $150 (min1 is dearer). */
	assert_true(r.at_keda.wait_s == 60);
	assert_ptr_equal(r.at_keda.ebb, &pts[0]);
	assert_ptr_equal(r.at_keda.best, &pts[3]);
	/* Two boots, 240 s: ebb $80 (ebb:b); the best baseline within 240 s is
	 * util, $80 too (keda+karpenter's $70 waits 250 s). */
	assert_true(r.at_two_boots.wait_s == 240);
	assert_ptr_equal(r.at_two_boots.ebb, &pts[1]);
	assert_ptr_equal(r.at_two_boots.best, &pts[6]);
	/* The target, 100 s: ebb $100, the best baseline keda:x=1, $90. */
	assert_ptr_equal(r.at_target.ebb, &pts[0]);
	assert_ptr_equal(r.at_target.best, &pts[4]);
	/* No wait (the clairvoyant's): neither ebb nor a baseline. */
	assert_true(r.at_clairvoyant.wait_s == 0);
	assert_null(r.at_clairvoyant.ebb);
	assert_null(r.at_clairvoyant.best);
	assert_int(r.below_frontier, 3);
	assert_string_equal(r.below, "keda:x=1, min1:idle=1, keda:placement=cheapest");
	/* clairvoyant:wait at the target, a reference too: at the target ebb
	 * ($100) is above the best baseline ($90), and closes (90 - 100) /
	 * (90 - 70) = -50% of the gap to it. */
	assert_ptr_equal(r.clairvoyant_wait, &pts[10]);
	assert_true(tune_gap_closed(&r, &share) == 0);
	assert_near(share, -0.5);
	/* At a target of 300 s: ebb $60 (ebb:c), the best baseline
	 * keda+karpenter's $70: with the reference at $40, ebb closes (70 -
	 * 60) / (70 - 40), a third of the gap; with it at $70, as dear as the
	 * baseline, there is no gap to close; with it and ebb at $50, all. */
	t.wait_p95_s = 300;
	pts[10].cost_usd = 40;
	tune_ratios(&t, 120, &r);
	assert_ptr_equal(r.at_target.ebb, &pts[2]);
	assert_ptr_equal(r.at_target.best, &pts[7]);
	assert_true(tune_gap_closed(&r, &share) == 0);
	assert_near(share, 1.0 / 3);
	pts[10].cost_usd = 70;
	tune_ratios(&t, 120, &r);
	assert_true(tune_gap_closed(&r, &share) == -1);
	pts[10].cost_usd = 50;
	pts[2].cost_usd = 50;
	tune_ratios(&t, 120, &r);
	assert_true(tune_gap_closed(&r, &share) == 0);
	assert_near(share, 1);
	/* None without the reference, or without ebb within the target. */
	t.n--;
	tune_ratios(&t, 120, &r);
	assert_null(r.clairvoyant_wait);
	assert_true(tune_gap_closed(&r, &share) == -1);
}

/* A bursty trace: bursts of 6 jobs every 20 to 40 minutes, 1 to 10
 * minutes long, over a day. */
static char *bursty_trace(void)
{
	size_t cap = 64 * 1024, len = 0;
	char *csv = malloc(cap);
	double t = 0;

	len += (size_t)snprintf(csv, cap, "submit_time_s,duration_s\n");
	for (int k = 0; k < 48 * 6; k++) {
		t += k % 6 == 0 ? 1200 + (k * 7919) % 1200 : 5;
		len += (size_t)snprintf(csv + len, cap - len, "%.0f,%d\n", t, 60 + (k * 379) % 540);
	}
	return csv;
}

struct sweep {
	char dir[4096], trace[4200], conf[4200];
	struct trace t;
	struct sim_options o;
	struct tune tune;
};

/* The whole grid, on two threads. */
static const struct tune_options whole = {.jobs = 2, .exhaustive = 1};

static void sweep_run(struct sweep *s, const struct tune_options *to, double wait_p95_s)
{
	char err[600];

	if (tune_run(&s->t, &s->o, s->conf, wait_p95_s, to, &s->tune, err, sizeof err) != 0)
		fail_msg("tune_run: %s", err);
}

static void sweep_with(struct sweep *s, const char *conf, double wait_p95_s)
{
	char err[600], *csv = bursty_trace();

	snprintf(s->dir, sizeof s->dir, "%s", harness_tmpdir());
	snprintf(s->trace, sizeof s->trace, "%s/trace.csv", s->dir);
	snprintf(s->conf, sizeof s->conf, "%s/offers.conf", s->dir);
	harness_write_file(s->trace, csv);
	harness_write_file(s->conf, conf);
	free(csv);
	memset(&s->o, 0, sizeof s->o);
	s->o.seed = 1;
	if (sim_load(s->trace, s->conf, NULL, 0, 0, &s->t, &s->o, err, sizeof err) != 0)
		fail_msg("sim_load: %s", err);
	sweep_run(s, &whole, wait_p95_s);
}

static void sweep(struct sweep *s, double wait_p95_s) { sweep_with(s, offers, wait_p95_s); }

static void sweep_free(struct sweep *s)
{
	tune_free(&s->tune);
	trace_free(&s->t);
}

static int dominates(const struct tune_point *q, const struct tune_point *p)
{
	return strcmp(q->family, p->family) == 0 && q->cost_usd <= p->cost_usd && q->wait_p95_s <= p->wait_p95_s &&
	       (q->cost_usd < p->cost_usd || q->wait_p95_s < p->wait_p95_s);
}

static void test_frontiers_hold_the_undominated_points(void **state)
{
	struct sweep s;
	const struct tune_point **front;
	const char *families[TUNE_MAX_FAMILIES];
	size_t total = 0;
	int nfamilies;

	(void)state;
	sweep(&s, 600);
	for (size_t a = 0; a < s.tune.n; a++) {
		const struct tune_point *p = &s.tune.points[a];
		int dominated = 0;
		for (size_t b = 0; b < s.tune.n; b++)
			dominated |= dominates(&s.tune.points[b], p);
		if (dominated == p->on_frontier)
			fail_msg("%s ($%.2f, %.1f s): on_frontier %d, dominated %d", p->spec, p->cost_usd,
				 p->wait_p95_s, p->on_frontier, dominated);
	}
	/* Each family's frontier from the shortest wait on: a longer wait
	 * is only on it if it is cheaper. */
	front = calloc(s.tune.n, sizeof *front);
	nfamilies = tune_families(families);
	assert_int(nfamilies, 9); /* keda+karpenter (one offer: none), clairvoyant:wait last */
	for (int f = 0; f < nfamilies; f++) {
		size_t n = tune_frontier(&s.tune, families[f], front);
		/* keda with Karpenter is swept only with several offers. */
		assert_true((n > 0) == (strcmp(families[f], "keda+karpenter") != 0));
		total += n;
		for (size_t k = 1; k < n; k++) {
			assert_true(front[k]->wait_p95_s >= front[k - 1]->wait_p95_s);
			if (front[k]->wait_p95_s > front[k - 1]->wait_p95_s)
				assert_true(front[k]->cost_usd < front[k - 1]->cost_usd);
			else
				assert_true(front[k]->cost_usd == front[k - 1]->cost_usd);
		}
	}
	for (size_t k = 0; k < s.tune.n; k++)
		total -= (size_t)s.tune.points[k].on_frontier;
	assert_int(total, 0);
	free(front);
	sweep_free(&s);
}

/* The recommendation is the cheapest ebb point within the wait, and its
 * fragment, appended to the offers config, replays to that point. */
static void test_recommendation_replays_from_its_fragment(void **state)
{
	struct sweep s;
	const struct tune_point *rec;
	struct sim_result r;
	struct policy p;
	char err[600], path[4300], *conf;
	size_t len;

	(void)state;
	sweep(&s, 600);
	assert_true(s.tune.recommended >= 0);
	rec = &s.tune.points[s.tune.recommended];
	assert_string_equal(rec->family, "ebb");
	assert_true(rec->wait_p95_s <= 600);
	for (size_t k = 0; k < s.tune.n; k++) {
		const struct tune_point *q = &s.tune.points[k];
		if (strcmp(q->family, "ebb") == 0 && q->wait_p95_s <= 600 && q->cost_usd < rec->cost_usd)
			fail_msg("%s is cheaper than the recommended %s within the wait", q->spec, rec->spec);
	}
	assert_contains(s.tune.fragment, "[lane.standard]\nwait_target = ");
	assert_contains(s.tune.fragment, "[scaler]\nidle_timeout = ");

	snprintf(path, sizeof path, "%s/tuned.conf", s.dir);
	conf = harness_read_file(s.conf, &len);
	harness_write_file(path, harness_fmt("%s%s", conf, s.tune.fragment));
	free(conf);
	if (policy_parse("ebb", path, NULL, &p, err, sizeof err) != 0)
		fail_msg("the fragment does not load: %s\n%s", err, s.tune.fragment);
	sim_run(&s.t, &p, &s.o, &r);
	policy_free(&p);
	assert_true(fabs(r.cost_usd - rec->cost_usd) < 1e-9);
	assert_true(r.wait_p95_s == rec->wait_p95_s);
	sim_result_free(&r);
	sweep_free(&s);
}

/* No point meets a wait shorter than every setting reaches. */
static void test_no_recommendation_below_every_wait(void **state)
{
	struct sweep s;

	(void)state;
	sweep(&s, -1);
	assert_int(s.tune.recommended, -1);
	assert_string_equal(s.tune.fragment, "");
	sweep_free(&s);
}

/* Settings whose replay runs part of the trace are no points: here no
 * instance is within ebb's max_spend_per_hour, so every ebb setting
 * leaves the jobs queued (the baselines know no such limit). */
static void test_partial_replays_are_left_out(void **state)
{
	struct sweep s;

	(void)state;
	sweep_with(&s, "[scaler]\nmax_spend_per_hour = 20\n[offer.a]\ngpus = 1\nprice_ondemand = 30\nboot = 120s\n",
		   600);
	assert_true(s.tune.partial >= 200);
	assert_contains(s.tune.partial_spec, "ebb:");
	for (size_t k = 0; k < s.tune.n; k++)
		assert_string_not_equal(s.tune.points[k].family, "ebb");
	assert_true(s.tune.n >= 10);
	assert_int(s.tune.recommended, -1);
	sweep_free(&s);
}

static void assert_same_points(const struct tune *a, const struct tune *b)
{
	assert_int(a->n, b->n);
	assert_int(a->partial, b->partial);
	assert_int(a->recommended, b->recommended);
	assert_string_equal(a->fragment, b->fragment);
	for (size_t k = 0; k < a->n; k++) {
		assert_string_equal(a->points[k].spec, b->points[k].spec);
		assert_true(a->points[k].cost_usd == b->points[k].cost_usd);
		assert_true(a->points[k].wait_p95_s == b->points[k].wait_p95_s);
		assert_int(a->points[k].on_frontier, b->points[k].on_frontier);
	}
}

/* The points, in the grid's order, and the answers are the same on one
 * thread as on two or five, for the whole grid and for the search. */
static void test_threads_give_the_same_points(void **state)
{
	struct sweep s;
	struct tune one;

	(void)state;
	sweep(&s, 600);
	one = s.tune;
	assert_int(one.n, one.grid); /* the whole grid: every setting a point */
	sweep_run(&s, &(struct tune_options){.jobs = 1, .exhaustive = 1}, 600);
	assert_same_points(&one, &s.tune);
	tune_free(&s.tune);
	sweep_run(&s, &(struct tune_options){.jobs = 5, .exhaustive = 1}, 600);
	assert_same_points(&one, &s.tune);
	tune_free(&s.tune);
	tune_free(&one);
	sweep_run(&s, &(struct tune_options){.jobs = 1}, 600);
	one = s.tune;
	sweep_run(&s, &(struct tune_options){.jobs = 5}, 600);
	assert_same_points(&one, &s.tune);
	tune_free(&one);
	sweep_free(&s);
}

struct seen {
	size_t calls, done, queued, grid;
	double best_cost;
};

static void note(const struct tune_progress *p, void *arg)
{
	struct seen *s = arg;

	assert_true(p->done >= s->done);
	assert_true(p->done <= p->queued && p->queued <= p->grid);
	assert_true(p->elapsed_s >= 0 && p->left_s >= 0);
	s->calls++;
	s->done = p->done;
	s->queued = p->queued;
	s->grid = p->grid;
	s->best_cost = p->best ? p->best->cost_usd : -1;
}

/* The search replays part of the grid, tells of each replay, and its best
 * ebb point within the wait so far ends as the recommendation. */
static void test_search_reports_its_progress(void **state)
{
	struct sweep s;
	struct seen seen = {0};

	(void)state;
	sweep(&s, 600);
	tune_free(&s.tune);
	sweep_run(&s, &(struct tune_options){.jobs = 2, .progress = note, .arg = &seen}, 600);
	assert_true(seen.calls > 0 && seen.calls <= seen.done); /* a call as replays end */
	assert_int(seen.done, seen.queued);
	assert_int(seen.done, s.tune.n + s.tune.partial);
	assert_int(seen.grid, s.tune.grid);
	assert_true(s.tune.n < s.tune.grid * 2 / 3);
	assert_true(s.tune.recommended >= 0);
	assert_true(seen.best_cost == s.tune.points[s.tune.recommended].cost_usd);
	sweep_free(&s);
}

/* ebb's cost over the best baseline's at a wait; 0 without both. */
static double ratio(const struct tune_at *a)
{
	return a->ebb && a->best ? a->ebb->cost_usd / a->best->cost_usd : 0;
}

static void assert_ratio_near(const char *what, const char *at, const struct tune_at *grid, const struct tune_at *search)
{
	double w = ratio(grid), s = ratio(search);

	if (grid->wait_s != search->wait_s || fabs(s - w) > 0.01 * w)
		fail_msg("%s, at %s (%.0f s): ebb/best %.4f by the search, %.4f by the grid", what, at, search->wait_s, s, w);
}

/* The shared traces (../shared/traces beside the source tree, or
 * EBB_TRACES), or NULL where there are none. */
static const char *traces_dir(void)
{
	static char dir[4200];
	const char *env = getenv("EBB_TRACES"), *src = getenv("EBB_SRC");

	snprintf(dir, sizeof dir, "%s", env ? env : harness_fmt("%s/../shared/traces", src ? src : "."));
	return access(harness_fmt("%s/README.md", dir), R_OK) == 0 ? dir : NULL;
}

/* On 12 hours of genai, 30 s of azure and a day of openb, with one
 * offer and with the mix: the search's recommendation is the grid's, or
 * at most 1% dearer within the same wait, and ebb's ratio to the best
 * baseline at each wait of the comparisons is within 1% of the grid's,
 * for at most nine tenths of the replays (the baselines are replayed
 * whole, about half of the grid, and the descent from four leads a
 * wait replays about half of ebb's: 84% of the grid on openb's day with
 * the mix, its most). Not every window holds: on the first 6
 * hours of this genai one, with one offer, the search's ebb within
 * keda-default's p95 is 12% dearer than the grid's (docs/SIMULATION.md). */
static void test_search_matches_the_grid_on_shared_traces(void **state)
{
	static const struct sample {
		const char *trace, *filter, *conf;
		double from_s, to_s;
	} samples[] = {
		{"alibaba_genai_sd_requests_days00-11.csv", NULL, "a10g", 345600, 388800},
		{"alibaba_genai_sd_requests_days00-11.csv", NULL, "mix", 345600, 388800},
		{"azure_llm_requests_min00-29.csv", NULL, "a10g", 600, 630},
		{"azure_llm_requests_min00-29.csv", NULL, "mix", 600, 630},
		{"alibaba_openb_gpu_pods_days00-14.csv", "1", "p4d", 172800, 259200},
		{"alibaba_openb_gpu_pods_days00-14.csv", "1", "mix8", 172800, 259200},
	};
	const char *dir = traces_dir(), *src = getenv("EBB_SRC") ? getenv("EBB_SRC") : ".";

	(void)state;
#ifdef EBB_SANITIZER
	/* Twelve thousand replays: a sanitizer's threefold slowness takes
	 * them past the runner's limit, and the plain pass runs them. */
	printf("under a sanitizer: skipped (the plain pass replays the shared traces)\n");
	skip();
#endif
	if (!dir) {
		printf("no shared traces (../shared/traces beside the source, or EBB_TRACES): skipped\n");
		skip();
	}
	for (size_t k = 0; k < sizeof samples / sizeof *samples; k++) {
		const struct sample *sm = &samples[k];
		struct trace_filter ran = {"ran", sm->filter};
		char err[600], conf[4300], what[200];
		struct tune whole_grid, search;
		struct tune_ratios rw, rs;
		struct sim_options o = {.seed = 1};
		struct trace t;
		double boot_s;

		snprintf(conf, sizeof conf, "%s/sim/%s.conf", src, sm->conf);
		snprintf(what, sizeof what, "%s --offers sim/%s.conf --from %.0f --to %.0f", sm->trace, sm->conf,
			 sm->from_s, sm->to_s);
		if (sim_load(harness_fmt("%s/%s", dir, sm->trace), conf, &ran, sm->filter ? 1 : 0, 0, &t, &o, err,
			     sizeof err) != 0)
			fail_msg("%s: %s", what, err);
		trace_window(&t, (int64_t)(sm->from_s * 1000), (int64_t)(sm->to_s * 1000));
		if (tune_run(&t, &o, conf, 240, &whole, &whole_grid, err, sizeof err) != 0 ||
		    tune_run(&t, &o, conf, 240, &(struct tune_options){.jobs = 2}, &search, err, sizeof err) != 0)
			fail_msg("%s: %s", what, err);
		printf("%s: %zu jobs, %zu replays of %zu\n", what, t.n, search.n + search.partial, search.grid);
		assert_int(whole_grid.grid, search.grid);
		assert_true((search.n + search.partial) * 10 <= search.grid * 9);
		assert_int(whole_grid.recommended >= 0, search.recommended >= 0);
		if (search.recommended >= 0) {
			const struct tune_point *w = &whole_grid.points[whole_grid.recommended];
			const struct tune_point *s = &search.points[search.recommended];
			if (s->cost_usd > w->cost_usd * 1.01 || s->wait_p95_s > 240)
				fail_msg("%s: the search recommends %s ($%.2f, %.0f s), the grid %s ($%.2f, %.0f s)", what,
					 s->spec, s->cost_usd, s->wait_p95_s, w->spec, w->cost_usd, w->wait_p95_s);
		}
		boot_s = (double)o.offers[0].boot_ms / 1000.0;
		tune_ratios(&whole_grid, boot_s, &rw);
		tune_ratios(&search, boot_s, &rs);
		assert_ratio_near(what, "keda-default's p95", &rw.at_keda, &rs.at_keda);
		assert_ratio_near(what, "two boots", &rw.at_two_boots, &rs.at_two_boots);
		assert_ratio_near(what, "the target", &rw.at_target, &rs.at_target);
		assert_ratio_near(what, "the clairvoyant's p95", &rw.at_clairvoyant, &rs.at_clairvoyant);
		tune_free(&whole_grid);
		tune_free(&search);
		trace_free(&t);
	}
}

/* Traces made here, each a different load: bursts on a quiet day
 * (bursty_trace), a two-day cycle of steady arrivals, and jobs of 1 to 4
 * GPUs on a 4-GPU offer, hours long. Jobs in the order they come. */
static char *cycle_trace(void)
{
	size_t cap = 128 * 1024, len = 0;
	char *csv = malloc(cap);
	unsigned x = 12345;
	double t = 0;

	len += (size_t)snprintf(csv, cap, "submit_time_s,duration_s\n");
	for (int k = 0; k < 1500; k++) {
		/* Gaps of 20 s to 10 min, shorter in the day's busy half. */
		x = x * 1103515245u + 12345u;
		t += (sin(t / 86400.0 * 2 * M_PI) > 0 ? 20 : 120) + (double)((x >> 16) % 32768) / 32768.0 * 480;
		len += (size_t)snprintf(csv + len, cap - len, "%.0f,%u\n", t, 30 + (x >> 8) % 1770);
	}
	return csv;
}

static char *gpus_trace(void)
{
	size_t cap = 64 * 1024, len = 0;
	char *csv = malloc(cap);
	unsigned x = 777;
	double t = 0;

	len += (size_t)snprintf(csv, cap, "submit_time_s,duration_s,gpus\n");
	for (int k = 0; k < 600; k++) {
		x = x * 1103515245u + 12345u;
		t += 60 + (x >> 16) % 1200;
		len += (size_t)snprintf(csv + len, cap - len, "%.0f,%u,%u\n", t, 300 + (x >> 4) % 14400, 1 + (x >> 12) % 4);
	}
	return csv;
}

static const char gpus_offers[] = "[scaler]\nmax_instances = 16\nmax_gpus = 64\nmax_spend_per_hour = 0\n"
				  "[offer.q]\ngpus = 4\nprice_ondemand = 4.0\nboot = 120s\n"
				  "billing = per-second\nbilling_minimum = 60s\n";

/* The cheapest point of a family within the wait; NULL if none. */
static const struct tune_point *cheapest(const struct tune *t, const char *family, double wait_s)
{
	const struct tune_point *best = NULL;

	for (size_t k = 0; k < t->n; k++) {
		const struct tune_point *p = &t->points[k];
		if (strcmp(p->family, family) == 0 && p->wait_p95_s <= wait_s && (!best || p->cost_usd < best->cost_usd))
			best = p;
	}
	return best;
}

/* The screened search (a prefix first, then the leads there whole: the
 * search of a long trace, here forced on short ones) against the whole
 * grid, on three traces made here and two targets: ebb's recommendation
 * and each family's cheapest point within the target (the "tuned"
 * baselines of scripts/simulate.sh) are the grid's, or at most 1%
 * dearer within the target, for at most a quarter of the grid's
 * replays. */
static void test_screened_search_matches_the_grid_on_made_traces(void **state)
{
	static const struct made {
		const char *name;
		char *(*csv)(void);
		const char *conf;
	} made[] = {{"bursts", bursty_trace, offers}, {"cycle", cycle_trace, offers}, {"gpus", gpus_trace, gpus_offers}};
	static const double targets[] = {60, 600};
	const char *families[TUNE_MAX_FAMILIES];
	int nfamilies = tune_families(families);
	size_t nmade = sizeof made / sizeof *made, ntargets = sizeof targets / sizeof *targets;

	(void)state;
#ifdef EBB_SANITIZER
	/* Four thousand replays: a sanitizer's slowness takes them past the
	 * runner's limit; one trace and one target check the screening's
	 * memory, the plain pass the rest. */
	nmade = ntargets = 1;
#endif
	for (size_t m = 0; m < nmade; m++) {
		struct sweep s;
		char err[600], *csv = made[m].csv();

		snprintf(s.dir, sizeof s.dir, "%s", harness_tmpdir());
		snprintf(s.trace, sizeof s.trace, "%s/trace.csv", s.dir);
		snprintf(s.conf, sizeof s.conf, "%s/offers.conf", s.dir);
		harness_write_file(s.trace, csv);
		harness_write_file(s.conf, made[m].conf);
		free(csv);
		memset(&s.o, 0, sizeof s.o);
		s.o.seed = 1;
		if (sim_load(s.trace, s.conf, NULL, 0, 0, &s.t, &s.o, err, sizeof err) != 0)
			fail_msg("%s: sim_load: %s", made[m].name, err);
		for (size_t w = 0; w < ntargets; w++) {
			struct tune grid;
			sweep_run(&s, &whole, targets[w]);
			grid = s.tune;
			sweep_run(&s, &(struct tune_options){.jobs = 2, .screen_jobs = 1}, targets[w]);
			printf("%s, --wait-p95 %.0f: %zu jobs, %zu replays whole of %zu\n", made[m].name, targets[w], s.t.n,
			       s.tune.n + s.tune.partial, s.tune.grid);
			assert_true((s.tune.n + s.tune.partial) * 4 <= s.tune.grid);
			for (int f = 0; f < nfamilies; f++) {
				const struct tune_point *g = cheapest(&grid, families[f], targets[w]);
				const struct tune_point *p = cheapest(&s.tune, families[f], targets[w]);
				if (!g != !p || (p && p->cost_usd > g->cost_usd * 1.01))
					fail_msg("%s, --wait-p95 %.0f, %s: the screened search's cheapest is %s ($%.2f), the "
						 "grid's %s ($%.2f)", made[m].name, targets[w], families[f],
						 p ? p->spec : "none", p ? p->cost_usd : 0, g ? g->spec : "none",
						 g ? g->cost_usd : 0);
			}
			assert_int(grid.recommended >= 0, s.tune.recommended >= 0);
			tune_free(&grid);
			tune_free(&s.tune);
		}
		trace_free(&s.t);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ratios_by_hand),
		cmocka_unit_test(test_frontiers_hold_the_undominated_points),
		cmocka_unit_test(test_recommendation_replays_from_its_fragment),
		cmocka_unit_test(test_no_recommendation_below_every_wait),
		cmocka_unit_test(test_partial_replays_are_left_out),
		cmocka_unit_test(test_threads_give_the_same_points),
		cmocka_unit_test(test_search_reports_its_progress),
		cmocka_unit_test(test_search_matches_the_grid_on_shared_traces),
		cmocka_unit_test(test_screened_search_matches_the_grid_on_made_traces),
	};
	return cmocka_run_group_tests(tests, NULL, harness_cleanup);
}
