/* See idle.h. */
#include "policy/idle.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static int by_value(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

int64_t idle_timeout_auto(int64_t *gaps, size_t n, double q, int64_t min_ms, int64_t max_ms,
			  char *why, size_t why_size)
{
	size_t kept = 0, rank;
	int64_t t;

	for (size_t i = 0; i < n; i++) {
		if (gaps[i] >= min_ms)
			gaps[kept++] = gaps[i];
	}
	if (kept == 0) {
		snprintf(why, why_size, "auto: no gap of %llds or more among the last %zu submissions;"
			 " the minimum", (long long)(min_ms / 1000), n);
		return min_ms;
	}
	qsort(gaps, kept, sizeof *gaps, by_value);
	/* ceil(q * kept) in exact arithmetic: 0.55 * 100 is 55.000000000000007
	 * in doubles, and the 56th gap is not the nearest rank. */
	rank = (size_t)ceil(q * (double)kept - 1e-9);
	rank = rank < 1 ? 1 : rank > kept ? kept : rank;
	t = gaps[rank - 1];
	snprintf(why, why_size, "auto: %.0f%% of the %zu gaps of %llds or more between submissions are"
		 " at most %llds%s", q * 100, kept, (long long)(min_ms / 1000), (long long)(t / 1000),
		 t > max_ms ? ", capped by idle_timeout_max" : "");
	return t > max_ms ? max_ms : t;
}
