/* The keda baseline: KEDA's ScaledObject with the HPA behind it. Every
 * poll the metric is the jobs queued and running, and the desire
 * ceil(metric / target) instances: up to it at once; down only to the
 * largest desire of the last `stabilize` seconds (the HPA's window, kept
 * whole however long against the poll), and from one to none only
 * `cooldown` after the last poll that saw work (KEDA's). Scale-in may
 * stop a busy worker, whose job goes back to the queue. */
#include <math.h>

#include "sim/engine.h"

/* The largest desire of the window, this one's included: each desire
 * hides the smaller ones before it, which can never be the largest again,
 * so the oldest left is the largest. */
static int64_t stabilised(struct sim *s, int64_t desired)
{
	struct window *w = &s->keda.recommendations;

	while (w->n > 0 && window_at(w, w->n - 1)->a <= (double)desired)
		window_pop_back(w);
	if (window_push(s, w, s->now, (double)desired, 0) != 0)
		return desired;
	while (s->now - window_at(w, 0)->at > s->p->stabilize_ms)
		window_pop_front(w);
	return (int64_t)window_at(w, 0)->a;
}

void keda_policy(struct sim *s)
{
	int64_t metric = s->queued + s->busy, desired = (int64_t)ceil((double)metric / s->p->target);
	int64_t keep = stabilised(s, desired);

	if (metric > 0)
		s->keda.last_active = s->now;
	if (desired > s->live) {
		baseline_scale_up(s, desired);
	} else if (keep < s->live) {
		/* KEDA owns 1 -> 0 after its cooldown; the HPA never goes below 1. */
		int64_t floor_n = s->now - s->keda.last_active >= s->p->cooldown_ms ? 0 : 1;
		baseline_scale_down(s, keep > floor_n ? keep : floor_n, 1);
	}
	s->next_policy = s->now + s->p->poll_ms;
}
