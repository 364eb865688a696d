/* See deadline.h. */
#include "serve/deadline.h"

#include <stdlib.h>

#include "common/log.h"
#include "common/mem.h"
#include "common/timer.h"

struct deadline {
	struct batch *batch;
	struct queue *queue;
	struct event *timer;
};

static void arm(struct deadline *d)
{
	int64_t at = 0;

	if (queue_next_deadline(d->queue, &at) != 0 || at == 0)
		evtimer_del(d->timer);
	else
		timer_add_ms(d->timer, at - clock_now(d->queue->clock));
}

/* After every commit, changed or not: the test clock may have moved. */
static void on_commit(void *arg, int changed)
{
	(void)changed;
	arm(arg);
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	deadline_run(arg);
}

void deadline_run(struct deadline *d)
{
	struct ebb_error err;

	if (batch_begin(d->batch) != 0) {
		log_error("store failed", "error=\"%s\"", store_error(d->queue->store));
	} else {
		int ok = queue_process_due(d->queue, &err) == 0;
		batch_end(d->batch, ok);
	}
	/* Its commit arms the timer again; a batch that could not even
	 * begin commits nothing, and the timer is armed here. */
	batch_flush(d->batch);
	arm(d);
}

void deadline_rearm(struct deadline *d) { arm(d); }

struct deadline *deadline_new(struct event_base *base, struct batch *b, struct queue *q)
{
	struct deadline *d = mem_calloc(1, sizeof *d);

	if (!d)
		return NULL;
	d->batch = b;
	d->queue = q;
	d->timer = evtimer_new(base, on_timer, d);
	batch_on_commit(b, on_commit, d);
	return d;
}

void deadline_free(struct deadline *d)
{
	if (!d)
		return;
	event_free(d->timer);
	free(d);
}
