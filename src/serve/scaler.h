/* The scaler in serve: reconciles the fleet with the provider, builds
 * plan()'s view from the store, runs plan() and carries out its actions.
 * It runs when something changed (at most once per [scaler] interval) and
 * at the time plan() asks for; an idle system does not wake it. */
#ifndef EBB_SCALER_H
#define EBB_SCALER_H

#include "provider/provider.h"
#include "serve/server.h"

struct scaler;

struct scaler *scaler_new(struct server *s, struct provider *p);
void scaler_free(struct scaler *sc);
/* Something changed (a submit, a finished job, an exited worker). */
void scaler_poke(struct scaler *sc);
/* The idle timeout in force and why (fixed, or auto from the gaps). */
int64_t scaler_idle_timeout(struct scaler *sc, char *why, size_t why_size);
/* Samples (timed runs, boots; both markets pooled) after which a measured
 * speed or boot replaces the declared one. */
#define SCALER_MIN_SAMPLES 3
/* The idle timeout a worker should hold itself to now, as of the last
 * decision: 0 (none) while the warm floor is above zero. */
int64_t scaler_worker_idle_timeout(const struct scaler *sc);
/* Re-reads what was measured of the offers (speed, boot, reclaims). */
void scaler_estimates(struct scaler *sc);
/* The offers the scaler chooses from, with the estimates in force. */
const struct offer *scaler_offers(const struct scaler *sc, int *n);

#endif
