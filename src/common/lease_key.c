/* See lease_key.h. */
#include "common/lease_key.h"

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
