/* The SQLite engine's migrations that fill a new table from the rows
 * already there, run against a store taken back to the version before
 * them: what they derive must be what serve would have written had the
 * table been there all along. Engine-specific, so not in the contract
 * suite: it reaches into ebb.db with sqlite3 itself.
 *
 * Migration 7, the ledger's running sums: each closed segment split over
 * the UTC days it covers, the items of each succeeded job at its end, and
 * the sums of all time. Migration 8, when an offer's launches began to
 * fail. */
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "store/store.h"

#define DAY (86400LL * 1000)
#define D0 (20000 * DAY) /* a day in 2024, 00:00 UTC */

/* What migration 13 made, dropped. */
#define UNDO_13 "DROP TABLE tunings;"

/* What migration 12 made, dropped. */
#define UNDO_12 "DROP TABLE job_attempts;"

/* What migration 11 made, dropped. */
#define UNDO_11 "DROP TABLE job_logs; DROP TABLE job_log_meta;"

/* What migration 10 made, dropped. */
#define UNDO_10 "DROP TABLE team_budgets; ALTER TABLE instances DROP COLUMN team;"

/* What migration 9 made, dropped. */
#define UNDO_9 "ALTER TABLE segments DROP COLUMN gpus;"

/* What migration 16 made, dropped. */
#define UNDO_16 "ALTER TABLE segments DROP COLUMN gpu_part;"

/* What migration 15 made, dropped. */
#define UNDO_15 "DROP INDEX jobs_class_order;"

/* What migration 14 made, dropped. */
#define UNDO_14 "DROP INDEX jobs_queued_class; DROP INDEX jobs_leased_on;"
/* What migration 8 made, dropped. */
#define UNDO_8                                                                                            \
	"DROP TABLE alerts; DROP INDEX jobs_dead; ALTER TABLE offer_stats DROP COLUMN failing_since;"    \
	" ALTER TABLE offer_stats DROP COLUMN lost; ALTER TABLE offer_stats DROP COLUMN last_lost_at;"

/* Takes the database back to version `to`, dropping what came after. */
static void back_to(struct harness_store *h, int to, const char *undo)
{
	sqlite3 *db;
	char *msg = NULL, sql[1024];

	store_close(h->st);
	h->st = NULL;
	assert_int(sqlite3_open(harness_fmt("%s/ebb.db", h->dir), &db), SQLITE_OK);
	snprintf(sql, sizeof sql, "%s DELETE FROM schema_version WHERE version > %d;", undo, to);
	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
		fail_msg("%s: %s", sql, msg);
	sqlite3_close(db);
	h->st = harness_store_open(h->cfg, h->dir);
}

static void ledger_sums_filled_from_the_segments(void **state)
{
	struct harness_store *h = *state;
	struct instance i = {.market = MARKET_SPOT, .state = INST_BUSY, .gpus = 2, .launched_ms = D0 - 1000},
			k = {.market = MARKET_ONDEMAND, .state = INST_TERMINATED, .gpus = 0, .launched_ms = D0};
	/* Only a run that succeeded counts its items. */
	struct job j = {.state = JOB_SUCCEEDED, .gpus = 1, .items = 30, .items_done = 30, .items_start = 10,
			.started_ms = D0 + 500, .finished_ms = D0 + 1500},
		   failed = {.state = JOB_FAILED, .gpus = 1, .items = 5, .items_done = 5, .started_ms = D0,
			     .finished_ms = D0 + 10};
	struct segment g[] = {
		{.kind = "boot", .start_ms = D0 - 1000, .end_ms = D0 + 500, .cost = 3},
		{.kind = "job", .start_ms = D0 + 500, .end_ms = D0 + 1500, .cost = 0.5},
		{.kind = "idle", .start_ms = D0 + 1500},
		{.kind = "billing", .start_ms = D0 + 2 * DAY, .end_ms = D0 + 2 * DAY + 100, .cost = 0.25},
	};

	snprintf(i.offer, sizeof i.offer, "a100");
	snprintf(k.offer, sizeof k.offer, "t4");
	snprintf(j.lane, sizeof j.lane, "standard");
	snprintf(j.team, sizeof j.team, "ml");
	snprintf(j.type, sizeof j.type, "train");
	snprintf(failed.lane, sizeof failed.lane, "standard");
	snprintf(failed.team, sizeof failed.team, "cv");
	snprintf(failed.type, sizeof failed.type, "train");
	STORE_OK(h, store_begin(h->st));
	STORE_OK(h, store_instance_insert(h->st, &i));
	STORE_OK(h, store_instance_insert(h->st, &k));
	j.instance = i.id;
	failed.instance = i.id;
	STORE_OK(h, store_job_insert(h->st, &j));
	STORE_OK(h, store_job_insert(h->st, &failed));
	for (size_t n = 0; n < sizeof g / sizeof *g; n++) {
		g[n].instance = n == 3 ? k.id : i.id;
		g[n].job = n == 1 ? j.id : 0;
		STORE_OK(h, store_segment_open(h->st, &g[n]));
	}
	STORE_OK(h, store_commit(h->st));
	back_to(h, 6, UNDO_16 UNDO_15 UNDO_14 UNDO_13 UNDO_12 UNDO_11 UNDO_10 UNDO_9 UNDO_8 "DROP TABLE ledger_sums;");
	/* 2 GPUs; the t4's 0 count as 1; the open idle segment is not summed. */
	assert_string_equal(harness_ledger_sums(h, STORE_ALL_TIME), "a100 spot boot -: 1500ms 3000gpu-ms $3 items=0"
						    " | a100 spot job ml: 1000ms 2000gpu-ms $0.5 items=20"
						    " | t4 on-demand billing -: 100ms 100gpu-ms $0.25 items=0");
	assert_string_equal(harness_ledger_sums(h, D0 / DAY), "a100 spot boot -: 500ms 1000gpu-ms $1 items=0"
					       " | a100 spot job ml: 1000ms 2000gpu-ms $0.5 items=20"
					       " | t4 on-demand billing -: 100ms 100gpu-ms $0.25 items=0");
	assert_string_equal(harness_ledger_sums(h, D0 / DAY + 1), "t4 on-demand billing -: 100ms 100gpu-ms $0.25 items=0");
}

static int see_failing(void *arg, const struct offer_stat *o)
{
	return harness_row(arg, "%s %s: failing_since=%lld", o->offer, market_name(o->market),
			   (long long)o->failing_since_ms);
}

/* Migration 8: an offer whose last launch failed is failing since that
 * failure (the first of its run is not known); one whose last launch came
 * after its last failure is not failing. */
static void failing_since_from_the_last_failure(void **state)
{
	struct harness_store *h = *state;
	struct offer_stat failing = {.offer = "a", .market = MARKET_SPOT, .launches = 3, .launch_failures = 2,
				     .last_failure_ms = 900, .last_launch_ms = 900},
			  working = {.offer = "b", .market = MARKET_SPOT, .launches = 2, .launch_failures = 1,
				     .last_failure_ms = 500, .last_launch_ms = 800},
			  never = {.offer = "c", .market = MARKET_ONDEMAND, .runs = 1};
	struct harness_rows r = {0};

	STORE_OK(h, store_begin(h->st));
	STORE_OK(h, store_offer_stat_add(h->st, &failing));
	STORE_OK(h, store_offer_stat_add(h->st, &working));
	STORE_OK(h, store_offer_stat_add(h->st, &never));
	STORE_OK(h, store_commit(h->st));
	back_to(h, 7, UNDO_16 UNDO_15 UNDO_14 UNDO_13 UNDO_12 UNDO_11 UNDO_10 UNDO_9 UNDO_8);
	STORE_OK(h, store_offer_stats(h->st, see_failing, &r));
	assert_string_equal(harness_rows_text(&r, 1),
			    "a spot: failing_since=900 | b spot: failing_since=0 | c on-demand: failing_since=0");
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, harness_store_setup, harness_store_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(ledger_sums_filled_from_the_segments),
		T(failing_since_from_the_last_failure),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
