/* The `ebb serve` process: one context owning the loop, the store, the
 * queue and the HTTP server, passed explicitly to every handler. */
#ifndef EBB_SERVER_H
#define EBB_SERVER_H

#include <event2/event.h>

#include "common/clock.h"
#include "common/config.h"
#include "serve/httpd.h"
#include "serve/metrics.h"
#include "common/offer.h"
#include "serve/queue.h"
#include "store/store.h"

struct waiter;
struct scaler;
struct provider;

struct server {
	const struct config *cfg;
	struct clock clock;
	int test_clock; /* POST /v1/admin/clock may move the clock */
	struct store *store;
	struct queue queue;
	struct event_base *base;
	struct httpd *httpd;
	struct event *deadline;
	struct event *signals[2];
	/* Lease requests waiting for a job, oldest first. */
	struct waiter *waiters_head, *waiters_tail;
	/* The catalogue as configured; the scaler applies what it measured. */
	struct offer offers[64];
	int noffers;
	struct provider *provider; /* NULL: [provider] kind = none */
	struct scaler *scaler;
	uint64_t changes_seen;     /* queue.changes at the last scaler poke */
	int in_batch;     /* a store transaction is open */
	int64_t started_ms;
	/* Lease latency and replies by status, for GET /metrics: in memory
	 * only, from zero at every start. */
	struct serve_metrics metrics;
};

struct server_options {
	const char *config_path; /* NULL: defaults */
	int test_clock;
};

/* The configured offer named name, or NULL. */
const struct offer *server_offer(const struct server *s, const char *name);

/* Runs until SIGTERM or SIGINT; returns the process exit code. */
int server_run(const struct config *cfg, const struct server_options *o);

/* Opens the request's savepoint in the current batch. */
int server_begin_request(struct server *s);
/* Releases (ok) or rolls back the request's savepoint. */
void server_end_request(struct server *s, int ok);

#endif
