/* The automatic idle timeout (src/policy/idle.c): the nearest-rank quantile of the
 * gaps between submissions that are at least the minimum, clamped to
 * [min, max], and the line that says why. */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "policy/idle.h"

#define MIN_MS 60000LL

/* A fixed shuffle, so that the function's own sort is what orders them. */
static void shuffle(int64_t *v, size_t n, unsigned seed)
{
	srand(seed);
	for (size_t i = n; i > 1; i--) {
		size_t j = (size_t)rand() % i;
		int64_t t = v[i - 1];
		v[i - 1] = v[j];
		v[j] = t;
	}
}

/* gaps from..to minutes, shuffled. */
static size_t minutes(int64_t *v, int from, int to)
{
	size_t n = 0;

	for (int m = from; m <= to; m++)
		v[n++] = m * MIN_MS;
	shuffle(v, n, 7);
	return n;
}

static void test_quantile_of_1_to_100_minutes(void **state)
{
	int64_t gaps[200];
	char why[300];
	size_t n;

	(void)state;
	/* q = 0.95 of 100 gaps is the 95th smallest: 95 minutes, capped. */
	n = minutes(gaps, 1, 100);
	assert_int(idle_timeout_auto(gaps, n, 0.95, MIN_MS, 30 * MIN_MS, why, sizeof why), 30 * MIN_MS);
	assert_contains(why, "auto");
	assert_contains(why, "95%");
	assert_contains(why, "100 gaps");
	assert_contains(why, "at most 5700s");
	assert_contains(why, "capped by idle_timeout_max");

	/* With room above it, the quantile itself. */
	n = minutes(gaps, 1, 100);
	assert_int(idle_timeout_auto(gaps, n, 0.95, MIN_MS, 120 * MIN_MS, why, sizeof why), 95 * MIN_MS);
	assert_contains(why, "95%");
	if (strstr(why, "capped"))
		fail_msg("not capped, but why says so: %s", why);

	n = minutes(gaps, 1, 100);
	assert_int(idle_timeout_auto(gaps, n, 1.0, MIN_MS, 120 * MIN_MS, why, sizeof why), 100 * MIN_MS);
	assert_contains(why, "100%");
	n = minutes(gaps, 1, 100);
	assert_int(idle_timeout_auto(gaps, n, 0.5, MIN_MS, 120 * MIN_MS, why, sizeof why), 50 * MIN_MS);
	assert_contains(why, "50%");
}

/* Nearest rank is ceil(q * n) in exact arithmetic: 0.55 of 100 gaps is the
 * 55th, although 0.55 * 100 is 55.000000000000007 in doubles. */
static void test_nearest_rank_is_exact(void **state)
{
	static const int quantiles[] = {50, 55, 56, 57, 90, 95, 99};
	int64_t gaps[200];
	char why[300];

	(void)state;
	for (size_t k = 0; k < sizeof quantiles / sizeof quantiles[0]; k++) {
		size_t n = minutes(gaps, 1, 100);
		int64_t got = idle_timeout_auto(gaps, n, quantiles[k] / 100.0, MIN_MS, 200 * MIN_MS, why, sizeof why);
		if (got != quantiles[k] * MIN_MS)
			fail_msg("q = 0.%02d of gaps 1..100 min: got %lld ms, expected %lld ms (%s)", quantiles[k],
				 (long long)got, (long long)(quantiles[k] * MIN_MS), why);
	}
}

static void test_short_gaps_are_dropped(void **state)
{
	int64_t gaps[100];
	char why[300];
	size_t n = 0;

	(void)state;
	/* 50 gaps inside bursts (1..50 s) and 10 between them (2..11 min). */
	for (int s = 1; s <= 50; s++)
		gaps[n++] = s * 1000LL;
	for (int m = 2; m <= 11; m++)
		gaps[n++] = m * MIN_MS;
	shuffle(gaps, n, 3);
	/* Of the 10 that count, the median is the 5th: 6 minutes. Counting
	 * the burst gaps too would give 30 s. */
	assert_int(idle_timeout_auto(gaps, n, 0.5, MIN_MS, 30 * MIN_MS, why, sizeof why), 6 * MIN_MS);
	assert_contains(why, "10 gaps of 60s or more");

	/* A gap of exactly the minimum counts. */
	n = 0;
	gaps[n++] = MIN_MS;
	gaps[n++] = MIN_MS - 1;
	assert_int(idle_timeout_auto(gaps, n, 0.95, MIN_MS, 30 * MIN_MS, why, sizeof why), MIN_MS);
	assert_contains(why, "1 gaps");
}

static void test_clamped_to_min_and_max(void **state)
{
	int64_t gaps[10];
	char why[300];

	(void)state;
	/* No gap left after dropping the short ones: the minimum. */
	gaps[0] = 1000;
	gaps[1] = 59999;
	assert_int(idle_timeout_auto(gaps, 2, 0.95, MIN_MS, 30 * MIN_MS, why, sizeof why), MIN_MS);
	assert_contains(why, "auto");
	assert_contains(why, "no gap of 60s or more among the last 2 submissions");

	/* No gap at all. */
	assert_int(idle_timeout_auto(gaps, 0, 0.95, MIN_MS, 30 * MIN_MS, why, sizeof why), MIN_MS);
	assert_contains(why, "auto");

	/* Above the maximum: the maximum. */
	gaps[0] = 5 * 3600 * 1000LL;
	gaps[1] = 6 * 3600 * 1000LL;
	assert_int(idle_timeout_auto(gaps, 2, 0.5, MIN_MS, 30 * MIN_MS, why, sizeof why), 30 * MIN_MS);
	assert_contains(why, "capped by idle_timeout_max");

	/* min = max pins it. */
	gaps[0] = 10 * MIN_MS;
	assert_int(idle_timeout_auto(gaps, 1, 0.95, 2 * MIN_MS, 2 * MIN_MS, why, sizeof why), 2 * MIN_MS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quantile_of_1_to_100_minutes),
		cmocka_unit_test(test_nearest_rank_is_exact),
		cmocka_unit_test(test_short_gaps_are_dropped),
		cmocka_unit_test(test_clamped_to_min_and_max),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
