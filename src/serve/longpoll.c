/* Parked lease requests (see longpoll.h). */
#include "serve/longpoll.h"

#include <stdlib.h>

#include "common/log.h"
#include "common/timer.h"
#include "serve/scaler.h"

struct waiter {
	struct longpoll *lp;
	struct request *req;
	struct lease_request r;
	struct event *timer;
	int parked;
	struct waiter *prev, *next;
	/* The lease this request was answered with, taken back if the reply
	 * never reaches the worker. */
	int64_t granted_id, granted_token;
};

struct longpoll {
	struct event_base *base;
	struct batch *batch;
	struct queue *queue;
	const struct scaler *scaler;
	struct fleet *fleet;
	struct waiter *head, *tail; /* oldest first */
	int n;
	/* serve stops: a request is answered at once, with no job. One
	 * parked now would still be suspended when the HTTP daemon stops,
	 * which aborts on it. */
	int stopping;
};

static void reply_job(struct waiter *w, const struct job *job)
{
	struct jsonout o = {0};

	jsonout_open(&o, NULL, '{');
	if (job)
		job_write_json(&o, "job", job);
	else
		jsonout_null(&o, "job");
	/* Instances follow the idle timeout in force, which moves with auto
	 * and with the warm floor. */
	if (w->lp->scaler && w->r.instance)
		jsonout_real(&o, "idle_timeout_s", (double)scaler_worker_idle_timeout(w->lp->scaler) / 1000.0);
	jsonout_close(&o, '}');
	if (job) {
		w->granted_id = job->id;
		w->granted_token = job->lease_token;
	}
	request_reply_json(w->req, 200, jsonout_finish(&o));
}

static void unpark(struct waiter *w)
{
	struct longpoll *lp = w->lp;

	if (!w->parked)
		return;
	if (w->prev)
		w->prev->next = w->next;
	else
		lp->head = w->next;
	if (w->next)
		w->next->prev = w->prev;
	else
		lp->tail = w->prev;
	evtimer_del(w->timer);
	w->parked = 0;
	lp->n--;
}

static void on_timeout(evutil_socket_t fd, short what, void *arg)
{
	struct waiter *w = arg;

	(void)fd;
	(void)what;
	unpark(w);
	reply_job(w, NULL);
	batch_flush(w->lp->batch);
}

/* 1 and a lease for w, 0 when nothing fits, -1 on error (in err). */
static int try_lease(struct waiter *w, struct job *job, struct ebb_error *err)
{
	return queue_lease(w->lp->queue, &w->r.offer, w->r.worker, w->r.instance, w->r.lease_ms, job, err);
}

void longpoll_lease(struct longpoll *lp, struct request *req, const struct lease_request *r)
{
	struct waiter *w = calloc(1, sizeof *w);
	struct ebb_error err;
	struct job job;
	int rc = 0;

	if (!w) {
		error_set(&err, 500, "internal", NULL, "out of memory");
		request_reply(req, err.status, error_to_json(&err));
		json_decref(r->offer.labels);
		return;
	}
	w->lp = lp;
	w->req = req;
	w->r = *r;
	request_set_data(req, w);
	if (r->may_lease && !lp->stopping)
		rc = try_lease(w, &job, &err);
	if (rc < 0) {
		request_reply(req, err.status, error_to_json(&err));
		return;
	}
	if (rc == 1 || r->wait_ms <= 0 || lp->stopping) {
		reply_job(w, rc == 1 ? &job : NULL);
		if (rc == 1)
			job_free(&job);
		return;
	}
	w->prev = lp->tail;
	w->next = NULL;
	if (lp->tail)
		lp->tail->next = w;
	else
		lp->head = w;
	lp->tail = w;
	w->parked = 1;
	lp->n++;
	w->timer = evtimer_new(lp->base, on_timeout, w);
	timer_add_ms(w->timer, r->wait_ms);
}

/* The batch's precommit subscriber: offers the queued jobs to the parked
 * requests, oldest first, when a job may have become leasable. */
static int dispatch(void *arg)
{
	struct longpoll *lp = arg;
	struct queue *q = lp->queue;
	struct ebb_error err;
	struct waiter *w, *next;

	while (q->ready_changed && lp->head) {
		q->ready_changed = 0;
		for (w = lp->head; w; w = next) {
			struct job job;
			int rc;

			next = w->next;
			if (!w->r.may_lease)
				continue;
			if (request_peer_gone(w->req)) {
				/* A job leased to it would wait out its lease for nothing. */
				unpark(w);
				reply_job(w, NULL);
				continue;
			}
			if (store_count_in_state(q->store, JOB_QUEUED) == 0)
				break;
			/* Its instance may have been drained or terminated
			 * since it asked: a job leased to a worker that is
			 * going away would wait out its lease for nothing. */
			if ((rc = fleet_may_lease(lp->fleet, w->r.instance)) < 0)
				return -1;
			if (!rc) {
				w->r.may_lease = 0;
				continue;
			}
			if (batch_begin(lp->batch) != 0)
				return -1;
			rc = try_lease(w, &job, &err);
			batch_end(lp->batch, rc >= 0);
			if (rc < 0)
				return -1;
			if (rc == 1) {
				unpark(w);
				reply_job(w, &job);
				job_free(&job);
			}
		}
	}
	q->ready_changed = 0;
	return 0;
}

void longpoll_done(struct longpoll *lp, struct request *req, int sent)
{
	struct waiter *w = request_data(req);
	struct ebb_error err;

	if (!w)
		return;
	unpark(w);
	if (!sent && w->granted_id) {
		if (batch_begin(lp->batch) != 0)
			log_error("lease reply lost, and the store failed: the lease runs out instead",
				  "job=%lld", (long long)w->granted_id);
		else
			batch_end(lp->batch, queue_unlease(lp->queue, w->granted_id, w->granted_token, &err) == 0);
	}
	if (w->timer)
		event_free(w->timer);
	json_decref(w->r.offer.labels);
	free(w);
}

void longpoll_release_all(struct longpoll *lp)
{
	lp->stopping = 1;
	while (lp->head) {
		struct waiter *w = lp->head;
		unpark(w);
		reply_job(w, NULL);
	}
}

int longpoll_waiting(const struct longpoll *lp) { return lp->n; }

struct longpoll *longpoll_new(struct event_base *base, struct batch *b, struct queue *q,
			      const struct scaler *sc, struct fleet *f)
{
	struct longpoll *lp = calloc(1, sizeof *lp);

	if (!lp)
		return NULL;
	lp->base = base;
	lp->batch = b;
	lp->queue = q;
	lp->scaler = sc;
	lp->fleet = f;
	batch_on_precommit(b, dispatch, lp);
	return lp;
}

void longpoll_free(struct longpoll *lp) { free(lp); }
