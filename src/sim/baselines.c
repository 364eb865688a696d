/* What the baselines share: the policies people use today, each on one
 * offer and market, with the knobs and defaults of the tool it stands for,
 * each in its own file (always_on.c, min1.c, util_scaling.c, keda.c),
 * beside the references (clairvoyant.c, bound.c). */
#include <stdlib.h>

#include "sim/sim_internal.h"

/* A job running, in peak_running()'s list. */
struct running_job {
	int64_t end;
	int weight;
};

int64_t sim_peak_running(const struct trace *t, int by_gpus)
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
	return sim_peak_running(t, 0);
}

int64_t baseline_one(const struct sim *s)
{
	(void)s;
	return 1;
}

void baseline_scale_down(struct sim *s, int64_t want)
{
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

