/* The sweep behind `ebb tune` (see tune.h). */
#include "tune.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ebb's knobs: how long work may wait before capacity is added, how long
 * the last idle instance stays, and how fast the others go. */
static const int wait_targets_s[] = {10, 30, 60, 120, 300, 600};
static const int idle_timeouts_s[] = {60, 300, 600, 1200};
static const int surplus_s[] = {0, 60};

static const char *const baseline_specs[] = {
	"min1:idle=60", "min1:idle=300", "min1:idle=600", "min1:idle=1800",
	"util:up=0.9,down=0.3,window=60", "util:up=0.8,down=0.2,window=300", "util:up=0.6,down=0.1,window=300",
	"keda", "keda:cooldown=60,stabilize=0", "keda:cooldown=60,stabilize=60", "keda:cooldown=900,stabilize=300",
	"bound",
};

static int add_point(struct tune *t, const char *spec, const struct trace *tr, const struct sim_options *o,
		     const char *config_path, char *err, size_t errsize)
{
	struct tune_point *pt;
	struct sim_result r;
	struct policy p;

	if (policy_parse(spec, NULL, config_path, &p, err, errsize) != 0)
		return -1;
	sim_run(tr, &p, o, &r);
	policy_free(&p);
	t->points = realloc(t->points, (t->n + 1) * sizeof *t->points);
	pt = &t->points[t->n++];
	memset(pt, 0, sizeof *pt);
	snprintf(pt->spec, sizeof pt->spec, "%s", spec);
	snprintf(pt->family, sizeof pt->family, "%.*s", (int)strcspn(spec, ":"), spec);
	pt->cost_usd = r.cost_usd;
	pt->wait_p95_s = r.wait_p95_s;
	sim_result_free(&r);
	return 0;
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

static void write_fragment(struct tune *t, int wt, int it, int sp, const struct trace *tr)
{
	snprintf(t->fragment, sizeof t->fragment,
		 "# ebb tune: the cheapest of ebb's settings with a p95 wait within the target,\n"
		 "# on a trace of %zu jobs. Paste into ebb.conf.\n"
		 "[scaler]\nidle_timeout = %ds\nidle_surplus_timeout = %ds\n\n"
		 "[lane.standard]\nwait_target = %ds\n", tr->n, it, sp, wt);
}

int tune_run(const struct trace *tr, const struct sim_options *o, const char *config_path,
	     double wait_p95_s, struct tune *t, char *err, size_t errsize)
{
	char spec[256];
	double best = -1;

	memset(t, 0, sizeof *t);
	t->recommended = -1;
	for (size_t a = 0; a < sizeof wait_targets_s / sizeof *wait_targets_s; a++) {
		for (size_t b = 0; b < sizeof idle_timeouts_s / sizeof *idle_timeouts_s; b++) {
			for (size_t c = 0; c < sizeof surplus_s / sizeof *surplus_s; c++) {
				snprintf(spec, sizeof spec,
					 "ebb:lane.standard.wait_target=%ds,scaler.idle_timeout=%ds,"
					 "scaler.idle_surplus_timeout=%ds",
					 wait_targets_s[a], idle_timeouts_s[b], surplus_s[c]);
				if (add_point(t, spec, tr, o, config_path, err, errsize) != 0)
					return -1;
				if (t->points[t->n - 1].wait_p95_s <= wait_p95_s &&
				    (best < 0 || t->points[t->n - 1].cost_usd < best)) {
					best = t->points[t->n - 1].cost_usd;
					t->recommended = (int)t->n - 1;
					write_fragment(t, wait_targets_s[a], idle_timeouts_s[b], surplus_s[c], tr);
				}
			}
		}
	}
	for (int64_t n = 1, peak = sim_peak_concurrency(tr); n <= peak; n = n < 4 ? n + 1 : n * 2) {
		snprintf(spec, sizeof spec, "always-on:n=%lld", (long long)n);
		if (add_point(t, spec, tr, o, config_path, err, errsize) != 0)
			return -1;
	}
	for (size_t k = 0; k < sizeof baseline_specs / sizeof *baseline_specs; k++) {
		if (add_point(t, baseline_specs[k], tr, o, config_path, err, errsize) != 0)
			return -1;
	}
	mark_frontiers(t);
	return 0;
}

void tune_free(struct tune *t)
{
	free(t->points);
	memset(t, 0, sizeof *t);
}
