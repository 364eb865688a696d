/* The HTTP API under /v1: routing, bearer tokens, and the handlers, which
 * live in api_jobs.c (clients), api_worker.c (workers), api_fleet.c (the
 * fleet), api_report.c (costs) and api_metrics.c (/metrics), sharing
 * api_internal.h. docs/API.md is its reference. Every request runs as one
 * step of the batch (batch.h): its writes are kept only if it succeeds,
 * and its reply leaves once the batch is committed. */
#ifndef EBB_API_H
#define EBB_API_H

#include "common/error.h"
#include "common/jsonin.h"
#include "serve/batch.h"
#include "serve/fleet.h"
#include "serve/httpd.h"
#include "serve/jobwait.h"
#include "serve/slices.h"
#include "serve/longpoll.h"
#include "serve/watch.h"
#include "serve/metrics.h"
#include "serve/queue.h"
#include "serve/snapshot.h"

struct scaler;
struct provider;
struct alerts;
struct history;
struct plan_settings;

/* What the handlers reach: serve's parts, given by the wiring. */
struct api {
	const struct config *cfg;
	char serve_id[300]; /* [server] name, or HOST:PID: which serve answered */
	int leads; /* runs the scaler; 0: another serve on the same store does */
	struct clock *clock;
	int test_clock; /* POST /v1/admin/clock may move the clock */
	int64_t started_ms;
	struct store *store;
	struct batch *batch;
	struct queue *queue;
	struct fleet *fleet;
	struct longpoll *longpoll;
	struct watch *watch;
	struct jobwait *logwait; /* log reads that wait for lines */
	struct jobwait *endwait; /* job reads that wait for the job's end */
	struct slices *slices;   /* requests that walk history a slice a turn */
	struct scaler *scaler;     /* NULL: [provider] kind = none */
	struct provider *provider; /* NULL: [provider] kind = none */
	const struct offer *offers; /* the catalogue as configured */
	int noffers;
	const struct plan_settings *settings; /* plan()'s, from the config */
	struct serve_metrics *metrics;
	struct alerts *alerts;
	struct history *history; /* the dashboard's chart */
	struct workers *workers; /* those heard from (GET /v1/workers) */
	struct snapshot_env snap; /* what GET /metrics and the dashboard read */
};

/* Entry point for every complete request. */
void api_handle(struct api *api, struct request *req);
/* logwait's try for a log read that waits (api_logs.c); ctx: the api. */
int api_logs_try(void *ctx, struct request *req, const void *query, int last);
/* endwait's try for a job read that waits for its end (api_jobs.c). */
int api_job_end_try(void *ctx, struct request *req, const void *query, int last);

#endif
