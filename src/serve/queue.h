/* Queue semantics on top of the store: submit with idempotency keys, lanes
 * and priorities, delays, fenced leases, retries with backoff, dead-letter,
 * per-type concurrency limits and cancellation. Every function reads time
 * from the injected clock and leaves its writes in the store's open batch.
 *
 * Every change of a job's state is told to the queue's subscribers, in
 * the same batch: this is where a job's life meets the fleet (an instance
 * is busy while its job is leased) and, through the fleet, the ledger. */
#ifndef EBB_QUEUE_H
#define EBB_QUEUE_H

#include <stdint.h>

#include "common/clock.h"
#include "common/config.h"
#include "common/error.h"
#include "serve/attempts.h"
#include "serve/preempt.h"
#include "serve/workers.h"
#include "store/store.h"

struct histogram;

/* A job's state changed: from is what the store held before. */
struct job_change {
	enum job_state from;
	const struct job *job; /* as written */
	/* Its run was stopped from outside (queue_interrupt); reclaimed: by
	 * a cloud's spot reclaim, as its worker said. */
	int interrupted, reclaimed;
	/* How the run of its lease ended, when the change ends one. */
	struct attempt_end ended;
};

/* A subscriber: nonzero fails the step that made the change. */
typedef int (*job_hook)(void *arg, const struct job_change *c);

#define QUEUE_MAX_HOOKS 4

struct queue {
	struct store *store;
	const struct config *cfg;
	const struct clock *clock;
	uint64_t rng; /* backoff jitter; seeded by the caller */
	/* Set when a job may have become leasable: waiting workers are worth
	 * another look. */
	int ready_changed;
	/* Gets, for each lease, the seconds from the job's last state change
	 * (queued) to the grant; NULL: not measured. */
	struct histogram *lease_latency;
	struct {
		job_hook fn;
		void *arg;
	} hooks[QUEUE_MAX_HOOKS];
	int nhooks;
	/* Leases asked to stop for a team owed their GPUs (the scaler's). */
	struct preempts preempts;
};

void queue_init(struct queue *q, struct store *store, const struct config *cfg,
		const struct clock *clock, uint64_t seed);
/* fn(arg, change) after each state change of a job. */
void queue_subscribe(struct queue *q, job_hook fn, void *arg);
/* A job may have become leasable: the waiting workers, this serve's and
 * (at the commit) the other serves', look again. */
void queue_ready_changed(struct queue *q);

/* job holds the request (lane, type, team, ... set; id, state and times
 * not). On success job is the stored job, and *existed is 1 when the
 * idempotency key named an earlier job with the same body. */
int queue_submit(struct queue *q, struct job *job, int64_t delay_ms, int *existed,
		 struct ebb_error *err);

/* The types a lease is for only, or none (n 0): a worker's warm handlers
 * take the next job in lease order only when it is theirs. */
struct lease_types {
	const char *names[WORKER_HANDLERS_MAX];
	int n;
};
/* Whether type is one of t's. */
int lease_types_has(const struct lease_types *t, const char *type);

/* 1 and the leased job in out, 0 when nothing fits (or the first that
 * fits is of none of only's types), -1 on error. The lease names the
 * worker and the instance it runs on (0: a worker ebb did not launch). */
int queue_lease(struct queue *q, const struct lease_offer *offer, const struct lease_types *only, const char *worker,
		int64_t instance, int64_t lease_ms, struct job *out, struct ebb_error *err);

int queue_get(struct queue *q, int64_t id, const char *team, struct job *out,
	      struct ebb_error *err);
int queue_heartbeat(struct queue *q, int64_t id, int64_t token, struct job *out,
		    struct ebb_error *err);
/* items_done < 0: unchanged. */
int queue_checkpoint(struct queue *q, int64_t id, int64_t token, const char *checkpoint,
		     int64_t items_done, struct job *out, struct ebb_error *err);
int queue_complete(struct queue *q, int64_t id, int64_t token, int64_t items_done,
		   const char *result, struct job *out, struct ebb_error *err);
/* retry = 0: the job failed for good; otherwise it is retried after a
 * backoff, or dead once its attempts are spent. exit: the process's exit
 * status, -1 when there is none (it never ran, or a signal ended it). */
int queue_fail(struct queue *q, int64_t id, int64_t token, const char *reason, int retry, int exit,
	       struct job *out, struct ebb_error *err);
/* The run was stopped from outside (a spot reclaim, its worker stopped):
 * the job is queued again at the head of its lane, the attempt is not
 * counted, and it resumes from its checkpoint. checkpoint: a last one
 * covering checkpoint_items (< 0: keep the count), or NULL to keep the
 * stored one. items_done: items the run had done when it stopped (-1:
 * unknown); those past the checkpoint are added to items_lost. A lease
 * the scaler preempted (q->preempts) gets the preemption's reason as its
 * error, and when its last run was preempted too, waits [scaler]
 * preempt_backoff (delayed) before its next lease. */
int queue_interrupt(struct queue *q, int64_t id, int64_t token, const char *checkpoint,
		    int64_t checkpoint_items, int64_t items_done, const char *reason, int reclaimed,
		    struct job *out, struct ebb_error *err);
/* team: the caller's team scope, or NULL for all. */
int queue_cancel(struct queue *q, int64_t id, const char *team, struct job *out,
		 struct ebb_error *err);
/* A failed or dead job queued again with a new budget of attempts, its
 * checkpoint and items done kept, or dropped with fresh. 409 for a job
 * in another state. team: the caller's team scope, or NULL for all. */
int queue_requeue(struct queue *q, int64_t id, const char *team, int fresh, struct job *out,
		  struct ebb_error *err);
/* Takes back a lease whose reply never reached its worker: the job is
 * queued again and the attempt is not counted. */
int queue_unlease(struct queue *q, int64_t id, int64_t token, struct ebb_error *err);
/* The same for the job leased on instance whose worker asks for work: it
 * runs none, so that lease's reply was lost (serve was killed between the
 * commit and the reply). Nothing when the job is no longer leased there. */
int queue_unlease_instance(struct queue *q, int64_t id, int64_t instance, struct ebb_error *err);

/* The leases of the jobs held on instance end now (the instance is gone);
 * the next queue_process_due puts the jobs back. */
int queue_expire_instance(struct queue *q, int64_t instance, struct ebb_error *err);

/* Promotes delayed jobs that are due and expires overdue leases. */
int queue_process_due(struct queue *q, struct ebb_error *err);
/* The next time queue_process_due has work; 0 if none. */
int queue_next_deadline(struct queue *q, int64_t *out_ms);

/* The delay before the attempt after `attempts` failed ones. */
int64_t queue_backoff_ms(struct queue *q, int attempts);

#endif
