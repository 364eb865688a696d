/* The util baseline: every poll (30 s), the busy fraction of the GPU
 * time over the last `window` (whole polls, at least one): above `up`
 * with work waiting, one instance more; below `down`, one fewer, never
 * below one. Jobs pack onto its instances' GPUs (engine.c), so the
 * fraction is of GPUs, as a GPU utilisation metric has it. The GPU time
 * up and busy is integrated over the whole replay (engine.c); the window
 * keeps them as of each poll within it, so that each poll's fraction is
 * a difference of two. */
#include <stdio.h>

#include "sim/sim_internal.h"

/* Its knobs, with the defaults of a typical autoscaler's. */
struct util_params {
	double up, down;
	int64_t window_ms, poll_ms;
};

static const struct util_params defaults = {.up = 0.8, .down = 0.2, .window_ms = 300000, .poll_ms = 30000};

#define P(field) offsetof(struct util_params, field)
static const struct knob knobs[] = {
	{"up", K_NUMBER, P(up), 0, 1},
	{"down", K_NUMBER, P(down), 0, 1},
	{"window", K_SECONDS, P(window_ms), 0, KNOB_NEVER},
	{"poll", K_SECONDS, P(poll_ms), 1, KNOB_NEVER},
	{0}};

/* Its state: the GPU time up and busy as of each poll of the window
 * (a: up, b: busy, in GPU-ms). */
struct util_state {
	struct window polls;
};

static struct window *polls(const struct sim *s)
{
	return &((struct util_state *)s->policy_state)->polls;
}

static void util_look(struct sim *s)
{
	const struct util_params *u = s->policy->params;
	struct window *w = polls(s);
	int64_t span = u->window_ms > u->poll_ms ? u->window_ms : u->poll_ms;
	const struct window_entry *from;
	double up, busy;

	window_push(w, s->now, s->gpu_up_ms, s->gpu_busy_ms);
	/* The window starts at the latest poll at least span ago (or the
	 * first, early in the replay). */
	while (w->n > 1 && window_at(w, 1)->at <= s->now - span)
		window_pop_front(w);
	from = window_at(w, 0);
	up = s->gpu_up_ms - from->a;
	busy = up > 0 ? (s->gpu_busy_ms - from->b) / up : 0;
	if (s->queued > 0 && (busy > u->up || s->nup == 0))
		sim_launch(s, s->policy->offer, s->policy->market, 0);
	else if (busy < u->down && s->nup > 1)
		baseline_scale_down(s, s->gpus_live - s->opts->offers[s->policy->offer].gpus); /* one instance fewer */
	s->next_policy = s->now + u->poll_ms;
}

/* One warm instance at the start, and its first poll at once. */
static void util_start(struct sim *s)
{
	sim_launch(s, s->policy->offer, s->policy->market, 1);
	s->next_policy = 1;
}

static void util_free(struct sim *s)
{
	window_free(polls(s));
}

/* It scales down below `down` and up above `up`: down >= up would flap. */
static int util_check(struct policy *p, const char *spec, int market_given, int offer_given, char *err,
		      size_t errsize)
{
	const struct util_params *u = p->params;

	if (!(u->down < u->up)) {
		snprintf(err, errsize, "policy %s: down=%g: expected below up=%g", spec, u->down, u->up);
		return -1;
	}
	return policy_check_offer(p, spec, market_given, offer_given, err, errsize);
}

/* `ebb tune`: its thresholds and windows. */
static const double ups[] = {0.5, 0.6, 0.7, 0.8, 0.9};
static const double downs[] = {0.1, 0.2, 0.3, 0.4};
static const double windows_s[] = {60, 300, 900};
static const struct sweep_knob swept[] = {
	{"up", SWEEP_ARRAY(ups)}, {"down", SWEEP_ARRAY(downs)}, {"window", SWEEP_ARRAY(windows_s)}};
static const struct sim_sweep sweeps[] = {{.family = "util", .knobs = SWEEP_ARRAY(swept)}, {0}};

const struct sim_policy sim_policy_util = {
	.name = "util",
	.knobs = knobs,
	.params_size = sizeof(struct util_params),
	.defaults = &defaults,
	.check = util_check,
	.durations = "unused",
	.state_size = sizeof(struct util_state),
	.free = util_free,
	.start = util_start,
	.look = util_look,
	.floor = baseline_one, /* never below one instance */
	.sweeps = sweeps,
};
