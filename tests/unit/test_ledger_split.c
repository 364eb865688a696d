/* The ledger with jobs side by side on one instance, on a real store and
 * a virtual clock: each job pays for its GPUs' share of the instance
 * while it runs, the GPUs no job holds are idle, and the segments add up
 * to the instance's bill. Every figure is computed by hand below. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/config.h"
#include "harness.h"
#include "serve/ledger.h"
#include "store/store.h"

/* A 4-GPU offer at $8/h billed by the second: $1/1,800,000 a GPU-ms. */
#define T0 1000000 /* the clock's start: a segment open has its end at 0 */
#define GPU_MS_USD (1.0 / 1800000.0)

struct split {
	struct harness_store *h;
	struct clock clock;
	struct offer offer;
	struct ledger ledger;
	struct instance inst;
};

static int64_t leased_typed(struct split *s, int gpus, const char *team, const char *type)
{
	struct job j = {.state = JOB_LEASED, .gpus = gpus, .items = 1, .instance = s->inst.id,
			.started_ms = clock_now(&s->clock)};

	snprintf(j.lane, sizeof j.lane, "standard");
	snprintf(j.type, sizeof j.type, "%s", type);
	snprintf(j.team, sizeof j.team, "%s", team);
	STORE_OK(s->h, store_job_insert(s->h->st, &j));
	return j.id;
}

static int64_t leased_job(struct split *s, int gpus, const char *team) { return leased_typed(s, gpus, team, "train"); }

static void job_ends(struct split *s, int64_t id)
{
	struct job j;

	STORE_OK(s->h, store_job_get(s->h->st, id, &j));
	j.state = JOB_SUCCEEDED;
	j.items_done = 1;
	j.finished_ms = clock_now(&s->clock);
	STORE_OK(s->h, store_job_update(s->h->st, &j));
	job_free(&j);
}

/* The instance goes to state at `at_ms` (from T0), shown running job. */
static void move(struct split *s, int64_t at_ms, enum instance_state state, int64_t job)
{
	clock_advance(&s->clock, T0 + at_ms - clock_now(&s->clock));
	s->inst.job_id = job;
	STORE_OK(s->h, ledger_transition(&s->ledger, &s->inst, state));
	s->inst.state = state;
	STORE_OK(s->h, store_instance_update(s->h->st, &s->inst));
}

static double job_cost(struct split *s, int64_t id)
{
	struct job j;
	double cost;

	STORE_OK(s->h, store_job_get(s->h->st, id, &j));
	cost = j.cost;
	job_free(&j);
	return cost;
}

#define assert_usd(got, want)                                                                                \
	do {                                                                                                \
		double got_ = (got), want_ = (want);                                                        \
		if (fabs(got_ - want_) > 1e-12)                                                             \
			fail_msg("%s is $%.9f, expected $%.9f", #got, got_, want_);                         \
	} while (0)

/* From 0 to 20 s: A (1 GPU, team red) runs 1-10 s, B (2 GPUs, team blue)
 * 4-16 s. By hand, in GPU-ms: A 1 x 9000 = 9000, B 2 x 12000 = 24000;
 * idle 4 x 1000 + 3 x 3000 + 1 x 6000 + 2 x 6000 + 4 x 4000 = 47000; in
 * all 80000 = 4 GPUs x 20 s, the bill. */
static void jobs_side_by_side_pay_their_share(void **state)
{
	struct split s = {.h = *state};
	int64_t a, b;

	clock_init_virtual(&s.clock, T0);
	s.offer = (struct offer){.name = "quad", .gpus = 4, .price = {8.0, -1}, .billing = BILL_PER_SECOND};
	s.ledger = (struct ledger){.store = s.h->st, .clock = &s.clock, .offers = &s.offer, .noffers = 1};
	s.inst = (struct instance){.market = MARKET_ONDEMAND, .state = INST_BOOTING, .gpus = 4, .launched_ms = T0};
	snprintf(s.inst.offer, sizeof s.inst.offer, "quad");
	STORE_OK(s.h, store_begin(s.h->st));
	STORE_OK(s.h, store_instance_insert(s.h->st, &s.inst));
	move(&s, 0, INST_IDLE, 0);
	clock_advance(&s.clock, 1000);
	a = leased_job(&s, 1, "red");
	move(&s, 1000, INST_BUSY, a);
	clock_advance(&s.clock, 3000);
	b = leased_job(&s, 2, "blue");
	move(&s, 4000, INST_BUSY, b);
	clock_advance(&s.clock, 6000);
	job_ends(&s, a);
	move(&s, 10000, INST_BUSY, b);
	clock_advance(&s.clock, 6000);
	job_ends(&s, b);
	move(&s, 16000, INST_IDLE, 0);
	move(&s, 20000, INST_TERMINATED, 0);
	STORE_OK(s.h, store_commit(s.h->st));

	assert_usd(job_cost(&s, a), 9000 * GPU_MS_USD);
	assert_usd(job_cost(&s, b), 24000 * GPU_MS_USD);
	assert_usd(s.inst.cost, 80000 * GPU_MS_USD);
	assert_int(s.inst.billed_ms, 20000);
	/* The sums: instance time by share (idle 47000 / 4 = 11750 ms), GPU
	 * time whole, and the same costs. */
	assert_string_equal(harness_ledger_sums(s.h, STORE_ALL_TIME),
			    harness_fmt("quad on-demand idle -: 11750ms 47000gpu-ms $%g items=0"
					" | quad on-demand job blue: 6000ms 24000gpu-ms $%g items=1"
					" | quad on-demand job red: 2250ms 9000gpu-ms $%g items=1",
					47000 * GPU_MS_USD, 24000 * GPU_MS_USD, 9000 * GPU_MS_USD));
}

/* One job holding all the instance's GPUs: one segment, the whole price,
 * as an instance of one job always was. */
static void one_job_on_all_gpus_pays_all(void **state)
{
	struct split s = {.h = *state};
	int64_t a;

	clock_init_virtual(&s.clock, T0);
	s.offer = (struct offer){.name = "quad", .gpus = 4, .price = {8.0, -1}, .billing = BILL_PER_SECOND};
	s.ledger = (struct ledger){.store = s.h->st, .clock = &s.clock, .offers = &s.offer, .noffers = 1};
	s.inst = (struct instance){.market = MARKET_ONDEMAND, .state = INST_BOOTING, .gpus = 4, .launched_ms = T0};
	snprintf(s.inst.offer, sizeof s.inst.offer, "quad");
	STORE_OK(s.h, store_begin(s.h->st));
	STORE_OK(s.h, store_instance_insert(s.h->st, &s.inst));
	move(&s, 0, INST_IDLE, 0);
	a = leased_job(&s, 4, "red");
	move(&s, 0, INST_BUSY, a);
	clock_advance(&s.clock, 5000);
	job_ends(&s, a);
	move(&s, 5000, INST_IDLE, 0);
	move(&s, 5000, INST_TERMINATED, 0);
	STORE_OK(s.h, store_commit(s.h->st));
	assert_usd(job_cost(&s, a), 4 * 5000 * GPU_MS_USD);
	assert_usd(s.inst.cost, 4 * 5000 * GPU_MS_USD);
}

/* GPUs shared: on a 1-GPU instance at $3.6/h ($0.000001 a GPU-ms), two
 * jobs of a type of gpu_share 1/2, A from 1 s to 9 s and B from 3 s to
 * 11 s, the instance alive 12 s. By hand, in GPU-ms: A 0.5 x 8000 = 4000,
 * B 0.5 x 8000 = 4000; idle 1000 (0-1 s) + 0.5 x 2000 (1-3 s) + 0.5 x
 * 2000 (9-11 s) + 1000 (11-12 s) = 4000; in all 12000 = the bill of 12 s,
 * to the cent and below. */
static void two_halves_split_one_gpu(void **state)
{
	struct split s = {.h = *state};
	struct type_conf types[] = {{.name = "embed", .gpu_share = 0.5}, {.name = "train", .gpu_share = 1}};
	struct config cfg = {.types = types, .ntypes = 2};
	int64_t a, b;

	clock_init_virtual(&s.clock, T0);
	s.offer = (struct offer){.name = "one", .gpus = 1, .price = {3.6, -1}, .billing = BILL_PER_SECOND};
	s.ledger = (struct ledger){.store = s.h->st, .clock = &s.clock, .offers = &s.offer, .noffers = 1, .cfg = &cfg};
	s.inst = (struct instance){.market = MARKET_ONDEMAND, .state = INST_BOOTING, .gpus = 1, .launched_ms = T0};
	snprintf(s.inst.offer, sizeof s.inst.offer, "one");
	STORE_OK(s.h, store_begin(s.h->st));
	STORE_OK(s.h, store_instance_insert(s.h->st, &s.inst));
	move(&s, 0, INST_IDLE, 0);
	clock_advance(&s.clock, 1000);
	a = leased_typed(&s, 1, "red", "embed");
	move(&s, 1000, INST_BUSY, a);
	clock_advance(&s.clock, 2000);
	b = leased_typed(&s, 1, "blue", "embed");
	move(&s, 3000, INST_BUSY, b);
	clock_advance(&s.clock, 6000);
	job_ends(&s, a);
	move(&s, 9000, INST_BUSY, b);
	clock_advance(&s.clock, 2000);
	job_ends(&s, b);
	move(&s, 11000, INST_IDLE, 0);
	move(&s, 12000, INST_TERMINATED, 0);
	STORE_OK(s.h, store_commit(s.h->st));

	assert_usd(job_cost(&s, a), 4000 * 0.000001);
	assert_usd(job_cost(&s, b), 4000 * 0.000001);
	assert_usd(s.inst.cost, 12000 * 0.000001);
	assert_int(s.inst.billed_ms, 12000);
	assert_string_equal(harness_ledger_sums(s.h, STORE_ALL_TIME),
			    harness_fmt("one on-demand idle -: 4000ms 4000gpu-ms $%g items=0"
					" | one on-demand job blue: 4000ms 4000gpu-ms $%g items=1"
					" | one on-demand job red: 4000ms 4000gpu-ms $%g items=1",
					4000 * 0.000001, 4000 * 0.000001, 4000 * 0.000001));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(jobs_side_by_side_pay_their_share, harness_store_setup,
						harness_store_teardown),
		cmocka_unit_test_setup_teardown(one_job_on_all_gpus_pays_all, harness_store_setup,
						harness_store_teardown),
		cmocka_unit_test_setup_teardown(two_halves_split_one_gpu, harness_store_setup, harness_store_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
