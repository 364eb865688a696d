/* The search of `ebb tune` on a long trace (see tune_internal.h), where
 * the descent of tune_search.c costs too much: every setting of every
 * grid is replayed first on a prefix of the trace, a TUNE_SCREEN_PART of
 * its time, and only the few that lead there at each wait are replayed
 * whole. A replay costs about what its part of the trace holds, so the
 * prefix pass costs about the whole grid over TUNE_SCREEN_PART. On the
 * prefix the waits are not the whole trace's (its backlogs are shorter,
 * or longer), so the finalists are the leads at each wait and at half
 * and twice it. The baselines' grids and ebb's warm floors are then
 * descended from their finalists on the whole trace (their replays are
 * the cheap ones, or few): on the made traces of test_tune.c the prefix
 * alone missed util's best by 1.5%. ebb's grid of knobs is not: its
 * replays are the dear ones (docs/SIMULATION.md). */
#include <stdlib.h>
#include <string.h>

#include "common/mem.h"
#include "sim/tune_internal.h"

#define TUNE_SCREEN_PART 8
/* The finalists of a grid at each wait: its TUNE_SCREEN_LEADS best on
 * the prefix, at the wait and at the wait times each margin. Three missed
 * a made trace's best (test_tune.c) once ebb's grid had 900 s too. */
#define TUNE_SCREEN_LEADS 4
static const double margins[] = {0.5, 1, 2};

/* The trace's jobs submitted within the first TUNE_SCREEN_PART of its
 * time, from its first job (a history's times can be the epoch's),
 * sharing its arrays (the replay only reads them). */
static struct trace prefix_of(const struct trace *t)
{
	struct trace p = *t;
	int64_t first = t->n ? t->jobs[0].submit_ms : 0;
	int64_t end = t->n ? first + (t->jobs[t->n - 1].submit_ms - first) / TUNE_SCREEN_PART : 0;

	p.n = 0;
	while (p.n < t->n && t->jobs[p.n].submit_ms < end)
		p.n++;
	return p;
}

int tune_screen(struct tune_space *s, struct tune_job *j, char *err, size_t errsize)
{
	struct trace prefix = prefix_of(j->trace);
	struct tune_space scr = *s;
	struct tune_job jp = *j;
	size_t *batch = xcalloc(s->n, sizeof *batch), n = 0;
	unsigned char *queued = xcalloc(s->n, 1);
	double w[TUNE_MAX_WAITS];
	int nw, rc;

	/* The prefix: every setting, in a space of its own. */
	scr.cands = xcalloc(s->n, sizeof *scr.cands);
	memcpy(scr.cands, s->cands, s->n * sizeof *scr.cands);
	jp.trace = &prefix;
	jp.screening = 1;
	for (size_t k = 0; k < s->n; k++)
		batch[n++] = k;
	rc = tune_replay(&scr, &jp, batch, n, err, errsize);
	j->progress = jp.progress;
	n = 0;
	/* The fixed points whole: their waits are among those aimed at. */
	for (int k = 0; k < s->nfixed && rc == 0; k++)
		tune_queue(s, s->fixed[k], batch, &n, queued);
	if (rc == 0)
		rc = tune_flush(s, j, batch, &n, queued, err, errsize);
	nw = tune_waits(s, j, w);
	/* The finalists of every grid, whole. */
	for (int g = 0; g < s->ngrids && rc == 0; g++) {
		for (int k = 0; k < nw; k++) {
			for (size_t m = 0; m < sizeof margins / sizeof *margins; m++) {
				size_t lead[TUNE_SCREEN_LEADS];
				int nl = tune_leads(&scr, &s->grids[g], w[k] * margins[m], lead, TUNE_SCREEN_LEADS);
				for (int l = 0; l < nl; l++)
					tune_queue(s, s->grids[g].cells[lead[l]], batch, &n, queued);
			}
		}
	}
	if (rc == 0)
		rc = tune_flush(s, j, batch, &n, queued, err, errsize);
	/* The baselines' grids and ebb's warm floors descended from there. */
	if (rc == 0)
		rc = tune_descend(s, j, 0, err, errsize);
	free(scr.cands);
	free(batch);
	free(queued);
	return rc;
}
