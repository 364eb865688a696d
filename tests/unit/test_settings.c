/* plan()'s settings (src/policy/settings.c): every [scaler] key and every
 * [lane.NAME] key reaches them, and the simulator's ebb policy replays with
 * exactly the settings plan_settings_from_config() gives, the function
 * serve builds its own with, so that a key cannot reach one and not the
 * other. The keys come from the config table itself (config_keys()): a key
 * added later is covered here without a change to this file, or fails here
 * until it reaches plan(). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/config.h"
#include "harness.h"
#include "policy/classes.h"
#include "policy/lease_order.h"
#include "policy/settings.h"
#include "sim/spec.h"

/* Values for the string keys, whose bounds are lengths: a string key with
 * none fails the test until it is given one here. By table ("scaler",
 * "lane") and key. */
static const struct {
	const char *table, *key, *value;
} string_values[] = {
	{"scaler", "warm", "* * 1"},
};

/* The configuration as `ebb config` writes it (free it): two configs hold
 * the same values when their texts are the same. */
static char *config_text(const struct config *cfg)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	config_write(cfg, f);
	fclose(f);
	return text;
}

static const char *string_value(const char *table, const char *key)
{
	for (size_t k = 0; k < sizeof string_values / sizeof *string_values; k++) {
		if (strcmp(string_values[k].table, table) == 0 && strcmp(string_values[k].key, key) == 0)
			return string_values[k].value;
	}
	return NULL;
}

/* The settings of the defaults with one key set, if that is another valid
 * value than the default; 0 when it is, -1 when it is not. */
static int settings_with(const char *section, const char *key, const char *value, struct plan_settings *out)
{
	struct config defaults, cfg;
	char err[400], *a, *b;
	int other;

	config_defaults(&defaults, NULL);
	config_defaults(&cfg, NULL);
	if (config_set(&cfg, section, key, value, err, sizeof err) != 0 || config_check(&cfg, err, sizeof err) != 0) {
		config_free(&defaults);
		config_free(&cfg);
		return -1; /* out of range against another key (idle_timeout_max under its min) */
	}
	a = config_text(&defaults);
	b = config_text(&cfg);
	other = strcmp(a, b) != 0;
	plan_settings_from_config(&cfg, out);
	free(a);
	free(b);
	config_free(&defaults);
	config_free(&cfg);
	return other ? 0 : -1;
}

/* The settings the simulator's ebb policy replays with under spec. */
static void sim_settings(const char *spec, struct plan_settings *out)
{
	struct policy p;
	char err[600];

	if (policy_parse(spec, NULL, NULL, &p, err, sizeof err) != 0)
		fail_msg("policy_parse(%s): %s", spec, err);
	*out = p.settings;
	policy_free(&p);
}

struct walk {
	const char *table;         /* config_keys()'s: "scaler" or "lane" */
	char section[80];          /* "scaler", or "lane.NAME" */
	struct plan_settings base; /* of the defaults */
	int keys;
};

/* One key: each of its other values (its bounds, auto, a string's value
 * above) changes the settings, and the simulator replays with those. */
static void check_key(const struct config_key_info *k, void *arg)
{
	struct walk *w = arg;
	const char *candidates[] = {k->min, k->max, k->auto_ok ? "auto" : "", string_value(w->table, k->name)};
	int tried = 0;

	w->keys++;
	if (strcmp(k->type, "string") == 0 && !candidates[3])
		fail_msg("[%s] %s: a string key; give it a valid value in string_values", w->section, k->name);
	for (size_t c = 0; c < sizeof candidates / sizeof *candidates; c++) {
		struct plan_settings got, sim;
		const char *value = candidates[c];
		if (!value || !value[0] || settings_with(w->section, k->name, value, &got) != 0)
			continue;
		tried++;
		if (memcmp(&got, &w->base, sizeof got) == 0)
			fail_msg("[%s] %s = %s: plan_settings_from_config() gives the settings of the defaults",
				 w->section, k->name, value);
		sim_settings(harness_fmt("ebb:%s.%s=%s", w->section, k->name, value), &sim);
		if (memcmp(&sim, &got, sizeof sim) != 0)
			fail_msg("[%s] %s = %s: the simulator's ebb policy replays with other settings than"
				 " plan_settings_from_config()", w->section, k->name, value);
	}
	if (tried == 0)
		fail_msg("[%s] %s: no value other than its default %s was found to try", w->section, k->name, k->def);
}

static void test_every_scaler_key_reaches_the_settings(void **state)
{
	struct config cfg;
	struct walk w = {.table = "scaler", .section = "scaler"};

	(void)state;
	config_defaults(&cfg, NULL);
	plan_settings_from_config(&cfg, &w.base);
	config_free(&cfg);
	assert_int(config_keys("scaler", check_key, &w), 0);
	assert_true(w.keys >= 21); /* the table's [scaler] keys when this test was written */
}

static void test_every_lane_key_reaches_the_settings(void **state)
{
	struct config cfg;
	struct walk w;

	(void)state;
	config_defaults(&cfg, NULL);
	for (int lane = 0; lane < cfg.nlanes; lane++) {
		memset(&w, 0, sizeof w);
		w.table = "lane";
		snprintf(w.section, sizeof w.section, "lane.%s", cfg.lane_names[lane]);
		plan_settings_from_config(&cfg, &w.base);
		assert_int(config_keys("lane", check_key, &w), 0);
		assert_true(w.keys >= 1);
	}
	config_free(&cfg);
}

/* Each lane's own target, the default for a lane of no section and for
 * one not in [queue] lanes, and the lanes' ranks. */
/* A lane's wait target, as a class of plan()'s view has it. */
static int64_t wait_target_ms(const struct plan_settings *st, const char *lane)
{
	struct plan_class c;
	int n = 0;

	return classes_find(&c, &n, 1, st, 1, 1, 0, lease_lane_rank(st, lane), 0, 0)->wait_target_ms;
}

static void test_wait_targets_and_ranks(void **state)
{
	struct config cfg;
	struct plan_settings st;
	char err[400];

	(void)state;
	config_defaults(&cfg, NULL);
	assert_int(config_set(&cfg, "lane.batch", "wait_target", "1h", err, sizeof err), 0);
	assert_int(config_set(&cfg, "lane.express", "wait_target", "10s", err, sizeof err), 0);
	assert_int(config_check(&cfg, err, sizeof err), 0);
	plan_settings_from_config(&cfg, &st);
	assert_int(wait_target_ms(&st, "batch"), 3600000);
	assert_int(wait_target_ms(&st, "express"), 10000);
	assert_int(wait_target_ms(&st, "standard"), 300000);
	assert_int(wait_target_ms(&st, "nosuch"), 300000);
	assert_int(plan_lane_rank(&st, "express"), 0);
	assert_int(plan_lane_rank(&st, "batch"), 2);
	assert_int(plan_lane_rank(&st, "nosuch"), -1);
	config_free(&cfg);
}

/* The idle timeout in force for each offer: the fixed one whatever the
 * gaps, or auto's choice from them with each offer's boot and the
 * strictest lane's wait target, and its least before any gap. Gaps of 3
 * min, min 1 m: an offer that boots in 0 s releases at once (60 s a gap
 * against 180); one that boots in 5 min, against a 1 m target in the
 * express lane, holds them (180 s against 60 + 600). */
static void test_idle_timeout_in_force(void **state)
{
	struct config cfg;
	struct plan_settings st;
	struct offer offers[2] = {{.name = "quick", .boot_ms = 0}, {.name = "slow", .boot_ms = 300000}};
	int64_t gaps[] = {180000, 180000, 180000}, ms[2];
	char err[400], why[2][PLAN_IDLE_WHY];

	(void)state;
	config_defaults(&cfg, NULL);
	plan_settings_from_config(&cfg, &st);
	plan_idle_timeouts(&st, offers, 2, 0, gaps, 3, ms, NULL, why);
	assert_int(ms[0], 600000);
	assert_int(ms[1], 600000);
	assert_contains(why[1], "fixed");
	assert_int(config_set(&cfg, "scaler", "idle_timeout", "auto", err, sizeof err), 0);
	assert_int(config_set(&cfg, "lane.express", "wait_target", "1m", err, sizeof err), 0);
	plan_settings_from_config(&cfg, &st);
	plan_idle_timeouts(&st, offers, 2, 0, gaps, 3, ms, NULL, why);
	assert_int(ms[0], 60000);
	assert_int(ms[1], 180000);
	assert_contains(why[1], "auto");
	assert_contains(why[1], "against a 60s wait target");
	assert_int(plan_idle_timeout_longest(ms, 2), 180000);
	plan_idle_timeouts(&st, offers, 2, 0, NULL, 0, ms, NULL, NULL);
	assert_int(ms[1], 60000);
	config_free(&cfg);
}

/* idle_surplus_timeout = auto, idle_timeout fixed at 10 min: the other
 * idle instances are wanted from the second next submission on, so the
 * choice is made over two gaps in a row, in the order they came. Gaps of
 * 30 and 500 s by turns make 530 s each two (sorted first, they would
 * pair 30 with 30). The slow offer (a 300 s boot, against the express
 * lane's 1 m target: a release costs 300 + 300 s) holds 530 s rather than
 * pay 60 + 600 at the minimum; the quick one (no boot) holds the minimum,
 * 60 s. A fixed surplus timeout is the same for every offer. */
static void test_surplus_timeout_in_force(void **state)
{
	struct config cfg;
	struct plan_settings st;
	struct offer offers[2] = {{.name = "quick", .boot_ms = 0}, {.name = "slow", .boot_ms = 300000}};
	int64_t gaps[] = {30000, 500000, 30000, 500000}, ms[2], surplus[2];
	char err[400], why[2][PLAN_IDLE_WHY];

	(void)state;
	config_defaults(&cfg, NULL);
	assert_int(config_set(&cfg, "scaler", "idle_surplus_timeout", "auto", err, sizeof err), 0);
	assert_int(config_set(&cfg, "lane.express", "wait_target", "1m", err, sizeof err), 0);
	plan_settings_from_config(&cfg, &st);
	plan_idle_timeouts(&st, offers, 2, 0, gaps, 4, ms, surplus, why);
	assert_int(ms[0], 600000);
	assert_int(ms[1], 600000);
	assert_int(surplus[0], 60000);
	assert_int(surplus[1], 530000);
	assert_contains(why[1], "fixed: [scaler] idle_timeout; the other idle ones");
	assert_contains(why[1], "holding 530s bridges 3 of the 3 gaps");
	/* Before any gap: the least. */
	plan_idle_timeouts(&st, offers, 2, 0, NULL, 0, ms, surplus, NULL);
	assert_int(surplus[1], 60000);
	assert_int(config_set(&cfg, "scaler", "idle_surplus_timeout", "90s", err, sizeof err), 0);
	plan_settings_from_config(&cfg, &st);
	plan_idle_timeouts(&st, offers, 2, 0, gaps, 4, ms, surplus, NULL);
	assert_int(surplus[0], 90000);
	assert_int(surplus[1], 90000);
	config_free(&cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_scaler_key_reaches_the_settings),
		cmocka_unit_test(test_every_lane_key_reaches_the_settings),
		cmocka_unit_test(test_wait_targets_and_ranks),
		cmocka_unit_test(test_idle_timeout_in_force),
		cmocka_unit_test(test_surplus_timeout_in_force),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
