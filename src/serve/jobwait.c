/* See logwait.h. */
#include "serve/jobwait.h"

#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/mem.h"
#include "common/timer.h"

/* How often a waiter looks again without being woken. */
#define RECHECK_MS 1000

struct waiter {
	struct request_keeper keeper; /* first: the request's keeper is the waiter */
	struct jobwait *lw;
	struct request *req;
	int64_t job, deadline_ms;
	struct event *timer;
	struct waiter *next;
	void *query;
	int listed; /* in lw's list: not answered yet */
};

struct jobwait {
	struct event_base *base;
	struct batch *batch;
	jobwait_try try;
	void *ctx;
	struct waiter *head;
	int stopping;
};

/* Answered: off the list; its memory stays until the request is gone. */
static void unlink_waiter(struct jobwait *lw, struct waiter *w)
{
	for (struct waiter **p = &lw->head; *p; p = &(*p)->next) {
		if (*p == w) {
			*p = w->next;
			break;
		}
	}
	w->listed = 0;
	evtimer_del(w->timer);
}

/* httpd's done hook: the request is gone, answered or not. */
static void gone(struct request_keeper *k, int sent)
{
	struct waiter *w = (struct waiter *)k;

	(void)sent;
	if (w->listed)
		unlink_waiter(w->lw, w);
	event_free(w->timer);
	free(w->query);
	free(w);
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
	struct waiter *w = arg;
	struct jobwait *lw = w->lw;
	int64_t left = w->deadline_ms - clock_monotonic_ms();
	int last = left <= 0 || lw->stopping || request_peer_gone(w->req), answered = 0;

	(void)fd;
	(void)what;
	if (batch_begin(lw->batch) == 0) {
		answered = lw->try(lw->ctx, w->req, w->query, last);
		batch_end(lw->batch, 1);
	} else if (last) {
		answered = lw->try(lw->ctx, w->req, w->query, 1);
	}
	if (answered) {
		unlink_waiter(lw, w);
		batch_flush(lw->batch);
		return;
	}
	timer_add_ms(w->timer, left < RECHECK_MS ? (left > 0 ? left : 0) : RECHECK_MS);
}

int jobwait_park(struct jobwait *lw, struct request *req, int64_t job, const void *query, size_t size,
		 int64_t wait_ms)
{
	struct waiter *w = mem_calloc(1, sizeof *w);

	if (!w || !(w->query = mem_calloc(1, size)) || !(w->timer = evtimer_new(lw->base, on_timer, w))) {
		if (w)
			free(w->query);
		free(w);
		return -1;
	}
	memcpy(w->query, query, size);
	w->keeper.gone = gone;
	w->lw = lw;
	w->req = req;
	w->listed = 1;
	w->job = job;
	w->deadline_ms = clock_monotonic_ms() + wait_ms;
	w->next = lw->head;
	lw->head = w;
	request_set_keeper(req, &w->keeper);
	timer_add_ms(w->timer, lw->stopping ? 0 : wait_ms < RECHECK_MS ? wait_ms : RECHECK_MS);
	return 0;
}

void jobwait_wake(struct jobwait *lw, int64_t job)
{
	for (struct waiter *w = lw->head; w; w = w->next) {
		if (w->job == job)
			timer_add_ms(w->timer, 0);
	}
}

void jobwait_wake_all(struct jobwait *lw)
{
	for (struct waiter *w = lw->head; w; w = w->next)
		timer_add_ms(w->timer, 0);
}

void jobwait_release_all(struct jobwait *lw)
{
	lw->stopping = 1;
	while (lw->head) {
		struct waiter *w = lw->head;
		lw->try(lw->ctx, w->req, w->query, 1);
		unlink_waiter(lw, w);
	}
}

struct jobwait *jobwait_new(struct event_base *base, struct batch *b, jobwait_try try, void *ctx)
{
	struct jobwait *lw = mem_calloc(1, sizeof *lw);

	if (!lw)
		return NULL;
	*lw = (struct jobwait){.base = base, .batch = b, .try = try, .ctx = ctx};
	return lw;
}

void jobwait_free(struct jobwait *lw) { free(lw); }
