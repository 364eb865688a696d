/* The lease order's lanes: the order itself is common/lease_key.h's
 * (lane rank, higher priority, interrupted first, submission), which the
 * store shares; a lane's rank is the policy's, from [queue] lanes. */
#ifndef EBB_LEASE_ORDER_H
#define EBB_LEASE_ORDER_H

#include "common/lease_key.h"
#include "policy/plan.h"

/* A lane's rank: its place in [queue] lanes, or, for a lane not there
 * (a trace's lane the config does not name; a job queued before its lane
 * left the config), nlanes: after every configured lane, all such lanes
 * alike. Serve takes no job of an unknown lane, so that its queue and
 * scaler see no other rank than a configured one. */
int lease_lane_rank(const struct plan_settings *s, const char *lane);

#endif
