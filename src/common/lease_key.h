/* The order in which queued jobs are leased, for serve and the simulator
 * alike: lane (its rank in [queue] lanes), then higher priority, then
 * jobs put back after an interruption before the others, then submission.
 * Serve's lease query is this order in SQL (ORDER BY lane_rank, priority
 * DESC, seq, id in both engines; tests/unit/test_store_jobs.c holds the
 * two to the same jobs); the store picks among the heads of the queued
 * classes by it, and the simulator leases by it. A lane's rank is
 * policy/lease_order.h's. */
#ifndef EBB_COMMON_LEASE_KEY_H
#define EBB_COMMON_LEASE_KEY_H

#include <stdint.h>

/* A queued job's place in the order: the store's columns of the same
 * names. seq is 0 for a job queued the usual way, and LEASE_SEQ_RESUMED
 * plus its id once it was interrupted, so that those come first, among
 * themselves in the order they were submitted. */
struct lease_key {
	int lane_rank;
	int priority;
	int64_t seq;
	int64_t id; /* submission order */
};

#define LEASE_SEQ_RESUMED (INT64_MIN / 2)

/* seq of a job: interrupted (put back in the queue) once at least, or not. */
static inline int64_t lease_seq(int64_t id, int interrupted)
{
	return interrupted ? LEASE_SEQ_RESUMED + id : 0;
}

/* Whether a is leased before b. */
int lease_before(const struct lease_key *a, const struct lease_key *b);
/* qsort's form of it: negative when a comes first. */
int lease_compare(const void *a, const void *b);

#endif
