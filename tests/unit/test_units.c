/* Durations and sizes as written in configs: what parses, to what, what is
 * refused, and that printing gives back what parses to the same value. */
#include <string.h>

#include "harness.h"
#include "common/units.h"

static int64_t duration(const char *s)
{
	int64_t v = -12345;

	if (parse_duration_ms(s, &v) != 0)
		fail_msg("parse_duration_ms(\"%s\") refused it", s);
	return v;
}

static int64_t size(const char *s)
{
	int64_t v = -12345;

	if (parse_size_bytes(s, &v) != 0)
		fail_msg("parse_size_bytes(\"%s\") refused it", s);
	return v;
}

static void durations_parse(void **state)
{
	(void)state;
	assert_int(duration("500ms"), 500);
	assert_int(duration("3s"), 3000);
	assert_int(duration("10m"), 600000);
	assert_int(duration("1h"), 3600000);
	assert_int(duration("2d"), 172800000);
	assert_int(duration("0"), 0);
	assert_int(duration("0s"), 0);
	assert_int(duration("1.5s"), 1500);
	assert_int(duration("365d"), 365LL * 86400 * 1000);
}

static void durations_refused(void **state)
{
	static const char *const bad[] = {
		"10",    /* no unit */
		"3x",    /* unknown unit */
		"-1s",   /* negative */
		"",      /* empty */
		"s",     /* no number */
		"1.5ms", /* a fraction of the smallest unit */
		"3 s",   /* space before the unit */
		"3S",    /* units are case-sensitive */
		"1sec",
		"inf",
		"nan",
		"99999999999999999999d", /* overflows int64 */
		"300000000000000d",      /* so does this, after scaling */
		NULL,
	};
	(void)state;
	for (int i = 0; bad[i]; i++) {
		int64_t v = -7;
		if (parse_duration_ms(bad[i], &v) == 0)
			fail_msg("parse_duration_ms(\"%s\") accepted it as %lld", bad[i], (long long)v);
	}
}

static void sizes_parse(void **state)
{
	(void)state;
	assert_int(size("512B"), 512);
	assert_int(size("64KiB"), 65536);
	assert_int(size("1MiB"), 1048576);
	assert_int(size("1GiB"), 1073741824);
	assert_int(size("64MiB"), 64LL << 20);
	assert_int(size("1KB"), 1000);
	assert_int(size("2MB"), 2000000);
	assert_int(size("0"), 0);
	assert_int(size("1.5KiB"), 1536);
}

static void sizes_refused(void **state)
{
	static const char *const bad[] = {
		"1024", "64kib", "3x", "-1KiB", "", "KiB", "0.5B", "1 MiB", "1MiBs",
		"9999999999GiB", /* overflows int64 */
		NULL,
	};
	(void)state;
	for (int i = 0; bad[i]; i++) {
		int64_t v = -7;
		if (parse_size_bytes(bad[i], &v) == 0)
			fail_msg("parse_size_bytes(\"%s\") accepted it as %lld", bad[i], (long long)v);
	}
}

static void integers(void **state)
{
	int64_t v = 0;
	double d = 0;

	(void)state;
	assert_int(parse_int64("42", &v), 0);
	assert_int(v, 42);
	assert_int(parse_int64("-7", &v), 0);
	assert_int(v, -7);
	assert_int(parse_int64("9223372036854775807", &v), 0);
	assert_int(v, INT64_MAX);
	assert_int(parse_int64("9223372036854775808", &v), -1);
	assert_int(parse_int64("", &v), -1);
	assert_int(parse_int64("12x", &v), -1);
	assert_int(parse_int64("1.0", &v), -1);
	assert_int(parse_double("0.95", &d), 0);
	assert_true(d == 0.95);
	assert_int(parse_double("inf", &d), -1);
	assert_int(parse_double("1e400", &d), -1);
	assert_int(parse_double("0.5x", &d), -1);
}

/* Spans for people: the two largest units, rounded down. */
static void elapsed(void **state)
{
	static const struct {
		int64_t ms;
		const char *want;
	} cases[] = {
		{0, "0 s"}, {999, "0 s"}, {45000, "45 s"}, {60000, "1 m"}, {61000, "1 m 1 s"},
		{720000, "12 m"}, {3600000, "1 h"}, {3900000 + 59999, "1 h 5 m"}, {86400000, "1 d"},
		{3 * 86400000LL + 4 * 3600000 + 59000, "3 d 4 h"},
	};
	char buf[32];

	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		format_elapsed(buf, sizeof buf, cases[i].ms);
		assert_string_equal(buf, cases[i].want);
	}
}

static void formats(void **state)
{
	char buf[32];

	(void)state;
	format_duration(buf, sizeof buf, 500);
	assert_string_equal(buf, "500ms");
	format_duration(buf, sizeof buf, 90000);
	assert_string_equal(buf, "90s");
	format_duration(buf, sizeof buf, 600000);
	assert_string_equal(buf, "10m");
	format_duration(buf, sizeof buf, 3600000);
	assert_string_equal(buf, "1h");
	format_duration(buf, sizeof buf, 172800000);
	assert_string_equal(buf, "2d");
	format_duration(buf, sizeof buf, 1500);
	assert_string_equal(buf, "1500ms");
	format_duration(buf, sizeof buf, 0);
	assert_string_equal(buf, "0s");
	format_size(buf, sizeof buf, 65536);
	assert_string_equal(buf, "64KiB");
	format_size(buf, sizeof buf, 1048576);
	assert_string_equal(buf, "1MiB");
	format_size(buf, sizeof buf, 1000);
	assert_string_equal(buf, "1000B");
	format_size(buf, sizeof buf, 3LL << 30);
	assert_string_equal(buf, "3GiB");
	format_size(buf, sizeof buf, 0);
	assert_string_equal(buf, "0B");
}

/* What format_* prints, parse_* reads back to the same value: the config
 * printed by `ebb config` is itself a valid config. */
static void round_trips(void **state)
{
	static const int64_t ms[] = {1, 999, 1000, 1001, 59000, 60000, 61000, 3599000, 3600000,
				     86399999, 86400000, 7 * 86400000LL, 1LL << 40, 0};
	static const int64_t bytes[] = {1, 1023, 1024, 1025, 65536, 1048575, 1048576,
					1LL << 30, (1LL << 30) + 1, 5LL << 40, 0};
	char buf[32];
	int64_t v;

	(void)state;
	for (size_t i = 0; i < sizeof ms / sizeof *ms; i++) {
		format_duration(buf, sizeof buf, ms[i]);
		v = -1;
		assert_int(parse_duration_ms(buf, &v), 0);
		assert_int(v, ms[i]);
	}
	for (size_t i = 0; i < sizeof bytes / sizeof *bytes; i++) {
		format_size(buf, sizeof buf, bytes[i]);
		v = -1;
		assert_int(parse_size_bytes(buf, &v), 0);
		assert_int(v, bytes[i]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(durations_parse), cmocka_unit_test(durations_refused),
		cmocka_unit_test(sizes_parse),     cmocka_unit_test(sizes_refused),
		cmocka_unit_test(integers),        cmocka_unit_test(formats),
		cmocka_unit_test(elapsed),
		cmocka_unit_test(round_trips),
	};
	return cmocka_run_group_tests(tests, NULL, harness_cleanup);
}
