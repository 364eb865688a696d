/* The scaler's provider calls, held until the batch that records them
 * commits (a transactional outbox). A launch made before its instance's
 * record is durable would, if the commit then failed (a full disk), start
 * an instance no record knows, and the next launch would take its id
 * again: two workers as one instance, each leasing as it, one job run
 * twice at once (found by the soak, docs/RELIABILITY.md). A terminate
 * sent before the record says terminated would stop an instance the
 * store still counts as up. So each waits for the commit: sent after it,
 * from the event loop (a provider may answer at once, and an answer opens
 * a batch of its own); dropped when the batch fails or the step that
 * queued it is rolled back, and the next run decides again. A crash
 * between the commit and the call leaves a record the boot timeout ends,
 * never an instance ebb does not know. */
#ifndef EBB_OUTBOX_H
#define EBB_OUTBOX_H

#include <event2/event.h>
#include <stddef.h>

#include "provider/provider.h"
#include "serve/batch.h"

struct outbox;

/* Calls go to p; their answers to launched() and terminated() with arg. */
struct outbox *outbox_new(struct event_base *base, struct batch *b, struct provider *p, launch_cb launched,
			  terminate_cb terminated, void *arg);
void outbox_free(struct outbox *o);

/* Queue a launch (with the instance's own worker token, if it has one) or
 * a terminate (data: what the provider wanted back, or NULL): 0, or -1
 * out of memory. */
int outbox_launch(struct outbox *o, const struct instance *inst);
int outbox_terminate(struct outbox *o, const struct instance *inst, const char *data);

/* How many calls are queued; outbox_drop(o, mark) drops those queued
 * after it, for a step that was rolled back. */
size_t outbox_mark(const struct outbox *o);
void outbox_drop(struct outbox *o, size_t mark);

#endif
