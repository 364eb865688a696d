/* The rules serve and the simulator share to lease and to build plan()'s
 * view (src/policy/lease_order.c, src/policy/classes.c): the lease order
 * key by key, the rank of a lane the config does not name, and queued
 * jobs of several priorities and lanes folded into plan()'s classes. */
#include <stdlib.h>

#include "common/config.h"
#include "harness.h"
#include "policy/classes.h"
#include "policy/lease_order.h"
#include "policy/settings.h"

static void settings(struct plan_settings *st)
{
	struct config cfg;
	char err[400];

	config_defaults(&cfg, NULL);
	assert_int(config_set(&cfg, "lane.express", "wait_target", "10s", err, sizeof err), 0);
	assert_int(config_check(&cfg, err, sizeof err), 0);
	plan_settings_from_config(&cfg, st);
	config_free(&cfg);
}

/* Each key decides only when those before it are equal: lane, then the
 * higher priority, then a job put back (whatever its id), then the id. */
static void test_lease_order_key_by_key(void **state)
{
	struct lease_key keys[] = {
		{.lane_rank = 2, .priority = 1000, .seq = 0, .id = 1},
		{.lane_rank = 1, .priority = 0, .seq = 0, .id = 2},
		{.lane_rank = 1, .priority = 0, .seq = 0, .id = 3},
		{.lane_rank = 1, .priority = 0, .seq = lease_seq(9, 1), .id = 9},
		{.lane_rank = 1, .priority = 0, .seq = lease_seq(8, 1), .id = 8},
		{.lane_rank = 1, .priority = 5, .seq = 0, .id = 10},
		{.lane_rank = 0, .priority = -1000, .seq = 0, .id = 11},
	};
	const int64_t want[] = {11, 10, 8, 9, 2, 3, 1};

	(void)state;
	assert_int(lease_seq(7, 0), 0);
	qsort(keys, sizeof keys / sizeof *keys, sizeof *keys, lease_compare);
	for (size_t k = 0; k < sizeof want / sizeof *want; k++)
		assert_int(keys[k].id, want[k]);
	assert_false(lease_before(&keys[0], &keys[0]));
}

/* A lane not in [queue] lanes ranks after every one that is. */
static void test_unknown_lanes_rank_last(void **state)
{
	struct plan_settings st;

	(void)state;
	settings(&st);
	assert_int(lease_lane_rank(&st, "express"), 0);
	assert_int(lease_lane_rank(&st, "batch"), 2);
	assert_int(lease_lane_rank(&st, "nosuch"), 3);
	assert_int(lease_lane_rank(&st, "other"), 3);
}

/* Rows of one (GPUs, lane, team) and several priorities are one class,
 * with its highest priority and how many jobs have it; a lane not
 * configured is a class of its own, after the others, waiting the
 * default target; a full array asks its caller for room. */
static void test_rows_fold_into_classes(void **state)
{
	struct plan_settings st;
	struct plan_class cls[3];
	struct plan_class *c;
	int n = 0;

	(void)state;
	settings(&st);
	c = classes_find(cls, &n, 3, &st, 1, 1, 0, lease_lane_rank(&st, "express"), 0, 500);
	classes_add_queued(c, 0, 4, 4, 40, 500);
	c = classes_find(cls, &n, 3, &st, 1, 1, 0, lease_lane_rank(&st, "express"), 0, 300);
	classes_add_queued(c, 7, 2, 3, 20, 300);
	c = classes_find(cls, &n, 3, &st, 1, 1, 0, lease_lane_rank(&st, "express"), 0, 900);
	classes_add_queued(c, 7, 1, 1, 5, 900);
	classes_add_queued(c, -3, 5, 5, 50, 100);
	assert_int(n, 1);
	assert_string_equal(cls[0].lane, "express");
	assert_int(cls[0].jobs, 12);
	assert_int(cls[0].items, 13);
	assert_true(cls[0].work_s == 115);
	assert_int(cls[0].oldest_ms, 100);
	assert_int(cls[0].top_priority, 7);
	assert_int(cls[0].top_jobs, 3);
	assert_int(cls[0].wait_target_ms, 10000);

	c = classes_find(cls, &n, 3, &st, 1, 1, 0, lease_lane_rank(&st, "nosuch"), 0, 50);
	classes_add_queued(c, 0, 1, 1, 1, 50);
	assert_int(n, 2);
	assert_int(c->lane_rank, st.nlanes);
	assert_int(c->wait_target_ms, st.default_wait_target_ms);
	c = classes_find(cls, &n, 3, &st, 8, 1, 0, 0, 0, 0);
	assert_non_null(c);
	assert_null(classes_find(cls, &n, 3, &st, 2, 1, 0, 0, 0, 0));
	assert_int(n, 3);
}

/* A type's gpu_share makes a class of its own beside whole-GPU jobs of
 * the same GPUs, lane and team; a type without a section takes a whole
 * GPU. */
static void test_shares_are_classes_apart(void **state)
{
	struct type_conf types[] = {{.name = "embed", .gpu_share = 0.25}};
	struct plan_settings st;
	struct plan_class cls[3], *whole, *quarter;
	int n = 0;

	(void)state;
	settings(&st);
	st.types = types;
	st.ntypes = 1;
	assert_true(classes_gpu_share(&st, "embed") == 0.25);
	assert_true(classes_gpu_share(&st, "train") == 1);
	whole = classes_find(cls, &n, 3, &st, 1, classes_gpu_share(&st, "train"), 0, 0, 0, 0);
	quarter = classes_find(cls, &n, 3, &st, 1, classes_gpu_share(&st, "embed"), 0, 0, 0, 0);
	assert_int(n, 2);
	assert_true(whole != quarter && quarter->gpu_share == 0.25 && whole->gpu_share == 1);
	assert_ptr_equal(classes_find(cls, &n, 3, &st, 1, 0.25, 0, 0, 0, 0), quarter);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lease_order_key_by_key),
		cmocka_unit_test(test_unknown_lanes_rank_last),
		cmocka_unit_test(test_rows_fold_into_classes),
		cmocka_unit_test(test_shares_are_classes_apart),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
