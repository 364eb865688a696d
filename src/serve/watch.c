/* Parked watches of running jobs' leases (see watch.h). */
#include "serve/watch.h"

#include <stdlib.h>

#include "common/clock.h"
#include "common/jsonout.h"
#include "common/mem.h"
#include "common/timer.h"

struct watcher {
	struct request_keeper keeper; /* first: the request's keeper is the watcher */
	struct watch *wt;
	struct request *req;
	int64_t job, token, until_ms; /* until_ms: the monotonic time its wait ends */
	struct event *timer;
	int parked;
	struct watcher *prev, *next;
};

struct watch {
	struct event_base *base;
	struct batch *batch;
	struct queue *queue;
	struct watcher *head; /* the parked ones */
	int stopping;
};

/* The reply when there is news or at_end: 1 when it replied, 0 when the
 * lease is still the worker's and nothing asks it to stop. */
static int answer(struct watcher *w, int at_end)
{
	struct queue *q = w->wt->queue;
	struct jsonout o = {0};
	struct ebb_error err;
	struct job job;
	const char *preempt = NULL;
	int ours;

	if (queue_get(q, w->job, NULL, &job, &err) != 0) {
		request_reply(w->req, err.status, error_to_json(&err));
		return 1;
	}
	ours = job.state == JOB_LEASED && job.lease_token == w->token;
	if (ours && !(preempt = preempt_reason(&q->preempts, w->job, w->token)) && !at_end) {
		job_free(&job);
		return 0;
	}
	jsonout_open(&o, NULL, '{');
	jsonout_int(&o, "job", w->job);
	jsonout_string(&o, "action", !ours ? "stop" : preempt ? "preempt" : "none");
	jsonout_string(&o, "state", job_state_name(job.state));
	if (!ours)
		jsonout_string(&o, "reason", job.state == JOB_CANCELLED ? "cancelled"
					  : job.state == JOB_LEASED ? "leased again, to another run"
								    : "its lease ended");
	else if (preempt)
		jsonout_string(&o, "reason", preempt);
	jsonout_close(&o, '}');
	job_free(&job);
	request_reply_json(w->req, 200, jsonout_finish(&o));
	return 1;
}

static void unpark(struct watcher *w)
{
	if (!w->parked)
		return;
	if (w->prev)
		w->prev->next = w->next;
	else
		w->wt->head = w->next;
	if (w->next)
		w->next->prev = w->prev;
	evtimer_del(w->timer);
	w->parked = 0;
}

/* Its wait ended, or it was woken: a wake-up that came to nothing (a step
 * rolled back, another job's news) parks it again for the rest. */
static void on_timer(evutil_socket_t fd, short what, void *arg)
{
	struct watcher *w = arg;
	int64_t left = w->until_ms - clock_monotonic_ms();

	(void)fd;
	(void)what;
	if (!answer(w, left <= 0)) {
		timer_add_ms(w->timer, left);
		return;
	}
	unpark(w);
	batch_flush(w->wt->batch);
}

static void gone(struct request_keeper *k, int sent)
{
	struct watcher *w = (struct watcher *)k;

	(void)sent;
	unpark(w);
	if (w->timer)
		event_free(w->timer);
	free(w);
}

static void reply_nomem(struct request *req)
{
	struct ebb_error err;

	error_set(&err, 500, "out_of_memory", NULL, ERROR_OUT_OF_MEMORY);
	request_reply(req, err.status, error_to_json(&err));
}

void watch_lease(struct watch *wt, struct request *req, int64_t job, int64_t token, int64_t wait_ms)
{
	struct watcher *w = mem_calloc(1, sizeof *w);

	if (!w) {
		reply_nomem(req);
		return;
	}
	*w = (struct watcher){.keeper.gone = gone, .wt = wt, .req = req, .job = job, .token = token,
			      .until_ms = clock_monotonic_ms() + wait_ms};
	request_set_keeper(req, &w->keeper);
	if (answer(w, wait_ms <= 0 || wt->stopping))
		return;
	if (!(w->timer = evtimer_new(wt->base, on_timer, w))) {
		reply_nomem(req);
		return;
	}
	w->next = wt->head;
	if (wt->head)
		wt->head->prev = w;
	wt->head = w;
	w->parked = 1;
	timer_add_ms(w->timer, wait_ms);
}

/* The watchers of job look again once the loop is back: after the batch
 * that woke them is committed. */
static void wake(struct watch *wt, int64_t job)
{
	for (struct watcher *w = wt->head; w; w = w->next) {
		if (w->job == job)
			timer_add_ms(w->timer, 0);
	}
}

static int on_job(void *arg, const struct job_change *c)
{
	if (c->from == JOB_LEASED)
		wake(arg, c->job->id);
	return 0;
}

static void on_preempt(void *arg, int64_t job) { wake(arg, job); }

void watch_release_all(struct watch *wt)
{
	wt->stopping = 1;
	while (wt->head) {
		struct watcher *w = wt->head;
		answer(w, 1);
		unpark(w);
	}
}

struct watch *watch_new(struct event_base *base, struct batch *b, struct queue *q)
{
	struct watch *wt = mem_calloc(1, sizeof *wt);

	if (!wt)
		return NULL;
	*wt = (struct watch){.base = base, .batch = b, .queue = q};
	queue_subscribe(q, on_job, wt);
	preempt_on_add(&q->preempts, on_preempt, wt);
	return wt;
}

void watch_free(struct watch *wt) { free(wt); }
