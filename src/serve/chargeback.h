/* Chargeback: a fleet's bill split among teams, to the cent. Each team
 * pays for its jobs' runs (busy) and for the time no job used (boot,
 * idle, the billing remainder) of the instances launched for its work;
 * the instances launched for no team's work (the warm pool, workers
 * started by hand, teams off) make the `shared` line. Each line's total
 * is rounded to whole cents so that the lines add up to the fleet's total
 * to the cent (largest remainder): the lines a finance team gets sum to
 * the bill. Pure arithmetic: the report calls it (docs/TEAMS.md). */
#ifndef EBB_CHARGEBACK_H
#define EBB_CHARGEBACK_H

#include <stdint.h>

struct charge {
	double busy_usd, not_busy_usd; /* in: its jobs' runs; its instances' time no job used */
	/* out, in cents: busy_cents + not_busy_cents = total_cents */
	int64_t busy_cents, not_busy_cents, total_cents;
};

/* USD in whole cents, half a cent up, once float noise below a millionth
 * of a cent is rounded off: a total read back from a reply (13 digits)
 * rounds to the cent the total it was written from did, where a plain
 * llround(usd * 100) of 8.655 gives 865 and of 8.655000000001 gives 866. */
int64_t chargeback_cents(double usd);

/* Fills the cents of n lines; returns the fleet's total in cents,
 * fleet_usd rounded (the report's total, which is every line's USD summed
 * in another order), which their total_cents add up to. */
int64_t chargeback(struct charge *lines, int n, double fleet_usd);

#endif
