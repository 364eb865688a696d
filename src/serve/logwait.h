/* Log reads that wait for lines (GET /v1/jobs/ID/logs?wait=S): parked
 * HTTP requests, each tried again when lines of its job arrive here, once
 * a second (lines that came through another serve on the store, an
 * attempt that ended), and answered at its deadline whatever it finds.
 * The list is this module's alone; what a try replies is its caller's. */
#ifndef EBB_LOGWAIT_H
#define EBB_LOGWAIT_H

#include <event2/event.h>
#include <stddef.h>
#include <stdint.h>

#include "serve/batch.h"
#include "serve/httpd.h"

struct logwait;

/* Tries to answer req for query: 1 answered, 0 nothing to say yet
 * (never with last, when it must answer). */
typedef int (*logwait_try)(void *ctx, struct request *req, const void *query, int last);

struct logwait *logwait_new(struct event_base *base, struct batch *b, logwait_try try, void *ctx);
void logwait_free(struct logwait *lw);
/* Parks req, on job's lines, for up to wait_ms, with a copy of query:
 * 0, or -1 when out of memory (nothing parked). */
int logwait_park(struct logwait *lw, struct request *req, int64_t job, const void *query, size_t size,
		 int64_t wait_ms);
/* Lines of job arrived: its waiters try again at once. */
void logwait_wake(struct logwait *lw, int64_t job);
/* Answers every waiter now, and every later one at once (at shutdown). */
void logwait_release_all(struct logwait *lw);

#endif
