/* plan(), the scaling policy (src/policy/plan.c), on hand-built views: the exact
 * actions it returns (kind, offer, count, instance), a reason for each, and
 * the invariants that must hold in every view (the hard limits, no busy
 * instance terminated, the same answer twice). Every call goes through
 * run(), which checks those invariants on top of what the test asserts. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "policy/plan.h"

#define S_MS 1000LL
#define MIN_MS (60 * S_MS)
#define HOUR_MS (60 * MIN_MS)
#define DAY_MS (24 * HOUR_MS)
#define NOW (1700000000LL * 1000) /* 2023-11-14 22:13:20 UTC */
#define MON_1970 (4 * DAY_MS)     /* Monday 1970-01-05 00:00 UTC */

#define MAX_OFFERS 8
#define MAX_CLASSES 8
#define MAX_FLEET 160

/* One view under construction, and plan()'s answer to it. */
struct fx {
	struct plan_settings set;
	struct offer offers[MAX_OFFERS];
	int noffers;
	struct plan_class classes[MAX_CLASSES];
	int nclasses;
	struct plan_instance fleet[MAX_FLEET];
	int nfleet;
	int64_t now;
	int64_t idle_timeout_ms[MAX_OFFERS]; /* for each offer */
	int64_t idle_surplus_ms[MAX_OFFERS]; /* the same, when surplus_per_offer */
	int surplus_per_offer;
	int packs; /* the view's: jobs side by side on an instance's GPUs */
	double work_per_launch_s; /* the view's */
	int64_t leave_grace_ms;   /* the view's */
	struct plan_result r;
};

static struct fx F;

/* Generous limits, so that a test meets only the ones it sets. */
static struct fx *fx_reset(void)
{
	memset(&F, 0, sizeof F);
	F.now = NOW;
	F.set.max_instances = 100;
	F.set.max_gpus = 1000;
	F.set.max_spend_per_hour = 0;
	for (int k = 0; k < MAX_OFFERS; k++)
		F.idle_timeout_ms[k] = 10 * MIN_MS;
	F.set.decay_t1_ms = 10 * MIN_MS;
	F.set.decay_t2_ms = 30 * MIN_MS;
	F.set.boot_timeout_ms = 10 * MIN_MS;
	F.set.max_share_per_offer = 1;
	F.set.use_spot = 0;
	F.set.checkpoint_every_ms = 10 * MIN_MS;
	return &F;
}

/* An on-demand offer (no spot market) of speed 1; its index. */
static int offer(struct fx *f, const char *name, int gpus, int vram_gb, double price, int64_t boot_ms)
{
	struct offer *o = &f->offers[f->noffers];

	memset(o, 0, sizeof *o);
	snprintf(o->name, sizeof o->name, "%s", name);
	o->gpus = gpus;
	o->vram_gb = vram_gb;
	o->price[MARKET_ONDEMAND] = price;
	o->price[MARKET_SPOT] = -1;
	o->boot_ms = boot_ms;
	o->speed = 1;
	return f->noffers++;
}

static struct plan_class *demand(struct fx *f, const char *lane, int rank, int gpus, int64_t jobs, double work_s,
				 int64_t oldest_ms, int64_t target_ms)
{
	struct plan_class *c = &f->classes[f->nclasses++];

	memset(c, 0, sizeof *c);
	c->lane = lane;
	c->lane_rank = rank;
	c->gpus = gpus;
	c->jobs = jobs;
	c->items = jobs;
	c->work_s = work_s;
	c->oldest_ms = oldest_ms;
	c->wait_target_ms = target_ms;
	return c;
}

static struct plan_instance *inst(struct fx *f, int64_t id, int off, enum instance_state state)
{
	struct plan_instance *i = &f->fleet[f->nfleet++];

	memset(i, 0, sizeof *i);
	i->id = id;
	i->offer = off;
	i->market = MARKET_ONDEMAND;
	i->state = state;
	i->launched_ms = f->now - HOUR_MS;
	i->idle_since_ms = state == INST_IDLE ? f->now - S_MS : 0;
	return i;
}

static struct plan_instance *idle(struct fx *f, int64_t id, int off, int64_t idle_since_ms)
{
	struct plan_instance *i = inst(f, id, off, INST_IDLE);
	i->idle_since_ms = idle_since_ms;
	return i;
}

static struct plan_instance *busy(struct fx *f, int64_t id, int off, double remaining_s)
{
	struct plan_instance *i = inst(f, id, off, INST_BUSY);
	i->running = 1;
	i->busy_until_ms = f->now + (int64_t)(remaining_s * 1000);
	return i;
}

static struct plan_instance *booting(struct fx *f, int64_t id, int off, int64_t launched_ms)
{
	struct plan_instance *i = inst(f, id, off, INST_BOOTING);
	i->launched_ms = launched_ms;
	return i;
}

static const char *kind_name(enum action_kind k)
{
	return k == ACTION_LAUNCH ? "launch" : k == ACTION_DRAIN ? "drain" : k == ACTION_TERMINATE ? "terminate" : "?";
}

static void dump(const struct fx *f, const struct plan_result *r)
{
	print_message("plan at %lld: %d action(s), next_ms %lld (now + %lld)\n", (long long)f->now, r->n,
		      (long long)r->next_ms, (long long)(r->next_ms ? r->next_ms - f->now : 0));
	for (int k = 0; k < r->n; k++) {
		const struct action *a = &r->actions[k];
		print_message("  %s offer=%d market=%d count=%d instance=%lld: %s\n", kind_name(a->kind), a->offer,
			      (int)a->market, a->count, (long long)a->instance, a->reason);
	}
}

/* Fails the test after showing the plan. */
#define EXPECT(f, cond)                                                                     \
	do {                                                                                \
		if (!(cond)) {                                                              \
			dump((f), &(f)->r);                                                 \
			fail_msg("%s:%d: expected %s", __FILE__, __LINE__, #cond);          \
		}                                                                           \
	} while (0)
#define EXPECT_INT(f, got, want)                                                                   \
	do {                                                                                       \
		long long got_ = (long long)(got), want_ = (long long)(want);                      \
		if (got_ != want_) {                                                               \
			dump((f), &(f)->r);                                                        \
			fail_msg("%s:%d: %s is %lld, expected %lld", __FILE__, __LINE__, #got, got_, want_); \
		}                                                                                  \
	} while (0)

static double price_of(const struct offer *o, enum market m) { return o->price[m] > 0 ? o->price[m] : 0; }

static const struct plan_instance *find(const struct plan_view *v, int64_t id, int *index)
{
	for (int k = 0; k < v->nfleet; k++) {
		if (v->fleet[k].id == id) {
			*index = k;
			return &v->fleet[k];
		}
	}
	return NULL;
}

/* What holds for every view: each action well formed with a reason; no
 * busy or running instance terminated, only busy ones drained, no
 * instance decided on twice; and when anything is launched, the fleet
 * after the actions is within every hard limit. */
static void check_invariants(const struct plan_view *v, const struct plan_result *r, const char *what)
{
	const struct plan_settings *s = v->settings;
	int64_t count = 0, gpus = 0, launched = 0;
	int per_offer[MAX_OFFERS] = {0}, launched_on[MAX_OFFERS] = {0};
	char seen[MAX_FLEET] = {0};
	double spend = 0;
	char msg[600] = "";

#define BAD(...) do { snprintf(msg, sizeof msg, __VA_ARGS__); goto bad; } while (0)
	if (r->n < 0 || r->n > PLAN_MAX_ACTIONS)
		BAD("%d actions", r->n);
	for (int k = 0; k < v->nfleet; k++) {
		const struct plan_instance *i = &v->fleet[k];
		if (i->state == INST_TERMINATED)
			continue;
		count++;
		gpus += v->offers[i->offer].gpus;
		spend += price_of(&v->offers[i->offer], i->market);
		per_offer[i->offer]++;
	}
	for (int k = 0; k < r->n; k++) {
		const struct action *a = &r->actions[k];
		const struct plan_instance *i;
		int idx = -1;

		if (!memchr(a->reason, '\0', sizeof a->reason) || a->reason[0] == '\0')
			BAD("action %d (%s) has no reason", k, kind_name(a->kind));
		switch (a->kind) {
		case ACTION_LAUNCH: {
			const struct offer *o;
			int lane_known;
			if (a->offer < 0 || a->offer >= v->noffers || a->count < 1 ||
			    (a->market != MARKET_ONDEMAND && a->market != MARKET_SPOT))
				BAD("action %d: launch of offer %d, market %d, count %d", k, a->offer, (int)a->market,
				    a->count);
			o = &v->offers[a->offer];
			if (o->price[a->market] < 0)
				BAD("action %d: launch of %s on a market it is not sold on", k, o->name);
			/* For the work of a lane of the view, or the warm pool's. */
			lane_known = a->lane && !a->lane[0];
			for (int c = 0; a->lane && c < v->nclasses; c++)
				lane_known |= strcmp(v->classes[c].lane, a->lane) == 0;
			if (!lane_known)
				BAD("action %d: launch for lane '%s', which no class has", k, a->lane ? a->lane : "(null)");
			if (s->max_price > 0 && o->price[a->market] > s->max_price)
				BAD("action %d: launch of %s at $%g/h, over max_price $%g", k, o->name,
				    o->price[a->market], s->max_price);
			if (a->market == MARKET_SPOT && !s->use_spot)
				BAD("action %d: spot launch with spot off", k);
			count += a->count;
			launched += a->count;
			gpus += (int64_t)a->count * o->gpus;
			spend += a->count * price_of(o, a->market);
			per_offer[a->offer] += a->count;
			launched_on[a->offer] += a->count;
			break;
		}
		case ACTION_DRAIN:
		case ACTION_TERMINATE:
			if (!(i = find(v, a->instance, &idx)))
				BAD("action %d: %s of instance %lld, which is not in the fleet", k, kind_name(a->kind),
				    (long long)a->instance);
			if (i->state == INST_TERMINATED)
				BAD("action %d: %s of instance %lld, already terminated", k, kind_name(a->kind),
				    (long long)a->instance);
			if (seen[idx]++)
				BAD("action %d: instance %lld decided on twice", k, (long long)a->instance);
			if (a->kind == ACTION_DRAIN) {
				if (i->state != INST_BUSY)
					BAD("action %d: drain of instance %lld in state %s", k, (long long)i->id,
					    instance_state_name(i->state));
				break;
			}
			if (i->state == INST_BUSY || i->running)
				BAD("action %d: TERMINATE of instance %lld, which is %s%s", k, (long long)i->id,
				    instance_state_name(i->state), i->running ? " and runs a job" : "");
			count--;
			gpus -= v->offers[i->offer].gpus;
			spend -= price_of(&v->offers[i->offer], i->market);
			per_offer[i->offer]--;
			break;
		default:
			BAD("action %d: kind %d", k, (int)a->kind);
		}
	}
	if (launched > 0) {
		if (count > s->max_instances)
			BAD("launched %lld: %lld instances after the actions, max_instances %lld", (long long)launched,
			    (long long)count, (long long)s->max_instances);
		if (gpus > s->max_gpus)
			BAD("launched %lld: %lld GPUs after the actions, max_gpus %lld", (long long)launched,
			    (long long)gpus, (long long)s->max_gpus);
		if (s->max_spend_per_hour > 0 && spend > s->max_spend_per_hour + 1e-6)
			BAD("launched %lld: $%.4f/h after the actions, max_spend_per_hour %.4f", (long long)launched,
			    spend, s->max_spend_per_hour);
		for (int o = 0; o < v->noffers; o++) {
			if (launched_on[o] && v->offers[o].max_instances && per_offer[o] > v->offers[o].max_instances)
				BAD("launched %lld: %d instances of offer %s, its max_instances %d",
				    (long long)launched, per_offer[o], v->offers[o].name, v->offers[o].max_instances);
		}
	}
	if (r->next_ms != 0 && r->next_ms <= v->now_ms)
		BAD("next_ms %lld is not after now %lld", (long long)r->next_ms, (long long)v->now_ms);
	return;
bad:
	print_message("%s\n", what);
	{
		struct fx shown = {.now = v->now_ms};
		dump(&shown, r);
	}
	fail_msg("invariant broken: %s", msg);
#undef BAD
}

static struct plan_view view_of(struct fx *f)
{
	return (struct plan_view){
		.now_ms = f->now,
		.settings = &f->set,
		.idle_timeout_ms = f->idle_timeout_ms,
		.idle_surplus_ms = f->surplus_per_offer ? f->idle_surplus_ms : NULL,
		.classes = f->classes,
		.nclasses = f->nclasses,
		.fleet = f->fleet,
		.nfleet = f->nfleet,
		.offers = f->offers,
		.noffers = f->noffers,
		.packs = f->packs,
		.work_per_launch_s = f->work_per_launch_s,
		.leave_grace_ms = f->leave_grace_ms,
	};
}

/* plan() on the fixture's view, twice: the invariants hold and both
 * answers are the same, byte for byte. */
static struct plan_result *run(struct fx *f)
{
	static struct plan_result again;
	struct plan_view v = view_of(f);

	plan(&v, &f->r);
	check_invariants(&v, &f->r, "");
	plan(&v, &again);
	if (again.n != f->r.n || again.next_ms != f->r.next_ms ||
	    memcmp(again.actions, f->r.actions, sizeof again.actions[0] * (size_t)again.n) != 0) {
		dump(f, &f->r);
		dump(f, &again);
		fail_msg("plan() gave two different answers to the same view");
	}
	return &f->r;
}

static int count_kind(const struct plan_result *r, enum action_kind kind)
{
	int n = 0;
	for (int k = 0; k < r->n; k++)
		n += r->actions[k].kind == kind;
	return n;
}

/* Instances launched in all, or of one offer (-1: any). */
static int64_t launched(const struct plan_result *r, int off)
{
	int64_t n = 0;
	for (int k = 0; k < r->n; k++) {
		if (r->actions[k].kind == ACTION_LAUNCH && (off < 0 || r->actions[k].offer == off))
			n += r->actions[k].count;
	}
	return n;
}

static const struct action *action_on(const struct plan_result *r, enum action_kind kind, int64_t id)
{
	for (int k = 0; k < r->n; k++) {
		if (r->actions[k].kind == kind && r->actions[k].instance == id)
			return &r->actions[k];
	}
	return NULL;
}

/* Exactly one launch action, of count instances of offer off. */
#define EXPECT_ONE_LAUNCH(f, off, cnt)                                         \
	do {                                                                   \
		EXPECT_INT((f), (f)->r.n, 1);                                  \
		EXPECT_INT((f), (f)->r.actions[0].kind, ACTION_LAUNCH);        \
		EXPECT_INT((f), (f)->r.actions[0].offer, (off));               \
		EXPECT_INT((f), (f)->r.actions[0].count, (cnt));               \
		EXPECT_INT((f), (f)->r.actions[0].market, MARKET_ONDEMAND);    \
	} while (0)

/* ---- scale up ---- */

static void test_empty_queue_and_fleet_do_nothing(void **state)
{
	struct fx *f = fx_reset();

	(void)state;
	offer(f, "a", 1, 24, 1.0, 20 * S_MS);
	run(f);
	EXPECT_INT(f, f->r.n, 0);
	EXPECT_INT(f, f->r.next_ms, 0);

	/* No offers at all: still nothing, and no crash. */
	fx_reset();
	run(f);
	EXPECT_INT(f, f->r.n, 0);
}

static void test_backlog_launches_ceil_of_shortfall(void **state)
{
	struct fx *f = fx_reset();

	(void)state;
	/* 500 s of work, 60 s target, 20 s boot: a launch is up after its boot
	 * and then has the target, 60 s, to work (the horizon is 80 s), so
	 * ceil(500 / 60) = 9. */
	offer(f, "a", 1, 24, 1.0, 20 * S_MS);
	demand(f, "standard", 1, 1, 20, 500, NOW - S_MS, 60 * S_MS);
	run(f);
	EXPECT_ONE_LAUNCH(f, 0, 9);
	assert_contains(f->r.actions[0].reason, "lane standard");
	assert_string_equal(f->r.actions[0].lane, "standard");

	/* Exactly divisible: 480 / 60 = 8. */
	f->classes[0].work_s = 480;
	run(f);
	EXPECT_ONE_LAUNCH(f, 0, 8);

	/* An idle instance gives the whole horizon, 80 s: 150 - 80 = 70 left,
	 * ceil(70 / 60) = 2. */
	f->classes[0].work_s = 150;
	f->classes[0].jobs = 10;
	idle(f, 1, 0, NOW - S_MS);
	run(f);
	EXPECT_ONE_LAUNCH(f, 0, 2);
}

/* The work expected to arrive within the horizon (the class's arrival
 * rate times boot + target) holds instances and launches them, with
 * nothing queued yet. */
static void test_expected_arrivals(void **state)
{
	struct fx *f = fx_reset();
	struct plan_class *c;

	(void)state;
	/* 3 jobs of 50 s every 5 min (0.01 jobs/s, 0.5 work-s/s), a 100 s
	 * boot and a 300 s target: 4 jobs and 200 s of work expected within
	 * the 400 s horizon. One idle instance gives 400 s: it is held,
	 * though past its idle timeout; the other two go. */
	offer(f, "a", 1, 24, 1.0, 100 * S_MS);
	f->set.arrival_window_ms = 5 * MIN_MS;
	c = demand(f, "standard", 1, 1, 0, 0, NOW, 5 * MIN_MS);
	c->arrival_jobs_per_s = 0.01;
	c->arrival_work_per_s = 0.5;
	idle(f, 1, 0, NOW - HOUR_MS);
	idle(f, 2, 0, NOW - HOUR_MS);
	idle(f, 3, 0, NOW - HOUR_MS);
	run(f);
	EXPECT_INT(f, count_kind(&f->r, ACTION_LAUNCH), 0);
	EXPECT_INT(f, count_kind(&f->r, ACTION_TERMINATE), 2);
	EXPECT_INT(f, f->r.actions[0].instance, 2);
	EXPECT_INT(f, f->r.actions[1].instance, 3);
	/* The rate decays as exp(-t / 5 min) while nothing arrives; 4 jobs
	 * count until fewer than 3.75 are expected: 300 s * ln(4 / 3.75)
	 * = 19.36 s from now. */
	EXPECT_INT(f, f->r.next_ms, NOW + 1 + (int64_t)(300000.0 * log(4 / 3.75)));

	/* 200 s jobs: 800 s of work expected, 400 s covered by the idle one,
	 * ceil(400 / 300) = 2 launched before anything is queued. */
	f->nfleet = 1;
	c->arrival_work_per_s = 2;
	run(f);
	EXPECT_ONE_LAUNCH(f, 0, 2);

	/* A stray job: 0.7 expected, under three quarters of one: nothing is
	 * held, and the idle one goes. */
	c->arrival_jobs_per_s = 0.7 / 400;
	c->arrival_work_per_s = 0.01;
	run(f);
	EXPECT_INT(f, count_kind(&f->r, ACTION_LAUNCH), 0);
	EXPECT_INT(f, count_kind(&f->r, ACTION_TERMINATE), 1);
}

static void test_launch_capped_at_the_jobs(void **state)
{
	struct fx *f = fx_reset();

	(void)state;
	/* 9 would be needed for the work, but there are only 5 jobs. */
	offer(f, "a", 1, 24, 1.0, 20 * S_MS);
	demand(f, "standard", 1, 1, 5, 500, NOW - S_MS, 60 * S_MS);
	run(f);
	EXPECT_ONE_LAUNCH(f, 0, 5);

	/* Two of them have an idle instance each: 3 more. */
	idle(f, 1, 0, NOW - S_MS);
	idle(f, 2, 0, NOW - S_MS);
	run(f);
	EXPECT_ONE_LAUNCH(f, 0, 3);
}

static void test_enough_capacity_launches_nothing(void **state)
{
	struct fx *f = fx_reset();

	(void)state;
	offer(f, "a", 1, 24, 1.0, 0);
	demand(f, "standard", 1, 1, 3, 100, NOW - S_MS, 60 * S_MS);
	idle(f, 1, 0, NOW - S_MS);
	idle(f, 2, 0, NOW - S_MS);
	run(f);
	EXPECT_INT(f, f->r.n, 0);

	/* One more second of work than the two can do: one more. */
	f->classes[0].work_s = 121;
	run(f);
	EXPECT_ONE_LAUNCH(f, 0, 1);
}

static void test_booting_capacity_counts(void **state)
{
	struct fx *f = fx_reset();

	(void)state;
	/* Booting for 5 of its 20 s: 45 s of the 60 s target are left. */
	offer(f, "a", 1, 24, 1.0, 20 * S_MS);
	demand(f, "standard", 1, 1, 1, 30, NOW - S_MS, 60 * S_MS);
	booting(f, 1, 0, NOW - 5 * S_MS);
	run(f);
	EXPECT_INT(f, f->r.n, 0);
	/* It still boots: come back at its boot timeout. */
	EXPECT_INT(f, f->r.next_ms, NOW - 5 * S_MS + 10 * MIN_MS);

	/* More work than it can do, but the only job has its instance. */
	f->classes[0].work_s = 500;
	run(f);
	EXPECT_INT(f, f->r.n, 0);

	/* A requested instance counts the same. */
	f->fleet[0].state = INST_REQUESTED;
	run(f);
	EXPECT_INT(f, f->r.n, 0);
}

static void test_no_second_launch_while_booting(void **state)
{
	struct fx *f = fx_reset();
	int64_t n;

	(void)state;
	offer(f, "a", 1, 24, 1.0, 20 * S_MS);
	demand(f, "standard", 1, 1, 3, 300, NOW - S_MS, 60 * S_MS);
	run(f);
	EXPECT_ONE_LAUNCH(f, 0, 3);

	/* The scaler carried it out: three instances boot. A second later the
	 * same demand launches nothing more. */
	n = launched(&f->r, 0);
	for (int64_t k = 0; k < n; k++)
		booting(f, 100 + k, 0, NOW);
	f->now = NOW + S_MS;
	run(f);
	EXPECT_INT(f, f->r.n, 0);

	/* A fourth job arrives: one more, for it alone. */
	f->classes[0].jobs = 4;
	f->classes[0].work_s = 400;
	run(f);
	EXPECT_ONE_LAUNCH(f, 0, 1);
}

static void test_busy_counts_for_target_minus_remaining(void **state)
{
	static const struct {
		double remaining_s;
		int launch;
	} cases[] = {{5, 0}, {9.9, 0}, {10.1, 1}, {20, 1}, {50, 1}};
	struct fx *f = fx_reset();

	(void)state;
	/* Two jobs, 50 s of work, 60 s target. An idle instance covers it. */
	offer(f, "a", 1, 24, 1.0, 0);
	demand(f, "standard", 1, 1, 2, 50, NOW - S_MS, 60 * S_MS);
	idle(f, 1, 0, NOW - S_MS);
	run(f);
	EXPECT_INT(f, f->r.n, 0);

	/* A busy one covers 60 s minus what is left of its job. */
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		f->nfleet = 0;
		busy(f, 1, 0, cases[k].remaining_s);
		run(f);
		if (launched(&f->r, -1) != cases[k].launch) {
			dump(f, &f->r);
			fail_msg("busy with %.1f s left: launched %lld, expected %d", cases[k].remaining_s,
				 (long long)launched(&f->r, -1), cases[k].launch);
		}
		EXPECT_INT(f, count_kind(&f->r, ACTION_TERMINATE) + count_kind(&f->r, ACTION_DRAIN), 0);
	}
}

/* A resident handler's setup is part of a launch's cold start: 150 s of
 * work queued, a 60 s boot, a 60 s target, and one instance busy for 100
 * s more. Without a setup the horizon is 120 s: the busy one covers 20 s
 * and the rest is launched for. With a 100 s setup the horizon is 220 s:
 * the busy one, whose handler is warm, covers 120 s of it, and the job
 * left over is better off waiting for it than for a 160 s cold start
 * (ready before a launch would be): nothing is launched. */
static void test_cold_start_counts_the_handler_setup(void **state)
{
	struct fx *f = fx_reset();
	struct plan_class *c;

	(void)state;
	offer(f, "a", 1, 24, 1.0, 60 * S_MS);
	c = demand(f, "standard", 1, 1, 2, 150, NOW - S_MS, 60 * S_MS);
	busy(f, 1, 0, 100);
	run(f);
	EXPECT_ONE_LAUNCH(f, 0, 1);
	EXPECT(f, strstr(f->r.actions[0].reason, "a 60 s boot and its 60 s wait target"));

	c->setup_s = 100;
	c->work_s = 300;
	run(f);
	EXPECT_ONE_LAUNCH(f, 0, 1);
	EXPECT(f, strstr(f->r.actions[0].reason, "a 160 s boot and handler setup and its 60 s wait target"));
	c->work_s = 110;
	run(f);
	EXPECT_INT(f, launched(&f->r, -1), 0);
}

/* The cost per item prices the setup as the boot is: billed on every
 * launch, so it weighs more the less work a launch does. */
static void test_cost_per_work_bills_the_setup(void **state)
{
	struct fx *f = fx_reset();
	double cold, warm;

	(void)state;
	offer(f, "a", 1, 24, 3.6, 60 * S_MS);
	warm = plan_cost_per_work_s(&f->offers[0], MARKET_ONDEMAND, 0, 100, 100, 0);
	cold = plan_cost_per_work_s(&f->offers[0], MARKET_ONDEMAND, 0, 100, 100, 40);
	/* $0.001 a second: (60 + 100) / 100 against (60 + 40 + 100) / 100. */
	assert_true(fabs(warm - 0.0016) < 1e-9);
	assert_true(fabs(cold - 0.0020) < 1e-9);
}

/* ---- several jobs per instance ---- */

/* Four 1-GPU jobs of 50 s, a 60 s target, no boot (a horizon of 60 s),
 * and an idle 4-GPU instance: one job at a time it covers 60 s of the
 * 200, so ceil(140 / 60) = 3 more are launched; packing, it runs the
 * four at once, 4 x 60 = 240 s: nothing. */
static void test_packing_counts_an_idle_instance_by_its_gpus(void **state)
{
	struct fx *f = fx_reset();

	(void)state;
	offer(f, "quad", 4, 24, 4.0, 0);
	demand(f, "standard", 1, 1, 4, 200, NOW - S_MS, 60 * S_MS);
	idle(f, 1, 0, NOW - S_MS);
	run(f);
	EXPECT_ONE_LAUNCH(f, 0, 3);
	f->packs = 1;
	run(f);
	EXPECT_INT(f, f->r.n, 0);
}

/* A 4-GPU instance busy past the horizon (100 s left of a 60 s one) with
 * free GPUs, and 1-GPU jobs of 50 s: each free GPU covers 60 s beside its
 * job. 3 free: 180 s for the 150 s of three jobs, nothing launched (one
 * job at a time: the busy one covers nothing, ceil(150 / 60) = 3
 * launched). 1 free: 60 s, 90 s short, two jobs left, and one 4-GPU
 * launch takes both. 2-GPU jobs fit no single free GPU. */
static void test_packing_counts_the_free_gpus_of_a_busy_one(void **state)
{
	struct fx *f = fx_reset();
	struct plan_instance *b;

	(void)state;
	offer(f, "quad", 4, 24, 4.0, 0);
	demand(f, "standard", 1, 1, 3, 150, NOW - S_MS, 60 * S_MS);
	b = busy(f, 1, 0, 100);
	b->free_gpus = 3;
	run(f);
	EXPECT_ONE_LAUNCH(f, 0, 3);
	f->packs = 1;
	run(f);
	EXPECT_INT(f, f->r.n, 0);
	b->free_gpus = 1;
	run(f);
	EXPECT_ONE_LAUNCH(f, 0, 1);
	b->free_gpus = 2;
	f->classes[0].gpus = 2;
	f->classes[0].jobs = 1;
	f->classes[0].work_s = 50;
	run(f);
	EXPECT_INT(f, f->r.n, 0); /* one 2-GPU job beside it: 60 s for 50 */
	b->free_gpus = 1;
	run(f);
	EXPECT_ONE_LAUNCH(f, 0, 1);
}

/* Eight 1-GPU jobs of 60 s on an empty fleet, a 60 s target: eight
 * launches' worth. Packing, a 4-GPU instance takes four: two launches
 * (2-GPU jobs: four); and priced per job, the quad at $4/h for four jobs
 * ($1/h a job) is cheaper than a 1-GPU offer at $1.2/h, which one job at
 * a time wins. */
static void test_packing_sizes_and_prices_launches_by_gpus(void **state)
{
	struct fx *f = fx_reset();

	(void)state;
	offer(f, "quad", 4, 24, 4.0, 0);
	demand(f, "standard", 1, 1, 8, 480, NOW - S_MS, 60 * S_MS);
	run(f);
	EXPECT_ONE_LAUNCH(f, 0, 8);
	f->packs = 1;
	run(f);
	EXPECT_ONE_LAUNCH(f, 0, 2);
	f->classes[0].gpus = 2;
	run(f);
	EXPECT_ONE_LAUNCH(f, 0, 4);
	f->classes[0].gpus = 1;
	offer(f, "single", 1, 24, 1.2, 0);
	run(f);
	EXPECT_ONE_LAUNCH(f, 0, 2);
	f->packs = 0;
	run(f);
	EXPECT_ONE_LAUNCH(f, 1, 8);
}

/* GPUs shared (gpu_share): a class of share s on an instance of G GPUs is
 * capacity for ⌊G / s⌋ jobs at once. Eight jobs of 60 s, a 60 s target,
 * on 1-GPU instances: whole, eight launches; shares of 1/4, ⌊1 / 0.25⌋ =
 * 4 a GPU, two; of 1/3, 3 a GPU (three shares of 1/3 fill it, not 2.99),
 * ⌈8 / 3⌉ = 3. An idle 1-GPU instance takes four quarters: of eight, four
 * are left, one launch; a 2-GPU offer at the same price per instance
 * takes 8 quarters at once, one launch of it. */
static void test_shares_count_capacity_in_parts_of_a_gpu(void **state)
{
	struct fx *f = fx_reset();
	struct plan_instance *i;

	(void)state;
	offer(f, "single", 1, 24, 1.0, 0);
	demand(f, "standard", 1, 1, 8, 480, NOW - S_MS, 60 * S_MS);
	f->packs = 1;
	run(f);
	EXPECT_ONE_LAUNCH(f, 0, 8);
	f->classes[0].gpu_share = 0.25;
	run(f);
	EXPECT_ONE_LAUNCH(f, 0, 2);
	f->classes[0].gpu_share = 1.0 / 3.0;
	run(f);
	EXPECT_ONE_LAUNCH(f, 0, 3);
	f->classes[0].gpu_share = 0.25;
	i = idle(f, 1, 0, NOW - S_MS);
	run(f);
	EXPECT_ONE_LAUNCH(f, 0, 1);
	i->state = INST_TERMINATED;
	f->nfleet = 0;
	offer(f, "dual", 2, 24, 1.0, 0);
	run(f);
	EXPECT_ONE_LAUNCH(f, 1, 1);
}

/* A busy instance whose job outlasts the wait target gives no capacity
 * within it: a queued job must not wait for it as if it were free. */
static void test_busy_past_the_target_holds_no_job(void **state)
{
	struct fx *f = fx_reset();

	(void)state;
	offer(f, "a", 1, 24, 1.0, 0);
	demand(f, "standard", 1, 1, 1, 10, NOW - S_MS, 60 * S_MS);
	busy(f, 1, 0, 1000);
	run(f);
	EXPECT_ONE_LAUNCH(f, 0, 1);

	/* Two such busy instances, and two jobs of 50 s: each needs its own. */
	f->classes[0].jobs = 2;
	f->classes[0].work_s = 100;
	busy(f, 2, 0, 1000);
	run(f);
	EXPECT_ONE_LAUNCH(f, 0, 2);

	/* Two jobs of 10 s: one new instance runs both within the target. */
	f->classes[0].work_s = 20;
	run(f);
	EXPECT_ONE_LAUNCH(f, 0, 1);

	/* One that is done within the target holds a job: 30 s of the 100 are
	 * covered, and the other job gets one instance. */
	f->classes[0].work_s = 100;
	f->fleet[1].busy_until_ms = NOW + 30 * S_MS;
	run(f);
	EXPECT_ONE_LAUNCH(f, 0, 1);
}

static void test_boot_longer_than_target(void **state)
{
	struct fx *f = fx_reset();

	(void)state;
	/* Nothing launched now starts within the 60 s target: a launch helps
	 * the work still waiting when it is up, 120 s from now, and has the
	 * target after that. The fleet is empty: 280 s of work, 60 s per
	 * launch, ceil(280 / 60) = 5 (not one per job: the first five drain
	 * the other two within the target). */
	offer(f, "slow", 1, 24, 1.0, 120 * S_MS);
	demand(f, "express", 0, 1, 7, 280, NOW - S_MS, 60 * S_MS);
	run(f);
	EXPECT_ONE_LAUNCH(f, 0, 5);
	assert_contains(f->r.actions[0].reason, "lane express");

	/* Two already boot, 119 s of it left: each gives 180 - 119 = 61 s of
	 * the horizon; 280 - 122 = 158 left, ceil(158 / 60) = 3 more. */
	booting(f, 1, 0, NOW - S_MS);
	booting(f, 2, 0, NOW - S_MS);
	run(f);
	EXPECT_ONE_LAUNCH(f, 0, 3);

	/* A boot exactly as long as the target: the horizon is 120 s, the two
	 * booting give 61 s each again, and 3 more. */
	f->offers[0].boot_ms = 60 * S_MS;
	run(f);
	EXPECT_ONE_LAUNCH(f, 0, 3);
}

static void test_oldest_past_target_launches_at_least_one(void **state)
{
	struct fx *f = fx_reset();

	(void)state;
	/* A busy instance about to finish covers the estimated work ... */
	offer(f, "a", 1, 24, 1.0, 0);
	demand(f, "standard", 1, 1, 1, 10, NOW - 30 * S_MS, 60 * S_MS);
	busy(f, 1, 0, 0);
	run(f);
	EXPECT_INT(f, f->r.n, 0);
	/* ... so nothing now, but a look when the oldest job reaches its target. */
	EXPECT_INT(f, f->r.next_ms, NOW + 30 * S_MS);

	/* ... but once the oldest job has waited past its target with nothing
	 * free or booting, the estimates were wrong: one more. */
	f->classes[0].oldest_ms = NOW - 61 * S_MS;
	run(f);
	EXPECT_ONE_LAUNCH(f, 0, 1);
	assert_contains(f->r.actions[0].reason, "past its");

	/* Exactly at the target counts as past it. */
	f->classes[0].oldest_ms = NOW - 60 * S_MS;
	run(f);
	EXPECT_ONE_LAUNCH(f, 0, 1);

	/* A busy one that is free before a launch could boot is as good as
	 * free: the job waits for it, not for a new instance. */
	f->offers[0].boot_ms = 20 * S_MS;
	f->fleet[0].busy_until_ms = NOW + 19 * S_MS;
	run(f);
	EXPECT_INT(f, f->r.n, 0);
	f->fleet[0].busy_until_ms = NOW + 20 * S_MS;
	run(f);
	EXPECT_ONE_LAUNCH(f, 0, 1);

	/* With an idle fitting instance, it is about to take the job: none. */
	f->classes[0].oldest_ms = NOW - 61 * S_MS;
	f->nfleet = 0;
	idle(f, 2, 0, NOW - S_MS);
	busy(f, 1, 0, 0);
	run(f);
	EXPECT_INT(f, launched(&f->r, -1), 0);

	/* Nor with one booting. */
	f->fleet[0].state = INST_BOOTING;
	f->fleet[0].launched_ms = NOW - S_MS;
	run(f);
	EXPECT_INT(f, launched(&f->r, -1), 0);
}

static void test_gpus_and_vram_must_fit(void **state)
{
	static const struct {
		int gpus, vram, offer;
	} cases[] = {
		{1, 0, 0}, {2, 0, 1}, {4, 0, 1}, {4, 40, 3}, {1, 40, 3}, {5, 0, 2}, {8, 0, 2}, {8, 81, -1}, {16, 0, -1},
	};
	struct fx *f = fx_reset();

	(void)state;
	offer(f, "g1", 1, 24, 1.0, 0);   /* 0 */
	offer(f, "g4", 4, 24, 3.0, 0);   /* 1 */
	offer(f, "g8", 8, 80, 5.0, 0);   /* 2 */
	offer(f, "g4big", 4, 80, 4.0, 0); /* 3 */
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		f->nclasses = 0;
		f->nfleet = 0;
		demand(f, "standard", 1, cases[k].gpus, 1, 10, NOW - S_MS, 60 * S_MS)->min_vram_gb = cases[k].vram;
		run(f);
		if (cases[k].offer < 0) {
			EXPECT_INT(f, f->r.n, 0);
			continue;
		}
		if (f->r.n != 1 || f->r.actions[0].offer != cases[k].offer || f->r.actions[0].count != 1) {
			dump(f, &f->r);
			fail_msg("a job of %d GPUs and %d GB: expected one launch of offer %d", cases[k].gpus,
				 cases[k].vram, cases[k].offer);
		}
	}

	/* An idle 1-GPU instance does not serve a 4-GPU job, and is kept. */
	f->nclasses = 0;
	demand(f, "standard", 1, 4, 1, 10, NOW - S_MS, 60 * S_MS);
	idle(f, 1, 0, NOW - S_MS);
	run(f);
	EXPECT_ONE_LAUNCH(f, 1, 1);

	/* An idle 8-GPU one with 80 GB does serve a 4-GPU job of 40 GB. */
	f->classes[0].min_vram_gb = 40;
	idle(f, 2, 2, NOW - S_MS);
	run(f);
	EXPECT_INT(f, f->r.n, 0);
}

static void test_cheapest_fitting_offer(void **state)
{
	struct fx *f = fx_reset();

	(void)state;
	offer(f, "three", 1, 24, 3.0, 0);
	offer(f, "one", 1, 24, 1.0, 0);
	offer(f, "two", 1, 24, 2.0, 0);
	demand(f, "standard", 1, 1, 4, 400, NOW - S_MS, 60 * S_MS);
	run(f);
	EXPECT_ONE_LAUNCH(f, 1, 4);
	assert_contains(f->r.actions[0].reason, "one");

	/* Per unit of work: $2/h at 4x the speed beats $1/h at 1x, when
	 * neither is held idle after its work (held, see below). */
	fx_reset();
	offer(f, "fast", 1, 24, 2.0, 0);
	f->offers[0].speed = 4;
	offer(f, "slow", 1, 24, 1.0, 0);
	f->idle_timeout_ms[0] = f->idle_timeout_ms[1] = 0;
	demand(f, "standard", 1, 1, 1, 10, NOW - S_MS, 60 * S_MS);
	run(f);
	EXPECT_ONE_LAUNCH(f, 0, 1);

	/* Unless it is over max_price. */
	f->set.max_price = 1.5;
	run(f);
	EXPECT_ONE_LAUNCH(f, 1, 1);

	/* A 10 s job alone: the boot is most of the bill, and the offer
	 * cheapest per hour wins though it is 4.9 times slower ($0.16/h:
	 * $0.0063 for 120 s + 22 s; $0.35/h: $0.0150 for 150 s + 4.5 s). Once
	 * launches did 3000 s of work each, the boot is shared by that much:
	 * $0.16/h costs $0.30 and $0.35/h $0.15, the fast one wins. */
	fx_reset();
	offer(f, "slow", 1, 24, 0.16, 120 * S_MS);
	f->offers[0].speed = 0.45;
	offer(f, "fast", 1, 24, 0.35, 150 * S_MS);
	f->offers[1].speed = 2.2;
	f->idle_timeout_ms[0] = f->idle_timeout_ms[1] = 0;
	demand(f, "standard", 1, 1, 1, 10, NOW - S_MS, 60 * S_MS);
	run(f);
	EXPECT_ONE_LAUNCH(f, 0, 1);
	f->work_per_launch_s = 3000;
	run(f);
	EXPECT_ONE_LAUNCH(f, 1, 1);

	/* Over 600 s of work the fast one still wins ($0.35/h for 423 s
	 * against $0.16/h for 1453 s); held idle 30 min (its idle timeout)
	 * before it is let go, each launch also pays that at its price:
	 * $0.16/h for 3253 s is then less than $0.35/h for 2223 s, and the
	 * slow one wins. */
	f->work_per_launch_s = 600;
	run(f);
	EXPECT_ONE_LAUNCH(f, 1, 1);
	f->idle_timeout_ms[0] = f->idle_timeout_ms[1] = 30 * MIN_MS;
	run(f);
	EXPECT_ONE_LAUNCH(f, 0, 1);

	/* An offer not sold on demand, with spot off, is never launched. */
	fx_reset();
	offer(f, "spot-only", 1, 24, -1, 0);
	f->offers[0].price[MARKET_SPOT] = 0.1;
	offer(f, "dear", 1, 24, 5.0, 0);
	demand(f, "standard", 1, 1, 1, 10, NOW - S_MS, 60 * S_MS);
	run(f);
	EXPECT_ONE_LAUNCH(f, 1, 1);
}

static void test_express_lane_takes_idle_instances_first(void **state)
{
	struct fx *f = fx_reset();

	(void)state;
	offer(f, "a", 1, 24, 1.0, 0);
	demand(f, "standard", 1, 1, 1, 10, NOW - S_MS, 60 * S_MS);
	demand(f, "express", 0, 1, 1, 10, NOW - S_MS, 30 * S_MS);
	idle(f, 1, 0, NOW - S_MS);
	run(f);
	EXPECT_ONE_LAUNCH(f, 0, 1);
	assert_contains(f->r.actions[0].reason, "lane standard");
}

/* ---- scale down ---- */

static void test_idle_timeout(void **state)
{
	struct fx *f = fx_reset();

	(void)state;
	offer(f, "a", 1, 24, 1.0, 0);
	idle(f, 7, 0, NOW - 11 * MIN_MS);
	run(f);
	EXPECT_INT(f, f->r.n, 1);
	EXPECT_INT(f, f->r.actions[0].kind, ACTION_TERMINATE);
	EXPECT_INT(f, f->r.actions[0].instance, 7);
	assert_contains(f->r.actions[0].reason, "idle");

	/* Exactly at the timeout: released. */
	f->fleet[0].idle_since_ms = NOW - 10 * MIN_MS;
	run(f);
	EXPECT(f, action_on(&f->r, ACTION_TERMINATE, 7) != NULL);

	/* Before it: nothing, and a look when it runs out. */
	f->fleet[0].idle_since_ms = NOW - 5 * MIN_MS;
	run(f);
	EXPECT_INT(f, f->r.n, 0);
	EXPECT_INT(f, f->r.next_ms, NOW - 5 * MIN_MS + 10 * MIN_MS);

	/* Two: the one past its timeout goes, the look is for the other. */
	idle(f, 8, 0, NOW - 20 * MIN_MS);
	idle(f, 9, 0, NOW - 8 * MIN_MS);
	run(f);
	EXPECT_INT(f, f->r.n, 1);
	EXPECT(f, action_on(&f->r, ACTION_TERMINATE, 8) != NULL);
	EXPECT_INT(f, f->r.next_ms, NOW - 8 * MIN_MS + 10 * MIN_MS);

	/* An idle instance matched to queued work is not released. */
	f->nfleet = 0;
	idle(f, 7, 0, NOW - 11 * MIN_MS);
	demand(f, "standard", 1, 1, 1, 10, NOW - S_MS, 60 * S_MS);
	run(f);
	EXPECT_INT(f, f->r.n, 0);
}

/* idle_surplus_timeout = auto: the view carries each offer's choice.
 * Two idle instances, 5 and 4 minutes: with 2 minutes chosen the longest
 * idle goes and the last waits the full 10; with 0 (off), neither; with
 * no choice in the view, auto is no surplus timeout either. */
static void test_surplus_timeout_from_the_view(void **state)
{
	struct fx *f = fx_reset();

	(void)state;
	f->set.idle_surplus_ms = CONF_AUTO;
	offer(f, "a", 1, 24, 1.0, 0);
	idle(f, 7, 0, NOW - 5 * MIN_MS);
	idle(f, 8, 0, NOW - 4 * MIN_MS);
	f->surplus_per_offer = 1;
	f->idle_surplus_ms[0] = 2 * MIN_MS;
	run(f);
	EXPECT_INT(f, f->r.n, 1);
	EXPECT(f, action_on(&f->r, ACTION_TERMINATE, 7) != NULL);
	f->idle_surplus_ms[0] = 0;
	run(f);
	EXPECT_INT(f, f->r.n, 0);
	f->surplus_per_offer = 0;
	run(f);
	EXPECT_INT(f, f->r.n, 0);
}

/* Each offer's instances are held to its own idle timeout: idle 11
 * minutes, the one on an offer held 10 goes, the one held 20 stays and is
 * looked at again when its 20 run out. */
static void test_idle_timeout_of_each_offer(void **state)
{
	struct fx *f = fx_reset();
	int slow;

	(void)state;
	offer(f, "fast", 1, 24, 1.0, 0);
	slow = offer(f, "slow", 1, 24, 1.0, 10 * MIN_MS);
	f->idle_timeout_ms[slow] = 20 * MIN_MS;
	idle(f, 7, 0, NOW - 11 * MIN_MS);
	idle(f, 8, slow, NOW - 11 * MIN_MS);
	run(f);
	EXPECT_INT(f, f->r.n, 1);
	EXPECT(f, action_on(&f->r, ACTION_TERMINATE, 7) != NULL);
	EXPECT_INT(f, f->r.next_ms, NOW - 11 * MIN_MS + 20 * MIN_MS);
}

/* serve leaves an idle instance to its worker for the grace past the
 * timeout the worker was told, the longest of the offers': released only
 * once the grace is over, and planned again then. One held to a shorter
 * timeout than its worker's (its offer's, below another's) goes at its
 * own: its worker waits for the longer one. */
static void test_idle_instance_left_to_its_worker_for_the_grace(void **state)
{
	struct fx *f = fx_reset();
	int slow;

	(void)state;
	offer(f, "fast", 1, 24, 1.0, 0);
	f->leave_grace_ms = PLAN_LEAVE_GRACE_MS;
	idle(f, 7, 0, NOW - 10 * MIN_MS - S_MS);
	run(f);
	EXPECT_INT(f, f->r.n, 0);
	EXPECT_INT(f, f->r.next_ms, NOW - S_MS + PLAN_LEAVE_GRACE_MS);
	f->fleet[0].idle_since_ms = NOW - 10 * MIN_MS - PLAN_LEAVE_GRACE_MS;
	run(f);
	EXPECT_INT(f, f->r.n, 1);
	EXPECT(f, action_on(&f->r, ACTION_TERMINATE, 7) != NULL);

	slow = offer(f, "slow", 1, 24, 1.0, 10 * MIN_MS);
	f->idle_timeout_ms[slow] = 20 * MIN_MS;
	f->fleet[0].idle_since_ms = NOW - 10 * MIN_MS - S_MS;
	run(f);
	EXPECT_INT(f, f->r.n, 1);
	EXPECT(f, action_on(&f->r, ACTION_TERMINATE, 7) != NULL);
}

/* Jobs estimated at no work at all still need an instance: one is
 * launched at once, not when the oldest has waited its target, and its
 * price per unit of work is a number, not a division by zero. */
static void test_jobs_of_no_work_launch_one(void **state)
{
	struct fx *f = fx_reset();

	(void)state;
	offer(f, "a", 1, 24, 1.0, 60 * S_MS);
	demand(f, "standard", 1, 1, 3, 0, NOW - S_MS, 5 * MIN_MS);
	run(f);
	EXPECT_INT(f, f->r.n, 1);
	EXPECT_INT(f, f->r.actions[0].kind, ACTION_LAUNCH);
	EXPECT_INT(f, f->r.actions[0].count, 1);
	assert_true(isfinite(plan_cost_per_work_s(&f->offers[0], MARKET_ONDEMAND, 0, 0, 0, 0)));
	/* Once one boots, no more. */
	inst(f, 1, 0, INST_BOOTING)->launched_ms = NOW;
	run(f);
	EXPECT_INT(f, f->r.n, 0);
}

/* More actions than a plan holds: the rest come from a plan a moment
 * later, on the fleet the first ones leave. */
static void test_actions_beyond_a_plan_come_next(void **state)
{
	struct fx *f = fx_reset();
	int kept = 0;

	(void)state;
	offer(f, "a", 1, 24, 1.0, 0);
	for (int k = 0; k < 100; k++)
		idle(f, 1000 + k, 0, NOW - 20 * MIN_MS);
	run(f);
	EXPECT_INT(f, f->r.n, PLAN_MAX_ACTIONS);
	EXPECT_INT(f, f->r.next_ms, NOW + 1);
	for (int k = 0; k < f->nfleet; k++) {
		if (!action_on(&f->r, ACTION_TERMINATE, f->fleet[k].id))
			f->fleet[kept++] = f->fleet[k];
	}
	EXPECT_INT(f, kept, 100 - PLAN_MAX_ACTIONS);
	f->nfleet = kept;
	f->now += 1;
	run(f);
	EXPECT_INT(f, f->r.n, 100 - PLAN_MAX_ACTIONS);
	EXPECT_INT(f, f->r.next_ms, 0);
}

static void test_idle_decay_even_at_t1_odd_at_t2(void **state)
{
	struct fx *f = fx_reset();

	(void)state;
	f->set.idle_decay = 1;
	f->idle_timeout_ms[0] = 1 * MIN_MS; /* not used with decay */
	offer(f, "a", 1, 24, 1.0, 0);
	idle(f, 2, 0, NOW - 5 * MIN_MS);
	idle(f, 3, 0, NOW - 5 * MIN_MS);
	run(f);
	EXPECT_INT(f, f->r.n, 0);
	EXPECT_INT(f, f->r.next_ms, NOW + 5 * MIN_MS); /* t1 of the even one */

	f->now = NOW + 10 * MIN_MS; /* idle 15 min */
	run(f);
	EXPECT_INT(f, f->r.n, 1);
	EXPECT(f, action_on(&f->r, ACTION_TERMINATE, 2) != NULL);
	assert_contains(f->r.actions[0].reason, "decay");
	EXPECT_INT(f, f->r.next_ms, NOW - 5 * MIN_MS + 30 * MIN_MS); /* t2 of the odd one */

	f->now = NOW + 26 * MIN_MS; /* idle 31 min */
	run(f);
	EXPECT_INT(f, f->r.n, 2);
	EXPECT(f, action_on(&f->r, ACTION_TERMINATE, 2) != NULL);
	EXPECT(f, action_on(&f->r, ACTION_TERMINATE, 3) != NULL);
}

static void test_limits_shrink_never_terminate_busy(void **state)
{
	struct fx *f = fx_reset();

	(void)state;
	offer(f, "a", 1, 24, 1.0, 5 * MIN_MS);
	idle(f, 1, 0, NOW - MIN_MS);
	idle(f, 2, 0, NOW - MIN_MS);
	booting(f, 3, 0, NOW - MIN_MS);
	booting(f, 4, 0, NOW - MIN_MS);
	busy(f, 5, 0, 100)->launched_ms = NOW - 10 * MIN_MS;
	busy(f, 6, 0, 100)->launched_ms = NOW - 9 * MIN_MS;
	busy(f, 7, 0, 100)->launched_ms = NOW - 8 * MIN_MS;
	/* Lots of work waiting does not change it. */
	demand(f, "standard", 1, 1, 1000000, 1e9, NOW - HOUR_MS, 60 * S_MS);

	/* Seven instances, two allowed: the idle and the booting ones go, and
	 * one busy one is drained. */
	f->set.max_instances = 2;
	run(f);
	EXPECT_INT(f, count_kind(&f->r, ACTION_TERMINATE), 4);
	for (int64_t id = 1; id <= 4; id++)
		EXPECT(f, action_on(&f->r, ACTION_TERMINATE, id) != NULL);
	EXPECT_INT(f, count_kind(&f->r, ACTION_DRAIN), 1);
	EXPECT_INT(f, launched(&f->r, -1), 0);
	EXPECT_INT(f, f->r.n, 5);

	/* None allowed: every busy one is drained, none terminated. */
	f->set.max_instances = 0;
	run(f);
	EXPECT_INT(f, count_kind(&f->r, ACTION_TERMINATE), 4);
	for (int64_t id = 5; id <= 7; id++) {
		EXPECT(f, action_on(&f->r, ACTION_DRAIN, id) != NULL);
		EXPECT(f, action_on(&f->r, ACTION_TERMINATE, id) == NULL);
	}

	/* Nor by max_gpus = 0 or a spend limit below one instance. */
	f->set.max_instances = 100;
	f->set.max_gpus = 0;
	run(f);
	EXPECT_INT(f, count_kind(&f->r, ACTION_DRAIN), 3);
	EXPECT_INT(f, count_kind(&f->r, ACTION_TERMINATE), 4);
	f->set.max_gpus = 1000;
	f->set.max_spend_per_hour = 0.5;
	run(f);
	EXPECT_INT(f, count_kind(&f->r, ACTION_DRAIN), 3);
	EXPECT_INT(f, count_kind(&f->r, ACTION_TERMINATE), 4);

	/* Once drained, they are left to finish. */
	f->set.max_spend_per_hour = 0;
	f->set.max_instances = 0;
	f->nfleet = 0;
	for (int64_t id = 5; id <= 7; id++)
		busy(f, id, 0, 100)->state = INST_DRAINING;
	run(f);
	EXPECT_INT(f, f->r.n, 0);
}

/* Draining a busy instance brings it under the limit once its job ends:
 * no more are drained than the limit needs, now or at the next look. */
static void test_over_limits_drains_only_what_is_needed(void **state)
{
	struct fx *f = fx_reset();

	(void)state;
	offer(f, "g2", 2, 24, 3.0, 0);
	for (int64_t id = 1; id <= 4; id++)
		busy(f, id, 0, 100);

	f->set.max_instances = 3;
	run(f);
	EXPECT_INT(f, count_kind(&f->r, ACTION_DRAIN), 1);
	EXPECT_INT(f, f->r.n, 1);

	f->set.max_instances = 100;
	f->set.max_gpus = 6; /* 8 GPUs in use: one instance too many */
	run(f);
	EXPECT_INT(f, count_kind(&f->r, ACTION_DRAIN), 1);
	EXPECT_INT(f, f->r.n, 1);

	f->set.max_gpus = 1000;
	f->set.max_spend_per_hour = 9; /* $12/h in use */
	run(f);
	EXPECT_INT(f, count_kind(&f->r, ACTION_DRAIN), 1);
	EXPECT_INT(f, f->r.n, 1);

	/* The next look, with one draining: nothing more to do. */
	f->fleet[3].state = INST_DRAINING;
	run(f);
	EXPECT_INT(f, f->r.n, 0);
	f->set.max_spend_per_hour = 0;
	f->set.max_gpus = 6;
	run(f);
	EXPECT_INT(f, f->r.n, 0);
	/* ... and still no launch while the drained one runs. */
	demand(f, "standard", 1, 1, 100, 1e6, NOW - HOUR_MS, 60 * S_MS);
	run(f);
	EXPECT_INT(f, f->r.n, 0);
}

static void test_drained_instance_is_terminated(void **state)
{
	struct fx *f = fx_reset();

	(void)state;
	offer(f, "a", 1, 24, 1.0, 0);
	inst(f, 1, 0, INST_DRAINING);
	inst(f, 2, 0, INST_DRAINING)->running = 1;
	run(f);
	EXPECT_INT(f, f->r.n, 1);
	EXPECT_INT(f, f->r.actions[0].kind, ACTION_TERMINATE);
	EXPECT_INT(f, f->r.actions[0].instance, 1);
	assert_contains(f->r.actions[0].reason, "drained");
}

static void test_boot_timeout(void **state)
{
	struct fx *f = fx_reset();

	(void)state;
	offer(f, "a", 1, 24, 1.0, 30 * S_MS);
	booting(f, 1, 0, NOW - 11 * MIN_MS);
	booting(f, 2, 0, NOW - 10 * MIN_MS)->state = INST_REQUESTED; /* exactly at it */
	booting(f, 3, 0, NOW - 5 * MIN_MS);
	run(f);
	EXPECT_INT(f, f->r.n, 2);
	EXPECT(f, action_on(&f->r, ACTION_TERMINATE, 1) != NULL);
	EXPECT(f, action_on(&f->r, ACTION_TERMINATE, 2) != NULL);
	assert_contains(f->r.actions[0].reason, "boot_timeout");
	EXPECT_INT(f, f->r.next_ms, NOW + 5 * MIN_MS);

	/* Queued work: the timed-out ones count for nothing, the third covers
	 * 60 s of the 100, and one more is launched for the second job. */
	demand(f, "standard", 1, 1, 2, 100, NOW - S_MS, 60 * S_MS);
	run(f);
	EXPECT_INT(f, count_kind(&f->r, ACTION_TERMINATE), 2);
	EXPECT_INT(f, launched(&f->r, 0), 1);
}

/* ---- the warm pool ---- */

static void warm(struct fx *f, const char *text)
{
	char err[200];

	if (warm_parse(text, &f->set.warm, err, sizeof err) != 0)
		fail_msg("warm_parse('%s'): %s", text, err);
}

static void test_warm_floor(void **state)
{
	struct fx *f = fx_reset();

	(void)state;
	offer(f, "default", 1, 24, 0, 0);
	warm(f, "mon-fri 08-18 2");

	/* Monday 09:00: two ready instances, none yet. */
	f->now = MON_1970 + 9 * HOUR_MS;
	run(f);
	EXPECT_ONE_LAUNCH(f, 0, 2);
	assert_contains(f->r.actions[0].reason, "warm");
	EXPECT_INT(f, f->r.next_ms, MON_1970 + 18 * HOUR_MS);

	/* One is idle, long past its idle timeout: kept, and one more. */
	idle(f, 1, 0, f->now - HOUR_MS);
	run(f);
	EXPECT_ONE_LAUNCH(f, 0, 1);

	/* Booting ones count towards the floor. */
	booting(f, 2, 0, f->now - S_MS);
	run(f);
	EXPECT_INT(f, f->r.n, 0);

	/* Three idle ones past their timeout: the longest idle goes. */
	f->nfleet = 0;
	idle(f, 1, 0, f->now - 3 * HOUR_MS);
	idle(f, 2, 0, f->now - 2 * HOUR_MS);
	idle(f, 3, 0, f->now - 1 * HOUR_MS);
	run(f);
	EXPECT_INT(f, f->r.n, 1);
	EXPECT(f, action_on(&f->r, ACTION_TERMINATE, 1) != NULL);

	/* Monday 19:00, outside the hours: all three go. */
	f->now = MON_1970 + 19 * HOUR_MS;
	for (int k = 0; k < 3; k++)
		f->fleet[k].idle_since_ms = f->now - (3 - k) * HOUR_MS;
	run(f);
	EXPECT_INT(f, count_kind(&f->r, ACTION_TERMINATE), 3);
	EXPECT_INT(f, f->r.n, 3);

	/* Saturday 09:00: no floor, and the next change is Monday 08:00. */
	f->nfleet = 0;
	f->now = MON_1970 + 5 * DAY_MS + 9 * HOUR_MS;
	run(f);
	EXPECT_INT(f, f->r.n, 0);
	EXPECT_INT(f, f->r.next_ms, MON_1970 + 7 * DAY_MS + 8 * HOUR_MS);

	/* Monday 07:30: nothing yet, a look at 08:00. */
	f->now = MON_1970 + 7 * HOUR_MS + 30 * MIN_MS;
	run(f);
	EXPECT_INT(f, f->r.n, 0);
	EXPECT_INT(f, f->r.next_ms, MON_1970 + 8 * HOUR_MS);

	/* The floor stays under the hard limits. */
	f->now = MON_1970 + 9 * HOUR_MS;
	f->set.max_instances = 1;
	run(f);
	EXPECT_ONE_LAUNCH(f, 0, 1);
}

/* ---- the hard limits ---- */

static void million_jobs(struct fx *f)
{
	demand(f, "standard", 1, 1, 1000000, 1e6 * 3600, NOW - HOUR_MS, 60 * S_MS);
}

static int64_t launched_gpus(const struct fx *f)
{
	int64_t n = 0;
	for (int k = 0; k < f->r.n; k++) {
		if (f->r.actions[k].kind == ACTION_LAUNCH)
			n += (int64_t)f->r.actions[k].count * f->offers[f->r.actions[k].offer].gpus;
	}
	return n;
}

static double launched_spend(const struct fx *f)
{
	double n = 0;
	for (int k = 0; k < f->r.n; k++) {
		const struct action *a = &f->r.actions[k];
		if (a->kind == ACTION_LAUNCH)
			n += a->count * price_of(&f->offers[a->offer], a->market);
	}
	return n;
}

static void test_hard_limits_with_a_million_jobs(void **state)
{
	struct fx *f = fx_reset();

	(void)state;
	/* max_instances. */
	offer(f, "default", 1, 24, 0, 0);
	million_jobs(f);
	f->set.max_instances = 7;
	run(f);
	EXPECT_INT(f, launched(&f->r, -1), 7);
	assert_contains(f->r.actions[0].reason, "capped by max_instances");

	/* max_gpus, with multi-GPU offers: 8 + 8 + 2 + 2 = 20. */
	fx_reset();
	offer(f, "g8", 8, 24, 1.0, 0);
	offer(f, "g2", 2, 24, 1.5, 0);
	million_jobs(f);
	f->set.max_instances = 1000;
	f->set.max_gpus = 20;
	run(f);
	EXPECT_INT(f, launched_gpus(f), 20);
	EXPECT_INT(f, launched(&f->r, 0), 2);
	EXPECT_INT(f, launched(&f->r, 1), 2);

	/* max_spend_per_hour, with priced offers: 3 x $3 = $9 of $10. */
	fx_reset();
	offer(f, "p3", 1, 24, 3.0, 0);
	million_jobs(f);
	f->set.max_instances = 1000;
	f->set.max_spend_per_hour = 10;
	run(f);
	EXPECT_INT(f, launched(&f->r, -1), 3);
	assert_contains(f->r.actions[0].reason, "max_spend_per_hour");

	/* An offer's own max_instances, then the next offer. */
	fx_reset();
	f->offers[offer(f, "cheap", 1, 24, 1.0, 0)].max_instances = 2;
	offer(f, "dear", 1, 24, 2.0, 0);
	million_jobs(f);
	f->set.max_instances = 5;
	run(f);
	EXPECT_INT(f, launched(&f->r, 0), 2);
	EXPECT_INT(f, launched(&f->r, 1), 3);

	/* Several classes share the same room. */
	fx_reset();
	offer(f, "g1", 1, 24, 1.0, 0);
	offer(f, "g4", 4, 24, 3.0, 0);
	million_jobs(f);
	demand(f, "express", 0, 4, 1000000, 1e10, NOW - HOUR_MS, 30 * S_MS);
	demand(f, "batch", 2, 2, 1000000, 1e10, NOW - HOUR_MS, HOUR_MS);
	f->set.max_instances = 9;
	f->set.max_gpus = 30;
	f->set.max_spend_per_hour = 25;
	run(f);
	EXPECT(f, launched(&f->r, -1) <= 9);
	EXPECT(f, launched_gpus(f) <= 30);
	EXPECT(f, launched_spend(f) <= 25 + 1e-9);
	EXPECT(f, launched(&f->r, -1) > 0);
}

static void test_hard_limits_count_the_fleet(void **state)
{
	struct fx *f = fx_reset();

	(void)state;
	/* 3 busy and 2 idle 2-GPU instances at $1.50/h: 10 GPUs, $7.50/h. */
	offer(f, "g2", 2, 24, 1.5, 0);
	for (int64_t id = 1; id <= 3; id++)
		busy(f, id, 0, 3600);
	idle(f, 4, 0, NOW - S_MS);
	idle(f, 5, 0, NOW - S_MS);
	million_jobs(f);

	f->set.max_instances = 8;
	run(f);
	EXPECT_ONE_LAUNCH(f, 0, 3);

	f->set.max_gpus = 14;
	run(f);
	EXPECT_ONE_LAUNCH(f, 0, 2);

	f->set.max_gpus = 1000;
	f->set.max_spend_per_hour = 9;
	run(f);
	EXPECT_ONE_LAUNCH(f, 0, 1);

	/* Booting and draining instances take room too. */
	f->set.max_spend_per_hour = 0;
	booting(f, 6, 0, NOW - S_MS);
	inst(f, 7, 0, INST_DRAINING)->running = 1;
	run(f);
	EXPECT_ONE_LAUNCH(f, 0, 1);

	/* At the limit: nothing. */
	f->set.max_instances = 7;
	run(f);
	EXPECT_INT(f, f->r.n, 0);
}

/* ---- every view ---- */

static int64_t rnd(int64_t lo, int64_t hi) /* lo..hi inclusive */
{
	uint64_t r = ((uint64_t)rand() << 31) ^ (uint64_t)rand();
	return lo + (int64_t)(r % (uint64_t)(hi - lo + 1));
}

static double rndf(double lo, double hi) { return lo + (hi - lo) * ((double)rand() / RAND_MAX); }

static void random_view(struct fx *f, int64_t seq)
{
	static const char *const schedules[] = {"* * 2", "mon-fri 08-18 3; * * 1", "* 00-12 5", "sat,sun * 1"};
	static const char *const lanes[] = {"express", "standard", "batch"};
	static const int gpu_sizes[] = {1, 1, 2, 4, 8};
	static const int vrams[] = {16, 24, 40, 80};

	fx_reset();
	f->now = NOW + rnd(0, 14 * DAY_MS);
	f->set.max_instances = rnd(0, 3) == 0 ? rnd(0, 3) : rnd(0, 40);
	f->set.max_gpus = rnd(0, 3) == 0 ? rnd(0, 4) : rnd(0, 120);
	f->set.max_spend_per_hour = rnd(0, 2) == 0 ? 0 : rndf(0, 60);
	for (int k = 0; k < MAX_OFFERS; k++)
		f->idle_timeout_ms[k] = rnd(0, HOUR_MS);
	f->set.idle_decay = rnd(0, 3) == 0;
	f->set.decay_t1_ms = rnd(0, HOUR_MS);
	f->set.decay_t2_ms = f->set.decay_t1_ms + rnd(0, HOUR_MS);
	f->set.boot_timeout_ms = rnd(S_MS, 20 * MIN_MS);
	f->set.max_price = rnd(0, 2) == 0 ? rndf(0.5, 8) : 0;
	f->set.min_reliability = rnd(0, 2) == 0 ? rndf(0, 0.9) : 0;
	f->set.max_share_per_offer = rndf(0.01, 1);
	f->set.use_spot = (int)rnd(0, 1);
	f->set.checkpoint_every_ms = rnd(S_MS, HOUR_MS);
	if (rnd(0, 2) == 0)
		warm(f, schedules[rnd(0, 3)]);

	for (int k = 0, n = (int)rnd(1, MAX_OFFERS); k < n; k++) {
		char name[16];
		struct offer *o;
		snprintf(name, sizeof name, "o%d", k);
		o = &f->offers[offer(f, name, 0, 0, 0, 0)];
		o->gpus = gpu_sizes[rnd(0, 4)];
		o->vram_gb = vrams[rnd(0, 3)];
		o->price[MARKET_ONDEMAND] = rnd(0, 4) == 0 ? -1 : rnd(0, 5) == 0 ? 0 : rndf(0.1, 12);
		o->price[MARKET_SPOT] = rnd(0, 1) ? -1 : rndf(0, 5);
		if (o->price[MARKET_ONDEMAND] < 0 && o->price[MARKET_SPOT] < 0)
			o->price[MARKET_ONDEMAND] = rndf(0, 12);
		o->boot_ms = rnd(0, 3) == 0 ? 0 : rnd(0, 10 * MIN_MS);
		o->speed = rndf(0.25, 4);
		o->reclaims_per_hour = rndf(0, 2);
		o->max_instances = rnd(0, 2) == 0 ? (int)rnd(1, 10) : 0;
		o->resting[MARKET_SPOT] = rnd(0, 4) == 0;
	}

	for (int k = 0, n = (int)rnd(0, 5); k < n; k++) {
		int rank = (int)rnd(0, 2);
		int64_t jobs = rnd(0, 3) == 0 ? rnd(1, 1000000) : rnd(1, 50);
		struct plan_class *c = demand(f, lanes[rank], rank, gpu_sizes[rnd(0, 4)] * (rnd(0, 9) == 0 ? 4 : 1),
					      jobs, rndf(0, 1) * (double)jobs * rndf(1, 7200),
					      f->now - rnd(0, 2 * HOUR_MS), rnd(S_MS, HOUR_MS));
		c->min_vram_gb = rnd(0, 3) == 0 ? vrams[rnd(0, 3)] : 0;
		c->items = jobs * rnd(1, 100);
	}

	f->nfleet = (int)(rnd(0, 3) == 0 ? rnd(0, 120) : rnd(0, 30));
	for (int k = 0; k < f->nfleet; k++) {
		struct plan_instance *i = &f->fleet[k];
		memset(i, 0, sizeof *i);
		i->id = seq * 1000 + k + 1;
		i->offer = (int)rnd(0, f->noffers - 1);
		i->market = f->offers[i->offer].price[MARKET_SPOT] >= 0 && rnd(0, 1) ? MARKET_SPOT : MARKET_ONDEMAND;
		i->state = (enum instance_state)rnd(0, INST_NSTATES - 1);
		i->running = i->state == INST_BUSY || (i->state == INST_DRAINING && rnd(0, 1));
		i->launched_ms = f->now - rnd(0, 2 * HOUR_MS);
		i->idle_since_ms = i->state == INST_IDLE || i->state == INST_DRAINING ? f->now - rnd(0, 2 * HOUR_MS) : 0;
		i->busy_until_ms = i->running ? f->now + (int64_t)(rndf(0, 7200) * 1000) : 0;
	}
	/* Half the views pack jobs side by side, their running instances
	 * with some GPUs free. */
	f->packs = (int)(seq & 1);
	for (int k = 0; f->packs && k < f->nfleet; k++) {
		if (f->fleet[k].running)
			f->fleet[k].free_gpus = (int)rnd(0, f->offers[f->fleet[k].offer].gpus - 1);
	}
}

static void test_random_views_keep_the_invariants(void **state)
{
	struct fx *f = &F;
	int64_t launches = 0, drains = 0, terminates = 0, capped = 0;
	char what[200];

	(void)state;
	srand(20261121);
	for (int64_t seq = 0; seq < 30000; seq++) {
		struct plan_view v;
		struct plan_result *r;
		random_view(f, seq);
		v = view_of(f);
		snprintf(what, sizeof what, "random view %lld (srand 20261121)", (long long)seq);
		plan(&v, &f->r);
		check_invariants(&v, &f->r, what);
		r = run(f); /* and the same answer twice */
		launches += count_kind(r, ACTION_LAUNCH);
		drains += count_kind(r, ACTION_DRAIN);
		terminates += count_kind(r, ACTION_TERMINATE);
		for (int k = 0; k < r->n; k++)
			capped += r->actions[k].kind == ACTION_LAUNCH && strstr(r->actions[k].reason, "capped by");
	}
	/* The views did exercise every kind of decision and the limits. */
	print_message("random views: %lld launches (%lld capped), %lld drains, %lld terminates\n",
		      (long long)launches, (long long)capped, (long long)drains, (long long)terminates);
	assert_true(launches > 1000);
	assert_true(capped > 100);
	assert_true(drains > 100);
	assert_true(terminates > 1000);
}

static void test_deterministic(void **state)
{
	static struct fx copy;
	static struct plan_result first;
	struct plan_view v;

	(void)state;
	srand(7);
	random_view(&F, 1);
	/* A view with a bit of everything. */
	offer(&F, "extra", 2, 80, 0.5, 30 * S_MS);
	demand(&F, "standard", 1, 1, 500, 50000, NOW - HOUR_MS, 60 * S_MS);
	busy(&F, 999001, 0, 100);
	idle(&F, 999002, 0, F.now - 2 * HOUR_MS);
	run(&F);
	first = F.r;

	/* The same view in other memory: the same bytes. */
	copy = F;
	v = view_of(&copy);
	memset(&copy.r, 0xa5, sizeof copy.r);
	plan(&v, &copy.r);
	if (copy.r.n != first.n || copy.r.next_ms != first.next_ms ||
	    memcmp(copy.r.actions, first.actions, sizeof first.actions[0] * (size_t)first.n) != 0) {
		dump(&F, &first);
		dump(&copy, &copy.r);
		fail_msg("plan() on a copy of the view answered differently");
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty_queue_and_fleet_do_nothing),
		cmocka_unit_test(test_backlog_launches_ceil_of_shortfall),
		cmocka_unit_test(test_launch_capped_at_the_jobs),
		cmocka_unit_test(test_enough_capacity_launches_nothing),
		cmocka_unit_test(test_booting_capacity_counts),
		cmocka_unit_test(test_cold_start_counts_the_handler_setup),
		cmocka_unit_test(test_cost_per_work_bills_the_setup),
		cmocka_unit_test(test_no_second_launch_while_booting),
		cmocka_unit_test(test_busy_counts_for_target_minus_remaining),
		cmocka_unit_test(test_busy_past_the_target_holds_no_job),
		cmocka_unit_test(test_packing_counts_an_idle_instance_by_its_gpus),
		cmocka_unit_test(test_packing_counts_the_free_gpus_of_a_busy_one),
		cmocka_unit_test(test_packing_sizes_and_prices_launches_by_gpus),
		cmocka_unit_test(test_shares_count_capacity_in_parts_of_a_gpu),
		cmocka_unit_test(test_boot_longer_than_target),
		cmocka_unit_test(test_expected_arrivals),
		cmocka_unit_test(test_oldest_past_target_launches_at_least_one),
		cmocka_unit_test(test_gpus_and_vram_must_fit),
		cmocka_unit_test(test_cheapest_fitting_offer),
		cmocka_unit_test(test_express_lane_takes_idle_instances_first),
		cmocka_unit_test(test_idle_timeout),
		cmocka_unit_test(test_idle_timeout_of_each_offer),
		cmocka_unit_test(test_surplus_timeout_from_the_view),
		cmocka_unit_test(test_idle_instance_left_to_its_worker_for_the_grace),
		cmocka_unit_test(test_actions_beyond_a_plan_come_next),
		cmocka_unit_test(test_jobs_of_no_work_launch_one),
		cmocka_unit_test(test_idle_decay_even_at_t1_odd_at_t2),
		cmocka_unit_test(test_limits_shrink_never_terminate_busy),
		cmocka_unit_test(test_over_limits_drains_only_what_is_needed),
		cmocka_unit_test(test_drained_instance_is_terminated),
		cmocka_unit_test(test_boot_timeout),
		cmocka_unit_test(test_warm_floor),
		cmocka_unit_test(test_hard_limits_with_a_million_jobs),
		cmocka_unit_test(test_hard_limits_count_the_fleet),
		cmocka_unit_test(test_random_views_keep_the_invariants),
		cmocka_unit_test(test_deterministic),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
