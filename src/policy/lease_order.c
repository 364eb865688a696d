/* See lease_order.h. */
#include "policy/lease_order.h"

#include "policy/settings.h"

int lease_lane_rank(const struct plan_settings *s, const char *lane)
{
	int rank = plan_lane_rank(s, lane);

	return rank >= 0 ? rank : s->nlanes;
}
