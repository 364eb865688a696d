/* `ebb tune`: sweeps the knobs of ebb's policy and of each baseline over a
 * trace, keeps each family's cost against p95-wait frontier, and picks the
 * cheapest ebb settings that meet a wait target. */
#ifndef EBB_TUNE_H
#define EBB_TUNE_H

#define TUNE_AUTO (-1) /* idle_timeout = auto */

#include "sim/sim.h"

/* The ebb settings the sweep varies, in seconds; warm: an all-day floor;
 * max_instances: 0 keeps the config's. */
struct tune_knobs {
	int wait_target_s, idle_timeout_s, surplus_s, arrival_window_s, warm, max_instances; /* idle, surplus: or TUNE_AUTO */
};

struct tune_point {
	char family[24]; /* tune_families[] */
	char spec[512];
	double cost_usd, wait_p95_s;
	int on_frontier;
	struct tune_knobs ebb; /* of an ebb point */
};

/* The families of points, in the order they are reported, into out (room
 * for TUNE_MAX_FAMILIES): ebb, the baselines' sweeps (keda+karpenter is
 * keda with placement=cheapest, swept when the offers are several), and
 * the references: the clairvoyant (perfect foresight, no wait), the
 * bound (no idle, no boot), and last clairvoyant:wait (the clairvoyant
 * with no wait longer than the target). Returns how many. */
#define TUNE_MAX_FAMILIES 16
int tune_families(const char **out);

struct tune {
	struct tune_point *points;
	size_t n;
	int recommended; /* index of the chosen ebb point, -1 if none meets the target */
	size_t partial;  /* settings left out: their replay ran part of the trace */
	char partial_spec[512]; /* the first of them */
	char fragment[1024];
	double wait_p95_s; /* the target */
	size_t grid;       /* the settings of the whole grid, replayed or not */
	int oracle_durations; /* ebb's replays were told the trace's durations */
};

/* At a p95 wait of at most wait_s: ebb's cheapest point, and the
 * cheapest point of any baseline (NULL: none reaches it). */
struct tune_at {
	double wait_s;
	const struct tune_point *ebb, *best;
};

/* The comparisons the project holds itself to (docs/SIMULATION.md): at
 * keda-default's p95, at two boots, at the target and at the
 * clairvoyant's p95 (no wait but after reclaims), ebb against the best
 * baseline there, and against keda's defaults, the clairvoyant and the
 * bound; and clairvoyant:wait at the target (NULL: not in the sweep). */
struct tune_ratios {
	const struct tune_point *keda, *clairvoyant, *bound, *clairvoyant_wait;
	struct tune_at at_keda, at_two_boots, at_target, at_clairvoyant;
	int below_frontier; /* baseline points cheaper than ebb at the same or shorter wait */
	char below[512];
};

/* The frontier points of a family in order of p95 wait, then cost, then
 * sweep order, into out (room for t->n); returns how many. */
size_t tune_frontier(const struct tune *t, const char *family, const struct tune_point **out);

void tune_ratios(const struct tune *t, double boot_s, struct tune_ratios *r);

/* The share of the gap between the best baseline within the target and
 * clairvoyant:wait at the target that ebb's cheapest point within it
 * (its recommendation) closes: (baseline - ebb) / (baseline -
 * reference), into *share (1: ebb costs what the reference does; above
 * 1, less; below 0, more than the baseline). 0, or -1 when a figure is
 * missing or the reference is not cheaper than the baseline (no gap to
 * close). */
int tune_gap_closed(const struct tune_ratios *r, double *share);

/* Where a sweep stands, for a progress line: replays done and queued
 * (the search queues each round's as the last one ends), the wall time
 * so far and, at that pace, what the queued ones still need; and ebb's
 * cheapest point within the wait so far (NULL: none yet). */
struct tune_progress {
	size_t done, queued, grid; /* grid: the points of the whole grid */
	double elapsed_s, left_s;
	const struct tune_point *best;
};

/* How the sweep runs: jobs replays at once (threads; at least 1), every
 * point of the grid or the search (tune_search.c; on a trace of
 * screen_jobs or more, tune_screen.c), and a function told after each
 * replay, on the calling thread (NULL: none). */
#define TUNE_SCREEN_JOBS 20000
struct tune_options {
	int jobs;
	int exhaustive;
	size_t screen_jobs; /* a trace of this many jobs or more is screened on a prefix first; 0: TUNE_SCREEN_JOBS */
	void (*progress)(const struct tune_progress *p, void *arg);
	void *arg;
};

/* Runs the sweep; -1 with err when a policy spec fails to parse. The
 * points are in the grid's order whatever the threads. */
int tune_run(const struct trace *t, const struct sim_options *o, const char *config_path, double wait_p95_s,
	     const struct tune_options *to, struct tune *out, char *err, size_t errsize);
void tune_free(struct tune *t);

#endif
