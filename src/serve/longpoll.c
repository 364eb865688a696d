/* Parked lease requests (see longpoll.h). */
#include "serve/longpoll.h"
#include "serve/workers.h"

#include <stdlib.h>

#include "common/log.h"
#include "common/mem.h"
#include "common/timer.h"
#include "common/words.h"
#include "policy/placement.h"
#include "serve/scaler.h"
#include "serve/share.h"

struct waiter {
	struct request_keeper keeper; /* first: the request's keeper is the waiter */
	struct longpoll *lp;
	struct request *req;
	struct lease_request r;
	struct event *timer;
	int parked;
	struct waiter *prev, *next;
	/* The leases this request was answered with, taken back if the reply
	 * never reaches the worker. */
	int64_t granted_id[LEASE_MAX_JOBS], granted_token[LEASE_MAX_JOBS];
	int ngranted;
};

struct longpoll {
	struct event_base *base;
	struct batch *batch;
	struct queue *queue;
	const struct scaler *scaler;
	struct fleet *fleet;
	struct workers *workers;
	/* Parked, in the order jobs are offered to them: policy/placement.h's,
	 * and among those alike the oldest first. */
	struct waiter *head, *tail;
	int n;
	/* serve stops: a request is answered at once, with no job. One
	 * parked now would still be suspended when the HTTP daemon stops,
	 * which aborts on it. */
	int stopping;
};

/* A leased job; one with no command of its own carries its type's
 * handler as "handler", the argv the worker starts (docs/JOBS.md). The
 * config was checked at load, so the line cuts into words. */
static void write_leased(const struct longpoll *lp, struct jsonout *o, const char *key, const struct job *j)
{
	char buf[WORDS_LINE_MAX + 1], *words[WORDS_MAX], why[80];
	const char *handler = j->command ? NULL : config_handler(lp->queue->cfg, j->type);
	int n = handler ? words_split(handler, buf, words, WORDS_MAX, why, sizeof why) : 0;

	job_write_json(o, key, j);
	if (n <= 0)
		return;
	jsonout_reopen(o);
	jsonout_open(o, "handler", '[');
	for (int i = 0; i < n; i++)
		jsonout_string(o, NULL, words[i]);
	jsonout_close(o, ']');
	jsonout_close(o, '}');
}

/* The lease reply: {"job": a job or null} or, with max_jobs, {"jobs":
 * [...]}; after a complete or a fail, the job it reported with that as
 * its "next". Frees the n jobs. */
static void reply_jobs(struct waiter *w, struct job *jobs, int n)
{
	struct jsonout o = {0};

	if (w->r.done) {
		job_write_json(&o, NULL, w->r.done);
		jsonout_reopen(&o);
		jsonout_open(&o, "next", '{');
	} else {
		jsonout_open(&o, NULL, '{');
	}
	if (w->r.max_jobs) {
		jsonout_open(&o, "jobs", '[');
		for (int i = 0; i < n; i++)
			write_leased(w->lp, &o, NULL, &jobs[i]);
		jsonout_close(&o, ']');
	} else if (n) {
		write_leased(w->lp, &o, "job", &jobs[0]);
	} else {
		jsonout_null(&o, "job");
	}
	/* Instances follow the idle timeout in force, which moves with auto
	 * and with the warm floor. */
	if (w->lp->scaler && w->r.instance)
		jsonout_real(&o, "idle_timeout_s", (double)scaler_worker_idle_timeout(w->lp->scaler) / 1000.0);
	jsonout_close(&o, '}');
	if (w->r.done)
		jsonout_close(&o, '}');
	for (int i = 0; i < n; i++) {
		w->granted_id[i] = jobs[i].id;
		w->granted_token[i] = jobs[i].lease_token;
		job_free(&jobs[i]);
	}
	w->ngranted = n;
	request_reply_json(w->req, 200, jsonout_finish(&o));
}

static void reply_none(struct waiter *w) { reply_jobs(w, NULL, 0); }

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
	reply_none(w);
	batch_flush(w->lp->batch);
}

/* The most jobs r may be given at once. */
static int most_jobs(const struct lease_request *r) { return r->max_jobs ? r->max_jobs : 1; }

/* Leases up to max_jobs (at least one) into jobs, of only's types if it
 * names any: how many, or -1 on an error (in err) before the first. An
 * error after it ends the batch of leases early: those taken are the
 * worker's. */
static int try_lease(struct waiter *w, const struct lease_types *only, struct job *jobs, struct ebb_error *err)
{
	int n = 0, max = most_jobs(&w->r), rc = 1;

	while (n < max && (rc = queue_lease(w->lp->queue, &w->r.offer, only, w->r.worker, w->r.instance,
					    w->r.lease_ms, &jobs[n], err)) == 1)
		n++;
	return rc < 0 && n == 0 ? -1 : n;
}

/* The types of the handlers the worker keeps ready: where their next job
 * goes first (docs/SCALING.md, "Warm handlers"). */
static void warm_types(const struct lease_request *r, struct lease_types *t)
{
	t->n = 0;
	for (int k = 0; k < r->nhandlers; k++)
		if (r->handlers[k].ready)
			t->names[t->n++] = r->handlers[k].type;
}

static void gone(struct request_keeper *k, int sent);

void lease_request_free(const struct lease_request *r)
{
	json_decref(r->offer.labels);
	share_offer_free(&r->offer);
	if (r->done) {
		job_free(r->done);
		free(r->done);
	}
}

/* Into the list in placement order, after those alike: walked from the
 * tail, where a request of the newest instance belongs. */
static void park(struct longpoll *lp, struct waiter *w)
{
	struct waiter *after = lp->tail;

	while (after && placement_before(w->r.instance, after->r.instance))
		after = after->prev;
	w->prev = after;
	w->next = after ? after->next : lp->head;
	if (w->next)
		w->next->prev = w;
	else
		lp->tail = w;
	if (after)
		after->next = w;
	else
		lp->head = w;
	w->parked = 1;
	lp->n++;
}

void longpoll_lease(struct longpoll *lp, struct request *req, const struct lease_request *r)
{
	struct waiter *w = mem_calloc(1, sizeof *w);
	struct job *jobs = mem_calloc((size_t)most_jobs(r), sizeof *jobs);
	struct ebb_error err;
	int n = 0;

	if (!w || !jobs) {
		error_set(&err, 500, "out_of_memory", NULL, ERROR_OUT_OF_MEMORY);
		request_reply(req, err.status, error_to_json(&err));
		lease_request_free(r);
		free(w);
		free(jobs);
		return;
	}
	w->lp = lp;
	w->req = req;
	w->r = *r;
	w->keeper.gone = gone;
	request_set_keeper(req, &w->keeper);
	if (r->may_lease && !lp->stopping)
		n = try_lease(w, &(struct lease_types){.n = 0}, jobs, &err);
	if (n < 0) {
		request_reply(req, err.status, error_to_json(&err));
	} else if (n > 0 || r->wait_ms <= 0 || lp->stopping) {
		reply_jobs(w, jobs, n);
	} else {
		park(lp, w);
		w->timer = evtimer_new(lp->base, on_timeout, w);
		timer_add_ms(w->timer, r->wait_ms);
	}
	free(jobs);
}

/* Offers the queued jobs to parked request w, those of only's types if
 * it names any: how many it took, or -1 on a store error or no memory. */
static int offer_to(struct longpoll *lp, struct waiter *w, const struct lease_types *only)
{
	struct queue *q = lp->queue;
	struct ebb_error err;
	struct job *jobs;
	int rc;

	/* A request that fits no queued class does not read the queue (the
	 * tallies' classes, before the types at their limit and the teams'
	 * room narrow them): a thousand one-GPU workers waiting behind a
	 * backlog of two-GPU jobs cost a look at the classes each, per
	 * commit. With several serves, another's job shows in the tallies by
	 * its word (server.c, on_woken). */
	if (!w->r.may_lease || !store_offer_may_fit(q->store, &w->r.offer))
		return 0;
	/* Asked of those that could lease only: a look at the socket each, a
	 * thousand a commit, was most of what the waiters behind a backlog
	 * cost. */
	if (request_peer_gone(w->req)) {
		/* A job leased to it would wait out its lease for nothing. */
		unpark(w);
		reply_none(w);
		return 0;
	}
	/* Its instance may have been drained or terminated since it asked: a
	 * job leased to a worker that is going away would wait out its lease
	 * for nothing. */
	if ((rc = fleet_may_lease(lp->fleet, w->r.instance)) < 0)
		return -1;
	if (!rc) {
		w->r.may_lease = 0;
		return 0;
	}
	if (!(jobs = mem_calloc((size_t)most_jobs(&w->r), sizeof *jobs)))
		return -1;
	if (batch_begin(lp->batch) != 0) {
		free(jobs);
		return -1;
	}
	rc = try_lease(w, only, jobs, &err);
	batch_end(lp->batch, rc >= 0);
	if (rc > 0) {
		unpark(w);
		reply_jobs(w, jobs, rc);
	}
	free(jobs);
	return rc;
}

static int queued_of(void *arg, const struct job_count *c)
{
	return c->state == JOB_QUEUED && lease_types_has(arg, c->type);
}

/* The most warm requests a dispatch tries and leaves without a job: each
 * is a read of the queue, and a thousand idle warm workers must not cost
 * a thousand reads a commit while another type's job heads the queue. */
#define WARM_MISSES_MAX 16

/* The warm pass: each request whose handler is ready takes the next job
 * in lease order if it is of its type; only those whose types have jobs
 * queued (the tallies) read the queue. 0, or -1 as offer_to(). */
static int offer_warm(struct longpoll *lp)
{
	struct queue *q = lp->queue;
	struct waiter *w, *next;
	struct lease_types warm;
	int misses = 0, rc;

	for (w = lp->head; w && misses < WARM_MISSES_MAX; w = next) {
		next = w->next;
		warm_types(&w->r, &warm);
		if (warm.n == 0 || store_job_counts(q->store, queued_of, &warm) == 0)
			continue;
		if ((rc = offer_to(lp, w, &warm)) < 0)
			return -1;
		misses += rc == 0;
	}
	return 0;
}

/* The batch's precommit subscriber: offers the queued jobs to the parked
 * requests when a job may have become leasable. A worker whose handler of
 * the next job's type is ready takes it first, as it needs no setup;
 * then the others, in placement order. */
static int dispatch(void *arg)
{
	struct longpoll *lp = arg;
	struct queue *q = lp->queue;
	struct waiter *w, *next;

	while (q->ready_changed && lp->head) {
		q->ready_changed = 0;
		if (offer_warm(lp) != 0)
			return -1;
		for (w = lp->head; w; w = next) {
			next = w->next;
			/* A shared store's counts lag the other serves'. */
			if (!store_shared(q->store) && store_count_in_state(q->store, JOB_QUEUED) == 0)
				break;
			if (offer_to(lp, w, &(struct lease_types){.n = 0}) < 0)
				return -1;
		}
	}
	q->ready_changed = 0;
	return 0;
}

/* The request is gone: unparks it, and takes back a lease its reply did
 * not deliver. */
static void gone(struct request_keeper *k, int sent)
{
	struct waiter *w = (struct waiter *)k;
	struct longpoll *lp = w->lp;
	struct ebb_error err;

	unpark(w);
	/* Sent is not read: a worker by hand names what it runs next time. */
	if (sent && !w->r.instance && w->ngranted)
		workers_granted(lp->workers, w->r.worker, w->granted_id, w->granted_token, w->ngranted);
	for (int i = 0; !sent && i < w->ngranted; i++) {
		if (batch_begin(lp->batch) != 0)
			log_error("lease reply lost, and the store failed: the lease runs out instead",
				  "job=%lld", (long long)w->granted_id[i]);
		else
			batch_end(lp->batch, queue_unlease(lp->queue, w->granted_id[i], w->granted_token[i], &err) == 0);
	}
	if (w->timer)
		event_free(w->timer);
	lease_request_free(&w->r);
	free(w);
}

void longpoll_release_all(struct longpoll *lp)
{
	lp->stopping = 1;
	while (lp->head) {
		struct waiter *w = lp->head;
		unpark(w);
		reply_none(w);
	}
}

int longpoll_waiting(const struct longpoll *lp) { return lp->n; }

struct longpoll *longpoll_new(struct event_base *base, struct batch *b, struct queue *q,
			      const struct scaler *sc, struct fleet *f, struct workers *wk)
{
	struct longpoll *lp = mem_calloc(1, sizeof *lp);

	if (!lp)
		return NULL;
	lp->base = base;
	lp->batch = b;
	lp->queue = q;
	lp->scaler = sc;
	lp->fleet = f;
	lp->workers = wk;
	batch_on_precommit(b, dispatch, lp);
	return lp;
}

void longpoll_set_scaler(struct longpoll *lp, const struct scaler *sc) { lp->scaler = sc; }

void longpoll_free(struct longpoll *lp) { free(lp); }
