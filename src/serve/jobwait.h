/* Reads of one job that wait for news of it: log reads that wait for
 * lines (GET /v1/jobs/ID/logs?wait=S) and job reads that wait for its end
 * (GET /v1/jobs/ID?wait=S), each in a jobwait of its own. Parked HTTP
 * requests, each tried again when its caller says there is news of its
 * job here, when another serve on the store said it committed something,
 * and once a second (what came through another serve unsaid: an attempt
 * that ended), and answered at its deadline whatever it finds. The list
 * is this module's alone; what a try replies is its caller's. */
#ifndef EBB_JOBWAIT_H
#define EBB_JOBWAIT_H

#include <event2/event.h>
#include <stddef.h>
#include <stdint.h>

#include "serve/batch.h"
#include "serve/httpd.h"

struct jobwait;

/* Tries to answer req for query: 1 answered, 0 nothing to say yet
 * (never with last, when it must answer). */
typedef int (*jobwait_try)(void *ctx, struct request *req, const void *query, int last);

struct jobwait *jobwait_new(struct event_base *base, struct batch *b, jobwait_try try, void *ctx);
void jobwait_free(struct jobwait *jw);
/* Parks req, on news of job, for up to wait_ms, with a copy of query:
 * 0, or -1 when out of memory (nothing parked). */
int jobwait_park(struct jobwait *jw, struct request *req, int64_t job, const void *query, size_t size,
		 int64_t wait_ms);
/* News of job here: its waiters try again at once. */
void jobwait_wake(struct jobwait *jw, int64_t job);
/* News from another serve, of any job: every waiter tries again. */
void jobwait_wake_all(struct jobwait *jw);
/* Answers every waiter now, and every later one at once (at shutdown). */
void jobwait_release_all(struct jobwait *jw);

#endif
