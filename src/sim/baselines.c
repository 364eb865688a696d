/* The baselines the simulator replays beside ebb: the policies people use
 * today, each on one offer and market, with the knobs and defaults of
 * the tool it stands for (spec.c): always-on (a fixed fleet) and min1
 * (one warm instance, one more for each queued job no free one takes,
 * released after an idle time) here, util (util_scaling.c) and keda (keda.c); and
 * the offline lower bound, which replays nothing. */
#include <stdlib.h>

#include "sim/sim_internal.h"

/* A job running, in peak_running()'s list. */
struct running_job {
	int64_t end;
	int weight;
};

/* The most jobs (weighted by GPUs if by_gpus) of the trace running at
 * once had each started when it arrived. */
static int64_t peak_running(const struct trace *t, int by_gpus)
{
	struct running_job *ends = xmalloc((t->n + 1) * sizeof *ends);
	int64_t peak = 0, now = 0;
	size_t nends = 0, head = 0;

	/* Arrivals are sorted; ends are kept in a sorted array by insertion
	 * from the back, which is cheap because most jobs are short. */
	for (size_t k = 0; k < t->n; k++) {
		struct running_job r = {t->jobs[k].submit_ms + t->jobs[k].duration_ms,
					by_gpus && t->jobs[k].gpus > 1 ? t->jobs[k].gpus : 1};
		size_t pos;
		while (head < nends && ends[head].end <= t->jobs[k].submit_ms)
			now -= ends[head++].weight;
		pos = nends++;
		while (pos > head && ends[pos - 1].end > r.end) {
			ends[pos] = ends[pos - 1];
			pos--;
		}
		ends[pos] = r;
		now += r.weight;
		peak = now > peak ? now : peak;
	}
	free(ends);
	return peak;
}

int64_t sim_peak_concurrency(const struct trace *t)
{
	return peak_running(t, 0);
}

/* always-on's default: the instances of its offer that hold the peak's
 * GPUs. */
static int64_t peak_instances(const struct sim *s)
{
	int64_t gpus = peak_running(s->trace, 1), per = s->opts->offers[s->policy->offer].gpus;

	return (gpus + per - 1) / per;
}

void baseline_start(struct sim *s)
{
	const struct policy *p = s->policy;
	int64_t n;

	if (p->kind != POL_ALWAYS_ON && p->kind != POL_MIN1 && p->kind != POL_UTIL)
		return;
	n = p->kind == POL_ALWAYS_ON ? (p->n ? p->n : peak_instances(s)) : 1;
	s->floor = n;
	for (int64_t k = 0; k < n; k++)
		sim_launch(s, p->offer, p->market, 1);
}

/* A busy instance that may be stopped, in the order it would be. */
struct victim {
	int64_t since;
	int k;
};

static int by_stop_order(const void *a, const void *b)
{
	const struct victim *x = a, *y = b;

	if (x->since != y->since)
		return x->since < y->since ? -1 : 1;
	return x->k - y->k;
}

/* keda's HPA deletes replicas until its jobs running hold want GPUs at
 * most: on the nodes idle the longest ago first, their newest jobs first,
 * back to the queue; the nodes stay, to go once idle. A walk and a sort
 * of the fleet: only keda with more than one job per replica (target)
 * comes here, when its desire falls below the jobs running. */
static void put_back_jobs(struct sim *s, int64_t want)
{
	size_t n = 0;

	if ((size_t)s->nup > s->cap_victims) {
		s->victims = sim_grown(s->victims, (size_t)s->nup, sizeof *s->victims);
		s->cap_victims = (size_t)s->nup;
	}
	for (int a = 0; a < s->nroster; a++) {
		const struct sinst *i = &s->inst[s->roster[a]];
		if (i->state == S_BUSY)
			s->victims[n++] = (struct victim){i->idle_since, s->roster[a]};
	}
	qsort(s->victims, n, sizeof *s->victims, by_stop_order);
	for (size_t v = 0; v < n && s->gpus_busy > want; v++) {
		const struct sinst *i = &s->inst[s->victims[v].k];
		while (s->gpus_busy > want && i->newest >= 0)
			sim_put_back(s, i->newest);
	}
}

void baseline_scale_down(struct sim *s, int64_t want, int allow_busy)
{
	if (allow_busy && s->gpus_busy > want)
		put_back_jobs(s, want);
	/* Each found at once: a walk of the fleet for each was quadratic in
	 * a scale-in after a burst. */
	for (;;) {
		int k = sim_longest_idle(s);
		if (k < 0 && (k = sim_first_booting(s)) < 0)
			break;
		if (s->gpus_live - sim_offer(s, &s->inst[k])->gpus < want)
			return;
		sim_stop(s, k);
	}
}

void min1_policy(struct sim *s)
{
	int64_t gpus = s->opts->offers[s->policy->offer].gpus;
	int k;

	/* The GPUs queued jobs ask for beyond those free (idle, booting, or
	 * beside running jobs), in whole instances: jobs pack onto nodes as
	 * Kubernetes places pods. */
	for (int64_t n = (s->queued_gpus - (s->gpus_live - s->gpus_busy) + gpus - 1) / gpus; n > 0; n--)
		sim_launch(s, s->policy->offer, s->policy->market, 0);
	/* The longest idle is the next to go: each is looked at when it is
	 * due, not at every change. */
	while (s->nup > 1 && (k = sim_longest_idle(s)) >= 0) {
		int64_t due = s->inst[k].idle_since + s->policy->idle_ms;
		if (s->now < due) {
			s->next_policy = min_positive(s->next_policy, due);
			break;
		}
		sim_stop(s, k);
	}
}

/* The offline lower bound: every job at the lowest price per unit of work
 * among the offers it fits, paying its GPUs' share of the instance, with
 * no idle time and no boot. */
void bound_run(const struct trace *t, const struct sim_options *o, struct sim_result *r)
{
	for (size_t k = 0; k < t->n; k++) {
		const struct trace_job *j = &t->jobs[k];
		double best = -1, best_gpu_h = 0;
		int gpus = j->gpus > 1 ? j->gpus : 1;
		for (int f = 0; f < o->noffers; f++) {
			const struct offer *of = &o->offers[f];
			for (int m = 0; m < MARKET_COUNT; m++) {
				/* Its GPUs' share of the instance: the rest can run
				 * other jobs beside it. */
				double hours = (double)j->duration_ms / of->speed / 3600000.0, c;
				if (of->gpus < j->gpus || of->price[m] < 0)
					continue;
				c = of->price[m] * hours * gpus / of->gpus;
				if (best < 0 || c < best) {
					best = c;
					best_gpu_h = hours * gpus;
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
