/* The util baseline: every poll (30 s), the busy fraction of the GPU
 * time over the last `window` (whole polls, at least one): above `up`
 * with work waiting, one instance more; below `down`, one fewer, never
 * below one. Jobs pack onto its instances' GPUs (engine.c), so the
 * fraction is of GPUs, as a GPU utilisation metric has it. The GPU time
 * up and busy is integrated over the whole replay (engine.c); the window
 * keeps them as of each poll within it, so that each poll's fraction is
 * a difference of two. */
#include "sim/sim_internal.h"

void util_policy(struct sim *s)
{
	struct window *w = &s->util;
	int64_t span = s->policy->window_ms > s->policy->poll_ms ? s->policy->window_ms : s->policy->poll_ms;
	const struct window_entry *from;
	double up, busy;

	window_push(w, s->now, s->util_alive_ms, s->util_busy_ms);
	/* The window starts at the latest poll at least span ago (or the
	 * first, early in the replay). */
	while (w->n > 1 && window_at(w, 1)->at <= s->now - span)
		window_pop_front(w);
	from = window_at(w, 0);
	up = s->util_alive_ms - from->a;
	busy = up > 0 ? (s->util_busy_ms - from->b) / up : 0;
	if (s->queued > 0 && (busy > s->policy->up || s->nup == 0))
		sim_launch(s, s->policy->offer, s->policy->market, 0);
	else if (busy < s->policy->down && s->nup > 1)
		baseline_scale_down(s, s->gpus_live - s->opts->offers[s->policy->offer].gpus, 0); /* one instance fewer */
	s->next_policy = s->now + s->policy->poll_ms;
}
