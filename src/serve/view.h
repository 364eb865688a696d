/* plan()'s view of serve: built from the store for each run of the
 * scaler. The queued work by class (GPUs, VRAM, lane) with its estimated
 * run time, the recent arrival rate per class, and the fleet, each
 * instance with the estimated end of the job it runs. Estimates come from
 * est_s when a job has one, else from the median run time of recent jobs
 * of its type, else [scaler] default_est (policy/durations.h, which the
 * simulator's replay of ebb uses too); each class's lane rank and wait
 * target come from the settings (policy/settings.h). */
#ifndef EBB_VIEW_H
#define EBB_VIEW_H

#include "policy/plan.h"
#include "serve/preempt.h"
#include "store/store.h"

struct medians;

struct view {
	struct plan_class *classes;
	int nclasses;
	struct plan_instance *fleet;
	struct instance *records; /* the fleet's records, in the same order */
	int nfleet;
	struct medians *med;
	const struct plan_settings *settings;
	const int64_t *setups;      /* view_build()'s */
	const struct offer *offers; /* the offers in force */
	int noffers;
	uint64_t over_budget; /* bit t: team t spent its monthly budget */
	double work_per_launch_s; /* plan_view's: from the offers' statistics */
	char error[600]; /* why view_build failed */
};

/* Reads everything plan() looks at (but the offers and the settings) from
 * the store: 0, or -1 with the reason in v->error (a store error, or
 * memory). Free it with view_free(), whatever it returned. */
/* setups: the handlers' measured setups, for each of the settings' types
 * (NULL: none; policy/classes.h); preempts: the jobs asked to stop
 * already (NULL: none). */
int view_build(struct view *v, struct store *st, const struct plan_settings *settings, const int64_t *setups,
	       int64_t now_ms, const struct offer *offers, int noffers, const struct preempts *preempts) STORE_CHECK;
void view_free(struct view *v);

#endif
