/* The ledger: every instance-second billed at its offer's price and
 * market, and attributed to its boot, to the jobs it ran (side by side on
 * an instance of several GPUs, each its GPUs' share), or to idle. An
 * instance's life is a chain of segments, one per stretch (several at
 * once while jobs run side by side); a job's cost is
 * the sum of its segments; at termination the time billed past the
 * instance's life (rounding and minimum) is one more segment, so the
 * segments always add up to what the provider bills. Each closed segment
 * is also added to the store's running sums, per UTC day and of all time
 * (store_ledger_add), which GET /metrics and the dashboard read instead
 * of every segment. The fleet calls it at every transition of an instance
 * (fleet.c). */
#ifndef EBB_LEDGER_H
#define EBB_LEDGER_H

#include "common/clock.h"
#include "common/config.h"
#include "common/instance.h"
#include "store/store.h"

struct ledger {
	struct store *store;
	const struct clock *clock;
	const struct offer *offers; /* the catalogue as configured: its prices */
	int noffers;
	/* The types' gpu_share: a shared type's job holds its part of a GPU
	 * (NULL: none shared). */
	const struct config *cfg;
};

/* The instance moves to `to` (running inst->job_id, and on an instance of
 * several GPUs the other jobs leased on it): its open segments are closed
 * and costed, and the next ones opened, a job's holding its GPUs and an
 * idle one the rest; on termination its billed time and cost are set and
 * the offer's statistics updated. Called before inst->state changes; sets
 * inst->updated_ms to the instant of the change. Called again in the same
 * state when the jobs beside inst->job_id change. 0, or -1 on a store
 * error. */
int ledger_transition(struct ledger *l, struct instance *inst, enum instance_state to);

/* Price of an instance-hour of the offer on the market, USD; 0 when the
 * offer is not configured or not sold there. */
double ledger_usd_per_hour(const struct ledger *l, const char *offer, enum market m);
/* The same per millisecond. */
double ledger_usd_per_ms(const struct ledger *l, const char *offer, enum market m);

#endif
