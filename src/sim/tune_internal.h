/* Inside `ebb tune` (tune.c): the grid of every setting the sweep may
 * replay, the replays on threads (tune_pool.c), and the search that picks
 * which of them to replay (tune_search.c). */
#ifndef EBB_TUNE_INTERNAL_H
#define EBB_TUNE_INTERNAL_H

#include "sim/tune.h"

/* One setting: its point (figures once replayed), and where it stands. */
struct tune_cand {
	struct tune_point pt;
	enum cand_state {
		CAND_NEW,     /* not replayed */
		CAND_DONE,    /* a point */
		CAND_PARTIAL, /* its replay ran part of the trace: no point */
		CAND_FAILED,  /* its spec did not parse */
	} state;
};

/* The knobs of one family as a grid: ndims knobs, each with size[d]
 * values in the order of its list; cells[] holds each cell's setting (an
 * index into the space's cands) in row-major order, the last knob
 * fastest: the order of the exhaustive sweep. */
#define TUNE_MAX_DIMS 4
struct tune_grid {
	int ndims, size[TUNE_MAX_DIMS];
	size_t *cells, ncells;
	int searched; /* by the search; else replayed whole */
};

#define TUNE_MAX_GRIDS 8
#define TUNE_MAX_FIXED 4
struct tune_space {
	struct tune_cand *cands; /* in the order of the exhaustive sweep */
	size_t n;
	struct tune_grid grids[TUNE_MAX_GRIDS];
	int ngrids;
	/* The fixed points: the references' defaults (sim_policy.reference)
	 * and those at the target (sim_policy.at_target), and whether the
	 * search aims at each one's p95. */
	size_t fixed[TUNE_MAX_FIXED];
	int fixed_waits[TUNE_MAX_FIXED];
	int nfixed;
};

/* What every replay of a sweep shares. */
struct tune_job {
	const struct trace *trace;
	const struct sim_options *o;
	const char *config_path;
	double wait_p95_s;
	const struct tune_options *to;
	struct tune_progress progress; /* carried over from batch to batch */
	double start_s;
};

/* The monotonic clock, in seconds. */
double tune_now_s(void);

/* Replays the settings at batch[0..n) (indexes into s->cands, each
 * CAND_NEW) on to->jobs threads, and reports progress. 0, or -1 with the
 * first failing spec's error (in batch order) in err. */
int tune_replay(struct tune_space *s, struct tune_job *j, const size_t *batch, size_t n, char *err, size_t errsize);

/* Replays what the search picks: the fixed points, then rounds of
 * coordinate descent over the searched grids (see docs/SIMULATION.md). */
int tune_search(struct tune_space *s, struct tune_job *j, char *err, size_t errsize);

#endif
