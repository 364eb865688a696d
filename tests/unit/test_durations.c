/* What ebb knows of a job's run time before it runs (policy/durations.c):
 * worked out by hand on small histories, then the same answers along
 * serve's path (the store's newest finished jobs, read into plan()'s view
 * by view_build) and along the simulator's (each job added as it ends,
 * oldest first, as sim/known.c does). */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "common/config.h"
#include "policy/durations.h"
#include "policy/settings.h"
#include "serve/view.h"
#include "store/store.h"

#define DEFAULT_MS 60000

static int64_t estimate(const struct durations *d, int type) { return durations_estimate_ms(d, type, 0, DEFAULT_MS); }

static void test_median_by_hand(void **state)
{
	struct durations *d = durations_new();

	(void)state;
	assert_non_null(d);
	/* Nothing finished: the default; an estimate given wins always. */
	assert_int(estimate(d, 0), DEFAULT_MS);
	assert_int(estimate(d, -1), DEFAULT_MS);
	assert_int(durations_estimate_ms(d, 0, 1500, DEFAULT_MS), 1500);
	/* 5, 1, 3: sorted 1 3 5, the middle one. */
	assert_int(durations_add(d, 0, 5000), -1);
	assert_int(durations_add(d, 0, 1000), -1);
	assert_int(durations_add(d, 0, 3000), -1);
	assert_int(estimate(d, 0), 3000);
	/* An even count: 1 3 5 7, the upper middle one. */
	assert_int(durations_add(d, 0, 7000), -1);
	assert_int(estimate(d, 0), 5000);
	assert_int(durations_estimate_ms(d, 0, 2000, DEFAULT_MS), 2000);
	/* Another type is its own. */
	assert_int(estimate(d, 3), DEFAULT_MS);
	assert_int(durations_add(d, 3, 100), -1);
	assert_int(estimate(d, 3), 100);
	assert_int(estimate(d, 0), 5000);
	durations_free(d);
}

/* A type's newest 64 count: 70 runs of 1 to 70 s keep 7 to 70, whose
 * upper middle (the 33rd) is 39 s. */
static void test_newest_runs_of_a_type(void **state)
{
	struct durations *d = durations_new();

	(void)state;
	for (int k = 1; k <= 70; k++)
		assert_int(durations_add(d, 1, k * 1000), -1);
	assert_int(estimate(d, 1), 39000);
	durations_free(d);
}

static int ascending(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* In any order, with ties: after each run, the estimate is the upper
 * middle of the type's newest 64, sorted here afresh. */
static void test_newest_runs_in_any_order(void **state)
{
	struct durations *d = durations_new();
	int64_t runs[2000], newest[DURATIONS_PER_TYPE];
	uint64_t x = 0x9e3779b97f4a7c15ULL;

	(void)state;
	for (int k = 0; k < 2000; k++) {
		int n = k + 1 < DURATIONS_PER_TYPE ? k + 1 : DURATIONS_PER_TYPE;
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		/* Few values at first, many ties; then a wide spread. */
		runs[k] = (int64_t)(x % (k < 500 ? 8 : 100000)) * 1000;
		durations_add(d, 5, runs[k]);
		memcpy(newest, &runs[k + 1 - n], (size_t)n * sizeof *newest);
		qsort(newest, (size_t)n, sizeof *newest, ascending);
		if (estimate(d, 5) != newest[n / 2])
			fail_msg("after run %d (%lld ms): estimate %lld ms, the newest %d runs' upper middle %lld ms", k + 1,
				 (long long)runs[k], (long long)estimate(d, 5), n, (long long)newest[n / 2]);
	}
	durations_free(d);
}

/* The newest 1,000 jobs count: older ones leave the history, and their
 * type with them; durations_add names the type that lost one. */
static void test_history_of_a_thousand(void **state)
{
	struct durations *d = durations_new();

	(void)state;
	assert_int(durations_add(d, 0, 10000), -1); /* the oldest */
	assert_int(durations_add(d, 1, 20000), -1);
	assert_int(durations_add(d, 1, 40000), -1);
	for (int k = 3; k < DURATIONS_HISTORY; k++)
		assert_int(durations_add(d, 2, 500), -1);
	assert_int(estimate(d, 0), 10000);
	assert_int(durations_add(d, 2, 500), 0); /* 0's job leaves: 0 is unknown again */
	assert_int(estimate(d, 0), DEFAULT_MS);
	assert_int(estimate(d, 1), 40000);
	assert_int(durations_add(d, 2, 500), 1); /* 1's oldest leaves, 40 s stays */
	assert_int(estimate(d, 1), 40000);
	assert_int(durations_add(d, 1, 1000), -1); /* its last one leaves as a new one comes */
	assert_int(estimate(d, 1), 1000);
	assert_int(durations_add(d, 2, 700), -1); /* 2 loses one and gains one: itself */
	assert_int(estimate(d, 2), 500);
	/* A type that comes back after leaving starts afresh. */
	assert_int(durations_add(d, 0, 3000), 2);
	assert_int(estimate(d, 0), 3000);
	durations_free(d);
}

/* ---- serve's path and the simulator's ---- */

#define TYPES 40 /* more than serve once kept medians for (32) */
#define RUNS 1500

static uint64_t rng = 88172645463325252ULL;

static int64_t next_random(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (int64_t)(rng >> 1);
}

/* Writes j (an insert) in a batch of its own. */
static void put(struct harness_store *h, struct job *j)
{
	STORE_OK(h, store_begin(h->st));
	STORE_OK(h, store_job_insert(h->st, j));
	STORE_OK(h, store_commit(h->st));
}

static struct job job_of(const char *type, int vram, enum job_state s)
{
	struct job j = {0};

	snprintf(j.lane, sizeof j.lane, "standard");
	snprintf(j.type, sizeof j.type, "%s", type);
	snprintf(j.team, sizeof j.team, "t");
	j.state = s;
	j.gpus = 1;
	j.min_vram_gb = vram;
	j.items = 1;
	j.max_attempts = 3;
	j.created_ms = j.updated_ms = j.run_at_ms = 1;
	return j;
}

/* 1,500 jobs of 40 types (a few types much more often, so that some keep
 * 64 runs and some leave the history) finish one after the other; then a
 * job of each type is queued, each in a class of its own (its VRAM is its
 * type's number), with one more type that never finished and one job with
 * est_s. serve's view of each class holds what the shared function says
 * when fed the same jobs as the simulator feeds it. */
static void test_serve_and_sim_agree(void **state)
{
	struct harness_store *h = *state;
	struct durations *sim = durations_new();
	struct plan_settings settings;
	struct config cfg;
	struct view v;
	char name[32];
	int seen = 0;

	config_defaults(&cfg, NULL);
	plan_settings_from_config(&cfg, &settings);
	config_free(&cfg);
	for (int k = 0; k < RUNS; k++) {
		int type = next_random() % 4 ? (int)(next_random() % 5) : 5 + (int)(next_random() % (TYPES - 5));
		int64_t run_ms = 1000 + next_random() % 600000, start = 1000000 + (int64_t)k * 1000;
		struct job j;
		snprintf(name, sizeof name, "type%d", type);
		j = job_of(name, 0, JOB_SUCCEEDED);
		j.started_ms = start - run_ms;
		j.finished_ms = start;
		put(h, &j);
		assert_int(durations_add(sim, type, run_ms) >= -1, 1);
	}
	for (int type = 0; type <= TYPES; type++) {
		struct job j;
		snprintf(name, sizeof name, "type%d", type);
		j = job_of(name, type + 1, JOB_QUEUED);
		put(h, &j);
	}
	{
		struct job j = job_of("type0", 100, JOB_QUEUED);
		j.est_s = 77;
		put(h, &j);
	}
	if (view_build(&v, h->st, &settings, NULL, 5000000, NULL, 0, NULL) != 0)
		fail_msg("view_build: %s", v.error);
	assert_int(v.nclasses, TYPES + 2);
	for (int c = 0; c < v.nclasses; c++) {
		const struct plan_class *pc = &v.classes[c];
		int type = pc->min_vram_gb - 1;
		int64_t want = pc->min_vram_gb == 100 ? 77000 : durations_estimate_ms(sim, type, 0, settings.default_est_ms);
		if ((int64_t)(pc->work_s * 1000 + 0.5) != want)
			fail_msg("type%d: serve's view has %.3f s, the simulator's history %lld ms", type, pc->work_s,
				 (long long)want);
		seen += want != settings.default_est_ms;
	}
	/* Most types have runs in the history; the one never run has none. */
	assert_true(seen > TYPES / 2);
	assert_int(durations_estimate_ms(sim, TYPES, 0, settings.default_est_ms), settings.default_est_ms);
	view_free(&v);
	durations_free(sim);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_median_by_hand),
		cmocka_unit_test(test_newest_runs_of_a_type),
		cmocka_unit_test(test_newest_runs_in_any_order),
		cmocka_unit_test(test_history_of_a_thousand),
		cmocka_unit_test_setup_teardown(test_serve_and_sim_agree, harness_store_setup, harness_store_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, harness_cleanup);
}
