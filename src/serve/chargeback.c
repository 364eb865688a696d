/* See chargeback.h. */
#include "serve/chargeback.h"

#include <math.h>
#include <stdlib.h>

double chargeback_usd(double busy_usd, double all_busy_usd, double not_busy_usd)
{
	return all_busy_usd > 0 ? busy_usd + not_busy_usd * busy_usd / all_busy_usd : busy_usd;
}

int64_t chargeback(struct charge *t, int n, double not_busy_usd)
{
	double busy = 0, *frac;
	int64_t fleet_cents, given = 0;

	for (int k = 0; k < n; k++)
		busy += t[k].busy_usd;
	fleet_cents = llround((busy + not_busy_usd) * 100.0);
	if (busy <= 0) {
		for (int k = 0; k < n; k++)
			t[k].busy_cents = t[k].idle_share_cents = t[k].total_cents = 0;
		return fleet_cents;
	}
	frac = calloc((size_t)n + 1, sizeof *frac);
	for (int k = 0; k < n; k++) {
		double exact = chargeback_usd(t[k].busy_usd, busy, not_busy_usd) * 100.0;
		t[k].total_cents = (int64_t)floor(exact);
		if (frac)
			frac[k] = exact - floor(exact);
		given += t[k].total_cents;
	}
	/* The cents the floors left, one each to the largest fractions (the
	 * first listed on a tie). */
	for (int64_t left = fleet_cents - given; left > 0; left--) {
		int best = 0;
		for (int k = 1; k < n; k++) {
			if (frac && frac[k] > frac[best])
				best = k;
		}
		t[best].total_cents++;
		if (frac)
			frac[best] = -1;
	}
	free(frac);
	for (int k = 0; k < n; k++) {
		t[k].busy_cents = llround(t[k].busy_usd * 100.0);
		if (t[k].busy_cents > t[k].total_cents)
			t[k].busy_cents = t[k].total_cents;
		t[k].idle_share_cents = t[k].total_cents - t[k].busy_cents;
	}
	return 0;
}
