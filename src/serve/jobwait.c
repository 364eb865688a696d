/* See jobwait.h. */
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
	struct jobwait *jw;
	struct request *req;
	int64_t job, deadline_ms;
	struct event *timer;
	struct waiter *next;
	void *query;
	int listed; /* in jw's list: not answered yet */
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
static void unlink_waiter(struct jobwait *jw, struct waiter *w)
{
	for (struct waiter **p = &jw->head; *p; p = &(*p)->next) {
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
		unlink_waiter(w->jw, w);
	event_free(w->timer);
	free(w->query);
	free(w);
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
	struct waiter *w = arg;
	struct jobwait *jw = w->jw;
	int64_t left = w->deadline_ms - clock_monotonic_ms();
	int last = left <= 0 || jw->stopping || request_peer_gone(w->req), answered = 0;

	(void)fd;
	(void)what;
	if (batch_begin(jw->batch) == 0) {
		answered = jw->try(jw->ctx, w->req, w->query, last);
		batch_end(jw->batch, 1);
	} else if (last) {
		answered = jw->try(jw->ctx, w->req, w->query, 1);
	}
	if (answered) {
		unlink_waiter(jw, w);
		batch_flush(jw->batch);
		return;
	}
	timer_add_ms(w->timer, left < RECHECK_MS ? (left > 0 ? left : 0) : RECHECK_MS);
}

int jobwait_park(struct jobwait *jw, struct request *req, int64_t job, const void *query, size_t size,
		 int64_t wait_ms)
{
	struct waiter *w = mem_calloc(1, sizeof *w);

	if (!w || !(w->query = mem_calloc(1, size)) || !(w->timer = evtimer_new(jw->base, on_timer, w))) {
		if (w)
			free(w->query);
		free(w);
		return -1;
	}
	memcpy(w->query, query, size);
	w->keeper.gone = gone;
	w->jw = jw;
	w->req = req;
	w->listed = 1;
	w->job = job;
	w->deadline_ms = clock_monotonic_ms() + wait_ms;
	w->next = jw->head;
	jw->head = w;
	request_set_keeper(req, &w->keeper);
	timer_add_ms(w->timer, jw->stopping ? 0 : wait_ms < RECHECK_MS ? wait_ms : RECHECK_MS);
	return 0;
}

void jobwait_wake(struct jobwait *jw, int64_t job)
{
	for (struct waiter *w = jw->head; w; w = w->next) {
		if (w->job == job)
			timer_add_ms(w->timer, 0);
	}
}

void jobwait_wake_all(struct jobwait *jw)
{
	for (struct waiter *w = jw->head; w; w = w->next)
		timer_add_ms(w->timer, 0);
}

void jobwait_release_all(struct jobwait *jw)
{
	jw->stopping = 1;
	while (jw->head) {
		struct waiter *w = jw->head;
		jw->try(jw->ctx, w->req, w->query, 1);
		unlink_waiter(jw, w);
	}
}

struct jobwait *jobwait_new(struct event_base *base, struct batch *b, jobwait_try try, void *ctx)
{
	struct jobwait *jw = mem_calloc(1, sizeof *jw);

	if (!jw)
		return NULL;
	*jw = (struct jobwait){.base = base, .batch = b, .try = try, .ctx = ctx};
	return jw;
}

void jobwait_free(struct jobwait *jw) { free(jw); }
