/* See estimates.h. */
#include "serve/estimates.h"

#include <stdlib.h>
#include <string.h>

struct pooled {
	double speed_sum;
	int64_t speed_n, boots, boot_ms;
};

struct walk {
	const struct plan_settings *s;
	struct offer *out;
	struct pooled *pooled;
	int n;
	int64_t now_ms;
};

/* A broken setup's wait: interval, doubling with each failure in a row. */
static int64_t backoff_ms(const struct plan_settings *s, int64_t streak)
{
	int64_t ms = s->interval_ms;

	for (int64_t k = 1; k < streak && ms < ESTIMATE_BACKOFF_MAX_MS; k++)
		ms *= 2;
	return ms < ESTIMATE_BACKOFF_MAX_MS ? ms : ESTIMATE_BACKOFF_MAX_MS;
}

static void rest_until(struct offer *o, int64_t end_ms)
{
	if (!o->rest_until_ms || end_ms < o->rest_until_ms)
		o->rest_until_ms = end_ms;
}

static int apply_stat(void *arg, const struct offer_stat *st)
{
	struct walk *w = arg;
	int k = offer_index(w->out, w->n, st->offer);
	struct offer *o;

	if (k < 0)
		return 0;
	o = &w->out[k];
	w->pooled[k].speed_sum += st->speed_sum;
	w->pooled[k].speed_n += st->speed_n;
	w->pooled[k].boots += st->boots;
	w->pooled[k].boot_ms += st->boot_ms;
	if (st->market == MARKET_SPOT) {
		double hours = (double)st->alive_ms / 3600000.0;
		o->reclaims_per_hour = ((double)st->reclaims + o->reclaims_per_hour) / (hours + 1.0);
	}
	/* The failure of the last launch asked: a newer launch on the
	 * market is under way or worked. */
	if (st->capacity_failures > 0 && st->last_capacity_ms >= st->last_launch_ms &&
	    w->now_ms - st->last_capacity_ms < w->s->capacity_rest_ms) {
		o->resting[st->market] = 1;
		rest_until(o, st->last_capacity_ms + w->s->capacity_rest_ms);
	}
	if (st->broken_streak > 0 && w->now_ms - st->last_broken_ms < backoff_ms(w->s, st->broken_streak)) {
		o->resting[MARKET_ONDEMAND] = o->resting[MARKET_SPOT] = 1;
		rest_until(o, st->last_broken_ms + backoff_ms(w->s, st->broken_streak));
	}
	return 0;
}

int estimates_in_force(struct store *st, const struct plan_settings *s, const struct offer *configured, int n,
		       int64_t now_ms, struct offer *out)
{
	struct pooled pooled[64] = {{0}};
	struct walk w = {.s = s, .out = out, .pooled = pooled, .n = n < 64 ? n : 64, .now_ms = now_ms};

	memcpy(out, configured, (size_t)n * sizeof *out);
	if (store_offer_stats(st, apply_stat, &w) != 0) {
		memcpy(out, configured, (size_t)n * sizeof *out);
		return -1;
	}
	for (int k = 0; k < w.n; k++) {
		if (pooled[k].speed_n >= ESTIMATE_MIN_SAMPLES)
			out[k].speed = pooled[k].speed_sum / (double)pooled[k].speed_n;
		if (pooled[k].boots >= ESTIMATE_MIN_SAMPLES)
			out[k].boot_ms = pooled[k].boot_ms / pooled[k].boots;
	}
	return 0;
}
