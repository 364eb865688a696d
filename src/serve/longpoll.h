/* Lease requests that wait for a job: a FIFO of parked HTTP requests, each
 * with its own timer in the event loop, served in arrival order whenever
 * the queue says a job may have become leasable. */
#ifndef EBB_LONGPOLL_H
#define EBB_LONGPOLL_H

#include "serve/server.h"

struct waiter {
	struct server *srv;
	struct request *req;
	struct lease_offer offer;
	char worker[CONF_NAME_MAX + 1];
	int64_t lease_ms;
	struct event *timer;
	int parked;
	int draining; /* its instance drains: it waits, but gets no job */
	struct waiter *prev, *next;
	/* The lease this request was answered with, taken back if the reply
	 * never reaches the worker. */
	int64_t granted_id, granted_token;
};

/* Tries to lease at once; parks the request for wait_ms if nothing fits. */
void longpoll_lease(struct server *s, struct waiter *w, int64_t wait_ms);
/* Offers the queued jobs to the parked requests, oldest first. */
int longpoll_dispatch(struct server *s);
/* The request is gone: unparks it, and takes back an undelivered lease. */
void longpoll_done(struct waiter *w, int sent);
/* Answers every parked request with no job (at shutdown). */
void longpoll_release_all(struct server *s);

#endif
