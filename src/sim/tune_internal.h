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
	int screening; /* replays of a prefix (tune_screen.c): no best so far */
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

/* The search on a long trace: every setting replayed on a prefix of it,
 * then the fixed points and each grid's leads there replayed whole
 * (tune_screen.c). */
int tune_screen(struct tune_space *s, struct tune_job *j, char *err, size_t errsize);

/* What both searches share (tune_search.c). The grid's `most` best
 * replayed cells for the wait (positions in the grid) into lead, best
 * first: within the wait the cheapest, then beyond it the quickest;
 * returns how many. */
int tune_leads(const struct tune_space *s, const struct tune_grid *g, double wait_s, size_t *lead, int most);
/* Queues setting k unless it has been replayed or queued. */
void tune_queue(const struct tune_space *s, size_t k, size_t *batch, size_t *n, unsigned char *queued);
/* Replays the batch in sweep order and empties it. */
int tune_flush(struct tune_space *s, struct tune_job *j, size_t *batch, size_t *n, unsigned char *queued, char *err,
	       size_t errsize);
/* The waits the searches aim at, into w (room for TUNE_MAX_WAITS): the
 * target, two boots, and the p95 of each reference replayed (keda's
 * defaults, the clairvoyant), once it is. Returns how many. */
#define TUNE_MAX_WAITS (2 + TUNE_MAX_FIXED)
int tune_waits(const struct tune_space *s, const struct tune_job *j, double *w);
/* Coordinate descent over the grids whose searched flag is `searched`,
 * from the settings replayed so far, toward each of tune_waits(): rounds
 * until every setting one knob away from each wait's best few (four in
 * ebb's grid of knobs, two in the others) has been replayed. */
int tune_descend(struct tune_space *s, struct tune_job *j, int searched, char *err, size_t errsize);

#endif
