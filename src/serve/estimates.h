/* The offers in force: the catalogue as configured, with what ebb has
 * measured of each offer replacing what was declared once there is
 * evidence. Speed after ESTIMATE_MIN_SAMPLES timed runs, boot after as
 * many boots (both markets pooled: they are the machine's, whatever it is
 * billed at); the reclaim rate blends the declared one (as one hour of
 * evidence) with the hours observed. A market whose last launch found no
 * capacity rests for [scaler] capacity_rest; an offer whose launches fail
 * otherwise (a broken setup) rests on both markets, for [scaler] interval
 * after the first failure, doubling with each one after, at most
 * ESTIMATE_BACKOFF_MAX_MS, until a launch works. */
#ifndef EBB_ESTIMATES_H
#define EBB_ESTIMATES_H

#include "common/offer.h"
#include "policy/plan.h"
#include "store/store.h"

#define ESTIMATE_MIN_SAMPLES 3
#define ESTIMATE_BACKOFF_MAX_MS (30 * 60 * 1000)

/* out[0..n) from configured[0..n) and the store's statistics at now_ms:
 * 0, or -1 on a store error (out then holds the configured figures). */
int estimates_in_force(struct store *st, const struct plan_settings *s, const struct offer *configured, int n,
		       int64_t now_ms, struct offer *out) STORE_CHECK;

#endif
