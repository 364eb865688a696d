/* A running job's wake-up: a thread that keeps a watch of the job's lease
 * open to serve (GET /v1/jobs/ID/watch), so that a cancel or a preemption
 * reaches the job at once rather than at the next heartbeat. The thread
 * has a client of its own and asks from the job's first second on (a
 * shorter job costs serve no call); when serve answers with news, it
 * writes a byte on wakeup_fd for the job's poll loop, and ends. A serve out of reach
 * (restarting, failing over) is asked again with backoff; heartbeats
 * still tell the same, later, if the watch never gets through. */
#ifndef EBB_WAKEUP_H
#define EBB_WAKEUP_H

#include <stdint.h>

#include "common/client.h"

struct wakeup;

/* Starts watching the lease (job, token) through the serves conn names,
 * beginning with the current-th (the one that answered last); NULL when
 * no thread could be started (heartbeats alone tell then). */
struct wakeup *wakeup_start(const struct client_args *conn, int current, int64_t job, int64_t token);
/* Readable once there is news; -1 for a NULL wakeup (never). */
int wakeup_fd(const struct wakeup *u);
/* The news, once wakeup_fd was readable: "stop" (the lease is no longer
 * the worker's) or "preempt", and why; NULL before. */
const char *wakeup_news(const struct wakeup *u, const char **why);
/* Ends the watch at once (a call in flight is cut short) and frees it. */
void wakeup_stop(struct wakeup *u);

#endif
