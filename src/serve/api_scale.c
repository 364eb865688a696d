/* GET /v1/scale: ebb's decision as numbers, for an autoscaler that only
 * reads numbers (KEDA's metrics-api trigger, docs/KUBERNETES.md): plan()
 * run now on what the store holds (decide.h), as the scaler would run it,
 * and the fleet it would leave, per offer and market; per lane, the jobs
 * its workers run and what plan() launches for its queue; the queue.
 *
 * Workers ebb did not launch (pods a Deployment runs) are no instances in
 * its store: the jobs they run count as one busy worker each, so that the
 * number keeps them as well as what is to launch. */
#include <stdlib.h>
#include <string.h>

#include "serve/api_internal.h"
#include "common/mem.h"
#include "serve/decide.h"
#include "serve/snapshot.h"

struct desired {
	int64_t serving[64][MARKET_COUNT]; /* per offer in force: up, booting or idle, after plan() */
	int64_t launch[64];
	int64_t busy; /* instances of the fleet running a job */
};

/* The fleet plan() leaves: the instances that take jobs, plus its
 * launches, less the ones it terminates or drains. */
static void tally(const struct decision_now *d, struct desired *w)
{
	for (int k = 0; k < d->view.nfleet; k++) {
		const struct plan_instance *i = &d->view.fleet[k];
		if (i->state != INST_TERMINATED && i->state != INST_DRAINING)
			w->serving[i->offer][i->market]++;
		w->busy += i->running;
	}
	for (int k = 0; k < d->result->n; k++) {
		const struct action *a = &d->result->actions[k];
		const struct plan_instance *i = NULL;
		for (int j = 0; j < d->view.nfleet && a->kind != ACTION_LAUNCH; j++) {
			if (d->view.fleet[j].id == a->instance)
				i = &d->view.fleet[j];
		}
		if (a->kind == ACTION_LAUNCH) {
			w->serving[a->offer][a->market] += a->count;
			w->launch[a->offer] += a->count;
		} else if (i && i->state != INST_DRAINING && a->kind != ACTION_PREEMPT) {
			w->serving[i->offer][i->market]--;
		}
	}
}

static int64_t launched_for(const struct decision_now *d, const char *lane)
{
	int64_t n = 0;

	for (int k = 0; k < d->result->n; k++) {
		const struct action *a = &d->result->actions[k];
		if (a->kind == ACTION_LAUNCH && a->lane && strcmp(a->lane, lane) == 0)
			n += a->count;
	}
	return n;
}

static double wait_s(const struct snapshot *x, int64_t oldest_ms)
{
	return oldest_ms && x->now_ms > oldest_ms ? (double)(x->now_ms - oldest_ms) / 1000.0 : 0;
}

static json_t *reply(const struct decision_now *d, const struct desired *w, const struct snapshot *x)
{
	json_t *offers = json_object(), *lanes = json_object();
	int64_t total = 0, queued = 0, leased = 0, oldest = 0, unmanaged;

	for (int k = 0; k < d->noffers; k++) {
		int64_t od = w->serving[k][MARKET_ONDEMAND], spot = w->serving[k][MARKET_SPOT];
		total += od + spot;
		json_object_set_new(offers, d->offers[k].name,
				    json_pack("{s:I, s:I, s:I, s:I}", "instances", (json_int_t)(od + spot), "on-demand",
					      (json_int_t)od, "spot", (json_int_t)spot, "launch", (json_int_t)w->launch[k]));
	}
	for (int i = 0; i < x->nlanes; i++) {
		const struct snap_lane *l = &x->lanes[i];
		int64_t launch = launched_for(d, l->name);
		queued += l->n[JOB_QUEUED];
		leased += l->n[JOB_LEASED];
		if (l->oldest_ms && (!oldest || l->oldest_ms < oldest))
			oldest = l->oldest_ms;
		json_object_set_new(lanes, l->name,
				    json_pack("{s:I, s:I, s:I, s:f, s:I}", "instances", (json_int_t)(l->n[JOB_LEASED] + launch),
					      "queued", (json_int_t)l->n[JOB_QUEUED], "leased", (json_int_t)l->n[JOB_LEASED],
					      "oldest_wait_s", wait_s(x, l->oldest_ms), "launch", (json_int_t)launch));
	}
	unmanaged = leased > w->busy ? leased - w->busy : 0;
	return json_pack("{s:f, s:I, s:I, s:o, s:o, s:I, s:I, s:f}", "at", (double)x->now_ms / 1000.0, "instances",
			 (json_int_t)(total + unmanaged), "workers_not_launched", (json_int_t)unmanaged, "offers", offers,
			 "lanes", lanes, "queued", (json_int_t)queued, "leased", (json_int_t)leased, "oldest_wait_s",
			 wait_s(x, oldest));
}

int api_scale(struct api_call *c)
{
	struct api *a = c->api;
	struct decide_env e = {a->store, a->settings, a->offers, a->noffers, a->provider != NULL,
			       &a->queue->preempts, a->workers};
	struct decision_now *d = mem_calloc(1, sizeof *d);
	struct snapshot *x = mem_alloc(sizeof *x);
	struct desired *w = mem_calloc(1, sizeof *w);
	struct ebb_error err;
	int rc = -1;

	if (!d || !x || !w) {
		error_set(&err, 500, "out_of_memory", NULL, ERROR_OUT_OF_MEMORY);
		rc = api_fail(c, &err);
	} else if (snapshot_take(x, &a->snap) != 0) {
		rc = api_store_failed(c);
	} else if (decide_now(&e, x->now_ms, d) != 0) {
		error_set(&err, 500, "store", NULL, "store: %s", d->error);
		rc = api_fail(c, &err);
	} else {
		tally(d, w);
		request_reply(c->req, 200, reply(d, w, x));
		rc = 0;
	}
	if (d)
		decision_now_free(d);
	free(d);
	free(x);
	free(w);
	return rc;
}
