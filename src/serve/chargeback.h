/* Chargeback: a fleet's bill split among teams, to the cent. Each team
 * pays for its jobs' runs (busy), and for a share of the time no job used
 * (boot, idle, the billing remainder) in proportion to its busy cost: the
 * idle capacity was kept for the teams that use the fleet. The teams'
 * totals add up to the fleet's total in whole cents (largest remainder),
 * so the lines a finance team gets sum to the bill. With no busy cost at
 * all, the not-busy cost stays unattributed. Pure arithmetic: the report
 * and the budgets (docs/TEAMS.md) both call it. */
#ifndef EBB_CHARGEBACK_H
#define EBB_CHARGEBACK_H

#include <stdint.h>

struct charge {
	double busy_usd; /* in: its jobs' runs */
	/* out, in cents: */
	int64_t busy_cents, idle_share_cents, total_cents;
};

/* Splits not_busy_usd among n teams by busy cost. The cents of the
 * fleet's total (sum of busy, plus not busy) that go to no team, when no
 * team ran anything, are returned. */
int64_t chargeback(struct charge *teams, int n, double not_busy_usd);

/* The exact share in USD of one team (for budgets, no rounding). */
double chargeback_usd(double busy_usd, double all_busy_usd, double not_busy_usd);

#endif
