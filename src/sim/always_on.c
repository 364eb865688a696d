/* The always-on baseline: a fixed fleet of its offer and market, n
 * instances (by default those that hold the trace's peak GPUs), up from
 * the start and never stopped; a reclaimed one is replaced, as a node
 * group does. */
#include "sim/sim_internal.h"

struct always_on_params {
	int64_t n; /* 0: the trace's peak */
};

static const struct always_on_params defaults = {0};

static const struct knob knobs[] = {{"n", K_INT, offsetof(struct always_on_params, n), 0, 100000}, {0}};

/* Its state: its fleet. */
struct always_on_state {
	int64_t n;
};

static struct always_on_state *fleet_of(const struct sim *s)
{
	return s->policy_state;
}

/* Its default: the instances of its offer that hold the peak's GPUs. */
static int64_t peak_instances(const struct sim *s)
{
	int64_t gpus = sim_peak_running(s->trace, 1), per = s->opts->offers[s->policy->offer].gpus;

	return (gpus + per - 1) / per;
}

static void always_on_start(struct sim *s)
{
	const struct always_on_params *a = s->policy->params;
	int64_t n = a->n ? a->n : peak_instances(s);

	fleet_of(s)->n = n;
	for (int64_t k = 0; k < n; k++)
		sim_launch(s, s->policy->offer, s->policy->market, 1);
}

static int64_t always_on_floor(const struct sim *s)
{
	return fleet_of(s)->n;
}

static void always_on_reclaim(struct sim *s, int k)
{
	sim_stop(s, k);
	sim_launch(s, s->policy->offer, s->policy->market, 0);
}

/* `ebb tune`: every fleet size. */
static const struct sweep_knob swept[] = {{"n", NULL, 0}};
static const struct sim_sweep sweeps[] = {{.family = "always-on", .knobs = SWEEP_ARRAY(swept)}, {0}};

const struct sim_policy sim_policy_always_on = {
	.name = "always-on",
	.knobs = knobs,
	.params_size = sizeof(struct always_on_params),
	.defaults = &defaults,
	.check = policy_check_offer,
	.durations = "unused",
	.state_size = sizeof(struct always_on_state),
	.start = always_on_start,
	.floor = always_on_floor,
	.reclaim = always_on_reclaim,
	.sweeps = sweeps,
};
