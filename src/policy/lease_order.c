/* See lease_order.h. */
#include "policy/lease_order.h"

#include "policy/settings.h"

int lease_before(const struct lease_key *a, const struct lease_key *b)
{
	if (a->lane_rank != b->lane_rank)
		return a->lane_rank < b->lane_rank;
	if (a->priority != b->priority)
		return a->priority > b->priority;
	if (a->seq != b->seq)
		return a->seq < b->seq;
	return a->id < b->id;
}

int lease_compare(const void *a, const void *b)
{
	return lease_before(a, b) ? -1 : lease_before(b, a) ? 1 : 0;
}

int lease_lane_rank(const struct plan_settings *s, const char *lane)
{
	int rank = plan_lane_rank(s, lane);

	return rank >= 0 ? rank : s->nlanes;
}
