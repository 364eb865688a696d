/* The sweep behind `ebb tune` (see tune.h). */
#include "sim/tune.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/mem.h"
#include "sim/sim_policy.h"
#include "sim/spec.h"
#include "sim/tune_internal.h"

#define N(a) (sizeof(a) / sizeof *(a))

int tune_families(const char **out)
{
	int n = 0;

	/* Each policy's sweeps' families, or its name (ebb: the tuner's own
	 * grid; the references with no sweep). */
	for (int k = 0; sim_policies[k]; k++) {
		const struct sim_sweep *w = sim_policies[k]->sweeps;
		if (!w)
			out[n++] = sim_policies[k]->name;
		for (; w && w->family; w++)
			out[n++] = w->family;
	}
	/* The references at the target last: the others keep their places
	 * (and their colours in the plot). */
	for (int k = 0; sim_policies[k]; k++) {
		if (sim_policies[k]->at_target)
			out[n++] = sim_policies[k]->at_target;
	}
	return n;
}

/* ebb's knobs: how long work may wait before capacity is added, how long
 * the last idle instance stays and how fast the others go, and how far
 * back arrivals count as the work to expect. 900 s: without it the step
 * from 600 s to 1800 s, three times, hid the best wait target of a
 * shared trace (azure with the mix, docs/SIMULATION.md). */
static const int wait_targets_s[] = {10, 30, 60, 120, 240, 600, 900, 1800};
static const int idle_timeouts_s[] = {0, 60, 300, 600, 1800, TUNE_AUTO};
static const int surplus_s[] = {0, 60, TUNE_AUTO};
static const int arrival_windows_s[] = {0, 60, 600};
/* A warm floor all day reaches the shortest waits, as always-on does,
 * with launches above it for bursts, or none: a fixed pool (the floor
 * is the limit) is one of ebb's settings too. */
static const int warm_wait_targets_s[] = {10, 600};

/* Adds a setting to the space and, with a grid, as its next cell. */
static size_t add(struct tune_space *s, struct tune_grid *g, const char *family, const char *spec,
		  const struct tune_knobs *k)
{
	struct tune_cand *c;

	s->cands = xrealloc(s->cands, (s->n + 1) * sizeof *s->cands);
	c = &s->cands[s->n];
	memset(c, 0, sizeof *c);
	snprintf(c->pt.spec, sizeof c->pt.spec, "%s", spec);
	snprintf(c->pt.family, sizeof c->pt.family, "%s", family);
	if (k)
		c->pt.ebb = *k;
	if (g)
		g->cells[g->ncells++] = s->n;
	return s->n++;
}

/* A new grid of the given knobs' sizes. */
static struct tune_grid *grid(struct tune_space *s, int searched, int ndims, const int *size)
{
	struct tune_grid *g = &s->grids[s->ngrids++];
	size_t cells = 1;

	g->ndims = ndims;
	for (int d = 0; d < ndims; d++)
		cells *= (size_t)(g->size[d] = size[d]);
	g->cells = xcalloc(cells, sizeof *g->cells);
	g->searched = searched;
	return g;
}

/* An idle or surplus timeout of the sweep as the config writes it: "600s", "auto". */
static const char *idle_text(int s, char *buf, size_t size)
{
	if (s == TUNE_AUTO)
		return "auto";
	snprintf(buf, size, "%ds", s);
	return buf;
}

/* One setting of ebb's. */
static void add_ebb(struct tune_space *s, struct tune_grid *g, struct tune_knobs k)
{
	char spec[256], idle[16], surplus[16];
	int n = snprintf(spec, sizeof spec,
			 "ebb:lane.standard.wait_target=%ds,scaler.idle_timeout=%s,scaler.idle_surplus_timeout=%s,"
			 "scaler.arrival_window=%ds", k.wait_target_s, idle_text(k.idle_timeout_s, idle, sizeof idle),
			 idle_text(k.surplus_s, surplus, sizeof surplus), k.arrival_window_s);

	if (k.warm)
		n += snprintf(spec + n, sizeof spec - (size_t)n, ",scaler.warm=* * %d", k.warm);
	if (k.max_instances)
		snprintf(spec + n, sizeof spec - (size_t)n, ",scaler.max_instances=%d", k.max_instances);
	add(s, g, "ebb", spec, &k);
}

/* The fleet sizes tried, 1 to 4 then doubling up to the trace's peak
 * concurrency, into n (room for 64); returns how many. */
static int fleet_sizes(const struct trace *tr, int *n)
{
	int count = 0;

	for (int64_t k = 1, peak = sim_peak_concurrency(tr); k <= peak && count < 64; k = k < 4 ? k + 1 : k * 2)
		n[count++] = (int)k;
	return count;
}

/* ebb's settings: the grid of its knobs, searched, and its warm floors
 * (a floor with a short or a 10 minute target, or a fixed pool), three
 * settings a fleet size, replayed whole: descent missed their best on the
 * shared traces (a floor of 8 with a short target where 3 with a long one
 * was cheaper within the wait), and they are few. */
static void ebb_space(struct tune_space *s, const int *fleet, int nfleet)
{
	struct tune_grid *g = grid(s, 1, 4, (int[]){N(wait_targets_s), N(idle_timeouts_s), N(surplus_s),
						     N(arrival_windows_s)});

	for (size_t a = 0; a < N(wait_targets_s); a++)
		for (size_t b = 0; b < N(idle_timeouts_s); b++)
			for (size_t c = 0; c < N(surplus_s); c++)
				for (size_t d = 0; d < N(arrival_windows_s); d++)
					add_ebb(s, g, (struct tune_knobs){wait_targets_s[a], idle_timeouts_s[b], surplus_s[c],
									   arrival_windows_s[d], 0, 0});
	g = grid(s, 0, 2, (int[]){nfleet, N(warm_wait_targets_s) + 1});
	for (int k = 0; k < nfleet; k++) {
		for (size_t a = 0; a < N(warm_wait_targets_s); a++)
			add_ebb(s, g, (struct tune_knobs){warm_wait_targets_s[a], 600, 60, 0, fleet[k], 0});
		add_ebb(s, g, (struct tune_knobs){600, 600, 0, 0, fleet[k], fleet[k]});
	}
}

/* A knob's default for the policy, as its sweep writes it: seconds for a
 * duration. */
static double default_of(const struct sim_policy *p, const char *name)
{
	for (const struct knob *k = p->knobs; k && k->name; k++) {
		const char *at = (const char *)p->defaults + k->offset;
		if (strcmp(k->name, name) != 0)
			continue;
		if (k->type == K_NUMBER)
			return *(const double *)at;
		return (double)*(const int64_t *)at / (k->type == K_SECONDS ? 1000 : 1);
	}
	return NAN;
}

/* A baseline's sweep: a grid replayed whole, every combination of its
 * knobs' values, the last fastest. The cell of the policy's defaults, with
 * defaults_cell, is left for its reference point: *cell in *at. */
static void sweep_space(struct tune_space *s, const struct sim_policy *p, const struct sim_sweep *w,
			const int *fleet, int nfleet, struct tune_grid **at, size_t *cell)
{
	int size[SWEEP_MAX_KNOBS];
	size_t cells = 1;
	struct tune_grid *g;

	for (int d = 0; d < w->nknobs; d++)
		cells *= (size_t)(size[d] = w->knobs[d].values ? w->knobs[d].n : nfleet);
	g = grid(s, 0, w->nknobs, size);
	for (size_t c = 0; c < cells; c++) {
		char spec[160];
		int n = snprintf(spec, sizeof spec, "%s:", p->name), defaults = w->defaults_cell;
		for (int d = 0; d < w->nknobs; d++) {
			size_t stride = 1;
			int i;
			double v;
			for (int e = d + 1; e < w->nknobs; e++)
				stride *= (size_t)size[e];
			i = (int)(c / stride % (size_t)size[d]);
			v = w->knobs[d].values ? w->knobs[d].values[i] : fleet[i];
			n += snprintf(spec + n, sizeof spec - (size_t)n, "%s%s=%g", d ? "," : "", w->knobs[d].name, v);
			defaults &= v == default_of(p, w->knobs[d].name);
		}
		snprintf(spec + n, sizeof spec - (size_t)n, "%s", w->suffix ? w->suffix : "");
		if (defaults) {
			*at = g;
			*cell = g->ncells++;
			continue;
		}
		add(s, g, w->family, spec, NULL);
	}
}

/* The baselines' settings, each sweep a grid replayed whole, and the
 * fixed points: the references' defaults (keda's, the clairvoyant, the
 * bound), in the registry's order, then the references at the target
 * (clairvoyant:wait). */
static void baseline_space(struct tune_space *s, const int *fleet, int nfleet, int noffers, double wait_p95_s)
{
	for (int k = 0; sim_policies[k]; k++) {
		const struct sim_policy *p = sim_policies[k];
		struct tune_grid *g = NULL;
		size_t cell = 0;
		for (const struct sim_sweep *w = p->sweeps; w && w->family; w++) {
			if (!w->several_offers || noffers > 1)
				sweep_space(s, p, w, fleet, nfleet, &g, &cell);
		}
		if (!p->reference)
			continue;
		s->fixed[s->nfixed] = add(s, NULL, p->name, p->name, NULL);
		if (g)
			g->cells[cell] = s->fixed[s->nfixed];
		/* The waits the search aims at: a reference's that replays. */
		s->fixed_waits[s->nfixed++] = !p->offline;
	}
	for (int k = 0; sim_policies[k]; k++) {
		char spec[64];
		if (!sim_policies[k]->at_target)
			continue;
		/* Seconds to the millisecond the knob keeps; a target past the
		 * knob's "never" is never, one below none is none. Not a wait
		 * the search aims at: its p95 is within the target, where the
		 * search aims already. */
		snprintf(spec, sizeof spec, "%s=%.13g", sim_policies[k]->at_target,
			 fmax(0, fmin(wait_p95_s, KNOB_NEVER)));
		s->fixed[s->nfixed] = add(s, NULL, sim_policies[k]->at_target, spec, NULL);
		s->fixed_waits[s->nfixed++] = 0;
	}
}

static void space_free(struct tune_space *s)
{
	for (int g = 0; g < s->ngrids; g++)
		free(s->grids[g].cells);
	free(s->cands);
}

/* The cheapest ebb point within the wait, as a config fragment. */
static void recommend(struct tune *t, double wait_p95_s, size_t njobs)
{
	const struct tune_point *best = NULL;
	char idle[16], surplus[16];
	int n;

	for (size_t k = 0; k < t->n; k++) {
		const struct tune_point *p = &t->points[k];
		if (strcmp(p->family, "ebb") == 0 && p->wait_p95_s <= wait_p95_s && (!best || p->cost_usd < best->cost_usd)) {
			best = p;
			t->recommended = (int)k;
		}
	}
	if (!best)
		return;
	n = snprintf(t->fragment, sizeof t->fragment,
		     "# ebb tune: the cheapest of ebb's settings with a p95 wait of at most %.0f s,\n"
		     "# on a trace of %zu jobs. Paste into ebb.conf.\n"
		     "[scaler]\nidle_timeout = %s\nidle_surplus_timeout = %s\narrival_window = %ds\n",
		     wait_p95_s, njobs, idle_text(best->ebb.idle_timeout_s, idle, sizeof idle),
		     idle_text(best->ebb.surplus_s, surplus, sizeof surplus), best->ebb.arrival_window_s);
	if (best->ebb.warm)
		n += snprintf(t->fragment + n, sizeof t->fragment - (size_t)n, "warm = * * %d\n", best->ebb.warm);
	if (best->ebb.max_instances)
		n += snprintf(t->fragment + n, sizeof t->fragment - (size_t)n, "max_instances = %d\n",
			      best->ebb.max_instances);
	snprintf(t->fragment + n, sizeof t->fragment - (size_t)n, "\n[lane.standard]\nwait_target = %ds\n",
		 best->ebb.wait_target_s);
}

/* A point is on its family's frontier when no other point of the family
 * is at least as cheap and at least as quick, and better in one. */
static void mark_frontiers(struct tune *t)
{
	for (size_t a = 0; a < t->n; a++) {
		struct tune_point *p = &t->points[a];
		p->on_frontier = 1;
		for (size_t b = 0; b < t->n && p->on_frontier; b++) {
			const struct tune_point *q = &t->points[b];
			if (b == a || strcmp(p->family, q->family) != 0)
				continue;
			if (q->cost_usd <= p->cost_usd && q->wait_p95_s <= p->wait_p95_s &&
			    (q->cost_usd < p->cost_usd || q->wait_p95_s < p->wait_p95_s))
				p->on_frontier = 0;
		}
	}
}

/* The points replayed whole, in the grid's order, and the settings left out. */
static void assemble(struct tune *t, const struct tune_space *s)
{
	t->points = xcalloc(s->n ? s->n : 1, sizeof *t->points);
	t->grid = s->n;
	for (size_t k = 0; k < s->n; k++) {
		const struct tune_cand *c = &s->cands[k];
		if (c->state == CAND_DONE)
			t->points[t->n++] = c->pt;
		else if (c->state == CAND_PARTIAL && t->partial++ == 0)
			snprintf(t->partial_spec, sizeof t->partial_spec, "%s", c->pt.spec);
	}
}

int tune_run(const struct trace *tr, const struct sim_options *o, const char *config_path, double wait_p95_s,
	     const struct tune_options *to, struct tune *t, char *err, size_t errsize)
{
	struct tune_space s = {.n = 0};
	struct tune_job j = {tr, o, config_path, wait_p95_s, to, {.done = 0}, 0};
	int fleet[64], nfleet = fleet_sizes(tr, fleet), rc;

	memset(t, 0, sizeof *t);
	t->recommended = -1;
	t->wait_p95_s = wait_p95_s;
	t->oracle_durations = o->oracle_durations;
	ebb_space(&s, fleet, nfleet);
	baseline_space(&s, fleet, nfleet, o->noffers, wait_p95_s);
	j.progress.grid = s.n;
	j.start_s = tune_now_s();
	if (to->exhaustive) {
		size_t *all = xcalloc(s.n, sizeof *all);
		for (size_t k = 0; k < s.n; k++)
			all[k] = k;
		rc = tune_replay(&s, &j, all, s.n, err, errsize);
		free(all);
	} else if (tr->n >= (to->screen_jobs ? to->screen_jobs : TUNE_SCREEN_JOBS)) {
		rc = tune_screen(&s, &j, err, errsize);
	} else {
		rc = tune_search(&s, &j, err, errsize);
	}
	if (rc == 0) {
		assemble(t, &s);
		mark_frontiers(t);
		recommend(t, wait_p95_s, tr->n);
	}
	space_free(&s);
	return rc;
}

static int by_wait_then_cost(const void *a, const void *b)
{
	const struct tune_point *x = *(const struct tune_point *const *)a, *y = *(const struct tune_point *const *)b;

	if (x->wait_p95_s != y->wait_p95_s)
		return x->wait_p95_s < y->wait_p95_s ? -1 : 1;
	if (x->cost_usd != y->cost_usd)
		return x->cost_usd < y->cost_usd ? -1 : 1;
	return (x > y) - (x < y);
}

size_t tune_frontier(const struct tune *t, const char *family, const struct tune_point **out)
{
	size_t n = 0;

	for (size_t k = 0; k < t->n; k++) {
		if (t->points[k].on_frontier && strcmp(t->points[k].family, family) == 0)
			out[n++] = &t->points[k];
	}
	qsort(out, n, sizeof *out, by_wait_then_cost);
	return n;
}

/* Not a baseline: a family no policy's sweep makes (ebb's, and the
 * references that no policy can reach). */
static int reference(const char *family)
{
	for (int k = 0; sim_policies[k]; k++) {
		for (const struct sim_sweep *w = sim_policies[k]->sweeps; w && w->family; w++) {
			if (strcmp(w->family, family) == 0)
				return 0;
		}
	}
	return 1;
}

/* Which of the ratios' references the point is, by its policy's kind:
 * a baseline's defaults (it has sweeps), the bound (offline) or the
 * clairvoyant (neither), or the reference at the target; NULL if it is
 * none. */
static const struct tune_point **reference_of(const struct tune_point *p, struct tune_ratios *r)
{
	for (int k = 0; sim_policies[k]; k++) {
		const struct sim_policy *pol = sim_policies[k];
		if (pol->at_target && strcmp(p->family, pol->at_target) == 0)
			return &r->clairvoyant_wait;
		if (!pol->reference || strcmp(p->spec, pol->name) != 0)
			continue;
		return pol->sweeps ? &r->keda : pol->offline ? &r->bound : &r->clairvoyant;
	}
	return NULL;
}

/* The cheapest point of the family (or of every baseline, family NULL)
 * with a p95 wait of at most wait_s; NULL if none. */
static const struct tune_point *cheapest_within(const struct tune *t, const char *family, double wait_s)
{
	const struct tune_point *best = NULL;

	for (size_t k = 0; k < t->n; k++) {
		const struct tune_point *p = &t->points[k];
		if ((family ? strcmp(p->family, family) == 0 : !reference(p->family)) && p->wait_p95_s <= wait_s &&
		    (!best || p->cost_usd < best->cost_usd))
			best = p;
	}
	return best;
}

static struct tune_at at_wait(const struct tune *t, double wait_s)
{
	return (struct tune_at){wait_s, cheapest_within(t, "ebb", wait_s), cheapest_within(t, NULL, wait_s)};
}

void tune_ratios(const struct tune *t, double boot_s, struct tune_ratios *r)
{
	size_t len = 0;

	memset(r, 0, sizeof *r);
	for (size_t k = 0; k < t->n; k++) {
		const struct tune_point *p = &t->points[k], *ebb, **ref = reference_of(p, r);
		if (ref)
			*ref = p;
		if (reference(p->family))
			continue;
		ebb = cheapest_within(t, "ebb", p->wait_p95_s);
		if (!ebb || ebb->cost_usd > p->cost_usd + 1e-9) {
			r->below_frontier++;
			if (len < sizeof r->below)
				len += (size_t)snprintf(r->below + len, sizeof r->below - len, "%s%s", len ? ", " : "", p->spec);
		}
	}
	r->at_keda = at_wait(t, r->keda ? r->keda->wait_p95_s : 0);
	r->at_two_boots = at_wait(t, 2 * boot_s);
	r->at_target = at_wait(t, t->wait_p95_s);
	r->at_clairvoyant = at_wait(t, r->clairvoyant ? r->clairvoyant->wait_p95_s : 0);
}

int tune_gap_closed(const struct tune_ratios *r, double *share)
{
	const struct tune_at *a = &r->at_target;

	if (!a->ebb || !a->best || !r->clairvoyant_wait || !(r->clairvoyant_wait->cost_usd < a->best->cost_usd))
		return -1;
	*share = (a->best->cost_usd - a->ebb->cost_usd) / (a->best->cost_usd - r->clairvoyant_wait->cost_usd);
	return 0;
}

void tune_free(struct tune *t)
{
	free(t->points);
	memset(t, 0, sizeof *t);
}
