/* The min1 baseline: one warm instance of its offer and market, one more
 * for each queued job no free one takes (jobs pack onto nodes' GPUs, as
 * Kubernetes places pods), each released after an idle time; its last
 * one, when reclaimed, is replaced. */
#include "sim/sim_internal.h"

struct min1_params {
	int64_t idle_ms;
};

static const struct min1_params defaults = {.idle_ms = 600000};

static const struct knob knobs[] = {{"idle", K_SECONDS, offsetof(struct min1_params, idle_ms), 0, KNOB_NEVER}, {0}};

static void min1_look(struct sim *s)
{
	const struct min1_params *m = s->policy->params;
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
		int64_t due = s->inst[k].idle_since + m->idle_ms;
		if (s->now < due) {
			s->next_policy = min_positive(s->next_policy, due);
			break;
		}
		sim_stop(s, k);
	}
}

/* One warm instance from the start. */
static void min1_start(struct sim *s)
{
	sim_launch(s, s->policy->offer, s->policy->market, 1);
}

static void min1_reclaim(struct sim *s, int k)
{
	sim_stop(s, k);
	if (s->nup == 0)
		sim_launch(s, s->policy->offer, s->policy->market, 0);
}

/* `ebb tune`: idle times as widely as each baseline's knobs, so that
 * each is compared at its best. */
static const double idles_s[] = {0, 10, 30, 60, 120, 300, 600, 1200, 1800, 3600};
static const struct sweep_knob swept[] = {{"idle", SWEEP_ARRAY(idles_s)}};
static const struct sim_sweep sweeps[] = {{.family = "min1", .knobs = SWEEP_ARRAY(swept)}, {0}};

const struct sim_policy sim_policy_min1 = {
	.name = "min1",
	.knobs = knobs,
	.params_size = sizeof(struct min1_params),
	.defaults = &defaults,
	.check = policy_check_offer,
	.durations = "unused",
	.start = min1_start,
	.look = min1_look,
	.on_change = sim_now, /* at every change */
	.floor = baseline_one,
	.reclaim = min1_reclaim,
	.sweeps = sweeps,
};
