/* See chargeback.h. */
#include "serve/chargeback.h"

#include <math.h>
#include <stdlib.h>

#include "common/mem.h"

int64_t chargeback_cents(double usd) { return llround(round(usd * 1e8) / 1e6); }

int64_t chargeback(struct charge *t, int n, double fleet_usd)
{
	double *frac = mem_calloc((size_t)n + 1, sizeof *frac);
	int64_t fleet_cents = chargeback_cents(fleet_usd), given = 0;

	for (int k = 0; k < n; k++) {
		double exact = (t[k].busy_usd + t[k].not_busy_usd) * 100.0;
		t[k].total_cents = (int64_t)floor(exact);
		if (frac)
			frac[k] = exact - floor(exact);
		given += t[k].total_cents;
	}
	/* The cents the floors left, one each to the largest fractions (the
	 * first listed on a tie). The fleet's total is summed in another
	 * order than the lines, so it may round a cent beside their sum:
	 * then the smallest fraction gives one back. */
	for (int64_t left = fleet_cents - given; left > 0 && n > 0; left--) {
		int best = 0;
		for (int k = 1; k < n; k++) {
			if (frac && frac[k] > frac[best])
				best = k;
		}
		t[best].total_cents++;
		if (frac)
			frac[best] = -1;
	}
	for (int64_t over = given - fleet_cents; over > 0 && n > 0; over--) {
		int least = -1;
		for (int k = 0; k < n; k++) {
			if (t[k].total_cents > 0 && (least < 0 || (frac && frac[k] < frac[least])))
				least = k;
		}
		if (least < 0)
			break;
		t[least].total_cents--;
		if (frac)
			frac[least] = 2;
	}
	free(frac);
	for (int k = 0; k < n; k++) {
		t[k].busy_cents = chargeback_cents(t[k].busy_usd);
		if (t[k].busy_cents > t[k].total_cents)
			t[k].busy_cents = t[k].total_cents;
		t[k].not_busy_cents = t[k].total_cents - t[k].busy_cents;
	}
	return fleet_cents;
}
