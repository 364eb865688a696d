/* See slices.h. Each parked request has a timer that fires at the next
 * turn of the loop; libevent runs the timers due after the sockets that
 * are ready, so the requests that came meanwhile go first. */
#include "serve/slices.h"

#include <stdlib.h>

#include "common/mem.h"
#include "common/timer.h"

struct walk {
	struct request_keeper keeper; /* first: the request's keeper is the walk */
	struct slices *s;
	struct request *req;
	slice_step step;
	void (*free_state)(void *);
	void *state;
	struct event *timer;
	struct walk *next;
	int listed; /* in the list: not answered yet */
};

struct slices {
	struct event_base *base;
	struct batch *batch;
	struct walk *head;
	int stopping;
};

static void unlink_walk(struct slices *s, struct walk *w)
{
	for (struct walk **p = &s->head; *p; p = &(*p)->next) {
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
	struct walk *w = (struct walk *)k;

	(void)sent;
	if (w->listed)
		unlink_walk(w->s, w);
	event_free(w->timer);
	w->free_state(w->state);
	free(w);
}

static void on_turn(evutil_socket_t fd, short what, void *arg)
{
	struct walk *w = arg;
	struct slices *s = w->s;
	int last = s->stopping || request_peer_gone(w->req), answered;

	(void)fd;
	(void)what;
	if (batch_begin(s->batch) == 0) {
		answered = w->step(w->state, w->req, last);
		batch_end(s->batch, 1);
	} else {
		answered = w->step(w->state, w->req, 1);
	}
	if (answered || last) {
		unlink_walk(s, w);
		batch_flush(s->batch);
		return;
	}
	timer_add_ms(w->timer, 0);
}

int slices_park(struct slices *s, struct request *req, slice_step step, void (*free_state)(void *), void *state)
{
	struct walk *w = mem_calloc(1, sizeof *w);

	if (!w || !(w->timer = evtimer_new(s->base, on_turn, w))) {
		free(w);
		return -1;
	}
	w->keeper.gone = gone;
	w->s = s;
	w->req = req;
	w->step = step;
	w->free_state = free_state;
	w->state = state;
	w->next = s->head;
	w->listed = 1;
	s->head = w;
	request_set_keeper(req, &w->keeper);
	timer_add_ms(w->timer, 0);
	return 0;
}

void slices_release_all(struct slices *s)
{
	s->stopping = 1;
	while (s->head) {
		struct walk *w = s->head;
		w->step(w->state, w->req, 1);
		unlink_walk(s, w);
	}
}

struct slices *slices_new(struct event_base *base, struct batch *b)
{
	struct slices *s = mem_calloc(1, sizeof *s);

	if (s)
		*s = (struct slices){.base = base, .batch = b};
	return s;
}

void slices_free(struct slices *s) { free(s); }
