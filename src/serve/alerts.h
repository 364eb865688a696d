/* serve's alerts (docs/ALERTS.md): the rules of alert_rules.h evaluated on
 * serve's loop, their alerts pending, firing and resolved, told to the log
 * and to the webhooks, and kept in the store so that a restart finds them
 * as they were.
 *
 * An evaluation runs when a batch changed a job or an instance, when the
 * store failed, at the earliest time a rule named (an idle instance
 * crossing its threshold, a window passing) and at the earliest end of a
 * pending alert's `for`; never on a period. Events closer together than
 * ALERTS_GAP_MS share one evaluation. Each runs in a batch step of its own
 * and writes only the alerts that changed.
 *
 * A condition that holds makes an alert pending, from the time it began
 * to hold when the rule knows it (else from now); it fires once pending
 * for its rule's `for`, and resolves when its condition no longer holds.
 * A pending alert whose condition ends is dropped without a word. The
 * rules that could not look (a store error) leave their alerts as they
 * were. Each evaluation that fires or resolves an alert of a rule sends
 * one notification for that rule: its alerts firing and those just
 * resolved, in Alertmanager's format (alert_payload.h), to every webhook.
 * A restart does not announce again what was firing before it. */
#ifndef EBB_ALERTS_H
#define EBB_ALERTS_H

#include <event2/event.h>
#include <jansson.h>

#include "serve/alert_rules.h"
#include "serve/batch.h"
#include "serve/webhook.h"

#define ALERTS_GAP_MS 1000

struct alerts;

struct alerts_env {
	const struct config *cfg;
	const struct clock *clock;
	struct event_base *base;
	struct store *store;
	struct batch *batch;
	const struct ledger *ledger; /* the prices */
	struct webhooks *webhooks;
	const char *external_url; /* where serve is reached, for the notifications' links */
};

/* Loads the alerts kept and evaluates soon; NULL when out of memory.
 * following: another serve on the same store evaluates them (docs/HA.md):
 * this one shows them as the store keeps them, until alerts_lead(). */
struct alerts *alerts_new(const struct alerts_env *env, int following);
/* This serve evaluates them from now on. */
void alerts_lead(struct alerts *a);
/* A following serve reads them again from the store, before it shows
 * them. */
void alerts_refresh(struct alerts *a);
void alerts_free(struct alerts *a);
/* Evaluate soon: for what no store change shows (the test clock moved). */
void alerts_wake(struct alerts *a);
/* GET /v1/alerts: the alerts pending and firing, and the rules. */
json_t *alerts_json(const struct alerts *a);
/* The alerts of rule r firing now. */
int alerts_firing(const struct alerts *a, enum alert_rule r);

#endif
