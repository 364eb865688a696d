/* Requests answered over several turns of serve's loop: what walks
 * history (a report over a year of the ledger) takes a slice at each
 * turn, so that no turn holds serve's only thread for long, and the
 * requests that came meanwhile are served between slices
 * (docs/ARCHITECTURE.md, "One thread, one loop"). Each slice runs in the
 * batch of its turn, as any event's writes and reads do. */
#ifndef EBB_SLICES_H
#define EBB_SLICES_H

#include <event2/event.h>

#include "serve/batch.h"
#include "serve/httpd.h"

struct slices;

/* The next slice of the work state does for req: 1 once it has answered,
 * 0 to go on at the next turn. last: serve stops, or the client went
 * away: answer now (or not at all) and end. */
typedef int (*slice_step)(void *state, struct request *req, int last);

struct slices *slices_new(struct event_base *base, struct batch *b);
void slices_free(struct slices *s);
/* Parks req: step(state, ...) at each turn until it answers;
 * free_state(state) once the request is gone. 0, or -1 when out of
 * memory (nothing parked, state still the caller's). */
int slices_park(struct slices *s, struct request *req, slice_step step, void (*free_state)(void *), void *state);
/* serve stops: every parked request's last step now, and any later one's
 * at once. */
void slices_release_all(struct slices *s);

#endif
