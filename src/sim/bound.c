/* The offline lower bound, a reference that replays nothing
 * (sim_policy.offline): what the work itself costs. */
#include "policy/classes.h"
#include "sim/sim_internal.h"

/* Every job at the lowest price per unit of work among the offers it
 * fits, paying its GPUs' share of the instance (a one-GPU job of a shared
 * type its [type.NAME] gpu_share of one GPU), with no idle time and no
 * boot. */
static void bound_run(const struct trace *t, const struct plan_settings *st, const struct sim_options *o,
		      struct sim_result *r)
{
	for (size_t k = 0; k < t->n; k++) {
		const struct trace_job *j = &t->jobs[k];
		double best = -1, best_gpu_h = 0;
		double gpus = j->gpus > 1 ? j->gpus : classes_gpu_share(st, t->types[j->type]);
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

const struct sim_policy sim_policy_bound = {
	.name = "bound",
	.durations = "foresight",
	.offline = bound_run,
	.reference = 1,
};
