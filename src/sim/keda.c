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
#include <stdlib.h>

#include "sim/sim_internal.h"

#define KARPENTER_UNAVAILABLE_MS (3 * 60 * 1000)

/* Its knobs: KEDA's and the HPA's, with their defaults (shared/FACTS.md). */
struct keda_params {
	double target;
	int64_t poll_ms, cooldown_ms, stabilize_ms;
	/* each replica on the offer and market given, or (cheapest) where
	 * Karpenter would put it: the cheapest offer that fits, spot first,
	 * on demand when spot fails: its index in placements[] */
	int placement;
};

enum { PLACE_OFFER, PLACE_CHEAPEST };

static const struct keda_params defaults = {
	.target = 1, .poll_ms = 30000, .cooldown_ms = 300000, .stabilize_ms = 300000};

static const char *const placements[] = {"offer", "cheapest", NULL};

#define P(field) offsetof(struct keda_params, field)
static const struct knob knobs[] = {
	{"target", K_NUMBER, P(target), 1, 1e9},
	{"poll", K_SECONDS, P(poll_ms), 1, KNOB_NEVER},
	{"cooldown", K_SECONDS, P(cooldown_ms), 0, KNOB_NEVER},
	{"stabilize", K_SECONDS, P(stabilize_ms), 0, KNOB_NEVER},
	{"placement", K_CHOICE, P(placement), 0, 0, placements,
	 "offer (the offer= and market= given) or cheapest (Karpenter's choice among every offer)"},
	{0}};

/* Its state: the last moment with work, and the HPA's
 * recommendations of its stabilisation window (each with a: the
 * recommendation), only those that a later and larger one does not hide:
 * the first is the largest. */
struct keda_state {
	int64_t last_active;
	struct window recommendations;
	/* The GPUs of the replicas the HPA keeps: its jobs run in them. */
	int64_t replica_gpus;
	/* placement=cheapest: until when Karpenter leaves each offer's spot
	 * out after one of its instances was reclaimed. */
	int64_t spot_unavailable_until[SIM_MAX_OFFERS];
	/* Scratch for choosing the replicas to delete (put_back_jobs). */
	struct victim *victims;
	size_t cap_victims;
};

static struct keda_state *keda_of(const struct sim *s)
{
	return s->policy_state;
}

static const struct keda_params *kp(const struct sim *s)
{
	return s->policy->params;
}

/* Instance k was reclaimed: Karpenter leaves its offering out a while. */
static void keda_reclaim(struct sim *s, int k)
{
	keda_of(s)->spot_unavailable_until[s->inst[k].offer] = s->now + KARPENTER_UNAVAILABLE_MS;
	sim_stop(s, k);
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
		    (m == MARKET_SPOT && s->now < keda_of(s)->spot_unavailable_until[k]))
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
		int k = kp(s)->placement == PLACE_OFFER ? sim_launch(s, s->policy->offer, s->policy->market, 0)
						       : karpenter_launch(s, largest);
		if (k < 0)
			return; /* no offer fits: the replay stops */
	}
}

/* The GPUs of the replicas each size's ScaledObject desires now, and in
 * *jobs its jobs queued and running, all sizes together. Over the sizes
 * the queues have, not all INSTANCE_GPUS_MAX: it runs at every look, and
 * the 64 divisions of the empty ones were half of a long replay. */
static int64_t desired_gpus(const struct sim *s, int64_t *jobs)
{
	int64_t of_size[INSTANCE_GPUS_MAX + 1], gpus = 0;
	char seen[INSTANCE_GPUS_MAX + 1] = {0};
	int sizes[INSTANCE_GPUS_MAX], n = 0;

	for (int c = 0; c < s->nq; c++) {
		int g = s->q[c].gpus > 1 ? s->q[c].gpus : 1;
		if (!seen[g]) {
			seen[g] = 1;
			of_size[g] = 0;
			sizes[n++] = g;
		}
		of_size[g] += (int64_t)s->q[c].len + s->q[c].running;
	}
	*jobs = 0;
	for (int k = 0; k < n; k++) {
		*jobs += of_size[sizes[k]];
		gpus += sizes[k] * (int64_t)ceil((double)of_size[sizes[k]] / kp(s)->target);
	}
	return gpus;
}

/* The largest desire of the window, this one's included: each desire
 * hides the smaller ones before it, which can never be the largest again,
 * so the oldest left is the largest. */
static int64_t stabilised(struct sim *s, int64_t desired)
{
	struct window *w = &keda_of(s)->recommendations;

	while (w->n > 0 && window_at(w, w->n - 1)->a <= (double)desired)
		window_pop_back(w);
	window_push(w, s->now, (double)desired, 0);
	while (s->now - window_at(w, 0)->at > kp(s)->stabilize_ms)
		window_pop_front(w);
	return (int64_t)window_at(w, 0)->a;
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
	struct keda_state *ks = keda_of(s);
	size_t n = 0;

	if ((size_t)s->nup > ks->cap_victims) {
		ks->victims = sim_grown(ks->victims, (size_t)s->nup, sizeof *ks->victims);
		ks->cap_victims = (size_t)s->nup;
	}
	for (int a = 0; a < s->nroster; a++) {
		const struct sinst *i = &s->inst[s->roster[a]];
		if (i->state == S_BUSY)
			ks->victims[n++] = (struct victim){i->idle_since, s->roster[a]};
	}
	qsort(ks->victims, n, sizeof *ks->victims, by_stop_order);
	for (size_t v = 0; v < n && s->gpus_busy > want; v++) {
		const struct sinst *i = &s->inst[ks->victims[v].k];
		while (s->gpus_busy > want && i->newest >= 0)
			sim_put_back(s, i->newest);
	}
}

static void keda_look(struct sim *s)
{
	int64_t jobs, desired = desired_gpus(s, &jobs), keep = stabilised(s, desired), floor_n;

	if (jobs > 0)
		keda_of(s)->last_active = s->now;
	/* KEDA owns 1 -> 0 after its cooldown; the HPA never goes below 1. */
	floor_n = s->now - keda_of(s)->last_active >= kp(s)->cooldown_ms ? 0 : 1;
	keda_of(s)->replica_gpus = keep > floor_n ? keep : floor_n;
	if (desired > s->gpus_live) {
		scale_up(s, desired);
	} else if (keda_of(s)->replica_gpus < s->gpus_live) {
		/* Scale-in may delete replicas running jobs: back to the queue. */
		if (s->gpus_busy > keda_of(s)->replica_gpus)
			put_back_jobs(s, keda_of(s)->replica_gpus);
		baseline_scale_down(s, keda_of(s)->replica_gpus);
	}
	s->next_policy = s->now + kp(s)->poll_ms;
}

/* Its jobs run in its replicas, as many as the HPA keeps: the first in
 * lease order that fits those and the instance. */
static int keda_take(struct sim *s, int k)
{
	int room = s->inst[k].free_gpus;

	if (keda_of(s)->replica_gpus - s->gpus_busy < room)
		room = (int)(keda_of(s)->replica_gpus - s->gpus_busy);
	return sim_lease_next(s, k, room);
}

/* It polls from the start. */
static void keda_start(struct sim *s)
{
	s->next_policy = 1;
}

static void keda_free(struct sim *s)
{
	window_free(&keda_of(s)->recommendations);
	free(keda_of(s)->victims);
}

static int keda_any_offer(const struct policy *p)
{
	return ((const struct keda_params *)p->params)->placement == PLACE_CHEAPEST;
}

static int keda_check(struct policy *p, const char *spec, int market_given, int offer_given, char *err,
		      size_t errsize)
{
	if (keda_any_offer(p))
		return policy_check_no_offer(spec, market_given, offer_given,
					     "placement=cheapest chooses the offer and market of each replica: offer= and"
					     " market= go with placement=offer",
					     err, errsize);
	return policy_check_offer(p, spec, market_given, offer_given, err, errsize);
}

/* `ebb tune`: on the config's first offer, its defaults the reference
 * point "keda"; and, with several offers, with Karpenter choosing among
 * them all: what people run. */
static const double targets[] = {1, 2, 4, 8};
static const double polls_s[] = {10, 30, 60};
static const double cooldowns_s[] = {0, 60, 300, 900};
static const double stabilizes_s[] = {0, 60, 300, 900};
static const struct sweep_knob swept[] = {{"target", SWEEP_ARRAY(targets)},
					  {"poll", SWEEP_ARRAY(polls_s)},
					  {"cooldown", SWEEP_ARRAY(cooldowns_s)},
					  {"stabilize", SWEEP_ARRAY(stabilizes_s)}};
static const struct sim_sweep sweeps[] = {
	{.family = "keda", .defaults_cell = 1, .knobs = SWEEP_ARRAY(swept)},
	{.family = "keda+karpenter", .suffix = ",placement=cheapest", .several_offers = 1, .knobs = SWEEP_ARRAY(swept)},
	{0}};

const struct sim_policy sim_policy_keda = {
	.name = "keda",
	.knobs = knobs,
	.params_size = sizeof(struct keda_params),
	.defaults = &defaults,
	.check = keda_check,
	.any_offer = keda_any_offer,
	/* keda as people run it with several offers: with Karpenter. */
	.several_offers_spec = "keda:placement=cheapest",
	.durations = "unused",
	.state_size = sizeof(struct keda_state),
	.free = keda_free,
	.start = keda_start,
	.look = keda_look,
	.take = keda_take,
	.reclaim = keda_reclaim,
	.sweeps = sweeps,
	.reference = 1,
};
