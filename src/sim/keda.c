/* The keda baseline: KEDA's ScaledObjects with the HPA behind them, one
 * per job size, as an operator with jobs of several sizes sets them up:
 * the replicas of a size run its jobs one at a time and each asks for its
 * GPUs, and Kubernetes packs the pods onto nodes. Every poll each size's
 * metric is its jobs queued and running, and its desire ceil(metric /
 * target) replicas; the desires' GPUs together are what the nodes must
 * hold: up to it at once; down only to the largest desire of the last
 * `stabilize` seconds (the HPA's window, kept whole however long against
 * the poll, here over the sizes' sum), and from one GPU to none only
 * `cooldown` after the last poll that saw work (KEDA's). Scale-in may
 * stop a busy node, whose jobs go back to the queue.
 *
 * Nodes are of the offer and market given, or, with placement=cheapest,
 * where Karpenter would put them with every offer in its NodePool: the
 * cheapest offer per hour that fits the largest pod waiting (it knows
 * nothing of speed), on spot when spot is allowed and available, on
 * demand when it is not. An offering whose spot instance was reclaimed
 * is left out for KARPENTER_UNAVAILABLE_MS, as Karpenter's interruption
 * controller marks it in its cache of unavailable offerings
 * (karpenter-provider-aws, pkg/controllers/interruption;
 * shared/FACTS.md: 3 minutes). */
#include <math.h>

#include "sim/sim_internal.h"

#define KARPENTER_UNAVAILABLE_MS (3 * 60 * 1000)

void keda_reclaimed(struct sim *s, int k)
{
	s->keda.spot_unavailable_until[s->inst[k].offer] = s->now + KARPENTER_UNAVAILABLE_MS;
}

/* The offer Karpenter takes on market m for pods of `gpus` GPUs: the
 * cheapest per hour that fits and is sold (and, on spot, not left out);
 * -1 if none. */
static int cheapest(const struct sim *s, enum market m, int gpus)
{
	int best = -1;

	for (int k = 0; k < s->opts->noffers; k++) {
		const struct offer *o = &s->opts->offers[k];
		if (o->gpus < gpus || o->price[m] < 0 ||
		    (m == MARKET_SPOT && s->now < s->keda.spot_unavailable_until[k]))
			continue;
		if (best < 0 || o->price[m] < s->opts->offers[best].price[m])
			best = k;
	}
	return best;
}

/* Karpenter's launch of one node for pods of `gpus` GPUs, spot first: -1
 * when no offer fits. */
static int karpenter_launch(struct sim *s, int gpus)
{
	int k = cheapest(s, MARKET_SPOT, gpus);

	if (k >= 0)
		return sim_launch(s, k, MARKET_SPOT, 0);
	k = cheapest(s, MARKET_ONDEMAND, gpus);
	return k < 0 ? -1 : sim_launch(s, k, MARKET_ONDEMAND, 0);
}

/* Nodes until they hold the GPUs wanted. Only queued work makes the
 * desire pass the GPUs up (those running hold their own). */
static void scale_up(struct sim *s, int64_t gpus)
{
	int largest = 1;

	for (int c = 0; c < s->nq; c++) {
		if (s->q[c].len && s->q[c].gpus > largest)
			largest = s->q[c].gpus;
	}
	while (s->gpus_live < gpus) {
		int k = s->policy->placement == PLACE_OFFER ? sim_launch(s, s->policy->offer, s->policy->market, 0)
						       : karpenter_launch(s, largest);
		if (k < 0)
			return; /* no offer fits: the replay stops */
	}
}

/* The GPUs of the replicas each size's ScaledObject desires now, and in
 * *jobs its jobs queued and running, all sizes together. */
static int64_t desired_gpus(const struct sim *s, int64_t *jobs)
{
	int64_t of_size[INSTANCE_GPUS_MAX + 1] = {0}, gpus = 0;

	for (int c = 0; c < s->nq; c++)
		of_size[s->q[c].gpus > 1 ? s->q[c].gpus : 1] += (int64_t)s->q[c].len + s->q[c].running;
	*jobs = 0;
	for (int g = 1; g <= INSTANCE_GPUS_MAX; g++) {
		*jobs += of_size[g];
		gpus += g * (int64_t)ceil((double)of_size[g] / s->policy->target);
	}
	return gpus;
}

/* The largest desire of the window, this one's included: each desire
 * hides the smaller ones before it, which can never be the largest again,
 * so the oldest left is the largest. */
static int64_t stabilised(struct sim *s, int64_t desired)
{
	struct window *w = &s->keda.recommendations;

	while (w->n > 0 && window_at(w, w->n - 1)->a <= (double)desired)
		window_pop_back(w);
	window_push(w, s->now, (double)desired, 0);
	while (s->now - window_at(w, 0)->at > s->policy->stabilize_ms)
		window_pop_front(w);
	return (int64_t)window_at(w, 0)->a;
}

void keda_policy(struct sim *s)
{
	int64_t jobs, desired = desired_gpus(s, &jobs), keep = stabilised(s, desired), floor_n;

	if (jobs > 0)
		s->keda.last_active = s->now;
	/* KEDA owns 1 -> 0 after its cooldown; the HPA never goes below 1. */
	floor_n = s->now - s->keda.last_active >= s->policy->cooldown_ms ? 0 : 1;
	s->keda.replica_gpus = keep > floor_n ? keep : floor_n;
	if (desired > s->gpus_live)
		scale_up(s, desired);
	else if (s->keda.replica_gpus < s->gpus_live)
		baseline_scale_down(s, s->keda.replica_gpus, 1);
	s->next_policy = s->now + s->policy->poll_ms;
}
