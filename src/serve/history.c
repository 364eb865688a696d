/* See history.h. */
#include "serve/history.h"

#include <stdlib.h>

#include "common/log.h"
#include "common/mem.h"
#include "common/timer.h"

struct sample {
	int64_t at_ms, queued, leased, instances;
};

struct history {
	const struct clock *clock;
	struct store *store;
	struct event *timer;
	struct sample ring[HISTORY_SAMPLES];
	int next, n;
};

static int count_live(void *arg, const struct instance *inst)
{
	(void)inst;
	(*(int64_t *)arg)++;
	return 0;
}

static const struct sample *last(const struct history *h)
{
	return h->n ? &h->ring[(h->next + HISTORY_SAMPLES - 1) % HISTORY_SAMPLES] : NULL;
}

/* A sample now; the next in a minute, unless all is quiet. */
static void take(struct history *h)
{
	struct sample s = {.at_ms = clock_now(h->clock),
			   .queued = store_count_in_state(h->store, JOB_QUEUED),
			   .leased = store_count_in_state(h->store, JOB_LEASED)};

	if (store_instance_list(h->store, count_live, &s.instances) != 0) {
		log_warn("history: no sample, the store failed", "error=\"%s\"", store_error(h->store));
		return;
	}
	h->ring[h->next] = s;
	h->next = (h->next + 1) % HISTORY_SAMPLES;
	if (h->n < HISTORY_SAMPLES)
		h->n++;
	if (s.queued || s.leased || s.instances)
		timer_add_ms(h->timer, HISTORY_STEP_MS);
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
	(void)fd, (void)what;
	take(arg);
}

/* A change with no sample to come: one now, or a minute after the last. */
static void on_commit(void *arg, int changed)
{
	struct history *h = arg;
	const struct sample *s = last(h);
	int64_t since;

	if (!changed || evtimer_pending(h->timer, NULL))
		return;
	since = s ? clock_now(h->clock) - s->at_ms : HISTORY_STEP_MS;
	if (since >= HISTORY_STEP_MS)
		take(h);
	else
		timer_add_ms(h->timer, HISTORY_STEP_MS - since);
}

struct history *history_new(struct event_base *base, const struct clock *clock, struct store *st, struct batch *b)
{
	struct history *h = mem_calloc(1, sizeof *h);

	if (!h || !(h->timer = evtimer_new(base, on_timer, h))) {
		free(h);
		return NULL;
	}
	h->clock = clock;
	h->store = st;
	batch_on_commit(b, on_commit, h);
	take(h);
	return h;
}

void history_free(struct history *h)
{
	if (!h)
		return;
	event_free(h->timer);
	free(h);
}

json_t *history_json(const struct history *h)
{
	json_t *samples = json_array();

	for (int k = 0; k < h->n; k++) {
		const struct sample *s = &h->ring[(h->next + HISTORY_SAMPLES - h->n + k) % HISTORY_SAMPLES];
		json_array_append_new(samples, json_pack("[f, I, I, I]", (double)s->at_ms / 1000.0, (json_int_t)s->queued,
							 (json_int_t)s->leased, (json_int_t)s->instances));
	}
	return json_pack("{s:i, s:o}", "step_s", HISTORY_STEP_MS / 1000, "samples", samples);
}
