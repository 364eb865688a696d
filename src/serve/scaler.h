/* The scaler in serve: reconciles the fleet with the provider, builds
 * plan()'s view from the store, runs plan() and carries out its actions.
 *
 * It wakes when a committed batch changed a job or an instance (it
 * subscribes to the batch: no handler calls it), at most once per
 * [scaler] interval, and at the time plan() asks for; an idle system does
 * not wake it. A run first asks the provider for its list (asynchronous),
 * and plans when the list comes back; a launch's or a termination's
 * answer comes back later still, each in a batch of its own. */
#ifndef EBB_SCALER_H
#define EBB_SCALER_H

#include <event2/event.h>

#include "policy/settings.h"
#include "provider/provider.h"
#include "serve/batch.h"
#include "serve/fleet.h"
#include "serve/metrics.h"
#include "serve/queue.h"

struct scaler;

struct scaler_env {
	const struct config *cfg;
	const struct clock *clock;
	struct event_base *base;
	struct store *store;
	struct batch *batch;
	struct queue *queue;
	struct fleet *fleet;
	struct provider *provider;
	const struct offer *offers; /* the catalogue as configured */
	int noffers;
	struct histogram *run_seconds; /* each run's time; NULL: not measured */
	const struct workers *workers; /* their handlers' setups count (decide.h) */
};

/* Adopts the live instances a previous serve left, and plans soon. */
struct scaler *scaler_new(const struct scaler_env *env);
void scaler_free(struct scaler *sc);
/* Plan again soon: for what no store change shows (the test clock moved,
 * a worker process exited). */
void scaler_wake(struct scaler *sc);
/* The offers in force (scaler_offers()), and the idle and surplus
 * timeouts in force for each and why (fixed, or auto from the gaps): 0,
 * or -1 on a store error (in error). */
int scaler_idle_timeouts(struct scaler *sc, const struct offer **offers, int *n, int64_t *out_ms,
			 int64_t *surplus_ms, char (*why)[PLAN_IDLE_WHY], char *error, size_t error_size);
/* The idle timeout a worker should hold itself to now, as of the last
 * decision: the longest of the offers' (the scaler releases each instance
 * at its own offer's; the worker's is the backstop), 0 (none) while the
 * warm floor is above zero. */
int64_t scaler_worker_idle_timeout(const struct scaler *sc);
/* The offers the scaler chooses from, with the estimates in force now:
 * 0, or -1 on a store error (the configured figures then). */
int scaler_offers(struct scaler *sc, const struct offer **out, int *n);

#endif
