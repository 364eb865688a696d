/* The batch: what every event of serve (an HTTP request, the queue's
 * deadline, the scaler, a provider's answer) writes, made durable in one
 * commit before any reply it produced leaves.
 *
 * An event source calls batch_begin() before it writes and batch_end()
 * after, which brackets its writes in a savepoint of the open batch (a
 * failed step leaves no trace); then batch_flush(), which commits and
 * sends the replies (httpd.h). Before each commit the batch runs its
 * precommit subscribers inside the transaction (longpoll hands queued
 * jobs to waiting workers there); after each commit, its commit
 * subscribers, told whether the batch changed a job or an instance (the
 * deadline timer re-arms, the scaler wakes on a change); after a batch
 * that failed, its failure subscribers (the alerts count store errors).
 * Subscribers are how a module learns that state changed: nobody calls
 * them directly. */
#ifndef EBB_BATCH_H
#define EBB_BATCH_H

#include "serve/httpd.h"
#include "store/store.h"

struct batch;

struct batch *batch_new(struct store *st);
void batch_free(struct batch *b);
/* Replies leave through h: batch_flush() flushes it. */
void batch_set_httpd(struct batch *b, struct httpd *h);
/* httpd's commit hook (ctx: the batch): precommit subscribers, then the
 * commit; nonzero when it failed and was rolled back, with what the
 * replies say in err (store_failure(): 507 when the disk is full). */
int batch_commit(void *b, struct ebb_error *err);

/* Opens the batch if needed and a savepoint for one step: 0, or -1 with
 * the store's reason (store_error()). */
int batch_begin(struct batch *b) STORE_CHECK;
/* Releases (ok) or rolls back the step's savepoint. */
void batch_end(struct batch *b, int ok);
/* Commits and sends every reply made since the last flush. */
void batch_flush(struct batch *b);

/* fn(arg) before every commit, inside the batch; nonzero fails the batch. */
void batch_on_precommit(struct batch *b, int (*fn)(void *arg), void *arg);
/* fn(arg, changed) after every commit; changed: a job or an instance was
 * written since the last one. */
void batch_on_commit(struct batch *b, void (*fn)(void *arg, int changed), void *arg);
/* fn(arg) after every batch that failed and was rolled back. */
void batch_on_failure(struct batch *b, void (*fn)(void *arg), void *arg);

#endif
