/* The warm-pool schedule (src/common/warm.c): parsing, the floor at given times
 * and the next time it changes. Times are Unix ms in UTC; 1970-01-05 was
 * a Monday, and so was 2026-11-23. */
#include <string.h>

#include "harness.h"
#include "common/warm.h"

#define HOUR_MS (3600LL * 1000)
#define DAY_MS (24 * HOUR_MS)
#define MON_1970 (4 * DAY_MS)               /* Monday 1970-01-05 00:00 UTC */
#define MON_2026 (1795392000LL * 1000)      /* Monday 2026-11-23 00:00 UTC */
#define AT(monday, day, hour, min) ((monday) + (day) * DAY_MS + (hour) * HOUR_MS + (min) * 60000LL)

/* Parses text, failing the test with the error if it does not parse. */
static void parse_ok(const char *text, struct warm_schedule *w)
{
	char err[300] = "";

	if (warm_parse(text, w, err, sizeof err) != 0)
		fail_msg("warm_parse('%s') failed: %s", text, err);
}

static void parse_bad(const char *text, const char *want_in_err)
{
	struct warm_schedule w;
	char err[300] = "";
	int rc = warm_parse(text, &w, err, sizeof err);

	if (rc != -1)
		fail_msg("warm_parse('%s') returned %d, expected -1 (rejected)", text, rc);
	if (!err[0])
		fail_msg("warm_parse('%s') rejected it with an empty err", text);
	assert_contains(err, want_in_err);
}

static void test_parse_weekdays_and_default(void **state)
{
	struct warm_schedule w;

	(void)state;
	parse_ok("mon-fri 08-18 2; * * 0", &w);
	assert_int(w.n, 2);
	assert_int(w.entries[0].days, 0x1f); /* Monday..Friday */
	assert_int(w.entries[0].from_hour, 8);
	assert_int(w.entries[0].to_hour, 18);
	assert_int(w.entries[0].count, 2);
	assert_int(w.entries[1].days, 0x7f);
	assert_int(w.entries[1].from_hour, 0);
	assert_int(w.entries[1].to_hour, 24);
	assert_int(w.entries[1].count, 0);
}

static void test_parse_lists_and_wrapping_ranges(void **state)
{
	struct warm_schedule w;

	(void)state;
	parse_ok("sat,sun 10-14 1", &w);
	assert_int(w.n, 1);
	assert_int(w.entries[0].days, (1 << 5) | (1 << 6));
	assert_int(w.entries[0].from_hour, 10);
	assert_int(w.entries[0].to_hour, 14);
	assert_int(w.entries[0].count, 1);

	parse_ok("sat-mon * 3", &w); /* wraps the week: Saturday, Sunday, Monday */
	assert_int(w.entries[0].days, (1 << 5) | (1 << 6) | (1 << 0));
	parse_ok("fri-tue 0-24 1", &w);
	assert_int(w.entries[0].days, (1 << 4) | (1 << 5) | (1 << 6) | (1 << 0) | (1 << 1));
	parse_ok("mon,wed-thu,sun 9-10 4", &w);
	assert_int(w.entries[0].days, (1 << 0) | (1 << 2) | (1 << 3) | (1 << 6));
	parse_ok("wed-wed 9-10 4", &w);
	assert_int(w.entries[0].days, 1 << 2);

	/* Empty and blank entries are nothing; an empty text is no schedule. */
	parse_ok("  mon 1-2 1 ;; ; ", &w);
	assert_int(w.n, 1);
	parse_ok("", &w);
	assert_int(w.n, 0);
}

static void test_parse_rejects_bad_entries(void **state)
{
	(void)state;
	parse_bad("mon-fri 08-18", "expected DAYS HOURS COUNT");       /* no count */
	parse_bad("mon-fri 08-18 2 extra", "expected DAYS HOURS COUNT"); /* trailing word */
	parse_bad("monday 08-18 2", "monday");                          /* not a day name */
	parse_bad("xyz * 1", "xyz");
	parse_bad("mon- * 1", "expected DAYS HOURS COUNT");
	parse_bad("mon 18-08 1", "18-08");                              /* backwards */
	parse_bad("mon 08-08 1", "expected DAYS HOURS COUNT");          /* empty range */
	parse_bad("mon 08-25 1", "08-25");                              /* past 24 */
	parse_bad("mon -1-5 1", "expected DAYS HOURS COUNT");
	parse_bad("mon 8 1", "expected DAYS HOURS COUNT");              /* not a range */
	parse_bad("mon 8-9 -1", "expected DAYS HOURS COUNT");           /* negative count */
	parse_bad("mon 8-9 two", "expected DAYS HOURS COUNT");
	parse_bad("mon 8-9 1; tue 8-9", "tue 8-9");                     /* the bad one is named */
	parse_bad("*,mon 8-9 1", "expected DAYS HOURS COUNT");
	parse_bad("1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1", "expected DAYS HOURS COUNT");
	parse_bad("* * 1;* * 1;* * 1;* * 1;* * 1;* * 1;* * 1;* * 1;* * 1;* * 1;* * 1;* * 1;"
		  "* * 1;* * 1;* * 1;* * 1;* * 1", "more than 16 entries");
}

static void test_floor_at_given_times(void **state)
{
	struct warm_schedule w;

	(void)state;
	parse_ok("mon-fri 08-18 2; sat,sun 10-14 1", &w);
	for (int k = 0; k < 2; k++) {
		int64_t mon = k == 0 ? MON_1970 : MON_2026;
		assert_int(warm_floor(&w, AT(mon, 0, 7, 59)), 0);
		assert_int(warm_floor(&w, AT(mon, 0, 8, 0)), 2);  /* the start is included */
		assert_int(warm_floor(&w, AT(mon, 0, 17, 59)), 2);
		assert_int(warm_floor(&w, AT(mon, 0, 18, 0)), 0); /* the end is not */
		assert_int(warm_floor(&w, AT(mon, 2, 12, 0)), 2); /* Wednesday */
		assert_int(warm_floor(&w, AT(mon, 4, 9, 0)), 2);  /* Friday */
		assert_int(warm_floor(&w, AT(mon, 5, 9, 0)), 0);  /* Saturday, before 10 */
		assert_int(warm_floor(&w, AT(mon, 5, 10, 0)), 1);
		assert_int(warm_floor(&w, AT(mon, 6, 13, 59)), 1); /* Sunday */
		assert_int(warm_floor(&w, AT(mon, 6, 14, 0)), 0);
		assert_int(warm_floor(&w, AT(mon, 7, 8, 30)), 2); /* the next Monday */
	}

	/* The first matching entry wins, and "* * N" is the default. */
	parse_ok("mon 08-18 3; * 08-18 5; * * 1", &w);
	assert_int(warm_floor(&w, AT(MON_1970, 0, 9, 0)), 3);
	assert_int(warm_floor(&w, AT(MON_1970, 1, 9, 0)), 5);
	assert_int(warm_floor(&w, AT(MON_1970, 1, 20, 0)), 1);

	/* A wrapping range. */
	parse_ok("sat-mon * 2", &w);
	assert_int(warm_floor(&w, AT(MON_2026, 5, 0, 0)), 2);
	assert_int(warm_floor(&w, AT(MON_2026, 6, 23, 59)), 2);
	assert_int(warm_floor(&w, AT(MON_2026, 0, 12, 0)), 2);
	assert_int(warm_floor(&w, AT(MON_2026, 1, 0, 0)), 0);
	assert_int(warm_floor(&w, AT(MON_2026, 4, 23, 59)), 0);

	/* No schedule: zero everywhere. */
	parse_ok("", &w);
	assert_int(warm_floor(&w, AT(MON_2026, 0, 9, 0)), 0);
}

static void test_next_change(void **state)
{
	struct warm_schedule w;

	(void)state;
	parse_ok("mon-fri 08-18 2; sat,sun 10-14 1", &w);
	assert_int(warm_next_change(&w, AT(MON_1970, 0, 7, 30)), AT(MON_1970, 0, 8, 0));
	assert_int(warm_next_change(&w, AT(MON_1970, 0, 8, 0)), AT(MON_1970, 0, 18, 0));
	assert_int(warm_next_change(&w, AT(MON_2026, 0, 12, 15)), AT(MON_2026, 0, 18, 0));
	assert_int(warm_next_change(&w, AT(MON_2026, 4, 19, 0)), AT(MON_2026, 5, 10, 0));
	assert_int(warm_next_change(&w, AT(MON_2026, 6, 14, 0)), AT(MON_2026, 7, 8, 0));

	/* Once a week: the change a week minus two hours ahead is found. */
	parse_ok("mon 08-09 1", &w);
	assert_int(warm_next_change(&w, AT(MON_2026, 0, 8, 30)), AT(MON_2026, 0, 9, 0));
	assert_int(warm_next_change(&w, AT(MON_2026, 0, 10, 0)), AT(MON_2026, 7, 8, 0));

	/* A floor that never changes, or no schedule: never. */
	parse_ok("* * 2", &w);
	assert_int(warm_next_change(&w, AT(MON_2026, 2, 3, 4)), 0);
	parse_ok("", &w);
	assert_int(warm_next_change(&w, AT(MON_2026, 2, 3, 4)), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_weekdays_and_default),
		cmocka_unit_test(test_parse_lists_and_wrapping_ranges),
		cmocka_unit_test(test_parse_rejects_bad_entries),
		cmocka_unit_test(test_floor_at_given_times),
		cmocka_unit_test(test_next_change),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
