/* The queue's deadline timer: one timer in the loop, armed for the
 * earliest run_at of a delayed job or end of a lease, at which it
 * promotes the delayed jobs that are due and expires the leases that ran
 * out. Re-armed after every commit; with no deadline, nothing is armed and
 * an idle serve sleeps. */
#ifndef EBB_DEADLINE_H
#define EBB_DEADLINE_H

#include <event2/event.h>

#include "serve/batch.h"
#include "serve/queue.h"

struct deadline;

struct deadline *deadline_new(struct event_base *base, struct batch *b, struct queue *q);
void deadline_free(struct deadline *d);
/* Handles what is due now (at start: what fell due while serve was down). */
void deadline_run(struct deadline *d);
/* Arms the timer for the next deadline as the store has it now: one
 * another serve set, too. */
void deadline_rearm(struct deadline *d);

#endif
