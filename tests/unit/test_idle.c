/* The automatic idle timeout (src/policy/idle.c): the hold time with the
 * least expected cost over the gaps between submissions, for an offer's
 * boot and a lane's wait target; cases computed by hand, and against a
 * brute-force search of every second between the bounds. */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "policy/idle.h"

#define S 1000LL
#define MIN_MS (60 * S)
#define MAX_MS (1800 * S)

static int64_t choose(int64_t *gaps, size_t n, int64_t boot_ms, int64_t target_ms, char *why, size_t size)
{
	return idle_timeout_auto(gaps, n, boot_ms, 0, target_ms, MIN_MS, MAX_MS, why, size);
}

/* A 120 s boot and a wait target as long: a release costs the boot and
 * all of its wait, 240 s. Gaps of 400 s: holding costs 400 s a gap,
 * releasing at the minimum 60 + 240 = 300 s. Gaps of 100 s: holding them
 * costs 100 s, less than 300. */
static void test_release_or_hold_by_the_boot(void **state)
{
	int64_t gaps[10];
	char why[400];

	(void)state;
	for (int k = 0; k < 10; k++)
		gaps[k] = 400 * S;
	assert_int(choose(gaps, 10, 120 * S, 120 * S, why, sizeof why), MIN_MS);
	assert_contains(why, "bridges 0 of the 10 gaps");
	assert_contains(why, "expected 300s");
	assert_contains(why, "a 120s boot and 120s for the wait");
	for (int k = 0; k < 10; k++)
		gaps[k] = 100 * S;
	assert_int(choose(gaps, 10, 120 * S, 120 * S, why, sizeof why), 100 * S);
	assert_contains(why, "bridges 10 of the 10 gaps");
	assert_contains(why, "expected 100s");
}

/* The wait is priced by the share of the lane's target the boot takes:
 * gaps of 280 s, a 120 s boot. With a 10 m target the boot takes a fifth
 * of it: a release costs 120 + 24 = 144 s, and 60 + 144 = 204 < 280; with
 * a 10 s target it takes all of it: 60 + 240 = 300 > 280, so the instance
 * is held. */
static void test_a_short_wait_target_holds_longer(void **state)
{
	int64_t gaps[10];
	char why[400];

	(void)state;
	for (int k = 0; k < 10; k++)
		gaps[k] = 280 * S;
	assert_int(choose(gaps, 10, 120 * S, 600 * S, why, sizeof why), MIN_MS);
	assert_contains(why, "expected 204s");
	assert_contains(why, "24s for the wait it makes, against a 600s wait target");
	assert_int(choose(gaps, 10, 120 * S, 10 * S, why, sizeof why), 280 * S);
}

/* Eight gaps of 2 min and two of an hour, a 120 s boot, a 120 s target
 * (a release costs 240 s): at 60 s each gap costs 300 s; at 120 s the
 * eight are bridged (8 x 120) and the two cost 120 + 240 each:
 * (960 + 720) / 10 = 168 s; at the 30 m maximum, (960 + 2 x 2040) / 10 =
 * 504 s. Gaps under the minimum (inside bursts) change nothing. */
static void test_a_mix_bridges_the_short_gaps(void **state)
{
	int64_t gaps[20];
	size_t n = 0;
	char why[400];

	(void)state;
	for (int k = 0; k < 4; k++)
		gaps[n++] = 120 * S;
	gaps[n++] = 3600 * S;
	for (int k = 0; k < 5; k++)
		gaps[n++] = 2 * S; /* inside a burst */
	for (int k = 0; k < 4; k++)
		gaps[n++] = 120 * S;
	gaps[n++] = 3600 * S;
	assert_int(choose(gaps, n, 120 * S, 120 * S, why, sizeof why), 120 * S);
	assert_contains(why, "bridges 8 of the 10 gaps of 60s or more");
	assert_contains(why, "expected 168s");
	assert_contains(why, "300s releasing at 60s");
	assert_contains(why, "504s holding 1800s");
	/* The same gaps again, sorted by the first call: the same answer. */
	assert_int(choose(gaps, n, 120 * S, 120 * S, why, sizeof why), 120 * S);
}

/* No gap, or none the maximum can bridge: the minimum. A gap longer than
 * the maximum is not held for. */
static void test_bounds(void **state)
{
	int64_t gaps[3] = {2400 * S, 2400 * S, 2400 * S};
	char why[400];

	(void)state;
	assert_int(choose(gaps, 0, 120 * S, 600 * S, why, sizeof why), MIN_MS);
	assert_contains(why, "no gap");
	/* Holding 1800 s of a 2400 s gap and then booting anyway: worse. */
	assert_int(choose(gaps, 3, 3600 * S, 600 * S, why, sizeof why), MIN_MS);
	/* min = max pins it. */
	assert_int(idle_timeout_auto(gaps, 3, 120 * S, 0, 600 * S, 5 * MIN_MS, 5 * MIN_MS, why, sizeof why),
		   5 * MIN_MS);
}

/* The expected cost of holding t, computed plainly. */
static double plain_cost(const int64_t *g, size_t n, int64_t min_ms, int64_t t, double release_s)
{
	double c = 0;
	size_t m = 0;

	for (size_t i = 0; i < n; i++) {
		if (g[i] < min_ms)
			continue;
		m++;
		c += g[i] <= t ? (double)g[i] / 1000.0 : (double)t / 1000.0 + release_s;
	}
	return m ? c / (double)m : 0;
}

/* Random gap sets: no whole second between the bounds costs less than
 * the choice, and the choice costs what the plain sum says. */
static void test_no_second_is_cheaper(void **state)
{
	(void)state;
	srand(11);
	for (int round = 0; round < 40; round++) {
		int64_t gaps[60], copy[60], boot = (rand() % 300 + 10) * S, target = (rand() % 200) * S, got;
		size_t n = (size_t)(rand() % 60);
		double share = target > 0 ? (double)boot / (double)target : 1;
		double release = (double)boot / 1000.0 * (1 + (share < 1 ? share : 1));
		char why[400];

		for (size_t i = 0; i < n; i++)
			gaps[i] = (int64_t)(rand() % 2400) * S + rand() % 1000;
		memcpy(copy, gaps, sizeof gaps);
		got = choose(copy, n, boot, target, why, sizeof why);
		assert_true(got >= MIN_MS && got <= MAX_MS);
		for (int64_t t = MIN_MS; t <= MAX_MS; t += S) {
			if (plain_cost(gaps, n, MIN_MS, t, release) < plain_cost(gaps, n, MIN_MS, got, release) - 1e-6)
				fail_msg("round %d: holding %lld ms costs less than the choice %lld ms", round,
					 (long long)t, (long long)got);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_release_or_hold_by_the_boot),
		cmocka_unit_test(test_a_short_wait_target_holds_longer),
		cmocka_unit_test(test_a_mix_bridges_the_short_gaps),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_no_second_is_cheaper),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
