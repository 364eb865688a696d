/* The search of `ebb tune` (see tune_internal.h): fewer replays than the
 * whole grid, for the same answers. The answers are ebb's cheapest
 * setting within a few waits: the target (the recommendation), and the
 * waits the ratios compare at (two boots, keda-default's p95, the
 * clairvoyant's). ebb's grid of knobs is searched by coordinate descent
 * toward each of those waits from the grid's corners. Its warm floors,
 * few, and the baselines' grids, whose answers are the ratios' other
 * half and whose replays are the cheaper, are replayed whole: coordinate
 * descent misses their best settings, which can be two knobs away from
 * any other as quick (docs/SIMULATION.md). On a long trace the search
 * screens on a prefix first (tune_screen.c). */
#include <stdlib.h>
#include <string.h>

#include "common/mem.h"
#include "sim/tune_internal.h"

/* The best settings at each wait whose neighbours are replayed, in
 * ebb's grid of knobs: with the best alone, descent stopped 14% dearer
 * than the grid's best on genai with the mix (two knobs away); with two,
 * 20% dearer on genai's first six days with the mix, the grid's best
 * (wait_target 600 s, idle_timeout 0, arrival_window 60 s) reached from
 * no corner; with four it found every answer of the whole grid on the
 * shared traces, whole and first halves. In the others' grids (a
 * screened search's baselines and warm floors), two. */
#define TUNE_LEADS 4
#define TUNE_LEADS_OTHERS 2

/* Orders the replayed cells of a grid for a wait: those within it by
 * cost, then wait; then those beyond it by wait, then cost; then those
 * that made no point; sweep order last. < 0 when cell a comes first. */
static int closer(const struct tune_space *s, size_t a, size_t b, double wait_s)
{
	const struct tune_cand *x = &s->cands[a], *y = &s->cands[b];
	int rx = x->state != CAND_DONE ? 2 : x->pt.wait_p95_s > wait_s;
	int ry = y->state != CAND_DONE ? 2 : y->pt.wait_p95_s > wait_s;
	double x1 = rx ? x->pt.wait_p95_s : x->pt.cost_usd, y1 = ry ? y->pt.wait_p95_s : y->pt.cost_usd;
	double x2 = rx ? x->pt.cost_usd : x->pt.wait_p95_s, y2 = ry ? y->pt.cost_usd : y->pt.wait_p95_s;

	if (rx != ry)
		return rx - ry;
	if (rx < 2 && x1 != y1)
		return x1 < y1 ? -1 : 1;
	if (rx < 2 && x2 != y2)
		return x2 < y2 ? -1 : 1;
	return (a > b) - (a < b);
}

int tune_leads(const struct tune_space *s, const struct tune_grid *g, double wait_s, size_t *lead, int most)
{
	int n = 0;

	for (size_t k = 0; k < g->ncells; k++) {
		int at = n;
		if (s->cands[g->cells[k]].state == CAND_NEW)
			continue;
		while (at > 0 && closer(s, g->cells[k], g->cells[lead[at - 1]], wait_s) < 0)
			at--;
		if (at == most)
			continue;
		memmove(lead + at + 1, lead + at, (size_t)(n < most ? n - at : n - at - 1) * sizeof *lead);
		lead[at] = k;
		n += n < most;
	}
	return n;
}

/* The stride of knob d in the row-major order of cells. */
static size_t stride(const struct tune_grid *g, int d)
{
	size_t st = 1;

	for (int e = d + 1; e < g->ndims; e++)
		st *= (size_t)g->size[e];
	return st;
}

void tune_queue(const struct tune_space *s, size_t k, size_t *batch, size_t *n, unsigned char *queued)
{
	if (s->cands[k].state == CAND_NEW && !queued[k]) {
		queued[k] = 1;
		batch[(*n)++] = k;
	}
}

/* Queues the cells of the grid that differ from the one at cell in one knob. */
static void neighbours(const struct tune_space *s, const struct tune_grid *g, size_t cell, size_t *batch, size_t *n,
		       unsigned char *queued)
{
	for (int d = 0; d < g->ndims; d++) {
		size_t st = stride(g, d), base = cell - (cell / st % (size_t)g->size[d]) * st;
		for (int v = 0; v < g->size[d]; v++)
			tune_queue(s, g->cells[base + (size_t)v * st], batch, n, queued);
	}
}

/* Queues the corners of the grid: each knob at its first or last value. */
static void corners(const struct tune_space *s, const struct tune_grid *g, size_t *batch, size_t *n,
		    unsigned char *queued)
{
	for (unsigned bits = 0; bits < 1u << g->ndims; bits++) {
		size_t cell = 0;
		for (int d = 0; d < g->ndims; d++)
			cell += (bits >> d & 1 ? (size_t)g->size[d] - 1 : 0) * stride(g, d);
		tune_queue(s, g->cells[cell], batch, n, queued);
	}
}

static int by_index(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return (x > y) - (x < y);
}

int tune_flush(struct tune_space *s, struct tune_job *j, size_t *batch, size_t *n, unsigned char *queued,
		 char *err, size_t errsize)
{
	int rc;

	qsort(batch, *n, sizeof *batch, by_index);
	rc = *n ? tune_replay(s, j, batch, *n, err, errsize) : 0;
	memset(queued, 0, s->n);
	*n = 0;
	return rc;
}

int tune_waits(const struct tune_space *s, const struct tune_job *j, double *w)
{
	int n = 0;

	w[n++] = j->wait_p95_s;
	w[n++] = 2.0 * (double)j->o->offers[0].boot_ms / 1000.0;
	for (int k = 0; k < s->nfixed; k++)
		if (s->fixed_waits[k] && s->cands[s->fixed[k]].state == CAND_DONE)
			w[n++] = s->cands[s->fixed[k]].pt.wait_p95_s;
	return n;
}

int tune_descend(struct tune_space *s, struct tune_job *j, int searched, char *err, size_t errsize)
{
	size_t *batch = xcalloc(s->n, sizeof *batch), n = 0;
	unsigned char *queued = xcalloc(s->n, 1);
	double w[TUNE_MAX_WAITS];
	int nw = tune_waits(s, j, w), rc = 0;

	/* Rounds: at each wait, every setting one knob away from the grid's
	 * two best for that wait so far, until those have all been
	 * replayed. The best can move from one round to the next, and a
	 * setting found for one wait can be the best for another. */
	do {
		for (int g = 0; g < s->ngrids; g++) {
			if (s->grids[g].searched != searched)
				continue;
			for (int k = 0; k < nw; k++) {
				size_t lead[TUNE_LEADS];
				int most = searched ? TUNE_LEADS : TUNE_LEADS_OTHERS;
				for (int l = 0, nl = tune_leads(s, &s->grids[g], w[k], lead, most); l < nl; l++)
					neighbours(s, &s->grids[g], lead[l], batch, &n, queued);
			}
		}
	} while (n > 0 && (rc = tune_flush(s, j, batch, &n, queued, err, errsize)) == 0);
	free(batch);
	free(queued);
	return rc;
}

int tune_search(struct tune_space *s, struct tune_job *j, char *err, size_t errsize)
{
	size_t *batch = xcalloc(s->n, sizeof *batch), n = 0;
	unsigned char *queued = xcalloc(s->n, 1);
	int rc;

	/* First the fixed points, the baselines' grids and the corners. */
	for (int k = 0; k < s->nfixed; k++)
		tune_queue(s, s->fixed[k], batch, &n, queued);
	for (int g = 0; g < s->ngrids; g++) {
		if (s->grids[g].searched)
			corners(s, &s->grids[g], batch, &n, queued);
		else
			for (size_t c = 0; c < s->grids[g].ncells; c++)
				tune_queue(s, s->grids[g].cells[c], batch, &n, queued);
	}
	rc = tune_flush(s, j, batch, &n, queued, err, errsize);
	free(batch);
	free(queued);
	/* Then coordinate descent over the searched grids. */
	return rc ? rc : tune_descend(s, j, 1, err, errsize);
}
