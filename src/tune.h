/* `ebb tune`: sweeps the knobs of ebb's policy and of each baseline over a
 * trace, keeps each family's cost against p95-wait frontier, and picks the
 * cheapest ebb settings that meet a wait target. */
#ifndef EBB_TUNE_H
#define EBB_TUNE_H

#include "sim.h"

struct tune_point {
	char family[16]; /* ebb, always-on, min1, util, keda, bound */
	char spec[512];
	double cost_usd, wait_p95_s;
	int on_frontier;
};

struct tune {
	struct tune_point *points;
	size_t n;
	int recommended; /* index of the chosen ebb point, -1 if none meets the target */
	char fragment[1024];
};

/* Runs the sweep; -1 with err when a policy spec fails to parse. */
int tune_run(const struct trace *t, const struct sim_options *o, const char *config_path,
	     double wait_p95_s, struct tune *out, char *err, size_t errsize);
void tune_free(struct tune *t);

#endif
