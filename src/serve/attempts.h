/* A job's attempts: every lease of it and how its run ended (the
 * job_attempts table, GET /v1/jobs/ID's "runs"). The queue writes them
 * as a lease begins and ends, in the batch of the job's change. Each is
 * numbered by its lease's token, which grows by one with every lease of
 * the job: the worker knows its run's number. A lease older than the
 * table is made at its end.
 *
 * The reply's member is "runs", not "attempts": the job object has an
 * integer "attempts" already (the leases that counted), which a second
 * member of that name would duplicate. */
#ifndef EBB_ATTEMPTS_H
#define EBB_ATTEMPTS_H

#include <stdint.h>

#include "common/jsonout.h"
#include "store/store.h"

/* How a job's change ends its running attempt: the outcome (NULL: the
 * job's new state says, succeeded, cancelled or failed), why (NULL: the
 * job's error) and the exit status of its process, when its worker told
 * it. */
struct attempt_end {
	const char *outcome, *reason;
	int has_exit, exit;
};

/* The job was just leased (as written): its next attempt begins. */
int attempts_begin(struct store *st, const struct job *job);
/* The job's running attempt ends at now_ms with the job as written. */
int attempts_end(struct store *st, const struct job *job, const struct attempt_end *how, int64_t now_ms);
/* The outcome of the job's latest attempt that ended into out ("" for
 * none). */
int attempts_last_outcome(struct store *st, int64_t job, char *out, size_t size);
/* The job's attempts as the array `key` of o, oldest first. */
int attempts_write_json(struct store *st, int64_t job, struct jsonout *o, const char *key);

#endif
