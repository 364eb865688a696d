/* JSON written straight into text reads exactly as jansson would dump the
 * same values for a reply: numbers, times, strings that need escaping, and
 * the commas and brackets around them. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "common/jsonin.h"
#include "common/jsonout.h"

/* What request_reply would send for v (steals v). */
static char *jansson_text(json_t *v)
{
	char *text = json_dumps(v, JSON_REPLY_FLAGS | JSON_ENCODE_ANY);
	char *line = malloc(strlen(text) + 2);

	sprintf(line, "%s\n", text);
	free(text);
	json_decref(v);
	return line;
}

static void assert_same(char *ours, char *theirs)
{
	assert_string_equal(ours, theirs);
	free(ours);
	free(theirs);
}

static void integers(void **state)
{
	static const int64_t values[] = {0, 1, -1, 9, 10, -10, 1234567890123, INT64_MAX, INT64_MIN};

	(void)state;
	for (size_t i = 0; i < sizeof values / sizeof *values; i++) {
		struct jsonout o = {0};
		jsonout_int(&o, NULL, values[i]);
		assert_same(jsonout_finish(&o), jansson_text(json_integer(values[i])));
	}
}

static void check_seconds(int64_t ms)
{
	struct jsonout o = {0};

	jsonout_seconds(&o, NULL, ms);
	assert_same(jsonout_finish(&o), jansson_text(json_seconds(ms)));
}

/* Every shape of milliseconds, both sides of the 13-digit limit, and a
 * sweep of today's times. */
static void times(void **state)
{
	static const int64_t values[] = {
		0, 1, 5, 10, 100, 999, 1000, 1001, 1010, 1100, 60000, 1795304766415, 1795304766000,
		1795304766400, 1795304766410, 9999999999999, 10000000000000, 12345678901234,
		123456789012345678, INT64_MAX, -1, -1500, INT64_MIN,
	};
	uint64_t x = 88172645463325252ULL;

	(void)state;
	for (size_t i = 0; i < sizeof values / sizeof *values; i++)
		check_seconds(values[i]);
	for (int i = 0; i < 100000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		check_seconds(1700000000000LL + (int64_t)(x % 200000000000ULL));
		check_seconds((int64_t)(x % 100000));
	}
}

static void reals(void **state)
{
	static const double values[] = {0.0, -0.0, 0.1, 1.5, 5.0, -2.25, 1e300, 1e-7, 0.30000000000000004};

	(void)state;
	for (size_t i = 0; i < sizeof values / sizeof *values; i++) {
		struct jsonout o = {0};
		jsonout_real(&o, NULL, values[i]);
		assert_same(jsonout_finish(&o), jansson_text(json_real(values[i])));
	}
}

static void strings(void **state)
{
	static const char *const values[] = {
		"", "plain name-1.x_y", "a \"quote\"", "back\\slash", "tab\tnew\nline", "\x01\x1f",
		"caf\xc3\xa9", "\x7f", "a/b", "\xe2\x82\xac 5",
	};
	struct jsonout o = {0};

	(void)state;
	for (size_t i = 0; i < sizeof values / sizeof *values; i++) {
		jsonout_string(&o, NULL, values[i]);
		assert_same(jsonout_finish(&o), jansson_text(json_string(values[i])));
	}
	/* jansson cannot hold text that is not UTF-8: null, not broken JSON. */
	jsonout_string(&o, NULL, "bad \xff");
	assert_same(jsonout_finish(&o), strdup("null\n"));
	jsonout_string(&o, NULL, NULL);
	assert_same(jsonout_finish(&o), strdup("null\n"));
}

/* Commas go between members and elements, never after an opening bracket. */
static void nesting(void **state)
{
	struct jsonout o = {0};

	(void)state;
	jsonout_open(&o, NULL, '{');
	jsonout_int(&o, "a", 1);
	jsonout_open(&o, "list", '[');
	jsonout_string(&o, NULL, "x");
	jsonout_open(&o, NULL, '{');
	jsonout_close(&o, '}');
	jsonout_open(&o, NULL, '[');
	jsonout_close(&o, ']');
	jsonout_text(&o, NULL, "{\"k\":[1,2]}");
	jsonout_close(&o, ']');
	jsonout_null(&o, "b");
	jsonout_json(&o, "c", json_pack("{s:b}", "t", 1));
	jsonout_seconds(&o, "at", 1500);
	jsonout_close(&o, '}');
	assert_same(jsonout_finish(&o),
		    jansson_text(json_pack("{s:i, s:[s, {}, [], {s:[i, i]}], s:n, s:{s:b}, s:f}", "a", 1, "list",
					   "x", "k", 1, 2, "b", "c", "t", 1, "at", 1.5)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(integers),
		cmocka_unit_test(times),
		cmocka_unit_test(reals),
		cmocka_unit_test(strings),
		cmocka_unit_test(nesting),
	};
	return cmocka_run_group_tests(tests, NULL, harness_cleanup);
}
