/* GET /v1/workers: every worker serve knows, those its provider started
 * (by their instances, registered and not terminated) and those started
 * by hand (by their names, as they called), each with the jobs it runs. */
#include <stdio.h>
#include <string.h>

#include "serve/api_internal.h"
#include "serve/workers.h"
#include "store/store.h"

struct workers_list {
	struct api *api;
	json_t *jobs;    /* worker name: [job ids leased to it] */
	json_t *workers; /* the reply's */
	int64_t after;   /* the walk's last job id */
	int n;           /* jobs in this page */
};

static int add_leased(void *arg, const struct job *job)
{
	struct workers_list *l = arg;
	json_t *ids = json_object_get(l->jobs, job->worker);

	if (!ids && (!(ids = json_array()) || json_object_set_new(l->jobs, job->worker, ids) != 0))
		return -1;
	l->after = job->id;
	l->n++;
	return json_array_append_new(ids, json_integer(job->id));
}

static json_t *times(int64_t ms) { return ms ? json_real((double)ms / 1000.0) : json_null(); }

/* One worker's row; seen: what it told serve, NULL if nothing since
 * serve started. */
static int add_worker(struct workers_list *l, const char *name, int64_t instance, int gpus,
		      const struct worker_seen *seen)
{
	json_t *jobs = json_object_get(l->jobs, name), *handlers = workers_handlers_json(seen);

	return !handlers ? -1
			 : json_array_append_new(
				   l->workers,
				   json_pack("{s:s, s:o, s:i, s:o, s:o, s:o, s:o}", "name", name, "instance",
					     instance ? json_integer(instance) : json_null(), "gpus", gpus, "registered_at",
					     times(seen ? seen->registered_ms : 0), "last_seen_at",
					     times(seen ? seen->last_ms : 0), "jobs", jobs ? json_incref(jobs) : json_array(),
					     "handlers", handlers));
}

static int add_instance(void *arg, const struct instance *inst)
{
	struct workers_list *l = arg;
	char name[32];

	if (!inst->registered_ms)
		return 0; /* no worker yet */
	snprintf(name, sizeof name, "i-%lld", (long long)inst->id);
	return add_worker(l, name, inst->id, inst->gpus, workers_find(l->api->workers, name));
}

int api_workers(struct api_call *c)
{
	struct api *a = c->api;
	struct workers_list l = {.api = a, .jobs = json_object(), .workers = json_array()};
	struct job_filter leased = {.state = JOB_LEASED, .limit = 1000};
	int rc = 0;

	if (!l.jobs || !l.workers)
		rc = -1;
	do {
		l.n = 0;
		leased.after_id = l.after;
		if (rc == 0)
			rc = store_job_list(a->store, &leased, add_leased, &l);
	} while (rc == 0 && l.n == leased.limit);
	if (rc == 0)
		rc = store_instance_list(a->store, add_instance, &l);
	/* Those started by hand. */
	for (int i = 0; rc == 0 && i < a->workers->n; i++) {
		const struct worker_seen *w = &a->workers->at[i];
		if (!w->instance)
			rc = add_worker(&l, w->name, 0, w->gpus, w);
	}
	json_decref(l.jobs);
	if (rc != 0) {
		json_decref(l.workers);
		return api_store_failed(c);
	}
	request_reply(c->req, 200, json_pack("{s:o}", "workers", l.workers));
	return 0;
}
