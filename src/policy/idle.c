/* See idle.h. */
#include "policy/idle.h"

#include <stdio.h>
#include <stdlib.h>

#include "common/mem.h"

static int by_value(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* Expected cost per gap of holding for t, in seconds of the instance's
 * price: the kept gaps g[0..m) are sorted, sum[k] adds the first k, and
 * a gap of t or less is bridged. */
static double cost_s(const int64_t *g, const double *sum, size_t m, int64_t t, double release_s)
{
	size_t k = 0, hi = m;

	while (k < hi) { /* how many are at most t */
		size_t mid = k + (hi - k) / 2;
		if (g[mid] <= t)
			k = mid + 1;
		else
			hi = mid;
	}
	return (sum[k] + (double)(m - k) * ((double)t / 1000.0 + release_s)) / (double)m;
}

int64_t idle_timeout_auto(int64_t *gaps, size_t n, int64_t boot_ms, int64_t setup_ms, int64_t wait_target_ms,
			  int64_t min_ms, int64_t max_ms, char *why, size_t why_size)
{
	double boot_s = (double)(boot_ms + setup_ms) / 1000.0, share = wait_target_ms > 0 ? boot_s * 1000.0 / (double)wait_target_ms : 1;
	double wait_s = boot_s * (share < 1 ? share : 1), release_s = boot_s + wait_s, best_cost, *sum;
	size_t m, bridged = 0, first = 0;
	const int64_t *g;
	int64_t best = min_ms;

	/* Sorted whole, not filtered in place: one set of gaps serves each
	 * offer in turn. No gaps may come as NULL, which qsort() must not see. */
	if (n > 0)
		qsort(gaps, n, sizeof *gaps, by_value);
	while (first < n && gaps[first] < min_ms)
		first++;
	if ((m = n - first) == 0) {
		snprintf(why, why_size, "auto: no gap of %llds or more among the last %zu submissions;"
			 " the minimum", (long long)(min_ms / 1000), n);
		return min_ms;
	}
	g = gaps + first;
	if (!(sum = mem_alloc((m + 1) * sizeof *sum))) {
		snprintf(why, why_size, "auto: no memory to weigh %zu gaps; the minimum", m);
		return min_ms;
	}
	sum[0] = 0;
	for (size_t i = 0; i < m; i++)
		sum[i + 1] = sum[i] + (double)g[i] / 1000.0;
	/* The cost rises with T between two gaps and drops at each: the least
	 * is at the minimum, at a gap, or at the maximum. */
	best_cost = cost_s(g, sum, m, min_ms, release_s);
	for (size_t i = 0; i <= m; i++) {
		int64_t t = i < m && g[i] < max_ms ? g[i] : max_ms;
		double c;

		if (t > min_ms && (c = cost_s(g, sum, m, t, release_s)) < best_cost - 1e-9) {
			best_cost = c;
			best = t;
		}
	}
	for (size_t i = 0; i < m; i++)
		bridged += g[i] <= best;
	snprintf(why, why_size, "auto: holding %llds bridges %zu of the %zu gaps of %llds or more; expected"
		 " %.0fs of the instance's price a gap, against %.0fs releasing at %llds and %.0fs holding %llds"
		 " (a release costs a %.0fs %s and %.0fs for the wait it makes, against a %llds wait target)",
		 (long long)(best / 1000), bridged, m, (long long)(min_ms / 1000), best_cost,
		 cost_s(g, sum, m, min_ms, release_s), (long long)(min_ms / 1000),
		 cost_s(g, sum, m, max_ms, release_s), (long long)(max_ms / 1000), boot_s,
		 setup_ms > 0 ? "boot and handler setup" : "boot", wait_s,
		 (long long)(wait_target_ms / 1000));
	free(sum);
	return best;
}
