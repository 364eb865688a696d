/* The fleet against the provider's list, at the start of each scaler run:
 * an instance ebb knows that the provider no longer has is gone (the job
 * it ran is queued again); one whose launch ebb asked for but whose answer
 * never came (serve was killed meanwhile) is adopted from the list, or,
 * when the list lacks it, ended as a launch that failed; one
 * the provider has that ebb does not know, or knows as terminated, is a
 * leak, and is terminated. docs/PROVIDERS.md says what a list holds. */
#ifndef EBB_RECONCILE_H
#define EBB_RECONCILE_H

#include "provider/provider.h"
#include "serve/fleet.h"
#include "serve/queue.h"

/* How long an instance ebb ended may still be listed before it is a leak. */
#define RECONCILE_GRACE_MS 60000

struct reconcile {
	struct store *store;
	struct fleet *fleet;
	struct queue *queue;
	struct provider *provider;
	const struct clock *clock;
	/* When this serve started: no answer is coming to a launch asked
	 * for before. */
	int64_t started_ms;
	/* Nothing is marked gone (a launch came back while the list was
	 * under way: the list may miss it). */
	int keep_all;
};

/* Inside a batch: 0, or -1 on a store error. done(arg, ...) gets the
 * answer of each termination of a leak. */
int reconcile_run(const struct reconcile *r, const struct provider_item *items, int n, terminate_cb done,
		  void *arg) STORE_CHECK;

#endif
