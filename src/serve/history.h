/* The last hours of the queue and the fleet, for the dashboard's chart: a
 * sample a minute (jobs queued, jobs leased, live instances) in a ring in
 * serve's memory, HISTORY_SAMPLES long. It starts with serve: a restart
 * begins a new history.
 *
 * A sample is taken when a committed batch changed a job or an instance
 * and none was taken this minute, and each minute after while anything
 * is queued, leased or live; once all of it is zero, one zero sample ends
 * the stretch and no timer is armed, so an idle serve stays asleep. */
#ifndef EBB_HISTORY_H
#define EBB_HISTORY_H

#include <event2/event.h>
#include <jansson.h>

#include "common/clock.h"
#include "serve/batch.h"

#define HISTORY_SAMPLES 360
#define HISTORY_STEP_MS (60 * 1000)

struct history;

struct history *history_new(struct event_base *base, const struct clock *clock, struct store *st, struct batch *b);
void history_free(struct history *h);
/* {"step_s": 60, "samples": [[time, queued, leased, instances], ...]},
 * oldest first. */
json_t *history_json(const struct history *h);

#endif
