/* GET /v1/report over a ledger longer than one turn of serve's loop walks
 * (api_report.c's REPORT_SLICE_IDS segment ids a turn, serve/slices.h):
 * the figures are those of the whole ledger, as the running sums the
 * ledger keeps (ledger_sums) have them, and requests made meanwhile are
 * answered. The store is filled through the ledger itself on a virtual
 * clock before serve starts on it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "common/clock.h"
#include "serve/ledger.h"

#define INSTANCES 2500
#define MINUTES 9 /* an instance's life: a boot minute, then idle and busy in turn */
#define START_MS (20000LL * 86400 * 1000)

static const struct offer offers[] = {{.name = "a10", .gpus = 1, .price = {0.6, 0.25}}};

/* An instance's life through the ledger: launched, a minute in each
 * state, ended: MINUTES segments. */
static void live(struct store *st, struct ledger *l, struct clock *clk, int k)
{
	struct instance inst = {.market = k % 3 ? MARKET_SPOT : MARKET_ONDEMAND, .state = INST_REQUESTED, .gpus = 1};

	snprintf(inst.offer, sizeof inst.offer, "a10");
	inst.launched_ms = inst.updated_ms = clock_now(clk);
	if (store_instance_insert(st, &inst) != 0 || ledger_transition(l, &inst, INST_REQUESTED) != 0)
		fail_msg("launch: %s", store_error(st));
	for (int m = 1; m <= MINUTES; m++) {
		enum instance_state to = m == MINUTES ? INST_TERMINATED : m % 2 ? INST_IDLE : INST_BUSY;
		clock_advance(clk, 60 * 1000);
		if (ledger_transition(l, &inst, to) != 0)
			fail_msg("transition: %s", store_error(st));
		inst.state = to;
	}
}

static int add_cost(void *arg, const struct ledger_sum *sum)
{
	*(double *)arg += sum->cost;
	return 0;
}

static void a_long_ledger_is_reported_whole(void **state)
{
	struct harness_server *s = harness_serve("[offer.a10]\ngpus = 1\nprice_ondemand = 0.6\nprice_spot = 0.25\n", 0);
	struct harness_async report;
	struct config cfg;
	struct clock clk;
	struct ledger l;
	struct store *st;
	json_t *r, *health;
	double want = 0;
	int64_t last = 0;

	(void)state;
	assert_int(harness_server_stop(s), 0);
	config_defaults(&cfg, &(struct conf_plugins){store_plugins, NULL});
	st = harness_store_open(&cfg, s->data);
	clock_init_virtual(&clk, START_MS);
	l = (struct ledger){st, &clk, offers, 1};
	assert_int(store_begin(st), 0);
	for (int k = 0; k < INSTANCES; k++)
		live(st, &l, &clk, k);
	assert_int(store_commit(st), 0);
	assert_int(store_ledger_sums(st, -1, add_cost, &want), 0);
	assert_int(store_segment_last_id(st, &last), 0);
	store_close(st);
	config_free(&cfg);
	assert_true(last > 2 * 8000); /* three slices at least */
	assert_true(want > 0);

	harness_server_start(s);
	harness_async_start(&report, s, "GET", "/v1/report?by=offer", NULL);
	health = harness_get(s, "/healthz");
	json_decref(health);
	assert_int(harness_async_join(&report, &r), 200);
	if (fabs(JNUM(r, "total.cost_usd") - want) > 1e-6 * want)
		fail_msg("the report's total $%.6f, the ledger's sums $%.6f", JNUM(r, "total.cost_usd"), want);
	assert_int(JINT(r, "total.instances"), INSTANCES);
	assert_int((int64_t)JNUM(r, "total.seconds.billed"), (int64_t)INSTANCES * MINUTES * 60);
	json_decref(r);
	assert_int(harness_server_stop(s), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(a_long_ledger_is_reported_whole, harness_cleanup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
