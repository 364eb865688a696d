/* plan() on what the store holds now, as the scaler sees it: the offers in
 * force (the configured ones, with what was measured of them when a
 * provider launches them: estimates.h), the idle timeout in force (fixed,
 * or chosen from the gaps between submissions), and the view (view.h).
 * The scaler carries out what plan() decides (scaler.c); GET /v1/scale
 * only reports it, for KEDA (api_scale.c). */
#ifndef EBB_DECIDE_H
#define EBB_DECIDE_H

#include "policy/plan.h"
#include "policy/settings.h"
#include "serve/view.h"
#include "serve/workers.h"
#include "store/store.h"

struct decide_env {
	struct store *store;
	const struct plan_settings *settings;
	const struct offer *configured; /* the catalogue as configured */
	int noffers;
	int measured; /* a provider launches the offers: what was measured of them counts */
	const struct preempts *preempts; /* the jobs asked to stop already */
	const struct workers *workers;   /* their handlers' setups count; NULL: the config's */
};

/* What plan() decided, and what it decided on. */
struct decision_now {
	struct view view;
	struct offer offers[64]; /* in force */
	int noffers;
	int64_t idle_timeout_ms[64]; /* in force, for each offer */
	int64_t idle_surplus_ms[64]; /* the same for idle_surplus_timeout */
	int64_t setups[CONF_MAX_TYPES]; /* decide_setups(), for each [type.NAME] */
	struct plan_result *result;
	char error[600]; /* why decide_now failed */
};

/* The resident handlers' setups to count, for each of s's types
 * (classes_setup_ms()'s measured): what w's workers measured, -1 where
 * none did; w NULL: all -1. */
void decide_setups(const struct workers *w, const struct plan_settings *s, int64_t *out_ms);
/* The idle and surplus timeouts in force for each of the offers (in
 * force: their boots, and the longest of the setups, count;
 * plan_idle_timeouts()) and, unless why is NULL, why: 0, or -1 on a store
 * error (in error). */
int decide_idle_timeouts(struct store *st, const struct plan_settings *s, const int64_t *setups,
			 const struct offer *offers, int noffers, int64_t *out_ms, int64_t *surplus_ms,
			 char (*why)[PLAN_IDLE_WHY], char *error, size_t error_size) STORE_CHECK;
/* Plans at now_ms into d: 0, or -1 with the reason in d->error (a store
 * error, or memory). Free d with decision_now_free(), whatever it
 * returned. */
int decide_now(const struct decide_env *e, int64_t now_ms, struct decision_now *d) STORE_CHECK;
void decision_now_free(struct decision_now *d);

#endif
