/* The baselines the simulator replays beside ebb: the policies people use
 * today, each on one offer and market, with the knobs and defaults of
 * the tool it stands for (spec.c): always-on (a fixed fleet), min1 (one
 * warm instance, one more for each queued job no free one takes, released
 * after an idle time), util (utilisation thresholds over a window) and
 * keda (jobs queued and running per instance, with the HPA's
 * stabilisation window and KEDA's cooldown); and the offline lower bound,
 * which replays nothing. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/engine.h"

/* The KEDA baseline's history of recommendations is cut to its last
 * KEDA_HIST_KEEP when it passes KEDA_HIST_MAX. */
#define KEDA_HIST_MAX 4096
#define KEDA_HIST_KEEP 2048

void baseline_start(struct sim *s)
{
	const struct policy *p = s->p;
	int64_t n;

	if (p->kind != POL_ALWAYS_ON && p->kind != POL_MIN1 && p->kind != POL_UTIL)
		return;
	n = p->kind == POL_ALWAYS_ON ? (p->n ? p->n : sim_peak_concurrency(s->t)) : 1;
	s->nomem = n < 0;
	for (int64_t k = 0; k < n && !s->nomem; k++)
		sim_launch(s, p->offer, p->market, 1);
}

/* Idle instances first (the longest idle), then booting, then busy. */
static int pick_to_stop(struct sim *s, int allow_busy)
{
	int best = -1;
	static const int order[] = {[S_IDLE] = 0, [S_BOOTING] = 1, [S_BUSY] = 2, [S_GONE] = 9};

	for (int a = 0; a < s->live; a++) {
		int k = s->alive[a];
		struct sinst *i = &s->inst[k], *b = best >= 0 ? &s->inst[best] : NULL;
		if (i->state == S_BUSY && !allow_busy)
			continue;
		if (!b || order[i->state] < order[b->state] ||
		    (order[i->state] == order[b->state] && i->idle_since < b->idle_since))
			best = k;
	}
	return best;
}

static void scale_to(struct sim *s, int64_t want, int allow_busy)
{
	while (s->live < want) {
		if (sim_launch(s, s->p->offer, s->p->market, 0) < 0)
			return; /* out of memory: the replay stops */
	}
	while (s->live > want) {
		int k = pick_to_stop(s, allow_busy);
		if (k < 0)
			break;
		sim_stop(s, k);
	}
}

void min1_policy(struct sim *s)
{
	int64_t free_slots = 0;

	for (int a = 0; a < s->live; a++) {
		struct sinst *i = &s->inst[s->alive[a]];
		if (i->state == S_IDLE || i->state == S_BOOTING)
			free_slots++;
	}
	for (int64_t n = s->queued - free_slots; n > 0; n--)
		sim_launch(s, s->p->offer, s->p->market, 0);
	for (int a = 0; a < s->live; a++) {
		int k = s->alive[a];
		struct sinst *i = &s->inst[k];
		if (i->state != S_IDLE || s->live <= 1)
			continue;
		if (s->now - i->idle_since >= s->p->idle_ms) {
			sim_stop(s, k);
			a--; /* the next one has moved into place a */
		} else {
			s->next_policy = min_positive(s->next_policy, i->idle_since + s->p->idle_ms);
		}
	}
}

void util_policy(struct sim *s)
{
	double busy = s->util_alive_ms > 0 ? s->util_busy_ms / s->util_alive_ms : 0;

	if (s->now - s->util_since >= s->p->window_ms || s->live == 0) {
		if ((busy > s->p->up && s->queued > 0) || (s->live == 0 && s->queued > 0))
			sim_launch(s, s->p->offer, s->p->market, 0);
		else if (busy < s->p->down && s->live > 1)
			scale_to(s, s->live - 1, 0);
		s->util_busy_ms = s->util_alive_ms = 0;
		s->util_since = s->now;
	}
	s->next_policy = s->now + s->p->poll_ms;
}

void keda_policy(struct sim *s)
{
	int64_t metric = s->queued + s->busy, desired = (int64_t)ceil((double)metric / s->p->target), keep = desired;

	if (metric > 0)
		s->keda.last_active = s->now;
	/* The HPA keeps the largest recommendation of its stabilisation
	 * window. The history never holds more than KEDA_HIST_MAX + 1
	 * entries (cut to its last KEDA_HIST_KEEP past that), so it gets that
	 * room once: a realloc at every poll copied it at every poll. */
	if (!s->keda.hist_at)
		s->keda.hist_at = sim_grown(s, NULL, KEDA_HIST_MAX + 1, sizeof *s->keda.hist_at);
	if (!s->keda.hist_n)
		s->keda.hist_n = sim_grown(s, NULL, KEDA_HIST_MAX + 1, sizeof *s->keda.hist_n);
	if (!s->keda.hist_at || !s->keda.hist_n)
		return;
	s->keda.hist_at[s->keda.nhist] = s->now;
	s->keda.hist_n[s->keda.nhist++] = desired;
	for (size_t h = s->keda.nhist; h-- > 0 && s->now - s->keda.hist_at[h] <= s->p->stabilize_ms;)
		keep = s->keda.hist_n[h] > keep ? s->keda.hist_n[h] : keep;
	if (s->keda.nhist > KEDA_HIST_MAX) {
		size_t drop = s->keda.nhist - KEDA_HIST_KEEP;
		memmove(s->keda.hist_at, s->keda.hist_at + drop, KEDA_HIST_KEEP * sizeof *s->keda.hist_at);
		memmove(s->keda.hist_n, s->keda.hist_n + drop, KEDA_HIST_KEEP * sizeof *s->keda.hist_n);
		s->keda.nhist = KEDA_HIST_KEEP;
	}
	if (desired > s->live) {
		scale_to(s, desired, 1);
	} else if (keep < s->live) {
		/* KEDA owns 1 -> 0 after its cooldown; the HPA never goes below 1. */
		int64_t floor_n = s->now - s->keda.last_active >= s->p->cooldown_ms ? 0 : 1;
		scale_to(s, keep > floor_n ? keep : floor_n, 1);
	}
	s->next_policy = s->now + s->p->poll_ms;
}

int64_t sim_peak_concurrency(const struct trace *t)
{
	int64_t *ends = malloc((t->n + 1) * sizeof *ends), peak = 0;
	size_t nends = 0, head = 0;

	if (!ends)
		return -1;
	/* Arrivals are sorted; ends are kept in a sorted array by insertion
	 * from the back, which is cheap because most jobs are short. */
	for (size_t k = 0; k < t->n; k++) {
		int64_t end = t->jobs[k].submit_ms + t->jobs[k].duration_ms;
		size_t pos;
		while (head < nends && ends[head] <= t->jobs[k].submit_ms)
			head++;
		pos = nends++;
		while (pos > head && ends[pos - 1] > end) {
			ends[pos] = ends[pos - 1];
			pos--;
		}
		ends[pos] = end;
		if ((int64_t)(nends - head) > peak)
			peak = (int64_t)(nends - head);
	}
	free(ends);
	return peak;
}

/* The offline lower bound: every job at the lowest price per unit of work
 * among the offers it fits, with no idle time and no boot. */
void bound_run(const struct trace *t, const struct sim_options *o, struct sim_result *r)
{
	for (size_t k = 0; k < t->n; k++) {
		const struct trace_job *j = &t->jobs[k];
		double best = -1, best_gpu_h = 0;
		for (int f = 0; f < o->noffers; f++) {
			const struct offer *of = &o->offers[f];
			for (int m = 0; m < MARKET_COUNT; m++) {
				double hours = (double)j->duration_ms / of->speed / 3600000.0, c;
				if (of->gpus < j->gpus || of->price[m] < 0)
					continue;
				c = of->price[m] * hours;
				if (best < 0 || c < best) {
					best = c;
					best_gpu_h = hours * of->gpus;
				}
			}
		}
		if (best < 0) {
			r->unplaceable++; /* as sim_run counts them */
			continue;
		}
		r->cost_usd += best;
		r->gpu_hours_billed += best_gpu_h;
		r->gpu_hours_busy += best_gpu_h;
		r->jobs_done++;
	}
}
