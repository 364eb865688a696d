/* What plan() launches (src/policy/plan.c): the offer and market with the lowest
 * expected cost per item, not per hour; a measured speed that contradicts
 * the declared one changes the choice; spot when it is cheaper per item
 * after its reclaims are priced, and not when they make it dearer, when it
 * is below min_reliability or above max_price; spot spread over offers by
 * max_share_per_offer; on-demand when every fitting spot offer fails or the
 * oldest job is about to miss its target. The reasons name what was
 * compared, at the prices plan_cost_per_work_s gives (docs/COST.md).
 *
 * Prices from shared/FACTS.md: GCP T4 + n1-highmem-4 $0.59/h on demand,
 * $0.16/h spot; AWS g5.xlarge (A10G) $1.01/h on demand, $0.35/h spot. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "policy/plan.h"

#define S_MS 1000LL
#define MIN_MS (60 * S_MS)
#define HOUR_MS (60 * MIN_MS)
#define NOW (1700000000LL * 1000)

struct fx {
	struct plan_settings set;
	struct offer offers[8];
	int noffers;
	struct plan_class cls;
	struct plan_result r;
};

static struct fx F;

/* Generous limits, spot on, reclaims priced with 10-minute checkpoints;
 * one class of 10 jobs, 10 items, an hour of reference work in all (six
 * minutes per item), waiting 1 s of a 60 s target. */
static struct fx *fx_reset(void)
{
	memset(&F, 0, sizeof F);
	F.set.max_instances = 100;
	F.set.max_gpus = 1000;
	F.set.boot_timeout_ms = 10 * MIN_MS;
	F.set.max_share_per_offer = 1;
	F.set.use_spot = 1;
	F.set.checkpoint_every_ms = 10 * MIN_MS;
	F.cls = (struct plan_class){.lane = "standard", .gpus = 1, .jobs = 10, .items = 10, .work_s = 3600,
				    .oldest_ms = NOW - S_MS, .wait_target_ms = 60 * S_MS};
	return &F;
}

/* An offer of one 24 GB GPU, booting at once; spot < 0: not sold on spot.
 * Reliable on spot unless a test says otherwise (one reclaim in 100 h). */
static int offer(struct fx *f, const char *name, double ondemand, double spot, double speed)
{
	struct offer *o = &f->offers[f->noffers];

	memset(o, 0, sizeof *o);
	snprintf(o->name, sizeof o->name, "%s", name);
	o->gpus = 1;
	o->vram_gb = 24;
	o->price[MARKET_ONDEMAND] = ondemand;
	o->price[MARKET_SPOT] = spot;
	o->speed = speed;
	o->reclaims_per_hour = 0.01;
	return f->noffers++;
}

static void dump(const struct plan_result *r)
{
	for (int k = 0; k < r->n; k++)
		print_message("  kind=%d offer=%d market=%s count=%d: %s\n", (int)r->actions[k].kind, r->actions[k].offer,
			      market_name(r->actions[k].market), r->actions[k].count, r->actions[k].reason);
}

/* plan() twice on the view: the same answer both times. Instances are
 * let go as soon as they idle (idle timeouts of 0), so that each launch
 * costs its boot, work and reclaims alone, as plan_cost_per_work_s prices
 * them; the idle hold a launch pays besides is test_plan's. */
static struct plan_result *run(struct fx *f)
{
	static struct plan_result again;
	static const int64_t idle_ms[8] = {0};
	struct plan_view v = {.now_ms = NOW, .settings = &f->set, .idle_timeout_ms = idle_ms, .classes = &f->cls,
			      .nclasses = 1, .offers = f->offers, .noffers = f->noffers};

	plan(&v, &f->r);
	plan(&v, &again);
	if (again.n != f->r.n || memcmp(again.actions, f->r.actions, sizeof again.actions[0] * (size_t)again.n) != 0)
		fail_msg("plan() gave two answers to one view");
	return &f->r;
}

/* Instances launched of offer off on market m. */
static int launched(const struct fx *f, int off, enum market m)
{
	int n = 0;

	for (int k = 0; k < f->r.n; k++) {
		const struct action *a = &f->r.actions[k];
		if (a->kind == ACTION_LAUNCH && a->offer == off && a->market == m)
			n += a->count;
	}
	return n;
}

#define EXPECT(cond)                                                              \
	do {                                                                      \
		if (!(cond)) {                                                    \
			dump(&F.r);                                               \
			fail_msg("%s:%d: expected %s", __FILE__, __LINE__, #cond); \
		}                                                                 \
	} while (0)

#define EXPECT_LAUNCH(f, off, m, n)                                                                        \
	do {                                                                                               \
		int got_ = launched((f), (off), (m));                                                      \
		if (got_ != (n)) {                                                                         \
			dump(&(f)->r);                                                                     \
			fail_msg("%s:%d: %d x %s %s launched, expected %d", __FILE__, __LINE__, got_,      \
				 (f)->offers[off].name, market_name(m), (int)(n));                         \
		}                                                                                          \
	} while (0)

/* "NAME MARKET $X/item" as plan() words it, X from plan_cost_per_work_s
 * for the class (work per item: work_s / items). */
static const char *per_item(const struct fx *f, int off, enum market m)
{
	double run_ref = f->cls.work_s / (double)f->cls.jobs; /* the view's job: need * job >= shortfall */
	double usd = plan_cost_per_work_s(&f->offers[off], m, f->set.checkpoint_every_ms, run_ref, run_ref, 0);

	return harness_fmt("%s %s $%.4f/item", f->offers[off].name, market_name(m),
			   usd * f->cls.work_s / (double)f->cls.items);
}

static void test_cheapest_per_item_not_per_hour(void **state)
{
	struct fx *f = fx_reset();
	int t4 = offer(f, "t4", 0.59, -1, 1.0), a10g = offer(f, "a10g", 1.01, -1, 2.5);

	(void)state;
	/* Per item (360 reference seconds): t4 $0.59/h x 0.1 h = $0.0590,
	 * a10g $1.01/h x 0.1 h / 2.5 = $0.0404. The dearer hour is the
	 * cheaper item. */
	run(f);
	EXPECT_LAUNCH(f, a10g, MARKET_ONDEMAND, 10);
	EXPECT_LAUNCH(f, t4, MARKET_ONDEMAND, 0);
	assert_string_equal(per_item(f, a10g, MARKET_ONDEMAND), "a10g on-demand $0.0404/item");
	assert_string_equal(per_item(f, t4, MARKET_ONDEMAND), "t4 on-demand $0.0590/item");
	assert_contains(f->r.actions[0].reason, "cheapest per item: a10g on-demand $0.0404/item, t4 on-demand $0.0590/item");

	/* Small items: the reason keeps two significant digits of a price,
	 * not $0.0000 (60,000 items, 0.06 reference seconds each). */
	f->cls.items = 60000;
	run(f);
	EXPECT_LAUNCH(f, a10g, MARKET_ONDEMAND, 10);
	assert_contains(f->r.actions[0].reason,
			"cheapest per item: a10g on-demand $0.0000067/item, t4 on-demand $0.0000098/item");
	f->cls.items = 10;

	/* A boot is billed: 15 minutes of boot for the hour of work one
	 * a10g takes on makes it $0.0657 an item, dearer than t4 booting at
	 * once. */
	f->offers[a10g].boot_ms = 15 * MIN_MS;
	f->cls.wait_target_ms = HOUR_MS; /* longer than the boot */
	run(f);
	EXPECT_LAUNCH(f, t4, MARKET_ONDEMAND, 1);
	EXPECT_LAUNCH(f, a10g, MARKET_ONDEMAND, 0);
	assert_contains(f->r.actions[0].reason, "t4 on-demand $0.0590/item");
}

static void test_measured_speed_changes_the_choice(void **state)
{
	struct fx *f = fx_reset();
	int t4 = offer(f, "t4", 0.59, -1, 1.0), a10g = offer(f, "a10g", 1.01, -1, 2.5);

	(void)state;
	run(f);
	EXPECT_LAUNCH(f, a10g, MARKET_ONDEMAND, 10);

	/* Its timed runs say 0.5, not 2.5 (scaler_estimates puts the measured
	 * mean in offer.speed after 3 of them): $0.2020 an item, t4 wins. */
	f->offers[a10g].speed = 0.5;
	run(f);
	EXPECT_LAUNCH(f, t4, MARKET_ONDEMAND, 10);
	EXPECT_LAUNCH(f, a10g, MARKET_ONDEMAND, 0);
	assert_contains(f->r.actions[0].reason, "cheapest per item: t4 on-demand $0.0590/item, a10g on-demand $0.2020/item");

	/* Measured faster than declared: back to a10g. */
	f->offers[a10g].speed = 3.0;
	run(f);
	EXPECT_LAUNCH(f, a10g, MARKET_ONDEMAND, 10);
}

static void test_spot_when_cheaper_per_item(void **state)
{
	struct fx *f = fx_reset();
	int t4 = offer(f, "t4", 0.59, 0.16, 1.0);

	(void)state;
	run(f);
	EXPECT_LAUNCH(f, t4, MARKET_SPOT, 10);
	EXPECT_LAUNCH(f, t4, MARKET_ONDEMAND, 0);
	assert_contains(f->r.actions[0].reason, per_item(f, t4, MARKET_SPOT));
	assert_contains(f->r.actions[0].reason, per_item(f, t4, MARKET_ONDEMAND));
	assert_contains(f->r.actions[0].reason, "launch 10 x t4 (spot, $0.16/h)");

	/* Spot off: on demand. */
	f->set.use_spot = 0;
	run(f);
	EXPECT_LAUNCH(f, t4, MARKET_ONDEMAND, 10);
}

static void test_spot_left_out_when_reclaims_make_it_dearer(void **state)
{
	struct fx *f = fx_reset();
	int x = offer(f, "x", 1.00, 0.60, 1.0);
	double spot, od;

	(void)state;
	/* Hour-long jobs, 10-minute boots, hourly checkpoints, two reclaims an
	 * hour: each reclaim loses half an hour and a boot, so an hour of
	 * work takes about 2.6 billed hours on spot. */
	f->cls = (struct plan_class){.lane = "standard", .gpus = 1, .jobs = 4, .items = 4, .work_s = 4 * 3600.0,
				     .oldest_ms = NOW - S_MS, .wait_target_ms = 2 * HOUR_MS};
	f->offers[x].boot_ms = 10 * MIN_MS;
	f->offers[x].reclaims_per_hour = 2;
	f->set.checkpoint_every_ms = HOUR_MS;
	spot = plan_cost_per_work_s(&f->offers[x], MARKET_SPOT, HOUR_MS, 3600, 3600, 0);
	od = plan_cost_per_work_s(&f->offers[x], MARKET_ONDEMAND, HOUR_MS, 3600, 3600, 0);
	assert_true(spot > od);
	run(f);
	EXPECT_LAUNCH(f, x, MARKET_SPOT, 0);
	EXPECT(f->r.n > 0 && launched(f, x, MARKET_ONDEMAND) > 0);
	assert_contains(f->r.actions[0].reason, "cheapest per item: x on-demand");
	assert_contains(f->r.actions[0].reason, ", x spot $");

	/* Rare reclaims (one in 100 hours): spot is cheaper again. */
	f->offers[x].reclaims_per_hour = 0.01;
	run(f);
	EXPECT_LAUNCH(f, x, MARKET_ONDEMAND, 0);
	EXPECT(launched(f, x, MARKET_SPOT) > 0);
}

static void test_spot_below_min_reliability_or_above_max_price(void **state)
{
	struct fx *f = fx_reset();
	int t4 = offer(f, "t4", 0.59, 0.16, 1.0), a10g = offer(f, "a10g", 1.01, 0.35, 2.5);

	(void)state;
	/* a10g spot: $0.35/h at 2.5x, $0.0140 an item: the cheapest. */
	run(f);
	EXPECT_LAUNCH(f, a10g, MARKET_SPOT, 10);

	/* Reclaimed 0.5 times an hour: P(no reclaim in an hour) = 0.61, under
	 * min_reliability 0.9. Its spot market is left out; t4's is kept. */
	f->offers[a10g].reclaims_per_hour = 0.5;
	f->set.min_reliability = 0.9;
	run(f);
	EXPECT_LAUNCH(f, a10g, MARKET_SPOT, 0);
	EXPECT_LAUNCH(f, t4, MARKET_SPOT, 10);
	if (strstr(f->r.actions[0].reason, "a10g spot"))
		fail_msg("a10g spot was compared though below min_reliability: %s", f->r.actions[0].reason);

	/* Both below it: no spot at all, the cheapest on demand (a10g). */
	f->offers[t4].reclaims_per_hour = 0.5;
	run(f);
	EXPECT_LAUNCH(f, a10g, MARKET_ONDEMAND, 10);
	EXPECT_LAUNCH(f, t4, MARKET_SPOT, 0);

	/* max_price leaves out what costs more an hour, whatever it costs an
	 * item: under $0.30/h only t4 spot remains. */
	f->offers[t4].reclaims_per_hour = f->offers[a10g].reclaims_per_hour = 0.01;
	f->set.min_reliability = 0;
	f->set.max_price = 0.30;
	run(f);
	EXPECT_LAUNCH(f, t4, MARKET_SPOT, 10);
	EXPECT_LAUNCH(f, a10g, MARKET_SPOT, 0);
	assert_contains(f->r.actions[0].reason, "cheapest per item: t4 spot $0.0160/item");
	if (strstr(f->r.actions[0].reason, "a10g"))
		fail_msg("a10g was compared though over max_price: %s", f->r.actions[0].reason);
}

static void test_spot_spread_across_offers(void **state)
{
	struct fx *f = fx_reset();
	int t4 = offer(f, "t4", 0.59, 0.16, 1.0), a10g = offer(f, "a10g", 1.01, 0.35, 2.5);

	(void)state;
	f->cls.jobs = f->cls.items = 4;
	f->cls.work_s = 4 * 600;
	/* Share 1: all on the cheapest. */
	run(f);
	EXPECT_LAUNCH(f, a10g, MARKET_SPOT, 4);
	/* At most half of the spot fleet on one offer: 2 and 2. */
	f->set.max_share_per_offer = 0.5;
	run(f);
	EXPECT_LAUNCH(f, a10g, MARKET_SPOT, 2);
	EXPECT_LAUNCH(f, t4, MARKET_SPOT, 2);
	/* A quarter: still 2 and 2, since only two offers sell spot (an
	 * instance goes where the share is least over). */
	f->set.max_share_per_offer = 0.25;
	run(f);
	EXPECT_LAUNCH(f, a10g, MARKET_SPOT, 2);
	EXPECT_LAUNCH(f, t4, MARKET_SPOT, 2);
}

static void test_spot_failing_falls_back_to_on_demand(void **state)
{
	struct fx *f = fx_reset();
	int t4 = offer(f, "t4", 0.59, 0.16, 1.0), a10g = offer(f, "a10g", 1.01, 0.35, 2.5);

	(void)state;
	/* One failing: the other's spot is used. */
	f->offers[a10g].resting[MARKET_SPOT] = 1;
	run(f);
	EXPECT_LAUNCH(f, t4, MARKET_SPOT, 10);
	/* Every fitting spot offer failing: on demand, and the reason says so. */
	f->offers[t4].resting[MARKET_SPOT] = 1;
	run(f);
	EXPECT_LAUNCH(f, t4, MARKET_SPOT, 0);
	EXPECT_LAUNCH(f, a10g, MARKET_SPOT, 0);
	EXPECT_LAUNCH(f, a10g, MARKET_ONDEMAND, 10);
	assert_contains(f->r.actions[0].reason, "spot launches of every fitting offer failed, so on demand");
}

static void test_oldest_job_about_to_miss_its_target_on_demand(void **state)
{
	struct fx *f = fx_reset();
	int t4 = offer(f, "t4", 0.59, 0.16, 1.0);

	(void)state;
	/* Waited 30 s of 60: spot. */
	f->cls.oldest_ms = NOW - 30 * S_MS;
	run(f);
	EXPECT_LAUNCH(f, t4, MARKET_SPOT, 10);
	/* Waited 50 s of 60 (past 80%): on demand, which no reclaim delays. */
	f->cls.oldest_ms = NOW - 50 * S_MS;
	run(f);
	EXPECT_LAUNCH(f, t4, MARKET_SPOT, 0);
	EXPECT_LAUNCH(f, t4, MARKET_ONDEMAND, 10);
	assert_contains(f->r.actions[0].reason, "on demand: the oldest job is about to miss its wait target");
}

/* On demand would pass max_spend_per_hour where spot would not: spot,
 * late or not, is better than no instance. */
static void test_spot_when_on_demand_passes_a_limit(void **state)
{
	struct fx *f = fx_reset();
	int a100 = offer(f, "a100", 3.0, 1.0, 1.0);

	(void)state;
	f->set.max_spend_per_hour = 2.5;
	f->cls.oldest_ms = NOW - 50 * S_MS; /* past 80% of the target: on demand first */
	run(f);
	EXPECT_LAUNCH(f, a100, MARKET_ONDEMAND, 0);
	EXPECT_LAUNCH(f, a100, MARKET_SPOT, 2);
	assert_contains(f->r.actions[0].reason, "spot: on demand would pass a limit");
	assert_contains(f->r.actions[0].reason, "capped by max_spend_per_hour");
	/* No spot market: nothing within the limit, nothing launched. */
	f->offers[a100].price[MARKET_SPOT] = -1;
	run(f);
	EXPECT(f->r.n == 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cheapest_per_item_not_per_hour),
		cmocka_unit_test(test_measured_speed_changes_the_choice),
		cmocka_unit_test(test_spot_when_cheaper_per_item),
		cmocka_unit_test(test_spot_left_out_when_reclaims_make_it_dearer),
		cmocka_unit_test(test_spot_below_min_reliability_or_above_max_price),
		cmocka_unit_test(test_spot_spread_across_offers),
		cmocka_unit_test(test_spot_failing_falls_back_to_on_demand),
		cmocka_unit_test(test_oldest_job_about_to_miss_its_target_on_demand),
		cmocka_unit_test(test_spot_when_on_demand_passes_a_limit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
