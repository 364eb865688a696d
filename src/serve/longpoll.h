/* Lease requests that wait for a job: a FIFO of parked HTTP requests, each
 * with its own timer in the event loop, served in arrival order whenever
 * the queue says a job may have become leasable (before each commit, in
 * the same batch). The list is this module's alone. */
#ifndef EBB_LONGPOLL_H
#define EBB_LONGPOLL_H

#include <event2/event.h>

#include "serve/batch.h"
#include "serve/fleet.h"
#include "serve/httpd.h"
#include "serve/queue.h"
#include "serve/workers.h"

struct longpoll;
struct scaler;

/* The most jobs one lease request may take (max_jobs). */
#define LEASE_MAX_JOBS 100

/* One lease request. */
struct lease_request {
	struct lease_offer offer; /* labels: owned, released with the request */
	char worker[CONF_NAME_MAX + 1];
	int64_t instance; /* the instance the worker runs on; 0: none ebb launched */
	int64_t lease_ms;
	int64_t wait_ms; /* how long it may wait for a job */
	int may_lease;   /* 0: its instance drains: it waits, but gets no job */
	int max_jobs;    /* up to this many jobs, replied as an array; 0: one, as an object */
	/* The jobs the worker runs now, beside which its free GPUs (offer's
	 * gpus) take more: several at once on an instance of several GPUs. */
	int64_t running[INSTANCE_GPUS_MAX];
	int nrunning;
	int names_running; /* it sent "running" (an empty list too) */
	/* The job a complete or fail just reported, owned: the reply is that
	 * job with this lease as its member "next". NULL: a lease alone. */
	struct job *done;
	/* The resident handlers the worker keeps (workers.h). */
	struct handler_seen handlers[WORKER_HANDLERS_MAX];
	int nhandlers;
};

/* sc (NULL: none) tells workers of instances the idle timeout in force;
 * f says whether a parked worker's instance may still take a job; wk
 * keeps what a reply to a worker started by hand carried (workers.h). */
struct longpoll *longpoll_new(struct event_base *base, struct batch *b, struct queue *q,
			      const struct scaler *sc, struct fleet *f, struct workers *wk);
void longpoll_free(struct longpoll *lp);
/* The scaler from now on (this serve came to lead, docs/HA.md). */
void longpoll_set_scaler(struct longpoll *lp, const struct scaler *sc);
/* Releases what r holds (its labels and done), for a request that will
 * not reach longpoll_lease. */
void lease_request_free(const struct lease_request *r);
/* Leases at once, or parks req for r->wait_ms if nothing fits; the reply
 * is req's. Takes r's labels and done. */
void longpoll_lease(struct longpoll *lp, struct request *req, const struct lease_request *r);
/* Answers every parked request with no job, and every later one at once
 * (at shutdown). */
void longpoll_release_all(struct longpoll *lp);
/* Lease requests waiting now. */
int longpoll_waiting(const struct longpoll *lp);

#endif
