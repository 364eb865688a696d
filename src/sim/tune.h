/* `ebb tune`: sweeps the knobs of ebb's policy and of each baseline over a
 * trace, keeps each family's cost against p95-wait frontier, and picks the
 * cheapest ebb settings that meet a wait target. */
#ifndef EBB_TUNE_H
#define EBB_TUNE_H

#include "sim/sim.h"

/* The ebb settings the sweep varies, in seconds; warm: an all-day floor;
 * max_instances: 0 keeps the config's. */
struct tune_knobs {
	int wait_target_s, idle_timeout_s, surplus_s, arrival_window_s, warm, max_instances;
};

struct tune_point {
	char family[16]; /* ebb, always-on, min1, util, keda, bound */
	char spec[512];
	double cost_usd, wait_p95_s;
	int on_frontier;
	struct tune_knobs ebb; /* of an ebb point */
};

/* The families of points, in the order they are reported. */
extern const char *const tune_families[];
#define TUNE_NFAMILIES 6

struct tune {
	struct tune_point *points;
	size_t n;
	int recommended; /* index of the chosen ebb point, -1 if none meets the target */
	size_t partial;  /* settings left out: their replay ran part of the trace */
	char partial_spec[512]; /* the first of them */
	char fragment[1024];
	int oracle_durations; /* ebb's replays were told the trace's durations */
};

/* The comparisons the project holds itself to (docs/SIMULATION.md). */
struct tune_ratios {
	double keda_cost, keda_p95, ebb_at_keda; /* ebb's cheapest at keda-default's p95 or shorter */
	double bound_cost, bound_wait_s, ebb_at_bound; /* ebb's cheapest at p95 <= two boots */
	int below_frontier; /* baseline points cheaper than ebb at the same or shorter wait */
	char below[512];
};

/* The frontier points of a family in order of p95 wait, then cost, then
 * sweep order, into out (room for t->n); returns how many. */
size_t tune_frontier(const struct tune *t, const char *family, const struct tune_point **out);

void tune_ratios(const struct tune *t, double boot_s, struct tune_ratios *r);

/* Runs the sweep; -1 with err when a policy spec fails to parse. */
int tune_run(const struct trace *t, const struct sim_options *o, const char *config_path,
	     double wait_p95_s, struct tune *out, char *err, size_t errsize);
void tune_free(struct tune *t);

#endif
