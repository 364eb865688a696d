/* Serve's side of a spot reclaim. From the moment a notice is served for
 * an instance (GET /v1/fleet/ID/notice answers 200) it takes no new job:
 * it is drained, and its worker, which polls the notice, interrupts the
 * job it runs (the job resumes from its checkpoint on another instance)
 * and exits. With the local provider the notices come from its simulated
 * reclaims ([offer.NAME] spot_reclaim_rate) and from `ebb reclaim`; on a
 * cloud the worker reads the cloud's own notice (docs/SPOT.md). */
#ifndef EBB_RECLAIM_H
#define EBB_RECLAIM_H

#include <jansson.h>
#include <stdint.h>

#include "common/error.h"
#include "common/instance.h"
#include "serve/fleet.h"

/* Serves a notice for instance id from now on and drains it. Once served,
 * a notice stays: a second call changes nothing. Inside a batch. */
int reclaim_notice(struct fleet *f, int64_t id, struct instance *out, struct ebb_error *err);

/* The notice as GET /v1/fleet/ID/notice serves it, in the shape of AWS's
 * instance-action: {"action": "terminate", "time": "2026-11-21T23:40:00.250Z"},
 * the time the instance will be killed (to the millisecond): notice_ms
 * after the notice, on the worker's clock. */
json_t *reclaim_notice_json(const struct instance *inst, int64_t notice_ms, const struct clock *clock);

#endif
