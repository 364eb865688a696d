/* Billing (src/common/offer.c): offer_billed_ms rounds a lifetime up to the
 * offer's unit and to its minimum, offer_cost prices it on a market; and
 * offers_from_config reads the billing rule, prices and reliability from
 * a config file. Every value is exact. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "common/offer.h"

#define S 1000LL
#define MIN (60 * S)
#define HOUR (60 * MIN)

static struct offer billed_by(enum billing b, int64_t minimum_ms)
{
	struct offer o;

	memset(&o, 0, sizeof o);
	snprintf(o.name, sizeof o.name, "x");
	o.gpus = 1;
	o.billing = b;
	o.billing_minimum_ms = minimum_ms;
	o.price[MARKET_ONDEMAND] = 3.6; /* one tenth of a cent per second */
	o.price[MARKET_SPOT] = 1.08;
	o.speed = 1;
	return o;
}

/* cmocka's float check with the expression in the message. */
#define assert_usd(got, want)                                                                                   \
	do {                                                                                                    \
		double got_ = (got), want_ = (want);                                                            \
		if (fabs(got_ - want_) > 1e-12)                                                                 \
			fail_msg("%s:%d: %s is %.15f, expected %.15f", __FILE__, __LINE__, #got, got_, want_); \
	} while (0)

static void test_per_second_with_a_minimum(void **state)
{
	struct offer o = billed_by(BILL_PER_SECOND, MIN);

	(void)state;
	/* Under the minimum: the minimum, whatever the lifetime. */
	assert_int(offer_billed_ms(&o, 0), MIN);
	assert_int(offer_billed_ms(&o, 1), MIN);
	assert_int(offer_billed_ms(&o, 59 * S + 999), MIN);
	assert_int(offer_billed_ms(&o, MIN), MIN);
	assert_int(offer_billed_ms(&o, -5 * S), MIN); /* a clock step back is not a refund */
	/* Past it: every started second. */
	assert_int(offer_billed_ms(&o, MIN + 1), 61 * S);
	assert_int(offer_billed_ms(&o, 61 * S), 61 * S);
	assert_int(offer_billed_ms(&o, 61 * S + 500), 62 * S);
	assert_int(offer_billed_ms(&o, HOUR + 1), HOUR + S);
	/* $3.60/h is $0.001 a second. */
	assert_usd(offer_cost(&o, MARKET_ONDEMAND, offer_billed_ms(&o, 1)), 0.06);
	assert_usd(offer_cost(&o, MARKET_ONDEMAND, offer_billed_ms(&o, 61 * S + 500)), 0.062);
	assert_usd(offer_cost(&o, MARKET_SPOT, offer_billed_ms(&o, 61 * S + 500)), 0.0186);
	assert_usd(offer_cost(&o, MARKET_ONDEMAND, offer_billed_ms(&o, HOUR + 1)), 3.601);

	/* No minimum: a zero lifetime costs nothing, a started second a second. */
	o = billed_by(BILL_PER_SECOND, 0);
	assert_int(offer_billed_ms(&o, 0), 0);
	assert_int(offer_billed_ms(&o, 1), S);
	assert_int(offer_billed_ms(&o, S), S);
	assert_int(offer_billed_ms(&o, S + 1), 2 * S);
	assert_usd(offer_cost(&o, MARKET_ONDEMAND, offer_billed_ms(&o, 0)), 0);
	assert_usd(offer_cost(&o, MARKET_ONDEMAND, offer_billed_ms(&o, S + 1)), 0.002);
}

static void test_per_minute(void **state)
{
	struct offer o = billed_by(BILL_PER_MINUTE, MIN);

	(void)state;
	assert_int(offer_billed_ms(&o, 0), MIN);
	assert_int(offer_billed_ms(&o, 1), MIN);
	assert_int(offer_billed_ms(&o, MIN), MIN);
	assert_int(offer_billed_ms(&o, MIN + 1), 2 * MIN);
	assert_int(offer_billed_ms(&o, 2 * MIN - 1), 2 * MIN);
	assert_int(offer_billed_ms(&o, HOUR + 1), HOUR + MIN);
	/* $3.60/h is $0.06 a minute. */
	assert_usd(offer_cost(&o, MARKET_ONDEMAND, offer_billed_ms(&o, MIN + 1)), 0.12);
	assert_usd(offer_cost(&o, MARKET_ONDEMAND, offer_billed_ms(&o, 61 * MIN + 1)), 3.72);

	/* A minimum of 10 minutes holds over the rounding. */
	o = billed_by(BILL_PER_MINUTE, 10 * MIN);
	assert_int(offer_billed_ms(&o, MIN + 1), 10 * MIN);
	assert_int(offer_billed_ms(&o, 10 * MIN + 1), 11 * MIN);
	assert_usd(offer_cost(&o, MARKET_ONDEMAND, offer_billed_ms(&o, S)), 0.6);
}

static void test_per_hour(void **state)
{
	struct offer o = billed_by(BILL_PER_HOUR, MIN);

	(void)state;
	assert_int(offer_billed_ms(&o, 0), MIN); /* no hour started: the minimum alone */
	assert_int(offer_billed_ms(&o, 1), HOUR); /* a started hour is over the minimum */
	assert_int(offer_billed_ms(&o, HOUR), HOUR);
	assert_int(offer_billed_ms(&o, HOUR + 1), 2 * HOUR);
	assert_int(offer_billed_ms(&o, 25 * HOUR - 1), 25 * HOUR);
	assert_usd(offer_cost(&o, MARKET_ONDEMAND, offer_billed_ms(&o, 5 * MIN)), 3.6);
	assert_usd(offer_cost(&o, MARKET_ONDEMAND, offer_billed_ms(&o, HOUR + 1)), 7.2);
	assert_usd(offer_cost(&o, MARKET_SPOT, offer_billed_ms(&o, HOUR + 1)), 2.16);
}

static void test_prices_not_sold_or_free(void **state)
{
	struct offer o = billed_by(BILL_PER_SECOND, 0);

	(void)state;
	o.price[MARKET_SPOT] = -1; /* not sold on spot: costs nothing, never negative */
	assert_usd(offer_cost(&o, MARKET_SPOT, HOUR), 0);
	o.price[MARKET_ONDEMAND] = 0;
	assert_usd(offer_cost(&o, MARKET_ONDEMAND, HOUR), 0);
	/* shared/FACTS.md: an AWS g5.xlarge (A10G) at $1.01/h on demand, $0.35/h
	 * spot, billed per second after its first minute. */
	o = billed_by(BILL_PER_SECOND, MIN);
	o.price[MARKET_ONDEMAND] = 1.01;
	o.price[MARKET_SPOT] = 0.35;
	assert_usd(offer_cost(&o, MARKET_ONDEMAND, offer_billed_ms(&o, 90 * MIN + 200)), 1.01 * 5401 / 3600);
	assert_usd(offer_cost(&o, MARKET_SPOT, offer_billed_ms(&o, 20 * S)), 0.35 / 60);
}

static void test_offers_from_config(void **state)
{
	const char *dir = harness_tmpdir();
	const char *path = harness_fmt("%s/offers.conf", dir);
	struct offer offers[8];
	struct config cfg;
	char err[512];
	int n;

	(void)state;
	harness_write_file(path, "[offer.t4]\nprice_ondemand = 0.59\nprice_spot = 0.16\nbilling = per-second\n"
				 "billing_minimum = 0s\nreliability = 0.9\nvram_gb = 16\n"
				 "[offer.a10g]\nprice_ondemand = 1.01\nbilling = per-minute\nbilling_minimum = 10m\n"
				 "speed = 2.5\nboot = 4m\n"
				 "[offer.a100x8]\ngpus = 8\nvram_gb = 40\nprice_spot = 12.5\nbilling = per-hour\n");
	if (config_load(&cfg, NULL, path, err, sizeof err) != 0)
		fail_msg("config_load: %s", err);
	n = offers_from_config(&cfg, offers, 8);
	assert_int(n, 3);

	assert_string_equal(offers[0].name, "t4");
	assert_int(offers[0].billing, BILL_PER_SECOND);
	assert_int(offers[0].vram_gb, 16);
	assert_usd(offers[0].price[MARKET_SPOT], 0.16);
	assert_usd(offers[0].reclaims_per_hour, -log(0.9));
	assert_int(offer_billed_ms(&offers[0], 0), 0);
	assert_int(offer_billed_ms(&offers[0], 1500), 2 * S);

	assert_string_equal(offers[1].name, "a10g");
	assert_int(offers[1].billing, BILL_PER_MINUTE);
	assert_int(offers[1].boot_ms, 4 * MIN);
	assert_usd(offers[1].speed, 2.5);
	assert_true(offers[1].price[MARKET_SPOT] < 0); /* no spot price: not sold on spot */
	assert_int(offer_billed_ms(&offers[1], 11 * MIN + 1), 12 * MIN);
	assert_int(offer_billed_ms(&offers[1], 1), 10 * MIN);

	assert_int(offers[2].gpus, 8);
	assert_int(offers[2].billing, BILL_PER_HOUR);
	assert_true(offers[2].price[MARKET_ONDEMAND] < 0);
	assert_int(offer_billed_ms(&offers[2], 61 * MIN), 2 * HOUR); /* default minimum 1m < an hour */
	assert_usd(offer_cost(&offers[2], MARKET_SPOT, offer_billed_ms(&offers[2], 61 * MIN)), 25.0);
	config_free(&cfg);

	/* No offer configured: the one free default, billed per second. */
	config_defaults(&cfg, NULL);
	n = offers_from_config(&cfg, offers, 8);
	assert_int(n, 1);
	assert_string_equal(offers[0].name, "default");
	assert_int(offers[0].billing, BILL_PER_SECOND);
	assert_usd(offer_cost(&offers[0], MARKET_ONDEMAND, offer_billed_ms(&offers[0], HOUR)), 0);
	config_free(&cfg);
}

static void test_market_names(void **state)
{
	(void)state;
	assert_string_equal(market_name(MARKET_SPOT), "spot");
	assert_string_equal(market_name(MARKET_ONDEMAND), "on-demand");
	assert_int(market_parse("spot"), MARKET_SPOT);
	assert_int(market_parse("on-demand"), MARKET_ONDEMAND);
	assert_int(market_parse("ondemand"), MARKET_ONDEMAND);
	assert_int(market_parse("reserved"), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_per_second_with_a_minimum),
		cmocka_unit_test(test_per_minute),
		cmocka_unit_test(test_per_hour),
		cmocka_unit_test(test_prices_not_sold_or_free),
		cmocka_unit_test_teardown(test_offers_from_config, harness_cleanup),
		cmocka_unit_test(test_market_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
