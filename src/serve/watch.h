/* A running job's wake-up: its worker keeps a watch of its lease open
 * (GET /v1/jobs/ID/watch), answered at once when the lease stops being
 * the worker's (the job was cancelled, its lease expired and went to
 * another) or when the scaler preempts it, and otherwise after the wait
 * it asked for. Heartbeats would tell the worker the same, up to a
 * heartbeat period later. A parked watch is woken by the queue's job
 * changes and the preemptions added; it answers from the store as
 * committed, in the event loop after the batch that woke it. */
#ifndef EBB_WATCH_H
#define EBB_WATCH_H

#include <event2/event.h>

#include "serve/batch.h"
#include "serve/httpd.h"
#include "serve/queue.h"

struct watch;

/* Subscribes to q's job changes and preemptions. */
struct watch *watch_new(struct event_base *base, struct batch *b, struct queue *q);
void watch_free(struct watch *wt);
/* Answers req about the lease (job, token) now when there is news, or
 * parks it up to wait_ms: {"job": ID, "action": "stop" | "preempt" |
 * "none", "state": ..., "reason": ...} (docs/API.md). The request's keeper
 * is the watch until it is gone. */
void watch_lease(struct watch *wt, struct request *req, int64_t job, int64_t token, int64_t wait_ms);
/* Answers every parked watch with "none", and every later one at once
 * (at shutdown). */
void watch_release_all(struct watch *wt);

#endif
