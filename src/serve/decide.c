/* See decide.h. */
#include "serve/decide.h"

#include <stdlib.h>
#include <string.h>

#include "common/mem.h"
#include "policy/classes.h"
#include "policy/settings.h"
#include "serve/estimates.h"

struct gaps {
	int64_t prev, v[PLAN_IDLE_GAPS];
	size_t n;
};

static int add_gap(void *arg, int64_t ms)
{
	struct gaps *g = arg;

	/* Newest first: each gap is the previous (later) time minus this one. */
	if (g->prev && g->n < PLAN_IDLE_GAPS)
		g->v[g->n++] = g->prev - ms;
	g->prev = ms;
	return 0;
}

void decide_setups(const struct workers *w, const struct plan_settings *s, int64_t *out_ms)
{
	if (w) {
		workers_setups(w, s->types, s->ntypes, out_ms);
		return;
	}
	for (size_t k = 0; k < s->ntypes; k++)
		out_ms[k] = -1;
}

int decide_idle_timeouts(struct store *st, const struct plan_settings *s, const int64_t *setups,
			 const struct offer *offers, int noffers, int64_t *out_ms, int64_t *surplus_ms,
			 char (*why)[PLAN_IDLE_WHY], char *error, size_t error_size)
{
	int64_t setup_ms = classes_longest_setup_ms(s, setups);
	struct gaps *g;

	/* Fixed timeouts need no gaps: no read. */
	if (s->idle_timeout.ms != CONF_AUTO && s->idle_surplus_ms != CONF_AUTO) {
		plan_idle_timeouts(s, offers, noffers, setup_ms, NULL, 0, out_ms, surplus_ms, why);
		return 0;
	}
	if (!(g = mem_calloc(1, sizeof *g)) || store_recent_submits(st, PLAN_IDLE_GAPS + 1, add_gap, g) != 0) {
		snprintf(error, error_size, "%s", g ? store_error(st) : "out of memory");
		free(g);
		return -1;
	}
	plan_idle_timeouts(s, offers, noffers, setup_ms, g->v, g->n, out_ms, surplus_ms, why);
	free(g);
	return 0;
}

int decide_now(const struct decide_env *e, int64_t now_ms, struct decision_now *d)
{
	struct plan_view pv;

	memset(d, 0, sizeof *d);
	d->noffers = e->noffers;
	if (e->measured) {
		if (estimates_in_force(e->store, e->settings, e->configured, e->noffers, now_ms, d->offers) != 0) {
			snprintf(d->error, sizeof d->error, "%s", store_error(e->store));
			return -1;
		}
	} else {
		memcpy(d->offers, e->configured, (size_t)e->noffers * sizeof *d->offers);
	}
	decide_setups(e->workers, e->settings, d->setups);
	if (decide_idle_timeouts(e->store, e->settings, d->setups, d->offers, d->noffers, d->idle_timeout_ms,
				 d->idle_surplus_ms, NULL, d->error, sizeof d->error) != 0)
		return -1;
	if (view_build(&d->view, e->store, e->settings, d->setups, now_ms, d->offers, d->noffers, e->preempts) != 0) {
		snprintf(d->error, sizeof d->error, "%s", d->view.error);
		return -1;
	}
	if (!(d->result = mem_alloc(sizeof *d->result))) {
		snprintf(d->error, sizeof d->error, "out of memory for %zu bytes", sizeof *d->result);
		return -1;
	}
	pv = (struct plan_view){
		.now_ms = now_ms,
		.settings = e->settings,
		.idle_timeout_ms = d->idle_timeout_ms,
		.idle_surplus_ms = d->idle_surplus_ms,
		.classes = d->view.classes,
		.nclasses = d->view.nclasses,
		.fleet = d->view.fleet,
		.nfleet = d->view.nfleet,
		.offers = d->offers,
		.noffers = d->noffers,
		.over_budget = d->view.over_budget,
		.work_per_launch_s = d->view.work_per_launch_s,
		.packs = 1,
		.leave_grace_ms = PLAN_LEAVE_GRACE_MS,
	};
	plan(&pv, d->result);
	if (d->result->nomem) {
		snprintf(d->error, sizeof d->error, "out of memory planning for %d instances", d->view.nfleet);
		return -1;
	}
	return 0;
}

void decision_now_free(struct decision_now *d)
{
	free(d->result);
	view_free(&d->view);
	d->result = NULL;
}
