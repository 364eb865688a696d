/* The ledger: every instance-second billed at its offer's price and
 * market, and attributed to its boot, to the job it ran, or to idle. An
 * instance's life is a chain of segments, one per stretch; a job's cost is
 * the sum of its segments; at termination the time billed past the
 * instance's life (rounding and minimum) is one more segment, so the
 * segments always add up to what the provider bills. */
#ifndef EBB_LEDGER_H
#define EBB_LEDGER_H

#include "common/instance.h"
#include "serve/server.h"

/* The instance moves to `to` (running inst->job_id): its open segment is
 * closed and costed, and the next one opened; on termination its billed
 * time and cost are set and the offer's statistics updated. Called before
 * inst->state changes; sets inst->updated_ms to the instant of the change. */
int ledger_transition(struct server *s, struct instance *inst, enum instance_state to);

/* Price of an instance-millisecond, USD. */
double ledger_usd_per_ms(const struct server *s, const struct instance *inst);

#endif
