/* The keda baseline: KEDA's ScaledObject with the HPA behind it. Every
 * poll the metric is the jobs queued and running, and the desire
 * ceil(metric / target) instances: up to it at once; down only to the
 * largest desire of the last `stabilize` seconds (the HPA's window, kept
 * whole however long against the poll), and from one to none only
 * `cooldown` after the last poll that saw work (KEDA's). Scale-in may
 * stop a busy worker, whose job goes back to the queue.
 *
 * The replicas are one Deployment, each running one job at a time and
 * asking for the GPUs of the largest job its offers fit; a node holds as
 * many replicas as its GPUs hold of that, as Kubernetes packs pods. Nodes
 * are of the offer and market given, or, with placement=cheapest, where
 * Karpenter would put them with every offer in its NodePool: the
 * cheapest offer per hour that fits a replica (it knows nothing of
 * speed), on spot when spot is allowed and available, on demand when it
 * is not. Nodes are launched until they hold the replicas desired, and
 * stopped while those left still hold the replicas kept. An offering whose
 * spot instance was reclaimed is left out for KARPENTER_UNAVAILABLE_MS,
 * as Karpenter's interruption controller marks it in its cache of
 * unavailable offerings (karpenter-provider-aws,
 * pkg/controllers/interruption; shared/FACTS.md: 3 minutes). */
#include <math.h>

#include "sim/engine.h"

#define KARPENTER_UNAVAILABLE_MS (3 * 60 * 1000)

void keda_start(struct sim *s)
{
	for (size_t k = 0; k < s->t->n; k++) {
		int gpus = s->t->jobs[k].gpus, fits = 0;
		for (int o = 0; o < s->o->noffers; o++)
			fits |= (policy_any_offer(s->p) || o == s->p->offer) && s->o->offers[o].gpus >= gpus;
		if (fits && gpus > s->keda.replica_gpus)
			s->keda.replica_gpus = gpus;
	}
}

int keda_replicas_on(const struct sim *s, const struct offer *o)
{
	int per = s->keda.replica_gpus > 1 ? s->keda.replica_gpus : 1;

	return o->gpus >= per ? o->gpus / per : 1;
}

void keda_reclaimed(struct sim *s, int k)
{
	s->keda.spot_unavailable_until[s->inst[k].offer] = s->now + KARPENTER_UNAVAILABLE_MS;
}

/* The offer Karpenter takes on market m for a replica: the cheapest per
 * hour that fits and is sold (and, on spot, not left out); -1 if none. */
static int cheapest(const struct sim *s, enum market m)
{
	int best = -1;

	for (int k = 0; k < s->o->noffers; k++) {
		const struct offer *o = &s->o->offers[k];
		if (o->gpus < s->keda.replica_gpus || o->price[m] < 0 ||
		    (m == MARKET_SPOT && s->now < s->keda.spot_unavailable_until[k]))
			continue;
		if (best < 0 || o->price[m] < s->o->offers[best].price[m])
			best = k;
	}
	return best;
}

/* Karpenter's launch of one replica, spot first: -1 when no offer fits
 * (or out of memory). */
static int karpenter_launch(struct sim *s)
{
	int k = cheapest(s, MARKET_SPOT);

	if (k >= 0)
		return sim_launch(s, k, MARKET_SPOT, 0);
	k = cheapest(s, MARKET_ONDEMAND);
	return k < 0 ? -1 : sim_launch(s, k, MARKET_ONDEMAND, 0);
}

/* Nodes until they hold the replicas wanted. */
static void scale_up(struct sim *s, int64_t replicas)
{
	while (s->slots < replicas) {
		int k = s->p->placement == PLACE_OFFER ? sim_launch(s, s->p->offer, s->p->market, 0) : karpenter_launch(s);
		if (k < 0)
			return; /* no offer fits, or out of memory: the replay stops */
	}
}

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
	int64_t metric = s->queued + s->running, desired = (int64_t)ceil((double)metric / s->p->target);
	int64_t keep = stabilised(s, desired);

	if (metric > 0)
		s->keda.last_active = s->now;
	if (desired > s->slots) {
		scale_up(s, desired);
	} else if (keep < s->slots) {
		/* KEDA owns 1 -> 0 after its cooldown; the HPA never goes below 1. */
		int64_t floor_n = s->now - s->keda.last_active >= s->p->cooldown_ms ? 0 : 1;
		baseline_scale_down(s, keep > floor_n ? keep : floor_n, 1);
	}
	s->next_policy = s->now + s->p->poll_ms;
}
